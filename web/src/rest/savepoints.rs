//! Savepoints asked for through the API, taken on threads of their own and polled by id.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde_json::{json, Value};
use weir_runtime::jobs::{JobId, JobInfo};

use super::{error, find_job, Answer, Shared};

/// A savepoint asked for through the API: in progress, or its path, or why it failed.
#[derive(Debug, Clone)]
pub(crate) enum Operation {
    InProgress,
    Completed(Option<PathBuf>),
    Failed(String),
}

/// Starts a savepoint of `job` into `dir` (stopping the job after it when `stop`) on a thread
/// of its own; answers the trigger id to poll.
fn start_savepoint(web: &Shared, job: Arc<JobInfo>, dir: Option<String>, stop: bool) -> Answer {
    let dir = match dir.as_deref().map(weir_runtime::settings::local_path).transpose() {
        Ok(dir) => dir,
        Err(reason) => return Err(error(StatusCode::BAD_REQUEST, format!("Invalid target directory: {reason}"))),
    };
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

/// `POST /jobs/:jid/stop`: a savepoint, then the job stops; answers the trigger id.
pub(crate) async fn stop_job(State(web): State<Shared>, Path(jid): Path<String>, body: Option<Json<Value>>) -> Answer {
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

/// `POST /jobs/:jid/savepoints`: a savepoint (the job stopping after it with `cancel-job`); answers the trigger id.
pub(crate) async fn trigger_savepoint(
    State(web): State<Shared>,
    Path(jid): Path<String>,
    body: Option<Json<Value>>,
) -> Answer {
    let job = find_job(&web, &jid)?;
    let dir = body_field(&body, "target-directory").and_then(|v| v.as_str().map(str::to_string));
    let cancel = body_field(&body, "cancel-job").and_then(|v| v.as_bool()).unwrap_or(false);
    start_savepoint(&web, job, dir, cancel)
}

/// `GET /jobs/:jid/savepoints/:trigger`: whether the savepoint completed, and where it went.
pub(crate) async fn savepoint_status(
    State(web): State<Shared>,
    Path((jid, trigger)): Path<(String, String)>,
) -> Answer {
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
