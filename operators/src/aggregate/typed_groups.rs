//! Group state as typed vectors indexed by group id: the columnar form of a group aggregate.
//!
//! One hash table maps a group key to a dense group id; each aggregate call keeps its
//! accumulators and last emitted results in `Vec<i64>`s indexed by that id (DataFusion's
//! `GroupsAccumulator` model), so a row's update touches a few machine words instead of a
//! group entry of values. A chunk is processed row by row in order — Flink's changelog is per
//! record — but keys and arguments are read from typed columns and the output is built a column
//! at a time. Results equal those of [`Accumulator`](super::Accumulator) row by row.
//!
//! Covered ([`TypedGroups::supports`]): one integer or DATE key column; `COUNT(*)`, `COUNT(x)`,
//! `SUM` / `$SUM0` of integers, and `MIN` / `MAX` of integers over insert-only input; no
//! `DISTINCT`, no `FILTER`. Other aggregates keep their state as values.

use std::sync::Arc;

use arrow_array::types::{Int16Type, Int32Type, Int64Type, Int8Type};
use arrow_array::{Array, ArrayRef, PrimitiveArray};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType as ArrowType;
use hashbrown::HashMap;
use weir_runtime::columnar::{arrow_type, wrap_to_bits, IntColumn};
use weir_runtime::{Chunk, DataType, LogicalType, RowKind};

use super::{AggregateCall, AggregateKind};

/// How one call accumulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    CountStar,
    Count,
    Sum { zero_when_empty: bool },
    Min,
    Max,
}

/// One call's state for every group.
#[derive(Debug)]
struct CallState {
    kind: Kind,
    arg: Option<usize>,
    /// Bits of the result type (sums wrap in it, as Flink's do).
    bits: u8,
    result_type: ArrowType,
    /// The sum, count or extreme of each group.
    values: Vec<i64>,
    /// Non-NULL values held (SUM), or whether an extreme was seen (MIN, MAX: 0 or 1).
    counts: Vec<i64>,
    /// The last result emitted for each group; `None` is NULL.
    last: Vec<Option<i64>>,
}

impl CallState {
    fn result(&self, g: usize) -> Option<i64> {
        match self.kind {
            Kind::CountStar | Kind::Count => Some(self.values[g]),
            Kind::Sum { zero_when_empty } if self.counts[g] == 0 => zero_when_empty.then_some(0),
            Kind::Sum { .. } | Kind::Min | Kind::Max => (self.counts[g] > 0).then_some(self.values[g]),
        }
    }

    fn reset(&mut self, g: usize) {
        self.values[g] = 0;
        self.counts[g] = 0;
        self.last[g] = None;
    }
}

/// The typed state of every group of a group aggregate.
#[derive(Debug)]
pub struct TypedGroups {
    key: usize,
    key_type: ArrowType,
    calls: Vec<CallState>,
    ids: HashMap<i64, u32>,
    null_key: Option<u32>,
    /// Rows present in each group (the hidden `COUNT(*)`).
    rows: Vec<i64>,
    /// Ids of groups whose last row left, for reuse.
    free: Vec<u32>,
    update_before: bool,
    emit_unchanged: bool,
}

impl TypedGroups {
    /// Whether groups of `calls` keyed by `keys` over `input_types` can be held typed.
    pub fn supports(keys: &[usize], calls: &[AggregateCall], input_types: &[DataType], retracting: bool) -> bool {
        let [key] = keys else { return false };
        let key_ok = input_types[*key].integer_bits().is_some() || input_types[*key].logical == LogicalType::Date;
        key_ok
            && calls.iter().all(|c| {
                let integer_arg = c.arg.is_some_and(|a| input_types[a].integer_bits().is_some());
                !c.distinct
                    && c.filter.is_none()
                    && match c.kind {
                        AggregateKind::CountStar => true,
                        AggregateKind::Count => c.arg.is_some(),
                        AggregateKind::Sum | AggregateKind::Sum0 => integer_arg && c.result_type.integer_bits().is_some(),
                        AggregateKind::Min | AggregateKind::Max => {
                            !retracting && integer_arg && c.result_type.integer_bits().is_some()
                        }
                        _ => false,
                    }
            })
    }

    /// The state for groups keyed by `key`, computing `calls` (see [`TypedGroups::supports`]).
    pub fn new(
        key: usize,
        calls: &[AggregateCall],
        input_types: &[DataType],
        update_before: bool,
        emit_unchanged: bool,
    ) -> Self {
        let calls = calls
            .iter()
            .map(|c| CallState {
                kind: match c.kind {
                    AggregateKind::CountStar => Kind::CountStar,
                    AggregateKind::Count => Kind::Count,
                    AggregateKind::Sum => Kind::Sum { zero_when_empty: false },
                    AggregateKind::Sum0 => Kind::Sum { zero_when_empty: true },
                    AggregateKind::Min => Kind::Min,
                    _ => Kind::Max,
                },
                arg: c.arg,
                bits: c.result_type.integer_bits().unwrap_or(64),
                result_type: arrow_type(&c.result_type),
                values: Vec::new(),
                counts: Vec::new(),
                last: Vec::new(),
            })
            .collect();
        TypedGroups {
            key,
            key_type: arrow_type(&input_types[key]),
            calls,
            ids: HashMap::new(),
            null_key: None,
            rows: Vec::new(),
            free: Vec::new(),
            update_before,
            emit_unchanged,
        }
    }

    /// Number of groups with state.
    pub fn len(&self) -> usize {
        self.ids.len() + usize::from(self.null_key.is_some())
    }

    /// Whether no group has state.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn allocate(&mut self) -> u32 {
        if let Some(id) = self.free.pop() {
            return id;
        }
        let id = self.rows.len() as u32;
        self.rows.push(0);
        for c in &mut self.calls {
            c.values.push(0);
            c.counts.push(0);
            c.last.push(None);
        }
        id
    }

    /// Applies every row of `chunk` in order and returns Flink's changelog for them; `None`
    /// when a column does not have the type the state was built for.
    pub fn process(&mut self, chunk: &Chunk) -> Option<Chunk> {
        let columns = chunk.columns();
        let mut key_array = columns.compacted(self.key);
        if key_array.data_type() != &self.key_type {
            if key_array.null_count() != key_array.len() {
                return None;
            }
            key_array = arrow_array::new_null_array(&self.key_type, key_array.len());
        }
        let keys = IntColumn::of(key_array.as_ref())?;
        let args: Vec<Option<IntColumn>> = self
            .calls
            .iter()
            .map(|c| c.arg.map(|a| IntColumn::of(columns.compacted(a).as_ref())))
            .map(|a| match a {
                None => Some(None),
                Some(Some(column)) => Some(Some(column)),
                Some(None) => None,
            })
            .collect::<Option<_>>()?;
        let mut out = Emitted::new(self.calls.len(), chunk.len());
        for (i, &kind) in chunk.kinds().iter().enumerate() {
            let accumulate = kind.is_accumulate();
            let key = keys.get(i);
            let existing = match key {
                Some(k) => self.ids.get(&k).copied(),
                None => self.null_key,
            };
            let id = match existing {
                Some(id) => id,
                // Retractions for a group without state are dropped.
                None if !accumulate => continue,
                None => {
                    let id = self.allocate();
                    match key {
                        Some(k) => {
                            self.ids.insert(k, id);
                        }
                        None => self.null_key = Some(id),
                    }
                    id
                }
            };
            let g = id as usize;
            let sign = if accumulate { 1 } else { -1 };
            let first = self.rows[g] == 0;
            self.rows[g] += sign;
            for (c, arg) in self.calls.iter_mut().zip(&args) {
                let x = arg.as_ref().and_then(|a| a.get(i));
                match (c.kind, x) {
                    (Kind::CountStar, _) => c.values[g] += sign,
                    (_, None) => {}
                    (Kind::Count, Some(_)) => c.values[g] += sign,
                    (Kind::Sum { .. }, Some(x)) => {
                        c.values[g] = wrap_to_bits(c.values[g].wrapping_add(sign.wrapping_mul(x)), c.bits);
                        c.counts[g] += sign;
                    }
                    (Kind::Min | Kind::Max, Some(x)) => {
                        let better =
                            c.counts[g] == 0 || if c.kind == Kind::Min { x < c.values[g] } else { x > c.values[g] };
                        if better && sign > 0 {
                            c.values[g] = x;
                            c.counts[g] = 1;
                        }
                    }
                }
            }
            if self.rows[g] <= 0 {
                if !first {
                    out.push(RowKind::Delete, i, self.calls.iter().map(|c| c.last[g]));
                }
                match key {
                    Some(k) => {
                        self.ids.remove(&k);
                    }
                    None => self.null_key = None,
                }
                self.rows[g] = 0;
                self.calls.iter_mut().for_each(|c| c.reset(g));
                self.free.push(id);
                continue;
            }
            let changed = self.calls.iter().any(|c| c.result(g) != c.last[g]);
            if first {
                out.push(RowKind::Insert, i, self.calls.iter().map(|c| c.result(g)));
            } else if changed || self.emit_unchanged {
                if self.update_before {
                    out.push(RowKind::UpdateBefore, i, self.calls.iter().map(|c| c.last[g]));
                }
                out.push(RowKind::UpdateAfter, i, self.calls.iter().map(|c| c.result(g)));
            } else {
                continue;
            }
            for c in &mut self.calls {
                c.last[g] = c.result(g);
            }
        }
        Some(out.finish(&key_array, &self.calls))
    }
}

/// The changelog being built: one entry per emitted row, a column per call.
struct Emitted {
    kinds: Vec<RowKind>,
    /// The input row whose key each emitted row carries.
    sources: Vec<u32>,
    results: Vec<Vec<Option<i64>>>,
}

impl Emitted {
    fn new(calls: usize, rows: usize) -> Self {
        Emitted {
            kinds: Vec::with_capacity(rows),
            sources: Vec::with_capacity(rows),
            results: (0..calls).map(|_| Vec::with_capacity(rows)).collect(),
        }
    }

    fn push(&mut self, kind: RowKind, source: usize, results: impl Iterator<Item = Option<i64>>) {
        self.kinds.push(kind);
        self.sources.push(source as u32);
        for (column, r) in self.results.iter_mut().zip(results) {
            column.push(r);
        }
    }

    fn finish(self, keys: &ArrayRef, calls: &[CallState]) -> Chunk {
        let mut arrays = Vec::with_capacity(calls.len() + 1);
        arrays.push(weir_runtime::chunk::take(keys, &self.sources));
        for (column, call) in self.results.iter().zip(calls) {
            arrays.push(integer_column(&call.result_type, column));
        }
        Chunk::from_arrays(self.kinds, arrays)
    }
}

/// A column of the integer type `ty` holding `values`.
fn integer_column(ty: &ArrowType, values: &[Option<i64>]) -> ArrayRef {
    let nulls = values.iter().any(Option::is_none).then(|| NullBuffer::from_iter(values.iter().map(Option::is_some)));
    macro_rules! build {
        ($t:ty, $native:ty) => {
            Arc::new(PrimitiveArray::<$t>::new(values.iter().map(|v| v.unwrap_or(0) as $native).collect(), nulls))
        };
    }
    match ty {
        ArrowType::Int8 => build!(Int8Type, i8),
        ArrowType::Int16 => build!(Int16Type, i16),
        ArrowType::Int32 => build!(Int32Type, i32),
        _ => build!(Int64Type, i64),
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use weir_runtime::harness::OperatorHarness;
    use weir_runtime::Value;

    use super::*;
    use crate::group_aggregate::GroupAggregateOperator;

    fn calls(retracting: bool) -> Vec<AggregateCall> {
        let mut calls = vec![
            AggregateCall::new(AggregateKind::CountStar, None, DataType::bigint().not_null()),
            AggregateCall::new(AggregateKind::Count, Some(2), DataType::bigint().not_null()),
            AggregateCall::new(AggregateKind::Sum, Some(1), DataType::int()),
            AggregateCall::new(AggregateKind::Sum0, Some(2), DataType::bigint()),
        ];
        if !retracting {
            calls.push(AggregateCall::new(AggregateKind::Max, Some(1), DataType::int()));
            calls.push(AggregateCall::new(AggregateKind::Min, Some(2), DataType::bigint()));
        }
        calls
    }

    fn types() -> Vec<DataType> {
        vec![DataType::int(), DataType::int(), DataType::bigint()]
    }

    /// A random changelog over keys 0..8 and NULL: retractions only of rows still present
    /// (and some of rows never seen), with NULL and extreme arguments.
    fn changelog(rng: &mut SmallRng, rows: usize, retracting: bool) -> Vec<Chunk> {
        let mut present: Vec<[Value; 3]> = Vec::new();
        let mut chunks = Vec::new();
        let mut chunk = Chunk::with_types(&types());
        for _ in 0..rows {
            let retract = retracting && !present.is_empty() && rng.random_range(0..3) == 0;
            if retract {
                let row = present.swap_remove(rng.random_range(0..present.len()));
                let kind = if rng.random() { RowKind::Delete } else { RowKind::UpdateBefore };
                chunk.push(kind, &row);
            } else if retracting && rng.random_range(0..20) == 0 {
                chunk.push(RowKind::Delete, &[Value::Int(99), Value::Int(1), Value::BigInt(1)]);
            } else {
                let key = if rng.random_range(0..9) == 0 { Value::Null } else { Value::Int(rng.random_range(0..8)) };
                let v = match rng.random_range(0..6) {
                    0 => Value::Null,
                    1 => Value::Int(i32::MAX),
                    _ => Value::Int(rng.random_range(-5..5)),
                };
                let w = if rng.random_range(0..5) == 0 { Value::Null } else { Value::BigInt(rng.random_range(-3..3)) };
                let row = [key, v, w];
                let kind = if rng.random() { RowKind::Insert } else { RowKind::UpdateAfter };
                chunk.push(kind, &row);
                present.push(row);
            }
            if rng.random_range(0..7) == 0 {
                chunks.push(std::mem::replace(&mut chunk, Chunk::with_types(&types())));
            }
        }
        chunks.push(chunk);
        chunks
    }

    #[test]
    fn typed_groups_emit_the_changelog_of_groups_held_as_values() {
        let mut rng = SmallRng::seed_from_u64(5);
        for round in 0..200 {
            let retracting = round % 2 == 0;
            let (update_before, emit_unchanged) = (round % 3 != 0, round % 5 == 0);
            let operator = |typed: bool| {
                GroupAggregateOperator::new(vec![0], calls(retracting), &types())
                    .with_retracting_input(retracting)
                    .with_update_before(update_before)
                    .with_emit_unchanged(emit_unchanged)
                    .with_typed_state(typed)
            };
            assert!(TypedGroups::supports(&[0], &calls(retracting), &types(), retracting));
            let (mut typed, mut values) = (OperatorHarness::new(operator(true)), OperatorHarness::new(operator(false)));
            let rows = rng.random_range(0..60);
            for chunk in changelog(&mut rng, rows, retracting) {
                let columnar = chunk.clone();
                columnar.columns();
                typed.push_chunk(0, columnar).unwrap();
                values.push_chunk(0, chunk).unwrap();
                assert_eq!(typed.take_lines(), values.take_lines(), "round {round}");
            }
        }
    }

    #[test]
    fn what_typed_groups_cannot_hold_is_left_to_values() {
        let ints = types();
        let max = AggregateCall::new(AggregateKind::Max, Some(1), DataType::int());
        assert!(!TypedGroups::supports(&[0], std::slice::from_ref(&max), &ints, true));
        assert!(!TypedGroups::supports(&[0, 1], std::slice::from_ref(&max), &ints, false));
        assert!(!TypedGroups::supports(&[0], &[max.clone().distinct()], &ints, false));
        let strings = [DataType::string(), DataType::int()];
        assert!(!TypedGroups::supports(&[0], &[max], &strings, false));
    }
}
