//! The pipeline API end to end, checked against a from-scratch recomputation.

use crate::common;

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

/// Record batches in, through a HASH exchange and a keyed count, record batches out: the same
/// counts as a recount of the input.
#[test]
fn record_batches_in_and_out_match_a_recount() {
    use std::sync::Arc;
    use weir::runtime::columnar::arrow_array::{Array, Int64Array, StringArray};
    use weir::runtime::columnar::arrow_schema::{DataType as ArrowType, Field as ArrowField, Schema as ArrowSchema};

    let words = ["apple", "fig", "kiwi", "pear", "plum"];
    let arrow_schema = Arc::new(ArrowSchema::new(vec![
        ArrowField::new("id", ArrowType::Int64, true),
        ArrowField::new("word", ArrowType::Utf8, true),
    ]));
    let mut expected: BTreeMap<String, i64> = BTreeMap::new();
    let mut batches = Vec::new();
    for b in 0..4i64 {
        let ids: Vec<i64> = (0..2500).map(|i| b * 2500 + i).collect();
        let text: Vec<&str> = ids.iter().map(|i| words[(*i * 7 % 5) as usize]).collect();
        for w in &text {
            *expected.entry(w.to_string()).or_default() += 1;
        }
        let columns: Vec<Arc<dyn Array>> = vec![Arc::new(Int64Array::from(ids)), Arc::new(StringArray::from(text))];
        batches.push(RecordBatch::try_new(Arc::clone(&arrow_schema), columns).unwrap());
    }
    let input = Schema::new(vec![Field::new("id", DataType::bigint()), Field::new("word", DataType::string())]);
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(2));
    let counts = pipeline
        .from_batches("words", input, batches)
        .unwrap()
        .key_by(&[1])
        .process(
            "CountByKey",
            Schema::new(vec![Field::new("word", DataType::string()), Field::new("n", DataType::bigint())]),
            CountByKey,
        )
        .collect_batches();
    pipeline.run().unwrap();
    let mut last: BTreeMap<String, i64> = BTreeMap::new();
    for ChangelogBatch { kinds, batch } in counts.batches().unwrap() {
        assert_eq!(batch.schema().field(0).name(), "word");
        let words = batch.column(0).as_any().downcast_ref::<StringArray>().unwrap();
        let n = batch.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        for (i, kind) in kinds.iter().enumerate() {
            if kind.is_accumulate() {
                last.insert(words.value(i).to_string(), n.value(i));
            }
        }
    }
    assert_eq!(last, expected);
}

#[test]
fn record_batches_of_another_type_are_refused_by_name() {
    use std::sync::Arc;
    use weir::runtime::columnar::arrow_array::Int32Array;
    let batch = RecordBatch::try_from_iter([("id", Arc::new(Int32Array::from(vec![1, 2])) as _)]).unwrap();
    let pipeline = Pipeline::new(RuntimeConfig::default());
    let err = pipeline.from_batches("ids", schema(&["id"]), vec![batch]).map(|_| ()).unwrap_err().to_string();
    assert_eq!(err, "Column 'id' of record batch 0 of source 'ids' is Int32; its type BIGINT is held as Int64.");
}
