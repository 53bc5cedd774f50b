//! SinkUpsertMaterializer: turns a changelog whose rows may share a sink's primary key without
//! sharing the query's upsert key into a correct upsert stream for that key, as Flink's
//! operator of the same name does.
//!
//! Per primary key it keeps the rows currently alive, in arrival order. An added row (`+I`,
//! `+U`) is written as `+I` when none was alive, `+U` otherwise. A retracted row (`-U`, `-D`)
//! is removed; when none is left the key is deleted (`-D`), when it was the newest the row
//! alive before it is written again (`+U`), and when an older one left nothing is written. So
//! `+I a, +I b, -U b` for one key writes `+I a, +U b, +U a`. The output has no `-U`. The rows
//! are keyed list state ([`ListState`]): a checkpoint holds every key's alive rows, a restore
//! keeps the keys the subtask owns, and with `table.exec.state.ttl` a row expires that long
//! after it was written (a retraction of an expired row then writes nothing, with Flink's
//! warning).

use std::time::Duration;

use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::ListState;
use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result, RowKind, Value};

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct SinkUpsertMaterializerOperator {
    primary_key: Vec<usize>,
    upsert_key: Option<Vec<usize>>,
    /// Per primary key, the rows alive, in arrival order.
    alive: ListState<Box<[Value]>>,
    /// Scratch buffer for the primary key of the current row.
    key: Vec<Value>,
    name: String,
}

impl SinkUpsertMaterializerOperator {
    /// A materializer for the sink's `primary_key` columns. With an `upsert_key` (the query's
    /// own key), rows are matched on it and an added row replaces the alive row with the same
    /// upsert key; without one, rows are matched on all their values. `key_names` name the
    /// primary key columns in the operator's name, `SinkMaterializer(pk=[…])`.
    pub fn new(primary_key: Vec<usize>, upsert_key: Option<Vec<usize>>, key_names: &[String]) -> Self {
        let name = format!("SinkMaterializer(pk=[{}])", key_names.join(", "));
        SinkUpsertMaterializerOperator {
            primary_key,
            upsert_key,
            alive: ListState::new(ALIVE, None),
            key: Vec::new(),
            name,
        }
    }

    /// The materializer, its rows expiring `ttl` after they were written (`table.exec.state.ttl`;
    /// `None` keeps them).
    pub fn with_state_ttl(mut self, ttl: Option<Duration>) -> Self {
        self.alive = ListState::new(ALIVE, ttl);
        self
    }

    /// Applies one change at processing time `now`, writing into `out` what the sink should
    /// see, if anything.
    fn apply(&mut self, kind: RowKind, row: &[Value], now: i64, out: &mut Chunk) {
        self.key.clear();
        self.key.extend(self.primary_key.iter().map(|&k| row[k].clone()));
        let Self { alive, upsert_key, key, name, .. } = self;
        let upsert_key = upsert_key.as_deref();
        let same = |a: &[Value]| match upsert_key {
            Some(columns) => columns.iter().all(|&c| a[c] == row[c]),
            None => a == row,
        };
        if kind.is_accumulate() {
            match alive.get_mut(key, now) {
                Some(mut rows) => {
                    out.push(RowKind::UpdateAfter, row);
                    match upsert_key.and_then(|_| rows.position(|r| same(r))) {
                        Some(at) => rows.set(at, row.into()),
                        None => rows.push(row.into()),
                    }
                }
                None => {
                    out.push(RowKind::Insert, row);
                    alive.add(key, row.into(), now);
                }
            }
            return;
        }
        let Some(mut rows) = alive.get_mut(key, now) else {
            return warn_cleared(name);
        };
        let Some(at) = rows.position(|r| same(r)) else {
            return warn_cleared(name);
        };
        let newest = at + 1 == rows.len();
        rows.remove(at);
        match rows.last() {
            None => {
                out.push(RowKind::Delete, row);
                alive.clear(key);
            }
            Some(previous) if newest => out.push(RowKind::UpdateAfter, previous),
            Some(_) => {}
        }
    }
}

/// A retraction of a row that is not alive: Flink's warning, and nothing is written.
fn warn_cleared(operator: &str) {
    tracing::warn!(
        operator,
        "The state is cleared because of state ttl. This will result in incorrect result. \
         You can increase the state ttl to avoid this."
    );
}

impl Operator for SinkUpsertMaterializerOperator {
    fn name(&self) -> &str {
        &self.name
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let mut result = Chunk::with_capacity(chunk.arity(), chunk.len());
        let now = ctx.processing_time();
        for (kind, row) in chunk.rows() {
            self.apply(kind, row, now, &mut result);
        }
        result.set_origin_nanos(chunk.origin_nanos());
        out.collect(result);
        Ok(())
    }

    /// Every key with the rows alive for it, in arrival order.
    fn snapshot_state(&mut self, _: u64, ctx: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        self.alive.snapshot(state, ctx.processing_time());
        Ok(())
    }

    /// Keeps the keys this subtask owns now (its input is always hashed on the primary key).
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        self.alive.restore(states, ctx.subtask())
    }
}

/// The section of a materializer's state: the rows alive per key.
const ALIVE: &str = "alive";

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for SinkUpsertMaterializerOperator {
    /// Per primary key: the rows alive, in arrival order.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{column_types, row_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        StateSignature::new("SinkMaterializer", STATE_VERSION).state(
            ALIVE,
            StateKind::List,
            column_types(input, &self.primary_key),
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
    use weir_runtime::partition::{hash_key, subtask_for_hash};

    fn materializer(upsert_key: Option<Vec<usize>>) -> SinkUpsertMaterializerOperator {
        SinkUpsertMaterializerOperator::new(vec![0], upsert_key, &["k".to_string()])
    }

    #[test]
    fn rolls_back_to_the_previous_row_when_the_newest_is_retracted() {
        assert_eq!(materializer(None).name(), "SinkMaterializer(pk=[k])");
        let mut h = OperatorHarness::new(materializer(None));
        h.push("op | k STRING | v STRING\n+I | k | a\n+I | k | b\n-U | k | b").unwrap();
        assert_eq!(h.take_lines(), ["+I[k, a]", "+U[k, b]", "+U[k, a]"]);
        // An older row leaving writes nothing; the last one leaving deletes the key; a
        // retraction of a row never seen is dropped.
        h.push("op | k STRING | v STRING\n+I | k | c\n-D | k | a\n-D | k | c\n-D | k | x").unwrap();
        assert_eq!(h.take_lines(), ["+U[k, c]", "-D[k, c]"]);
    }

    /// With `table.exec.state.ttl`, rows expire that long after they were written: a later row
    /// of the key starts it afresh, and retracting an expired row writes nothing.
    #[test]
    fn rows_expire_after_the_state_ttl() {
        let op = materializer(None).with_state_ttl(Some(Duration::from_millis(100)));
        let mut h = OperatorHarness::new(op);
        h.push("op | k STRING | v STRING\n+I | k | a").unwrap();
        h.advance_processing_time(150).unwrap();
        h.push("op | k STRING | v STRING\n+I | k | b\n-D | k | a").unwrap();
        assert_eq!(h.take_lines(), ["+I[k, a]", "+I[k, b]"]);
        h.push("op | k STRING | v STRING\n-D | k | b").unwrap();
        assert_eq!(h.take_lines(), ["-D[k, b]"]);
    }

    #[test]
    fn an_upsert_key_replaces_its_row_in_place() {
        let op = SinkUpsertMaterializerOperator::new(vec![0], Some(vec![1]), &["k".to_string()]);
        let mut h = OperatorHarness::new(op);
        h.push("op | k STRING | u INT | v INT\n+I | k | 1 | 10\n+I | k | 2 | 20\n+U | k | 1 | 11\n-D | k | 2 | 20")
            .unwrap();
        assert_eq!(h.take_lines(), ["+I[k, 1, 10]", "+U[k, 2, 20]", "+U[k, 1, 11]", "+U[k, 1, 11]"]);
    }

    /// After every change the upserted output equals, per key, the newest row still alive,
    /// recomputed from the whole input so far.
    #[test]
    fn matches_a_recomputation_from_scratch_on_random_changelogs() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(9);
        for round in 0..30 {
            let mut h = OperatorHarness::new(materializer(None));
            let mut input: Vec<(bool, i64, i64)> = Vec::new();
            let mut live: Vec<(i64, i64)> = Vec::new();
            let mut sink: BTreeMap<String, String> = BTreeMap::new();
            for _ in 0..60 {
                let change = if !live.is_empty() && rng.random_bool(0.4) {
                    let (k, v) = live.remove(rng.random_range(0..live.len()));
                    (false, k, v)
                } else {
                    let (k, v) = (rng.random_range(0..3), rng.random_range(0..4));
                    live.push((k, v));
                    (true, k, v)
                };
                input.push(change);
                let op = match (change.0, rng.random_bool(0.5)) {
                    (true, true) => "+I",
                    (true, false) => "+U",
                    (false, true) => "-U",
                    (false, false) => "-D",
                };
                h.push(&format!("op | k BIGINT | v BIGINT\n{op} | {} | {}", change.1, change.2)).unwrap();
                for line in h.take_lines() {
                    let (kind, row) = line.split_at(2);
                    let key = row[1..].split(',').next().unwrap().to_string();
                    assert_ne!(kind, "-U", "an upsert stream has no -U");
                    if kind == "-D" {
                        sink.remove(&key);
                    } else {
                        sink.insert(key, row.to_string());
                    }
                }
                // From scratch: per key, the rows added and not yet retracted, in order.
                let mut alive: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
                for &(add, k, v) in &input {
                    let rows = alive.entry(k).or_default();
                    if add {
                        rows.push(v);
                    } else if let Some(at) = rows.iter().position(|&r| r == v) {
                        rows.remove(at);
                    }
                }
                let expected: BTreeMap<String, String> = alive
                    .into_iter()
                    .filter_map(|(k, rows)| rows.last().map(|v| (k.to_string(), format!("[{k}, {v}]"))))
                    .collect();
                assert_eq!(sink, expected, "round {round} after {input:?}");
            }
        }
    }

    /// Materializers checkpointed and restored at random points at random parallelisms (keys
    /// split by key group) write what one uninterrupted materializer writes.
    #[test]
    fn restored_materializers_go_on_as_if_never_stopped() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
        let owner = |k: i64, p: usize| subtask_for_hash(hash_key(&[Value::BigInt(k)], &[0]), p);
        for round in 0..30 {
            let mut whole = OperatorHarness::new(materializer(None));
            let mut parts = vec![OperatorHarness::new(materializer(None))];
            let (mut expected, mut actual) = (Vec::new(), Vec::new());
            let mut live: Vec<(i64, i64)> = Vec::new();
            for step in 0..80u64 {
                let (kind, k, v) = if !live.is_empty() && rng.random_bool(0.4) {
                    let (k, v) = live.remove(rng.random_range(0..live.len()));
                    ("-D", k, v)
                } else {
                    let (k, v) = (rng.random_range(0..6), rng.random_range(0..4));
                    live.push((k, v));
                    ("+I", k, v)
                };
                let fixture = format!("op | k BIGINT | v BIGINT\n{kind} | {k} | {v}");
                whole.push(&fixture).unwrap();
                let p = parts.len();
                parts[owner(k, p)].push(&fixture).unwrap();
                expected.extend(whole.take_lines());
                parts.iter_mut().for_each(|h| actual.extend(h.take_lines()));
                if step % 9 == 8 {
                    let p = rng.random_range(1..5);
                    let build = |i, p| OperatorHarness::with_subtask(Box::new(materializer(None)), i, p);
                    OperatorHarness::rescale(&mut parts, step, p, build, &mut actual).unwrap();
                }
            }
            let table = |lines: &[String]| weir_runtime::fixture::materialize_changelog(lines.iter()).unwrap();
            assert_eq!(table(&actual), table(&expected), "round {round}");
        }
    }
}
