//! WindowAggregate and GlobalWindowAggregate: `GROUP BY window_start, window_end, keys` over a
//! TUMBLE, HOP or CUMULATE window, emitting each window's result once, as an insert, when the
//! watermark reaches its end - 1.
//!
//! Per key the operator keeps one [`SliceAccumulators`] per slice (keyed map state, the slice's
//! end as the map key) and a timer per window still to fire ([`KeyedTimers`], at the window's
//! end - 1). Input is either rows (one phase: each row's slice from its time column) or the
//! partial rows of [`super::LocalWindowAggregateOperator`] (the global phase: the slice is
//! their last column). A row whose slice has fired is still taken while a later window of the
//! slice has not (HOP, CUMULATE); once the slice's last window has fired, it is late: dropped
//! and counted (`numLateRecordsDropped`). A window is emitted when it holds rows; a slice is
//! dropped from state when its last window fires.

use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::{KeyedTimers, MapState};
use weir_runtime::{Chunk, DataType, Result, RowKind, SubtaskInfo, Timestamp, Value};

use super::slices::{Calls, SliceAccumulators};
use super::table_function::millis_of;
use super::{Fired, WindowOperator, WindowSpec, Windows};
use crate::aggregate::AggregateCall;
use crate::spec::OperatorSpec;

/// The name of the slices' state (their section in checkpoints).
const SLICES: &str = "slices";
/// The name of the window timers' state.
const TIMERS: &str = "window-timers";

/// What a window aggregate's input rows are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowAggregateInput {
    /// Rows, whose slice comes from the time column `time_col` (one phase: `WindowAggregate`),
    /// or, over processing time, from the operator's clock when the row arrives (as Flink
    /// assigns processing-time windows).
    Rows {
        /// The time column.
        time_col: usize,
        /// Whether the windows are of processing time: the clock, not the column, places a row.
        processing_time: bool,
    },
    /// Rows `[keys…, partials…, distinct sets…, rows, slice_end]` of a local window aggregate
    /// (the global phase: `GlobalWindowAggregate`).
    Partials,
}

/// Everything a [`WindowAggregateOperator`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowAggregateSpec {
    /// The grouping columns of the input (the keys of the partial rows: their first columns).
    pub keys: Vec<usize>,
    /// The aggregates; over partials, their arguments are those of the local phase's input.
    pub calls: Vec<AggregateCall>,
    /// Types of the calls' arguments.
    pub arg_types: Vec<Option<DataType>>,
    /// The window.
    pub window: WindowSpec,
    /// Rows or partials.
    pub input: WindowAggregateInput,
    /// Whether the input retracts rows.
    pub retracting: bool,
    /// Whether a `window_time` column (`window_end - 1 ms`) follows `window_start, window_end`.
    pub window_time: bool,
    /// Whether the query wrote it in the older syntax (`GROUP BY TUMBLE(ts, …)`): Flink names
    /// it `GroupWindowAggregate` then.
    pub group_window: bool,
}

impl WindowAggregateSpec {
    /// Flink's name of the operator: `GlobalWindowAggregate` over partials, else
    /// `GroupWindowAggregate` in the older syntax, else `WindowAggregate`.
    pub fn name(&self) -> &'static str {
        match self.input {
            WindowAggregateInput::Partials => "GlobalWindowAggregate",
            WindowAggregateInput::Rows { .. } if self.group_window => "GroupWindowAggregate",
            WindowAggregateInput::Rows { .. } => "WindowAggregate",
        }
    }
}

impl OperatorSpec for WindowAggregateSpec {
    type Operator = WindowAggregateOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> WindowAggregateOperator {
        WindowAggregateOperator::new(self.clone())
    }
}

/// A window aggregate on slices.
pub type WindowAggregateOperator = WindowOperator<SlicedWindows>;

impl WindowAggregateOperator {
    /// An aggregate as `spec` describes it.
    pub fn new(spec: WindowAggregateSpec) -> Self {
        let calls = Calls::new(spec.calls.clone(), spec.arg_types.clone(), spec.retracting);
        WindowOperator::over(SlicedWindows {
            spec,
            calls,
            slices: MapState::new(SLICES, None),
            timers: KeyedTimers::new(TIMERS),
            key: Vec::new(),
        })
    }
}

/// Windows kept as slices per key; see the module documentation.
#[derive(Debug)]
pub struct SlicedWindows {
    spec: WindowAggregateSpec,
    calls: Calls,
    slices: MapState<i64, SliceAccumulators>,
    timers: KeyedTimers,
    key: Vec<Value>,
}

impl SlicedWindows {
    /// Emits key `key`'s window ending at `end` (when it holds rows) and drops the slices no
    /// later window needs.
    fn fire_window(&mut self, key: &[Value], end: i64, emitted: &mut Chunk) -> Result<()> {
        let window = self.spec.window;
        let Self { slices, calls, spec, .. } = self;
        let merged = if window.unshared() {
            // The slice is the window and nothing later needs it.
            slices.remove(key, &end)
        } else {
            let mut merged: Option<SliceAccumulators> = None;
            for slice in window.slice_ends_in_merge_order(end) {
                if let Some(acc) = slices.get(key, &slice, 0) {
                    merged.get_or_insert_with(|| SliceAccumulators::new(calls)).merge(calls, acc)?;
                }
            }
            for slice in window.slice_ends_of_window(end) {
                if window.last_window_end(slice) == end {
                    slices.remove(key, &slice);
                }
            }
            merged
        };
        // The key's next window holding one of its slices fires next (its timer may be due already:
        // the caller pops timers until none is).
        let next = slices
            .entries(key, 0)
            .filter_map(|(&slice, _)| window.window_ends_of_slice(slice).find(|&e| e > end))
            .min();
        if let Some(next) = next {
            self.timers.register(key, next - 1);
        }
        if let Some(merged) = merged.filter(|m| m.rows > 0) {
            emitted.push_with(RowKind::Insert, |values| {
                values.extend_from_slice(key);
                merged.results(calls, values);
                values.push(Value::Timestamp(Timestamp::from_millis(window.window_start(end))));
                values.push(Value::Timestamp(Timestamp::from_millis(end)));
                if spec.window_time {
                    values.push(window.zone.window_time(end));
                }
            });
        }
        Ok(())
    }
}

impl Windows for SlicedWindows {
    fn name(&self) -> &'static str {
        self.spec.name()
    }

    /// Adds one input row (or partial row) to its key's slice.
    fn add(&mut self, kind: RowKind, row: &[Value], watermark: i64, now: i64) -> Result<bool> {
        let slice = match self.spec.input {
            WindowAggregateInput::Rows { processing_time: true, .. } => {
                self.spec.window.slice_end(self.spec.window.zone.local(now))
            }
            WindowAggregateInput::Rows { time_col, .. } => match millis_of(&row[time_col]) {
                Some(time) => self.spec.window.slice_end(self.spec.window.zone.local(time)),
                // A row without a time belongs to no window.
                None => return Ok(false),
            },
            WindowAggregateInput::Partials => row[row.len() - 1].as_i64().unwrap_or(i64::MIN),
        };
        let window = self.spec.window;
        let fired = |end: i64| window.zone.fired(end, watermark);
        if fired(slice) && fired(window.last_window_end(slice)) {
            return Ok(true);
        }
        self.key.clear();
        match self.spec.input {
            WindowAggregateInput::Rows { .. } => self.key.extend(self.spec.keys.iter().map(|&k| row[k].clone())),
            WindowAggregateInput::Partials => self.key.extend_from_slice(&row[..self.spec.keys.len()]),
        }
        let Self { slices, calls, timers, key, .. } = self;
        let mut new = false;
        let accumulators = slices.get_mut_or_insert_with(key, slice, 0, || {
            new = true;
            Some(SliceAccumulators::new(calls))
        })?;
        let Some(accumulators) = accumulators else { return Ok(false) };
        match self.spec.input {
            WindowAggregateInput::Rows { .. } => {
                accumulators.add_row(calls, row, if kind.is_accumulate() { 1 } else { -1 })?
            }
            WindowAggregateInput::Partials => {
                let key_count = key.len();
                accumulators.add_partial(calls, &row[key_count..row.len() - 1])?
            }
        }
        // One timer per key at a time, as Flink's slicing window operator keeps: the first window
        // of a new slice here, each later one set when the window before it fires.
        if let Some(end) = new.then(|| window.window_ends_of_slice(slice).find(|&end| !fired(end))).flatten() {
            timers.register(key, end - 1);
        }
        Ok(false)
    }

    fn fire(&mut self, watermark: i64, fired: &mut Fired<'_>) -> Result<()> {
        let zone = self.spec.window.zone;
        while let Some((time, keys)) = self.timers.pop_due_by(|time| zone.fired(time + 1, watermark)) {
            for key in keys {
                self.fire_window(&key, time + 1, fired.chunk())?;
            }
        }
        Ok(())
    }

    fn arity(&self) -> usize {
        self.spec.keys.len() + self.calls.calls.len() + 2 + usize::from(self.spec.window_time)
    }

    fn processing_time(&self) -> bool {
        matches!(self.spec.input, WindowAggregateInput::Rows { processing_time: true, .. })
    }

    fn next_fire_time(&mut self) -> Option<i64> {
        self.timers.next_time().map(|time| self.spec.window.zone.fire_time(time + 1))
    }

    /// Every key's slices and window timers.
    fn snapshot(&mut self, state: &mut StateWriter) {
        self.slices.snapshot(state, 0);
        self.timers.snapshot(state);
    }

    fn restore(&mut self, states: &[StateReader], info: &SubtaskInfo) -> Result<()> {
        self.slices.restore(states, info)?;
        self.timers.restore(states, info)?;
        let calls = &self.calls;
        // A restore into other calls than the checkpoint's maps each call to its old one.
        if let Some(restored) = crate::aggregate::restored_call_map(states, calls.calls.len())? {
            self.slices.for_each_mut(|_, _, acc| acc.remap(&restored, calls));
        }
        let mut fits = true;
        self.slices.for_each(|_, _, acc| fits &= acc.fits(calls));
        if !fits {
            return Err(weir_runtime::Error::Restore(format!(
                "the state of {} holds windows of other aggregates than its {} calls",
                self.spec.name(),
                calls.calls.len()
            )));
        }
        Ok(())
    }
}

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for WindowAggregateSpec {
    /// Per group key and slice end: the slice's rows and accumulators; the timers of the windows to fire; the watermark fired up to.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{accumulator_layout, column_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        let mut key = column_types(input, &self.keys);
        key.push("BIGINT (slice end)".to_string());
        let mut value = vec!["rows BIGINT".to_string()];
        value.extend(accumulator_layout(&self.calls, &self.arg_types));
        let signature = StateSignature::new("WindowAggregate", STATE_VERSION).state(SLICES, StateKind::Map, key, value);
        super::windows_signature(signature, TIMERS, column_types(input, &self.keys))
    }
}
