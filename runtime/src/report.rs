//! What a finished job did, summed from its subtasks' metrics: wall time, rows read from its
//! sources and written by its sinks, source-to-sink latency percentiles, and per vertex (chain)
//! rows in and out and time busy or backpressured. The process's CPU time and peak memory
//! come from [`ProcessUsage`].

use std::fmt::Write;
use std::time::Duration;

use crate::checkpoint::stats::CheckpointStats;
use crate::metrics::{JobMetrics, OperatorCounts};
use crate::state::StateSummary;

/// Latency percentiles in microseconds, over every row that reached a sink.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LatencySummary {
    /// Rows measured.
    pub count: u64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
}

/// One vertex (a chain of operators) summed over its subtasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VertexReport {
    /// The chain's name, operators joined by ` -> `.
    pub name: String,
    /// Its parallelism.
    pub parallelism: usize,
    /// Rows its source produced (0 without a source).
    pub records_read: u64,
    /// Rows received on its input channels.
    pub records_in: u64,
    /// Rows sent downstream.
    pub records_out: u64,
    /// Rows handed to its last operator (at a sink: the rows written).
    pub records_into_last: u64,
    /// Time its subtasks spent running operators, summed.
    pub busy: Duration,
    /// Time its subtasks spent waiting for room downstream, summed.
    pub backpressured: Duration,
    /// Mini-batch bundles flushed and late rows dropped by each of its operators that counted any, summed.
    pub bundles: Vec<(String, OperatorCounts)>,
}

/// A finished job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobReport {
    /// What the job runs (e.g. `INSERT INTO snk`).
    pub name: String,
    /// From start to end.
    pub wall: Duration,
    /// Rows its sources produced.
    pub rows_in: u64,
    /// Rows its sinks wrote.
    pub rows_out: u64,
    /// Source-to-sink latency.
    pub latency: LatencySummary,
    /// Per vertex, in deployment order.
    pub vertices: Vec<VertexReport>,
    /// Flink's name of the job's state backend.
    pub state_backend: &'static str,
    /// What its on-disk states held at the end and did (none with state on the heap).
    pub state: Option<StateSummary>,
    /// Its checkpoints (none when it took none).
    pub checkpoints: Option<CheckpointSummary>,
}

/// What a job's checkpoints wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckpointSummary {
    /// Checkpoints completed.
    pub completed: u64,
    /// Checkpoints failed.
    pub failed: u64,
    /// Bytes written for the completed ones, summed.
    pub checkpointed_bytes: u64,
    /// Bytes written for the newest completed one.
    pub last_checkpointed_bytes: u64,
    /// Bytes of state the newest completed one holds.
    pub last_state_bytes: u64,
    /// The most bytes of state a completed one held.
    pub max_state_bytes: u64,
}

impl CheckpointSummary {
    /// The summary of `stats`, when any checkpoint ended.
    pub fn of(stats: &CheckpointStats) -> Option<Self> {
        (stats.completed + stats.failed > 0).then(|| CheckpointSummary {
            completed: stats.completed,
            failed: stats.failed,
            checkpointed_bytes: stats.checkpointed_bytes,
            last_checkpointed_bytes: stats.latest_completed.as_ref().map_or(0, |c| c.checkpointed_size),
            last_state_bytes: stats.latest_completed.as_ref().map_or(0, |c| c.state_size),
            max_state_bytes: stats.max_state_bytes,
        })
    }

    /// Bytes written per completed checkpoint, on average.
    pub fn mean_checkpointed_bytes(&self) -> u64 {
        self.checkpointed_bytes.checked_div(self.completed).unwrap_or(0)
    }
}

impl JobReport {
    /// The report of a job named `name` that ran for `wall`, from its metrics.
    pub fn new(name: impl Into<String>, wall: Duration, metrics: &JobMetrics) -> Self {
        let mut vertices: Vec<VertexReport> = Vec::new();
        let (mut rows_in, mut rows_out) = (0, 0);
        for snapshot in metrics.snapshot() {
            let s = &snapshot.counters;
            if s.is_source {
                rows_in += s.records_read;
            }
            if s.is_sink {
                rows_out += s.records_into_last;
            }
            let at = match vertices.iter().position(|v| v.name == snapshot.name) {
                Some(at) => at,
                None => {
                    vertices.push(VertexReport {
                        name: snapshot.name.clone(),
                        parallelism: snapshot.parallelism,
                        records_read: 0,
                        records_in: 0,
                        records_out: 0,
                        records_into_last: 0,
                        busy: Duration::ZERO,
                        backpressured: Duration::ZERO,
                        bundles: Vec::new(),
                    });
                    vertices.len() - 1
                }
            };
            let v = &mut vertices[at];
            v.records_read += s.records_read;
            v.records_in += s.records_in;
            v.records_out += s.records_out;
            v.records_into_last += s.records_into_last;
            v.busy += s.busy;
            v.backpressured += s.backpressured;
            for (operator, bundles) in &snapshot.bundles {
                match v.bundles.iter_mut().find(|(name, _)| name == operator) {
                    Some((_, total)) => total.add(bundles),
                    None => v.bundles.push((operator.clone(), *bundles)),
                }
            }
        }
        let histogram = metrics.latency_micros();
        let latency = if histogram.is_empty() {
            LatencySummary::default()
        } else {
            LatencySummary {
                count: histogram.len(),
                p50: histogram.value_at_quantile(0.5),
                p99: histogram.value_at_quantile(0.99),
                p999: histogram.value_at_quantile(0.999),
                max: histogram.max(),
            }
        };
        JobReport {
            name: name.into(),
            wall,
            rows_in,
            rows_out,
            latency,
            vertices,
            state_backend: metrics.state_backend(),
            state: metrics.state(),
            checkpoints: None,
        }
    }

    /// The report with what the job's checkpoints wrote (`stats` of its checkpoints).
    pub fn with_checkpoints(mut self, stats: &CheckpointStats) -> Self {
        self.checkpoints = CheckpointSummary::of(stats);
        self
    }

    /// Rows in per second of wall time.
    pub fn rows_in_per_second(&self) -> f64 {
        per_second(self.rows_in, self.wall)
    }

    /// Rows out per second of wall time.
    pub fn rows_out_per_second(&self) -> f64 {
        per_second(self.rows_out, self.wall)
    }

    /// Appends the report as text for people, each line indented by two spaces: wall time and
    /// rows, latency, then a line per vertex (parallelism, rows read / in / out, seconds busy and
    /// backpressured) followed by its operators' mini-batch bundles and late rows dropped;
    /// then the on-disk state and the checkpoints, when there are any.
    pub fn write_text(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "  wall {:.2} s, rows in {} ({}), rows out {} ({})",
            self.wall.as_secs_f64(),
            self.rows_in,
            rate(self.rows_in_per_second()),
            self.rows_out,
            rate(self.rows_out_per_second())
        );
        let l = &self.latency;
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
        for v in &self.vertices {
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
            for (operator, counts) in &v.bundles {
                if counts.bundles > 0 {
                    let _ = writeln!(
                        out,
                        "       {operator}: {} mini-batch bundles, {:.1} rows and {:.1} keys per bundle",
                        counts.bundles,
                        counts.rows_per_bundle(),
                        counts.keys_per_bundle()
                    );
                }
                if counts.late_records_dropped > 0 {
                    let _ = writeln!(out, "       {operator}: numLateRecordsDropped {}", counts.late_records_dropped);
                }
            }
        }
        if let Some(s) = &self.state {
            let hit_rate = s.cache_hit_rate().map_or("no block read".to_string(), |r| format!("{:.1} %", r * 100.0));
            let _ = writeln!(
                out,
                "  state ({}): at most {} on disk, block cache hit rate {hit_rate} ({} of {} reads), \
                 {} written into runs, {} entries moved from memory",
                self.state_backend,
                bytes(s.peak_disk_bytes),
                s.cache_hits,
                s.cache_hits + s.cache_misses,
                bytes(s.bytes_written),
                s.entries_written
            );
        }
        if let Some(c) = &self.checkpoints {
            let _ = writeln!(
                out,
                "  checkpoints: {} completed, {} failed; {} written per checkpoint on average, for state of up to {}; \
                 the last wrote {} of {} state",
                c.completed,
                c.failed,
                bytes(c.mean_checkpointed_bytes()),
                bytes(c.max_state_bytes),
                bytes(c.last_checkpointed_bytes),
                bytes(c.last_state_bytes)
            );
        }
    }
}

/// A size for people: `512 B`, `3.4 KB`, `12.0 MB`, `1.25 GB`.
fn bytes(n: u64) -> String {
    match n as f64 {
        b if b >= 1e9 => format!("{:.2} GB", b / 1e9),
        b if b >= 1e6 => format!("{:.1} MB", b / 1e6),
        b if b >= 1e3 => format!("{:.1} KB", b / 1e3),
        _ => format!("{n} B"),
    }
}

/// A rate for people: `1.25 M/s`, `3.4 K/s`, `12/s`.
fn rate(per_second: f64) -> String {
    match per_second {
        r if r >= 1e6 => format!("{:.2} M/s", r / 1e6),
        r if r >= 1e3 => format!("{:.1} K/s", r / 1e3),
        r => format!("{r:.0}/s"),
    }
}

/// Microseconds for people: `1.20 s`, `3.45 ms`, `12 µs`.
fn micros(us: u64) -> String {
    match us {
        u if u >= 1_000_000 => format!("{:.2} s", u as f64 / 1e6),
        u if u >= 1_000 => format!("{:.2} ms", u as f64 / 1e3),
        u => format!("{u} µs"),
    }
}

fn per_second(rows: u64, wall: Duration) -> f64 {
    let seconds = wall.as_secs_f64();
    if seconds > 0.0 {
        rows as f64 / seconds
    } else {
        0.0
    }
}

/// CPU time and peak memory of this process so far, from `/proc/self` (zero where there is no
/// `/proc`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcessUsage {
    /// CPU time in user mode, all threads.
    pub user: Duration,
    /// CPU time in the kernel, all threads.
    pub system: Duration,
    /// Peak resident set size in bytes (`VmHWM`).
    pub peak_rss_bytes: u64,
}

impl ProcessUsage {
    /// The usage now.
    pub fn now() -> Self {
        // utime and stime are fields 14 and 15 of /proc/self/stat, in clock ticks of 1/100 s
        // (USER_HZ, 100 on every Linux platform weir runs on); the command name (field 2) may
        // hold spaces, so fields are counted after its closing parenthesis.
        let ticks = std::fs::read_to_string("/proc/self/stat").ok().and_then(|stat| {
            let rest = &stat[stat.rfind(')')? + 2..];
            let fields: Vec<&str> = rest.split(' ').collect();
            Some((fields.get(11)?.parse::<u64>().ok()?, fields.get(12)?.parse::<u64>().ok()?))
        });
        let (user, system) = ticks.unwrap_or((0, 0));
        let peak_kb = std::fs::read_to_string("/proc/self/status").ok().and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        });
        ProcessUsage {
            user: Duration::from_millis(user * 10),
            system: Duration::from_millis(system * 10),
            peak_rss_bytes: peak_kb.unwrap_or(0) * 1024,
        }
    }

    /// User plus system CPU time.
    pub fn cpu(&self) -> Duration {
        self.user + self.system
    }
}
