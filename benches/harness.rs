//! The load-test harness: runs the SQL scenarios of `benches/scenarios/` with `weir run
//! --stats-json` (one process per run, so memory and CPU are the run's own), over a parallelism
//! sweep, and prints one table with Apache Flink 2.3's figures beside weir's where they exist.
//!
//! ```text
//! cargo bench --bench harness                       # every scenario
//! cargo bench --bench harness -- group_agg          # scenarios whose name contains "group_agg"
//! cargo bench --bench harness -- --json out.json    # also write every result as JSON
//! ```
//!
//! See `benches/README.md` for the scenarios and the latest results.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use weir::connectors::api::{ConnectorFactory, FactoryContext};
use weir::connectors::options::TableOptions;
use weir::connectors::{
    ConnectorRegistry, LookupAbilities, LookupSource, MemoryLookupTable, ResolvedLookup, TableDescriptor,
};
use weir::runtime::{RuntimeConfig, Value};
use weir::session::Session;

/// Apache Flink 2.3 on this kind of machine (benches/README.md): script, parallelism, wall s,
/// CPU s, peak RSS MB.
const FLINK: &[(&str, usize, f64, f64, f64)] = &[
    ("stateless", 1, 18.2, 17.2, 1694.0),
    ("stateless", 2, 16.3, 17.7, 2479.0),
    ("group_agg", 1, 42.7, 41.8, 3328.0),
    ("group_agg", 2, 41.0, 44.3, 3507.0),
    ("group_agg_minibatch", 1, 58.0, 53.7, 4892.0),
    ("group_agg_minibatch", 2, 48.0, 48.8, 4339.0),
    ("tumble_window", 1, 24.6, 22.4, 1431.0),
    ("tumble_window", 2, 21.2, 23.7, 1885.0),
    ("regular_join", 1, 36.8, 59.6, 3061.0),
    ("regular_join", 2, 32.4, 59.4, 3011.0),
    ("interval_join", 1, 102.6, 177.5, 6612.0),
    ("interval_join", 2, 92.5, 176.7, 6494.0),
    ("topn", 1, 27.7, 41.7, 1563.0),
    ("topn", 2, 20.4, 32.2, 1835.0),
    ("over_agg", 1, 79.1, 129.0, 4966.0),
    ("over_agg", 2, 124.6, 141.5, 4499.0),
    ("group_agg_on_disk", 1, 36.8, 48.5, 886.0),
    ("group_agg_on_disk", 2, 34.9, 50.8, 868.0),
    ("regular_join_on_disk", 2, 116.3, 210.3, 1703.0),
];

/// Scenario name and the parallelisms it runs at.
const SCENARIOS: &[(&str, &[usize])] = &[
    ("stateless", &[1, 2, 4]),
    ("group_agg", &[1, 2, 4]),
    ("group_agg_minibatch", &[1, 2, 4]),
    ("group_agg_checkpoints", &[1, 2]),
    ("group_agg_ttl", &[1, 2]),
    ("group_agg_on_disk", &[1, 2]),
    ("regular_join_on_disk", &[2]),
    ("tumble_window", &[1, 2, 4]),
    ("regular_join", &[1, 2]),
    ("interval_join", &[1, 2]),
    ("topn", &[1, 2]),
    ("over_agg", &[1, 2]),
    ("sink_materializer", &[1, 2]),
    ("latency", &[1, 2]),
    ("lookup_join", &[1, 2]),
    ("merge_engine", &[1, 2]),
];

/// Scenarios that need the harness's own connectors run inside the harness's process.
const IN_HARNESS: &[&str] = &["lookup_join"];

/// The `bench-lookup` connector: a table of `rows` rows `[id, 'name-<id>']` (BIGINT, STRING)
/// that answers every lookup after `latency`.
struct BenchLookupFactory;

impl ConnectorFactory for BenchLookupFactory {
    fn identifier(&self) -> &'static str {
        "bench-lookup"
    }

    fn resolve_lookup(
        &self,
        _table: &TableDescriptor,
        options: &mut TableOptions,
        _ctx: &FactoryContext<'_>,
    ) -> weir::connectors::Result<Arc<dyn ResolvedLookup>> {
        let rows = options.parse::<i64>("rows", "a number of rows")?.unwrap_or(10_000);
        let latency = options.duration("latency")?.unwrap_or(Duration::from_millis(1));
        Ok(Arc::new(BenchLookupTable { rows, latency }))
    }
}

/// A `bench-lookup` table resolved for lookups.
struct BenchLookupTable {
    rows: i64,
    latency: Duration,
}

impl ResolvedLookup for BenchLookupTable {
    fn abilities(&self) -> LookupAbilities {
        LookupAbilities { supports_async: true }
    }

    fn create(&self) -> weir::connectors::Result<LookupSource> {
        let latency = self.latency;
        let table = MemoryLookupTable::new(
            (0..self.rows).map(|id| vec![Value::BigInt(id), Value::string(&format!("name-{id}"))]).collect(),
        )
        .with_latency(move |_| latency);
        Ok(LookupSource { provider: Arc::new(table), supports_async: true, cache: Default::default() })
    }
}

/// One run's figures, from its `--stats-json` report and the harness's own clock.
struct Run {
    scenario: String,
    parallelism: usize,
    /// Process start to exit.
    wall: f64,
    rows_in: u64,
    cpu: f64,
    peak_mb: f64,
    latency: [u64; 4],
    json: serde_json::Value,
}

/// Runs `script` in this process with the harness's connectors (the child side of a run).
fn run_in_process(script: &str, parallelism: usize, json_out: &str) -> Result<(), String> {
    let started = Instant::now();
    let sql = std::fs::read_to_string(script).map_err(|e| format!("{script}: {e}"))?;
    let mut registry = ConnectorRegistry::default();
    registry.register(Arc::new(BenchLookupFactory));
    let runtime = RuntimeConfig::default().with_parallelism(parallelism);
    let mut session = Session::new(runtime, registry, Box::new(std::io::sink()));
    session.execute_script(&sql).map_err(|e| format!("{script}: {}", e.error))?;
    let stats = weir::stats::RunStats {
        wall: started.elapsed(),
        usage: weir::runtime::report::ProcessUsage::now(),
        jobs: session.job_reports().to_vec(),
    };
    std::fs::write(json_out, stats.json()).map_err(|e| e.to_string())
}

fn run(scenario: &str, parallelism: usize) -> Result<Run, String> {
    let script = format!("benches/scenarios/{scenario}.sql");
    let json_path =
        std::env::temp_dir().join(format!("weir-bench-{}-{scenario}-{parallelism}.json", std::process::id()));
    let json_arg = json_path.display().to_string();
    let store_dir =
        std::env::temp_dir().join(format!("weir-bench-{}-{scenario}-{parallelism}-data", std::process::id()));
    let mut command = if IN_HARNESS.contains(&scenario) {
        let mut c = Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
        c.args(["--child", &script, &parallelism.to_string(), &json_arg]);
        c
    } else {
        let mut c = Command::new(env!("CARGO_BIN_EXE_weir"));
        c.args(["run", &script, "-p", &parallelism.to_string(), "--stats-json", &json_arg]);
        // Managed tables of each run start empty; checkpoints go beside them.
        c.args(["--set", &format!("table.store.path={}", store_dir.display())]);
        c.args(["--set", &format!("execution.checkpointing.dir={}", store_dir.join("checkpoints").display())]);
        c
    };
    let started = Instant::now();
    let output = command.output().map_err(|e| format!("{scenario}: {e}"))?;
    let wall = started.elapsed().as_secs_f64();
    if !output.status.success() {
        return Err(format!(
            "{scenario} at parallelism {parallelism} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let text = std::fs::read_to_string(&json_path).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&json_path);
    let _ = std::fs::remove_dir_all(&store_dir);
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{scenario}: bad stats JSON: {e}"))?;
    let jobs = json["jobs"].as_array().cloned().unwrap_or_default();
    let rows_in = jobs.iter().filter_map(|j| j["rows_in"].as_u64()).sum();
    let latency = jobs.first().map_or([0; 4], |j| {
        let l = &j["latency_micros"];
        ["p50", "p99", "p999", "max"].map(|k| l[k].as_u64().unwrap_or(0))
    });
    Ok(Run {
        scenario: scenario.to_string(),
        parallelism,
        wall,
        rows_in,
        cpu: json["cpu_seconds"].as_f64().unwrap_or(0.0),
        peak_mb: json["peak_rss_bytes"].as_f64().unwrap_or(0.0) / (1024.0 * 1024.0),
        latency,
        json,
    })
}

fn micros(us: u64) -> String {
    if us >= 10_000 {
        format!("{:.0}ms", us as f64 / 1000.0)
    } else if us >= 1000 {
        format!("{:.1}ms", us as f64 / 1000.0)
    } else {
        format!("{us}µs")
    }
}

fn print_table(runs: &[Run]) {
    println!(
        "{:<21} {:>2} {:>7} {:>10} {:>7} {:>8} {:>7} {:>7} {:>7} {:>7} | {:>8} {:>9} {:>8} {:>7}",
        "scenario",
        "p",
        "wall s",
        "rows/s",
        "CPU s",
        "peak MB",
        "p50",
        "p99",
        "p99.9",
        "max",
        "Flink s",
        "Flink r/s",
        "× rows/s",
        "mem %"
    );
    for r in runs {
        let rate = r.rows_in as f64 / r.wall;
        let flink = FLINK.iter().find(|(s, p, ..)| *s == r.scenario && *p == r.parallelism);
        let versus = match flink {
            Some((_, _, wall, _, rss)) => {
                let flink_rate = r.rows_in as f64 / wall;
                format!("{wall:>8.1} {flink_rate:>9.0} {:>8.1} {:>6.1}%", rate / flink_rate, r.peak_mb / rss * 100.0)
            }
            None => format!("{:>8} {:>9} {:>8} {:>7}", "-", "-", "-", "-"),
        };
        println!(
            "{:<21} {:>2} {:>7.2} {:>10.0} {:>7.2} {:>8.1} {:>7} {:>7} {:>7} {:>7} | {versus}",
            r.scenario,
            r.parallelism,
            r.wall,
            rate,
            r.cpu,
            r.peak_mb,
            micros(r.latency[0]),
            micros(r.latency[1]),
            micros(r.latency[2]),
            micros(r.latency[3]),
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        let [script, parallelism, json] = [1, 2, 3].map(|i| args.get(i).cloned().unwrap_or_default());
        if let Err(e) = run_in_process(&script, parallelism.parse().unwrap_or(1), &json) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    // The scenarios' paths are relative to the repository.
    let _ = std::env::set_current_dir(Path::new(env!("CARGO_MANIFEST_DIR")));
    let json_out = args.iter().position(|a| a == "--json").and_then(|i| args.get(i + 1).cloned());
    let filter = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--json"))
        .map(|(_, a)| a.clone())
        .unwrap_or_default();
    let mut runs = Vec::new();
    for (scenario, parallelisms) in SCENARIOS.iter().filter(|(s, _)| s.contains(&filter)) {
        for &p in *parallelisms {
            match run(scenario, p) {
                Ok(r) => {
                    eprintln!("{scenario} p={p}: {:.2} s", r.wall);
                    runs.push(r);
                }
                Err(e) => {
                    eprintln!("{e}");
                    std::process::exit(1);
                }
            }
        }
    }
    println!(
        "weir load test, {} cores; Flink 2.3 figures from benches/README.md",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    print_table(&runs);
    if let Some(path) = json_out {
        let all: Vec<serde_json::Value> = runs
            .iter()
            .map(|r| serde_json::json!({"scenario": r.scenario, "parallelism": r.parallelism, "process_wall_seconds": r.wall, "stats": r.json}))
            .collect();
        if let Err(e) = std::fs::write(&path, serde_json::to_string_pretty(&all).unwrap_or_default()) {
            eprintln!("{path}: {e}");
        }
    }
}
