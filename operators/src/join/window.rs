//! The window join (Flink's `WindowJoin`): two inputs whose rows carry windows of the same
//! spec, joined per window on equal keys. Each side's rows are kept per join key and window until
//! the watermark reaches the window's end - 1; then the window's rows are joined (INNER, LEFT,
//! RIGHT, FULL, or the left rows with or without a partner for SEMI and ANTI), emitted as
//! inserts, and forgotten. A row whose window has already fired is late: dropped and counted
//! (`numLateRecordsDropped`). A row whose join key holds a NULL pairs with nothing.
//!
//! State per side lists, per join key, each row kept with its window end, with one timer per key
//! and window end; both are checkpointed and restored by key.

use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::{KeyedTimers, ListState};
use weir_runtime::{Chunk, Error, Operator, OperatorContext, Output, Result, RowKind, SubtaskInfo, Value};

use super::{push_pair, JoinType, PairCondition};
use crate::expr::Expr;
use crate::spec::OperatorSpec;
use crate::window::{millis_of, AttachedWindow};

/// The state sections of the rows of each side.
const RECORDS: [&str; 2] = ["left-window-records", "right-window-records"];
/// The state section of the window timers.
const TIMERS: &str = "window-timers";

/// Everything a [`WindowJoinOperator`] is built from.
#[derive(Debug, Clone)]
pub struct WindowJoinSpec {
    /// INNER, LEFT, RIGHT, FULL, SEMI or ANTI.
    pub join_type: JoinType,
    /// The join key columns of the left input and, in the same order, of the right input
    /// (without the window columns).
    pub keys: [Vec<usize>; 2],
    /// The number of columns of each input.
    pub arities: [usize; 2],
    /// Where each input's rows carry their window.
    pub windows: [AttachedWindow; 2],
    /// A condition besides the equal keys and windows, over the joined row.
    pub condition: Option<Expr>,
}

impl WindowJoinSpec {
    /// The number of columns of the emitted rows.
    pub fn arity(&self) -> usize {
        if self.join_type.keeps_left_only() {
            self.arities[0]
        } else {
            self.arities[0] + self.arities[1]
        }
    }
}

impl OperatorSpec for WindowJoinSpec {
    type Operator = WindowJoinOperator;

    fn build(&self, _subtask: &SubtaskInfo) -> WindowJoinOperator {
        WindowJoinOperator {
            records: RECORDS.map(|name| ListState::new(name, None)),
            timers: KeyedTimers::new(TIMERS),
            spec: self.clone(),
            key: Vec::new(),
            condition: PairCondition::new(self.condition.clone(), self.arities[0], &self.keys),
        }
    }
}

/// A row kept: its window end and its columns.
type Kept = (i64, Box<[Value]>);

/// The window join; see the module documentation.
#[derive(Debug)]
pub struct WindowJoinOperator {
    spec: WindowJoinSpec,
    records: [ListState<Kept>; 2],
    timers: KeyedTimers,
    key: Vec<Value>,
    condition: PairCondition,
}

impl WindowJoinOperator {
    /// Pushes `left` joined with `right` (NULLs for a side that is `None`) as an insert; the
    /// left row alone for a semi or anti join.
    fn emit(&self, emitted: &mut Chunk, left: Option<&[Value]>, right: Option<&[Value]>) {
        if self.spec.join_type.keeps_left_only() {
            emitted.push(RowKind::Insert, left.unwrap_or_default());
        } else {
            push_pair(emitted, RowKind::Insert, left, right, self.spec.arities);
        }
    }

    /// The rows of `key`'s window ending at `end` on `side`, taken out of the state.
    fn take(&mut self, side: usize, key: &[Value], end: i64) -> Vec<Box<[Value]>> {
        let (window, later): (Vec<Kept>, Vec<Kept>) =
            self.records[side].take(key).into_iter().partition(|(e, _)| *e == end);
        if !later.is_empty() {
            self.records[side].update(key, later, 0);
        }
        window.into_iter().map(|(_, row)| row).collect()
    }

    /// Joins and emits the rows of `key`'s window ending at `end`.
    fn fire(&mut self, key: &[Value], end: i64, emitted: &mut Chunk) -> Result<()> {
        let (left, right) = (self.take(0, key, end), self.take(1, key, end));
        let null_key = key.iter().any(Value::is_null);
        let join_type = self.spec.join_type;
        let mut right_matched = vec![false; right.len()];
        for l in &left {
            let mut matched = false;
            for (i, r) in right.iter().enumerate() {
                if null_key || !self.condition.accepts(l, r)? {
                    continue;
                }
                matched = true;
                right_matched[i] = true;
                if !join_type.keeps_left_only() {
                    self.emit(emitted, Some(l), Some(r));
                }
            }
            let keep_alone = match join_type {
                JoinType::LeftSemi => matched,
                JoinType::LeftAnti => !matched,
                _ => join_type.is_outer(0) && !matched,
            };
            if keep_alone {
                self.emit(emitted, Some(l), None);
            }
        }
        if join_type.is_outer(1) {
            for (r, _) in right.iter().zip(&right_matched).filter(|(_, matched)| !**matched) {
                self.emit(emitted, None, Some(r));
            }
        }
        Ok(())
    }
}

impl Operator for WindowJoinOperator {
    fn name(&self) -> &str {
        "WindowJoin"
    }

    fn process_chunk(
        &mut self,
        input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> Result<()> {
        let side = input.min(1);
        let window = self.spec.windows[side];
        let watermark = ctx.current_watermark();
        let mut late = 0;
        for (kind, row) in chunk.rows() {
            if kind != RowKind::Insert {
                return Err(Error::execution(format!(
                    "WindowJoin doesn't support consuming update and delete changes, but received a '{kind}' row."
                )));
            }
            // A row without a window end belongs to no window.
            let Some(end) = millis_of(&row[window.end]) else { continue };
            if window.spec.zone.fired(end, watermark) {
                late += 1;
                continue;
            }
            self.key.clear();
            self.key.extend(self.spec.keys[side].iter().map(|&k| row[k].clone()));
            let Self { records, timers, key, .. } = self;
            records[side].add(key, (end, row.into()), 0);
            timers.register(key, end - 1);
        }
        ctx.record_late_dropped(late);
        Ok(())
    }

    fn process_watermark(&mut self, watermark: i64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        let zone = self.spec.windows[0].spec.zone;
        let mut emitted = Chunk::with_capacity(self.spec.arity(), 0);
        while let Some((time, keys)) = self.timers.pop_due_by(|time| zone.fired(time + 1, watermark)) {
            for key in keys {
                self.fire(&key, time + 1, &mut emitted)?;
            }
        }
        out.collect(emitted);
        out.emit_watermark(watermark);
        Ok(())
    }

    /// Both sides' rows of the windows still open, and their timers.
    fn snapshot_state(&mut self, _: u64, _ctx: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        self.records.iter_mut().for_each(|side| side.snapshot(state, 0));
        self.timers.snapshot(state);
        Ok(())
    }

    /// The rows and timers of the join keys this subtask owns now.
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        let info = ctx.subtask().clone();
        self.records.iter_mut().try_for_each(|side| side.restore(states, &info))?;
        self.timers.restore(states, &info)
    }
}

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for WindowJoinSpec {
    /// Per side, join key and window: the side's rows; the timers of the windows to join.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{column_types, row_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        let right = inputs.get(1).copied().unwrap_or_default();
        let sides = [input, right];
        let mut signature = StateSignature::new("WindowJoin", STATE_VERSION);
        for (side, state) in RECORDS.iter().enumerate() {
            signature = signature.state(
                state,
                StateKind::Map,
                column_types(sides[side], &self.keys[side]),
                row_types(sides[side]),
            );
        }
        signature.state(
            TIMERS,
            StateKind::Timers,
            column_types(input, &self.keys[0]),
            vec!["BIGINT (window end)".to_string()],
        )
    }
}
