//! What each metric of a job and of a subtask is now, under Flink's names: one definition that
//! the REST API and the Prometheus endpoint both read.

use std::sync::Arc;

use weir_runtime::element::NO_WATERMARK;
use weir_runtime::jobs::{JobInfo, JobState};
use weir_runtime::metrics::SubtaskMetrics;

use crate::rates::Rates;

/// A metric of a subtask: its name, the operator it belongs to (for an operator's), what it
/// means, and its value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SubtaskMetric {
    /// The metric's name (`numRecordsIn`, `numLateRecordsDropped`).
    pub(crate) metric: &'static str,
    /// The operator it belongs to, for an operator's metric.
    pub(crate) operator: Option<String>,
    /// What it means (the Prometheus help text).
    pub(crate) help: &'static str,
    /// Its value now.
    pub(crate) value: f64,
}

impl SubtaskMetric {
    /// Its id within the subtask, as Flink's metric ids write it after the subtask index
    /// (`numRecordsIn`, `<operator>.numLateRecordsDropped`).
    pub(crate) fn id(&self) -> String {
        match &self.operator {
            None => self.metric.to_string(),
            Some(operator) => format!("{operator}.{}", self.metric),
        }
    }
}

/// Every metric of one subtask now: records in (read, at a source) and out (written, at a sink)
/// and their rates, time busy, back-pressured and idle per second, whether it is back-pressured,
/// the current input watermark (`Long.MIN_VALUE` before any), and each operator's late records
/// dropped.
pub(crate) fn subtask_metric_values(subtask: &Arc<SubtaskMetrics>, rates: &Rates) -> Vec<SubtaskMetric> {
    let c = subtask.counters();
    let r = rates.of(subtask);
    let watermark = if c.watermark == NO_WATERMARK { i64::MIN } else { c.watermark };
    let task: [(&str, &'static str, f64); 9] = [
        ("numRecordsIn", "Records received (read, at a source).", c.task_records_in() as f64),
        ("numRecordsOut", "Records sent (written, at a sink).", c.task_records_out() as f64),
        ("numRecordsInPerSecond", "Records received per second.", r.records_in),
        ("numRecordsOutPerSecond", "Records sent per second.", r.records_out),
        ("busyTimeMsPerSecond", "Milliseconds per second running operators.", r.busy_ms.round()),
        (
            "backPressuredTimeMsPerSecond",
            "Milliseconds per second waiting for room downstream.",
            r.backpressured_ms.round(),
        ),
        ("idleTimeMsPerSecond", "Milliseconds per second waiting for input.", r.idle_ms().round()),
        ("currentInputWatermark", "The last watermark received (epoch ms).", watermark as f64),
        (
            "isBackPressured",
            "Whether the subtask waited for room downstream lately.",
            f64::from(u8::from(r.backpressured_ms > 0.0)),
        ),
    ];
    let mut metrics: Vec<SubtaskMetric> =
        task.into_iter().map(|(metric, help, value)| SubtaskMetric { metric, operator: None, help, value }).collect();
    for (operator, counts) in subtask.operator_counts() {
        metrics.push(SubtaskMetric {
            metric: "numLateRecordsDropped",
            operator: Some(operator),
            help: "Records dropped for arriving after their window closed.",
            value: counts.late_records_dropped as f64,
        });
    }
    metrics
}

/// A job's own metrics, as Flink's job manager scope names them, with what each means.
pub(crate) fn job_metric_values(job: &JobInfo) -> Vec<(&'static str, &'static str, f64)> {
    let stats = job.checkpoint_stats();
    let latest = stats.latest_completed.as_ref();
    let last = |f: &dyn Fn(&weir_runtime::checkpoint::stats::CheckpointRecord) -> f64| latest.map_or(-1.0, f);
    let lifecycle = job.lifecycle();
    let end = if lifecycle.end_time() < 0 { weir_runtime::jobs::epoch_millis() } else { lifecycle.end_time() };
    let running = if lifecycle.state() == JobState::Running { (end - lifecycle.start_time()) as f64 } else { 0.0 };
    let restored = stats.restored.as_ref().map_or(-1.0, |r| r.restore_timestamp as f64);
    let mut values = vec![
        (
            "lastCheckpointCompletedTimestamp",
            "When the newest completed checkpoint completed (epoch ms).",
            last(&|c| c.end_timestamp as f64),
        ),
        (
            "lastCheckpointRestoreTimestamp",
            "When the job restored its checkpoint (epoch ms), -1 when it did not.",
            restored,
        ),
        (
            "lastCheckpointDuration",
            "Milliseconds the newest completed checkpoint took.",
            last(&|c| c.duration_ms() as f64),
        ),
        (
            "lastCheckpointSize",
            "Bytes written for the newest completed checkpoint.",
            last(&|c| c.checkpointed_size as f64),
        ),
        (
            "lastCheckpointFullSize",
            "Bytes of state in the newest completed checkpoint.",
            last(&|c| c.state_size as f64),
        ),
        ("lastCompletedCheckpointId", "Id of the newest completed checkpoint.", last(&|c| c.id as f64)),
        ("numberOfCompletedCheckpoints", "Checkpoints completed.", stats.completed as f64),
        ("numberOfFailedCheckpoints", "Checkpoints failed.", stats.failed as f64),
        ("numberOfInProgressCheckpoints", "Checkpoints in progress.", stats.in_progress as f64),
        ("totalNumberOfCheckpoints", "Checkpoints triggered.", stats.total() as f64),
        ("runningTime", "Milliseconds the job has been running (0 once it ended).", running),
        ("numRestarts", "Restarts of the job (weir restarts none: a failed job ends).", 0.0),
    ];
    // The on-disk backend's figures, under the names of Flink's RocksDB native metrics (which
    // Flink reports per operator when enabled; weir reports them for the job, always).
    if let Some(state) = job.metrics().state() {
        values.extend([
            ("rocksdb.total-sst-files-size", "Bytes of the state's files on disk.", state.disk_bytes as f64),
            ("rocksdb.block-cache-usage", "Bytes of the state's cached blocks.", state.cache_bytes as f64),
            ("rocksdb.cur-size-all-mem-tables", "Bytes in the state's write buffers.", state.write_buffer_bytes as f64),
            ("rocksdb.block-cache-hit", "State block reads the cache answered.", state.cache_hits as f64),
            ("rocksdb.block-cache-miss", "State block reads from disk.", state.cache_misses as f64),
            ("rocksdb.bytes-written", "Bytes written into the state's files.", state.bytes_written as f64),
        ]);
    }
    values
}
