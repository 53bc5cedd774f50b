//! Sinks: `table.exec.sink.keyed-shuffle` and `sink.parallelism`, through SQL sessions.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use weir::connectors::{ConnectorRegistry, PrintTarget};
use weir::runtime::RuntimeConfig;
use weir::session::Session;

const SOURCE: &str = "CREATE TABLE src (k INT, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3000', \
    'fields.k.min' = '1', 'fields.k.max' = '40');\n";

fn session(parallelism: usize, printed: &Arc<Mutex<Vec<u8>>>, shuffle: &str) -> Session {
    let registry = ConnectorRegistry::with_print_target(PrintTarget::Buffer(Arc::clone(printed)));
    let mut session =
        Session::new(RuntimeConfig::default().with_parallelism(parallelism), registry, Box::new(std::io::sink()));
    session.set("table.exec.sink.keyed-shuffle", shuffle).unwrap();
    session
}

/// The `ship_strategy` of the edge into the sink in the JSON execution plan of `insert`.
fn sink_edge(parallelism: usize, shuffle: &str, sink: &str, insert: &str) -> Result<String, String> {
    let printed = Arc::new(Mutex::new(Vec::new()));
    let mut session = session(parallelism, &printed, shuffle);
    let script = format!("{SOURCE}{sink}\nEXPLAIN JSON_EXECUTION_PLAN {insert};\n");
    let plan = session.explain_script(&script).map_err(|e| e.error.to_string())?;
    let last = plan.lines().rfind(|l| l.contains("\"ship_strategy\"")).unwrap();
    Ok(last.split('"').nth(3).unwrap().to_string())
}

#[test]
fn keyed_shuffle_follows_flinks_rules() {
    let with_key = |p: usize| {
        format!(
            "CREATE TABLE snk (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'print', \
             'sink.parallelism' = '{p}');"
        )
    };
    let without_key =
        |p: usize| format!("CREATE TABLE snk (k INT, v INT) WITH ('connector' = 'print', 'sink.parallelism' = '{p}');");
    let insert = "INSERT INTO snk SELECT k, v FROM src";
    // (mode, sink parallelism, with a primary key) -> the edge into the sink from an input at 2.
    let cases = [
        ("AUTO", 1, true, "REBALANCE"),
        ("AUTO", 2, true, "FORWARD"),
        ("AUTO", 3, true, "HASH"),
        ("FORCE", 1, true, "REBALANCE"),
        ("FORCE", 2, true, "HASH"),
        ("FORCE", 3, true, "HASH"),
        ("NONE", 1, true, "REBALANCE"),
        ("NONE", 2, true, "FORWARD"),
        ("NONE", 3, true, "REBALANCE"),
        ("AUTO", 3, false, "REBALANCE"),
        ("FORCE", 2, false, "FORWARD"),
        ("FORCE", 3, false, "REBALANCE"),
    ];
    for (mode, sink_parallelism, keyed, expected) in cases {
        let sink = if keyed { with_key(sink_parallelism) } else { without_key(sink_parallelism) };
        let got = sink_edge(2, mode, &sink, insert).unwrap();
        assert_eq!(got, expected, "{mode}, sink parallelism {sink_parallelism}, primary key {keyed}");
    }
}

#[test]
fn updates_into_a_sink_of_another_parallelism_need_a_primary_key() {
    let sink = "CREATE TABLE snk (k INT, c BIGINT) WITH ('connector' = 'print', 'sink.parallelism' = '3');";
    let error = sink_edge(2, "AUTO", sink, "INSERT INTO snk SELECT k, COUNT(*) FROM src GROUP BY k").unwrap_err();
    assert_eq!(
        error,
        "The sink for table 'default_catalog.default_database.snk' has a configured parallelism of 3, while the input \
         parallelism is 2. Since the configured parallelism is different from the input's parallelism and the \
         changelog mode is not insert-only, a primary key is required but could not be found."
    );
    // Insert-only rows may go anywhere.
    assert_eq!(
        sink_edge(2, "AUTO", sink, "INSERT INTO snk SELECT k, CAST(v AS BIGINT) FROM src").unwrap(),
        "REBALANCE"
    );
}

#[test]
fn with_force_every_key_reaches_one_sink_subtask_in_order() {
    let printed = Arc::new(Mutex::new(Vec::new()));
    let mut session = session(2, &printed, "FORCE");
    let script = format!(
        "{SOURCE}CREATE TABLE snk (k INT, c BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'print', \
         'sink.parallelism' = '3');\nINSERT INTO snk SELECT k, COUNT(*) FROM src GROUP BY k;\n"
    );
    session.execute_script(&script).map_err(|e| e.error.to_string()).unwrap();
    let text = String::from_utf8(printed.lock().clone()).unwrap();
    // Per key: the subtask that printed it, and its counts in the order printed.
    let mut keys: BTreeMap<String, (String, Vec<i64>)> = BTreeMap::new();
    let mut subtasks = std::collections::BTreeSet::new();
    for line in text.lines() {
        let (subtask, change) = line.split_once("> ").unwrap();
        let (kind, row) = change.split_at(2);
        let (key, count) = row.trim_matches(['[', ']']).split_once(", ").unwrap();
        let entry = keys.entry(key.to_string()).or_insert_with(|| (subtask.to_string(), Vec::new()));
        assert_eq!(entry.0, subtask, "key {key} reached two sink subtasks");
        if kind != "-U" {
            entry.1.push(count.parse().unwrap());
        }
        subtasks.insert(subtask.to_string());
    }
    assert_eq!(keys.len(), 40);
    assert!(subtasks.len() > 1, "keys spread over the sink's subtasks: {subtasks:?}");
    let total: i64 = keys.values().map(|(_, counts)| counts.last().unwrap()).sum();
    assert_eq!(total, 3000);
    for (key, (_, counts)) in keys {
        assert!(counts.windows(2).all(|w| w[1] == w[0] + 1), "key {key} out of order: {counts:?}");
    }
}

/// Runs an INSERT into `sink` of three rows (one with a NULL id) read from a CSV file whose
/// columns are declared as the sink's, so that no cast fits the strings to their lengths before
/// the enforcer sees them (a cast into a sink's VARCHAR(n) cuts, as in Flink).
fn enforce(settings: &[(&str, &str)], sink: &str) -> Result<String, String> {
    let printed = Arc::new(Mutex::new(Vec::new()));
    let mut session = session(1, &printed, "AUTO");
    for (key, value) in settings {
        session.set(key, value).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("rows.csv");
    std::fs::write(&csv, "1,ab,abcdef\nnull,abc,ab\n2,abcd,abcd\n").unwrap();
    let script = format!(
        "{sink}\nCREATE TABLE rows_in (id INT, code CHAR(3), name VARCHAR(4)) WITH ('connector' = 'filesystem', \
         'path' = '{}', 'format' = 'csv', 'csv.null-literal' = 'null');\nINSERT INTO snk SELECT * FROM rows_in;\n",
        csv.display()
    );
    session.execute_script(&script).map_err(|e| e.error.to_string())?;
    let bytes = printed.lock().clone();
    Ok(String::from_utf8(bytes).unwrap())
}

#[test]
fn not_null_and_length_enforcers_follow_the_options() {
    let sink = "CREATE TABLE snk (id INT NOT NULL, code CHAR(3), name VARCHAR(4)) WITH ('connector' = 'print');";
    let error = enforce(&[], sink).unwrap_err();
    assert!(
        error.contains(
            "Column 'id' is NOT NULL, however, a null value is being written into it. You can set job configuration \
             'table.exec.sink.not-null-enforcer'='DROP' to suppress this exception and drop such records silently."
        ),
        "{error}"
    );
    let dropped = enforce(&[("table.exec.sink.not-null-enforcer", "DROP")], sink).unwrap();
    assert_eq!(dropped, "+I[1, ab, abcdef]\n+I[2, abcd, abcd]\n", "lengths are ignored by default");
    let trimmed = enforce(
        &[("table.exec.sink.not-null-enforcer", "drop"), ("table.exec.sink.type-length-enforcer", "TRIM_PAD")],
        sink,
    )
    .unwrap();
    assert_eq!(trimmed, "+I[1, ab , abcd]\n+I[2, abc, abcd]\n");
    let error = enforce(
        &[("table.exec.sink.not-null-enforcer", "DROP"), ("table.exec.sink.type-length-enforcer", "ERROR")],
        sink,
    )
    .unwrap_err();
    assert!(
        error.contains("Column 'code' is CHAR(3), however, a string of length 2 is being written into it."),
        "{error}"
    );
    let mut session = session(1, &Arc::new(Mutex::new(Vec::new())), "AUTO");
    let error = session.set("table.exec.sink.type-length-enforcer", "PAD").unwrap_err().to_string();
    assert!(error.contains("one of 'IGNORE', 'TRIM_PAD', 'ERROR'"), "{error}");
}

#[test]
fn primary_key_columns_are_not_null() {
    let sink = "CREATE TABLE snk (id INT, code STRING, name STRING, PRIMARY KEY (id) NOT ENFORCED) \
                WITH ('connector' = 'print');";
    let error = enforce(&[], sink).unwrap_err();
    assert!(error.contains("Column 'id' is NOT NULL"), "{error}");
}

/// Whether the plan of `insert` into `sink` has a SinkMaterializer, from its EXPLAIN.
fn materialized(settings: &[(&str, &str)], sink: &str, insert: &str) -> Result<bool, String> {
    let printed = Arc::new(Mutex::new(Vec::new()));
    let mut session = session(2, &printed, "AUTO");
    for (key, value) in settings {
        session.set(key, value).unwrap();
    }
    let script = format!("{SOURCE}{sink}\nEXPLAIN JSON_EXECUTION_PLAN {insert};\n");
    let plan = session.explain_script(&script).map_err(|e| e.error.to_string())?;
    let in_sink = plan.contains("upsertMaterialize=[true]");
    let in_json = plan.contains("SinkMaterializer(pk=[k])");
    assert_eq!(in_sink, in_json, "{plan}");
    if in_json {
        assert!(plan.contains("\"type\" : \"SinkMaterializer["), "{plan}");
    }
    assert_eq!(plan.contains("conflictStrategy=[DEDUPLICATE]"), insert.contains("DO DEDUPLICATE"), "{plan}");
    Ok(in_sink)
}

#[test]
fn the_upsert_materializer_is_planned_as_flink_decides() {
    let upsert = "CREATE TABLE snk (k INT, c BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');";
    let retract = "CREATE TABLE snk (k INT, c BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'print');";
    let keyless = "CREATE TABLE snk (k INT, c BIGINT) WITH ('connector' = 'blackhole');";
    // Keyed by the sink's key; keyed by another column; insert-only.
    let same_key = "INSERT INTO snk SELECT k, COUNT(*) FROM src GROUP BY k";
    let other_key = "INSERT INTO snk SELECT CAST(c AS INT), CAST(k AS BIGINT) FROM \
                     (SELECT k, COUNT(*) AS c FROM src GROUP BY k)";
    let append = "INSERT INTO snk SELECT k, CAST(v AS BIGINT) FROM src";
    let dedup = |insert: &str| format!("{insert} ON CONFLICT DO DEDUPLICATE");
    let mode = |m: &'static str| vec![("table.exec.sink.upsert-materialize", m)];
    let cases: Vec<(Vec<(&str, &str)>, &str, String, bool)> = vec![
        (mode("AUTO"), upsert, same_key.into(), false),
        (mode("AUTO"), upsert, dedup(other_key), true),
        (mode("AUTO"), upsert, dedup(append), false),
        (vec![("table.exec.sink.require-on-conflict", "false")], upsert, other_key.into(), true),
        (mode("FORCE"), upsert, same_key.into(), true),
        (mode("FORCE"), upsert, append.into(), true),
        (mode("NONE"), upsert, other_key.into(), false),
        (mode("FORCE"), retract, other_key.into(), false),
        (mode("AUTO"), retract, other_key.into(), false),
        (mode("FORCE"), keyless, same_key.into(), false),
    ];
    for (settings, sink, insert, expected) in cases {
        assert_eq!(materialized(&settings, sink, &insert).unwrap(), expected, "{settings:?}: {sink} {insert}");
    }
}

#[test]
fn on_conflict_is_required_and_checked_as_in_flink() {
    let upsert = "CREATE TABLE snk (k INT, c BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');";
    let retract = "CREATE TABLE snk (k INT, c BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'print');";
    let error = materialized(&[], upsert, "INSERT INTO snk SELECT k, CAST(v AS BIGINT) FROM src").unwrap_err();
    assert!(
        error.contains(
            "The query has an upsert key that differs from the primary key of the sink table \
             'default_catalog.default_database.snk'. Primary key: [k], upsert key: none. This can lead to"
        ),
        "{error}"
    );
    let error =
        materialized(&[], retract, "INSERT INTO snk SELECT k, COUNT(*) FROM src GROUP BY k ON CONFLICT DO DEDUPLICATE")
            .unwrap_err();
    assert!(error.contains("is not an upsert sink because it requires UPDATE_BEFORE (retract mode)"), "{error}");
    let error =
        materialized(&[], upsert, "INSERT INTO snk SELECT k, CAST(v AS BIGINT) FROM src ON CONFLICT DO NOTHING")
            .unwrap_err();
    assert!(
        error.contains(
            "ON CONFLICT DO NOTHING resolves conflicts as watermarks pass, so every source of the query needs a \
             watermark; 'default_catalog.default_database.src' declares none."
        ),
        "{error}"
    );
}

/// Runs `insert … ON CONFLICT DO {strategy}` over CSV rows with a watermark, two of them on key 1.
fn on_conflict_job(strategy: &str, explain: bool) -> Result<String, String> {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("rows.csv");
    std::fs::write(&csv, "1,a,2024-01-01 00:00:00\n2,b,2024-01-01 00:00:01\n1,c,2024-01-01 00:00:02\n").unwrap();
    let printed = Arc::new(Mutex::new(Vec::new()));
    let mut session = session(2, &printed, "AUTO");
    let explain = if explain { "EXPLAIN JSON_EXECUTION_PLAN " } else { "" };
    let script = format!(
        "CREATE TABLE rows_in (k INT, v STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH \
         ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         CREATE TABLE snk (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');\n\
         {explain}INSERT INTO snk SELECT k, v FROM rows_in ON CONFLICT DO {strategy};\n",
        csv.display()
    );
    if explain.is_empty() {
        session.execute_script(&script).map(|_| String::new()).map_err(|e| e.error.to_string())
    } else {
        session.explain_script(&script).map_err(|e| e.error.to_string())
    }
}

#[test]
fn on_conflict_do_error_and_do_nothing_resolve_per_watermark() {
    let error = on_conflict_job("ERROR", false).unwrap_err();
    assert!(
        error.contains(
            "Primary key constraint violation: multiple distinct records with the same primary key detected. \
             Conflicting key: [1]. Use ON CONFLICT DO NOTHING to keep the first record."
        ),
        "{error}"
    );
    on_conflict_job("NOTHING", false).unwrap();
    let plan = on_conflict_job("NOTHING", true).unwrap();
    assert!(plan.contains("upsertMaterialize=[true], conflictStrategy=[NOTHING]"), "{plan}");
    assert!(plan.contains("WatermarkTimestampAssigner"), "{plan}");
    assert!(plan.contains("SinkMaterializer(pk=[k])"), "{plan}");
}

#[test]
fn options_hints_override_table_options_for_one_statement() {
    let printed = Arc::new(Mutex::new(Vec::new()));
    let mut session = session(1, &printed, "AUTO");
    let script = format!(
        "{SOURCE}CREATE TABLE snk (k INT, v INT) WITH ('connector' = 'print');\n\
         INSERT INTO snk /*+ OPTIONS('sink.parallelism' = '2') */ SELECT * FROM src /*+ OPTIONS('number-of-rows' = '5') */;\n\
         INSERT INTO snk SELECT * FROM src /*+ OPTIONS('number-of-rows' = '2') */;\n"
    );
    session.execute_script(&script).map_err(|e| e.error.to_string()).unwrap();
    let text = String::from_utf8(printed.lock().clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7, "{text}");
    // The first job's sink ran at parallelism 2 (subtask prefixes), the second at the input's 1.
    assert!(lines[..5].iter().all(|l| l.starts_with("1> ") || l.starts_with("2> ")), "{text}");
    assert!(lines[5..].iter().all(|l| l.starts_with("+I[")), "{text}");
    // Hint options are checked like WITH options; views take none.
    let bad = "SELECT * FROM src /*+ OPTIONS('rows' = '5') */;\n";
    let error = session.execute_script(bad).map_err(|e| e.error.to_string()).unwrap_err();
    assert!(error.contains("Unsupported options found for 'datagen'"), "{error}");
    let view = "CREATE VIEW w AS SELECT * FROM src;\nSELECT * FROM w /*+ OPTIONS('number-of-rows' = '5') */;\n";
    let error = session.execute_script(view).map_err(|e| e.error.to_string()).unwrap_err();
    assert!(
        error.contains("View 'default_catalog.default_database.w' cannot be enriched with new options."),
        "{error}"
    );
}
