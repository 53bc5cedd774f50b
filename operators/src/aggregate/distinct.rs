//! The values behind DISTINCT aggregate calls: per group and argument column, each value
//! present with how many rows brought it under each of the column's filters, so that only a
//! value's first arrival and last departure reach a call's accumulator.
//!
//! The DISTINCT calls on one argument column share one set, as Flink's `DistinctAggregate`
//! map view is shared: a value is hashed once per row, whatever the number of calls. A set
//! counts each value once per distinct `FILTER` of its calls (no filter counting every row): a
//! value counts for `COUNT(DISTINCT b) FILTER (WHERE f)` once a row where `f` holds brings it,
//! whatever rows where `f` does not hold brought it before. In a two-phase aggregation the local
//! phase emits each set as one column (`DISTINCT(b) AS distinct$0` in Flink's plans: the values
//! and their counts) and the global phase adds it to the group's own.

use std::sync::Arc;

use hashbrown::HashMap;
use smallvec::SmallVec;
use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::types::LogicalType;
use weir_runtime::{DataType, Field, Value};

use super::{AccumulateError, Accumulator, AggregateCall};

/// The distinct values of one argument column, each with one count per filter of its set: how
/// many rows the filter kept brought the value. A value is present while any count is above
/// zero. NULLs are never held.
#[derive(Debug, Clone)]
pub struct DistinctValues {
    /// Each value's slot: its counts are `counts[slot * width..][..width]`.
    slots: HashMap<Value, u32>,
    /// The counts of every slot, `width` per slot.
    counts: Vec<i64>,
    /// Slots of values that left, reused first.
    free: Vec<u32>,
    /// Counts per value: the number of filters of the set.
    width: usize,
}

impl DistinctValues {
    /// An empty set counting each value under `width` filters (at least one).
    pub fn new(width: usize) -> Self {
        DistinctValues { slots: HashMap::new(), counts: Vec::new(), free: Vec::new(), width: width.max(1) }
    }

    /// Number of filters each value is counted under.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of values present.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether no value is present.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The counts of `x` (`None` when it is absent).
    pub fn get(&self, x: &Value) -> Option<&[i64]> {
        let slot = *self.slots.get(x)? as usize;
        Some(&self.counts[slot * self.width..][..self.width])
    }

    /// Each value present with its counts, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&Value, &[i64])> {
        self.slots.iter().map(|(x, &slot)| (x, &self.counts[slot as usize * self.width..][..self.width]))
    }

    /// Adds `deltas[j]` to the count of `x` under filter `j` and writes into `changes[j]` how
    /// the value's presence for that filter changed: 1 where it arrived (its count rose from
    /// zero), -1 where it left (fell to zero), 0 otherwise. Returns whether any presence changed.
    /// NULL changes nothing. `deltas` and `changes` hold [`DistinctValues::width`] entries.
    pub fn add(&mut self, x: &Value, deltas: &[i64], changes: &mut [i64]) -> bool {
        changes.fill(0);
        if x.is_null() || deltas.iter().all(|&d| d == 0) {
            return false;
        }
        let width = self.width;
        let slot = match self.slots.get(x) {
            Some(&slot) => slot as usize,
            None => {
                let slot = match self.free.pop() {
                    Some(slot) => slot as usize,
                    None => {
                        self.counts.resize(self.counts.len() + width, 0);
                        self.counts.len() / width - 1
                    }
                };
                self.slots.insert(x.clone(), slot as u32);
                slot
            }
        };
        let counts = &mut self.counts[slot * width..][..width];
        let mut changed = false;
        for ((n, &delta), change) in counts.iter_mut().zip(deltas).zip(changes.iter_mut()) {
            let before = *n > 0;
            *n += delta;
            let after = *n > 0;
            *change = i64::from(after) - i64::from(before);
            changed |= before != after;
        }
        if counts.iter().all(|&n| n == 0) {
            self.slots.remove(x);
            self.free.push(slot as u32);
        }
        changed
    }

    /// The type of a set of `value`s as a local phase emits it ([`DistinctValues::to_partial`]):
    /// `ROW<values ARRAY<value>, counts ARRAY<BIGINT>>`, a count per value and filter.
    pub fn partial_type(value: DataType) -> DataType {
        let array = |t: DataType| DataType::new(LogicalType::Array(Box::new(t))).not_null();
        DataType::new(LogicalType::Row(vec![
            Field::new("values", array(value)),
            Field::new("counts", array(DataType::bigint().not_null())),
        ]))
        .not_null()
    }

    /// The set as a local phase emits it ([`DistinctValues::partial_type`]): a ROW of the values
    /// and their counts, `width` per value in the values' order. Two allocations, whatever the
    /// number of values.
    pub fn to_partial(&self) -> Value {
        let mut values = Vec::with_capacity(self.len());
        let mut counts = Vec::with_capacity(self.len() * self.width);
        for (x, c) in self.iter() {
            values.push(x.clone());
            counts.extend(c.iter().map(|&n| Value::BigInt(n)));
        }
        Value::Row(Arc::from([Value::Array(values.into()), Value::Array(counts.into())]))
    }

    /// Adds the values of a partial [`DistinctValues::to_partial`] wrote (of this set's width),
    /// calling `changed` with each value whose presence changed for some filter and the changes
    /// (as [`DistinctValues::add`] writes them).
    ///
    /// # Errors
    /// What `changed` returns.
    pub fn add_partial<E>(
        &mut self,
        partial: &Value,
        mut changed: impl FnMut(&Value, &[i64]) -> Result<(), E>,
    ) -> Result<(), E> {
        let Value::Row(parts) = partial else { return Ok(()) };
        let (Some(Value::Array(values)), Some(Value::Array(counts))) = (parts.first(), parts.get(1)) else {
            return Ok(());
        };
        let (mut deltas, mut changes) = (counts_buffer(self.width), counts_buffer(self.width));
        for (x, c) in values.iter().zip(counts.chunks_exact(self.width)) {
            deltas.iter_mut().zip(c).for_each(|(d, n)| *d = n.as_i64().unwrap_or(0));
            if self.add(x, &deltas, &mut changes) {
                changed(x, &changes)?;
            }
        }
        Ok(())
    }

    /// Writes the set: its width, its values and their counts.
    pub fn encode(&self, out: &mut Encoder) {
        out.u32(self.width as u32);
        out.u32(self.len() as u32);
        for (x, counts) in self.iter() {
            out.value(x);
            counts.iter().for_each(|&n| out.i64(n));
        }
    }

    /// Reads what [`DistinctValues::encode`] wrote.
    ///
    /// # Errors
    /// Damaged input.
    pub fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let width = input.u32()? as usize;
        if width == 0 {
            return input.fail("a set of distinct values counting under at least one filter");
        }
        let mut values = DistinctValues::new(width);
        let (mut deltas, mut changes) = (counts_buffer(width), counts_buffer(width));
        for _ in 0..input.u32()? {
            let x = input.value()?;
            for d in deltas.iter_mut() {
                *d = input.i64()?;
            }
            values.add(&x, &deltas, &mut changes);
        }
        Ok(values)
    }
}

/// Equal sets: the same values with the same counts, wherever their slots are.
impl PartialEq for DistinctValues {
    fn eq(&self, other: &Self) -> bool {
        self.width == other.width && self.len() == other.len() && self.iter().all(|(x, c)| other.get(x) == Some(c))
    }
}

impl Eq for DistinctValues {}

/// Room for one count per filter of a set of `width`.
pub fn counts_buffer(width: usize) -> SmallVec<[i64; 4]> {
    smallvec::smallvec![0; width]
}

/// Where a DISTINCT call reads its values: its set (argument column) and the index of its
/// filter among the set's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DistinctSlot {
    /// The set: one per argument column.
    pub set: usize,
    /// The call's filter among the set's filters.
    pub filter: usize,
    /// The position of this (set, filter) among all of them, set after set: where
    /// [`DistinctArgs::count_row`] writes its change.
    pub flat: usize,
}

/// Which sets of values the DISTINCT calls of an aggregate share: one per argument column,
/// counting each value under every distinct `FILTER` of that column's calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DistinctArgs {
    /// The argument column of each set, in the order their first DISTINCT call comes.
    columns: Vec<usize>,
    /// The filter columns of each set (`None`: every row), in the order their first call comes.
    filters: Vec<Vec<Option<usize>>>,
    /// For each call, where it reads its values (`None` for calls without DISTINCT).
    slots: Vec<Option<DistinctSlot>>,
}

impl DistinctArgs {
    /// The sets of `calls`' DISTINCT calls (one per argument column).
    pub fn of(calls: &[AggregateCall]) -> Self {
        let mut args = DistinctArgs::default();
        let places: Vec<Option<(usize, usize)>> = calls
            .iter()
            .map(|c| {
                let arg = c.arg.filter(|_| c.distinct)?;
                let set = args.columns.iter().position(|&a| a == arg).unwrap_or_else(|| {
                    args.columns.push(arg);
                    args.filters.push(Vec::new());
                    args.columns.len() - 1
                });
                let filters = &mut args.filters[set];
                let filter = filters.iter().position(|&f| f == c.filter).unwrap_or_else(|| {
                    filters.push(c.filter);
                    filters.len() - 1
                });
                Some((set, filter))
            })
            .collect();
        let offsets: Vec<usize> = args
            .filters
            .iter()
            .scan(0, |at, f| {
                let offset = *at;
                *at += f.len();
                Some(offset)
            })
            .collect();
        args.slots = places
            .into_iter()
            .map(|p| p.map(|(set, filter)| DistinctSlot { set, filter, flat: offsets[set] + filter }))
            .collect();
        args
    }

    /// The argument column of each set.
    pub fn columns(&self) -> &[usize] {
        &self.columns
    }

    /// The filter columns of set `set` (`None`: every row).
    pub fn filters(&self, set: usize) -> &[Option<usize>] {
        &self.filters[set]
    }

    /// How each set's values change with `row` added `sign` times (1 or -1), one entry per
    /// [`DistinctSlot::flat`]: 1 where the row's value arrived for that filter, -1 where it left,
    /// 0 where nothing changed or the filter does not keep the row. One hash lookup per set.
    pub fn count_row(&self, sets: &mut [DistinctValues], row: &[Value], sign: i64) -> SmallVec<[i64; 8]> {
        let mut changes: SmallVec<[i64; 8]> = SmallVec::new();
        if self.columns.is_empty() {
            return changes;
        }
        let mut deltas = SmallVec::<[i64; 4]>::new();
        for ((&column, filters), values) in self.columns.iter().zip(&self.filters).zip(sets.iter_mut()) {
            deltas.clear();
            deltas.extend(
                filters.iter().map(|f| if f.is_none_or(|f| row[f] == Value::Boolean(true)) { sign } else { 0 }),
            );
            let at = changes.len();
            changes.resize(at + filters.len(), 0);
            values.add(&row[column], &deltas, &mut changes[at..]);
        }
        changes
    }

    /// Number of sets.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Whether no call is DISTINCT.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Where call `call` takes its values from, if it is DISTINCT.
    pub fn slot(&self, call: usize) -> Option<DistinctSlot> {
        self.slots[call]
    }

    /// Updates the accumulators of the `calls` reading set `set` with value `x`, whose
    /// presence changed under their filters as `changes` says ([`DistinctValues::add`]).
    ///
    /// # Errors
    /// What an aggregate function refuses ([`Accumulator::update`]).
    pub fn update_calls(
        &self,
        calls: &[AggregateCall],
        accumulators: &mut [Accumulator],
        set: usize,
        x: &Value,
        changes: &[i64],
    ) -> Result<(), AccumulateError> {
        for (i, (call, acc)) in calls.iter().zip(accumulators.iter_mut()).enumerate() {
            let Some(slot) = self.slot(i).filter(|s| s.set == set) else { continue };
            if changes[slot.filter] != 0 {
                acc.update(call, x, changes[slot.filter])?;
            }
        }
        Ok(())
    }

    /// Empty sets for one group.
    pub fn empty_sets(&self) -> Vec<DistinctValues> {
        self.filters.iter().map(|f| DistinctValues::new(f.len())).collect()
    }

    /// Whether `sets` (restored from a checkpoint) have the shape of these sets.
    pub fn fits(&self, sets: &[DistinctValues]) -> bool {
        sets.len() == self.filters.len() && sets.iter().zip(&self.filters).all(|(s, f)| s.width() == f.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::AggregateKind;
    use rand::{Rng, SeedableRng};

    fn add_one(values: &mut DistinctValues, x: &Value, delta: i64) -> i64 {
        let mut change = [0];
        values.add(x, &[delta], &mut change);
        change[0]
    }

    #[test]
    fn only_first_arrivals_and_last_departures_count() {
        let mut values = DistinctValues::new(1);
        let x = Value::Int(3);
        assert_eq!(add_one(&mut values, &x, 1), 1);
        assert_eq!(add_one(&mut values, &x, 1), 0);
        assert_eq!(add_one(&mut values, &x, -1), 0);
        assert_eq!(add_one(&mut values, &x, -1), -1);
        assert!(values.is_empty());
        assert_eq!(add_one(&mut values, &Value::Null, 1), 0);
        assert!(values.is_empty());
        assert_eq!(add_one(&mut values, &x, 3), 1);
        assert_eq!(add_one(&mut values, &x, -3), -1);
        // A departure before its arrival (a retraction of an earlier bundle's row) is held.
        assert_eq!(add_one(&mut values, &x, -1), 0);
        assert_eq!(values.get(&x), Some(&[-1][..]));
        assert_eq!(add_one(&mut values, &x, 1), 0);
        assert!(values.is_empty());
    }

    #[test]
    fn calls_on_one_column_share_a_set_whatever_their_filters() {
        let filtered = |arg, filter| AggregateCall {
            filter: Some(filter),
            ..AggregateCall::new(AggregateKind::Count, Some(arg), DataType::bigint()).distinct()
        };
        let calls = [
            AggregateCall::new(AggregateKind::CountStar, None, DataType::bigint()),
            AggregateCall::new(AggregateKind::Count, Some(1), DataType::bigint()).distinct(),
            AggregateCall::new(AggregateKind::Sum, Some(2), DataType::bigint()).distinct(),
            filtered(1, 5),
            AggregateCall::new(AggregateKind::Sum, Some(1), DataType::bigint()),
            filtered(2, 5),
            filtered(1, 6),
            AggregateCall::new(AggregateKind::Sum, Some(1), DataType::bigint()).distinct(),
        ];
        let args = DistinctArgs::of(&calls);
        assert_eq!(args.columns(), &[1, 2]);
        assert_eq!((args.filters(0), args.filters(1)), (&[None, Some(5), Some(6)][..], &[None, Some(5)][..]));
        let place = |c: usize| args.slot(c).map(|s| (s.set, s.filter, s.flat));
        assert_eq!(
            (0..calls.len()).map(place).collect::<Vec<_>>(),
            [
                None,
                Some((0, 0, 0)),
                Some((1, 0, 3)),
                Some((0, 1, 1)),
                None,
                Some((1, 1, 4)),
                Some((0, 2, 2)),
                Some((0, 0, 0))
            ]
        );
        let sets = args.empty_sets();
        assert_eq!(sets.iter().map(DistinctValues::width).collect::<Vec<_>>(), [3, 2]);
        assert!(args.fits(&sets));
        assert!(!args.fits(&[DistinctValues::new(3), DistinctValues::new(1)]));
    }

    /// A filtered DISTINCT call counts the values of the rows its filter keeps: a value first
    /// seen where the filter fails still counts when a kept row brings it.
    #[test]
    fn a_filter_counts_the_values_of_the_rows_it_keeps() {
        let calls = [
            AggregateCall::new(AggregateKind::Count, Some(0), DataType::bigint()).distinct(),
            AggregateCall { filter: Some(1), ..AggregateCall::new(AggregateKind::Count, Some(0), DataType::bigint()) }
                .distinct(),
        ];
        let args = DistinctArgs::of(&calls);
        let mut sets = args.empty_sets();
        let row = |u: i32, f: bool| [Value::Int(u), Value::Boolean(f)];
        assert_eq!(args.count_row(&mut sets, &row(1, false), 1).as_slice(), [1, 0]);
        assert_eq!(args.count_row(&mut sets, &row(1, true), 1).as_slice(), [0, 1]);
        assert_eq!(args.count_row(&mut sets, &row(1, true), -1).as_slice(), [0, -1]);
        assert_eq!(args.count_row(&mut sets, &[Value::Null, Value::Boolean(true)], 1).as_slice(), [0, 0]);
        assert_eq!(sets[0].get(&Value::Int(1)), Some(&[1, 0][..]));
    }

    /// Random additions and retractions under three filters against one count map per filter,
    /// then the set through a MAP (as a local phase sends it) and through a checkpoint.
    #[test]
    fn counts_per_filter_agree_with_a_map_per_filter() {
        let mut random = rand::rngs::SmallRng::seed_from_u64(5);
        for width in [1, 3] {
            let mut values = DistinctValues::new(width);
            let mut expected: Vec<HashMap<Value, i64>> = vec![HashMap::new(); width];
            let (mut deltas, mut changes) = (counts_buffer(width), counts_buffer(width));
            for _ in 0..5_000 {
                let x =
                    if random.random_ratio(1, 20) { Value::Null } else { Value::BigInt(random.random_range(0..40)) };
                deltas.iter_mut().for_each(|d| *d = random.random_range(-2..=3));
                let changed = values.add(&x, &deltas, &mut changes);
                for (j, map) in expected.iter_mut().enumerate() {
                    let before = map.get(&x).copied().unwrap_or(0);
                    let after = if x.is_null() { before } else { before + deltas[j] };
                    if !x.is_null() {
                        map.insert(x.clone(), after);
                    }
                    assert_eq!(changes[j], i64::from(after > 0) - i64::from(before > 0), "{x:?} {deltas:?}");
                }
                assert_eq!(changed, changes.iter().any(|&c| c != 0));
            }
            let check = |values: &DistinctValues| {
                let held = expected.iter().flat_map(|m| m.iter().filter(|(_, &n)| n != 0).map(|(x, _)| x));
                let mut held: Vec<&Value> = held.collect();
                held.sort();
                held.dedup();
                assert_eq!(values.len(), held.len());
                for x in held {
                    let counts: Vec<i64> = expected.iter().map(|m| m.get(x).copied().unwrap_or(0)).collect();
                    assert_eq!(values.get(x), Some(&counts[..]));
                }
            };
            check(&values);
            let mut merged = DistinctValues::new(width);
            merged.add_partial(&values.to_partial(), |_, _| Ok::<_, ()>(())).expect("adds");
            check(&merged);
            let mut out = Encoder::new();
            values.encode(&mut out);
            let bytes = out.into_bytes();
            check(&DistinctValues::decode(&mut Decoder::new(&bytes)).expect("decodes"));
        }
    }

    /// Sets compare by their values and counts, not by where their slots are.
    #[test]
    fn equal_sets_compare_equal_whatever_their_slots() {
        let (mut a, mut b) = (DistinctValues::new(1), DistinctValues::new(1));
        let mut change = [0];
        a.add(&Value::Int(1), &[1], &mut change);
        a.add(&Value::Int(2), &[1], &mut change);
        b.add(&Value::Int(2), &[1], &mut change);
        b.add(&Value::Int(1), &[1], &mut change);
        assert_eq!(a, b);
        b.add(&Value::Int(1), &[1], &mut change);
        assert_ne!(a, b);
    }

    #[test]
    fn merged_partials_sum_counts() {
        let mut local = DistinctValues::new(2);
        let mut changes = [0, 0];
        local.add(&Value::Int(1), &[2, 0], &mut changes);
        local.add(&Value::Int(2), &[1, 1], &mut changes);
        let mut global = DistinctValues::new(2);
        let mut arrived = Vec::new();
        let mut note = |x: &Value, changes: &[i64]| {
            arrived.push((x.clone(), changes.to_vec()));
            Ok::<_, ()>(())
        };
        global.add_partial(&local.to_partial(), &mut note).expect("adds");
        global.add_partial(&local.to_partial(), &mut note).expect("adds");
        assert_eq!(global.get(&Value::Int(1)), Some(&[4, 0][..]));
        assert_eq!(global.get(&Value::Int(2)), Some(&[2, 2][..]));
        arrived.sort();
        assert_eq!(arrived, [(Value::Int(1), vec![1, 0]), (Value::Int(2), vec![1, 1])]);
    }
}
