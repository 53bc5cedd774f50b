//! WindowAggregate over `SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), gap)`: per key, a
//! row opens the window `[ts, ts + gap)`, and windows that overlap or touch merge into one
//! session (their accumulators merged), as Flink's merging window set does. A session is
//! emitted once, as an insert, when the watermark reaches its end - 1. A row whose window,
//! merged with the key's open sessions, would already have fired is late: dropped and counted.
//!
//! Per key the state holds its open sessions (keyed value state) and a timer per session end
//! ([`KeyedTimers`]); both are checkpointed and restored by key ([`WindowOperator`] adds the watermark).

use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::{KeyedTimers, StateValue, ValueState};
use weir_runtime::{Chunk, DataType, Result, RowKind, SubtaskInfo, Timestamp, Value};

use super::slices::{Calls, SliceAccumulators};
use super::table_function::millis_of;
use super::WindowZone;
use super::{WindowOperator, Windows};
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
    /// The time column.
    pub time_col: usize,
    /// Whether the input retracts rows.
    pub retracting: bool,
    /// Whether a `window_time` column follows `window_start, window_end`.
    pub window_time: bool,
    /// Whether the query wrote it in the older syntax (`GROUP BY SESSION(ts, gap)`): Flink
    /// names it `GroupWindowAggregate` then.
    pub group_window: bool,
    /// Where sessions meet instants (the session time zone over a TIMESTAMP_LTZ).
    pub zone: WindowZone,
}

impl SessionWindowAggregateSpec {
    /// Flink's name of the operator: `GroupWindowAggregate` in the older syntax, else
    /// `WindowAggregate`.
    pub fn name(&self) -> &'static str {
        if self.group_window {
            "GroupWindowAggregate"
        } else {
            "WindowAggregate"
        }
    }
}

impl OperatorSpec for SessionWindowAggregateSpec {
    type Operator = SessionWindowAggregateOperator;

    fn build(&self, _subtask: &SubtaskInfo) -> SessionWindowAggregateOperator {
        WindowOperator::over(SessionWindows {
            calls: Calls::new(self.calls.clone(), self.arg_types.clone(), self.retracting),
            spec: self.clone(),
            sessions: ValueState::new(SESSIONS, None),
            timers: KeyedTimers::new(TIMERS),
            key: Vec::new(),
            scratch: Vec::new(),
        })
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

/// A window aggregate over sessions.
pub type SessionWindowAggregateOperator = WindowOperator<SessionWindows>;

/// Per key, its open sessions; see the module documentation.
#[derive(Debug)]
pub struct SessionWindows {
    spec: SessionWindowAggregateSpec,
    calls: Calls,
    sessions: ValueState<Sessions>,
    timers: KeyedTimers,
    key: Vec<Value>,
    scratch: Vec<Value>,
}

impl Windows for SessionWindows {
    fn name(&self) -> &'static str {
        self.spec.name()
    }

    /// Adds one row to its key's sessions, merging the ones its window overlaps or touches.
    fn add(&mut self, kind: RowKind, row: &[Value], watermark: i64, _now: i64) -> Result<bool> {
        let Some(time) = millis_of(&row[self.spec.time_col]) else { return Ok(false) };
        let (zone, time) = (self.spec.zone, self.spec.zone.local(time));
        self.key.clear();
        self.key.extend(self.spec.keys.iter().map(|&k| row[k].clone()));
        let Self { sessions, calls, timers, key, scratch, spec } = self;
        let (start, end) = (time, time.saturating_add(spec.gap));
        let Some(open) = sessions.get_mut_or_insert_with(key, 0, || Some(Sessions::default()))? else {
            return Ok(false);
        };
        let overlapping = |s: &Session| s.start <= end && s.end >= start;
        let merged_start = open.0.iter().filter(|s| overlapping(s)).map(|s| s.start).fold(start, i64::min);
        let merged_end = open.0.iter().filter(|s| overlapping(s)).map(|s| s.end).fold(end, i64::max);
        if zone.fired(merged_end, watermark) {
            if open.0.is_empty() {
                sessions.remove(key);
            }
            return Ok(true);
        }
        let mut accumulators = SliceAccumulators::new(calls);
        accumulators.add_row(calls, row, if kind.is_accumulate() { 1 } else { -1 });
        let mut kept = Vec::with_capacity(open.0.len() + 1);
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
    fn fire(&mut self, watermark: i64, emitted: &mut Chunk) {
        let zone = self.spec.zone;
        while let Some((time, keys)) = self.timers.pop_due_by(|time| zone.fired(time + 1, watermark)) {
            for key in keys {
                let Some(open) = self.sessions.get_mut(&key, 0) else { continue };
                let Some(at) = open.0.iter().position(|s| s.end - 1 == time) else { continue };
                let session = open.0.swap_remove(at);
                if open.0.is_empty() {
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
                        values.push(zone.window_time(session.end));
                    }
                });
            }
        }
    }

    fn arity(&self) -> usize {
        self.spec.keys.len() + self.calls.calls.len() + 2 + usize::from(self.spec.window_time)
    }

    /// Every key's open sessions and their timers.
    fn snapshot(&self, state: &mut StateWriter) {
        self.sessions.snapshot(state, 0);
        self.timers.snapshot(state);
    }

    fn restore(&mut self, states: &[StateReader], info: &SubtaskInfo) -> Result<()> {
        self.sessions.restore(states, info)?;
        self.timers.restore(states, info)?;
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
