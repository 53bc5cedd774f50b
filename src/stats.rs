//! `weir run --stats`: what a run of a script did, as text for people (standard error) and as
//! JSON for the load-test harness (`--stats-json FILE`).

use std::fmt::Write;
use std::time::Duration;

use weir_runtime::report::{JobReport, ProcessUsage};

/// The whole run: its jobs and what the process used.
#[derive(Debug, Clone)]
pub struct RunStats {
    /// From the start of the script to the end of its last job.
    pub wall: Duration,
    /// CPU time and peak memory of the process.
    pub usage: ProcessUsage,
    /// Every job that finished, in the order they ended.
    pub jobs: Vec<JobReport>,
}

fn rate(per_second: f64) -> String {
    match per_second {
        r if r >= 1e6 => format!("{:.2} M/s", r / 1e6),
        r if r >= 1e3 => format!("{:.1} K/s", r / 1e3),
        r => format!("{r:.0}/s"),
    }
}

fn micros(us: u64) -> String {
    match us {
        u if u >= 1_000_000 => format!("{:.2} s", u as f64 / 1e6),
        u if u >= 1_000 => format!("{:.2} ms", u as f64 / 1e3),
        u => format!("{u} µs"),
    }
}

impl RunStats {
    /// The report as text: the run, then each job with its latency and its vertices.
    pub fn text(&self) -> String {
        let mut out = String::from("== weir stats ==\n");
        let _ = writeln!(
            out,
            "run: {:.2} s wall, {:.2} s CPU (user {:.2} s, system {:.2} s), peak memory {:.1} MB",
            self.wall.as_secs_f64(),
            self.usage.cpu().as_secs_f64(),
            self.usage.user.as_secs_f64(),
            self.usage.system.as_secs_f64(),
            self.usage.peak_rss_bytes as f64 / (1024.0 * 1024.0)
        );
        for (i, job) in self.jobs.iter().enumerate() {
            let _ = writeln!(out, "job {}: {}", i + 1, job.name);
            let _ = writeln!(
                out,
                "  wall {:.2} s, rows in {} ({}), rows out {} ({})",
                job.wall.as_secs_f64(),
                job.rows_in,
                rate(job.rows_in_per_second()),
                job.rows_out,
                rate(job.rows_out_per_second())
            );
            let l = &job.latency;
            if l.count > 0 {
                let _ = writeln!(
                    out,
                    "  latency source → sink: p50 {}, p99 {}, p99.9 {}, max {} ({} rows)",
                    micros(l.p50),
                    micros(l.p99),
                    micros(l.p999),
                    micros(l.max),
                    l.count
                );
            }
            let _ = writeln!(
                out,
                "  {:>4} {:>12} {:>12} {:>12} {:>9} {:>9}  vertex",
                "par", "read", "rows in", "rows out", "busy s", "backpr s"
            );
            for v in &job.vertices {
                let out_rows = if v.records_out == 0 { v.records_into_last } else { v.records_out };
                let _ = writeln!(
                    out,
                    "  {:>4} {:>12} {:>12} {:>12} {:>9.2} {:>9.2}  {}",
                    v.parallelism,
                    v.records_read,
                    v.records_in,
                    out_rows,
                    v.busy.as_secs_f64(),
                    v.backpressured.as_secs_f64(),
                    v.name
                );
            }
        }
        out
    }

    /// The report as JSON (field names in `snake_case`, times in seconds, latency in µs).
    pub fn json(&self) -> String {
        let jobs: Vec<serde_json::Value> = self
            .jobs
            .iter()
            .map(|job| {
                let vertices: Vec<serde_json::Value> = job
                    .vertices
                    .iter()
                    .map(|v| {
                        serde_json::json!({
                            "name": v.name,
                            "parallelism": v.parallelism,
                            "records_read": v.records_read,
                            "records_in": v.records_in,
                            "records_out": v.records_out,
                            "records_into_last": v.records_into_last,
                            "busy_seconds": v.busy.as_secs_f64(),
                            "backpressured_seconds": v.backpressured.as_secs_f64(),
                        })
                    })
                    .collect();
                serde_json::json!({
                    "name": job.name,
                    "wall_seconds": job.wall.as_secs_f64(),
                    "rows_in": job.rows_in,
                    "rows_out": job.rows_out,
                    "rows_in_per_second": job.rows_in_per_second(),
                    "rows_out_per_second": job.rows_out_per_second(),
                    "latency_micros": {
                        "count": job.latency.count,
                        "p50": job.latency.p50,
                        "p99": job.latency.p99,
                        "p999": job.latency.p999,
                        "max": job.latency.max,
                    },
                    "vertices": vertices,
                })
            })
            .collect();
        let run = serde_json::json!({
            "wall_seconds": self.wall.as_secs_f64(),
            "cpu_seconds": self.usage.cpu().as_secs_f64(),
            "user_cpu_seconds": self.usage.user.as_secs_f64(),
            "system_cpu_seconds": self.usage.system.as_secs_f64(),
            "peak_rss_bytes": self.usage.peak_rss_bytes,
            "jobs": jobs,
        });
        serde_json::to_string_pretty(&run).unwrap_or_default()
    }
}
