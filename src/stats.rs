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
            job.write_text(&mut out);
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
                            "operators": v.bundles.iter().map(|(operator, counts)| serde_json::json!({
                                "name": operator,
                                "mini_batch_bundles": counts.bundles,
                                "numLateRecordsDropped": counts.late_records_dropped,
                            })).collect::<Vec<_>>(),
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
                    "state_backend": job.state_backend,
                    "state": job.state.map(|s| serde_json::json!({
                        "disk_bytes": s.disk_bytes,
                        "peak_disk_bytes": s.peak_disk_bytes,
                        "cache_hits": s.cache_hits,
                        "cache_misses": s.cache_misses,
                        "cache_hit_rate": s.cache_hit_rate(),
                        "bytes_written": s.bytes_written,
                        "entries_written": s.entries_written,
                    })),
                    "checkpoints": job.checkpoints.map(|c| serde_json::json!({
                        "completed": c.completed,
                        "failed": c.failed,
                        "checkpointed_bytes": c.checkpointed_bytes,
                        "mean_checkpointed_bytes": c.mean_checkpointed_bytes(),
                        "last_checkpointed_bytes": c.last_checkpointed_bytes,
                        "last_state_bytes": c.last_state_bytes,
                        "max_state_bytes": c.max_state_bytes,
                    })),
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
