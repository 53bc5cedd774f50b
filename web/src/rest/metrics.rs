//! Metric queries: a job's own (`/jobs/:jid/metrics`) and a vertex's aggregated over its
//! subtasks (`/jobs/:jid/vertices/:vid/subtasks/metrics`), as Flink answers them: without
//! `get` the ids, with `get=a,b` the values (strings for a job; numbers `min`, `max`, `avg`,
//! `sum`, `skew` over subtasks, narrowed by `agg` and `subtasks`).

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Map, Value};

use super::{error, find_job, find_vertex, Answer, ApiError, Shared};
use crate::values::{job_metric_values, subtask_metric_values};

/// `GET /jobs/:jid/metrics[?get=…]`: the job's checkpoint and availability metrics.
pub(crate) async fn job_metrics(
    State(web): State<Shared>,
    Path(jid): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Answer {
    let job = find_job(&web, &jid)?;
    let values: Vec<(String, String)> =
        job_metric_values(&job).into_iter().map(|(id, _, value)| (id.to_string(), metric_text(id, value))).collect();
    Ok(listed_metrics(&values, query.get("get")))
}

/// A metric value as Flink's REST API writes it: a string, whole numbers without a fraction
/// (a watermark of `Long.MIN_VALUE` exactly).
pub(crate) fn metric_text(name: &str, value: f64) -> String {
    if name == "currentInputWatermark" && value <= i64::MIN as f64 {
        return i64::MIN.to_string();
    }
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        format!("{}", value as i64)
    } else {
        format!("{value:.1}")
    }
}

/// Metric ids as Flink lists them (`[{"id": …}]`), or with `get=a,b` the values of those asked
/// for, in the order asked (`[{"id": …, "value": "…"}]`; unknown ids are left out).
pub(crate) fn listed_metrics(values: &[(String, String)], get: Option<&String>) -> Response {
    let listed: Vec<Value> = match get {
        None => values.iter().map(|(id, _)| json!({ "id": id })).collect(),
        Some(wanted) => wanted
            .split(',')
            .filter_map(|id| values.iter().find(|(have, _)| have == id.trim()))
            .map(|(id, value)| json!({"id": id, "value": value}))
            .collect(),
    };
    Json(json!(listed)).into_response()
}

/// The subtasks `spec` names (`0-3,5`), all of `parallelism` without one.
fn subtasks(spec: Option<&String>, parallelism: usize) -> Result<Vec<usize>, ApiError> {
    let Some(spec) = spec else { return Ok((0..parallelism).collect()) };
    let invalid =
        || error(StatusCode::BAD_REQUEST, format!("Invalid subtasks '{spec}': expected ranges such as 0-3,5."));
    // Each range is cut to the vertex's subtasks before it is walked: `0-18446744073709551615`
    // costs what `0-3` does on four subtasks.
    let mut chosen = std::collections::BTreeSet::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (low, high) = part.split_once('-').unwrap_or((part, part));
        let (low, high): (usize, usize) =
            (low.trim().parse().map_err(|_| invalid())?, high.trim().parse().map_err(|_| invalid())?);
        chosen.extend(low..=high.min(parallelism.saturating_sub(1)));
    }
    Ok(chosen.into_iter().filter(|&i| i < parallelism).collect())
}

/// An aggregation over subtasks, as Flink's `agg` parameter names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Aggregation {
    Min,
    Max,
    Avg,
    Sum,
    Skew,
}

impl Aggregation {
    const ALL: [Aggregation; 5] =
        [Aggregation::Min, Aggregation::Max, Aggregation::Avg, Aggregation::Sum, Aggregation::Skew];

    /// Flink's name of it: its key in the answer.
    fn name(self) -> &'static str {
        match self {
            Aggregation::Min => "min",
            Aggregation::Max => "max",
            Aggregation::Avg => "avg",
            Aggregation::Sum => "sum",
            Aggregation::Skew => "skew",
        }
    }
}

/// The aggregates `agg` asks for (all five without it).
fn aggregations(agg: Option<&String>) -> Result<Vec<Aggregation>, ApiError> {
    let Some(agg) = agg else { return Ok(Aggregation::ALL.to_vec()) };
    agg.split(',')
        .map(|a| {
            Aggregation::ALL.into_iter().find(|known| known.name().eq_ignore_ascii_case(a.trim())).ok_or_else(|| {
                error(StatusCode::BAD_REQUEST, format!("Invalid aggregation '{a}': one of min, max, avg, sum, skew."))
            })
        })
        .collect()
}

/// `GET /jobs/:jid/vertices/:vid/subtasks/metrics[?get=…&agg=…&subtasks=…]`: a vertex's
/// metrics aggregated over its subtasks.
pub(crate) async fn subtasks_metrics(
    State(web): State<Shared>,
    Path((jid, vid)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> Answer {
    let job = find_job(&web, &jid)?;
    let vertex = find_vertex(&job, &vid)?;
    let chosen = subtasks(query.get("subtasks"), vertex.parallelism)?;
    let per_subtask: Vec<Vec<(String, f64)>> = chosen
        .iter()
        .map(|&i| {
            subtask_metric_values(&vertex.subtasks[i], &web.rates).into_iter().map(|m| (m.id(), m.value)).collect()
        })
        .collect();
    let Some(wanted) = query.get("get") else {
        let ids: Vec<Value> = per_subtask
            .first()
            .map_or_else(Vec::new, |values| values.iter().map(|(id, _)| json!({ "id": id })).collect());
        return Ok(Json(json!(ids)).into_response());
    };
    let aggregations = aggregations(query.get("agg"))?;
    let mut answer = Vec::new();
    for id in wanted.split(',').map(str::trim) {
        let values: Vec<f64> =
            per_subtask.iter().filter_map(|v| v.iter().find(|(have, _)| have == id)).map(|(_, v)| *v).collect();
        if values.is_empty() {
            continue;
        }
        let (min, max) = values.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let sum: f64 = values.iter().sum();
        let avg = sum / values.len() as f64;
        let mut entry = Map::new();
        entry.insert("id".into(), json!(id));
        for &aggregation in &aggregations {
            let value = match aggregation {
                Aggregation::Min => min,
                Aggregation::Max => max,
                Aggregation::Avg => avg,
                Aggregation::Sum => sum,
                Aggregation::Skew => data_skew(&values, avg),
            };
            entry.insert(aggregation.name().into(), json!(value));
        }
        answer.push(Value::Object(entry));
    }
    Ok(Json(json!(answer)).into_response())
}

/// Flink's `skew` of `values` (whose average is `avg`): their mean absolute deviation in percent
/// of their mean, at most 100; 0 for a mean of 0.
fn data_skew(values: &[f64], avg: f64) -> f64 {
    if avg == 0.0 {
        return 0.0;
    }
    let deviation = values.iter().map(|v| (avg - v).abs()).sum::<f64>() / values.len() as f64;
    (deviation / avg * 100.0).min(100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtask_ranges_and_aggregations_read_as_flink_writes_them() {
        assert_eq!(subtasks(Some(&"0-2,4,9".to_string()), 5).unwrap(), vec![0, 1, 2, 4]);
        assert_eq!(subtasks(None, 3).unwrap(), vec![0, 1, 2]);
        assert!(subtasks(Some(&"a-b".to_string()), 3).is_err());
        // Ranges past the last subtask are cut to it at once (this one took minutes walked).
        let huge = format!("0-{},3-{}", u64::MAX, usize::MAX);
        assert_eq!(subtasks(Some(&huge), 4).unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(subtasks(Some(&"7-9,2-1".to_string()), 4).unwrap(), Vec::<usize>::new());
        assert_eq!(aggregations(Some(&"MIN,sum".to_string())).unwrap(), vec![Aggregation::Min, Aggregation::Sum]);
        assert!(aggregations(Some(&"median".to_string())).is_err());
    }

    /// Flink's skew: mean absolute deviation over the mean, in percent, capped at 100.
    #[test]
    fn skew_is_flinks_mean_absolute_deviation() {
        assert_eq!(data_skew(&[287.0, 190.0], 238.5), 48.5 / 238.5 * 100.0);
        assert_eq!(data_skew(&[5.0, 5.0, 5.0], 5.0), 0.0);
        assert_eq!(data_skew(&[0.0, 0.0], 0.0), 0.0);
        assert_eq!(data_skew(&[0.0, 0.0, 0.0, 100.0], 25.0), 100.0);
    }
}
