//! Load test of the execution core: rows per second, source-to-sink latency percentiles and
//! peak memory for pipelines built with the pipeline API.
//!
//! ```text
//! cargo bench --bench pipeline                 # every scenario, 20 million rows each
//! cargo bench --bench pipeline -- hash 5000000 # scenarios whose name contains "hash", 5 M rows
//! ```
//!
//! Scenarios (rows are `[n % 100000, n]`, two BIGINTs, from a generator source):
//! - `chained`: source → map → filter → sink, parallelism 1, all chained into one actor.
//! - `hash_exchange_p2`: source → HASH → sink at parallelism 2 (the cost of the exchange).
//! - `keyed_count_p2`: source → map → HASH → keyed count → sink at parallelism 2.
//!
//! Timings on a shared machine are noisy: compare scenarios within one run.

use std::sync::atomic::Ordering;
use std::time::Instant;

use weir::prelude::*;

const KEYS: u64 = 100_000;

fn schema() -> Schema {
    Schema::new(vec![Field::new("key", DataType::bigint()), Field::new("n", DataType::bigint())])
}

fn source(pipeline: &Pipeline, rows: u64) -> Stream {
    pipeline.generate("Numbers", schema(), rows, |n, out| {
        out.push(Value::BigInt((n % KEYS) as i64));
        out.push(Value::BigInt(n as i64));
    })
}

fn chained(rows: u64) -> (Pipeline, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    let p = Pipeline::new(RuntimeConfig::default().with_parallelism(1));
    let sink = source(&p, rows)
        .map("Map", schema(), |r: &[Value], out: &mut Vec<Value>| {
            out.push(r[0].clone());
            out.push(Value::BigInt(r[1].as_i64().unwrap_or(0) * 2));
        })
        .filter("Filter", |r: &[Value]| r[1].as_i64().is_some_and(|v| v >= 0))
        .discard();
    (p, sink)
}

fn hash_exchange(rows: u64) -> (Pipeline, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    let p = Pipeline::new(RuntimeConfig::default().with_parallelism(2));
    let sink = source(&p, rows).key_by(&[0]).process("Identity", schema(), Identity).discard();
    (p, sink)
}

fn keyed_count(rows: u64) -> (Pipeline, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    let p = Pipeline::new(RuntimeConfig::default().with_parallelism(2));
    let counts = Schema::new(vec![Field::new("key", DataType::bigint()), Field::new("cnt", DataType::bigint())]);
    let sink = source(&p, rows)
        .map("Map", schema(), |r: &[Value], out: &mut Vec<Value>| out.extend_from_slice(r))
        .key_by(&[0])
        .process("CountByKey", counts, CountByKey)
        .discard();
    (p, sink)
}

/// Passes rows through unchanged: keeps `hash_exchange_p2` about the exchange alone.
#[derive(Clone, Copy)]
struct Identity;

impl KeyedProcessFunction for Identity {
    type State = ();

    fn process(
        &mut self,
        _key: &[Value],
        kind: RowKind,
        row: &[Value],
        _state: &mut Option<()>,
        _ctx: &mut OperatorContext,
        out: &mut Chunk,
    ) -> Result<()> {
        out.push(kind, row);
        Ok(())
    }
}

/// Peak resident memory of this process in MiB, from `/proc/self/status` (Linux).
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn main() {
    // `cargo bench` passes `--bench`; the remaining arguments filter and size the run.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let filter = args.first().cloned().unwrap_or_default();
    let rows: u64 = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(20_000_000);
    type Scenario = fn(u64) -> (Pipeline, std::sync::Arc<std::sync::atomic::AtomicU64>);
    let scenarios: [(&str, Scenario); 3] =
        [("chained", chained), ("hash_exchange_p2", hash_exchange), ("keyed_count_p2", keyed_count)];
    println!(
        "{:<18} {:>12} {:>9} {:>14} {:>9} {:>9} {:>9} {:>10}",
        "scenario", "rows", "wall s", "rows/s", "p50 us", "p99 us", "p999 us", "peak MiB"
    );
    for (name, build) in scenarios.iter().filter(|(n, _)| n.contains(&filter)) {
        let (pipeline, sink) = build(rows);
        let started = Instant::now();
        let job = pipeline.start().expect("the benchmark pipeline starts");
        let metrics = job.metrics().clone();
        job.wait().expect("the benchmark pipeline runs");
        let wall = started.elapsed().as_secs_f64();
        let received = sink.load(Ordering::Relaxed);
        // A fully chained pipeline hands chunks to its sink by a call: no latency to measure.
        let latency = metrics.latency_micros();
        let percentile = |q: f64| match latency.is_empty() {
            true => "-".to_string(),
            false => latency.value_at_quantile(q).to_string(),
        };
        println!(
            "{:<18} {:>12} {:>9.3} {:>14.0} {:>9} {:>9} {:>9} {:>10.1}",
            name,
            received,
            wall,
            rows as f64 / wall,
            percentile(0.5),
            percentile(0.99),
            percentile(0.999),
            peak_rss_mib().unwrap_or(f64::NAN),
        );
    }
}
