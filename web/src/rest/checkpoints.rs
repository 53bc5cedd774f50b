//! A job's checkpoint statistics and configuration.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde_json::{json, Value};
use weir_runtime::checkpoint::stats::{CheckpointOutcome, CheckpointRecord};
use weir_runtime::checkpoint::Retention;

use super::{error, find_job, Answer, Shared};

/// One checkpoint as Flink writes it in `latest` and `history`.
fn checkpoint_json(record: &CheckpointRecord) -> Value {
    let failed = record.outcome == CheckpointOutcome::Failed;
    let mut json = json!({
        "className": if failed { "failed" } else { "completed" },
        "id": record.id,
        "status": record.outcome.as_str(),
        "is_savepoint": false,
        "savepointFormat": null,
        "trigger_timestamp": record.trigger_timestamp,
        "latest_ack_timestamp": record.end_timestamp,
        "state_size": record.state_size,
        "checkpointed_size": record.checkpointed_size,
        "end_to_end_duration": record.duration_ms(),
        "alignment_buffered": 0,
        "processed_data": 0,
        "persisted_data": 0,
        "num_subtasks": record.num_subtasks,
        "num_acknowledged_subtasks": record.num_acknowledged_subtasks,
        "checkpoint_type": "CHECKPOINT",
        "external_path": record.external_path.as_deref().unwrap_or("<checkpoint-not-externally-addressable>"),
        "discarded": false,
        "tasks": {},
    });
    if failed {
        json["failure_timestamp"] = json!(record.end_timestamp);
        json["failure_message"] = json!(record.failure_message);
    }
    json
}

/// Flink's `StatsSummaryDto` of `values`: min, max, avg and percentiles.
fn summary(mut values: Vec<u64>) -> Value {
    if values.is_empty() {
        return json!({"min": 0, "max": 0, "avg": 0, "p50": 0.0, "p90": 0.0, "p95": 0.0, "p99": 0.0, "p999": 0.0});
    }
    values.sort_unstable();
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize] as f64;
    json!({
        "min": values[0],
        "max": values[values.len() - 1],
        "avg": values.iter().sum::<u64>() / values.len() as u64,
        "p50": at(0.5), "p90": at(0.9), "p95": at(0.95), "p99": at(0.99), "p999": at(0.999),
    })
}

/// `GET /jobs/:jid/checkpoints`: counts, summary, latest and history of the job's checkpoints.
pub(crate) async fn checkpoints(State(web): State<Shared>, Path(jid): Path<String>) -> Answer {
    let job = find_job(&web, &jid)?;
    let stats = job.checkpoint_stats();
    let completed: Vec<&CheckpointRecord> =
        stats.history.iter().filter(|r| r.outcome == CheckpointOutcome::Completed).collect();
    let restored = stats.restored.as_ref().map(
        |r| json!({"id": r.id, "restore_timestamp": r.restore_timestamp, "is_savepoint": false, "external_path": null}),
    );
    Ok(Json(json!({
        "counts": {
            "restored": u64::from(stats.restored.is_some()),
            "total": stats.total(),
            "in_progress": stats.in_progress,
            "completed": stats.completed,
            "failed": stats.failed,
        },
        "summary": {
            "state_size": summary(completed.iter().map(|r| r.state_size).collect()),
            "checkpointed_size": summary(completed.iter().map(|r| r.checkpointed_size).collect()),
            "end_to_end_duration": summary(completed.iter().map(|r| r.duration_ms() as u64).collect()),
            "alignment_buffered": summary(Vec::new()),
            "processed_data": summary(Vec::new()),
            "persisted_data": summary(Vec::new()),
        },
        "latest": {
            "completed": stats.latest_completed.as_ref().map(checkpoint_json),
            "savepoint": null,
            "failed": stats.latest_failed.as_ref().map(checkpoint_json),
            "restored": restored,
        },
        "history": stats.history.iter().map(checkpoint_json).collect::<Vec<_>>(),
    }))
    .into_response())
}

/// `GET /jobs/:jid/checkpoints/config`: how the job checkpoints; 404 when it does not.
pub(crate) async fn checkpoints_config(State(web): State<Shared>, Path(jid): Path<String>) -> Answer {
    let job = find_job(&web, &jid)?;
    let config = &job.checkpointing;
    let Some(interval) = config.interval else {
        return Err(error(StatusCode::NOT_FOUND, "Checkpointing is not enabled for this job."));
    };
    let mode = match config.mode {
        weir_runtime::checkpoint::CheckpointingMode::ExactlyOnce => "exactly_once",
        weir_runtime::checkpoint::CheckpointingMode::AtLeastOnce => "at_least_once",
    };
    let (enabled, delete_on_cancellation) = match config.retention {
        Retention::RetainOnCancellation => (true, false),
        Retention::DeleteOnCancellation => (true, true),
        Retention::NoExternalizedCheckpoints => (false, false),
    };
    Ok(Json(json!({
        "mode": mode,
        "interval": interval.as_millis() as u64,
        "timeout": config.timeout.as_millis() as u64,
        "min_pause": config.min_pause.as_millis() as u64,
        "max_concurrent": config.max_concurrent,
        "externalization": {"enabled": enabled, "delete_on_cancellation": delete_on_cancellation},
        "state_backend": job.metrics().state_backend(),
        "checkpoint_storage": if config.dir.is_some() { "FileSystemCheckpointStorage" } else { "JobManagerCheckpointStorage" },
        "unaligned_checkpoints": false,
        // A checkpoint that fails never fails a weir job (the next one may succeed).
        "tolerable_failed_checkpoints": i32::MAX,
        "aligned_checkpoint_timeout": 0,
        "checkpoints_after_tasks_finish": true,
        "state_changelog_enabled": false,
        "changelog_periodic_materialization_interval": 600_000,
        "changelog_storage": "memory",
    }))
    .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_gives_min_max_avg_and_percentiles() {
        let s = summary(vec![10, 30, 20]);
        assert_eq!((s["min"].as_u64(), s["max"].as_u64(), s["avg"].as_u64()), (Some(10), Some(30), Some(20)));
        assert_eq!(s["p50"].as_f64(), Some(20.0));
    }
}
