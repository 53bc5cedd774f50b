//! Lookup joins through the pipeline API, against an in-memory table whose per-key latencies
//! the tests set: ordering guarantees of each mode, checked on random input.

use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use weir::connectors::{MemoryLookupTable, MemorySource, SourceStep};
use weir::lookup::LookupJoin;
use weir::prelude::*;
use weir::runtime::LookupProvider;

fn input_schema() -> Schema {
    Schema::new(vec![
        Field::new("k", DataType::bigint()),
        Field::new("seq", DataType::bigint()),
        Field::new("ts", DataType::bigint()),
    ])
}

fn dim_schema() -> Schema {
    Schema::new(vec![Field::new("id", DataType::bigint()), Field::new("name", DataType::string())])
}

/// Dimension rows for the even keys below `keys`: odd keys have no match.
fn dim_rows(keys: i64) -> Vec<Vec<Value>> {
    (0..keys).filter(|k| k % 2 == 0).map(|k| vec![Value::BigInt(k), Value::string(&format!("n{k}"))]).collect()
}

/// A random changelog over `keys` update keys: each key's first change is `+I`, later ones
/// come as `-U`/`+U` pairs; a watermark (the latest `ts`) follows every few records.
fn random_changelog(rng: &mut SmallRng, records: usize, keys: i64) -> (Vec<Row>, Vec<SourceStep>) {
    let mut seen = std::collections::HashSet::new();
    let mut rows = Vec::new();
    let mut steps = Vec::new();
    let mut batch = Vec::new();
    let mut seq = 0i64;
    while rows.len() < records {
        let k = rng.random_range(0..keys);
        let kinds: &[RowKind] =
            if seen.insert(k) { &[RowKind::Insert] } else { &[RowKind::UpdateBefore, RowKind::UpdateAfter] };
        for &kind in kinds {
            let row = Row::new(kind, vec![Value::BigInt(k), Value::BigInt(seq), Value::BigInt(seq)]);
            seq += 1;
            rows.push(row.clone());
            batch.push(row);
        }
        if rng.random_range(0..8) == 0 {
            steps.push(SourceStep::Rows(std::mem::take(&mut batch)));
            steps.push(SourceStep::Watermark(seq - 1));
        }
    }
    steps.push(SourceStep::Rows(batch));
    (rows, steps)
}

fn int(v: &Value) -> i64 {
    match v {
        Value::BigInt(n) => *n,
        other => panic!("not a BIGINT: {other:?}"),
    }
}

/// The rows a LEFT lookup join must produce, recomputed from scratch.
fn expected(rows: &[Row], dim: &[Vec<Value>]) -> Vec<String> {
    let mut lines: Vec<String> = rows
        .iter()
        .map(|r| {
            let mut values = r.values.clone();
            match dim.iter().find(|d| d[0] == r.values[0]) {
                Some(d) => values.extend(d.iter().cloned()),
                None => values.extend([Value::Null, Value::Null]),
            }
            Row::new(r.kind, values).to_string()
        })
        .collect();
    lines.sort();
    lines
}

#[test]
fn key_ordered_lookups_keep_each_keys_order_run_keys_concurrently_and_hold_watermarks() {
    for seed in 0..6u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let keys = 12;
        let latencies: Vec<u64> = (0..keys).map(|_| rng.random_range(0..4)).collect();
        let (rows, steps) = random_changelog(&mut rng, 240, keys);
        let parallelism = 1 + (seed as usize % 2);

        let table = MemoryLookupTable::new(dim_rows(keys))
            .with_latency(move |key| Duration::from_millis(latencies[int(&key[0]) as usize]));
        let stats = table.stats();
        let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(parallelism));
        let source = MemorySource::new("changes", 3, steps);
        let input = pipeline.source("changes", input_schema(), 1, move |info| Box::new(source.for_subtask(info)));
        let join = LookupJoin::new("dim", dim_schema(), &["id"], table.lookup_function(&[0]).unwrap(), &[0])
            .unwrap()
            .left_outer()
            .key_ordered(&[0], 8);
        let out = input.lookup_join(join).collect();
        pipeline.run().unwrap();

        let output = out.rows_by_subtask();
        let mut lines: Vec<String> = output.iter().map(|(_, r)| r.to_string()).collect();
        lines.sort();
        assert_eq!(lines, expected(&rows, &dim_rows(keys)), "seed {seed}: results differ from recomputation");

        // Per key, results leave in the order the changes arrived.
        for k in 0..keys {
            let arrived: Vec<(RowKind, i64)> =
                rows.iter().filter(|r| int(&r.values[0]) == k).map(|r| (r.kind, int(&r.values[1]))).collect();
            let left: Vec<(RowKind, i64)> = output
                .iter()
                .filter(|(_, r)| int(&r.values[0]) == k)
                .map(|(_, r)| (r.kind, int(&r.values[1])))
                .collect();
            assert_eq!(left, arrived, "seed {seed}: key {k} out of order");
        }

        // One lookup per key at a time, different keys at the same time.
        assert_eq!(stats.max_in_flight_per_key(), 1, "seed {seed}");
        assert!(stats.max_in_flight() > 1, "seed {seed}: lookups never overlapped");

        // No watermark leaves before a record that arrived ahead of it.
        for (subtask, watermark, before) in out.watermark_positions() {
            let mine: Vec<&Row> = output.iter().filter(|(s, _)| *s == subtask).map(|(_, r)| r).collect();
            if let Some(late) = mine[before..].iter().find(|r| int(&r.values[2]) <= watermark) {
                panic!("seed {seed}: watermark {watermark} overtook {late}");
            }
        }
    }
}

/// Random insert-only rows with watermarks, random per-key latencies: every row comes out
/// once, joined as a recomputation says; ORDERED keeps input order; UNORDERED lets no watermark
/// pass a row that arrived before it, nor a row one that arrived after it.
#[test]
fn async_lookups_on_random_input_keep_their_ordering_promises() {
    for seed in 0..6u64 {
        let mut rng = SmallRng::seed_from_u64(100 + seed);
        let keys = 16;
        let latencies: Vec<u64> = (0..keys).map(|_| rng.random_range(0..4)).collect();
        let mut rows = Vec::new();
        let mut steps = Vec::new();
        let mut batch = Vec::new();
        for seq in 0..200i64 {
            let row =
                Row::insert(vec![Value::BigInt(rng.random_range(0..keys)), Value::BigInt(seq), Value::BigInt(seq)]);
            rows.push(row.clone());
            batch.push(row);
            if rng.random_range(0..10) == 0 {
                steps.push(SourceStep::Rows(std::mem::take(&mut batch)));
                steps.push(SourceStep::Watermark(seq));
            }
        }
        steps.push(SourceStep::Rows(batch));
        for ordered in [true, false] {
            let latencies = latencies.clone();
            let table = MemoryLookupTable::new(dim_rows(keys))
                .with_latency(move |key| Duration::from_millis(latencies[int(&key[0]) as usize]));
            let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(1));
            let source = MemorySource::new("inserts", 3, steps.clone());
            let input = pipeline.source("inserts", input_schema(), 1, move |info| Box::new(source.for_subtask(info)));
            let join = LookupJoin::new("dim", dim_schema(), &["id"], table.lookup_function(&[0]).unwrap(), &[0])
                .unwrap()
                .left_outer();
            let join = if ordered { join.ordered(8) } else { join.unordered(8) };
            let out = input.lookup_join(join).collect();
            pipeline.run().unwrap();
            let output = out.rows();
            let mut lines: Vec<String> = output.iter().map(Row::to_string).collect();
            lines.sort();
            assert_eq!(lines, expected(&rows, &dim_rows(keys)), "seed {seed}, ordered {ordered}");
            let order: Vec<i64> = output.iter().map(|r| int(&r.values[1])).collect();
            if ordered {
                assert_eq!(order, (0..200).collect::<Vec<_>>(), "seed {seed}");
            }
            for (_, watermark, before) in out.watermark_positions() {
                assert!(order[..before].iter().all(|&s| s <= watermark), "seed {seed}: a later row passed {watermark}");
                assert!(
                    order[before..].iter().all(|&s| s > watermark),
                    "seed {seed}: watermark {watermark} overtook a row"
                );
            }
        }
    }
}

/// Input order of the `seq` column in the output.
fn output_order(lookup: impl FnOnce(LookupJoin) -> LookupJoin) -> Vec<i64> {
    // The first record's lookup is slow, the others answer at once.
    let table = MemoryLookupTable::new(dim_rows(16)).with_latency(|key| {
        if int(&key[0]) == 0 {
            Duration::from_millis(30)
        } else {
            Duration::ZERO
        }
    });
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(1));
    let rows: Vec<Row> =
        (0..16).map(|n| Row::insert(vec![Value::BigInt(n), Value::BigInt(n), Value::BigInt(n)])).collect();
    let input = pipeline.from_rows("inserts", input_schema(), rows);
    let join =
        LookupJoin::new("dim", dim_schema(), &["id"], table.lookup_function(&[0]).unwrap(), &[0]).unwrap().left_outer();
    let out = input.lookup_join(lookup(join)).collect();
    pipeline.run().unwrap();
    out.rows().iter().map(|r| int(&r.values[1])).collect()
}

#[test]
fn unordered_lookups_on_insert_only_input_reorder_and_ordered_ones_do_not() {
    let in_order: Vec<i64> = (0..16).collect();
    assert_eq!(output_order(|j| j.ordered(16)), in_order);
    assert_eq!(output_order(|j| j.sync()), in_order);
    let unordered = output_order(|j| j.unordered(16));
    assert_ne!(unordered, in_order, "the slow first lookup should finish last");
    let mut sorted = unordered.clone();
    sorted.sort();
    assert_eq!(sorted, in_order, "every row once");
    assert_eq!(unordered.last(), Some(&0));
}

#[test]
fn a_lookup_that_takes_too_long_fails_the_job_naming_table_and_key() {
    let table = MemoryLookupTable::new(dim_rows(4)).with_latency(|_| Duration::from_secs(30));
    let pipeline = Pipeline::new(RuntimeConfig::default());
    let input = pipeline.from_rows(
        "inserts",
        input_schema(),
        vec![Row::insert(vec![Value::BigInt(2), Value::BigInt(0), Value::BigInt(0)])],
    );
    let join = LookupJoin::new("dim", dim_schema(), &["id"], table.lookup_function(&[0]).unwrap(), &[0])
        .unwrap()
        .timeout(Duration::from_millis(50));
    input.lookup_join(join).collect();
    let error = pipeline.run().unwrap_err().to_string();
    assert!(error.contains("Lookup join on table 'dim' timed out after 50 ms for key (id=2)"), "{error}");
}
