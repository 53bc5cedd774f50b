//! Session state through SQL: `SET`, `RESET` and `SET;`, and what a program using the library
//! gets without the `weir` command's setup. Scripts whose results are checked (queries, errors)
//! are SQL logic tests in `tests/slt/` (run by `tests/slt.rs`).

use crate::common;

use common::Buffer;
use weir::connectors::ConnectorRegistry;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

#[test]
fn reset_restores_runtime_keys_to_the_sessions_start() {
    let runtime = RuntimeConfig::default().with_parallelism(2);
    let mut session = Session::new(runtime, ConnectorRegistry::default(), Box::new(Buffer::default()));
    let script = "SET 'parallelism.default' = '4';\nSET 'execution.chunk-size' = '7';\nRESET 'execution.chunk-size';";
    session.execute_script(script).unwrap();
    assert_eq!((session.runtime().default_parallelism, session.runtime().chunk_size), (4, 1024));
    session.execute_script("SET 'execution.chunk-size' = '7';\nRESET;").unwrap();
    assert_eq!((session.runtime().default_parallelism, session.runtime().chunk_size), (2, 1024));
}

#[test]
fn set_lists_every_setting_with_its_value_or_default() {
    let out = Buffer::default();
    let runtime = RuntimeConfig::default().with_parallelism(2);
    let mut session = Session::new(runtime, ConnectorRegistry::default(), Box::new(out.clone()));
    let script = "SET 'table.exec.mini-batch.enabled' = 'true';\nSET 'pipeline.name' = 'orders';\n\
                  SET 'execution.chunk-size' = '7';\nRESET 'execution.chunk-size';\nSET;";
    session.execute_script(script).unwrap();
    let listed = String::from_utf8(out.0.lock().clone()).unwrap();
    let row = |key: &str| {
        listed
            .lines()
            .find(|l| l.trim_start_matches(['|', ' ']).starts_with(&format!("{key} |")))
            .map(|l| l.split('|').map(str::trim).filter(|c| !c.is_empty()).nth(1).unwrap_or("").to_string())
    };
    // Set values, the session's start for runtime keys, defaults for the rest, unknown keys as set.
    assert_eq!(row("table.exec.mini-batch.enabled").as_deref(), Some("true"), "{listed}");
    assert_eq!(row("parallelism.default").as_deref(), Some("2"), "{listed}");
    assert_eq!(row("execution.chunk-size").as_deref(), Some("1024"), "{listed}");
    assert_eq!(row("table.exec.mini-batch.allow-latency").as_deref(), Some("0 ms"), "{listed}");
    assert_eq!(row("table.optimizer.agg-phase-strategy").as_deref(), Some("AUTO"), "{listed}");
    assert_eq!(row("table.exec.async-lookup.timeout").as_deref(), Some("3 min"), "{listed}");
    assert_eq!(row("pipeline.name").as_deref(), Some("orders"), "{listed}");
    assert!(listed.starts_with("+-") && listed.trim_end().ends_with("rows in set"), "{listed}");
    // A refused value is refused at its SET and changes nothing.
    let err = session.execute_script("SET 'table.exec.state.ttl' = 'soon';").unwrap_err();
    assert!(err.error.to_string().contains("'table.exec.state.ttl'"), "{}", err.error);
}

/// Expressions thousands of nodes deep run on every worker thread of a job started through the
/// library, without `RUST_MIN_STACK` or other setup (each worker thread gets a large stack).
#[test]
fn deep_expressions_run_on_every_worker_thread() {
    let out = Buffer::default();
    let runtime = RuntimeConfig::default().with_parallelism(4).with_worker_threads(4);
    let mut session = Session::new(runtime, ConnectorRegistry::default(), Box::new(out.clone()));
    let sum = vec!["x"; 3000].join(" + ");
    let script = format!(
        "SET 'sql-client.execution.result-mode' = 'tableau';
CREATE TABLE t (x BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '400', 'fields.x.kind' = 'sequence',
  'fields.x.start' = '1', 'fields.x.end' = '400');
CREATE TABLE s (total BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO s SELECT {sum} FROM t;
SELECT SUM({sum}) FROM t;"
    );
    session.execute_script(&script).unwrap();
    let printed = String::from_utf8(out.0.lock().clone()).unwrap();
    assert!(printed.contains(&(3000 * 400 * 401 / 2).to_string()), "{printed}");
}
