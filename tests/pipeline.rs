//! The pipeline API end to end, checked against a from-scratch recomputation.

mod common;

use std::collections::BTreeMap;

use common::wait_until;
use rand::{Rng, SeedableRng};
use weir::prelude::*;

fn schema(names: &[&str]) -> Schema {
    Schema::new(names.iter().map(|n| Field::new(*n, DataType::bigint())).collect())
}

/// Applies a changelog to a multiset of row texts; a retraction of a missing row fails.
fn materialize(rows: &[Row]) -> BTreeMap<String, i64> {
    let mut table = BTreeMap::new();
    for row in rows {
        let text = Row::insert(row.values.clone()).to_string();
        let n = table.entry(text.clone()).or_insert(0);
        *n += if row.kind.is_accumulate() { 1 } else { -1 };
        assert!(*n >= 0, "retracted {row} that was not there");
    }
    table.retain(|_, n| *n != 0);
    table
}

#[test]
fn union_map_filter_and_keyed_count_match_a_recount_at_every_parallelism() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(42);
    let mut inputs: Vec<Vec<Row>> = vec![Vec::new(), Vec::new()];
    for input in &mut inputs {
        for _ in 0..3_000 {
            input.push(Row::insert(vec![
                Value::BigInt(rng.random_range(0..50)),
                Value::BigInt(rng.random_range(0..100)),
            ]));
        }
    }
    // From scratch: keys of rows whose value is below 70, key mapped to key % 20, counted.
    let mut expected: BTreeMap<String, i64> = BTreeMap::new();
    let mut counts: BTreeMap<i64, i64> = BTreeMap::new();
    for row in inputs.iter().flatten() {
        let (k, v) = (row.values[0].as_i64().unwrap(), row.values[1].as_i64().unwrap());
        if v < 70 {
            *counts.entry(k % 20).or_insert(0) += 1;
        }
    }
    for (k, n) in counts {
        expected.insert(format!("+I[{k}, {n}]"), 1);
    }
    for parallelism in [1, 2, 4] {
        let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(parallelism).with_chunk_size(128));
        let a = pipeline.from_rows("a", schema(&["k", "v"]), inputs[0].clone());
        let b = pipeline.from_rows("b", schema(&["k", "v"]), inputs[1].clone());
        let output = a
            .union(&[b])
            .filter("Below70", |r: &[Value]| r[1].as_i64().is_some_and(|v| v < 70))
            .map("Mod20", schema(&["k"]), |r: &[Value], out: &mut Vec<Value>| {
                out.push(Value::BigInt(r[0].as_i64().unwrap_or(0) % 20));
            })
            .key_by(&[0])
            .process("CountByKey", schema(&["k", "cnt"]), CountByKey)
            .collect();
        assert_eq!(pipeline.run().unwrap(), JobStatus::Finished);
        assert_eq!(materialize(&output.rows()), expected, "parallelism {parallelism}");
    }
}

#[test]
fn a_started_pipeline_can_be_cancelled() {
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(2));
    let rows = pipeline
        .generate("Endless", schema(&["n"]), u64::MAX, |n, out| out.push(Value::BigInt(n as i64)))
        .rebalance()
        .discard();
    let job = pipeline.start().unwrap();
    wait_until("rows flow", || rows.load(std::sync::atomic::Ordering::Relaxed) > 10_000);
    job.cancel();
    assert_eq!(job.wait().unwrap(), JobStatus::Cancelled);
}

#[test]
fn set_parallelism_and_default_edges_follow_flink() {
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(2));
    let source = pipeline.generate("Numbers", schema(&["n"]), 10, |n, out| out.push(Value::BigInt(n as i64)));
    let mapped = source.map("Same", schema(&["n"]), |r: &[Value], out: &mut Vec<Value>| out.push(r[0].clone()));
    let single = mapped.map("One", schema(&["n"]), |r: &[Value], out: &mut Vec<Value>| out.push(r[0].clone()));
    let single = single.set_parallelism(1);
    let output = single.collect();
    let graph = pipeline.job_graph();
    let strategies: Vec<&str> = graph.edges().iter().map(|e| e.strategy.flink_name()).collect();
    // 2 → 2 is FORWARD (and chained), 2 → 1 is REBALANCE, 1 → 2 (the sink) is REBALANCE.
    assert_eq!(strategies, ["FORWARD", "REBALANCE", "REBALANCE"]);
    assert_eq!(graph.chains().unwrap().len(), 3);
    pipeline.run().unwrap();
    assert_eq!(output.rows().len(), 10);
}
