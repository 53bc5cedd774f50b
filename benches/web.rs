//! What serving the REST API, the dashboard and Prometheus costs a running job: each scenario
//! of `benches/scenarios/` runs with `weir run`, alternately without a web server and with
//! `rest.port` set while a client polls what the dashboard polls (the job, each vertex's
//! metrics, its checkpoints) and `/metrics` every 100 ms (ten times the dashboard's rate).
//! Also runs with the server and no client. Prints rows/s of each and the ratios to the run
//! without a server, per scenario, the median of the runs.
//!
//! ```text
//! cargo bench --bench web                      # group_agg, tumble_window, regular_join; 5 runs each way
//! cargo bench --bench web -- tumble_window 3   # a scenario, and how many runs each way
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn get(at: SocketAddr, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(at).ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: weir\r\nConnection: close\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    text.split_once("\r\n\r\n").map(|(_, body)| body.to_string())
}

/// The values of `"key":"value"` pairs named `key` in `json` (enough for ids).
fn string_values(json: &str, key: &str) -> Vec<String> {
    let pattern = format!("\"{key}\":\"");
    json.match_indices(&pattern)
        .filter_map(|(at, _)| json[at + pattern.len()..].split('"').next().map(str::to_string))
        .collect()
}

/// Polls the dashboard's endpoints and `/metrics` at `at` until `done`; counts the requests.
fn poll(at: SocketAddr, done: &AtomicBool, requests: &AtomicU64) {
    while !done.load(Ordering::Acquire) {
        if let Some(jobs) = get(at, "/jobs") {
            for jid in string_values(&jobs, "id") {
                let Some(job) = get(at, &format!("/jobs/{jid}")) else { continue };
                let vertices: Vec<String> = string_values(&job, "id").into_iter().filter(|id| *id != jid).collect();
                for vid in vertices {
                    let _ = get(
                        at,
                        &format!("/jobs/{jid}/vertices/{vid}/metrics?get=0.numRecordsIn,0.busyTimeMsPerSecond"),
                    );
                    let _ = get(at, &format!("/jobs/{jid}/vertices/{vid}/watermarks"));
                    requests.fetch_add(2, Ordering::Relaxed);
                }
                let _ = get(at, &format!("/jobs/{jid}/checkpoints"));
                requests.fetch_add(2, Ordering::Relaxed);
            }
        }
        let _ = get(at, "/metrics");
        requests.fetch_add(2, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// How a run is watched.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Watch {
    /// No web server.
    Off,
    /// `rest.port` set, no client.
    Served,
    /// `rest.port` set and a client polling.
    Polled,
}

/// One run of `scenario`: its rows in per second (from `--stats-json`), and the requests served.
fn run(weir: &str, scenario: &str, watch: Watch) -> (f64, u64) {
    let served = watch != Watch::Off;
    let stats = std::env::temp_dir().join(format!("weir-web-bench-{}.json", std::process::id()));
    let mut command = Command::new(weir);
    command.args(["run", scenario, "-p", "2", "--stats-json", stats.to_str().unwrap_or("stats.json")]);
    if served {
        command.args(["--set", "rest.port=0"]);
    }
    let mut child = command.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("weir runs");
    let done = Arc::new(AtomicBool::new(false));
    let requests = Arc::new(AtomicU64::new(0));
    let mut poller = None;
    let stderr = child.stderr.take().expect("piped");
    let mut lines = BufReader::new(stderr).lines();
    if watch == Watch::Polled {
        let address = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| {
                l.strip_prefix("Web frontend listening at http://").map(|a| a.trim_end_matches('.').to_string())
            })
            .and_then(|a| a.parse::<SocketAddr>().ok())
            .expect("weir says where it serves");
        let (done, requests) = (Arc::clone(&done), Arc::clone(&requests));
        poller = Some(std::thread::spawn(move || poll(address, &done, &requests)));
    }
    lines.for_each(drop);
    assert!(child.wait().expect("weir ends").success(), "weir run {scenario} failed");
    done.store(true, Ordering::Release);
    if let Some(poller) = poller {
        let _ = poller.join();
    }
    let json = std::fs::read_to_string(&stats).expect("the stats were written");
    let rate = json
        .split("\"rows_in_per_second\":")
        .nth(1)
        .and_then(|rest| rest.split([',', '}']).next())
        .and_then(|n| n.trim().parse().ok())
        .expect("rows_in_per_second in the stats");
    (rate, requests.load(Ordering::Relaxed))
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let scenarios: Vec<&str> = match args.first().map(String::as_str) {
        Some(name) if name.parse::<usize>().is_err() => vec![name],
        _ => vec!["group_agg", "tumble_window", "regular_join"],
    };
    let runs: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(5);
    let status = Command::new("cargo").args(["build", "--release", "--bin", "weir"]).status().expect("cargo runs");
    assert!(status.success(), "weir builds");
    let weir = concat!(env!("CARGO_MANIFEST_DIR"), "/target/release/weir");
    println!("| scenario | no web server, rows/s | rest.port, no client | ratio | rest.port, client polling | ratio | requests served |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for scenario in scenarios {
        let path = format!("{}/benches/scenarios/{scenario}.sql", env!("CARGO_MANIFEST_DIR"));
        let (mut without, mut idle, mut with, mut requests) = (Vec::new(), Vec::new(), Vec::new(), 0);
        for _ in 0..runs {
            without.push(run(weir, &path, Watch::Off).0);
            idle.push(run(weir, &path, Watch::Served).0);
            let (rate, served) = run(weir, &path, Watch::Polled);
            with.push(rate);
            requests += served;
        }
        let (without, idle, with) = (median(without), median(idle), median(with));
        println!(
            "| {scenario} | {without:.0} | {idle:.0} | {:.3} | {with:.0} | {:.3} | {requests} |",
            idle / without,
            with / without
        );
    }
}
