//! Flink's REST API over a [`JobRegistry`]: the paths, fields and value types of Flink's
//! JobManager endpoints (`/overview`, `/jobs/:jid`, `/jobs/:jid/vertices/:vid/metrics`, …),
//! with `/v1` accepted in front of each as Flink accepts it. One module per group of
//! endpoints: jobs, checkpoints, vertices, savepoints.

mod checkpoints;
mod io;
mod jobs;
mod metrics;
mod savepoints;
mod vertices;

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use parking_lot::Mutex;
use serde_json::json;
use weir_runtime::jobs::{epoch_millis, JobInfo, JobRegistry, JobState, VertexInfo};

use crate::rates::Rates;
use checkpoints::{checkpoints, checkpoints_config};
use jobs::{cancel_job, config, exceptions, job, jobs, jobs_overview, overview, plan};
use metrics::{job_metrics, subtasks_metrics};
use savepoints::{savepoint_status, stop_job, trigger_savepoint, Operation, SavepointQueue};
use vertices::{backpressure, vertex, vertex_metrics, watermarks};

/// What the handlers share: the jobs, their rates, the savepoint operations asked for and
/// what clients may do.
#[derive(Debug)]
pub(crate) struct Web {
    pub(crate) registry: JobRegistry,
    pub(crate) rates: Rates,
    pub(crate) operations: Mutex<HashMap<String, Operation>>,
    /// Per job id, the savepoints waiting for the one in progress (one at a time per job).
    pub(crate) savepoints: Mutex<HashMap<String, SavepointQueue>>,
    pub(crate) access: crate::Access,
}

impl Web {
    pub(crate) fn new(registry: JobRegistry, access: crate::Access) -> Self {
        Web { registry, rates: Rates::default(), operations: Mutex::default(), savepoints: Mutex::default(), access }
    }
}

pub(crate) type Shared = Arc<Web>;

/// The REST API, the dashboard and `/metrics`.
pub(crate) fn router(state: Shared) -> Router {
    let api = Router::new()
        .route("/overview", get(overview))
        .route("/config", get(config))
        .route("/jobs", get(jobs))
        .route("/jobs/overview", get(jobs_overview))
        .route("/jobs/{jid}", get(job).patch(cancel_job))
        .route("/jobs/{jid}/plan", get(plan))
        .route("/jobs/{jid}/metrics", get(job_metrics))
        .route("/jobs/{jid}/exceptions", get(exceptions))
        .route("/jobs/{jid}/checkpoints", get(checkpoints))
        .route("/jobs/{jid}/checkpoints/config", get(checkpoints_config))
        .route("/jobs/{jid}/vertices/{vid}", get(vertex))
        .route("/jobs/{jid}/vertices/{vid}/backpressure", get(backpressure))
        .route("/jobs/{jid}/vertices/{vid}/watermarks", get(watermarks))
        .route("/jobs/{jid}/vertices/{vid}/metrics", get(vertex_metrics))
        .route("/jobs/{jid}/vertices/{vid}/subtasks/metrics", get(subtasks_metrics))
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

/// `GET /metrics`: every job's metrics in the Prometheus text format.
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

/// Flink's error `status` with `message`.
pub(crate) fn error(status: StatusCode, message: impl Into<String>) -> ApiError {
    ApiError { status, message: message.into() }
}

/// What a handler answers: its response, or Flink's error.
pub(crate) type Answer = Result<Response, ApiError>;

/// Any other path: Flink's 404.
async fn not_found(uri: Uri) -> ApiError {
    error(StatusCode::NOT_FOUND, format!("Not found: {}", uri.path()))
}

/// The job `jid`, or Flink's 404.
pub(crate) fn find_job(web: &Web, jid: &str) -> Result<Arc<JobInfo>, ApiError> {
    web.registry.get(jid).ok_or_else(|| error(StatusCode::NOT_FOUND, format!("Job {jid} not found")))
}

/// The vertex `vid` of `job`, or Flink's 404.
pub(crate) fn find_vertex<'a>(job: &'a JobInfo, vid: &str) -> Result<&'a VertexInfo, ApiError> {
    job.topology
        .vertices
        .iter()
        .find(|v| v.id == vid)
        .ok_or_else(|| error(StatusCode::NOT_FOUND, format!("JobVertex {vid} not found in job {}", job.id)))
}

/// The state of a job's vertices and subtasks: the job's own (one process runs them all).
pub(crate) fn vertex_state(job: &JobInfo) -> JobState {
    job.lifecycle().state()
}

/// Milliseconds from the job's start to its end, or to now while it runs.
pub(crate) fn duration(job: &JobInfo) -> i64 {
    let lifecycle = job.lifecycle();
    let end = if lifecycle.end_time() < 0 { epoch_millis() } else { lifecycle.end_time() };
    (end - lifecycle.start_time()).max(0)
}
