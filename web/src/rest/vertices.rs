//! A vertex of a job: its subtasks, back pressure, watermarks and metrics.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::response::IntoResponse;
use axum::Json;
use serde_json::{json, Value};
use weir_runtime::jobs::{epoch_millis, VertexInfo};

use super::io::{aggregate, aggregated_metrics, status_duration, Io};
use super::metrics::{listed_metrics, metric_text};
use super::{duration, find_job, find_vertex, vertex_state, Answer, Shared};
use crate::rates::Rates;
use crate::values::subtask_metric_values;

/// `GET /jobs/:jid/vertices/:vid`: the vertex's subtasks and their aggregate.
pub(crate) async fn vertex(State(web): State<Shared>, Path((jid, vid)): Path<(String, String)>) -> Answer {
    let job = find_job(&web, &jid)?;
    let vertex = find_vertex(&job, &vid)?;
    let lifecycle = job.lifecycle();
    let ios = Io::of_subtasks(&job, vertex);
    let subtasks: Vec<Value> = ios
        .iter()
        .enumerate()
        .map(|(i, io)| {
            json!({
                "subtask": i,
                "status": vertex_state(&job).as_str(),
                "attempt": 0,
                "endpoint": "localhost:-1",
                "start-time": lifecycle.start_time(),
                "start_time": lifecycle.start_time(),
                "end-time": lifecycle.end_time(),
                "duration": duration(&job),
                "metrics": io.json(),
                "taskmanager-id": "weir",
                "status-duration": status_duration(&job),
            })
        })
        .collect();
    let running: Vec<f64> = ios.iter().map(|_| duration(&job) as f64).collect();
    let zero = vec![0.0; ios.len()];
    Ok(Json(json!({
        "id": vertex.id,
        "name": vertex.name,
        "parallelism": vertex.parallelism,
        "maxParallelism": weir_runtime::partition::default_max_parallelism(vertex.parallelism),
        "now": epoch_millis(),
        "subtasks": subtasks,
        "aggregated": {
            "metrics": aggregated_metrics(&ios),
            "status-duration": {
                "CREATED": aggregate(&zero),
                "SCHEDULED": aggregate(&zero),
                "DEPLOYING": aggregate(&zero),
                "INITIALIZING": aggregate(&zero),
                "RUNNING": aggregate(&running),
            },
        },
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

/// `GET /jobs/:jid/vertices/:vid/backpressure`: per subtask the back-pressured, idle and busy ratios.
pub(crate) async fn backpressure(State(web): State<Shared>, Path((jid, vid)): Path<(String, String)>) -> Answer {
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
                "backpressure-level": backpressure_level(ratio),
                "backpressureLevel": backpressure_level(ratio),
                "ratio": round2(ratio),
                "idleRatio": round2(rates.idle_ms() / 1000.0),
                "busyRatio": round2(rates.busy_ms / 1000.0),
            })
        })
        .collect();
    Ok(Json(json!({
        "status": "ok",
        "backpressure-level": backpressure_level(worst),
        "backpressureLevel": backpressure_level(worst),
        "end-timestamp": epoch_millis(),
        "subtasks": subtasks,
    }))
    .into_response())
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// `GET /jobs/:jid/vertices/:vid/watermarks`: each subtask's current input watermark.
pub(crate) async fn watermarks(State(web): State<Shared>, Path((jid, vid)): Path<(String, String)>) -> Answer {
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
        for metric in subtask_metric_values(subtask, rates) {
            let (name, value) = (metric.id(), metric.value);
            values.push((format!("{i}.{name}"), metric_text(&name, value)));
        }
    }
    values
}

/// `GET /jobs/:jid/vertices/:vid/metrics[?get=…]`: the metric ids, or the values asked for.
pub(crate) async fn vertex_metrics(
    State(web): State<Shared>,
    Path((jid, vid)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> Answer {
    let job = find_job(&web, &jid)?;
    let vertex = find_vertex(&job, &vid)?;
    let values = vertex_metric_values(vertex, &web.rates);
    Ok(listed_metrics(&values, query.get("get")))
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
}
