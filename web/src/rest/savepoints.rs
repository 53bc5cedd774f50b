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

use super::{error, find_job, Answer, ApiError, Shared};

/// A savepoint asked for through the API: in progress, or its path, or why it failed.
#[derive(Debug, Clone)]
pub(crate) enum Operation {
    InProgress,
    Completed(Option<PathBuf>),
    Failed(String),
}

/// How many savepoint requests of one job may wait for the one in progress (Flink's coordinator
/// queues as many, then fails the next with its message).
const MAX_QUEUED: usize = 1000;

/// The savepoints of one job: the one in progress runs on a thread of its own, the others wait
/// their turn, so a burst of requests holds one thread, not one each.
#[derive(Debug, Default)]
pub(crate) struct SavepointQueue {
    running: bool,
    waiting: std::collections::VecDeque<Wanted>,
}

/// One savepoint asked for: its trigger id, where it goes, whether the job stops after it and
/// whether its event time ends first (`drain`).
#[derive(Debug)]
struct Wanted {
    trigger: String,
    dir: PathBuf,
    stop: bool,
    drain: bool,
}

/// What a savepoint or stop request's body asks, its fields checked as Flink's request bodies
/// type them.
#[derive(Debug, Default)]
struct Asked {
    dir: Option<String>,
    flag: bool,
    trigger: Option<String>,
}

/// Reads `body` as Flink's `kind` (`SavepointTriggerRequestBody`, `StopWithSavepointRequestBody`):
/// `dir_key` a string, `flag_key` a boolean (`"true"`/`"false"` too, as Jackson reads them),
/// `formatType` one of Flink's, `triggerId` a string; a field of another type is Flink's 400.
fn asked(body: &Option<Json<Value>>, kind: &str, dir_key: &str, flag_key: &str) -> Result<Asked, ApiError> {
    let mismatch = || error(StatusCode::BAD_REQUEST, format!("Request did not match expected format {kind}."));
    let Some(Json(body)) = body else { return Ok(Asked::default()) };
    let Some(fields) = body.as_object() else { return Err(mismatch()) };
    let text = |key: &str| match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(mismatch()),
    };
    let flag = match fields.get(flag_key) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => true,
        Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => false,
        Some(_) => return Err(mismatch()),
    };
    if let Some(format) = text("formatType")? {
        if !["CANONICAL", "NATIVE"].contains(&format.as_str()) {
            return Err(mismatch());
        }
    }
    Ok(Asked { dir: text(dir_key)?, flag, trigger: text("triggerId")? })
}

/// Queues a savepoint of `job` into `dir` (stopping the job after it when `stop`, its event
/// time ended first when `drain`); answers the trigger id to poll. A request that repeats a `triggerId` answers it again without a second
/// savepoint, as Flink's does.
fn start_savepoint(web: &Shared, job: Arc<JobInfo>, asked: Asked, stop: bool, drain: bool) -> Answer {
    let accepted = |trigger: &str| Ok((StatusCode::ACCEPTED, Json(json!({ "request-id": trigger }))).into_response());
    if let Some(trigger) = &asked.trigger {
        if web.operations.lock().contains_key(trigger) {
            return accepted(trigger);
        }
    }
    let dir = match asked.dir.as_deref().map(weir_runtime::settings::local_path).transpose() {
        Ok(dir) => dir,
        Err(reason) => return Err(error(StatusCode::BAD_REQUEST, format!("Invalid target directory: {reason}"))),
    };
    let Some(dir) = dir.map(PathBuf::from).or_else(|| job.savepoint_dir.clone()) else {
        return Err(error(
            StatusCode::BAD_REQUEST,
            "Config key [execution.checkpointing.savepoint-dir] is not set. Property [targetDirectory] must be provided.",
        ));
    };
    // A request may write only where the job's savepoints go or a directory allowed for them:
    // whoever reaches the port must not write wherever the process may.
    let allowed: Vec<PathBuf> =
        job.savepoint_dir.iter().cloned().chain(web.access.savepoint_directories.iter().cloned()).collect();
    if !crate::access::is_within(&dir, &allowed) {
        let listed: Vec<String> = allowed.iter().map(|d| format!("'{}'", d.display())).collect();
        return Err(error(
            StatusCode::FORBIDDEN,
            format!(
                "Savepoint target directory '{}' is outside the directories REST requests may write to ({}): set \
                 execution.checkpointing.savepoint-dir or rest.savepoint.allowed-directories to allow it.",
                dir.display(),
                if listed.is_empty() { "none is set".to_string() } else { listed.join(", ") }
            ),
        ));
    }
    let trigger = asked.trigger.unwrap_or_else(|| JobId::random().to_string());
    let mut queues = web.savepoints.lock();
    let queue = queues.entry(job.id.to_string()).or_default();
    if queue.waiting.len() >= MAX_QUEUED {
        let failed = Operation::Failed("The maximum number of queued checkpoint requests exceeded".into());
        web.operations.lock().insert(trigger.clone(), failed);
        return accepted(&trigger);
    }
    web.operations.lock().insert(trigger.clone(), Operation::InProgress);
    queue.waiting.push_back(Wanted { trigger: trigger.clone(), dir, stop, drain });
    if !queue.running {
        queue.running = true;
        let (shared, job) = (Arc::clone(web), Arc::clone(&job));
        let spawned =
            std::thread::Builder::new().name("weir-savepoint".into()).spawn(move || take_savepoints(&shared, &job));
        if let Err(e) = spawned {
            queue.running = false;
            let failed = Operation::Failed(format!("Cannot start the savepoint: {e}"));
            for wanted in queue.waiting.drain(..) {
                web.operations.lock().insert(wanted.trigger, failed.clone());
            }
            return Err(error(StatusCode::INTERNAL_SERVER_ERROR, format!("Cannot start the savepoint: {e}")));
        }
    }
    accepted(&trigger)
}

/// Takes the savepoints waiting for `job`, one after the other, until none is left.
fn take_savepoints(web: &Shared, job: &Arc<JobInfo>) {
    let timeout = job.checkpointing.timeout.max(Duration::from_secs(1));
    loop {
        let next = {
            let mut queues = web.savepoints.lock();
            let Some(queue) = queues.get_mut(job.id.as_str()) else { return };
            match queue.waiting.pop_front() {
                Some(wanted) => wanted,
                None => {
                    queue.running = false;
                    return;
                }
            }
        };
        let result = if next.stop {
            job.stop_with_savepoint(&next.dir, timeout, next.drain)
        } else {
            job.savepoint(&next.dir, timeout)
        };
        let outcome = match result {
            Ok(path) => Operation::Completed(path),
            Err(e) => Operation::Failed(e.to_string()),
        };
        web.operations.lock().insert(next.trigger, outcome);
    }
}

/// `POST /jobs/:jid/stop`: a savepoint, then the job stops (with `"drain": true` its sources
/// end first, so that event time ends and every timer fires); answers the trigger id.
pub(crate) async fn stop_job(State(web): State<Shared>, Path(jid): Path<String>, body: Option<Json<Value>>) -> Answer {
    let job = find_job(&web, &jid)?;
    let asked = asked(&body, "StopWithSavepointRequestBody", "targetDirectory", "drain")?;
    let drain = asked.flag;
    start_savepoint(&web, job, asked, true, drain)
}

/// `POST /jobs/:jid/savepoints`: a savepoint (the job stopping after it with `cancel-job`); answers the trigger id.
pub(crate) async fn trigger_savepoint(
    State(web): State<Shared>,
    Path(jid): Path<String>,
    body: Option<Json<Value>>,
) -> Answer {
    let job = find_job(&web, &jid)?;
    let asked = asked(&body, "SavepointTriggerRequestBody", "target-directory", "cancel-job")?;
    let cancel = asked.flag;
    start_savepoint(&web, job, asked, cancel, false)
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
