//! WindowRank: `ROW_NUMBER() OVER (PARTITION BY window_start, window_end, keys ORDER BY …)`
//! filtered to a constant range of ranks, over rows that carry their window (window Top-N).
//!
//! Per key and window the operator keeps the best `range.end` rows in order (rows of equal sort
//! keys in the order they came, as Flink's Top-N buffer keeps them; a row that would rank past
//! the range's end is not kept). When the window fires it emits the rows ranked in the range, as
//! inserts, each followed by its rank when the query selects it. Windows are attached to the
//! rows ([`super::attached`]): late rows are dropped and counted.

use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::state::StateValue;
use weir_runtime::{Chunk, RowKind, SubtaskInfo, Value};

use super::attached::{AttachedBuffer, AttachedSpec, AttachedWindows};
use super::{AttachedWindow, WindowOperator};
use crate::ranking::{compare_rows, RankRange, SortKey};
use crate::spec::OperatorSpec;

/// Everything a [`WindowRankOperator`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowRankSpec {
    /// The partition columns besides `window_start` and `window_end`.
    pub partition: Vec<usize>,
    /// The ORDER BY keys.
    pub order: Vec<SortKey>,
    /// The ranks emitted.
    pub range: RankRange,
    /// Whether each row is followed by its rank (the query selects it).
    pub output_rank: bool,
    /// Where the rows carry their window.
    pub window: AttachedWindow,
    /// The number of input columns.
    pub input_arity: usize,
}

impl AttachedSpec for WindowRankSpec {
    fn name(&self) -> &'static str {
        "WindowRank"
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
        self.input_arity + usize::from(self.output_rank)
    }
}

impl OperatorSpec for WindowRankSpec {
    type Operator = WindowRankOperator;

    fn build(&self, _subtask: &SubtaskInfo) -> WindowRankOperator {
        WindowOperator::over(AttachedWindows::new(self.clone()))
    }
}

/// Window Top-N; see the module documentation.
pub type WindowRankOperator = WindowOperator<AttachedWindows<TopRows>>;

/// The best rows of one key's window so far, best first.
#[derive(Debug, Clone, PartialEq)]
pub struct TopRows(Vec<Box<[Value]>>);

impl AttachedBuffer for TopRows {
    type Spec = WindowRankSpec;

    fn first(_spec: &WindowRankSpec, row: &[Value]) -> Self {
        TopRows(vec![row.into()])
    }

    fn add(&mut self, spec: &WindowRankSpec, row: &[Value]) {
        let limit = spec.range.end as usize;
        // After every row that sorts before or equal to it: ties keep their arrival order.
        let at = self.0.partition_point(|kept| compare_rows(&spec.order, kept, row).is_le());
        if at < limit {
            self.0.insert(at, row.into());
            self.0.truncate(limit);
        }
    }

    fn emit(self, spec: &WindowRankSpec, emitted: &mut Chunk) {
        for (index, row) in self.0.into_iter().enumerate() {
            let rank = index as u64 + 1;
            if !spec.range.contains(rank) {
                continue;
            }
            emitted.push_with(RowKind::Insert, |values| {
                values.extend(row.into_vec());
                if spec.output_rank {
                    values.push(Value::BigInt(rank as i64));
                }
            });
        }
    }

    fn fits(&self, arity: usize) -> bool {
        self.0.iter().all(|row| row.len() == arity)
    }
}

impl StateValue for TopRows {
    fn encode(&self, out: &mut Encoder) {
        out.u32(self.0.len() as u32);
        self.0.iter().for_each(|row| out.values(row));
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let rows = (0..input.u32()?).map(|_| input.values()).collect::<Result<_, _>>()?;
        Ok(TopRows(rows))
    }
}

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for WindowRankSpec {
    /// Per partition key and window end: the window's rows; the timers of the windows to fire; the watermark fired up to.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{column_types, row_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        let mut key = column_types(input, &self.partition);
        key.push("BIGINT (window end)".to_string());
        let signature = StateSignature::new("WindowRank", STATE_VERSION).state(
            super::attached::BUFFERS,
            StateKind::Map,
            key,
            row_types(input),
        );
        super::windows_signature(signature, super::attached::TIMERS, column_types(input, &self.partition))
    }
}
