//! ChangelogNormalize: turns an upsert stream (`+U row` for each new value of a key, `-D key`
//! for its removal, as an `upsert-kafka` source reads them) into a full changelog, as Flink's
//! `StreamExecChangelogNormalize` does: the first row of a key goes out as `+I`, a changed row
//! as `-U old` (when the consumer wants update-befores) and `+U new`, a row equal to the kept
//! one as nothing, and a delete as `-D old` (the whole row, though the input's delete may carry
//! only the key); a delete of a key without a row is dropped.
//!
//! State: the last row per key, checkpointed and restored by key, with `table.exec.state.ttl`.

use std::time::Duration;

use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::ValueState;
use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result, RowKind, SubtaskInfo, Value};

use crate::spec::OperatorSpec;

/// The state section of the kept rows.
const ROWS: &str = "changelog-normalize-rows";

/// Everything a [`ChangelogNormalizeOperator`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangelogNormalizeSpec {
    /// The key columns (the table's primary key).
    pub key: Vec<usize>,
    /// The number of input columns.
    pub input_arity: usize,
    /// Whether a replaced row is retracted with `-U` before its `+U`.
    pub update_before: bool,
    /// `table.exec.state.ttl`.
    pub state_ttl: Option<Duration>,
}

impl OperatorSpec for ChangelogNormalizeSpec {
    type Operator = ChangelogNormalizeOperator;

    fn build(&self, _subtask: &SubtaskInfo) -> ChangelogNormalizeOperator {
        ChangelogNormalizeOperator { rows: ValueState::new(ROWS, self.state_ttl), spec: self.clone(), key: Vec::new() }
    }
}

/// Normalization of an upsert stream; see the module documentation.
#[derive(Debug)]
pub struct ChangelogNormalizeOperator {
    spec: ChangelogNormalizeSpec,
    rows: ValueState<Box<[Value]>>,
    /// The key of the row being applied.
    key: Vec<Value>,
}

impl ChangelogNormalizeOperator {
    /// Applies one change, pushing what it makes to `emitted`.
    fn apply(&mut self, kind: RowKind, row: &[Value], now: i64, emitted: &mut Chunk) {
        self.key.clear();
        self.key.extend(self.spec.key.iter().map(|&c| row[c].clone()));
        match kind {
            RowKind::Insert | RowKind::UpdateAfter => match self.rows.get_mut(&self.key, now) {
                None => {
                    emitted.push(RowKind::Insert, row);
                    self.rows.put(&self.key, row.into(), now);
                }
                Some(kept) if kept.as_ref() == row => {}
                Some(kept) => {
                    if self.spec.update_before {
                        emitted.push(RowKind::UpdateBefore, kept);
                    }
                    emitted.push(RowKind::UpdateAfter, row);
                    *kept = row.into();
                }
            },
            RowKind::Delete => {
                if let Some(kept) = self.rows.get(&self.key, now) {
                    emitted.push(RowKind::Delete, kept);
                    self.rows.remove(&self.key);
                }
            }
            // An upsert stream has no update-befores; the `+U` after it says the new row.
            RowKind::UpdateBefore => {}
        }
    }
}

impl Operator for ChangelogNormalizeOperator {
    fn name(&self) -> &str {
        "ChangelogNormalize"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let now = ctx.processing_time();
        let mut emitted = Chunk::with_capacity(self.spec.input_arity, chunk.len());
        for (kind, row) in chunk.rows() {
            self.apply(kind, row, now, &mut emitted);
        }
        out.collect(emitted);
        Ok(())
    }

    fn snapshot_state(&mut self, _: u64, ctx: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        self.rows.snapshot(state, ctx.processing_time());
        Ok(())
    }

    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        let info = ctx.subtask().clone();
        self.rows.restore(states, &info)
    }
}

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for ChangelogNormalizeSpec {
    /// Per key: the last row.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{column_types, row_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        StateSignature::new("ChangelogNormalize", STATE_VERSION).state(
            ROWS,
            StateKind::Value,
            column_types(input, &self.key),
            row_types(input),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;
    use weir_runtime::harness::OperatorHarness;

    fn harness(update_before: bool) -> OperatorHarness {
        let spec = ChangelogNormalizeSpec { key: vec![0], input_arity: 2, update_before, state_ttl: None };
        OperatorHarness::new(spec.build(&SubtaskInfo::new("t", 0, 1)))
    }

    #[test]
    fn upserts_become_a_changelog() {
        let mut h = harness(true);
        h.push("op | k INT | v STRING\n+U | 1 | a\n+U | 1 | a\n+U | 1 | b\n-D | 1 | null\n-D | 2 | null\n+U | 2 | c")
            .unwrap();
        assert_eq!(h.take_lines(), ["+I[1, a]", "-U[1, a]", "+U[1, b]", "-D[1, b]", "+I[2, c]"]);
        let mut h = harness(false);
        h.push("op | k INT | v STRING\n+U | 1 | a\n+U | 1 | b").unwrap();
        assert_eq!(h.take_lines(), ["+I[1, a]", "+U[1, b]"]);
    }

    /// Random upserts and key-only deletes: the changelog applied to a table ends as the last
    /// value of each key that was not deleted after it, and never retracts what is not there.
    #[test]
    fn the_changelog_of_random_upserts_ends_as_the_keys_last_values() {
        for seed in 0..20 {
            let mut random = rand::rngs::SmallRng::seed_from_u64(seed);
            let mut h = harness(true);
            let mut expected: BTreeMap<i64, i64> = BTreeMap::new();
            let mut fixture = String::from("op | k BIGINT | v BIGINT\n");
            for _ in 0..300 {
                let k = random.random_range(0..12);
                if random.random_bool(0.25) {
                    expected.remove(&k);
                    fixture.push_str(&format!("-D | {k} | null\n"));
                } else {
                    let v = random.random_range(0..4);
                    expected.insert(k, v);
                    fixture.push_str(&format!("+U | {k} | {v}\n"));
                }
            }
            h.push(fixture.trim_end()).unwrap();
            let lines = h.take_lines();
            let changes: Vec<&str> = lines.iter().map(String::as_str).collect();
            let table = weir_runtime::fixture::materialize_changelog(&changes).unwrap();
            let wanted: BTreeMap<String, i64> = expected.iter().map(|(k, v)| (format!("[{k}, {v}]"), 1)).collect();
            assert_eq!(table, wanted, "seed {seed}");
        }
    }
}
