//! A per-key row count that emits Flink's changelog for an updating aggregate.

use weir_runtime::{Chunk, OperatorContext, Result, RowKind, Value};

use crate::keyed_process::KeyedProcessFunction;

/// Counts rows per key, like `SELECT key, COUNT(*) … GROUP BY key`. Emits `+I[key, 1]` for a
/// new key, then `-U[key, old]` and `+U[key, new]` on every change, and `-D[key, old]` when
/// retractions bring the count to zero (the key's state is then dropped). Input rows of kind
/// `-U` / `-D` count as retractions.
#[derive(Debug, Default, Clone, Copy)]
pub struct CountByKey;

impl KeyedProcessFunction for CountByKey {
    type State = i64;

    fn process(
        &mut self,
        key: &[Value],
        kind: RowKind,
        _row: &[Value],
        state: &mut Option<i64>,
        _ctx: &mut OperatorContext,
        out: &mut Chunk,
    ) -> Result<()> {
        let old = state.unwrap_or(0);
        let new = if kind.is_accumulate() { old + 1 } else { old - 1 };
        let emit = |out: &mut Chunk, kind: RowKind, count: i64| {
            out.push_with(kind, |fields| {
                fields.extend_from_slice(key);
                fields.push(Value::BigInt(count));
            });
        };
        match (old, new) {
            (0, n) if n > 0 => emit(out, RowKind::Insert, n),
            (o, 0) if o > 0 => emit(out, RowKind::Delete, o),
            (o, n) if o > 0 && n > 0 => {
                emit(out, RowKind::UpdateBefore, o);
                emit(out, RowKind::UpdateAfter, n);
            }
            // A retraction of a key never counted: nothing to retract (Flink drops it too).
            _ => {}
        }
        *state = (new > 0).then_some(new);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyed_process::KeyedProcessOperator;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;
    use weir_runtime::fixture::materialize_changelog;
    use weir_runtime::harness::OperatorHarness;

    #[test]
    fn emits_the_changelog_of_a_count() {
        let mut h = OperatorHarness::new(KeyedProcessOperator::new("Count", vec![0], 2, CountByKey));
        h.push("op | k STRING\n+I | a\n+I | b\n+I | a\n-D | b\n-U | x").unwrap();
        assert_eq!(h.take_lines(), ["+I[a, 1]", "+I[b, 1]", "-U[a, 1]", "+U[a, 2]", "-D[b, 1]"]);
    }

    #[test]
    fn matches_a_recount_from_scratch_on_random_input() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        for _ in 0..20 {
            let mut h = OperatorHarness::new(KeyedProcessOperator::new("Count", vec![0], 2, CountByKey));
            let mut live: BTreeMap<i64, i64> = BTreeMap::new();
            let mut output = Vec::new();
            for _ in 0..50 {
                let mut fixture = String::from("op | k BIGINT\n");
                for _ in 0..rng.random_range(1..20) {
                    let k = rng.random_range(0..6);
                    let retract = live.get(&k).is_some_and(|n| *n > 0) && rng.random_bool(0.3);
                    fixture.push_str(&format!("{} | {k}\n", if retract { "-D" } else { "+I" }));
                    *live.entry(k).or_insert(0) += if retract { -1 } else { 1 };
                }
                h.push(&fixture).unwrap();
                output.extend(h.take_lines());
            }
            let expected: BTreeMap<String, i64> =
                live.iter().filter(|(_, n)| **n > 0).map(|(k, n)| (format!("[{k}, {n}]"), 1)).collect();
            assert_eq!(materialize_changelog(&output).unwrap(), expected);
        }
    }
}
