//! The values behind DISTINCT aggregate calls: per group and argument column, each value
//! present with its multiplicity, so that only a value's first arrival and last departure
//! reach the call's accumulator.
//!
//! In a two-phase aggregation the calls on one argument column share one set, which the local
//! phase emits as a `MAP<value, BIGINT>` column (`DISTINCT(b) AS distinct$0` in Flink's plans)
//! and the global phase merges into the group's own.

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

/// Which argument columns the DISTINCT calls of an aggregate share a set of values on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DistinctArgs {
    /// The argument columns, in the order their first DISTINCT call comes.
    columns: Vec<usize>,
    /// For each call, the index of its set (`None` for calls without DISTINCT).
    slots: Vec<Option<usize>>,
}

impl DistinctArgs {
    /// The sets of `calls`' DISTINCT calls (one per argument column).
    pub fn of(calls: &[AggregateCall]) -> Self {
        let mut columns: Vec<usize> = Vec::new();
        let slots = calls
            .iter()
            .map(|c| {
                let arg = c.arg.filter(|_| c.distinct)?;
                Some(columns.iter().position(|&a| a == arg).unwrap_or_else(|| {
                    columns.push(arg);
                    columns.len() - 1
                }))
            })
            .collect();
        DistinctArgs { columns, slots }
    }

    /// The argument column of each set.
    pub fn columns(&self) -> &[usize] {
        &self.columns
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
