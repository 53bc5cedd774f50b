//! The values behind DISTINCT aggregate calls: per group and argument column, each value
//! present with its multiplicity, so that only a value's first arrival and last departure
//! reach the call's accumulator.
//!
//! The calls on one argument column with the same `FILTER` share one set, which holds the
//! values of the rows the filter keeps: a value counts for `COUNT(DISTINCT b) FILTER (WHERE f)`
//! once a row where `f` holds brings it, whatever rows where `f` does not hold brought it
//! before. In a two-phase aggregation the local phase emits each set as a `MAP<value, BIGINT>`
//! column (`DISTINCT(b) AS distinct$0` in Flink's plans) and the global phase merges it into the
//! group's own.

use hashbrown::HashMap;
use weir_runtime::Value;

use super::AggregateCall;

/// Each distinct value of one argument with how often it is present.
pub type DistinctValues = HashMap<Value, i64>;

/// Adds `delta` to the multiplicity of `x`: `Some(1)` when `x` arrived (was absent, is now
/// present), `Some(-1)` when it left, `None` when its presence did not change. NULLs are never
/// counted (`None`).
pub fn count_value(values: &mut DistinctValues, x: &Value, delta: i64) -> Option<i64> {
    if x.is_null() || delta == 0 {
        return None;
    }
    let n = values.entry(x.clone()).or_insert(0);
    let before = *n;
    *n += delta;
    let after = *n;
    if after == 0 {
        values.remove(x);
    }
    match (before > 0, after > 0) {
        (false, true) => Some(1),
        (true, false) => Some(-1),
        _ => None,
    }
}

/// Which sets of values the DISTINCT calls of an aggregate share: one per argument column and
/// `FILTER` column.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DistinctArgs {
    /// The argument column of each set, in the order their first DISTINCT call comes.
    columns: Vec<usize>,
    /// The filter column of each set (`None`: every row).
    filters: Vec<Option<usize>>,
    /// For each call, the index of its set (`None` for calls without DISTINCT).
    slots: Vec<Option<usize>>,
}

impl DistinctArgs {
    /// The sets of `calls`' DISTINCT calls (one per argument column and filter).
    pub fn of(calls: &[AggregateCall]) -> Self {
        let (mut columns, mut filters): (Vec<usize>, Vec<Option<usize>>) = (Vec::new(), Vec::new());
        let slots = calls
            .iter()
            .map(|c| {
                let arg = c.arg.filter(|_| c.distinct)?;
                let same = (0..columns.len()).find(|&s| columns[s] == arg && filters[s] == c.filter);
                Some(same.unwrap_or_else(|| {
                    columns.push(arg);
                    filters.push(c.filter);
                    columns.len() - 1
                }))
            })
            .collect();
        DistinctArgs { columns, filters, slots }
    }

    /// The argument column of each set.
    pub fn columns(&self) -> &[usize] {
        &self.columns
    }

    /// The filter column of each set (`None`: the set takes every row).
    pub fn filters(&self) -> &[Option<usize>] {
        &self.filters
    }

    /// How each set's values change with `row` added `sign` times (1 or -1): `Some(1)` where the
    /// row's value arrived, `Some(-1)` where it left, `None` where nothing changed or the set's
    /// filter does not keep the row.
    pub fn count_row(
        &self,
        sets: &mut [DistinctValues],
        row: &[Value],
        sign: i64,
    ) -> smallvec::SmallVec<[Option<i64>; 2]> {
        self.columns
            .iter()
            .zip(&self.filters)
            .zip(sets.iter_mut())
            .map(|((&column, filter), values)| {
                let kept = filter.is_none_or(|f| row[f] == Value::Boolean(true));
                if kept {
                    count_value(values, &row[column], sign)
                } else {
                    None
                }
            })
            .collect()
    }

    /// Number of sets.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Whether no call is DISTINCT.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// The set call `call` takes its values from, if it is DISTINCT.
    pub fn slot(&self, call: usize) -> Option<usize> {
        self.slots[call]
    }

    /// Empty sets for one group.
    pub fn empty_sets(&self) -> Vec<DistinctValues> {
        self.columns.iter().map(|_| DistinctValues::new()).collect()
    }
}

/// A set of distinct values as the local phase emits it: `MAP<value, multiplicity>`.
pub fn to_map_value(values: &DistinctValues) -> Value {
    Value::Map(values.iter().map(|(v, n)| (v.clone(), Value::BigInt(*n))).collect())
}

/// Merges a local phase's `MAP<value, multiplicity>` into `into`, summing multiplicities.
pub fn merge_map_value(into: &mut DistinctValues, map: &Value) {
    if let Value::Map(entries) = map {
        for (v, n) in entries.iter() {
            let delta = n.as_i64().unwrap_or(0);
            let total = into.entry(v.clone()).or_insert(0);
            *total += delta;
            if *total == 0 {
                into.remove(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::AggregateKind;
    use weir_runtime::DataType;

    #[test]
    fn only_first_arrivals_and_last_departures_count() {
        let mut values = DistinctValues::new();
        let x = Value::Int(3);
        assert_eq!(count_value(&mut values, &x, 1), Some(1));
        assert_eq!(count_value(&mut values, &x, 1), None);
        assert_eq!(count_value(&mut values, &x, -1), None);
        assert_eq!(count_value(&mut values, &x, -1), Some(-1));
        assert!(values.is_empty());
        assert_eq!(count_value(&mut values, &Value::Null, 1), None);
        assert_eq!(count_value(&mut values, &x, 3), Some(1));
        assert_eq!(count_value(&mut values, &x, -3), Some(-1));
    }

    #[test]
    fn calls_on_one_column_share_a_set() {
        let calls = [
            AggregateCall::new(AggregateKind::CountStar, None, DataType::bigint()),
            AggregateCall::new(AggregateKind::Count, Some(1), DataType::bigint()).distinct(),
            AggregateCall::new(AggregateKind::Sum, Some(2), DataType::bigint()).distinct(),
            AggregateCall::new(AggregateKind::Sum, Some(1), DataType::bigint()).distinct(),
            AggregateCall::new(AggregateKind::Sum, Some(1), DataType::bigint()),
        ];
        let args = DistinctArgs::of(&calls);
        assert_eq!(args.columns(), &[1, 2]);
        assert_eq!((0..5).map(|c| args.slot(c)).collect::<Vec<_>>(), [None, Some(0), Some(1), Some(0), None]);
    }

    /// A filtered DISTINCT call has a set of its own, holding the values of the rows its filter
    /// keeps: a value first seen where the filter fails still counts when a kept row brings it.
    #[test]
    fn a_filtered_call_counts_the_values_of_the_rows_it_keeps() {
        let calls = [
            AggregateCall::new(AggregateKind::Count, Some(0), DataType::bigint()).distinct(),
            AggregateCall { filter: Some(1), ..AggregateCall::new(AggregateKind::Count, Some(0), DataType::bigint()) }
                .distinct(),
        ];
        let args = DistinctArgs::of(&calls);
        assert_eq!((args.columns(), args.filters()), (&[0, 0][..], &[None, Some(1)][..]));
        let mut sets = args.empty_sets();
        let row = |u: i32, f: bool| [Value::Int(u), Value::Boolean(f)];
        assert_eq!(args.count_row(&mut sets, &row(1, false), 1).as_slice(), [Some(1), None]);
        assert_eq!(args.count_row(&mut sets, &row(1, true), 1).as_slice(), [None, Some(1)]);
        assert_eq!(args.count_row(&mut sets, &row(1, true), -1).as_slice(), [None, Some(-1)]);
    }

    #[test]
    fn merged_maps_sum_multiplicities() {
        let mut local = DistinctValues::new();
        count_value(&mut local, &Value::Int(1), 2);
        count_value(&mut local, &Value::Int(2), 1);
        let mut global = DistinctValues::new();
        merge_map_value(&mut global, &to_map_value(&local));
        merge_map_value(&mut global, &to_map_value(&local));
        assert_eq!(global.get(&Value::Int(1)), Some(&4));
        assert_eq!(global.get(&Value::Int(2)), Some(&2));
    }
}
