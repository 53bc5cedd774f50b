//! The Nexmark benchmark: q0–q22 of `benches/nexmark/queries/` (the `nexmark/nexmark`
//! repository's Flink SQL, unchanged) over weir's `nexmark` connector, one `weir run
//! --stats-json` process per query and parallelism.
//!
//! ```text
//! cargo bench --bench nexmark                                   # every query, 10 M events, p = 1
//! cargo bench --bench nexmark -- --events 1000000 --parallelism 1,2 --queries q0,q5
//! cargo bench --bench nexmark -- --json nexmark.json            # also every report as JSON
//! cargo bench --bench nexmark -- --events 1000000 --flink ~/.cache/weir-oracle/venv/bin/python
//! ```
//!
//! Per query it prints events/s (events over the process's wall time, start-up included),
//! events per CPU-second (the figure the Nexmark project publishes: events over the CPU seconds
//! of the whole process, generator included), peak RSS and the p50 / p99 source-to-sink
//! latency, with Apache Flink 2.3's events per CPU-second on this machine (its own generator,
//! V1 settings, parallelism 1) and the ratio. The `${…}` variables are set as the Nexmark
//! runner sets them: `TPS` 10 000 000, `EVENTS_NUM`, proportions 1 / 3 / 46.
//!
//! `--flink PYTHON` (a Python with PyFlink 2.3 and a JDK) also runs the file variant side by side
//! ([`side_by_side`]): the events written once as JSON, each query over them on weir and on
//! Apache Flink, for ratios of CPU and memory measured in one run.
//! `WEIR_BIN=PATH` runs another `weir` build (an earlier commit's, for a before and after).

#[path = "common/measure.rs"]
mod measure;
#[path = "nexmark/side_by_side.rs"]
mod side_by_side;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Apache Flink 2.3, parallelism 1, 10 M events, blackhole sink: events per CPU-second.
const FLINK: &[(&str, f64)] = &[
    ("q0", 410e3),
    ("q1", 420e3),
    ("q2", 416e3),
    ("q3", 336e3),
    ("q4", 140e3),
    ("q5", 199e3),
    ("q7", 103e3),
    ("q8", 320e3),
    ("q9", 96e3),
    ("q11", 259e3),
    ("q12", 293e3),
    ("q14", 430e3),
    ("q15", 237e3),
    ("q16", 119e3),
    ("q17", 213e3),
    ("q18", 193e3),
    ("q19", 143e3),
    ("q20", 146e3),
    ("q21", 245e3),
    ("q22", 328e3),
];

/// Every query but q6, which Flink cannot run either (an OVER window over retractions).
const QUERIES: &[&str] = &[
    "q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q9", "q10", "q11", "q12", "q13", "q14", "q15", "q16", "q17",
    "q18", "q19", "q20", "q21", "q22",
];

struct Run {
    query: String,
    parallelism: usize,
    events: u64,
    wall: f64,
    cpu: f64,
    peak_mb: f64,
    latency: [u64; 2],
    json: serde_json::Value,
}

/// The script of `query`: the table options of Flink's Nexmark setup (`config.sql`), the DDL, the
/// views and the query, with the Nexmark runner's variables.
fn script(query: &str, events: u64, dir: &Path) -> std::io::Result<String> {
    let queries = Path::new("benches/nexmark/queries");
    let mut text = std::fs::read_to_string("benches/nexmark/config.sql")? + "\n";
    for file in ["ddl_gen.sql", "ddl_views.sql", &format!("{query}.sql")] {
        text.push_str(&std::fs::read_to_string(queries.join(file))?);
        text.push('\n');
    }
    write_side_input(dir)?;
    Ok(substitute(&text, events, dir, None))
}

/// q13's side input at `${FLINK_HOME}/data/side_input.txt` under `dir`: 10 000 rows `i,i`
/// (the nexmark repository's SideInputGenerator default), written once.
fn write_side_input(dir: &Path) -> std::io::Result<()> {
    let side_input = dir.join("data/side_input.txt");
    if !side_input.exists() {
        let rows: String = (0..10_000).map(|i| format!("{i},{i}\n")).collect();
        std::fs::create_dir_all(dir.join("data"))?;
        std::fs::write(&side_input, rows)?;
    }
    Ok(())
}

/// `text` with the Nexmark runner's variables set: `TPS` 10 000 000, `EVENTS_NUM`, proportions
/// 1 / 3 / 46, the folders at `dir`; and the file variant's `EVENTS_PATH`.
fn substitute(text: &str, events: u64, dir: &Path, events_path: Option<&Path>) -> String {
    let variables = [
        ("${TPS}", "10000000".to_string()),
        ("${EVENTS_NUM}", events.to_string()),
        ("${PERSON_PROPORTION}", "1".into()),
        ("${AUCTION_PROPORTION}", "3".into()),
        ("${BID_PROPORTION}", "46".into()),
        ("${NEXMARK_TABLE}", "datagen".into()),
        ("${NEXMARK_DIR}", dir.display().to_string()),
        ("${SUBMIT_TIME}", "run".into()),
        ("${FLINK_HOME}", dir.display().to_string()),
        ("${EVENTS_PATH}", events_path.map(|p| p.display().to_string()).unwrap_or_default()),
    ];
    variables.iter().fold(text.to_string(), |t, (k, v)| t.replace(k, v))
}

/// The runner's folder of scripts, statistics and q10's files, removed when it ends.
fn work_dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("weir-nexmark-{}", std::process::id()))
}

fn run(query: &str, events: u64, parallelism: usize) -> Result<Run, String> {
    let dir = work_dir();
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let sql = dir.join(format!("{query}.sql"));
    std::fs::write(&sql, script(query, events, &dir).map_err(|e| format!("{query}: {e}"))?)
        .map_err(|e| e.to_string())?;
    let json_path = dir.join(format!("{query}-{parallelism}.json"));
    let started = Instant::now();
    let output = Command::new(weir_binary())
        .args(["run", &sql.display().to_string(), "-p", &parallelism.to_string()])
        .args(["--stats-json", &json_path.display().to_string()])
        .output()
        .map_err(|e| format!("{query}: {e}"))?;
    let wall = started.elapsed().as_secs_f64();
    if !output.status.success() {
        let error = String::from_utf8_lossy(&output.stderr);
        return Err(format!("{query} at parallelism {parallelism} failed: {}", error.trim()));
    }
    let text = std::fs::read_to_string(&json_path).map_err(|e| e.to_string())?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{query}: bad stats JSON: {e}"))?;
    let jobs = json["jobs"].as_array().cloned().unwrap_or_default();
    let latency = jobs.first().map_or([0; 2], |j| ["p50", "p99"].map(|k| j["latency_micros"][k].as_u64().unwrap_or(0)));
    Ok(Run {
        query: query.to_string(),
        parallelism,
        events: jobs.iter().filter_map(|j| j["rows_in"].as_u64()).sum(),
        wall,
        cpu: json["cpu_seconds"].as_f64().unwrap_or(0.0),
        peak_mb: json["peak_rss_bytes"].as_f64().unwrap_or(0.0) / (1024.0 * 1024.0),
        latency,
        json,
    })
}

fn print_table(runs: &[Run]) {
    println!(
        "{:<5} {:>2} {:>10} {:>7} {:>7} {:>10} {:>12} {:>8} {:>8} {:>8} | {:>12} {:>7}",
        "query",
        "p",
        "events",
        "wall s",
        "CPU s",
        "events/s",
        "ev/CPU-s",
        "peak MB",
        "p50 ms",
        "p99 ms",
        "Flink ev/CPU",
        "ratio"
    );
    for r in runs {
        let per_cpu = r.events as f64 / r.cpu.max(1e-9);
        let flink = FLINK.iter().find(|(q, _)| *q == r.query).map(|(_, f)| *f);
        let versus = match flink {
            Some(f) => format!("{f:>12.0} {:>6.1}×", per_cpu / f),
            None => format!("{:>12} {:>7}", "-", "-"),
        };
        println!(
            "{:<5} {:>2} {:>10} {:>7.2} {:>7.2} {:>10.0} {:>12.0} {:>8.1} {:>8.1} {:>8.1} | {versus}",
            r.query,
            r.parallelism,
            r.events,
            r.wall,
            r.cpu,
            r.events as f64 / r.wall,
            per_cpu,
            r.peak_mb,
            r.latency[0] as f64 / 1000.0,
            r.latency[1] as f64 / 1000.0,
        );
    }
}

/// The `weir` binary the runs start: `WEIR_BIN` when set (another build, for a before/after
/// in one run), else the one built with this benchmark.
fn weir_binary() -> String {
    std::env::var("WEIR_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_weir").to_string())
}

const USAGE: &str = "cargo bench --bench nexmark -- [--events N] [--parallelism 1,2] [--queries q0,q5] \
                     [--json FILE] [--flink PYTHON]";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return;
    }
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1).cloned());
    let events: u64 = value("--events").and_then(|v| v.parse().ok()).unwrap_or(10_000_000);
    let parallelisms: Vec<usize> = value("--parallelism")
        .map_or_else(|| vec![1], |v| v.split(',').filter_map(|p| p.trim().parse().ok()).collect());
    let queries: Vec<String> = value("--queries").map_or_else(
        || QUERIES.iter().map(|q| q.to_string()).collect(),
        |v| v.split(',').map(|q| q.trim().to_string()).collect(),
    );
    // The queries' paths are relative to the repository.
    let _ = std::env::set_current_dir(Path::new(env!("CARGO_MANIFEST_DIR")));
    if let Some(python) = value("--flink") {
        return side_by_side_run(python, events, &parallelisms, &queries);
    }
    let mut runs = Vec::new();
    let mut failed = Vec::new();
    for query in &queries {
        for &p in &parallelisms {
            match run(query, events, p) {
                Ok(r) => {
                    eprintln!("{query} p={p}: {:.2} s", r.wall);
                    runs.push(r);
                }
                Err(e) => {
                    eprintln!("{e}");
                    failed.push(format!("{query} p={p}"));
                }
            }
        }
    }
    println!(
        "Nexmark on weir, {events} events, {} cores; Flink 2.3 events per CPU-second at p = 1 from benches/README.md",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    print_table(&runs);
    if !failed.is_empty() {
        println!("failed: {}", failed.join(", "));
    }
    let _ = std::fs::remove_dir_all(work_dir());
    if let Some(path) = value("--json") {
        let all: Vec<serde_json::Value> = runs
            .iter()
            .map(|r| serde_json::json!({"query": r.query, "parallelism": r.parallelism, "events": r.events, "process_wall_seconds": r.wall, "cpu_seconds": r.cpu, "peak_rss_mb": r.peak_mb, "stats": r.json}))
            .collect();
        if let Err(e) = std::fs::write(&path, serde_json::to_string_pretty(&all).unwrap_or_default()) {
            eprintln!("{path}: {e}");
        }
    }
}

/// The file variant on weir and Flink ([`side_by_side`]).
fn side_by_side_run(python: String, events: u64, parallelisms: &[usize], queries: &[String]) {
    let setup = match side_by_side::Setup::new(python, events) {
        Ok(setup) => setup,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let mut pairs = Vec::new();
    for query in queries {
        for &p in parallelisms {
            match setup.run(query, p) {
                Ok(pair) => {
                    eprintln!("{query} p={p} done");
                    pairs.push(pair);
                }
                Err(e) => eprintln!("{query} p={p}: {e}"),
            }
        }
    }
    setup.print(&pairs);
}
