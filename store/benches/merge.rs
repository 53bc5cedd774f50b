//! Merges per second into an aggregation table (100,000 keys, five aggregated fields: sum,
//! max, min, bool_or, rbm32) and point-query latency percentiles, on a store in a temporary
//! directory.
//!
//! ```text
//! cargo bench -p weir-store --bench merge             # 1,000,000 merges in batches of 1,000
//! cargo bench -p weir-store --bench merge -- 200000 100
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use hdrhistogram::Histogram;
use weir_runtime::types::MAX_LENGTH;
use weir_runtime::{DataType, LogicalType, RowKind, Value};
use weir_store::{KvStore, PkTable, RedbStore, RowMerger};

const KEYS: i64 = 100_000;

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let merges = args.first().copied().unwrap_or(1_000_000);
    let batch = args.get(1).copied().unwrap_or(1_000).max(1);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store: Arc<dyn KvStore> = Arc::new(RedbStore::open(dir.path()).expect("the store opens"));
    let columns: Vec<(String, DataType)> = vec![
        ("id".into(), DataType::bigint().not_null()),
        ("sales".into(), DataType::bigint()),
        ("top_price".into(), DataType::double()),
        ("low_stock".into(), DataType::int()),
        ("flagged".into(), DataType::boolean()),
        ("visitors".into(), DataType::new(LogicalType::Varbinary(MAX_LENGTH))),
    ];
    let options: BTreeMap<String, String> = [
        ("table.merge-engine", "aggregation"),
        ("fields.sales.agg", "sum"),
        ("fields.top_price.agg", "max"),
        ("fields.low_stock.agg", "min"),
        ("fields.flagged.agg", "bool_or"),
        ("fields.visitors.agg", "rbm32"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let merger = RowMerger::new(columns.clone(), vec![0], &options).expect("valid options");
    let table = PkTable::new("sales", columns, vec![0], merger, store);
    let visitor =
        |n: u64| Value::Binary(weir_store::bitmap32::encode(std::iter::once((n % 1000) as u32).collect()).into());

    let started = Instant::now();
    let mut n: u64 = 0;
    while n < merges {
        let rows: Vec<(RowKind, Vec<Value>)> = (n..(n + batch).min(merges))
            .map(|i| {
                let key = (i.wrapping_mul(2_654_435_761) % KEYS as u64) as i64;
                (
                    RowKind::Insert,
                    vec![
                        Value::BigInt(key),
                        Value::BigInt(1),
                        Value::Double((i % 997) as f64),
                        Value::Int((i % 101) as i32),
                        Value::Boolean(i % 17 == 0),
                        visitor(i),
                    ],
                )
            })
            .collect();
        n += rows.len() as u64;
        table.write(&rows, None).expect("the batch is written");
    }
    let wall = started.elapsed().as_secs_f64();
    println!(
        "merges: {merges} into {KEYS} keys in batches of {batch}: {wall:.2} s = {:.0} merges/s",
        merges as f64 / wall
    );

    let mut latency = Histogram::<u64>::new(3).expect("a histogram");
    let queries = 100_000u64;
    for i in 0..queries {
        let key = (i.wrapping_mul(40_503) % KEYS as u64) as i64;
        let t = Instant::now();
        let row = table.get(&[Value::BigInt(key)]).expect("the read works");
        latency.record(t.elapsed().as_nanos() as u64).expect("recorded");
        assert!(row.is_some());
    }
    let us = |q: f64| latency.value_at_quantile(q) as f64 / 1000.0;
    println!(
        "point queries: {queries}: p50 {:.1} µs, p99 {:.1} µs, p99.9 {:.1} µs, max {:.1} µs",
        us(0.5),
        us(0.99),
        us(0.999),
        latency.max() as f64 / 1000.0
    );
}
