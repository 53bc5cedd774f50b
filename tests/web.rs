//! weir's web side as its users reach it: Flink's REST API over a running job (every endpoint,
//! Flink's field names, a savepoint and a cancel through the API), `/metrics` in the Prometheus
//! text format agreeing with `--stats`, a port in use, and a client that hangs.

use crate::common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::http::{get_json, request, request_with};
use serde_json::Value;
use weir::connectors::ConnectorRegistry;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

/// A session writing its results nowhere, with `settings` set.
fn session(settings: &[(&str, &str)]) -> Session {
    let mut session = Session::new(
        RuntimeConfig::default().with_parallelism(2),
        ConnectorRegistry::default(),
        Box::new(std::io::sink()),
    );
    for (key, value) in settings {
        session.set(key, value).unwrap_or_else(|e| panic!("SET {key}: {e}"));
    }
    session
}

/// A windowed job over an endless generator: two vertices, a HASH edge, event time.
const WINDOWED: &str = "
CREATE TABLE bids (
  item INT, price INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '5000', 'fields.item.min' = '1', 'fields.item.max' = '20');
CREATE TABLE counts (item INT, w TIMESTAMP(3), n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO counts
SELECT item, window_start, COUNT(*)
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '1' SECOND))
GROUP BY item, window_start, window_end;
";

/// Polls `check` every 50 ms until it gives a value, failing after 60 s.
fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn keys(value: &Value) -> Vec<&str> {
    value.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default()
}

fn assert_has(value: &Value, fields: &[&str], what: &str) {
    for field in fields {
        assert!(value.get(field).is_some(), "{what} lacks '{field}': has {:?}", keys(value));
    }
}

/// A detached session serving the REST API, checkpointing every 200 ms into `dir/checkpoints`
/// and taking savepoints into `dir/savepoints`.
fn checkpointing_session(dir: &std::path::Path) -> Session {
    let checkpoints = dir.join("checkpoints").display().to_string();
    let savepoints = dir.join("savepoints").display().to_string();
    let mut session = session(&[
        ("rest.port", "0"),
        ("execution.checkpointing.interval", "200ms"),
        ("execution.checkpointing.dir", &checkpoints),
        ("execution.checkpointing.savepoint-dir", &savepoints),
    ]);
    session.detach_unbounded_jobs(true);
    session
}

/// Starts the windowed job in a detached session serving the REST API; returns the session,
/// the server's address and the job's id.
fn running_job(dir: &std::path::Path) -> (Session, SocketAddr, String) {
    let mut session = checkpointing_session(dir);
    session.execute_script(WINDOWED).unwrap();
    let id = session.take_submitted().pop().expect("the INSERT was submitted").to_string();
    let address = session.rest_address().expect("rest.port serves the REST API");
    (session, address, id)
}

#[test]
fn the_rest_api_serves_flinks_endpoints_for_a_running_job_and_cancels_it() {
    let dir = tempfile::tempdir().unwrap();
    let (session, at, jid) = running_job(dir.path());

    let jobs = get_json(at, "/jobs");
    assert_eq!(jobs["jobs"][0]["id"], jid.as_str());
    assert_eq!(jobs["jobs"][0]["status"], "RUNNING");
    let overview = get_json(at, "/overview");
    assert_has(
        &overview,
        &[
            "taskmanagers",
            "slots-total",
            "slots-available",
            "jobs-running",
            "jobs-finished",
            "jobs-cancelled",
            "jobs-failed",
            "flink-version",
        ],
        "/overview",
    );
    assert_eq!(overview["jobs-running"], 1);
    assert_has(&get_json(at, "/config"), &["refresh-interval", "flink-version", "features"], "/config");
    let listed = get_json(at, "/jobs/overview");
    let summary = &listed["jobs"][0];
    assert_has(
        summary,
        &["jid", "name", "state", "start-time", "end-time", "duration", "last-modification", "tasks"],
        "/jobs/overview",
    );
    assert_eq!(summary["name"], "insert-into_default_catalog.default_database.counts");
    assert_eq!(summary["tasks"]["total"], 4);
    assert_eq!(summary["tasks"]["running"], 4);
    // `/v1` in front of a path is accepted, as Flink accepts it.
    assert_eq!(get_json(at, "/v1/jobs/overview")["jobs"][0]["jid"], jid.as_str());

    // The job: its vertices (operator chains) and the plan with the ship strategy on each edge.
    let job = eventually("the sink has received rows", || {
        let job = get_json(at, &format!("/jobs/{jid}"));
        let sink_in = job["vertices"][1]["metrics"]["read-records"].as_u64().unwrap_or(0);
        (sink_in > 0).then_some(job)
    });
    assert_has(
        &job,
        &[
            "jid",
            "name",
            "isStoppable",
            "state",
            "start-time",
            "end-time",
            "duration",
            "now",
            "timestamps",
            "vertices",
            "status-counts",
            "plan",
        ],
        "/jobs/:jid",
    );
    assert_eq!(job["state"], "RUNNING");
    let vertices = job["vertices"].as_array().unwrap();
    assert_eq!(vertices.len(), 2);
    for vertex in vertices {
        assert_has(
            vertex,
            &["id", "name", "parallelism", "status", "start-time", "end-time", "duration", "tasks", "metrics"],
            "a vertex",
        );
        assert_eq!(vertex["parallelism"], 2);
        assert_eq!(vertex["status"], "RUNNING");
        assert_eq!(vertex["tasks"]["RUNNING"], 2);
        assert_has(
            &vertex["metrics"],
            &["read-bytes", "write-bytes", "read-records", "write-records", "read-records-complete"],
            "a vertex's metrics",
        );
    }
    assert!(vertices[0]["name"].as_str().unwrap().starts_with("bids -> WatermarkAssigner"));
    assert!(vertices[1]["name"].as_str().unwrap().ends_with("Sink: counts"));
    // As in Flink 2.3, a source's records in are the rows it read, and a sink's records out
    // the rows it wrote: the REST API, the dashboard and the metrics say the same.
    assert!(vertices[0]["metrics"]["read-records"].as_u64().unwrap() > 0);
    assert!(vertices[0]["metrics"]["write-records"].as_u64().unwrap() > 0);
    let metrics = get_json(
        at,
        &format!("/jobs/{jid}/vertices/{}/subtasks/metrics?get=numRecordsIn", vertices[0]["id"].as_str().unwrap()),
    );
    assert!(metrics[0]["sum"].as_f64().unwrap() > 0.0, "{metrics}");
    let plan = &job["plan"];
    assert_eq!((plan["jid"].as_str(), plan["type"].as_str()), (Some(jid.as_str()), Some("STREAMING")));
    let nodes = plan["nodes"].as_array().unwrap();
    let (source, window) = (vertices[0]["id"].as_str().unwrap(), vertices[1]["id"].as_str().unwrap());
    let window_node = nodes.iter().find(|n| n["id"] == window).unwrap();
    assert_has(
        window_node,
        &["id", "parallelism", "operator", "description", "inputs", "optimizer_properties"],
        "a plan node",
    );
    assert_eq!(window_node["inputs"][0]["id"], source);
    assert_eq!(window_node["inputs"][0]["ship_strategy"], "HASH");
    assert_eq!(window_node["inputs"][0]["num"], 0);
    assert_eq!(get_json(at, &format!("/jobs/{jid}/plan"))["plan"], *plan);

    // A vertex, its subtasks, watermarks, back pressure and metrics.
    let detail = get_json(at, &format!("/jobs/{jid}/vertices/{window}"));
    assert_has(&detail, &["id", "name", "parallelism", "now", "subtasks"], "/vertices/:vid");
    assert_has(
        &detail["subtasks"][1],
        &["subtask", "status", "attempt", "start-time", "duration", "metrics"],
        "a subtask",
    );
    let marks = eventually("the window vertex has a watermark", || {
        let marks = get_json(at, &format!("/jobs/{jid}/vertices/{window}/watermarks"));
        let all_set =
            marks.as_array().unwrap().iter().all(|m| m["value"].as_str().unwrap().parse::<i64>().unwrap() > 0);
        all_set.then_some(marks)
    });
    assert_eq!(marks[0]["id"], "0.currentInputWatermark");
    assert_eq!(marks.as_array().unwrap().len(), 2);
    let pressure = get_json(at, &format!("/jobs/{jid}/vertices/{window}/backpressure"));
    assert_eq!(pressure["status"], "ok");
    assert!(["ok", "low", "high"].contains(&pressure["backpressure-level"].as_str().unwrap()));
    assert_has(
        &pressure["subtasks"][0],
        &["subtask", "backpressure-level", "ratio", "idleRatio", "busyRatio"],
        "a subtask's back pressure",
    );
    let ids = get_json(at, &format!("/jobs/{jid}/vertices/{window}/metrics"));
    let ids: Vec<&str> = ids.as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    for id in [
        "0.numRecordsIn",
        "1.numRecordsOutPerSecond",
        "0.busyTimeMsPerSecond",
        "1.backPressuredTimeMsPerSecond",
        "0.currentInputWatermark",
    ] {
        assert!(ids.contains(&id), "no metric {id} in {ids:?}");
    }
    let values = get_json(at, &format!("/jobs/{jid}/vertices/{window}/metrics?get=0.numRecordsIn,1.numRecordsIn"));
    let values: Vec<u64> =
        values.as_array().unwrap().iter().map(|m| m["value"].as_str().unwrap().parse().unwrap()).collect();
    assert_eq!(values.len(), 2);
    assert!(values.iter().sum::<u64>() > 0, "metric values are strings of the counts: {values:?}");

    // Aggregated over subtasks: numbers, narrowed by agg and subtasks.
    let aggregated =
        get_json(at, &format!("/jobs/{jid}/vertices/{window}/subtasks/metrics?get=numRecordsIn&agg=min,max,sum"));
    assert_eq!(aggregated[0]["id"], "numRecordsIn");
    assert_eq!(keys(&aggregated[0]).len(), 4, "{aggregated}");
    assert!(aggregated[0]["sum"].as_f64().unwrap() >= aggregated[0]["max"].as_f64().unwrap());
    let one = get_json(at, &format!("/jobs/{jid}/vertices/{window}/subtasks/metrics?get=numRecordsIn&subtasks=1"));
    assert_eq!(one[0]["min"], one[0]["max"]);
    assert_eq!(one[0]["skew"], 0.0);

    // Checkpoints: counts, the latest, the history, the configuration.
    let stats = eventually("a checkpoint completed", || {
        let stats = get_json(at, &format!("/jobs/{jid}/checkpoints"));
        (stats["counts"]["completed"].as_u64().unwrap_or(0) >= 2).then_some(stats)
    });
    assert_has(&stats["counts"], &["restored", "total", "in_progress", "completed", "failed"], "checkpoint counts");
    assert_has(&stats["summary"], &["state_size", "checkpointed_size", "end_to_end_duration"], "checkpoint summary");
    let latest = &stats["latest"]["completed"];
    assert_has(
        latest,
        &[
            "id",
            "status",
            "is_savepoint",
            "trigger_timestamp",
            "latest_ack_timestamp",
            "state_size",
            "checkpointed_size",
            "end_to_end_duration",
            "num_subtasks",
            "num_acknowledged_subtasks",
            "external_path",
        ],
        "the latest checkpoint",
    );
    assert_eq!(latest["status"], "COMPLETED");
    assert_eq!(latest["num_subtasks"], 4);
    assert!(latest["checkpointed_size"].as_u64().unwrap() > 0);
    assert!(std::path::Path::new(latest["external_path"].as_str().unwrap()).exists());
    assert_eq!(stats["history"][0]["id"], latest["id"]);
    let job_metrics = get_json(at, &format!("/jobs/{jid}/metrics?get=numberOfCompletedCheckpoints,numRestarts"));
    let completed: u64 = job_metrics[0]["value"].as_str().unwrap().parse().unwrap();
    assert!(completed >= 2);
    assert_eq!((job_metrics[1]["id"].as_str(), job_metrics[1]["value"].as_str()), (Some("numRestarts"), Some("0")));
    let config = get_json(at, &format!("/jobs/{jid}/checkpoints/config"));
    assert_eq!((config["mode"].as_str(), config["interval"].as_u64()), (Some("exactly_once"), Some(200)));
    assert_has(
        &config,
        &["timeout", "min_pause", "max_concurrent", "externalization", "state_backend", "checkpoint_storage"],
        "checkpoints/config",
    );
    assert_eq!(get_json(at, &format!("/jobs/{jid}/exceptions"))["exceptionHistory"]["entries"], serde_json::json!([]));

    // A savepoint that lets the job run on.
    let target = dir.path().join("savepoints").join("api");
    let body = format!(r#"{{"target-directory": "{}", "cancel-job": false}}"#, target.display());
    let triggered = request(at, "POST", &format!("/jobs/{jid}/savepoints"), Some(&body));
    assert_eq!(triggered.status, 202, "{}", triggered.body);
    let location = savepoint_location(at, &jid, &triggered);
    assert!(location.starts_with(&target.display().to_string()) && std::path::Path::new(&location).exists());
    assert_eq!(get_json(at, &format!("/jobs/{jid}"))["state"], "RUNNING");

    // Unknown jobs and paths are Flink's errors.
    let missing = request(at, "GET", "/jobs/00000000000000000000000000000000", None);
    assert_eq!(missing.status, 404);
    assert!(missing.json()["errors"][0].as_str().unwrap().contains("not found"));
    assert_eq!(request(at, "GET", "/nope", None).status, 404);

    // Cancelled through the API, the job ends as CANCELED.
    let cancelled = request(at, "PATCH", &format!("/jobs/{jid}?mode=cancel"), None);
    assert_eq!(cancelled.status, 202, "{}", cancelled.body);
    eventually("the job is cancelled", || (get_json(at, &format!("/jobs/{jid}"))["state"] == "CANCELED").then_some(()));
    let overview = get_json(at, "/overview");
    assert_eq!((overview["jobs-running"].as_u64(), overview["jobs-cancelled"].as_u64()), (Some(0), Some(1)));
    assert_eq!(get_json(at, &format!("/jobs/{jid}"))["vertices"][0]["status"], "CANCELED");
    drop(session);
}

#[test]
fn stop_with_a_savepoint_through_the_api_writes_it_and_stops_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let (session, at, jid) = running_job(dir.path());
    eventually("a checkpoint completed", || {
        let stats = get_json(at, &format!("/jobs/{jid}/checkpoints"));
        (stats["counts"]["completed"].as_u64().unwrap_or(0) >= 1).then_some(())
    });
    let target = dir.path().join("savepoints").join("stopped");
    let body = format!(r#"{{"targetDirectory": "{}", "drain": false}}"#, target.display());
    let triggered = request(at, "POST", &format!("/jobs/{jid}/stop"), Some(&body));
    assert_eq!(triggered.status, 202, "{}", triggered.body);
    assert!(std::path::Path::new(&savepoint_location(at, &jid, &triggered)).exists());
    eventually("the job has stopped", || (get_json(at, &format!("/jobs/{jid}"))["state"] == "FINISHED").then_some(()));
    drop(session);
}

/// `STOP JOB … WITH SAVEPOINT WITH DRAIN` (and `"drain": true` through the API) ends the
/// sources first: event time ends, so the day-long windows still open fire into the sink before
/// the savepoint, and the job ends finished. Without the drain, the same stop writes no window.
#[test]
fn stop_with_drain_fires_the_open_windows_before_the_savepoint() {
    let dir = tempfile::tempdir().unwrap();
    let job = |out: &str| {
        format!(
            "CREATE TABLE ev{out} (k INT, ts AS CAST(CURRENT_TIMESTAMP AS TIMESTAMP(3)), WATERMARK FOR ts AS ts) \
               WITH ('connector' = 'datagen', 'rows-per-second' = '200', 'fields.k.min' = '1', 'fields.k.max' = '3');\n\
             CREATE TABLE {out} (k INT, n BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
             INSERT INTO {out} SELECT k, COUNT(*) FROM TABLE(TUMBLE(TABLE ev{out}, DESCRIPTOR(ts), INTERVAL '1' DAY)) \
               GROUP BY k, window_start, window_end;\n",
            dir.path().join(out).display()
        )
    };
    let mut session = checkpointing_session(dir.path());
    let at = session.rest_address().unwrap();
    let rows = |out: &str| -> Vec<(i64, i64)> {
        let Ok(files) = std::fs::read_dir(dir.path().join(out)) else { return Vec::new() };
        let mut rows: Vec<(i64, i64)> = files
            .flatten()
            .filter(|f| !f.file_name().to_string_lossy().starts_with('.'))
            .flat_map(|f| std::fs::read_to_string(f.path()).unwrap().lines().map(str::to_string).collect::<Vec<_>>())
            .map(|l| {
                let (k, n) = l.split_once(',').unwrap();
                (k.parse().unwrap(), n.parse().unwrap())
            })
            .collect();
        rows.sort_unstable();
        rows
    };
    let completed = |jid: &str| {
        eventually("a checkpoint completed", || {
            let stats = get_json(at, &format!("/jobs/{jid}/checkpoints"));
            (stats["counts"]["completed"].as_u64().unwrap_or(0) >= 2).then_some(())
        })
    };
    for (out, stop) in [("plain", "WITH SAVEPOINT"), ("drained", "WITH SAVEPOINT WITH DRAIN"), ("api", "")] {
        session.execute_script(&job(out)).unwrap();
        let jid = session.take_submitted().pop().unwrap().to_string();
        completed(&jid);
        if stop.is_empty() {
            let triggered = request(at, "POST", &format!("/jobs/{jid}/stop"), Some(r#"{"drain": true}"#));
            assert_eq!(triggered.status, 202, "{}", triggered.body);
            assert!(std::path::Path::new(&savepoint_location(at, &jid, &triggered)).exists());
        } else {
            session.execute_script(&format!("STOP JOB '{jid}' {stop};")).unwrap();
        }
        eventually("the job ended", || (get_json(at, &format!("/jobs/{jid}"))["state"] == "FINISHED").then_some(()));
        let written = rows(out);
        if out == "plain" {
            assert_eq!(written, [], "a stop without drain fires no window");
            continue;
        }
        // One row per key and day (two days should the run cross midnight), each counting rows.
        assert!(written.len() >= 3 && written.iter().all(|(k, n)| (1..=3).contains(k) && *n > 0), "{out}: {written:?}");
    }
    drop(session);
}

/// Where the savepoint `triggered` (the answer to a savepoint or stop request) went, once it
/// completed.
fn savepoint_location(at: SocketAddr, jid: &str, triggered: &common::http::Response) -> String {
    let trigger = triggered.json()["request-id"].as_str().unwrap().to_string();
    let location = eventually("the savepoint completed", || {
        let status = get_json(at, &format!("/jobs/{jid}/savepoints/{trigger}"));
        (status["status"]["id"] == "COMPLETED").then(|| status["operation"]["location"].as_str().map(str::to_string))
    });
    location.expect("a completed savepoint has a location")
}

/// Every sample of `family`, as (labels, value).
fn samples<'a>(scrape: &'a prometheus_parse::Scrape, family: &str) -> Vec<(&'a prometheus_parse::Labels, f64)> {
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == family)
        .map(|s| match s.value {
            prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Untyped(v) => (&s.labels, v),
            _ => panic!("{family} is not a gauge"),
        })
        .collect()
}

fn scrape(address: SocketAddr) -> prometheus_parse::Scrape {
    let response = request(address, "GET", "/metrics", None);
    assert_eq!(response.status, 200);
    assert!(response.content_type.as_deref().is_some_and(|t| t.starts_with("text/plain; version=0.0.4")));
    let lines = response.body.lines().map(|l| Ok(l.to_string()));
    prometheus_parse::Scrape::parse(lines).expect("the Prometheus text format parses")
}

#[test]
fn prometheus_metrics_carry_flinks_names_and_labels_and_agree_with_the_stats() {
    let mut session = session(&[("metrics.reporter.prom.port", "0"), ("rest.port", "0")]);
    session
        .execute_script(
            "CREATE TABLE src (k INT, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '20000',
                 'fields.k.min' = '1', 'fields.k.max' = '50');
             CREATE TABLE totals (k INT, total BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');
             INSERT INTO totals SELECT k, SUM(v) FROM src WHERE v > 0 GROUP BY k;",
        )
        .unwrap();
    let report = session.job_reports()[0].clone();
    let scraped = scrape(session.prometheus_address().expect("metrics.reporter.prom.port serves /metrics"));
    // The REST port serves the same families.
    let from_rest = scrape(session.rest_address().unwrap());
    let names = |s: &prometheus_parse::Scrape| {
        let mut names: Vec<String> = s.samples.iter().map(|x| x.metric.clone()).collect();
        names.dedup();
        names
    };
    assert_eq!(names(&scraped), names(&from_rest));

    let records_in = samples(&scraped, "flink_taskmanager_job_task_numRecordsIn");
    let records_out = samples(&scraped, "flink_taskmanager_job_task_numRecordsOut");
    assert_eq!(records_in.len(), 4, "a sample per subtask of the two vertices");
    for (labels, _) in &records_in {
        for label in
            ["job_id", "job_name", "task_id", "task_name", "subtask_index", "task_attempt_num", "host", "tm_id"]
        {
            assert!(labels.get(label).is_some(), "no label {label}");
        }
        assert_eq!(labels.get("job_name"), Some("insert_into_default_catalog_default_database_totals"));
    }
    let summed = |samples: &[(&prometheus_parse::Labels, f64)], task: &dyn Fn(&str) -> bool| -> u64 {
        samples.iter().filter(|(l, _)| task(l.get("task_name").unwrap())).map(|(_, v)| *v as u64).sum()
    };
    let source = |name: &str| name.starts_with("src");
    let sink = |name: &str| name.ends_with("Sink:_totals");
    // What `--stats` reports: rows the sources read, rows the sinks wrote, per vertex rows in and out.
    assert_eq!(summed(&records_in, &source), report.rows_in);
    assert_eq!(summed(&records_out, &sink), report.rows_out);
    assert_eq!(report.rows_in, 20_000);
    let by_vertex: HashMap<&str, (u64, u64)> =
        report.vertices.iter().map(|v| (v.name.as_str(), (v.records_in, v.records_out))).collect();
    let sink_vertex = report.vertices.iter().find(|v| v.name.ends_with("Sink: totals")).unwrap();
    assert_eq!(summed(&records_in, &sink), by_vertex[sink_vertex.name.as_str()].0);
    let source_vertex = report.vertices.iter().find(|v| v.name.starts_with("src")).unwrap();
    assert_eq!(summed(&records_out, &source), source_vertex.records_out);

    for family in [
        "flink_taskmanager_job_task_numRecordsInPerSecond",
        "flink_taskmanager_job_task_numRecordsOutPerSecond",
        "flink_taskmanager_job_task_busyTimeMsPerSecond",
        "flink_taskmanager_job_task_backPressuredTimeMsPerSecond",
        "flink_taskmanager_job_task_idleTimeMsPerSecond",
        "flink_taskmanager_job_task_currentInputWatermark",
        "flink_jobmanager_job_lastCheckpointDuration",
        "flink_jobmanager_job_numberOfCompletedCheckpoints",
        "flink_jobmanager_job_numberOfFailedCheckpoints",
        "flink_jobmanager_numRunningJobs",
    ] {
        assert!(!samples(&scraped, family).is_empty(), "no {family}");
    }
    assert_eq!(samples(&scraped, "flink_jobmanager_numRunningJobs")[0].1, 0.0);
}

#[test]
fn a_window_job_reports_its_late_records_per_operator() {
    let mut session = session(&[("rest.port", "0")]);
    session
        .execute_script(
            "CREATE TABLE ev (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen',
                 'number-of-rows' = '2000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '2000',
                 'fields.ts.max-past' = '60s');
             CREATE TABLE out (w TIMESTAMP(3), n BIGINT) WITH ('connector' = 'blackhole');
             INSERT INTO out SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND))
             GROUP BY window_start, window_end;",
        )
        .unwrap();
    let dropped: u64 = session.job_reports()[0]
        .vertices
        .iter()
        .flat_map(|v| &v.bundles)
        .map(|(_, counts)| counts.late_records_dropped)
        .sum();
    let scraped = scrape(session.rest_address().unwrap());
    let family = samples(&scraped, "flink_taskmanager_job_task_operator_numLateRecordsDropped");
    assert_eq!(family.iter().map(|(_, v)| *v as u64).sum::<u64>(), dropped);
    assert!(dropped > 0, "rows up to 60 s in the past arrive late");
    assert!(family
        .iter()
        .all(|(labels, _)| labels.get("operator_name").is_some() && labels.get("operator_id").is_some()));
}

#[test]
fn a_rest_port_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("one.sql");
    std::fs::write(&script, "SELECT 1;\n").unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["run", script.to_str().unwrap(), "--set", &format!("rest.port={port}")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("127.0.0.1:{port}")) && stderr.contains("rest.port"), "{stderr}");
    assert!(stderr.to_lowercase().contains("in use"), "{stderr}");
}

#[test]
fn a_client_that_hangs_holds_up_neither_the_job_nor_the_end_of_the_session() {
    use std::io::Write;
    let mut session = session(&[("rest.port", "0")]);
    let at = session.rest_address().unwrap();
    // Half a request, never finished; and a connection that never sends anything.
    let mut half = std::net::TcpStream::connect(at).unwrap();
    half.write_all(b"GET /jobs/overview HTTP/1.1\r\nHost: x\r\n").unwrap();
    let _silent = std::net::TcpStream::connect(at).unwrap();
    session
        .execute_script(
            "CREATE TABLE src (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '100000',
                 'rows-per-second' = '1000000000');
             CREATE TABLE out (k INT, n BIGINT) WITH ('connector' = 'blackhole');
             INSERT INTO out SELECT k, COUNT(*) FROM src GROUP BY k;",
        )
        .unwrap();
    assert_eq!(session.job_reports()[0].rows_in, 100_000);
    assert_eq!(get_json(at, "/jobs/overview")["jobs"][0]["state"], "FINISHED");
    // The session ends (its server stops) with both connections still open.
    drop(session);
    assert!(std::net::TcpStream::connect(at).is_err() || request_fails(at));
}

/// Whether a request to `at` gets no answer (the server has stopped).
fn request_fails(at: SocketAddr) -> bool {
    std::panic::catch_unwind(|| request(at, "GET", "/jobs", None)).map_or(true, |r| r.status == 0)
}

#[test]
fn a_failed_job_shows_failed_with_its_exception() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("bad.csv");
    std::fs::write(&data, "1,2\n3,4\nnot a number,5\n").unwrap();
    let mut session = session(&[("rest.port", "0")]);
    let failed = session.execute_script(&format!(
        "CREATE TABLE src (a INT, b INT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
         CREATE TABLE out (a INT, b INT) WITH ('connector' = 'blackhole');
         INSERT INTO out SELECT a, b FROM src;",
        data.display()
    ));
    let message = failed.expect_err("the malformed line fails the job").error.to_string();
    let at = session.rest_address().unwrap();
    let listed = get_json(at, "/jobs/overview");
    assert_eq!(listed["jobs"][0]["state"], "FAILED");
    let jid = listed["jobs"][0]["jid"].as_str().unwrap().to_string();
    let entries = get_json(at, &format!("/jobs/{jid}/exceptions"))["exceptionHistory"]["entries"].clone();
    assert_eq!(entries.as_array().unwrap().len(), 1);
    let trace = entries[0]["stacktrace"].as_str().unwrap();
    assert!(trace.contains("bad.csv") && message.contains("bad.csv"), "{trace}\n{message}");
    assert!(entries[0]["timestamp"].as_i64().unwrap() > 0);
    assert_eq!(get_json(at, "/overview")["jobs-failed"], 1);
    assert!(get_json(at, &format!("/jobs/{jid}"))["end-time"].as_i64().unwrap() > 0);
}

/// The JSON type of every field below `value`, by path (`.vertices[].metrics.read-records`);
/// arrays contribute the fields of all their elements, a list of metric ids is not descended.
fn field_types(
    value: &Value,
    path: &str,
    out: &mut std::collections::BTreeMap<String, std::collections::BTreeSet<&'static str>>,
) {
    let kind = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    match value {
        Value::Object(fields) => {
            for (key, field) in fields {
                let at = format!("{path}.{key}");
                out.entry(at.clone()).or_default().insert(kind(field));
                field_types(field, &at, out);
            }
        }
        Value::Array(items) if !path.ends_with("metrics") => {
            items.iter().for_each(|item| field_types(item, &format!("{path}[]"), out));
        }
        _ => {}
    }
}

/// Every field Apache Flink 2.3's REST API answers for a running windowed job (captured in
/// `tests/fixtures/flink_rest/flink-2.3.json` by `capture.py` there) weir answers too, with a
/// value of the same JSON type, for the same job.
#[test]
fn every_field_flink_answers_weir_answers_with_the_same_type() {
    let flink: Value =
        serde_json::from_str(include_str!("fixtures/flink_rest/flink-2.3.json")).expect("the fixture is JSON");
    let dir = tempfile::tempdir().unwrap();
    let (session, at, jid) = running_job(dir.path());
    let job = eventually("a checkpoint completed and rows reached the window", || {
        let stats = get_json(at, &format!("/jobs/{jid}/checkpoints"));
        let job = get_json(at, &format!("/jobs/{jid}"));
        let flowing = job["vertices"][1]["metrics"]["read-records"].as_u64().unwrap_or(0) > 0;
        (flowing && stats["counts"]["completed"].as_u64().unwrap_or(0) >= 1).then_some(job)
    });
    let vid = job["vertices"][1]["id"].as_str().unwrap().to_string();
    let mut differences = Vec::new();
    for (endpoint, expected) in flink.as_object().unwrap() {
        if endpoint.ends_with("/metrics") {
            continue; // a list of ids: weir's metrics are a subset, checked by name above
        }
        let path = endpoint.replace(":jid", &jid).replace(":vid", &vid);
        let answer = get_json(at, &path);
        let (mut theirs, mut ours) = (Default::default(), Default::default());
        field_types(expected, "", &mut theirs);
        field_types(&answer, "", &mut ours);
        for (field, kinds) in &theirs {
            let Some(ours) = ours.get(field) else {
                differences.push(format!("{endpoint}: no field {field}"));
                continue;
            };
            let (theirs, ours): (Vec<_>, Vec<_>) =
                (kinds.iter().filter(|k| **k != "null").collect(), ours.iter().filter(|k| **k != "null").collect());
            if !theirs.is_empty() && !ours.is_empty() && theirs != ours {
                differences.push(format!("{endpoint}: {field} is {ours:?}, Flink's is {theirs:?}"));
            }
        }
    }
    assert!(differences.is_empty(), "weir's REST API differs from Flink 2.3's:\n{}", differences.join("\n"));
    drop(session);
}

/// Every metric family weir's `/metrics` writes is one Flink 2.3's Prometheus reporter writes
/// for the same job (`tests/fixtures/flink_rest/flink-2.3-prometheus.txt`), with the same label
/// names.
#[test]
fn prometheus_families_and_labels_are_flinks() {
    let flink: HashMap<String, Vec<String>> = include_str!("fixtures/flink_rest/flink-2.3-prometheus.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .fold(HashMap::new(), |mut all, (family, labels)| {
            all.entry(family.to_string()).or_default().push(labels.to_string());
            all
        });
    let dir = tempfile::tempdir().unwrap();
    let (session, at, jid) = running_job(dir.path());
    eventually("a checkpoint completed", || {
        let stats = get_json(at, &format!("/jobs/{jid}/checkpoints"));
        (stats["counts"]["completed"].as_u64().unwrap_or(0) >= 1).then_some(())
    });
    let scraped = scrape(at);
    let mut differences = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for sample in &scraped.samples {
        if !seen.insert(sample.metric.clone()) {
            continue;
        }
        let mut labels: Vec<&str> = sample.labels.keys().map(|k| k.as_str()).collect();
        labels.sort_unstable();
        let labels = labels.join(",");
        match flink.get(&sample.metric) {
            None => differences.push(format!("Flink has no {}", sample.metric)),
            Some(theirs) if !theirs.contains(&labels) => {
                differences.push(format!("{} has labels {labels}, Flink's {theirs:?}", sample.metric))
            }
            Some(_) => {}
        }
    }
    assert!(seen.len() >= 20, "only {} families", seen.len());
    assert!(differences.is_empty(), "weir's /metrics differs from Flink 2.3's reporter:\n{}", differences.join("\n"));
    drop(session);
}

/// What the session printed, shared with the test.
#[derive(Clone, Default)]
struct Printed(Arc<parking_lot::Mutex<Vec<u8>>>);

impl Printed {
    /// The savepoint path `STOP JOB … WITH SAVEPOINT` printed in its table.
    fn savepoint_path(&self) -> String {
        let text = String::from_utf8(self.0.lock().clone()).unwrap();
        text.lines()
            .filter_map(|l| l.trim_matches(|c| c == '|' || c == ' ').split_whitespace().next())
            .find(|cell| cell.contains("savepoint-"))
            .unwrap_or_else(|| panic!("no savepoint path in:\n{text}"))
            .to_string()
    }
}

/// A session at parallelism 2 whose output the test reads.
fn printing_session() -> (Session, Printed) {
    let printed = Printed::default();
    let session = Session::new(
        RuntimeConfig::default().with_parallelism(2),
        ConnectorRegistry::default(),
        Box::new(printed.clone()),
    );
    (session, printed)
}

impl std::io::Write for Printed {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A user's round trip: a job started in the background, stopped with `STOP JOB … WITH
/// SAVEPOINT`, and started again from the savepoint it printed; the REST API shows the second
/// job restored from it.
#[test]
fn a_job_stopped_with_a_savepoint_starts_again_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut session, printed) = printing_session();
    for (key, value) in [
        ("rest.port", "0".to_string()),
        ("execution.checkpointing.interval", "200ms".to_string()),
        ("execution.checkpointing.dir", dir.path().join("checkpoints").display().to_string()),
        ("execution.checkpointing.savepoint-dir", dir.path().join("savepoints").display().to_string()),
    ] {
        session.set(key, &value).unwrap();
    }
    session.detach_unbounded_jobs(true);
    session.execute_script(WINDOWED).unwrap();
    let first = session.take_submitted().pop().unwrap().to_string();
    let at = session.rest_address().unwrap();
    eventually("a checkpoint completed", || {
        let stats = get_json(at, &format!("/jobs/{first}/checkpoints"));
        (stats["counts"]["completed"].as_u64().unwrap_or(0) >= 1).then_some(())
    });
    session.execute_script(&format!("STOP JOB '{first}' WITH SAVEPOINT;")).unwrap();
    let path = printed.savepoint_path();
    assert_eq!(get_json(at, &format!("/jobs/{first}"))["state"], "FINISHED");
    let savepoint_id: u64 = path.rsplit("savepoint-").next().unwrap().split('-').next().unwrap().parse().unwrap();

    let insert = &WINDOWED[WINDOWED.find("INSERT INTO").unwrap()..];
    session.execute_script(&format!("SET 'execution.state-recovery.path' = '{path}';\n{insert}")).unwrap();
    let second = session.take_submitted().pop().unwrap().to_string();
    let stats = get_json(at, &format!("/jobs/{second}/checkpoints"));
    assert_eq!(stats["counts"]["restored"], 1, "{stats}");
    assert_eq!(stats["latest"]["restored"]["id"], savepoint_id);
    assert_eq!(get_json(at, &format!("/jobs/{second}"))["state"], "RUNNING");
    let jobs = get_json(at, "/jobs/overview");
    assert_eq!(jobs["jobs"].as_array().unwrap().len(), 2);
    drop(session);
}

/// `STOP JOB … WITH SAVEPOINT` writes into the savepoint directory the session sets by the time
/// of the stop, as Flink's client does (not only one set before the job started); the path
/// printed is absolute, and a job started from it is restored from it. A job started without
/// periodic checkpoints is refused, saying which option to set, and runs on.
#[test]
fn stop_job_with_savepoint_takes_the_directory_set_since_and_needs_periodic_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let (mut session, printed) = printing_session();
    session.set("rest.port", "0").unwrap();
    session.detach_unbounded_jobs(true);
    session.execute_script(WINDOWED).unwrap();
    let unchecked = session.take_submitted().pop().unwrap().to_string();
    session.set("execution.checkpointing.interval", "200ms").unwrap();
    session.set("execution.checkpointing.dir", &dir.path().join("checkpoints").display().to_string()).unwrap();
    let insert = &WINDOWED[WINDOWED.find("INSERT INTO").unwrap()..];
    session.execute_script(insert).unwrap();
    let first = session.take_submitted().pop().unwrap().to_string();
    let at = session.rest_address().unwrap();
    let refused = session.execute_script(&format!("STOP JOB '{first}' WITH SAVEPOINT;")).unwrap_err().error.to_string();
    assert!(refused.contains("SET 'execution.checkpointing.savepoint-dir'"), "{refused}");
    assert_eq!(get_json(at, &format!("/jobs/{first}"))["state"], "RUNNING");

    let savepoints = dir.path().join("savepoints");
    session.set("execution.checkpointing.savepoint-dir", &savepoints.display().to_string()).unwrap();
    let refused =
        session.execute_script(&format!("STOP JOB '{unchecked}' WITH SAVEPOINT;")).unwrap_err().error.to_string();
    assert!(refused.contains("was started without execution.checkpointing.interval"), "{refused}");
    assert_eq!(get_json(at, &format!("/jobs/{unchecked}"))["state"], "RUNNING");

    session.execute_script(&format!("STOP JOB '{first}' WITH SAVEPOINT;")).unwrap();
    let path = printed.savepoint_path();
    assert!(Path::new(&path).is_absolute() && path.starts_with(&savepoints.display().to_string()), "{path}");
    assert!(Path::new(&path).join("_metadata").exists(), "{path}");
    assert_eq!(get_json(at, &format!("/jobs/{first}"))["state"], "FINISHED");

    session.execute_script(&format!("SET 'execution.state-recovery.path' = '{path}';\n{insert}")).unwrap();
    let second = session.take_submitted().pop().unwrap().to_string();
    let stats = get_json(at, &format!("/jobs/{second}/checkpoints"));
    assert_eq!(stats["counts"]["restored"], 1, "{stats}");
    assert_eq!(get_json(at, &format!("/jobs/{second}"))["state"], "RUNNING");
    drop(session);
}

/// The web servers follow the settings: RESET stops one, a port range takes its first free
/// port as Flink's reporter does, an unknown reporter class and a bad port are refused naming
/// the option, and a refused SET keeps what was set before.
#[test]
fn web_servers_follow_set_and_reset() {
    let mut session = session(&[("rest.port", "0")]);
    let first = session.rest_address().expect("served");
    // A port in use is refused; the server stays where it was.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = taken.local_addr().unwrap().port();
    let refused = session.set("rest.port", &busy.to_string()).unwrap_err().to_string();
    assert!(refused.contains("rest.port") && refused.contains("in use"), "{refused}");
    assert_eq!(session.rest_address(), Some(first));
    assert_eq!(get_json(first, "/jobs")["jobs"], serde_json::json!([]));
    // Moved to another address on the same port: the old server gives the port up.
    let port = {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        free.local_addr().unwrap().port()
    };
    session.set("rest.port", &port.to_string()).unwrap();
    session.set("rest.bind-address", "0.0.0.0").unwrap();
    assert_eq!(session.rest_address().map(|a| (a.ip().to_string(), a.port())), Some(("0.0.0.0".to_string(), port)));
    session.reset(Some("rest.port"));
    assert_eq!(session.rest_address(), None);

    // A range: the busy port is skipped.
    session.set("metrics.reporter.prom.port", &format!("{busy}-{}", busy + 20)).unwrap();
    let prometheus = session.prometheus_address().expect("served on a port of the range");
    assert!(prometheus.port() > busy && prometheus.port() <= busy + 20, "{prometheus}");
    assert_eq!(request(prometheus, "GET", "/metrics", None).status, 200);
    assert_eq!(request(prometheus, "GET", "/jobs", None).status, 404, "only /metrics on the reporter's port");
    let bad = session.set("metrics.reporter.prom.port", "high").unwrap_err().to_string();
    assert!(bad.contains("metrics.reporter.prom.port") && bad.contains("'high'"), "{bad}");
    let class = session.set("metrics.reporter.prom.factory.class", "com.example.Reporter").unwrap_err().to_string();
    assert!(class.contains("com.example.Reporter"), "{class}");
    assert_eq!(session.prometheus_address(), Some(prometheus), "a refused SET changes nothing");
    let out_of_range = session.set("rest.port", "70000").unwrap_err().to_string();
    assert!(out_of_range.contains("rest.port"), "{out_of_range}");
}

/// Whoever reaches the port may not write savepoints wherever the process may: a target outside
/// `execution.checkpointing.savepoint-dir` (and `rest.savepoint.allowed-directories`) is
/// refused and nothing is created there; a body field of the wrong type is Flink's 400 and the
/// job runs on; a burst of savepoint requests is taken one at a time per job (one thread), each
/// completing; a subtask range past the last subtask is cut to it at once.
#[test]
fn the_rest_api_refuses_what_a_stranger_could_abuse() {
    let dir = tempfile::tempdir().unwrap();
    let (session, at, jid) = running_job(dir.path());
    eventually("a checkpoint completed", || {
        let stats = get_json(at, &format!("/jobs/{jid}/checkpoints"));
        (stats["counts"]["completed"].as_u64().unwrap_or(0) >= 1).then_some(())
    });
    let outside = dir.path().join("elsewhere");
    for (path, body) in [
        (format!("/jobs/{jid}/savepoints"), format!(r#"{{"target-directory": "{}"}}"#, outside.display())),
        (format!("/jobs/{jid}/stop"), format!(r#"{{"targetDirectory": "{}"}}"#, outside.display())),
        (
            format!("/jobs/{jid}/savepoints"),
            format!(r#"{{"target-directory": "{}/savepoints/../elsewhere"}}"#, dir.path().display()),
        ),
    ] {
        let refused = request(at, "POST", &path, Some(&body));
        assert_eq!(refused.status, 403, "{}", refused.body);
        assert!(
            refused.json()["errors"][0].as_str().unwrap().contains("is outside the directories"),
            "{}",
            refused.body
        );
    }
    assert!(!outside.exists(), "nothing is written outside the allowed directories");

    for body in [r#"{"drain": "yes"}"#, r#"{"targetDirectory": 7}"#, r#"{"formatType": "ZIP"}"#] {
        let refused = request(at, "POST", &format!("/jobs/{jid}/stop"), Some(body));
        assert_eq!(refused.status, 400, "{body}: {}", refused.body);
        assert_eq!(refused.json()["errors"][0], "Request did not match expected format StopWithSavepointRequestBody.");
    }
    let refused = request(at, "POST", &format!("/jobs/{jid}/savepoints"), Some(r#"{"cancel-job": 1}"#));
    assert_eq!(refused.json()["errors"][0], "Request did not match expected format SavepointTriggerRequestBody.");
    assert_eq!(get_json(at, &format!("/jobs/{jid}"))["state"], "RUNNING");

    let savepoint_threads = || {
        std::fs::read_dir("/proc/self/task")
            .map(|tasks| {
                tasks
                    .flatten()
                    .filter(|t| {
                        std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "weir-savepoint")
                    })
                    .count()
            })
            .unwrap_or(0)
    };
    let triggers: Vec<common::http::Response> =
        (0..40).map(|_| request(at, "POST", &format!("/jobs/{jid}/savepoints"), Some("{}"))).collect();
    // One thread per job takes them (a second only for the moment one ends as another starts).
    assert!(savepoint_threads() <= 2, "one savepoint thread per job, not one per request");
    for triggered in &triggers {
        assert_eq!(triggered.status, 202, "{}", triggered.body);
        assert!(std::path::Path::new(&savepoint_location(at, &jid, triggered)).exists());
    }
    // The same triggerId is the same request, answered again.
    let body = r#"{"triggerId": "0123456789abcdef0123456789abcdef"}"#;
    let (first, again) = (
        request(at, "POST", &format!("/jobs/{jid}/savepoints"), Some(body)),
        request(at, "POST", &format!("/jobs/{jid}/savepoints"), Some(body)),
    );
    assert_eq!(first.json()["request-id"], again.json()["request-id"]);

    let vertex = get_json(at, &format!("/jobs/{jid}"))["vertices"][0]["id"].as_str().unwrap().to_string();
    // Walked one by one, this range held the server for minutes (the request's 30 s read
    // timeout would fail it).
    let range =
        format!("/jobs/{jid}/vertices/{vertex}/subtasks/metrics?subtasks=0-18446744073709551615&get=numRecordsIn");
    assert_eq!(request(at, "GET", &range, None).status, 200);
    drop(session);
}

/// With `rest.authentication.token` set, a request without `Authorization: Bearer <token>` is
/// answered 401; connections past `rest.server.max-connections` wait, and idle ones are closed
/// after `rest.idleness-timeout`, so idle clients cannot hold the server.
#[test]
fn a_token_guards_the_rest_api_and_idle_connections_are_closed() {
    let session = session(&[
        ("rest.port", "0"),
        ("rest.authentication.token", "s3cret"),
        ("rest.server.max-connections", "2"),
        ("rest.idleness-timeout", "500 ms"),
    ]);
    let at = session.rest_address().unwrap();
    let denied = request(at, "GET", "/overview", None);
    assert_eq!(denied.status, 401, "{}", denied.body);
    assert_eq!(request_with(at, "GET", "/overview", None, &[("Authorization", "Bearer wrong")]).status, 401);
    let allowed = request_with(at, "GET", "/overview", None, &[("Authorization", "Bearer s3cret")]);
    assert_eq!(allowed.status, 200, "{}", allowed.body);
    // Two idle connections fill the cap; the next request is served once they are closed.
    let idle: Vec<std::net::TcpStream> = (0..2).map(|_| std::net::TcpStream::connect(at).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(100));
    // Without the idle timeout this request would wait for ever (its 30 s read timeout fails it).
    let served = request_with(at, "GET", "/overview", None, &[("Authorization", "Bearer s3cret")]);
    assert_eq!(served.status, 200, "{}", served.body);
    for mut stream in idle {
        use std::io::Read;
        stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buffer = [0u8; 16];
        assert_eq!(stream.read(&mut buffer).unwrap_or(0), 0, "an idle connection is closed");
    }
    drop(session);
}
