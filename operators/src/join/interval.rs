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
//! State per side maps each (time, row) of a join key to how many times the row is there and how
//! many of those have no partner yet, with a timer per key at the time its rows expire; both
//! are checkpointed and restored by key.

use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::element::NO_WATERMARK;
use weir_runtime::state::{KeyedTimers, MapState};
use weir_runtime::{Chunk, Error, Operator, OperatorContext, Output, Result, RowKind, SubtaskInfo, Value};

use super::JoinType;
use crate::expr::Expr;
use crate::spec::OperatorSpec;
use crate::window::millis_of;

/// The state sections of the rows of each side.
const RECORDS: [&str; 2] = ["left-records", "right-records"];
/// The state sections of each side's expiry timers.
const TIMERS: [&str; 2] = ["left-timers", "right-timers"];
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
            records: RECORDS.map(|name| MapState::new(name, None)),
            timers: TIMERS.map(KeyedTimers::new),
            spec: self.clone(),
            key: Vec::new(),
            joined: Vec::new(),
            watermark: NO_WATERMARK,
        }
    }
}

/// A row's time and columns: the user key of the side's state.
type Stored = (i64, Box<[Value]>);
/// How many times the row is there, and how many of those have no partner yet.
type Record = (u64, u64);

/// The interval join; see the module documentation.
#[derive(Debug)]
pub struct IntervalJoinOperator {
    spec: IntervalJoinSpec,
    records: [MapState<Stored, Record>; 2],
    timers: [KeyedTimers; 2],
    key: Vec<Value>,
    joined: Vec<Value>,
    watermark: i64,
}

impl IntervalJoinOperator {
    /// Pushes `row` of `side` joined with `other` (NULLs when `None`) as an insert.
    fn emit(&self, emitted: &mut Chunk, side: usize, row: &[Value], other: Option<&[Value]>) {
        let arities = self.spec.arities;
        let pad = |values: &mut Vec<Value>, part: Option<&[Value]>, arity: usize| match part {
            Some(p) => values.extend_from_slice(p),
            None => values.extend(std::iter::repeat_n(Value::Null, arity)),
        };
        let (left, right) = if side == 0 { (Some(row), other) } else { (other, Some(row)) };
        emitted.push_with(RowKind::Insert, |values| {
            pad(values, left, arities[0]);
            pad(values, right, arities[1]);
        });
    }

    /// Whether `row` of `side` at `time` pairs with `other` at `other_time`.
    fn pairs(&mut self, side: usize, time: i64, row: &[Value], other_time: i64, other: &[Value]) -> Result<bool> {
        let (left_time, right_time) = if side == 0 { (time, other_time) } else { (other_time, time) };
        let gap = left_time - right_time;
        if gap < self.spec.lower || gap > self.spec.upper {
            return Ok(false);
        }
        let Some(condition) = &self.spec.condition else { return Ok(true) };
        self.joined.clear();
        let (left, right) = if side == 0 { (row, other) } else { (other, row) };
        self.joined.extend_from_slice(left);
        self.joined.extend_from_slice(right);
        let accepted = condition.eval(&self.joined).map_err(|e| Error::execution(e.0))?;
        Ok(accepted == Value::Boolean(true))
    }

    /// Joins a row arriving on `side` and keeps it while it can still find a partner.
    fn arrive(&mut self, side: usize, row: &[Value], emitted: &mut Chunk) -> Result<()> {
        let outer = self.spec.join_type.is_outer(side);
        let time = millis_of(&row[self.spec.times[side]]);
        let Some(time) = time.filter(|_| !self.key.iter().any(Value::is_null)) else {
            if outer {
                self.emit(emitted, side, row, None);
            }
            return Ok(());
        };
        let other = 1 - side;
        let candidates: Vec<(Stored, Record)> =
            self.records[other].entries(&self.key, 0).map(|(k, v)| (k.clone(), *v)).collect();
        let mut partners = 0u64;
        for ((other_time, other_row), (count, _)) in candidates {
            if !self.pairs(side, time, row, other_time, &other_row)? {
                continue;
            }
            for _ in 0..count {
                self.emit(emitted, side, row, Some(&other_row));
            }
            partners += count;
            if let Some(record) =
                self.records[other].get_mut_or_insert_with(&self.key, (other_time, other_row), 0, || None)?
            {
                record.1 = 0;
            }
        }
        let expires = time.saturating_add(self.spec.reach(side));
        if expires <= self.watermark {
            if outer && partners == 0 {
                self.emit(emitted, side, row, None);
            }
            return Ok(());
        }
        let unmatched = u64::from(partners == 0);
        if let Some(record) =
            self.records[side].get_mut_or_insert_with(&self.key, (time, row.into()), 0, || Some((0, 0)))?
        {
            record.0 += 1;
            record.1 += unmatched;
        }
        self.timers[side].register(&self.key, expires);
        Ok(())
    }

    /// Forgets the rows that expire at the watermark, padding the unmatched rows of outer sides.
    fn expire(&mut self, watermark: i64, emitted: &mut Chunk) {
        for side in 0..2 {
            let outer = self.spec.join_type.is_outer(side);
            let reach = self.spec.reach(side);
            while let Some((_, keys)) = self.timers[side].pop_due(watermark) {
                for key in keys {
                    let mut gone = Vec::new();
                    for ((time, row), &(_, unmatched)) in self.records[side].entries(&key, 0) {
                        if time.saturating_add(reach) <= watermark {
                            gone.push(((*time, row.clone()), unmatched));
                        }
                    }
                    for (stored, unmatched) in gone {
                        if outer {
                            for _ in 0..unmatched {
                                self.emit(emitted, side, &stored.1, None);
                            }
                        }
                        self.records[side].remove(&key, &stored);
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

    fn process_chunk(
        &mut self,
        input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let side = input.min(1);
        let mut emitted = Chunk::with_capacity(self.spec.arities[0] + self.spec.arities[1], chunk.len());
        for (kind, row) in chunk.rows() {
            if kind != RowKind::Insert {
                return Err(Error::execution(format!(
                    "IntervalJoin doesn't support consuming update and delete changes, but received a '{kind}' row."
                )));
            }
            self.key.clear();
            self.key.extend(self.spec.keys[side].iter().map(|&k| row[k].clone()));
            self.arrive(side, row, &mut emitted)?;
        }
        out.collect(emitted);
        Ok(())
    }

    fn process_watermark(&mut self, watermark: i64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.watermark = watermark;
        let mut emitted = Chunk::with_capacity(self.spec.arities[0] + self.spec.arities[1], 0);
        self.expire(watermark, &mut emitted);
        out.collect(emitted);
        let delayed =
            if watermark == i64::MAX { watermark } else { watermark.saturating_sub(self.spec.output_delay()) };
        out.emit_watermark(delayed);
        Ok(())
    }

    /// The rows still waiting for a partner, their timers and the watermark.
    fn snapshot_state(&mut self, _: u64, _ctx: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        self.records.iter().for_each(|side| side.snapshot(state, 0));
        self.timers.iter().for_each(|side| side.snapshot(state));
        state.section(WATERMARK).i64(self.watermark);
        Ok(())
    }

    /// The rows and timers of the join keys this subtask owns now; the watermark is the lowest
    /// of the old subtasks' (no row counts as late that the old job would have joined).
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        let info = ctx.subtask().clone();
        self.records.iter_mut().try_for_each(|side| side.restore(states, &info))?;
        self.timers.iter_mut().try_for_each(|side| side.restore(states, &info))?;
        let mut watermark = None::<i64>;
        for state in states {
            if let Some(mut section) = state.section(WATERMARK) {
                let w = section.i64().map_err(|e| Error::Restore(format!("the watermark of IntervalJoin: {e}")))?;
                watermark = Some(watermark.map_or(w, |m| m.min(w)));
            }
        }
        self.watermark = watermark.unwrap_or(NO_WATERMARK);
        Ok(())
    }
}
