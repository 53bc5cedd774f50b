//! The cluster and its jobs: `/overview`, `/config`, `/jobs`, `/jobs/overview`, `/jobs/:jid`,
//! its plan, its exceptions, and cancelling it.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde_json::{json, Value};
use weir_runtime::jobs::{epoch_millis, JobInfo, JobState};

use super::io::Io;
use super::{duration, error, find_job, vertex_state, Answer, Shared};

const VERSION: &str = concat!("weir ", env!("CARGO_PKG_VERSION"));

/// `GET /overview`: the cluster (one task manager: this process) and its jobs by state.
pub(crate) async fn overview(State(web): State<Shared>) -> Json<Value> {
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

/// `GET /config`: what the dashboard reads first: refresh interval, time zone, version, features.
pub(crate) async fn config() -> Json<Value> {
    Json(json!({
        "refresh-interval": 1000,
        "timezone-name": "Coordinated Universal Time",
        "timezone-offset": 0,
        "flink-version": VERSION,
        "flink-revision": "",
        "features": {"web-submit": false, "web-cancel": true, "web-rescale": false, "web-history": false},
    }))
}

/// `GET /jobs`: each job's id and state.
pub(crate) async fn jobs(State(web): State<Shared>) -> Json<Value> {
    let jobs: Vec<Value> = web
        .registry
        .jobs()
        .iter()
        .map(|j| json!({"id": j.id.as_str(), "status": j.lifecycle().state().as_str()}))
        .collect();
    Json(json!({ "jobs": jobs }))
}

/// The state of a job's vertices (and subtasks): the job's own, `CANCELED` while cancelling.
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

/// Flink's scheduler name, for tools that read it: weir runs every subtask at once, as Flink's
/// default scheduler does for a streaming job.
const SCHEDULER: &str = "Default";

/// `STREAMING` or `BATCH`.
fn job_type(job: &JobInfo) -> &'static str {
    if job.streaming {
        "STREAMING"
    } else {
        "BATCH"
    }
}

/// The slot sharing group of every vertex: one process, one group.
fn slot_sharing_group(job: &JobInfo) -> String {
    job.id.as_str().chars().rev().collect()
}

/// A job's line of `/jobs/overview`.
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
        "jobType": job_type(job),
        "schedulerType": SCHEDULER,
        "pending-operators": 0,
    })
}

/// `GET /jobs/overview`: each job's summary, tasks counted by state.
pub(crate) async fn jobs_overview(State(web): State<Shared>) -> Json<Value> {
    let jobs: Vec<Value> = web.registry.jobs().iter().map(|j| job_summary(j)).collect();
    Json(json!({ "jobs": jobs }))
}

/// The job graph as Flink's JSON plan writes it: the sinks first, each node with its inputs.
fn plan_json(job: &JobInfo) -> Value {
    let vertices = &job.topology.vertices;
    let nodes: Vec<Value> = vertices
        .iter()
        .rev()
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
        "type": job_type(job),
        "nodes": nodes,
    })
}

/// `GET /jobs/:jid`: the job, its vertices with their I/O metrics, and its plan.
pub(crate) async fn job(State(web): State<Shared>, Path(jid): Path<String>) -> Answer {
    let job = find_job(&web, &jid)?;
    let lifecycle = job.lifecycle();
    let state = vertex_state(&job);
    let group = slot_sharing_group(&job);
    let vertices: Vec<Value> = job
        .topology
        .vertices
        .iter()
        .map(|v| {
            json!({
                "id": v.id,
                "slotSharingGroupId": group,
                "name": v.name,
                "maxParallelism": weir_runtime::partition::default_max_parallelism(v.parallelism),
                "parallelism": v.parallelism,
                "status": state.as_str(),
                "start-time": lifecycle.start_time(),
                "end-time": lifecycle.end_time(),
                "duration": duration(&job),
                "tasks": task_counts(&job, v.parallelism, true),
                "metrics": Io::of_vertex(&job, v).json(),
            })
        })
        .collect();
    let total: usize = job.topology.vertices.len();
    let status_counts = task_counts(&job, total, true);
    let mut timestamps = serde_json::Map::new();
    for name in [
        "INITIALIZING",
        "CREATED",
        "RUNNING",
        "FAILING",
        "FAILED",
        "CANCELLING",
        "CANCELED",
        "FINISHED",
        "RESTARTING",
        "SUSPENDED",
        "RECONCILING",
    ] {
        let at = match name {
            "INITIALIZING" | "CREATED" | "RUNNING" => lifecycle.start_time(),
            _ if name == state.as_str() => lifecycle.end_time(),
            _ => 0,
        };
        timestamps.insert(name.into(), json!(at));
    }
    Ok(Json(json!({
        "jid": job.id.as_str(),
        "application-id": job.id.as_str(),
        "name": job.name,
        "isStoppable": false,
        "state": lifecycle.state().as_str(),
        "job-type": job_type(&job),
        "schedulerType": SCHEDULER,
        "pending-operators": 0,
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

/// `GET /jobs/:jid/plan`: the job graph alone.
pub(crate) async fn plan(State(web): State<Shared>, Path(jid): Path<String>) -> Answer {
    let job = find_job(&web, &jid)?;
    Ok(Json(json!({ "plan": plan_json(&job) })).into_response())
}

/// `PATCH /jobs/:jid?mode=cancel`: asks the job to stop; 202 at once.
pub(crate) async fn cancel_job(
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

/// `GET /jobs/:jid/exceptions`: the error a failed job failed with.
pub(crate) async fn exceptions(State(web): State<Shared>, Path(jid): Path<String>) -> Answer {
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
