//! WindowAggregate over `SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), gap)`: each session
//! ([`super::sessions`]) holds its rows' accumulators, merged when sessions merge, and is emitted
//! once, as an insert of the key, the aggregates, `window_start`, `window_end` (and
//! `window_time`), when the watermark reaches its end - 1.

use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::state::StateValue;
use weir_runtime::{Chunk, DataType, Result, RowKind, SubtaskInfo, Timestamp, Value};

use super::sessions::{SessionContent, SessionShape, SessionWindows};
use super::slices::{Calls, SliceAccumulators};
use super::WindowOperator;
use super::WindowZone;
use crate::aggregate::AggregateCall;
use crate::spec::OperatorSpec;

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
        let shape = SessionShape {
            name: self.name(),
            keys: self.keys.clone(),
            time_col: self.time_col,
            gap: self.gap,
            zone: self.zone,
        };
        let context = AggregateContext {
            calls: Calls::new(self.calls.clone(), self.arg_types.clone(), self.retracting),
            key_count: self.keys.len(),
            window_time: self.window_time,
        };
        WindowOperator::over(SessionWindows::new(shape, context))
    }
}

/// A window aggregate over sessions.
pub type SessionWindowAggregateOperator = WindowOperator<SessionWindows<SessionAccumulators>>;

/// The accumulators of one session.
#[derive(Debug, Clone)]
pub struct SessionAccumulators(SliceAccumulators);

impl StateValue for SessionAccumulators {
    fn encode(&self, out: &mut Encoder) {
        self.0.encode(out);
    }

    fn decode(input: &mut Decoder<'_>) -> std::result::Result<Self, DecodeError> {
        SliceAccumulators::decode(input).map(SessionAccumulators)
    }
}

/// The aggregates a session computes, and the shape of its result.
#[derive(Debug)]
pub struct AggregateContext {
    calls: Calls,
    key_count: usize,
    window_time: bool,
}

impl SessionContent for SessionAccumulators {
    type Context = AggregateContext;

    fn of_row(context: &AggregateContext, kind: RowKind, row: &[Value]) -> Result<Self> {
        let mut accumulators = SliceAccumulators::new(&context.calls);
        accumulators.add_row(&context.calls, row, if kind.is_accumulate() { 1 } else { -1 })?;
        Ok(SessionAccumulators(accumulators))
    }

    fn absorb(&mut self, context: &mut AggregateContext, other: Self) -> Result<()> {
        Ok(self.0.merge(&context.calls, &other.0)?)
    }

    /// The key, the aggregates and the window columns, when the session holds rows.
    fn emit(
        self,
        context: &AggregateContext,
        key: &[Value],
        (start, end): (i64, i64),
        zone: WindowZone,
        emitted: &mut Chunk,
    ) {
        if self.0.rows <= 0 {
            return;
        }
        emitted.push_with(RowKind::Insert, |values| {
            values.extend_from_slice(key);
            self.0.results(&context.calls, values);
            values.push(Value::Timestamp(Timestamp::from_millis(start)));
            values.push(Value::Timestamp(Timestamp::from_millis(end)));
            if context.window_time {
                values.push(zone.window_time(end));
            }
        });
    }

    fn arity(context: &AggregateContext) -> usize {
        context.key_count + context.calls.calls.len() + 2 + usize::from(context.window_time)
    }

    fn fits(&self, context: &AggregateContext) -> bool {
        self.0.fits(&context.calls)
    }

    fn remap_calls(&mut self, context: &AggregateContext, restored: &[Option<usize>]) -> bool {
        restored.len() == context.calls.calls.len() && {
            self.0.remap(restored, &context.calls);
            true
        }
    }
}

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for SessionWindowAggregateSpec {
    /// Per group key: its open sessions (start, end, rows and accumulators); their timers; the watermark fired up to.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{accumulator_layout, column_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        let key = column_types(input, &self.keys);
        let mut value = vec!["start BIGINT".to_string(), "end BIGINT".to_string(), "rows BIGINT".to_string()];
        value.extend(accumulator_layout(&self.calls, &self.arg_types));
        let signature = StateSignature::new("SessionWindowAggregate", STATE_VERSION).state(
            super::sessions::SESSIONS,
            StateKind::Value,
            key.clone(),
            value,
        );
        super::windows_signature(signature, super::sessions::TIMERS, key)
    }
}
