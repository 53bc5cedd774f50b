//! Ship strategies end to end: HASH, REBALANCE, BROADCAST, SINGLE and FORWARD.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::{collect, keyed_numbers, row, scripted};
use weir::connectors::SourceStep;
use weir::runtime::graph::JobGraph;
use weir::runtime::partition::{hash_key, subtask_for_hash};
use weir::runtime::{job, JobStatus, RuntimeConfig, ShipStrategy};

fn config() -> RuntimeConfig {
    RuntimeConfig::default().with_worker_threads(2).with_chunk_size(64)
}

/// Runs numbers → HASH(key) → collect(4) and returns which subtasks saw each key.
fn hash_run() -> BTreeMap<i64, BTreeSet<usize>> {
    let mut g = JobGraph::new();
    let source = keyed_numbers(&mut g, 2, 10_000, 97);
    let (sink, out) = collect(&mut g, 4);
    g.connect(source, sink, ShipStrategy::Hash(vec![0]));
    assert_eq!(job::run(g, config()).unwrap(), JobStatus::Finished);
    let rows = out.rows_by_subtask();
    assert_eq!(rows.len(), 10_000);
    let mut owners: BTreeMap<i64, BTreeSet<usize>> = BTreeMap::new();
    for (subtask, r) in rows {
        owners.entry(r.values[0].as_i64().unwrap()).or_default().insert(subtask);
    }
    owners
}

#[test]
fn hash_sends_every_key_to_exactly_one_subtask_the_same_on_every_run() {
    let first = hash_run();
    assert_eq!(first.len(), 97);
    for (key, subtasks) in &first {
        assert_eq!(subtasks.len(), 1, "key {key} reached subtasks {subtasks:?}");
        let expected = subtask_for_hash(hash_key(&[weir::runtime::Value::BigInt(*key)], &[0]), 4);
        assert_eq!(subtasks.first(), Some(&expected), "key {key}");
    }
    let used: BTreeSet<usize> = first.values().flatten().copied().collect();
    assert_eq!(used.len(), 4, "97 keys should reach all 4 subtasks");
    assert_eq!(hash_run(), first);
}

#[test]
fn rebalance_spreads_rows_evenly() {
    let mut g = JobGraph::new();
    let source = scripted(&mut g, "Rows", 1, vec![SourceStep::Rows((0..1000).map(row).collect())]);
    let (sink, out) = collect(&mut g, 4);
    g.connect(source, sink, ShipStrategy::Rebalance);
    job::run(g, config()).unwrap();
    let mut per_subtask = [0usize; 4];
    let mut seen = BTreeSet::new();
    for (subtask, r) in out.rows_by_subtask() {
        per_subtask[subtask] += 1;
        seen.insert(r.values[0].as_i64().unwrap());
    }
    assert_eq!(per_subtask, [250; 4]);
    assert_eq!(seen.len(), 1000);
}

#[test]
fn broadcast_reaches_every_subtask() {
    let mut g = JobGraph::new();
    let source = scripted(&mut g, "Rows", 1, vec![SourceStep::Rows((0..10).map(row).collect())]);
    let (sink, out) = collect(&mut g, 3);
    g.connect(source, sink, ShipStrategy::Broadcast);
    job::run(g, config()).unwrap();
    for subtask in 0..3 {
        let rows: Vec<i64> = out
            .rows_by_subtask()
            .into_iter()
            .filter(|(s, _)| *s == subtask)
            .map(|(_, r)| r.values[0].as_i64().unwrap())
            .collect();
        assert_eq!(rows, (0..10).collect::<Vec<_>>(), "subtask {subtask}");
    }
    assert_eq!(out.ended_subtasks(), 3);
}

#[test]
fn single_sends_everything_to_subtask_zero_and_ends_the_others() {
    let mut g = JobGraph::new();
    let source = keyed_numbers(&mut g, 3, 300, 7);
    let (sink, out) = collect(&mut g, 2);
    g.connect(source, sink, ShipStrategy::Single);
    job::run(g, config()).unwrap();
    assert!(out.rows_by_subtask().iter().all(|(s, _)| *s == 0));
    assert_eq!(out.rows().len(), 300);
    assert_eq!(out.ended_subtasks(), 2);
}

#[test]
fn forward_between_unchained_vertices_keeps_subtask_pairs() {
    // Two outputs from one source prevent chaining, so FORWARD crosses mailboxes.
    let mut g = JobGraph::new();
    let source = keyed_numbers(&mut g, 2, 1000, 10);
    let (a, out_a) = collect(&mut g, 2);
    let (b, out_b) = collect(&mut g, 2);
    g.connect(source, a, ShipStrategy::Forward);
    g.connect(source, b, ShipStrategy::Forward);
    job::run(g, config()).unwrap();
    for out in [out_a, out_b] {
        for (subtask, r) in out.rows_by_subtask() {
            // Subtask 0 generates rows 0..500, subtask 1 rows 500..1000.
            assert_eq!(subtask, (r.values[1].as_i64().unwrap() / 500) as usize);
        }
        assert_eq!(out.rows().len(), 1000);
    }
}
