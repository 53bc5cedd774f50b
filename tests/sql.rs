//! SQL scripts through a session: results and every class of error with its message.

mod common;

use std::sync::Arc;

use common::Buffer;
use parking_lot::Mutex;
use weir::connectors::{ConnectorRegistry, PrintTarget};
use weir::planner::Session;
use weir::runtime::RuntimeConfig;

/// Runs `script` at parallelism 1; returns what it printed, or the error as text.
fn run(script: &str) -> Result<String, String> {
    let printed = Arc::new(Mutex::new(Vec::new()));
    let registry = ConnectorRegistry::with_print_target(PrintTarget::Buffer(Arc::clone(&printed)));
    let out = Buffer::default();
    let mut session = Session::new(RuntimeConfig::default().with_parallelism(1), registry, Box::new(out.clone()));
    session.set("sql-client.execution.result-mode", "changelog").unwrap();
    session.execute_script(script).map_err(|e| {
        let at = e.position();
        format!("{}:{}: {}", at.line, at.column, e.error)
    })?;
    let mut text = String::from_utf8(printed.lock().clone()).unwrap();
    text.push_str(&String::from_utf8(out.0.lock().clone()).unwrap());
    Ok(text)
}

const ORDERS: &str = "CREATE TABLE orders (id BIGINT, product STRING, qty INT) WITH \
    ('connector' = 'datagen', 'number-of-rows' = '6', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', \
    'fields.id.end' = '6', 'fields.qty.min' = '1', 'fields.qty.max' = '1', 'fields.product.length' = '1');\n";

#[test]
fn select_prints_the_changelog_of_a_query() {
    let out = run(&format!("{ORDERS}SELECT id * 10, qty FROM orders WHERE id <= 2;")).unwrap();
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    assert_eq!(lines, ["+I[10, 1]", "+I[20, 1]"]);
    let out = run(&format!("{ORDERS}SELECT SUM(qty), COUNT(*) FROM orders;")).unwrap();
    assert_eq!(out.lines().last(), Some("+U[6, 6]"));
}

#[test]
fn statement_sets_views_and_values_run() {
    let script = "CREATE TABLE a (k STRING, v INT) WITH ('connector' = 'print', 'print-identifier' = 'a');\n\
        CREATE TABLE b (n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'b');\n\
        CREATE VIEW v AS SELECT * FROM (VALUES ('x', 1), ('y', 2)) AS t(k, v);\n\
        EXECUTE STATEMENT SET BEGIN\n\
        INSERT INTO a SELECT k, v + 1 FROM v;\n\
        INSERT INTO b SELECT COUNT(*) FROM v;\n\
        END;";
    let out = run(script).unwrap();
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    // Both INSERTs run as one job; `b` counts the view's two rows.
    assert_eq!(lines, ["a> +I[x, 2]", "a> +I[y, 3]", "b> +I[1]", "b> +U[2]", "b> -U[1]"]);
}

#[test]
fn errors_name_what_is_wrong_and_where() {
    let cases = [
        (format!("{ORDERS}SELECT nope FROM orders;"), "2:8: SQL validation failed. From line 2, column 8: Column 'nope' not found in any table"),
        ("SELECT * FROM missing;".to_string(), "1:15: SQL validation failed. From line 1, column 15: Object 'missing' not found within 'default_catalog.default_database'"),
        (format!("{ORDERS}SELECT id FROM (SELECT id, id FROM orders);"), "2:8: SQL validation failed. From line 2, column 8: Column 'id' is ambiguous"),
        (format!("{ORDERS}SELECT UPPER(qty) FROM orders;"), "2:8: SQL validation failed. From line 2, column 8: Cannot apply 'UPPER' to arguments of type 'UPPER(<INT>)'. Supported form(s): 'UPPER(<CHARACTER>)'"),
        (format!("{ORDERS}SELECT product, COUNT(*) FROM orders GROUP BY qty;"), "2:8: SQL validation failed. From line 2, column 8: Expression 'product' is not being grouped"),
        (format!("{ORDERS}SELECT id +* 2 FROM orders;"), "2:12: SQL parse failed. Expected: an expression, found: *"),
        (format!("{ORDERS}SELECT o.id FROM orders o JOIN orders p ON o.id = p.id;"), "2:1: Not supported yet: Regular joins (weir plans lookup joins: JOIN t FOR SYSTEM_TIME AS OF s.proc_time AS d ON …)."),
        (format!("{ORDERS}CREATE TABLE s (a DATE) WITH ('connector' = 'blackhole');\nINSERT INTO s SELECT qty FROM orders;"),
         "3:1: SQL validation failed. From line 3, column 1: Column types of query result and sink for 'default_catalog.default_database.s' do not match.\nCause: Incompatible types for sink column 'a' at position 0.\n\nQuery schema: [qty: INT]\nSink schema:  [a: DATE]"),
        (format!("{ORDERS}CREATE TABLE s (a INT, b INT) WITH ('connector' = 'blackhole');\nINSERT INTO s SELECT qty FROM orders;"),
         "3:1: SQL validation failed. From line 3, column 1: Column types of query result and sink for 'default_catalog.default_database.s' do not match.\nCause: Different number of columns.\n\nQuery schema: [qty: INT]\nSink schema:  [a: INT, b: INT]"),
        (format!("{ORDERS}CREATE TABLE orders (a INT) WITH ('connector' = 'blackhole');"),
         "2:1: SQL validation failed. From line 2, column 1: Could not execute CreateTable in path `default_catalog`.`default_database`.`orders`: Table already exists"),
        ("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'rows' = '1');\nSELECT * FROM t;".to_string(),
         "2:1: Unsupported options found for 'datagen'.\n\nUnsupported options:\n\nrows\n\nSupported options:\n\nconnector\nfields.a.kind\nfields.a.max\nfields.a.min\nfields.a.null-rate\nnumber-of-rows\nrows-per-second\nscan.parallelism"),
        (format!("{ORDERS}SET 'parallelism.default' = 'many';"), "2:1: Invalid value 'many' for option 'parallelism.default': a positive integer up to 32768"),
        (format!("{ORDERS}SELECT 1 / (qty - 1) FROM orders;"), "2:1: Operator 'Calc' (subtask 1/1) failed: / by zero"),
    ];
    for (script, expected) in cases {
        assert_eq!(run(&script).unwrap_err(), expected, "{script}");
    }
}

#[test]
fn truth_tests_never_give_null_and_take_only_booleans() {
    // Apache Flink 2.3 prints the same rows for this script.
    let out = run("SELECT b IS TRUE, b IS NOT TRUE, b IS FALSE, b IS NOT FALSE, b IS UNKNOWN, b IS NOT UNKNOWN \
                   FROM (VALUES (TRUE), (FALSE), (CAST(NULL AS BOOLEAN))) AS t(b);")
    .unwrap();
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "+I[true, false, false, true, false, true]",
            "+I[false, true, true, false, false, true]",
            "+I[false, true, false, true, true, false]"
        ]
    );
    let error = run("SELECT 1 IS TRUE;").unwrap_err();
    assert!(
        error.ends_with(
            "Cannot apply 'IS TRUE' to arguments of type '<INT> IS TRUE'. Supported form(s): '<BOOLEAN> IS TRUE'"
        ),
        "{error}"
    );
}

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

#[test]
fn time_conversion_and_misc_functions_follow_flink() {
    let out =
        run("SELECT TO_TIMESTAMP('2024-01-01 10:00:00'), UNIX_TIMESTAMP('2024-01-01 00:00:00'), FROM_UNIXTIME(0), \
                   TO_TIMESTAMP_LTZ(1000, 3), HASH_CODE('a'), RAND(1) < 1, CURRENT_TIMESTAMP IS NOT NULL;")
        .unwrap();
    assert_eq!(
        out.trim(),
        "+I[2024-01-01T10:00, 1704067200, 1970-01-01 00:00:00, 1970-01-01T00:00:01Z, 97, true, true]"
    );
}

#[test]
fn with_state_ttl_unchanged_results_are_emitted_as_flink_does() {
    // With a state TTL an unchanged result still refreshes the sink's row; under mini-batch
    // only when `table.exec.agg.mini-batch.output-identical-enabled` is set.
    let rows = "FROM (VALUES ('a', 5), ('a', 3), ('a', 7)) AS t(k, v) GROUP BY k;\n";
    let script = format!(
        "CREATE TABLE out1 (k STRING, m INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'print');\n\
         SET 'table.exec.state.ttl' = '1 h';\n\
         SET 'table.exec.mini-batch.enabled' = 'true';\n\
         SET 'table.exec.mini-batch.allow-latency' = '1 s';\n\
         SET 'table.exec.mini-batch.size' = '1';\n\
         SET 'table.exec.agg.mini-batch.output-identical-enabled' = 'true';\n\
         INSERT INTO out1 SELECT k, MAX(v) {rows}\
         SET 'table.exec.agg.mini-batch.output-identical-enabled' = 'false';\n\
         INSERT INTO out1 SELECT k, MAX(v) {rows}\
         SET 'table.exec.mini-batch.enabled' = 'false';\n\
         INSERT INTO out1 SELECT k, MAX(v) {rows}"
    );
    let printed = run(&script).unwrap();
    let identical = "+I[a, 5]\n-U[a, 5]\n+U[a, 5]\n-U[a, 5]\n+U[a, 7]\n";
    let suppressed = "+I[a, 5]\n-U[a, 5]\n+U[a, 7]\n";
    assert_eq!(printed, format!("{identical}{suppressed}{identical}"));
}

/// Group keys of rows built without declared column types (VALUES, a CSV file) take the
/// columnar group state as well: a TIMESTAMP(3), a DECIMAL and a STRING key group as Flink groups them.
#[test]
fn rows_built_without_column_types_group_by_any_key() {
    let script = "CREATE TABLE o (ts TIMESTAMP(3), d DECIMAL(10, 2), w STRING, n BIGINT, s INT) \
        WITH ('connector' = 'print', 'print-identifier' = 'o');\n\
        INSERT INTO o SELECT ts, d, w, COUNT(*), SUM(v) FROM (VALUES \
        (TIMESTAMP '2024-01-01 10:00:00', CAST(1.50 AS DECIMAL(10, 2)), 'a', 1), \
        (TIMESTAMP '2024-01-01 10:00:00', CAST(1.50 AS DECIMAL(10, 2)), 'a', 2), \
        (TIMESTAMP '2024-01-01 10:00:01.500', CAST(2 AS DECIMAL(10, 2)), CAST(NULL AS STRING), 3)) \
        AS t(ts, d, w, v) GROUP BY ts, d, w;";
    let out = run(script).unwrap();
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "o> +I[2024-01-01T10:00, 1.50, a, 1, 1]",
            "o> -U[2024-01-01T10:00, 1.50, a, 1, 1]",
            "o> +U[2024-01-01T10:00, 1.50, a, 2, 3]",
            "o> +I[2024-01-01T10:00:01.500, 2.00, null, 1, 3]",
        ]
    );
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    std::fs::write(&csv, "2024-01-01 10:00:00,1\n2024-01-01 10:00:00,2\n2024-01-01 10:00:01.5,3\n").unwrap();
    let script = format!(
        "CREATE TABLE t (ts TIMESTAMP(3), v INT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         CREATE TABLE g (ts TIMESTAMP(3), n BIGINT, s INT) WITH ('connector' = 'print', 'print-identifier' = 'g');\n\
         INSERT INTO g SELECT ts, COUNT(*), SUM(v) FROM t GROUP BY ts;",
        csv.display()
    );
    let out = run(&script).unwrap();
    assert_eq!(out.lines().last(), Some("g> +I[2024-01-01T10:00:01.500, 1, 3]"));
}
