//! WindowAggregate over `SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), gap)`: per key, a
//! row opens the window `[ts, ts + gap)`, and windows that overlap or touch merge into one
//! session (their accumulators merged), as Flink's merging window set does. A session is
//! emitted once, as an insert, when the watermark reaches its end - 1. A row whose window,
//! merged with the key's open sessions, would already have fired is late: dropped and counted.
//!
//! Per key the state holds its open sessions (keyed value state) and a timer per session end
//! ([`KeyedTimers`]); both are checkpointed and restored by key, with the watermark.

use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::{KeyedTimers, StateValue, ValueState};
use weir_runtime::{Chunk, DataType, Operator, OperatorContext, Output, Result, RowKind, Timestamp, Value};

use super::slices::{Calls, SliceAccumulators};
use super::table_function::millis_of;
use super::{restored_watermark, PROGRESS};
use crate::aggregate::AggregateCall;
use crate::spec::OperatorSpec;

const SESSIONS: &str = "sessions";
const TIMERS: &str = "session-timers";

/// Everything a [`SessionWindowAggregateOperator`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionWindowAggregateSpec {
    /// The grouping columns (the sessions' keys).
    pub keys: Vec<usize>,
    /// The aggregates (each must merge partial accumulators).
    pub calls: Vec<AggregateCall>,
    /// Types of the calls' arguments.
    pub arg_types: Vec<Option<DataType>>,
    /// The session gap in milliseconds.
    pub gap: i64,
    /// The `PARTITION BY` columns of the window function, for EXPLAIN.
    pub partition: Vec<usize>,
    /// The time column.
    pub time_col: usize,
    /// Whether the input retracts rows.
    pub retracting: bool,
    /// Whether a `window_time` column follows `window_start, window_end`.
    pub window_time: bool,
}

impl OperatorSpec for SessionWindowAggregateSpec {
    type Operator = SessionWindowAggregateOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> SessionWindowAggregateOperator {
        SessionWindowAggregateOperator {
            calls: Calls::new(self.calls.clone(), self.arg_types.clone(), self.retracting),
            spec: self.clone(),
            sessions: ValueState::new(SESSIONS, None),
            timers: KeyedTimers::new(TIMERS),
            watermark: i64::MIN,
            key: Vec::new(),
            scratch: Vec::new(),
        }
    }
}

/// One open session: `[start, end)` and its accumulators.
#[derive(Debug, Clone)]
struct Session {
    start: i64,
    end: i64,
    accumulators: SliceAccumulators,
}

/// A key's open sessions, in no particular order.
#[derive(Debug, Clone, Default)]
struct Sessions(Vec<Session>);

impl StateValue for Sessions {
    fn encode(&self, out: &mut Encoder) {
        out.u32(self.0.len() as u32);
        for s in &self.0 {
            out.i64(s.start);
            out.i64(s.end);
            s.accumulators.encode(out);
        }
    }

    fn decode(input: &mut Decoder<'_>) -> std::result::Result<Self, DecodeError> {
        (0..input.u32()?)
            .map(|_| {
                Ok(Session { start: input.i64()?, end: input.i64()?, accumulators: SliceAccumulators::decode(input)? })
            })
            .collect::<std::result::Result<_, _>>()
            .map(Sessions)
    }
}

/// Aggregates session windows; see the module documentation.
#[derive(Debug)]
pub struct SessionWindowAggregateOperator {
    spec: SessionWindowAggregateSpec,
    calls: Calls,
    sessions: ValueState<Sessions>,
    timers: KeyedTimers,
    watermark: i64,
    key: Vec<Value>,
    scratch: Vec<Value>,
}

impl SessionWindowAggregateOperator {
    /// Adds one row to its key's sessions; returns whether it was late.
    fn add(&mut self, kind: RowKind, row: &[Value]) -> Result<bool> {
        let Some(time) = millis_of(&row[self.spec.time_col]) else { return Ok(false) };
        self.key.clear();
        self.key.extend(self.spec.keys.iter().map(|&k| row[k].clone()));
        let Self { sessions, calls, timers, key, watermark, scratch, spec } = self;
        let (start, end) = (time, time.saturating_add(spec.gap));
        let open = sessions.get(key, 0).map_or(&[][..], |s| &s.0[..]);
        let overlapping = |s: &Session| s.start <= end && s.end >= start;
        let merged_start = open.iter().filter(|s| overlapping(s)).map(|s| s.start).fold(start, i64::min);
        let merged_end = open.iter().filter(|s| overlapping(s)).map(|s| s.end).fold(end, i64::max);
        if merged_end - 1 <= *watermark {
            return Ok(true);
        }
        let Some(open) = sessions.get_mut_or_insert_with(key, 0, || Some(Sessions::default()))? else {
            return Ok(false);
        };
        let mut accumulators = SliceAccumulators::new(calls);
        accumulators.add_row(calls, row, if kind.is_accumulate() { 1 } else { -1 });
        let mut kept = Vec::with_capacity(open.0.len());
        for session in open.0.drain(..) {
            if overlapping(&session) {
                timers.remove(key, session.end - 1);
                accumulators.merge(calls, &session.accumulators, scratch);
            } else {
                kept.push(session);
            }
        }
        kept.push(Session { start: merged_start, end: merged_end, accumulators });
        open.0 = kept;
        timers.register(key, merged_end - 1);
        Ok(false)
    }

    /// Emits every session whose end the watermark reached, earliest first.
    fn fire(&mut self, watermark: i64, out: &mut Output) {
        let arity = self.spec.keys.len() + self.calls.calls.len() + 2 + usize::from(self.spec.window_time);
        let mut emitted = Chunk::with_capacity(arity, 0);
        while let Some((time, keys)) = self.timers.pop_due(watermark) {
            for key in keys {
                let Some(open) = self.sessions.get_mut_or_insert_with(&key, 0, || None).ok().flatten() else {
                    continue;
                };
                let Some(at) = open.0.iter().position(|s| s.end - 1 == time) else { continue };
                let session = open.0.swap_remove(at);
                let now_empty = open.0.is_empty();
                if now_empty {
                    self.sessions.remove(&key);
                }
                if session.accumulators.rows <= 0 {
                    continue;
                }
                emitted.push_with(RowKind::Insert, |values| {
                    values.extend_from_slice(&key);
                    session.accumulators.results(&self.calls, values);
                    values.push(Value::Timestamp(Timestamp::from_millis(session.start)));
                    values.push(Value::Timestamp(Timestamp::from_millis(session.end)));
                    if self.spec.window_time {
                        values.push(Value::Timestamp(Timestamp::from_millis(session.end - 1)));
                    }
                });
            }
        }
        if !emitted.is_empty() {
            out.collect(emitted);
        }
    }
}

impl Operator for SessionWindowAggregateOperator {
    fn name(&self) -> &str {
        "WindowAggregate"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> Result<()> {
        let mut late = 0;
        for (kind, row) in chunk.rows() {
            late += u64::from(self.add(kind, row)?);
        }
        ctx.record_late_dropped(late);
        Ok(())
    }

    fn process_watermark(&mut self, watermark: i64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        if watermark > self.watermark {
            self.watermark = watermark;
            self.fire(watermark, out);
        }
        out.emit_watermark(watermark);
        Ok(())
    }

    fn end_of_input(&mut self, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.watermark = i64::MAX;
        self.fire(i64::MAX, out);
        Ok(())
    }

    /// Every key's open sessions and timers, and the watermark.
    fn snapshot_state(&mut self, _: u64, _: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        self.sessions.snapshot(state, 0);
        self.timers.snapshot(state);
        state.section(PROGRESS).i64(self.watermark);
        Ok(())
    }

    /// Keeps the keys this subtask owns now; the watermark is the lowest of the old subtasks'.
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        self.sessions.restore(states, ctx.subtask())?;
        self.timers.restore(states, ctx.subtask())?;
        self.watermark = restored_watermark(states, "WindowAggregate")?;
        let calls = &self.calls;
        let mut fits = true;
        self.sessions.retain(0, |_, s| {
            fits &= s.0.iter().all(|s| s.accumulators.fits(calls));
            true
        });
        if !fits {
            return Err(weir_runtime::Error::Restore(
                "the state of WindowAggregate holds sessions of other aggregates".to_string(),
            ));
        }
        Ok(())
    }
}
