//! The event-time interval join (Flink's `IntervalJoin`): a left row at time `t` and a right row
//! at time `s` of the same join key are a pair when `s + lower <= t <= s + upper` (Flink's
//! `leftLowerBound` and `leftUpperBound`) and the rest of the condition accepts them. Both inputs
//! only insert; so does the join.
//!
//! Each row is joined, when it arrives, with the rows of the other side that the state holds,
//! and is kept until the watermark shows that no row of the other side that is still to come
//! can pair with it: a left row at `t` waits until the watermark reaches `t - lower`, a right
//! row at `s` until it reaches `s + upper` (a row of the other side later than that would be
//! late). A row of an outer side that found no partner by then goes out padded with NULLs; one
//! that arrives already expired (late) joins with what the state still holds and, without a
//! partner, goes out padded at once. A row without a time or with a NULL key pairs with nothing.
//!
//! Output rows are held back from the watermark: the watermark forwarded is the input's minus
//! `max(-lower, upper)`, as Flink delays it, so that rows joined after it are not late.
//!
//! On processing time (`rowtime` false, Flink's `ProcTimeIntervalJoin`) a row's time is the
//! processing time it arrives at, and processing-time timers expire the rows instead of the
//! watermark (which passes unchanged). As in Flink, timers still pending when the input ends do
//! not fire: rows of an outer side left waiting then are not emitted.
//!
//! State per side lists, per join key, each row kept with its time and whether it has found a
//! partner; it is checkpointed and restored by key. An index of the
//! keys by the times their rows expire finds what the watermark expires; it is rebuilt from the
//! rows on restore.

use std::collections::BTreeMap;
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::element::NO_WATERMARK;

use weir_runtime::state::ListState;
use weir_runtime::{Chunk, Error, Operator, OperatorContext, Output, Result, RowKind, SubtaskInfo, Timer, Value};

use super::{push_pair, JoinType, PairCondition};
use crate::expr::Expr;
use crate::spec::OperatorSpec;
use crate::window::millis_of;

/// The state sections of the rows of each side.
const RECORDS: [&str; 2] = ["left-interval-rows", "right-interval-rows"];
/// The state section of the subtask's watermark (which rows count as late after a restore).
const WATERMARK: &str = "watermark";

/// Everything an [`IntervalJoinOperator`] is built from.
#[derive(Debug, Clone)]
pub struct IntervalJoinSpec {
    /// INNER, LEFT, RIGHT or FULL.
    pub join_type: JoinType,
    /// The join key columns of the left input and, in the same order, of the right input.
    pub keys: [Vec<usize>; 2],
    /// The number of columns of each input.
    pub arities: [usize; 2],
    /// The time attribute column of each input.
    pub times: [usize; 2],
    /// Flink's `leftLowerBound`: a pair's left time minus its right time is at least this (ms).
    pub lower: i64,
    /// Flink's `leftUpperBound`: a pair's left time minus its right time is at most this (ms).
    pub upper: i64,
    /// The whole join condition over the joined row (left columns, then right).
    pub condition: Option<Expr>,
    /// Whether the times are rowtimes (else processing times).
    pub rowtime: bool,
}

impl IntervalJoinSpec {
    /// How long after its own time a row of `side` can still find a partner (ms).
    fn reach(&self, side: usize) -> i64 {
        if side == 0 {
            -self.lower
        } else {
            self.upper
        }
    }

    /// How far the forwarded watermark lags the input's (Flink's `getMaxOutputDelay`).
    pub fn output_delay(&self) -> i64 {
        (-self.lower).max(self.upper).max(0)
    }
}

impl OperatorSpec for IntervalJoinSpec {
    type Operator = IntervalJoinOperator;

    fn build(&self, _subtask: &SubtaskInfo) -> IntervalJoinOperator {
        IntervalJoinOperator {
            records: RECORDS.map(|name| ListState::new(name, None)),
            expiries: [BTreeMap::new(), BTreeMap::new()],
            spec: self.clone(),
            key: Vec::new(),
            condition: PairCondition::new(self.condition.clone(), self.arities[0], &self.keys),
            watermark: NO_WATERMARK,
        }
    }
}

/// A row kept: its time, its columns, and 1 once it has found a partner (else 0).
type Kept = (i64, (Box<[Value]>, u64));

/// The interval join; see the module documentation.
#[derive(Debug)]
pub struct IntervalJoinOperator {
    spec: IntervalJoinSpec,
    records: [ListState<Kept>; 2],
    /// Per side, the keys whose rows expire at each time (a key once per row).
    expiries: [BTreeMap<i64, Vec<Box<[Value]>>>; 2],
    key: Vec<Value>,
    condition: PairCondition,
    watermark: i64,
}

/// Pushes `row` of `side` joined with `other` (NULLs when `None`) as an insert.
fn emit(spec: &IntervalJoinSpec, emitted: &mut Chunk, side: usize, row: &[Value], other: Option<&[Value]>) {
    let (left, right) = if side == 0 { (Some(row), other) } else { (other, Some(row)) };
    push_pair(emitted, RowKind::Insert, left, right, spec.arities);
}

/// Whether `row` of `side` at `time` pairs with `other` at `other_time`: their times within
/// the bounds, and the condition accepting them.
fn pairs(
    spec: &IntervalJoinSpec,
    condition: &mut PairCondition,
    side: usize,
    (time, row): (i64, &[Value]),
    (other_time, other): (i64, &[Value]),
) -> Result<bool> {
    let (left_time, right_time) = if side == 0 { (time, other_time) } else { (other_time, time) };
    let gap = left_time - right_time;
    if gap < spec.lower || gap > spec.upper {
        return Ok(false);
    }
    let (left, right) = if side == 0 { (row, other) } else { (other, row) };
    condition.accepts(left, right)
}

impl IntervalJoinOperator {
    /// Joins a row arriving on `side` at `time` (its rowtime, or the processing time) and keeps
    /// it while it can still find a partner; returns when it expires if it is kept.
    fn arrive(&mut self, side: usize, row: &[Value], time: Option<i64>, emitted: &mut Chunk) -> Result<Option<i64>> {
        let Self { spec, records, expiries, key, condition, watermark } = self;
        let outer = spec.join_type.is_outer(side);
        let Some(time) = time.filter(|_| !key.iter().any(Value::is_null)) else {
            if outer {
                emit(spec, emitted, side, row, None);
            }
            return Ok(None);
        };
        let mut partners = 0u64;
        if let Some(mut others) = records[1 - side].get_mut(key, 0) {
            for (other_time, (other_row, paired)) in others.iter_mut() {
                if pairs(spec, condition, side, (time, row), (*other_time, other_row))? {
                    emit(spec, emitted, side, row, Some(other_row));
                    partners += 1;
                    *paired = 1;
                }
            }
        }
        let expires = time.saturating_add(spec.reach(side));
        if expires <= *watermark {
            if outer && partners == 0 {
                emit(spec, emitted, side, row, None);
            }
            return Ok(None);
        }
        records[side].add(key, (time, (row.into(), u64::from(partners > 0))), 0);
        expiries[side].entry(expires).or_default().push(key.as_slice().into());
        Ok(Some(expires))
    }

    /// Time has reached `time` (the watermark, or the processing time): the rows it passes
    /// expire, and the padded rows of outer sides go out.
    fn advance(&mut self, time: i64, out: &mut Output) {
        self.watermark = self.watermark.max(time);
        let mut emitted = Chunk::with_capacity(self.spec.arities[0] + self.spec.arities[1], 0);
        self.expire(self.watermark, &mut emitted);
        out.collect(emitted);
    }

    /// Forgets the rows that expire at the watermark, padding the unmatched rows of outer sides.
    fn expire(&mut self, watermark: i64, emitted: &mut Chunk) {
        let Self { spec, records, expiries, .. } = self;
        for side in 0..2 {
            let outer = spec.join_type.is_outer(side);
            let reach = spec.reach(side);
            while let Some(due) = expiries[side].first_entry().filter(|e| *e.key() <= watermark) {
                for key in due.remove() {
                    let Some(mut kept) = records[side].get_mut(&key, 0) else { continue };
                    kept.retain(|(time, (row, paired))| {
                        let gone = time.saturating_add(reach) <= watermark;
                        if gone && outer && *paired == 0 {
                            emit(spec, emitted, side, row, None);
                        }
                        !gone
                    });
                    if kept.is_empty() {
                        records[side].clear(&key);
                    }
                }
            }
        }
    }
}

impl Operator for IntervalJoinOperator {
    fn name(&self) -> &str {
        "IntervalJoin"
    }

    fn process_chunk(&mut self, input: usize, chunk: Chunk, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        let side = input.min(1);
        let now = ctx.processing_time();
        if !self.spec.rowtime {
            self.watermark = self.watermark.max(now);
        }
        let mut emitted = Chunk::with_capacity(self.spec.arities[0] + self.spec.arities[1], chunk.len());
        for (kind, row) in chunk.rows() {
            if kind != RowKind::Insert {
                return Err(Error::execution(format!(
                    "IntervalJoin doesn't support consuming update and delete changes, but received a '{kind}' row."
                )));
            }
            self.key.clear();
            self.key.extend(self.spec.keys[side].iter().map(|&k| row[k].clone()));
            let time = if self.spec.rowtime { millis_of(&row[self.spec.times[side]]) } else { Some(now) };
            let expires = self.arrive(side, row, time, &mut emitted)?;
            if let Some(expires) = expires.filter(|_| !self.spec.rowtime) {
                ctx.register_processing_time_timer(expires, Vec::new());
            }
        }
        out.collect(emitted);
        Ok(())
    }

    fn process_watermark(&mut self, watermark: i64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        if !self.spec.rowtime {
            out.emit_watermark(watermark);
            return Ok(());
        }
        self.advance(watermark, out);
        let delayed =
            if watermark == i64::MAX { watermark } else { watermark.saturating_sub(self.spec.output_delay()) };
        out.emit_watermark(delayed);
        Ok(())
    }

    /// Processing time reached the expiry of some rows (processing-time joins only).
    fn on_timer(&mut self, timer: Timer, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        if !self.spec.rowtime {
            self.advance(timer.time, out);
        }
        Ok(())
    }

    /// The rows still waiting for a partner, and the watermark.
    fn snapshot_state(&mut self, _: u64, _ctx: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        self.records.iter_mut().for_each(|side| side.snapshot(state, 0));
        state.section(WATERMARK).i64(self.watermark);
        Ok(())
    }

    /// The rows of the join keys this subtask owns now, indexed by when they expire; the
    /// watermark is the lowest of the old subtasks' (no row counts as late that the old job
    /// would have joined).
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        let info = ctx.subtask().clone();
        self.records.iter_mut().try_for_each(|side| side.restore(states, &info))?;
        for side in 0..2 {
            let (reach, expiries) = (self.spec.reach(side), &mut self.expiries[side]);
            self.records[side].for_each(|key, (time, _)| {
                expiries.entry(time.saturating_add(reach)).or_default().push(key.into());
            });
        }
        let mut watermark = None::<i64>;
        for state in states {
            if let Some(mut section) = state.section(WATERMARK) {
                let w = section.i64().map_err(|e| Error::Restore(format!("the watermark of IntervalJoin: {e}")))?;
                watermark = Some(watermark.map_or(w, |m| m.min(w)));
            }
        }
        self.watermark = watermark.unwrap_or(NO_WATERMARK);
        if !self.spec.rowtime {
            for &time in self.expiries.iter().flat_map(BTreeMap::keys) {
                ctx.register_processing_time_timer(time, Vec::new());
            }
        }
        Ok(())
    }
}

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for IntervalJoinSpec {
    /// Per side and join key: the side's rows still in the interval; the watermark.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{column_types, row_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        let right = inputs.get(1).copied().unwrap_or_default();
        let sides = [input, right];
        let mut signature = StateSignature::new("IntervalJoin", STATE_VERSION);
        for (side, state) in RECORDS.iter().enumerate() {
            signature = signature.state(
                state,
                StateKind::List,
                column_types(sides[side], &self.keys[side]),
                row_types(sides[side]),
            );
        }
        signature.state(WATERMARK, StateKind::Raw, Vec::new(), vec!["BIGINT".to_string()])
    }
}
