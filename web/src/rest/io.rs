//! Flink's I/O metrics of subtasks and vertices, as `/jobs/:jid` and the vertex details write
//! them: records in and out as the task's `numRecordsIn`/`numRecordsOut` count them (as in Flink
//! since 1.19, a source's records in are the rows it read and a sink's records out the rows it
//! wrote, besides records received from and sent to other vertices), bytes (0: weir's exchanges
//! hand chunks over in memory, never serialized), and the milliseconds spent busy,
//! back-pressured and idle so far.

use std::sync::Arc;

use serde_json::{json, Value};
use weir_runtime::jobs::{JobInfo, VertexInfo};
use weir_runtime::metrics::SubtaskMetrics;

use super::duration;

/// The I/O of one subtask, or of a vertex's subtasks summed.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Io {
    read_records: u64,
    write_records: u64,
    busy_ms: f64,
    backpressured_ms: f64,
    idle_ms: f64,
}

impl Io {
    /// The I/O of `subtask` of `job`.
    pub(crate) fn of(job: &JobInfo, subtask: &Arc<SubtaskMetrics>) -> Io {
        let c = subtask.counters();
        let busy_ms = c.busy.as_secs_f64() * 1000.0;
        let backpressured_ms = c.backpressured.as_secs_f64() * 1000.0;
        Io {
            read_records: c.task_records_in(),
            write_records: c.task_records_out(),
            busy_ms,
            backpressured_ms,
            idle_ms: (duration(job) as f64 - busy_ms - backpressured_ms).max(0.0),
        }
    }

    /// The I/O of every subtask of `vertex`.
    pub(crate) fn of_subtasks(job: &JobInfo, vertex: &VertexInfo) -> Vec<Io> {
        vertex.subtasks.iter().map(|s| Io::of(job, s)).collect()
    }

    /// The I/O of `vertex`: its subtasks' summed.
    pub(crate) fn of_vertex(job: &JobInfo, vertex: &VertexInfo) -> Io {
        Io::of_subtasks(job, vertex).iter().fold(Io::default(), |sum, io| Io {
            read_records: sum.read_records + io.read_records,
            write_records: sum.write_records + io.write_records,
            busy_ms: sum.busy_ms + io.busy_ms,
            backpressured_ms: sum.backpressured_ms + io.backpressured_ms,
            idle_ms: sum.idle_ms + io.idle_ms,
        })
    }

    /// Flink's `metrics` object.
    pub(crate) fn json(&self) -> Value {
        json!({
            "read-bytes": 0, "read-bytes-complete": true,
            "write-bytes": 0, "write-bytes-complete": true,
            "read-records": self.read_records, "read-records-complete": true,
            "write-records": self.write_records, "write-records-complete": true,
            "accumulated-backpressured-time": self.backpressured_ms as i64,
            "accumulated-idle-time": self.idle_ms as i64,
            "accumulated-busy-time": self.busy_ms,
        })
    }

    /// Each metric's value.
    fn values(&self) -> [(&'static str, f64); 7] {
        [
            ("read-bytes", 0.0),
            ("write-bytes", 0.0),
            ("read-records", self.read_records as f64),
            ("write-records", self.write_records as f64),
            ("accumulated-backpressured-time", self.backpressured_ms),
            ("accumulated-idle-time", self.idle_ms),
            ("accumulated-busy-time", self.busy_ms),
        ]
    }
}

/// Flink's aggregate of values over subtasks: `min`, `max`, `avg`, `sum`, `median`, `p25`,
/// `p75`, `p95` (whole numbers, as Flink writes them).
pub(crate) fn aggregate(values: &[f64]) -> Value {
    if values.is_empty() {
        return json!({"min": 0, "max": 0, "avg": 0, "sum": 0, "median": 0, "p25": 0, "p75": 0, "p95": 0});
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize] as i64;
    let sum: f64 = sorted.iter().sum();
    json!({
        "min": sorted[0] as i64,
        "max": sorted[sorted.len() - 1] as i64,
        "avg": (sum / sorted.len() as f64) as i64,
        "sum": sum as i64,
        "median": at(0.5),
        "p25": at(0.25),
        "p75": at(0.75),
        "p95": at(0.95),
    })
}

/// Each metric of `ios` aggregated over them, as the vertex details' `aggregated.metrics`.
pub(crate) fn aggregated_metrics(ios: &[Io]) -> Value {
    let rows: Vec<[(&str, f64); 7]> = ios.iter().map(Io::values).collect();
    let mut metrics = serde_json::Map::new();
    for (i, (name, _)) in Io::default().values().iter().enumerate() {
        let values: Vec<f64> = rows.iter().map(|row| row[i].1).collect();
        metrics.insert(name.to_string(), aggregate(&values));
    }
    Value::Object(metrics)
}

/// Milliseconds a subtask spent in each state before running, and running: weir deploys every
/// subtask at once, so it has run for the job's duration.
pub(crate) fn status_duration(job: &JobInfo) -> Value {
    json!({"CREATED": 0, "SCHEDULED": 0, "DEPLOYING": 0, "INITIALIZING": 0, "RUNNING": duration(job)})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aggregate_gives_flinks_statistics() {
        let a = aggregate(&[10.0, 40.0, 20.0, 30.0]);
        assert_eq!(
            (a["min"].as_i64(), a["max"].as_i64(), a["sum"].as_i64(), a["avg"].as_i64()),
            (Some(10), Some(40), Some(100), Some(25))
        );
        assert_eq!(a["p95"].as_i64(), Some(40));
    }
}
