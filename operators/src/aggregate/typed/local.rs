//! The local phase's typed bundle: partial accumulators per group until a flush, emitted as
//! `+I[key, partials…, rows]` a column at a time.

use arrow_array::ArrayRef;
use arrow_schema::DataType as ArrowType;
use weir_runtime::columnar::arrow_type;
use weir_runtime::{Chunk, DataType, RowKind};

use super::groups::argument_columns;
use super::{word_column, GroupKeys, KeyTable, Slab, TypedCalls};
use crate::aggregate::AggregateCall;

/// A local aggregate's bundle held typed (see the module docs for what it covers).
#[derive(Debug)]
pub struct TypedLocalGroups {
    key_columns: Vec<usize>,
    keys: GroupKeys,
    calls: TypedCalls,
    table: KeyTable,
    slab: Slab,
}

impl TypedLocalGroups {
    /// A bundle keyed by input columns `keys` computing `calls` (which [`TypedCalls::supports`]);
    /// `None` when the key types cannot be encoded.
    pub fn new(keys: &[usize], calls: &[AggregateCall], input_types: &[DataType]) -> Option<Self> {
        let key_types = keys.iter().map(|&k| arrow_type(&input_types[k])).collect();
        Some(TypedLocalGroups {
            key_columns: keys.to_vec(),
            keys: GroupKeys::for_arrow_types(key_types)?,
            calls: TypedCalls::new(calls)?,
            table: KeyTable::default(),
            slab: Slab::new(calls.len()),
        })
    }

    /// Number of groups in the bundle.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the bundle is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the bundle's state takes, about.
    pub fn bytes(&self) -> usize {
        self.len() * (3 * self.calls.len() + 4) * 8
    }

    /// Adds rows `from..from + count` of `chunk` to the bundle; `None` when a column is not of
    /// an integer type.
    pub fn add(&mut self, chunk: &Chunk, from: usize, count: usize) -> Option<()> {
        let columns = chunk.columns();
        let key_arrays: Vec<ArrayRef> = self.key_columns.iter().map(|&k| columns.compacted(k)).collect();
        let keys = self.keys.read(&self.keys.columns(&key_arrays)?)?;
        let args = argument_columns(&self.calls, |a| columns.compacted(a))?;
        let Self { calls, table, slab, .. } = self;
        // The keys' ids first, in a loop of independent probes the processor overlaps; the
        // bundle only grows, so a key not found then is probed again when it comes.
        let found: Vec<Option<u32>> = (from..from + count).map(|i| keys.get(table, i)).collect();
        for i in from..from + count {
            let id = match found[i - from].or_else(|| keys.get(table, i)) {
                Some(id) => id,
                None => keys.insert(table, i, || slab.grow()),
            };
            let sign = if chunk.kind(i).is_accumulate() { 1 } else { -1 };
            let mut group = slab.group(id);
            *group.rows() += sign;
            for (c, (call, columns)) in calls.iter().zip(&args).enumerate() {
                if let Some(x) = columns.counted(i) {
                    group.update(c, call, x, sign);
                }
            }
        }
        Some(())
    }

    /// The bundle as `+I[key, partials…, rows]` rows, one per group in the order they came;
    /// the bundle is empty afterwards.
    pub fn flush(&mut self) -> Chunk {
        let groups = self.table.len();
        let mut arrays: Vec<ArrayRef> = self.keys.arrays(&self.table, 0..groups as u32);
        let mut rows = Vec::with_capacity(groups);
        // Per call its partial values and, for a sum, how many values each holds.
        let mut partials: Vec<(Vec<Option<i64>>, Option<Vec<Option<i64>>>)> = self
            .calls
            .iter()
            .map(|c| (Vec::with_capacity(groups), c.has_count().then(|| Vec::with_capacity(groups))))
            .collect();
        for id in 0..groups as u32 {
            let mut group = self.slab.group(id);
            rows.push(Some(*group.rows()));
            for (c, call) in self.calls.iter().enumerate() {
                let (value, count) = group.partial(c, call);
                partials[c].0.push(value);
                if let Some(counts) = &mut partials[c].1 {
                    counts.push(Some(count));
                }
            }
        }
        for (call, (values, counts)) in self.calls.iter().zip(&partials) {
            arrays.push(word_column(&call.partial_type(), values));
            if let Some(counts) = counts {
                arrays.push(word_column(&ArrowType::Int64, counts));
            }
        }
        arrays.push(word_column(&ArrowType::Int64, &rows));
        self.table.clear();
        self.slab.clear();
        Chunk::from_arrays(vec![RowKind::Insert; groups], arrays)
    }
}
