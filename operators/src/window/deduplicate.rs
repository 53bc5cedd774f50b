//! WindowDeduplicate: `ROW_NUMBER() OVER (PARTITION BY window_start, window_end, keys ORDER BY
//! rowtime [DESC])` filtered to rank 1 and not selected: per key and window, the first row (or,
//! ordered descending, the last row) by event time, emitted as an insert when the window fires.
//!
//! As in Flink, a later row replaces the kept first row only when its time is earlier, and
//! replaces the kept last row when its time is not earlier (of rows with equal times, the first
//! to come is the first row and the last to come the last row). Windows are attached to the rows
//! ([`super::attached`]): late rows are dropped and counted.

use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::state::StateValue;
use weir_runtime::{Chunk, RowKind, SubtaskInfo, Value};

use super::attached::{AttachedBuffer, AttachedSpec, AttachedWindows};
use super::table_function::millis_of;
use super::{AttachedWindow, WindowOperator};
use crate::spec::OperatorSpec;

/// Everything a [`WindowDeduplicateOperator`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowDeduplicateSpec {
    /// The partition columns besides `window_start` and `window_end`.
    pub partition: Vec<usize>,
    /// The rowtime column the rows are ordered by.
    pub time_col: usize,
    /// Keep the last row (`ORDER BY rowtime DESC`) rather than the first.
    pub keep_last: bool,
    /// Where the rows carry their window.
    pub window: AttachedWindow,
    /// The number of input columns (and of emitted ones).
    pub input_arity: usize,
}

impl AttachedSpec for WindowDeduplicateSpec {
    fn name(&self) -> &'static str {
        "WindowDeduplicate"
    }

    fn partition(&self) -> &[usize] {
        &self.partition
    }

    fn window(&self) -> &AttachedWindow {
        &self.window
    }

    fn input_arity(&self) -> usize {
        self.input_arity
    }

    fn arity(&self) -> usize {
        self.input_arity
    }
}

impl OperatorSpec for WindowDeduplicateSpec {
    type Operator = WindowDeduplicateOperator;

    fn build(&self, _subtask: &SubtaskInfo) -> WindowDeduplicateOperator {
        WindowOperator::over(AttachedWindows::new(self.clone()))
    }
}

/// Window deduplication; see the module documentation.
pub type WindowDeduplicateOperator = WindowOperator<AttachedWindows<KeptRow>>;

/// The row one key keeps of one window.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptRow(Box<[Value]>);

impl AttachedBuffer for KeptRow {
    type Spec = WindowDeduplicateSpec;

    fn first(_spec: &WindowDeduplicateSpec, row: &[Value]) -> Self {
        KeptRow(row.into())
    }

    fn add(&mut self, spec: &WindowDeduplicateSpec, row: &[Value]) {
        let time = |row: &[Value]| millis_of(&row[spec.time_col]).unwrap_or(i64::MIN);
        let (kept, new) = (time(&self.0), time(row));
        let replace = if spec.keep_last { new >= kept } else { new < kept };
        if replace {
            self.0 = row.into();
        }
    }

    fn emit(self, _spec: &WindowDeduplicateSpec, emitted: &mut Chunk) {
        emitted.push(RowKind::Insert, &self.0);
    }

    fn fits(&self, arity: usize) -> bool {
        self.0.len() == arity
    }
}

impl StateValue for KeptRow {
    fn encode(&self, out: &mut Encoder) {
        out.values(&self.0);
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(KeptRow(input.values()?))
    }
}

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for WindowDeduplicateSpec {
    /// Per partition key and window end: the row kept; the timers of the windows to fire; the watermark fired up to.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{column_types, row_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        let mut key = column_types(input, &self.partition);
        key.push("BIGINT (window end)".to_string());
        let signature = StateSignature::new("WindowDeduplicate", STATE_VERSION).state(
            super::attached::BUFFERS,
            StateKind::Map,
            key,
            row_types(input),
        );
        super::windows_signature(signature, super::attached::TIMERS, column_types(input, &self.partition))
    }
}
