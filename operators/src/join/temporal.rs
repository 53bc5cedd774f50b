//! The event-time temporal join (Flink's `TemporalJoin` over a versioned table):
//! `o JOIN versioned FOR SYSTEM_TIME AS OF o.rowtime ON o.key = versioned.pk`. Each left row is
//! joined with the version of its key that was valid at the row's time: the latest right row
//! of the key whose own time is at most the left row's.
//!
//! Left rows wait in state until the watermark passes their time; then, in time order, each is
//! joined with its version (when that version is a row and not a retraction, and the rest of the
//! condition accepts the pair) and emitted; a LEFT join emits the row padded with NULLs when it
//! has no version. Right rows are the versions, kept per key by their time (a later row at the
//! same time replaces the earlier, a retraction marks the end of a version), as Flink's
//! `TemporalRowTimeJoinOperator` keeps them. Once the watermark passes, the versions older than
//! the latest one at or before it can serve no row to come and are dropped (that one too when it
//! is a retraction). A left row that comes after the watermark passed its time is joined at the
//! next watermark with the versions still kept. A row whose key holds a NULL has no version.
//!
//! The left input inserts only; the output does too.

use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::{KeyedTimers, ListState, MapState};
use weir_runtime::{Chunk, Error, Operator, OperatorContext, Output, Result, RowKind, SubtaskInfo, Value};

use super::{push_pair, JoinType, PairCondition};
use crate::expr::Expr;
use crate::spec::OperatorSpec;
use crate::window::millis_of;

/// The state section of the left rows waiting for the watermark.
const LEFT: &str = "left-rows";
/// The state section of the versions.
const VERSIONS: &str = "right-versions";
/// The state section of the timers.
const TIMERS: &str = "temporal-timers";

/// Everything a [`TemporalJoinOperator`] is built from.
#[derive(Debug, Clone)]
pub struct TemporalJoinSpec {
    /// INNER or LEFT.
    pub join_type: JoinType,
    /// The join key columns of the left input and, in the same order, of the versioned input.
    pub keys: [Vec<usize>; 2],
    /// The number of columns of each input.
    pub arities: [usize; 2],
    /// The rowtime column of each input.
    pub times: [usize; 2],
    /// A condition besides the equal keys, over the joined row.
    pub condition: Option<Expr>,
}

impl OperatorSpec for TemporalJoinSpec {
    type Operator = TemporalJoinOperator;

    fn build(&self, _subtask: &SubtaskInfo) -> TemporalJoinOperator {
        TemporalJoinOperator {
            spec: self.clone(),
            left: ListState::new(LEFT, None),
            versions: MapState::new(VERSIONS, None),
            timers: KeyedTimers::new(TIMERS),
            key: Vec::new(),
            condition: PairCondition::new(self.condition.clone(), self.arities[0], &self.keys),
        }
    }
}

/// A version: the right row, and 1 when it is a row (an insert or update-after), 0 when it is
/// a retraction that ends the version before it.
type Version = (Box<[Value]>, u64);

/// A left row waiting for the watermark: its time and columns.
type Waiting = (i64, Box<[Value]>);

/// The event-time temporal join; see the module documentation.
#[derive(Debug)]
pub struct TemporalJoinOperator {
    spec: TemporalJoinSpec,
    /// Per key, each waiting left row with its time, in the order they came.
    left: ListState<Waiting>,
    /// Per key, the versions by their time.
    versions: MapState<i64, Version>,
    timers: KeyedTimers,
    key: Vec<Value>,
    condition: PairCondition,
}

impl TemporalJoinOperator {
    /// Pushes `left` joined with `right` (NULLs when `None`) as an insert.
    fn emit(&self, emitted: &mut Chunk, left: &[Value], right: Option<&[Value]>) {
        push_pair(emitted, RowKind::Insert, Some(left), right, self.spec.arities);
    }

    /// Joins and emits the left rows of `key` at or before `watermark`, in time order (rows of
    /// one time in the order they came), then drops the versions no row to come can need.
    fn fire(&mut self, key: &[Value], watermark: i64, emitted: &mut Chunk) -> Result<()> {
        let (mut due, waiting): (Vec<Waiting>, Vec<Waiting>) =
            self.left.take(key).into_iter().partition(|(time, _)| *time <= watermark);
        if !waiting.is_empty() {
            self.left.update(key, waiting, 0);
        }
        due.sort_by_key(|(time, _)| *time);
        let mut times: Vec<i64> = self.versions.entries(key, 0).map(|(time, _)| *time).collect();
        times.sort_unstable();
        let outer = self.spec.join_type == JoinType::Left;
        for (time, row) in due {
            let valid = times.partition_point(|t| *t <= time).checked_sub(1).map(|i| times[i]);
            let version = valid.and_then(|t| self.versions.get(key, &t, 0)).filter(|(_, live)| *live == 1);
            match version {
                Some((right, _)) if self.condition.accepts(&row, right)? => {
                    push_pair(emitted, RowKind::Insert, Some(&row), Some(right), self.spec.arities);
                }
                _ if outer => push_pair(emitted, RowKind::Insert, Some(&row), None, self.spec.arities),
                _ => {}
            }
        }
        // The latest version at or before the watermark stays (a retraction does not).
        let keep = times.partition_point(|t| *t <= watermark).saturating_sub(1);
        for (i, time) in times.iter().enumerate() {
            let stale = i < keep
                || (i == keep
                    && *time <= watermark
                    && self.versions.get(key, time, 0).is_some_and(|(_, live)| *live == 0));
            if stale {
                self.versions.remove(key, time);
            }
        }
        Ok(())
    }
}

impl Operator for TemporalJoinOperator {
    fn name(&self) -> &str {
        "TemporalJoin"
    }

    fn process_chunk(
        &mut self,
        input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let side = input.min(1);
        let mut emitted = Chunk::with_capacity(self.spec.arities[0] + self.spec.arities[1], 0);
        for (kind, row) in chunk.rows() {
            self.key.clear();
            self.key.extend(self.spec.keys[side].iter().map(|&k| row[k].clone()));
            let time = millis_of(&row[self.spec.times[side]]);
            if side == 0 && kind != RowKind::Insert {
                return Err(Error::execution(format!(
                    "TemporalJoin takes only inserts on its left input, but received a '{kind}' row."
                )));
            }
            let Some(time) = time.filter(|_| !self.key.iter().any(Value::is_null)) else {
                if side == 0 && self.spec.join_type == JoinType::Left {
                    self.emit(&mut emitted, row, None);
                }
                continue;
            };
            let Self { left, versions, timers, key, .. } = self;
            if side == 0 {
                left.add(key, (time, row.into()), 0);
            } else {
                versions.put(key, time, (row.into(), u64::from(kind.is_accumulate())), 0);
            }
            timers.register(key, time);
        }
        out.collect(emitted);
        Ok(())
    }

    fn process_watermark(&mut self, watermark: i64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        let mut emitted = Chunk::with_capacity(self.spec.arities[0] + self.spec.arities[1], 0);
        // Each key's rows and versions have timers at their own times: a key whose timer is due
        // has rows to join or versions to drop.
        while let Some((_, keys)) = self.timers.pop_due(watermark) {
            for key in keys {
                self.fire(&key, watermark, &mut emitted)?;
            }
        }
        out.collect(emitted);
        out.emit_watermark(watermark);
        Ok(())
    }

    /// The waiting left rows, the versions and the timers.
    fn snapshot_state(&mut self, _: u64, _ctx: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        self.left.snapshot(state, 0);
        self.versions.snapshot(state, 0);
        self.timers.snapshot(state);
        Ok(())
    }

    /// The rows, versions and timers of the keys this subtask owns now.
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        let info = ctx.subtask().clone();
        self.left.restore(states, &info)?;
        self.versions.restore(states, &info)?;
        self.timers.restore(states, &info)
    }
}

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for TemporalJoinSpec {
    /// Per join key: the left rows waiting for the watermark, the right table's versions by time, and the timers.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{column_types, row_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        let right = inputs.get(1).copied().unwrap_or_default();
        let key = column_types(input, &self.keys[0]);
        StateSignature::new("TemporalJoin", STATE_VERSION)
            .state(LEFT, StateKind::List, key.clone(), row_types(input))
            .state(VERSIONS, StateKind::Map, key.clone(), row_types(right))
            .state(TIMERS, StateKind::Timers, key, vec!["BIGINT (time)".to_string()])
    }
}
