//! LocalWindowAggregate: the first phase of a two-phase window aggregate, before the exchange.
//! It keeps no state: it buffers accumulators per key and slice and sends them on as partial
//! rows `[keys…, partials…, distinct sets…, rows, $slice_end]` (inserts) when the watermark
//! reaches a buffered slice's end - 1, when the buffer holds [`MAX_BUFFERED`] slices, before a
//! checkpoint's barrier and at the end of input. It drops nothing: the global phase decides
//! what is late.

use hashbrown::HashMap;
use weir_runtime::state::Key;
use weir_runtime::{Chunk, DataType, Operator, OperatorContext, Output, Result, RowKind, Value};

use super::slices::{Calls, SliceAccumulators};
use super::table_function::millis_of;
use super::WindowSpec;
use crate::aggregate::AggregateCall;
use crate::spec::OperatorSpec;

/// How many (key, slice) accumulators the buffer holds before it is sent on.
pub const MAX_BUFFERED: usize = 1 << 16;

/// Everything a [`LocalWindowAggregateOperator`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalWindowAggregateSpec {
    /// The grouping columns of the input.
    pub keys: Vec<usize>,
    /// The (mergeable) aggregates.
    pub calls: Vec<AggregateCall>,
    /// Types of the calls' arguments.
    pub arg_types: Vec<Option<DataType>>,
    /// The window.
    pub window: WindowSpec,
    /// The time column.
    pub time_col: usize,
    /// Whether the input retracts rows.
    pub retracting: bool,
}

impl OperatorSpec for LocalWindowAggregateSpec {
    type Operator = LocalWindowAggregateOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> LocalWindowAggregateOperator {
        LocalWindowAggregateOperator {
            calls: Calls::new(self.calls.clone(), self.arg_types.clone(), self.retracting),
            spec: self.clone(),
            buffer: HashMap::new(),
            earliest: i64::MAX,
            key: Key::new(),
        }
    }
}

/// Pre-aggregates rows per key and slice; see the module documentation.
#[derive(Debug)]
pub struct LocalWindowAggregateOperator {
    spec: LocalWindowAggregateSpec,
    calls: Calls,
    /// Accumulators by the key's values followed by the slice end.
    buffer: HashMap<Key, SliceAccumulators>,
    /// The earliest slice end buffered.
    earliest: i64,
    key: Key,
}

impl LocalWindowAggregateOperator {
    /// Sends every buffered slice on.
    fn flush(&mut self, out: &mut Output) {
        if self.buffer.is_empty() {
            return;
        }
        let arity = self.spec.keys.len() + self.calls.partial_width() + 1;
        let mut emitted = Chunk::with_capacity(arity, self.buffer.len());
        for (key, accumulators) in self.buffer.drain() {
            emitted.push_with(RowKind::Insert, |values| {
                let (slice, keys) = key.split_last().unwrap_or((&Value::Null, &[]));
                values.extend_from_slice(keys);
                accumulators.write_partial(values);
                values.push(slice.clone());
            });
        }
        self.earliest = i64::MAX;
        out.collect(emitted);
    }
}

impl Operator for LocalWindowAggregateOperator {
    fn name(&self) -> &str {
        "LocalWindowAggregate"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        // A refusal of an aggregate function fails the job once the chunk is taken in.
        let mut failed = Ok(());
        for (kind, row) in chunk.rows() {
            let Some(time) = millis_of(&row[self.spec.time_col]) else { continue };
            let slice = self.spec.window.slice_end(self.spec.window.zone.local(time));
            self.key.clear();
            self.key.extend(self.spec.keys.iter().map(|&k| row[k].clone()));
            self.key.push(Value::BigInt(slice));
            let Self { buffer, calls, key, .. } = self;
            let accumulators = buffer.entry_ref(&key[..]).or_insert_with(|| SliceAccumulators::new(calls));
            let added = accumulators.add_row(calls, row, if kind.is_accumulate() { 1 } else { -1 });
            if added.is_err() {
                failed = added;
            }
            self.earliest = self.earliest.min(slice);
            if self.buffer.len() >= MAX_BUFFERED {
                self.flush(out);
            }
        }
        Ok(failed?)
    }

    /// Slices that the watermark makes due go on before it.
    fn process_watermark(&mut self, watermark: i64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        if self.earliest.saturating_sub(1) <= watermark {
            self.flush(out);
        }
        out.emit_watermark(watermark);
        Ok(())
    }

    /// The buffer goes out before a checkpoint's barrier: a checkpoint holds no buffer.
    fn prepare_snapshot_pre_barrier(&mut self, _: u64, _: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush(out);
        Ok(())
    }

    fn end_of_input(&mut self, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush(out);
        Ok(())
    }
}
