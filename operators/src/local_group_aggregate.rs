//! LocalGroupAggregate: the first phase of a two-phase aggregation. It runs before the hash
//! exchange, keeps no state, and at every flush emits one row of partial accumulators per
//! group it saw: `[keys…, partials…, distinct values…, rows]`, always as `+I`. A DISTINCT call's
//! partial is computed over the bundle's distinct values, which follow with their counts per
//! argument column (`DISTINCT(b) AS distinct$0`), for the global phase to merge.

use hashbrown::HashMap;
use smallvec::SmallVec;
use weir_runtime::{Chunk, DataType, Operator, OperatorContext, Output, Result, RowKind, Value};

use crate::aggregate::bundle::{BundleMeter, BundleTrigger, Bundled};
use crate::aggregate::distinct::{DistinctArgs, DistinctValues};
use crate::aggregate::group_state::GroupKey;
use crate::aggregate::{Accumulator, AggregateCall, TypedCalls, TypedLocalGroups};
use crate::group_aggregate::unexpected_columns;
use crate::spec::OperatorSpec;

/// One group of the bundle: rows, partial accumulators and the distinct values of its DISTINCT calls.
#[derive(Debug)]
struct LocalGroup {
    rows: i64,
    accumulators: SmallVec<[Accumulator; 4]>,
    distinct: Vec<DistinctValues>,
}

/// Everything a [`LocalGroupAggregateOperator`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalGroupAggregateSpec {
    /// Grouping columns of the input.
    pub keys: Vec<usize>,
    /// The (mergeable) aggregates.
    pub calls: Vec<AggregateCall>,
    /// Types of the input columns.
    pub input_types: Vec<DataType>,
    /// Whether the input retracts rows.
    pub retracting: bool,
    /// When bundles flush besides markers, watermarks and the end of input.
    pub trigger: BundleTrigger,
}

impl OperatorSpec for LocalGroupAggregateSpec {
    type Operator = LocalGroupAggregateOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> LocalGroupAggregateOperator {
        LocalGroupAggregateOperator::new(
            self.keys.clone(),
            self.calls.clone(),
            &self.input_types,
            self.retracting,
            self.trigger,
        )
    }
}

/// Pre-aggregates a mini-batch per group.
#[derive(Debug)]
pub struct LocalGroupAggregateOperator {
    keys: Vec<usize>,
    calls: Vec<AggregateCall>,
    arg_types: Vec<Option<DataType>>,
    retracting: bool,
    distinct: DistinctArgs,
    bundle: HashMap<GroupKey, LocalGroup>,
    meter: BundleMeter,
    key: Vec<Value>,
    /// The bundle held as typed vectors, when [`TypedCalls`] covers the calls.
    typed: Option<TypedLocalGroups>,
}

impl LocalGroupAggregateOperator {
    /// A local aggregate over input columns `keys` computing the (mergeable) `calls`.
    pub fn new(
        keys: Vec<usize>,
        calls: Vec<AggregateCall>,
        input_types: &[DataType],
        retracting: bool,
        trigger: BundleTrigger,
    ) -> Self {
        let arg_types = calls.iter().map(|c| c.arg.map(|a| input_types[a].clone())).collect();
        let typed = TypedCalls::supports(&keys, &calls, input_types, retracting)
            .then(|| TypedLocalGroups::new(&keys, &calls, input_types))
            .flatten();
        LocalGroupAggregateOperator {
            typed,
            distinct: DistinctArgs::of(&calls),
            keys,
            calls,
            arg_types,
            retracting,
            bundle: HashMap::new(),
            meter: BundleMeter::new(trigger),
            key: Vec::new(),
        }
    }

    /// Whether a bundle that [`TypedCalls`] covers is held as typed vectors (the default); off,
    /// as values (the reference the typed bundle is tested against).
    pub fn with_typed_state(mut self, allowed: bool) -> Self {
        if !allowed {
            self.typed = None;
        }
        self
    }

    /// Number of columns of the rows it emits.
    pub fn output_arity(keys: usize, calls: &[AggregateCall]) -> usize {
        keys + calls.iter().map(Accumulator::partial_width).sum::<usize>() + DistinctArgs::of(calls).len() + 1
    }

    /// Adds `chunk` to the typed bundle, flushing whenever the trigger says so.
    fn process_typed(&mut self, chunk: &Chunk, ctx: &OperatorContext, out: &mut Output) -> Result<()> {
        let mut from = 0;
        while from < chunk.len() {
            let room = self.meter.room(chunk.len() - from);
            let typed = self.typed.as_mut().ok_or_else(|| unexpected_columns("LocalGroupAggregate"))?;
            typed.add(chunk, from, room).ok_or_else(|| unexpected_columns("LocalGroupAggregate"))?;
            from += room;
            if self.meter.add(room, typed.bytes()) {
                self.flush(ctx, out)?;
            }
        }
        Ok(())
    }
}

impl Bundled for LocalGroupAggregateOperator {
    /// Emits one row of partials per group of the bundle.
    fn flush(&mut self, ctx: &OperatorContext, out: &mut Output) -> Result<()> {
        if let Some(typed) = &mut self.typed {
            if typed.is_empty() {
                return Ok(());
            }
            let groups = typed.len();
            let mut emitted = typed.flush();
            self.meter.flushed(groups, ctx, &mut emitted);
            out.collect(emitted);
            return Ok(());
        }
        if self.bundle.is_empty() {
            return Ok(());
        }
        let arity = Self::output_arity(self.keys.len(), &self.calls);
        let mut emitted = Chunk::with_capacity(arity, self.bundle.len());
        let groups = self.bundle.len();
        for (key, group) in self.bundle.drain() {
            emitted.push_with(RowKind::Insert, |values| {
                values.extend_from_slice(&key);
                group.accumulators.iter().for_each(|a| a.partial(values));
                values.extend(group.distinct.iter().map(DistinctValues::to_partial));
                values.push(Value::BigInt(group.rows));
            });
        }
        self.meter.flushed(groups, ctx, &mut emitted);
        out.collect(emitted);
        Ok(())
    }
}

impl Operator for LocalGroupAggregateOperator {
    fn name(&self) -> &str {
        "LocalGroupAggregate"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        self.meter.arriving(&chunk);
        if self.typed.is_some() {
            return self.process_typed(&chunk, ctx, out);
        }
        for (kind, row) in chunk.rows() {
            self.key.clear();
            self.key.extend(self.keys.iter().map(|&k| row[k].clone()));
            let Self { calls, arg_types, retracting, bundle, key, distinct, .. } = self;
            let group = bundle.entry_ref(&key[..]).or_insert_with(|| LocalGroup {
                rows: 0,
                accumulators: Accumulator::for_calls(calls, arg_types, *retracting),
                distinct: distinct.empty_sets(),
            });
            let sign = if kind.is_accumulate() { 1 } else { -1 };
            group.rows += sign;
            // A DISTINCT call sees a value's first arrival and last departure in the bundle.
            let changes = distinct.count_row(&mut group.distinct, row, sign);
            for (i, (call, acc)) in calls.iter().zip(group.accumulators.iter_mut()).enumerate() {
                if call.filter.is_some_and(|f| row[f] != Value::Boolean(true)) {
                    continue;
                }
                let x = call.arg.map_or(&Value::Null, |a| &row[a]);
                let change = distinct.slot(i).map_or(sign, |slot| changes[slot.flat]);
                if change != 0 {
                    acc.update(call, x, change)?;
                }
            }
            let bytes = self.bundle.len() * (self.calls.len() + self.keys.len() + 2) * 48;
            if self.meter.add(1, bytes) {
                self.flush(ctx, out)?;
            }
        }
        Ok(())
    }

    fn process_flush_marker(&mut self, marker: i64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush_on_marker(marker, ctx, out)
    }

    /// The bundle goes out before a checkpoint's barrier: a checkpoint holds no bundle.
    fn prepare_snapshot_pre_barrier(&mut self, _: u64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush(ctx, out)
    }

    fn process_watermark(&mut self, watermark: i64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush_on_watermark(watermark, ctx, out)
    }

    fn end_of_input(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush_at_end(ctx, out)
    }
}
