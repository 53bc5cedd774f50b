//! Streaming merges into a managed table: an unbounded datagen source (100 000 keys, five
//! aggregated fields) merged by `INSERT INTO … SELECT` for a fixed time, at parallelism 1 and 2;
//! reports rows merged per second (read back from the table) and the run's CPU time.
//!
//! ```text
//! cargo bench --bench managed
//! ```

use std::time::{Duration, Instant};

use weir::connectors::ConnectorRegistry;
use weir::planner::parser::parse_script;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

const RUN: Duration = Duration::from_secs(5);

#[derive(Clone, Default)]
struct Output(std::sync::Arc<parking_lot::Mutex<Vec<u8>>>);

impl std::io::Write for Output {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn cpu_seconds() -> f64 {
    weir::runtime::report::ProcessUsage::now().cpu().as_secs_f64()
}

fn run(parallelism: usize) -> (f64, f64) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = Output::default();
    let runtime = RuntimeConfig::default().with_parallelism(parallelism);
    let mut session = Session::new(runtime, ConnectorRegistry::default(), Box::new(out.clone()));
    session.set("table.store.path", dir.path().to_str().expect("a UTF-8 path")).expect("the option is valid");
    let script = "
        CREATE TABLE events (k BIGINT, amount BIGINT, peak INT, low INT, flagged BOOLEAN, tag STRING) WITH (
          'connector' = 'datagen', 'rows-per-second' = '1000000000',
          'fields.k.min' = '1', 'fields.k.max' = '100000', 'fields.tag.length' = '4');
        CREATE TABLE totals (k BIGINT, amount BIGINT, peak INT, low INT, flagged BOOLEAN, tag STRING, n BIGINT,
          PRIMARY KEY (k) NOT ENFORCED) WITH (
          'table.merge-engine' = 'aggregation', 'fields.amount.agg' = 'sum', 'fields.peak.agg' = 'max',
          'fields.low.agg' = 'min', 'fields.flagged.agg' = 'bool_or', 'fields.n.agg' = 'sum');
        INSERT INTO totals SELECT k, amount, peak, low, flagged, tag, CAST(1 AS BIGINT) FROM events;";
    let cpu = cpu_seconds();
    let started = Instant::now();
    for statement in parse_script(script).expect("the script parses") {
        session.execute(&statement).expect("the statement runs");
    }
    std::thread::sleep(RUN);
    session.cancel_all();
    let _cancelled = session.wait_all();
    let wall = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu;
    session.set("sql-client.execution.result-mode", "changelog").expect("the option is valid");
    session.set("execution.runtime-mode", "batch").expect("the option is valid");
    for statement in parse_script("SELECT SUM(n) FROM totals;").expect("the query parses") {
        session.execute(&statement).expect("the query runs");
    }
    let text = String::from_utf8(out.0.lock().clone()).expect("UTF-8 output");
    let merged: f64 =
        text.lines().filter_map(|l| l.strip_prefix("+I[")?.strip_suffix(']')?.parse().ok()).next_back().unwrap_or(0.0);
    (merged / wall, cpu)
}

fn main() {
    for parallelism in [1, 2] {
        let (rate, cpu) = run(parallelism);
        println!(
            "streaming merges into an aggregation table, p={parallelism}: {:.0} rows/s ({:.1} CPU s in {} s)",
            rate,
            cpu,
            RUN.as_secs()
        );
    }
}
