//! OverAggregate: aggregates over a frame of preceding rows of the same partition, ordered by a
//! time attribute — `agg(x) OVER (PARTITION BY … ORDER BY time ROWS|RANGE BETWEEN …
//! PRECEDING AND CURRENT ROW)`. Each input row goes out once, followed by one value per call.
//! The input only inserts; so does the operator.
//!
//! Frames (Flink's four `RowTime*PrecedingFunction`s):
//! - `ROWS n PRECEDING`: the row and the `n` rows before it, in time order (rows of one time in
//!   arrival order); `ROWS UNBOUNDED PRECEDING`: the row and every row before it.
//! - `RANGE t PRECEDING`: every row whose time is within `t` before the row's time, the row's
//!   peers (rows of the same time) included; `RANGE UNBOUNDED PRECEDING`: every row up to the
//!   row's time, peers included.
//!
//! On event time rows wait per key until the watermark passes their rowtime, then each time's
//! rows are computed in order; a row whose rowtime is not after the last time computed for its
//! key is late: dropped and counted. On processing time each row is computed when it arrives,
//! at the time it arrives (a RANGE frame then holds the rows that arrived within `t` before it).
//!
//! State per key: the rows waiting for the watermark, the rows of the frame (for retraction),
//! the accumulators and the last time computed; and the keys' timers. Checkpointed and
//! restored by key, with `table.exec.state.ttl`.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::element::NO_WATERMARK;
use weir_runtime::state::{KeyedTimers, StateValue, ValueState};
use weir_runtime::{Chunk, DataType, Error, Operator, OperatorContext, Output, Result, RowKind, SubtaskInfo, Value};

use crate::aggregate::{Accumulator, AggregateCall};
use crate::spec::OperatorSpec;
use crate::window::millis_of;

/// The state section of the keys' rows and accumulators.
const KEYS: &str = "over-keys";
/// The state section of the keys' timers.
const TIMERS: &str = "over-timers";

/// Which preceding rows the frame of a row holds (it always ends at the current row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverFrame {
    /// `ROWS n PRECEDING` (`None`: UNBOUNDED).
    Rows(Option<u64>),
    /// `RANGE t PRECEDING`, `t` in milliseconds (`None`: UNBOUNDED).
    Range(Option<i64>),
}

impl OverFrame {
    /// As Flink's EXPLAIN prints it: ` ROWS BETWEEN 2 PRECEDING AND CURRENT ROW`,
    /// ` RANGE BETWEEN 10000 PRECEDING AND CURRENT ROW`.
    pub fn explain(self) -> String {
        let (unit, bound) = match self {
            OverFrame::Rows(n) => ("ROWS", n.map(|n| n.to_string())),
            OverFrame::Range(t) => ("RANGE", t.map(|t| t.to_string())),
        };
        let bound = bound.unwrap_or_else(|| "UNBOUNDED".into());
        format!(" {unit} BETWEEN {bound} PRECEDING AND CURRENT ROW")
    }
}

/// Everything an [`OverAggregateOperator`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct OverAggregateSpec {
    /// The partition columns (none: one partition).
    pub partition: Vec<usize>,
    /// The time attribute column ordering the rows.
    pub time_col: usize,
    /// Whether it is a rowtime (else a processing time).
    pub rowtime: bool,
    /// The frame.
    pub frame: OverFrame,
    /// The aggregate calls, over input columns.
    pub calls: Vec<AggregateCall>,
    /// The type of each call's argument.
    pub arg_types: Vec<Option<DataType>>,
    /// The number of input columns.
    pub input_arity: usize,
    /// `table.exec.state.ttl`.
    pub state_ttl: Option<Duration>,
}

impl OperatorSpec for OverAggregateSpec {
    type Operator = OverAggregateOperator;

    fn build(&self, _subtask: &SubtaskInfo) -> OverAggregateOperator {
        OverAggregateOperator {
            keys: ValueState::new(KEYS, self.state_ttl),
            timers: KeyedTimers::new(TIMERS),
            spec: self.clone(),
        }
    }
}

/// One key's state.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyState {
    /// Rows waiting for the watermark, by rowtime.
    waiting: BTreeMap<i64, Vec<Box<[Value]>>>,
    /// The rows in the frame, oldest first, with their times.
    frame: VecDeque<(i64, Box<[Value]>)>,
    accumulators: Vec<Accumulator>,
    /// The last time computed (Flink's `lastTriggeringTs`).
    last_time: i64,
}

impl KeyState {
    fn new(spec: &OverAggregateSpec) -> Self {
        let bounded = !matches!(spec.frame, OverFrame::Rows(None) | OverFrame::Range(None));
        KeyState {
            waiting: BTreeMap::new(),
            frame: VecDeque::new(),
            accumulators: spec
                .calls
                .iter()
                .zip(&spec.arg_types)
                .map(|(call, ty)| Accumulator::new(call, ty.as_ref(), bounded))
                .collect(),
            last_time: NO_WATERMARK,
        }
    }

    /// The key's state as the OVER aggregate of other calls holds it after a restore:
    /// accumulator `i` is old call `restored[i]`'s; a new call's is computed from the rows in the
    /// frame (so that it retracts only rows it took in), empty for an unbounded frame.
    fn remap(&mut self, spec: &OverAggregateSpec, restored: &[Option<usize>]) -> Result<()> {
        let bounded = !matches!(spec.frame, OverFrame::Rows(None) | OverFrame::Range(None));
        let old = std::mem::take(&mut self.accumulators);
        for (i, (call, old_call)) in spec.calls.iter().zip(restored).enumerate() {
            let acc = match old_call.and_then(|j| old.get(j).cloned()) {
                Some(kept) => kept,
                None => {
                    let mut acc = Accumulator::new(call, spec.arg_types[i].as_ref(), bounded);
                    for (_, row) in &self.frame {
                        if call.filter.is_none_or(|f| row[f] == Value::Boolean(true)) {
                            acc.update(call, call.arg.map_or(&Value::Null, |a| &row[a]), 1)?;
                        }
                    }
                    acc
                }
            };
            self.accumulators.push(acc);
        }
        Ok(())
    }

    /// Adds (`sign` 1) or retracts (-1) `row` in every accumulator.
    fn update(&mut self, spec: &OverAggregateSpec, row: &[Value], sign: i64) -> Result<()> {
        for (acc, call) in self.accumulators.iter_mut().zip(&spec.calls) {
            if call.filter.is_some_and(|f| row[f] != Value::Boolean(true)) {
                continue;
            }
            acc.update(call, call.arg.map_or(&Value::Null, |a| &row[a]), sign)?;
        }
        Ok(())
    }

    /// Pushes `row` followed by the calls' results.
    fn emit(&self, spec: &OverAggregateSpec, row: &[Value], emitted: &mut Chunk) {
        emitted.push_with(RowKind::Insert, |values| {
            values.extend_from_slice(row);
            values.extend(self.accumulators.iter().zip(&spec.calls).map(|(acc, call)| acc.result(call)));
        });
    }

    /// Computes the rows of one time, in arrival order, emitting each with its results.
    fn compute(
        &mut self,
        spec: &OverAggregateSpec,
        time: i64,
        rows: Vec<Box<[Value]>>,
        emitted: &mut Chunk,
    ) -> Result<()> {
        match spec.frame {
            OverFrame::Rows(preceding) => {
                for row in rows {
                    self.update(spec, &row, 1)?;
                    let Some(n) = preceding else {
                        self.emit(spec, &row, emitted);
                        continue;
                    };
                    // The row and the n before it: the oldest leaves before the row is emitted.
                    if self.frame.len() as u64 == n + 1 {
                        let (_, old) = self.frame.pop_front().expect("the frame holds n + 1 rows");
                        self.update(spec, &old, -1)?;
                    }
                    self.emit(spec, &row, emitted);
                    if n > 0 {
                        self.frame.push_back((time, row));
                    } else {
                        self.update(spec, &row, -1)?;
                    }
                }
            }
            OverFrame::Range(preceding) => {
                for row in &rows {
                    self.update(spec, row, 1)?;
                }
                if let Some(t) = preceding {
                    while self.frame.front().is_some_and(|(at, _)| *at < time.saturating_sub(t)) {
                        let (_, old) = self.frame.pop_front().expect("a front row");
                        self.update(spec, &old, -1)?;
                    }
                }
                rows.iter().for_each(|row| self.emit(spec, row, emitted));
                if preceding.is_some() {
                    self.frame.extend(rows.into_iter().map(|row| (time, row)));
                }
            }
        }
        self.last_time = time;
        Ok(())
    }
}

impl StateValue for KeyState {
    fn encode(&self, out: &mut Encoder) {
        out.u32(self.waiting.values().map(Vec::len).sum::<usize>() as u32);
        for (time, rows) in &self.waiting {
            rows.iter().for_each(|row| {
                out.i64(*time);
                out.values(row);
            });
        }
        out.u32(self.frame.len() as u32);
        for (time, row) in &self.frame {
            out.i64(*time);
            out.values(row);
        }
        out.u32(self.accumulators.len() as u32);
        self.accumulators.iter().for_each(|acc| acc.encode(out));
        out.i64(self.last_time);
    }

    fn decode(input: &mut Decoder<'_>) -> std::result::Result<Self, DecodeError> {
        let mut waiting: BTreeMap<i64, Vec<Box<[Value]>>> = BTreeMap::new();
        for _ in 0..input.u32()? {
            let time = input.i64()?;
            waiting.entry(time).or_default().push(input.values()?);
        }
        let frame =
            (0..input.u32()?).map(|_| Ok((input.i64()?, input.values()?))).collect::<std::result::Result<_, _>>()?;
        let accumulators =
            (0..input.u32()?).map(|_| Accumulator::decode(input)).collect::<std::result::Result<_, _>>()?;
        Ok(KeyState { waiting, frame, accumulators, last_time: input.i64()? })
    }
}

/// OVER aggregation; see the module documentation.
#[derive(Debug)]
pub struct OverAggregateOperator {
    spec: OverAggregateSpec,
    keys: ValueState<KeyState>,
    timers: KeyedTimers,
}

impl OverAggregateOperator {
    fn arity(&self) -> usize {
        self.spec.input_arity + self.spec.calls.len()
    }
}

impl Operator for OverAggregateOperator {
    fn name(&self) -> &str {
        "OverAggregate"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let now = ctx.processing_time();
        let Self { spec, keys, timers } = self;
        let mut emitted = Chunk::with_capacity(spec.input_arity + spec.calls.len(), chunk.len());
        let mut late = 0;
        for (kind, row) in chunk.rows() {
            if kind != RowKind::Insert {
                return Err(Error::execution(format!(
                    "OverAggregate doesn't support consuming update and delete changes, but received a '{kind}' row."
                )));
            }
            let key: Vec<Value> = spec.partition.iter().map(|&c| row[c].clone()).collect();
            let Some(state) = keys.get_mut_or_insert_with(&key, now, || Some(KeyState::new(spec)))? else {
                continue;
            };
            if !spec.rowtime {
                state.compute(spec, now, vec![row.into()], &mut emitted)?;
                continue;
            }
            match millis_of(&row[spec.time_col]) {
                Some(time) if time > state.last_time => {
                    state.waiting.entry(time).or_default().push(row.into());
                    timers.register(&key, time);
                }
                _ => late += 1,
            }
        }
        ctx.record_late_dropped(late);
        out.collect(emitted);
        Ok(())
    }

    /// The keys' rows whose rowtime the watermark passed are computed, in time order.
    fn process_watermark(&mut self, watermark: i64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        let now = ctx.processing_time();
        let mut emitted = Chunk::with_capacity(self.arity(), 0);
        while let Some((time, due)) = self.timers.pop_due(watermark) {
            for key in due {
                let Some(state) = self.keys.get_mut(&key, now) else { continue };
                if let Some(rows) = state.waiting.remove(&time) {
                    state.compute(&self.spec, time, rows, &mut emitted)?;
                }
            }
        }
        out.collect(emitted);
        out.emit_watermark(watermark);
        Ok(())
    }

    fn snapshot_state(&mut self, _: u64, ctx: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        self.keys.snapshot(state, ctx.processing_time());
        self.timers.snapshot(state);
        Ok(())
    }

    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        let info = ctx.subtask().clone();
        self.keys.restore(states, &info)?;
        // A restore into other calls than the checkpoint's maps each call to its old one.
        if let Some(restored) = crate::aggregate::restored_call_map(states, self.spec.calls.len())? {
            let spec = &self.spec;
            let mut failed = None;
            self.keys.retain(i64::MIN, |_, key| {
                if let Err(error) = key.remap(spec, &restored) {
                    failed.get_or_insert(error);
                }
                true
            });
            if let Some(error) = failed {
                return Err(error);
            }
        }
        self.timers.restore(states, &info)
    }
}

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for OverAggregateSpec {
    /// Per partition key: the rows waiting for their time, the frame's rows and the accumulators; the timers of the waiting times.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{accumulator_layout, column_types, row_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        let key = column_types(input, &self.partition);
        let mut value = vec![format!("waiting and frame rows ({})", row_types(input).join(", "))];
        value.extend(accumulator_layout(&self.calls, &self.arg_types));
        StateSignature::new("OverAggregate", STATE_VERSION).state(KEYS, StateKind::Value, key.clone(), value).state(
            TIMERS,
            StateKind::Timers,
            key,
            vec!["BIGINT (time)".to_string()],
        )
    }
}

#[cfg(test)]
#[path = "over_aggregate_tests.rs"]
mod tests;
