//! Flink's REST API over a [`JobRegistry`]: the paths, fields and value types of Flink's
//! JobManager endpoints (`/overview`, `/jobs/:jid`, `/jobs/:jid/vertices/:vid/metrics`, …),
//! with `/v1` accepted in front of each as Flink accepts it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use parking_lot::Mutex;
use serde_json::{json, Value};
use weir_runtime::checkpoint::stats::CheckpointRecord;
use weir_runtime::checkpoint::Retention;
use weir_runtime::element::NO_WATERMARK;
use weir_runtime::jobs::{epoch_millis, JobId, JobInfo, JobRegistry, JobState, VertexInfo};

use crate::rates::Rates;

/// What the handlers share: the jobs, their rates, and the savepoint operations in progress.
#[derive(Debug)]
pub(crate) struct Web {
    pub(crate) registry: JobRegistry,
    pub(crate) rates: Rates,
    operations: Mutex<HashMap<String, Operation>>,
}

/// A savepoint asked for through the API: in progress, or its path, or why it failed.
#[derive(Debug, Clone)]
enum Operation {
    InProgress,
    Completed(Option<PathBuf>),
    Failed(String),
}

impl Web {
    pub(crate) fn new(registry: JobRegistry) -> Self {
        Web { registry, rates: Rates::default(), operations: Mutex::default() }
    }
}

type Shared = Arc<Web>;

/// The REST API, the dashboard and `/metrics`.
pub(crate) fn router(state: Shared) -> Router {
    let api = Router::new()
        .route("/overview", get(overview))
        .route("/config", get(config))
        .route("/jobs", get(jobs))
        .route("/jobs/overview", get(jobs_overview))
        .route("/jobs/{jid}", get(job).patch(cancel_job))
        .route("/jobs/{jid}/plan", get(plan))
        .route("/jobs/{jid}/exceptions", get(exceptions))
        .route("/jobs/{jid}/checkpoints", get(checkpoints))
        .route("/jobs/{jid}/checkpoints/config", get(checkpoints_config))
        .route("/jobs/{jid}/vertices/{vid}", get(vertex))
        .route("/jobs/{jid}/vertices/{vid}/backpressure", get(backpressure))
        .route("/jobs/{jid}/vertices/{vid}/watermarks", get(watermarks))
        .route("/jobs/{jid}/vertices/{vid}/metrics", get(vertex_metrics))
        .route("/jobs/{jid}/stop", post(stop_job))
        .route("/jobs/{jid}/savepoints", post(trigger_savepoint))
        .route("/jobs/{jid}/savepoints/{trigger}", get(savepoint_status));
    Router::new()
        .merge(api.clone())
        .nest("/v1", api)
        .merge(crate::dashboard::router())
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .with_state(state)
}

/// Only `/metrics`, for `metrics.reporter.prom.port`.
pub(crate) fn prometheus_router(state: Shared) -> Router {
    Router::new().route("/metrics", get(metrics)).fallback(not_found).with_state(state)
}

async fn metrics(State(web): State<Shared>) -> Response {
    let text = crate::prometheus::render(&web.registry, &web.rates);
    ([(axum::http::header::CONTENT_TYPE, crate::prometheus::CONTENT_TYPE)], text).into_response()
}

/// An error as Flink's REST API writes one: `{"errors": [message]}` with its status.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    message: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "errors": [self.message] }))).into_response()
    }
}

fn error(status: StatusCode, message: impl Into<String>) -> ApiError {
    ApiError { status, message: message.into() }
}

/// What a handler answers: its response, or Flink's error.
type Answer = Result<Response, ApiError>;

async fn not_found(uri: Uri) -> ApiError {
    error(StatusCode::NOT_FOUND, format!("Not found: {}", uri.path()))
}

fn find_job(web: &Web, jid: &str) -> Result<Arc<JobInfo>, ApiError> {
    web.registry.get(jid).ok_or_else(|| error(StatusCode::NOT_FOUND, format!("Job {jid} not found")))
}

fn find_vertex<'a>(job: &'a JobInfo, vid: &str) -> Result<&'a VertexInfo, ApiError> {
    job.topology
        .vertices
        .iter()
        .find(|v| v.id == vid)
        .ok_or_else(|| error(StatusCode::NOT_FOUND, format!("JobVertex {vid} not found in job {}", job.id)))
}

const VERSION: &str = concat!("weir ", env!("CARGO_PKG_VERSION"));

async fn overview(State(web): State<Shared>) -> Json<Value> {
    let jobs = web.registry.jobs();
    let count = |state: JobState| jobs.iter().filter(|j| j.lifecycle().state() == state).count();
    let slots: usize = jobs
        .iter()
        .filter(|j| !j.lifecycle().state().is_terminal())
        .map(|j| j.topology.vertices.iter().map(|v| v.parallelism).max().unwrap_or(0))
        .sum();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    Json(json!({
        "taskmanagers": 1,
        "slots-total": cores.max(slots),
        "slots-available": cores.saturating_sub(slots),
        "jobs-running": count(JobState::Running) + count(JobState::Cancelling),
        "jobs-finished": count(JobState::Finished),
        "jobs-cancelled": count(JobState::Canceled),
        "jobs-failed": count(JobState::Failed),
        "flink-version": VERSION,
        "flink-commit": "",
    }))
}

async fn config() -> Json<Value> {
    Json(json!({
        "refresh-interval": 1000,
        "timezone-name": "Coordinated Universal Time",
        "timezone-offset": 0,
        "flink-version": VERSION,
        "flink-revision": "",
        "features": {"web-submit": false, "web-cancel": true, "web-rescale": false, "web-history": false},
    }))
}

async fn jobs(State(web): State<Shared>) -> Json<Value> {
    let jobs: Vec<Value> = web
        .registry
        .jobs()
        .iter()
        .map(|j| json!({"id": j.id.as_str(), "status": j.lifecycle().state().as_str()}))
        .collect();
    Json(json!({ "jobs": jobs }))
}

/// The state of a job's vertices (and subtasks): the job's own, `CANCELED` while cancelling.
fn vertex_state(job: &JobInfo) -> JobState {
    job.lifecycle().state()
}

fn duration(job: &JobInfo) -> i64 {
    let lifecycle = job.lifecycle();
    let end = if lifecycle.end_time() < 0 { epoch_millis() } else { lifecycle.end_time() };
    (end - lifecycle.start_time()).max(0)
}

/// Counts of `total` tasks of `job` by state, with Flink's keys upper case (lower case, with a
/// total, in `/jobs/overview`).
fn task_counts(job: &JobInfo, total: usize, upper: bool) -> Value {
    let state = vertex_state(job);
    let mut counts = serde_json::Map::new();
    for name in [
        "CREATED",
        "SCHEDULED",
        "DEPLOYING",
        "RUNNING",
        "FINISHED",
        "CANCELING",
        "CANCELED",
        "FAILED",
        "RECONCILING",
        "INITIALIZING",
    ] {
        let n = match (state, name) {
            (JobState::Running, "RUNNING")
            | (JobState::Cancelling, "CANCELING")
            | (JobState::Finished, "FINISHED")
            | (JobState::Canceled, "CANCELED")
            | (JobState::Failed, "FAILED") => total,
            _ => 0,
        };
        let key = if upper { name.to_string() } else { name.to_ascii_lowercase() };
        counts.insert(key, json!(n));
    }
    if !upper {
        counts.insert("total".into(), json!(total));
    }
    Value::Object(counts)
}

fn job_summary(job: &JobInfo) -> Value {
    let lifecycle = job.lifecycle();
    json!({
        "jid": job.id.as_str(),
        "name": job.name,
        "state": lifecycle.state().as_str(),
        "start-time": lifecycle.start_time(),
        "end-time": lifecycle.end_time(),
        "duration": duration(job),
        "last-modification": if lifecycle.end_time() < 0 { lifecycle.start_time() } else { lifecycle.end_time() },
        "tasks": task_counts(job, job.topology.vertices.iter().map(|v| v.parallelism).sum(), false),
    })
}

async fn jobs_overview(State(web): State<Shared>) -> Json<Value> {
    let jobs: Vec<Value> = web.registry.jobs().iter().map(|j| job_summary(j)).collect();
    Json(json!({ "jobs": jobs }))
}

/// Flink's vertex I/O metrics: records received from and sent to other vertices, and the
/// milliseconds its subtasks spent busy, back-pressured and idle so far, summed.
fn io_metrics(job: &JobInfo, vertex: &VertexInfo) -> Value {
    let (mut read, mut written) = (0, 0);
    let (mut busy, mut backpressured) = (0.0, 0.0);
    for subtask in &vertex.subtasks {
        let counters = subtask.counters();
        read += counters.records_in;
        written += counters.records_out;
        busy += counters.busy.as_secs_f64() * 1000.0;
        backpressured += counters.backpressured.as_secs_f64() * 1000.0;
    }
    let idle = (duration(job) as f64 * vertex.parallelism as f64 - busy - backpressured).max(0.0);
    json!({
        "read-bytes": 0, "read-bytes-complete": true,
        "write-bytes": 0, "write-bytes-complete": true,
        "read-records": read, "read-records-complete": true,
        "write-records": written, "write-records-complete": true,
        "accumulated-backpressured-time": backpressured as i64,
        "accumulated-idle-time": idle as i64,
        "accumulated-busy-time": busy,
    })
}

fn plan_json(job: &JobInfo) -> Value {
    let vertices = &job.topology.vertices;
    let nodes: Vec<Value> = vertices
        .iter()
        .map(|v| {
            let inputs: Vec<Value> = v
                .inputs
                .iter()
                .map(|i| {
                    json!({
                        "num": i.input,
                        "id": vertices[i.from].id,
                        "ship_strategy": i.ship_strategy,
                        "exchange": "pipelined_bounded",
                    })
                })
                .collect();
            let mut node = json!({
                "id": v.id,
                "parallelism": v.parallelism,
                "operator": "",
                "operator_strategy": "",
                "description": v.operators.join("<br/>+- "),
                "optimizer_properties": {},
            });
            if !inputs.is_empty() {
                node["inputs"] = json!(inputs);
            }
            node
        })
        .collect();
    json!({
        "jid": job.id.as_str(),
        "name": job.name,
        "type": if job.streaming { "STREAMING" } else { "BATCH" },
        "nodes": nodes,
    })
}

async fn job(State(web): State<Shared>, Path(jid): Path<String>) -> Answer {
    let job = find_job(&web, &jid)?;
    let lifecycle = job.lifecycle();
    let state = vertex_state(&job);
    let vertices: Vec<Value> = job
        .topology
        .vertices
        .iter()
        .map(|v| {
            json!({
                "id": v.id,
                "name": v.name,
                "maxParallelism": weir_runtime::partition::default_max_parallelism(v.parallelism),
                "parallelism": v.parallelism,
                "status": state.as_str(),
                "start-time": lifecycle.start_time(),
                "end-time": lifecycle.end_time(),
                "duration": duration(&job),
                "tasks": task_counts(&job, v.parallelism, true),
                "metrics": io_metrics(&job, v),
            })
        })
        .collect();
    let total: usize = job.topology.vertices.len();
    let status_counts = task_counts(&job, total, true);
    let mut timestamps = serde_json::Map::new();
    for name in ["INITIALIZING", "CREATED", "RUNNING", "FAILING", "FAILED", "CANCELLING", "CANCELED", "FINISHED"] {
        let at = match name {
            "INITIALIZING" | "CREATED" | "RUNNING" => lifecycle.start_time(),
            _ if name == state.as_str() => lifecycle.end_time(),
            _ => 0,
        };
        timestamps.insert(name.into(), json!(at));
    }
    Ok(Json(json!({
        "jid": job.id.as_str(),
        "name": job.name,
        "isStoppable": false,
        "state": lifecycle.state().as_str(),
        "job-type": if job.streaming { "STREAMING" } else { "BATCH" },
        "start-time": lifecycle.start_time(),
        "end-time": lifecycle.end_time(),
        "duration": duration(&job),
        "maxParallelism": -1,
        "now": epoch_millis(),
        "timestamps": timestamps,
        "vertices": vertices,
        "status-counts": status_counts,
        "plan": plan_json(&job),
    }))
    .into_response())
}

async fn plan(State(web): State<Shared>, Path(jid): Path<String>) -> Answer {
    let job = find_job(&web, &jid)?;
    Ok(Json(json!({ "plan": plan_json(&job) })).into_response())
}

async fn cancel_job(
    State(web): State<Shared>,
    Path(jid): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Answer {
    let job = find_job(&web, &jid)?;
    match query.get("mode").map(String::as_str) {
        None | Some("cancel") => {
            job.cancel();
            Ok((StatusCode::ACCEPTED, Json(json!({}))).into_response())
        }
        Some(other) => Err(error(
            StatusCode::BAD_REQUEST,
            format!("Invalid value '{other}' for query parameter 'mode': the accepted value is 'cancel'."),
        )),
    }
}

async fn exceptions(State(web): State<Shared>, Path(jid): Path<String>) -> Answer {
    let job = find_job(&web, &jid)?;
    let entries: Vec<Value> = job
        .lifecycle()
        .exception()
        .into_iter()
        .map(|e| {
            json!({
                "exceptionName": "org.apache.flink.runtime.JobException",
                "stacktrace": e.message,
                "timestamp": e.timestamp,
                "taskName": null,
                "endpoint": null,
                "taskManagerId": null,
                "failureLabels": {},
                "concurrentExceptions": [],
            })
        })
        .collect();
    Ok(Json(json!({ "exceptionHistory": { "entries": entries, "truncated": false } })).into_response())
}

fn checkpoint_json(record: &CheckpointRecord) -> Value {
    json!({
        "className": "completed",
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
        "external_path": record.external_path,
        "discarded": false,
        "failure_timestamp": record.failure_message.as_ref().map(|_| record.end_timestamp),
        "failure_message": record.failure_message,
    })
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

async fn checkpoints(State(web): State<Shared>, Path(jid): Path<String>) -> Answer {
    let job = find_job(&web, &jid)?;
    let stats = job.checkpoint_stats();
    let completed: Vec<&CheckpointRecord> = stats.history.iter().filter(|r| r.failure_message.is_none()).collect();
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

async fn checkpoints_config(State(web): State<Shared>, Path(jid): Path<String>) -> Answer {
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
        "state_backend": "HashMapStateBackend",
        "checkpoint_storage": if config.dir.is_some() { "FileSystemCheckpointStorage" } else { "JobManagerCheckpointStorage" },
        "unaligned_checkpoints": false,
        "tolerable_failed_checkpoints": 0,
        "aligned_checkpoint_timeout": 0,
        "checkpoints_after_tasks_finish": true,
        "state_changelog_enabled": false,
    }))
    .into_response())
}

async fn vertex(State(web): State<Shared>, Path((jid, vid)): Path<(String, String)>) -> Answer {
    let job = find_job(&web, &jid)?;
    let vertex = find_vertex(&job, &vid)?;
    let lifecycle = job.lifecycle();
    let subtasks: Vec<Value> = vertex
        .subtasks
        .iter()
        .enumerate()
        .map(|(i, subtask)| {
            let c = subtask.counters();
            json!({
                "subtask": i,
                "status": vertex_state(&job).as_str(),
                "attempt": 0,
                "endpoint": "localhost",
                "start-time": lifecycle.start_time(),
                "end-time": lifecycle.end_time(),
                "duration": duration(&job),
                "metrics": {
                    "read-bytes": 0, "read-bytes-complete": true,
                    "write-bytes": 0, "write-bytes-complete": true,
                    "read-records": c.records_in, "read-records-complete": true,
                    "write-records": c.records_out, "write-records-complete": true,
                },
                "taskmanager-id": "weir",
            })
        })
        .collect();
    Ok(Json(json!({
        "id": vertex.id,
        "name": vertex.name,
        "parallelism": vertex.parallelism,
        "maxParallelism": weir_runtime::partition::default_max_parallelism(vertex.parallelism),
        "now": epoch_millis(),
        "subtasks": subtasks,
    }))
    .into_response())
}

/// Flink's back-pressure level of a ratio: `ok` to 10 %, `low` to 50 %, `high` above.
pub(crate) fn backpressure_level(ratio: f64) -> &'static str {
    if ratio <= 0.10 {
        "ok"
    } else if ratio <= 0.5 {
        "low"
    } else {
        "high"
    }
}

async fn backpressure(State(web): State<Shared>, Path((jid, vid)): Path<(String, String)>) -> Answer {
    let job = find_job(&web, &jid)?;
    let vertex = find_vertex(&job, &vid)?;
    let mut worst: f64 = 0.0;
    let subtasks: Vec<Value> = vertex
        .subtasks
        .iter()
        .enumerate()
        .map(|(i, subtask)| {
            let rates = web.rates.of(subtask);
            let ratio = rates.backpressured_ms / 1000.0;
            worst = worst.max(ratio);
            json!({
                "subtask": i,
                "attempt-number": 0,
                "backpressure-level": backpressure_level(ratio),
                "ratio": round2(ratio),
                "idleRatio": round2(rates.idle_ms() / 1000.0),
                "busyRatio": round2(rates.busy_ms / 1000.0),
            })
        })
        .collect();
    Ok(Json(json!({
        "status": "ok",
        "backpressure-level": backpressure_level(worst),
        "end-timestamp": epoch_millis(),
        "subtasks": subtasks,
    }))
    .into_response())
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

async fn watermarks(State(web): State<Shared>, Path((jid, vid)): Path<(String, String)>) -> Answer {
    let job = find_job(&web, &jid)?;
    let vertex = find_vertex(&job, &vid)?;
    let marks: Vec<Value> = vertex
        .subtasks
        .iter()
        .enumerate()
        .map(|(i, s)| json!({"id": format!("{i}.currentInputWatermark"), "value": s.counters().watermark.to_string()}))
        .collect();
    Ok(Json(json!(marks)).into_response())
}

/// Every metric of a vertex's subtasks, as Flink names them (`0.numRecordsIn`,
/// `0.<operator>.numLateRecordsDropped`), with its value.
pub(crate) fn vertex_metric_values(vertex: &VertexInfo, rates: &Rates) -> Vec<(String, String)> {
    let mut values = Vec::new();
    for (i, subtask) in vertex.subtasks.iter().enumerate() {
        let c = subtask.counters();
        let r = rates.of(subtask);
        let records_in = c.records_in + c.records_read;
        let records_out = if c.is_sink { c.records_into_last } else { c.records_out };
        let watermark = if c.watermark == NO_WATERMARK { i64::MIN } else { c.watermark };
        values.extend([
            (format!("{i}.numRecordsIn"), records_in.to_string()),
            (format!("{i}.numRecordsOut"), records_out.to_string()),
            (format!("{i}.numRecordsInPerSecond"), format!("{:.1}", r.records_in)),
            (format!("{i}.numRecordsOutPerSecond"), format!("{:.1}", r.records_out)),
            (format!("{i}.busyTimeMsPerSecond"), format!("{:.0}", r.busy_ms)),
            (format!("{i}.backPressuredTimeMsPerSecond"), format!("{:.0}", r.backpressured_ms)),
            (format!("{i}.idleTimeMsPerSecond"), format!("{:.0}", r.idle_ms())),
            (format!("{i}.currentInputWatermark"), watermark.to_string()),
        ]);
        for (operator, counts) in subtask.operator_counts() {
            values.push((format!("{i}.{operator}.numLateRecordsDropped"), counts.late_records_dropped.to_string()));
        }
    }
    values
}

async fn vertex_metrics(
    State(web): State<Shared>,
    Path((jid, vid)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> Answer {
    let job = find_job(&web, &jid)?;
    let vertex = find_vertex(&job, &vid)?;
    let values = vertex_metric_values(vertex, &web.rates);
    let listed: Vec<Value> = match query.get("get") {
        None => values.iter().map(|(id, _)| json!({ "id": id })).collect(),
        Some(wanted) => wanted
            .split(',')
            .filter_map(|id| values.iter().find(|(have, _)| have == id.trim()))
            .map(|(id, value)| json!({"id": id, "value": value}))
            .collect(),
    };
    Ok(Json(json!(listed)).into_response())
}

/// Starts a savepoint of `job` into `dir` on a thread of its own; returns the trigger id.
fn start_savepoint(web: &Shared, job: Arc<JobInfo>, dir: Option<String>, stop: bool) -> Answer {
    let Some(dir) = dir.map(PathBuf::from).or_else(|| job.savepoint_dir.clone()) else {
        return Err(error(
            StatusCode::BAD_REQUEST,
            "No savepoint directory: give one in the request or set execution.checkpointing.savepoint-dir.",
        ));
    };
    let trigger = JobId::random().to_string();
    web.operations.lock().insert(trigger.clone(), Operation::InProgress);
    let (web, id) = (Arc::clone(web), trigger.clone());
    let timeout = job.checkpointing.timeout.max(Duration::from_secs(1));
    let spawned = std::thread::Builder::new().name("weir-savepoint".into()).spawn(move || {
        let result = if stop { job.stop_with_savepoint(&dir, timeout) } else { job.savepoint(&dir, timeout) };
        let outcome = match result {
            Ok(path) => Operation::Completed(path),
            Err(e) => Operation::Failed(e.to_string()),
        };
        web.operations.lock().insert(id, outcome);
    });
    if let Err(e) = spawned {
        return Err(error(StatusCode::INTERNAL_SERVER_ERROR, format!("Cannot start the savepoint: {e}")));
    }
    Ok((StatusCode::ACCEPTED, Json(json!({ "request-id": trigger }))).into_response())
}

fn body_field(body: &Option<Json<Value>>, key: &str) -> Option<Value> {
    body.as_ref().and_then(|Json(b)| b.get(key)).cloned()
}

async fn stop_job(State(web): State<Shared>, Path(jid): Path<String>, body: Option<Json<Value>>) -> Answer {
    let job = find_job(&web, &jid)?;
    if body_field(&body, "drain").and_then(|v| v.as_bool()) == Some(true) {
        return Err(error(
            StatusCode::BAD_REQUEST,
            "Not supported by weir: stopping with \"drain\": true (weir does not end a job's event time before it stops).",
        ));
    }
    let dir = body_field(&body, "targetDirectory").and_then(|v| v.as_str().map(str::to_string));
    start_savepoint(&web, job, dir, true)
}

async fn trigger_savepoint(State(web): State<Shared>, Path(jid): Path<String>, body: Option<Json<Value>>) -> Answer {
    let job = find_job(&web, &jid)?;
    let dir = body_field(&body, "target-directory").and_then(|v| v.as_str().map(str::to_string));
    let cancel = body_field(&body, "cancel-job").and_then(|v| v.as_bool()).unwrap_or(false);
    start_savepoint(&web, job, dir, cancel)
}

async fn savepoint_status(State(web): State<Shared>, Path((jid, trigger)): Path<(String, String)>) -> Answer {
    find_job(&web, &jid)?;
    let Some(operation) = web.operations.lock().get(&trigger).cloned() else {
        return Err(error(StatusCode::NOT_FOUND, format!("There is no savepoint operation with trigger id {trigger}")));
    };
    let body = match operation {
        Operation::InProgress => json!({"status": {"id": "IN_PROGRESS"}, "operation": null}),
        Operation::Completed(path) => json!({
            "status": {"id": "COMPLETED"},
            "operation": {"location": path.map(|p| p.display().to_string())},
        }),
        Operation::Failed(message) => json!({
            "status": {"id": "COMPLETED"},
            "operation": {"failure-cause": {"class": "java.lang.Exception", "stack-trace": message}},
        }),
    };
    Ok(Json(body).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_pressure_levels_follow_flinks_thresholds() {
        assert_eq!(backpressure_level(0.0), "ok");
        assert_eq!(backpressure_level(0.10), "ok");
        assert_eq!(backpressure_level(0.11), "low");
        assert_eq!(backpressure_level(0.5), "low");
        assert_eq!(backpressure_level(0.51), "high");
    }

    #[test]
    fn a_summary_gives_min_max_avg_and_percentiles() {
        let s = summary(vec![10, 30, 20]);
        assert_eq!((s["min"].as_u64(), s["max"].as_u64(), s["avg"].as_u64()), (Some(10), Some(30), Some(20)));
        assert_eq!(s["p50"].as_f64(), Some(20.0));
    }
}
