//! Managed tables (CREATE TABLE without a connector) through SQL: the merge engines' documented
//! examples, Fluss's Flink SQL cases with their exact changelogs, persistence across sessions,
//! point queries, batch mode, lookups, EXPLAIN and errors.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::{wait_until, Buffer};
use parking_lot::Mutex;
use weir::connectors::{ConnectorRegistry, PrintTarget};
use weir::planner::parser::parse_script;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

/// A session at `parallelism` keeping managed tables in `dir`, with what it prints (query
/// results, then the print connector's lines) readable through [`Printed`].
struct Harness {
    session: Session,
    printed: Arc<Mutex<Vec<u8>>>,
    out: Buffer,
}

impl Harness {
    fn new(dir: &Path, parallelism: usize) -> Self {
        let printed = Arc::new(Mutex::new(Vec::new()));
        let registry = ConnectorRegistry::with_print_target(PrintTarget::Buffer(Arc::clone(&printed)));
        let out = Buffer::default();
        let runtime = RuntimeConfig::default().with_parallelism(parallelism);
        let mut session = Session::new(runtime, registry, Box::new(out.clone()));
        session.set("table.store.path", dir.to_str().unwrap()).unwrap();
        Harness { session, printed, out }
    }

    /// Runs each statement of `script`, without waiting for jobs that do not end.
    fn run(&mut self, script: &str) -> Result<(), String> {
        for statement in parse_script(script).map_err(|e| e.to_string())? {
            self.session.execute(&statement).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn results(&self) -> String {
        String::from_utf8(self.out.0.lock().clone()).unwrap()
    }

    fn printed_lines(&self) -> Vec<String> {
        String::from_utf8(self.printed.lock().clone()).unwrap().lines().map(str::to_string).collect()
    }

    /// Waits until the print connector has printed `count` lines, then stops every job.
    fn printed_after_all(&mut self, count: usize) -> Vec<String> {
        wait_until(&format!("{count} lines are printed"), || self.printed_lines().len() >= count);
        self.session.cancel_all();
        let _cancelled = self.session.wait_all();
        self.printed_lines()
    }
}

/// The cells of every data row of the tables in `text` (the `op` column left out).
fn table_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| l.starts_with("| +I") || l.starts_with("| -U") || l.starts_with("| +U") || l.starts_with("| -D"))
        .map(|l| l.split('|').skip(2).map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect())
        .collect()
}

fn rows(expected: &[&[&str]]) -> Vec<Vec<String>> {
    expected.iter().map(|r| r.iter().map(|c| c.to_string()).collect()).collect()
}

#[test]
fn the_documented_examples_return_the_documented_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 2);
    let script = std::fs::read_to_string("examples/merge_engines.sql").unwrap();
    h.session.execute_script(&script).map_err(|e| format!("{}: {}", e.position(), e.error)).unwrap();
    let expected = rows(&[
        &["1", "30.2", "35", "2024-01-01 11:00:00.000"],
        &["1", "301.25"],
        &["1", "0.7200000000000001"],
        &["1", "28.3", "2024-01-01 11:00:00.000"],
        &["1", "79.99"],
        &["1", "<NULL>", "2024-01-01 12:00:00.000"],
        &["1", "new@example.com", "789-012"],
        &["1", "2024-01-01", "ProductA"],
        &["1", "developer,java,flink", "developer;java;flink"],
        &["1", "developer;java;flink"],
        // The union {1, 2, 3} in RoaringBitmap's portable format (cut at the column width).
        &["1", "x'3a30000001000000000002001..."],
        // Booleans as Flink 2.3's client prints them.
        &["1", "FALSE"],
        &["1", "TRUE"],
    ]);
    assert_eq!(table_rows(&h.results()), expected);
    // All bytes of the union: {1, 2, 3}, as Fluss's test expects them.
    h.session.set("sql-client.execution.result-mode", "changelog").unwrap();
    h.run("SELECT visit_bitmap FROM user_visits WHERE user_id = 1;").unwrap();
    let union = weir::store::bitmap32::encode([1u32, 2, 3].into_iter().collect());
    assert_eq!(union, [0x3a, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0, 16, 0, 0, 0, 1, 0, 2, 0, 3, 0]);
    let bytes: Vec<String> = union.iter().map(u8::to_string).collect();
    assert!(h.results().ends_with(&format!("+I[[{}]]\n", bytes.join(", "))), "{}", h.results());
}

#[test]
fn aggregation_functions_emit_fluss_changelog() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 2);
    let columns = "id INT, sum_int INT, sum_double DOUBLE, product_int INT, max_int INT, max_timestamp TIMESTAMP(3), \
        min_double DOUBLE, min_string STRING, first_val INT, first_val_non_null INT, last_val INT, \
        last_val_non_null INT, bool_and_val BOOLEAN, bool_or_val BOOLEAN, listagg_val STRING";
    h.run(&format!(
        "CREATE TABLE comprehensive_agg ({columns}, PRIMARY KEY (id) NOT ENFORCED) WITH (
            'table.merge-engine' = 'aggregation',
            'fields.sum_int.agg' = 'sum', 'fields.sum_double.agg' = 'sum', 'fields.product_int.agg' = 'product',
            'fields.max_int.agg' = 'max', 'fields.max_timestamp.agg' = 'max', 'fields.min_double.agg' = 'min',
            'fields.min_string.agg' = 'min', 'fields.first_val.agg' = 'first_value',
            'fields.first_val_non_null.agg' = 'first_value_ignore_nulls', 'fields.last_val.agg' = 'last_value',
            'fields.last_val_non_null.agg' = 'last_value_ignore_nulls', 'fields.bool_and_val.agg' = 'bool_and',
            'fields.bool_or_val.agg' = 'bool_or', 'fields.listagg_val.agg' = 'listagg',
            'fields.listagg_val.listagg.delimiter' = '|');
        CREATE TABLE changes ({columns}) WITH ('connector' = 'print');
        INSERT INTO changes SELECT * FROM comprehensive_agg;
        INSERT INTO comprehensive_agg VALUES (1, 1000, 10.5, 2, 100, TIMESTAMP '2024-01-15 15:00:00', 100.0, 'beta',
            100, 100, 100, 100, true, false, 'alpha');
        INSERT INTO comprehensive_agg VALUES (1, 2000, 20.5, 3, 200, TIMESTAMP '2024-02-01 18:00:00', 50.0, 'alpha',
            200, 200, 200, 200, true, true, 'beta');
        INSERT INTO comprehensive_agg VALUES (1, 3000, 30.5, 5, 150, TIMESTAMP '2024-01-20 14:00:00', 80.0, 'charlie',
            300, CAST(NULL AS INT), 300, 300, false, true, 'gamma');"
    ))
    .unwrap();
    let first = "1, 1000, 10.5, 2, 100, 2024-01-15T15:00, 100.0, beta, 100, 100, 100, 100, true, false, alpha";
    let second = "1, 3000, 31.0, 6, 200, 2024-02-01T18:00, 50.0, alpha, 100, 100, 200, 200, true, true, alpha|beta";
    let third =
        "1, 6000, 61.5, 30, 200, 2024-02-01T18:00, 50.0, alpha, 100, 100, 300, 300, false, true, alpha|beta|gamma";
    assert_eq!(
        h.printed_after_all(5),
        [
            format!("+I[{first}]"),
            format!("-U[{first}]"),
            format!("+U[{second}]"),
            format!("-U[{second}]"),
            format!("+U[{third}]")
        ]
    );
}

#[test]
fn partial_updates_aggregate_only_their_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 1);
    h.run(
        "CREATE TABLE agg_partial_update (id INT, sum_a INT, sum_b INT, PRIMARY KEY (id) NOT ENFORCED) WITH (
            'table.merge-engine' = 'aggregation', 'fields.sum_a.agg' = 'sum', 'fields.sum_b.agg' = 'sum');
        CREATE TABLE changes (id INT, sum_a INT, sum_b INT) WITH ('connector' = 'print');
        INSERT INTO changes SELECT * FROM agg_partial_update;
        INSERT INTO agg_partial_update VALUES (1, 100, 200);
        INSERT INTO agg_partial_update (id, sum_a) VALUES (1, 50);
        INSERT INTO agg_partial_update (id, sum_a) VALUES (2, 77);",
    )
    .unwrap();
    assert_eq!(h.printed_after_all(4), ["+I[1, 100, 200]", "-U[1, 100, 200]", "+U[1, 150, 200]", "+I[2, 77, null]"]);
}

#[test]
fn first_row_keeps_the_first_row_of_each_key() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 2);
    h.run(
        "CREATE TABLE first_row_t (a INT, b STRING, PRIMARY KEY (a) NOT ENFORCED)
            WITH ('table.merge-engine' = 'first_row');
        CREATE TABLE changes (a INT, b STRING) WITH ('connector' = 'print');
        INSERT INTO changes SELECT * FROM first_row_t;
        INSERT INTO first_row_t VALUES (1, 'v1'), (2, 'v2'), (1, 'v11'), (3, 'v3');
        INSERT INTO first_row_t VALUES (3, 'v33'), (4, 'v44');
        INSERT INTO first_row_t VALUES (1, 'v111'), (4, 'v444');",
    )
    .unwrap();
    assert_eq!(h.printed_after_all(4), ["+I[1, v1]", "+I[2, v2]", "+I[3, v3]", "+I[4, v44]"]);
    // Partial writes are refused, with Fluss's message.
    let error = h.run("INSERT INTO first_row_t (a) VALUES (9);").unwrap_err();
    assert!(
        error.contains(
            "Table default_catalog.default_database.first_row_t uses the 'FIRST_ROW' merge engine which does not \
             support partial updates."
        ),
        "{error}"
    );
}

#[test]
fn versioned_rows_win_by_version() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 1);
    h.run(
        "CREATE TABLE versioned_t (a INT, b STRING, ts BIGINT, PRIMARY KEY (a) NOT ENFORCED)
            WITH ('table.merge-engine' = 'versioned', 'table.merge-engine.versioned.ver-column' = 'ts');
        CREATE TABLE changes (a INT, b STRING, ts BIGINT) WITH ('connector' = 'print');
        INSERT INTO changes SELECT * FROM versioned_t;
        INSERT INTO versioned_t VALUES (1, 'v1', 1000), (2, 'v2', 1000), (1, 'v11', 999), (3, 'v3', 1000);
        INSERT INTO versioned_t VALUES (3, 'v33', 1001), (4, 'v44', 1000), (1, 'v11', 999), (2, 'v22', 1000);",
    )
    .unwrap();
    assert_eq!(
        h.printed_after_all(8),
        [
            "+I[1, v1, 1000]",
            "+I[2, v2, 1000]",
            "+I[3, v3, 1000]",
            "-U[3, v3, 1000]",
            "+U[3, v33, 1001]",
            "+I[4, v44, 1000]",
            "-U[2, v2, 1000]",
            "+U[2, v22, 1000]"
        ]
    );
}

#[test]
fn tables_and_rows_outlive_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let ddl = "CREATE TABLE totals (k STRING, n BIGINT, PRIMARY KEY (k) NOT ENFORCED)
        WITH ('table.merge-engine' = 'aggregation', 'fields.n.agg' = 'sum');";
    {
        let mut h = Harness::new(dir.path(), 1);
        h.run(ddl).unwrap();
        h.run("INSERT INTO totals VALUES ('a', 1), ('b', 2), ('a', 3);").unwrap();
    }
    let mut h = Harness::new(dir.path(), 1);
    h.run("SHOW TABLES; SELECT * FROM totals WHERE k = 'a';").unwrap();
    assert!(
        h.results().starts_with("+------------+\n| table name |\n+------------+\n|     totals |\n"),
        "{}",
        h.results()
    );
    assert_eq!(table_rows(&h.results()), rows(&[&["a", "4"]]));
    // The same definition again: an error without IF NOT EXISTS, nothing with it.
    let error = h.run(ddl).unwrap_err();
    assert!(error.contains("`totals`: Table already exists"), "{error}");
    h.run(&ddl.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS")).unwrap();
    // Another definition under IF NOT EXISTS names the difference.
    let error =
        h.run(&ddl.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS").replace("'sum'", "'max'")).unwrap_err();
    assert!(error.contains("option 'fields.n.agg' is 'sum' in the existing table, 'max' here"), "{error}");
    let error =
        h.run(&ddl.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS").replace("n BIGINT", "n INT")).unwrap_err();
    assert!(error.contains("column 'n' is BIGINT in the existing table, INT here"), "{error}");
    // DROP TABLE removes the rows with the definition.
    h.run(&format!("DROP TABLE totals; {ddl} SET 'execution.runtime-mode' = 'batch'; SELECT * FROM totals;")).unwrap();
    assert!(h.results().ends_with("Empty set\n"), "{}", h.results());
}

#[test]
fn a_second_session_on_the_same_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = Harness::new(dir.path(), 1);
    first.run("CREATE TABLE t (k INT, PRIMARY KEY (k) NOT ENFORCED);").unwrap();
    let mut second = Harness::new(dir.path(), 1);
    let error = second.run("SELECT * FROM t;").unwrap_err();
    assert!(error.contains("is in use by another process"), "{error}");
    // Statements that name no managed table do not open the store, and run.
    let mut third = Harness::new(dir.path(), 1);
    third
        .run(
            "SELECT 1; CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3'); SELECT a FROM g;",
        )
        .unwrap();
    let error = third.run("SHOW TABLES;").unwrap_err();
    assert!(error.contains("is in use by another process"), "{error}");
}

/// `SET 'table.store.path'` to another directory: the next statement sees that directory's
/// tables, not the ones of the store open before.
#[test]
fn another_store_path_switches_the_tables_at_the_next_statement() {
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut h = Harness::new(first.path(), 1);
    h.run("CREATE TABLE only_in_first (k INT, PRIMARY KEY (k) NOT ENFORCED);").unwrap();
    let other = format!("SET 'table.store.path' = '{}';", second.path().join("store").display());
    let error =
        h.run(&format!("{other} SET 'execution.runtime-mode' = 'batch'; SELECT * FROM only_in_first;")).unwrap_err();
    assert!(error.contains("Object 'only_in_first' not found"), "{error}");
}

#[test]
fn batch_mode_reads_current_rows_and_refuses_unbounded_sources() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 2);
    h.run(
        "CREATE TABLE stock (item STRING, qty INT, PRIMARY KEY (item) NOT ENFORCED)
            WITH ('table.merge-engine' = 'aggregation', 'fields.qty.agg' = 'sum');
        INSERT INTO stock VALUES ('apple', 3), ('pear', 1), ('apple', 2);
        SET 'execution.runtime-mode' = 'batch';
        SELECT item, qty FROM stock;",
    )
    .unwrap();
    let text = h.results();
    assert!(text.contains("item |"), "{text}");
    assert!(text.ends_with("2 rows in set\n"), "{text}");
    assert!(text.contains("apple |") && text.contains("5 |") && text.contains("pear |"), "{text}");
    // An aggregate returns its final rows only.
    h.session.set("sql-client.execution.result-mode", "changelog").unwrap();
    let before = h.results().len();
    h.run("SELECT COUNT(*), SUM(qty) FROM stock;").unwrap();
    assert_eq!(&h.results()[before..], "+I[2, 6]\n");
    let error = h
        .run(
            "CREATE TABLE endless (n BIGINT) WITH ('connector' = 'datagen');
            SELECT * FROM endless;",
        )
        .unwrap_err();
    assert!(
        error.contains(
            "Querying an unbounded table 'default_catalog.default_database.endless' in batch mode is not allowed."
        ),
        "{error}"
    );
}

#[test]
fn a_managed_table_serves_lookup_joins() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 2);
    h.run(
        "CREATE TABLE users (id BIGINT, name STRING, visits BIGINT, PRIMARY KEY (id) NOT ENFORCED)
            WITH ('table.merge-engine' = 'aggregation', 'fields.visits.agg' = 'sum');
        INSERT INTO users VALUES (1, 'ann', 1), (2, 'bob', 1), (1, CAST(NULL AS STRING), 4);
        CREATE TABLE clicks (user_id BIGINT, proc_time AS PROCTIME()) WITH ('connector' = 'datagen',
            'number-of-rows' = '3', 'fields.user_id.kind' = 'sequence', 'fields.user_id.start' = '1',
            'fields.user_id.end' = '3');
        CREATE TABLE joined (user_id BIGINT, name STRING, visits BIGINT) WITH ('connector' = 'print');
        INSERT INTO joined SELECT c.user_id, u.name, u.visits FROM clicks AS c
            LEFT JOIN users FOR SYSTEM_TIME AS OF c.proc_time AS u ON c.user_id = u.id;",
    )
    .unwrap();
    let mut lines: Vec<String> =
        h.printed_lines().into_iter().map(|l| l.split_once("> ").map_or(l.clone(), |(_, r)| r.to_string())).collect();
    lines.sort();
    assert_eq!(lines, ["+I[1, ann, 5]", "+I[2, bob, 1]", "+I[3, null, null]"]);
}

#[test]
fn explain_shows_the_changelog_mode_fluss_declares() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 1);
    h.run(
        "CREATE TABLE fr (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('table.merge-engine' = 'first_row');
        CREATE TABLE ag (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('table.merge-engine' = 'aggregation');
        CREATE TABLE al (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED)
            WITH ('table.merge-engine' = 'aggregation', 'table.delete.behavior' = 'allow');
        EXPLAIN CHANGELOG_MODE SELECT * FROM fr;
        EXPLAIN CHANGELOG_MODE SELECT * FROM ag;
        EXPLAIN CHANGELOG_MODE SELECT * FROM al;
        EXPLAIN SELECT v FROM ag WHERE k = 7;",
    )
    .unwrap();
    let text = h.results();
    let scans: Vec<&str> = text.lines().filter(|l| l.contains("changelogMode=")).collect();
    assert!(scans[0].ends_with("changelogMode=[I])"), "{text}");
    assert!(scans[1].ends_with("changelogMode=[I,UB,UA])"), "{text}");
    assert!(scans[2].ends_with("changelogMode=[I,UB,UA,D])"), "{text}");
    assert!(text.contains("TableSourceScan(table=[[default_catalog, default_database, ag, filter=[=(k, 7)]"), "{text}");
}

#[test]
fn rows_that_cannot_merge_fail_the_statement_and_keep_earlier_ones() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 1);
    h.run(
        "CREATE TABLE visits (id INT, days BYTES, PRIMARY KEY (id) NOT ENFORCED)
            WITH ('table.merge-engine' = 'aggregation', 'fields.days.agg' = 'rbm32');
        INSERT INTO visits VALUES (1, x'3A30000001000000000001001000000001000200');",
    )
    .unwrap();
    let error = h.run("INSERT INTO visits VALUES (2, x'3A300000'), (1, x'00');").unwrap_err();
    assert!(
        error.contains("Cannot write the row with key (id=1) into table 'visits': Cannot merge column 'days'"),
        "{error}"
    );
    h.run("SET 'execution.runtime-mode' = 'batch'; SELECT id FROM visits;").unwrap();
    // The failed statement left nothing behind: key 2 of its first row is not there either.
    assert!(h.results().ends_with("1 row in set\n"), "{}", h.results());
}

#[test]
fn option_errors_use_fluss_messages() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 1);
    let create = |options: &str| {
        format!("CREATE TABLE t (k INT, v INT, s STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ({options});")
    };
    let cases = [
        (
            "'table.merge-engine' = 'versioned'",
            "'table.merge-engine.versioned.ver-column' must be set for versioned merge engine.",
        ),
        ("'table.merge-engine' = 'aggregation', 'fields.s.agg' = 'sum'", "Invalid aggregation function for column 's'"),
        (
            "'table.merge-engine' = 'aggregation', 'fields.v.agg' = 'median'",
            "Unknown aggregation function for column 'v': median",
        ),
        (
            "'table.merge-engine' = 'first_row', 'table.delete.behavior' = 'allow'",
            "Table with 'FIRST_ROW' merge engine does not support delete operations.",
        ),
        (
            "'table.merge-engine' = 'aggregation', 'table.changelog.image' = 'wal'",
            "Table with 'AGGREGATION' merge engine does not support 'WAL' changelog image mode.",
        ),
    ];
    for (options, message) in cases {
        let error = h.run(&create(options)).unwrap_err();
        assert!(error.contains(message), "{options}: {error}");
    }
    let error = h.run("CREATE TABLE nested (k INT, tags ARRAY<STRING>, PRIMARY KEY (k) NOT ENFORCED);").unwrap_err();
    assert!(
        error.contains("Column 'tags' of table 'default_catalog.default_database.nested' has type ARRAY<STRING>"),
        "{error}"
    );
    let error = h.run("CREATE TABLE nokey (k INT);").unwrap_err();
    assert!(error.contains("a stored table needs a primary key"), "{error}");
    let error = h.run(&create("'scan.startup.mode' = 'earliest'")).unwrap_err();
    assert!(error.contains("expected one of 'full', 'latest'"), "{error}");
}

#[test]
fn versioned_tables_compare_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 1);
    h.run(
        "CREATE TABLE versioned_ts (a INT, b STRING, ts TIMESTAMP(3), PRIMARY KEY (a) NOT ENFORCED)
            WITH ('table.merge-engine' = 'versioned', 'table.merge-engine.versioned.ver-column' = 'ts');
        CREATE TABLE changes (a INT, b STRING, ts TIMESTAMP(3)) WITH ('connector' = 'print');
        INSERT INTO changes SELECT * FROM versioned_ts;
        INSERT INTO versioned_ts VALUES (1, 'v1', TIMESTAMP '2024-12-27 12:00:00'),
            (1, 'v11', TIMESTAMP '2024-12-27 11:59:59'), (2, 'v2', TIMESTAMP '2024-12-27 12:00:00');
        INSERT INTO versioned_ts VALUES (1, 'v111', TIMESTAMP '2024-12-27 12:00:00'),
            (2, 'v22', CAST(NULL AS TIMESTAMP(3)));",
    )
    .unwrap();
    // Ties go to the newer row; a NULL version never beats a stored one.
    assert_eq!(
        h.printed_after_all(4),
        [
            "+I[1, v1, 2024-12-27T12:00]",
            "+I[2, v2, 2024-12-27T12:00]",
            "-U[1, v1, 2024-12-27T12:00]",
            "+U[1, v111, 2024-12-27T12:00]"
        ]
    );
}

#[test]
fn a_latest_scan_follows_only_later_changes() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 1);
    h.run(
        "CREATE TABLE t (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('scan.startup.mode' = 'latest');
        INSERT INTO t VALUES (1, 10);
        CREATE TABLE changes (k INT, v INT) WITH ('connector' = 'print');
        INSERT INTO changes SELECT * FROM t;
        INSERT INTO t VALUES (1, 11), (2, 20);",
    )
    .unwrap();
    // The default engine: the newest row wins.
    assert_eq!(h.printed_after_all(3), ["-U[1, 10]", "+U[1, 11]", "+I[2, 20]"]);
}

#[test]
fn an_unbounded_query_merges_as_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 2);
    h.run(
        "CREATE TABLE ticks (k INT) WITH ('connector' = 'datagen', 'rows-per-second' = '2000',
            'fields.k.min' = '1', 'fields.k.max' = '3');
        CREATE TABLE totals (k INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED)
            WITH ('table.merge-engine' = 'aggregation', 'fields.n.agg' = 'sum');
        INSERT INTO totals SELECT k, CAST(1 AS BIGINT) FROM ticks;",
    )
    .unwrap();
    h.session.set("sql-client.execution.result-mode", "changelog").unwrap();
    let total = |h: &mut Harness| {
        let before = h.results().len();
        h.run("SET 'execution.runtime-mode' = 'batch'; SELECT SUM(n) FROM totals;").unwrap();
        let text = h.results()[before..].to_string();
        text.lines()
            .filter_map(|l| l.strip_prefix("+I[")?.strip_suffix(']')?.parse::<i64>().ok())
            .next_back()
            .unwrap_or(0)
    };
    let mut seen = Vec::new();
    wait_until("the running INSERT has merged rows twice", || {
        let n = total(&mut h);
        if seen.last().is_none_or(|last| n > *last) && n > 0 {
            seen.push(n);
        }
        seen.len() >= 2
    });
    h.session.cancel_all();
    let _cancelled = h.session.wait_all();
}

/// One field function and a from-scratch recomputation of it over the values a key received.
struct Function {
    name: &'static str,
    recompute: fn(&[Option<i64>]) -> Option<i64>,
}

fn non_null(values: &[Option<i64>]) -> impl Iterator<Item = i64> + '_ {
    values.iter().flatten().copied()
}

const FUNCTIONS: [Function; 5] = [
    Function { name: "sum", recompute: |v| non_null(v).reduce(|a, b| a.wrapping_add(b)) },
    Function { name: "max", recompute: |v| non_null(v).max() },
    Function { name: "min", recompute: |v| non_null(v).min() },
    Function { name: "last_value_ignore_nulls", recompute: |v| non_null(v).last() },
    // The first value of the key; a NULL first value is replaced by the next non-NULL one.
    Function { name: "first_value", recompute: |v| non_null(v).next() },
];

#[test]
fn random_writes_merge_as_a_recomputation_says() {
    for (seed, parallelism) in [(7u64, 1), (11, 2), (23, 2), (42, 4)] {
        let dir = tempfile::tempdir().unwrap();
        let mut h = Harness::new(dir.path(), parallelism);
        let columns: Vec<String> = (0..FUNCTIONS.len()).map(|i| format!("c{i} BIGINT")).collect();
        let options: Vec<String> =
            FUNCTIONS.iter().enumerate().map(|(i, f)| format!("'fields.c{i}.agg' = '{}'", f.name)).collect();
        h.run(&format!(
            "CREATE TABLE r (k INT, {}, tags STRING, PRIMARY KEY (k) NOT ENFORCED)
                WITH ('table.merge-engine' = 'aggregation', {}, 'fields.tags.agg' = 'listagg');",
            columns.join(", "),
            options.join(", ")
        ))
        .unwrap();
        let mut random = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = |bound: u64| {
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            random % bound
        };
        // Per key: the values each column received, and the tags, in write order.
        let mut received: std::collections::BTreeMap<i64, (Vec<Vec<Option<i64>>>, Vec<String>)> = Default::default();
        for statement in 0..12 {
            let mut tuples = Vec::new();
            for row in 0..(1 + next(30)) {
                let key = next(8) as i64;
                let entry = received.entry(key).or_insert_with(|| (vec![Vec::new(); FUNCTIONS.len()], Vec::new()));
                let mut cells = vec![key.to_string()];
                for values in entry.0.iter_mut() {
                    let value = (next(5) != 0).then(|| next(2000) as i64 - 1000);
                    values.push(value);
                    cells.push(value.map_or("CAST(NULL AS BIGINT)".to_string(), |v| v.to_string()));
                }
                let tag = format!("s{statement}r{row}");
                entry.1.push(tag.clone());
                cells.push(format!("'{tag}'"));
                tuples.push(format!("({})", cells.join(", ")));
            }
            h.run(&format!("INSERT INTO r VALUES {};", tuples.join(", "))).unwrap();
        }
        h.session.set("sql-client.execution.result-mode", "changelog").unwrap();
        h.run("SET 'execution.runtime-mode' = 'batch'; SELECT * FROM r;").unwrap();
        let mut stored: Vec<String> = h.results().lines().map(str::to_string).collect();
        stored.sort();
        let mut expected: Vec<String> = received
            .iter()
            .map(|(key, (columns, tags))| {
                let mut cells = vec![key.to_string()];
                for (function, values) in FUNCTIONS.iter().zip(columns) {
                    cells.push((function.recompute)(values).map_or("null".to_string(), |v| v.to_string()));
                }
                cells.push(tags.join(","));
                format!("+I[{}]", cells.join(", "))
            })
            .collect();
        expected.sort();
        assert_eq!(stored, expected, "seed {seed}, parallelism {parallelism}");
    }
}

#[test]
fn versioned_tables_compare_nanosecond_instants() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 1);
    h.run(
        "CREATE TABLE versioned_ltz (a INT, b STRING, ts TIMESTAMP_LTZ(9), PRIMARY KEY (a) NOT ENFORCED)
            WITH ('table.merge-engine' = 'versioned', 'table.merge-engine.versioned.ver-column' = 'ts');
        CREATE TABLE changes (a INT, b STRING) WITH ('connector' = 'print');
        INSERT INTO changes SELECT a, b FROM versioned_ltz;
        INSERT INTO versioned_ltz VALUES
            (1, 'v1', CAST(TIMESTAMP '2024-12-27 12:00:00.123456789' AS TIMESTAMP_LTZ(9))),
            (1, 'v11', CAST(TIMESTAMP '2024-12-27 12:00:00.123456788' AS TIMESTAMP_LTZ(9))),
            (1, 'v111', CAST(TIMESTAMP '2024-12-27 12:00:00.123456790' AS TIMESTAMP_LTZ(9)));",
    )
    .unwrap();
    // One nanosecond decides: v11 is older than v1, v111 newer.
    assert_eq!(h.printed_after_all(3), ["+I[1, v1]", "-U[1, v1]", "+U[1, v111]"]);
}

#[test]
fn hints_set_scan_options_but_not_how_a_table_merges() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 1);
    h.run(
        "CREATE TABLE t (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED)
            WITH ('table.merge-engine' = 'aggregation', 'fields.v.agg' = 'sum');
        INSERT INTO t VALUES (1, 1);
        CREATE TABLE changes (k INT, v INT) WITH ('connector' = 'print');
        INSERT INTO changes SELECT * FROM t /*+ OPTIONS('scan.startup.mode' = 'latest') */;
        INSERT INTO t VALUES (1, 2);",
    )
    .unwrap();
    // The hinted scan follows the same table the INSERT writes.
    assert_eq!(h.printed_after_all(2), ["-U[1, 1]", "+U[1, 3]"]);
    let error = h.run("INSERT INTO t /*+ OPTIONS('fields.v.agg' = 'max') */ VALUES (1, 5);").unwrap_err();
    assert!(error.contains("Option 'fields.v.agg' of managed table 't' is part of its definition"), "{error}");
}

#[test]
fn explaining_a_script_leaves_the_data_directory_alone() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut h = Harness::new(&data, 1);
    let plans = h
        .session
        .explain_script(
            "CREATE TABLE t (k INT, v INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('table.merge-engine' = 'first_row');
            EXPLAIN CHANGELOG_MODE SELECT * FROM t;
            INSERT INTO t VALUES (1, 1);",
        )
        .map_err(|e| e.error.to_string())
        .unwrap();
    assert!(plans.contains("changelogMode=[I]"), "{plans}");
    assert!(!data.exists(), "explain created {}", data.display());
    // With a store on disk, explaining neither creates nor drops its tables.
    h.run("CREATE TABLE kept (k INT, PRIMARY KEY (k) NOT ENFORCED); INSERT INTO kept VALUES (1);").unwrap();
    h.session.explain_script("DROP TABLE kept; CREATE TABLE extra (k INT, PRIMARY KEY (k) NOT ENFORCED);").unwrap();
    drop(h);
    let mut h = Harness::new(&data, 1);
    h.run("SHOW TABLES; SELECT * FROM kept WHERE k = 1;").unwrap();
    assert!(
        h.results().starts_with("+------------+\n| table name |\n+------------+\n|       kept |\n"),
        "{}",
        h.results()
    );
    assert_eq!(table_rows(&h.results()), rows(&[&["1"]]));
}

#[test]
fn deletes_follow_the_delete_behavior() {
    // The outer aggregate deletes group 1 when key 'a' moves on to a count of 2.
    let query = "SELECT cnt, COUNT(*) FROM (SELECT k, COUNT(*) AS cnt FROM (VALUES ('a'), ('a')) AS s(k) GROUP BY k) GROUP BY cnt";
    let stored = |behavior: &str| -> Result<Vec<Vec<String>>, String> {
        let dir = tempfile::tempdir().unwrap();
        let mut h = Harness::new(dir.path(), 1);
        h.run(&format!(
            "CREATE TABLE t (cnt BIGINT, n BIGINT, PRIMARY KEY (cnt) NOT ENFORCED) WITH ('table.delete.behavior' = '{behavior}');
            INSERT INTO t {query};
            SET 'execution.runtime-mode' = 'batch';
            SELECT * FROM t;"
        ))?;
        Ok(h.results()
            .lines()
            .filter(|l| l.starts_with("| "))
            .skip(1)
            .map(|l| l.split('|').map(str::trim).filter(|c| !c.is_empty()).map(str::to_string).collect())
            .collect())
    };
    assert_eq!(stored("allow").unwrap(), rows(&[&["2", "1"]]));
    assert_eq!(stored("ignore").unwrap(), rows(&[&["1", "1"], &["2", "1"]]));
    let error = stored("disable").unwrap_err();
    assert!(error.contains("Delete operations are disabled for this table."), "{error}");
    // `'sink.ignore-delete'` drops them before the table sees them.
    assert_eq!(stored("disable', 'sink.ignore-delete' = 'true").unwrap(), rows(&[&["1", "1"], &["2", "1"]]));
}

#[test]
fn batch_mode_writes_final_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 2);
    h.run(
        "CREATE TABLE sales (item STRING, qty INT, PRIMARY KEY (item) NOT ENFORCED)
            WITH ('table.merge-engine' = 'aggregation', 'fields.qty.agg' = 'sum');
        CREATE TABLE totals (item STRING, qty INT, PRIMARY KEY (item) NOT ENFORCED)
            WITH ('table.merge-engine' = 'aggregation', 'fields.qty.agg' = 'sum');
        CREATE TABLE printed (item STRING, qty INT) WITH ('connector' = 'print');
        SET 'execution.runtime-mode' = 'batch';
        SET 'sql-client.execution.result-mode' = 'changelog';
        INSERT INTO sales VALUES ('apple', 3), ('pear', 1);
        INSERT INTO sales VALUES ('apple', 2), ('fig', 4);
        INSERT INTO printed SELECT item, SUM(qty) FROM (SELECT item, qty FROM sales UNION ALL SELECT item, qty FROM sales) GROUP BY item;
        INSERT INTO totals SELECT item, SUM(qty) FROM (SELECT item, qty FROM sales UNION ALL SELECT item, qty FROM sales) GROUP BY item;
        INSERT INTO totals SELECT item, SUM(qty) FROM (SELECT item, qty FROM sales UNION ALL SELECT item, qty FROM sales) GROUP BY item;
        SELECT * FROM totals;
        EXPLAIN SELECT item, COUNT(*) FROM sales GROUP BY item;",
    )
    .unwrap();
    // Each group once, with its final value; merged once per statement into the aggregation table.
    let mut printed: Vec<String> =
        h.printed_lines().into_iter().map(|l| l.split_once("> ").map_or(l.clone(), |(_, r)| r.to_string())).collect();
    printed.sort();
    assert_eq!(printed, ["+I[apple, 10]", "+I[fig, 8]", "+I[pear, 2]"]);
    let results = h.results();
    let mut stored: Vec<&str> = results.lines().filter(|l| l.starts_with("+I[")).collect();
    stored.sort();
    assert_eq!(stored, ["+I[apple, 20]", "+I[fig, 16]", "+I[pear, 4]"]);
    assert!(results.contains("FinalRows(key=[item])"), "{results}");
}

#[test]
fn delete_and_update_statements_modify_rows_in_batch_mode() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = Harness::new(dir.path(), 2);
    h.run(
        "CREATE TABLE kv (k INT, v BIGINT, s STRING, PRIMARY KEY (k) NOT ENFORCED);
        INSERT INTO kv VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c'), (4, 40, 'd');",
    )
    .unwrap();
    let error = h.run("DELETE FROM kv WHERE k = 1;").unwrap_err();
    assert!(error.contains("DELETE statement is not supported for streaming mode now."), "{error}");
    h.run(
        "SET 'execution.runtime-mode' = 'batch';
        SET 'sql-client.execution.result-mode' = 'changelog';
        DELETE FROM kv WHERE k = 1;
        UPDATE kv SET v = v * 10, s = UPPER(s) WHERE k >= 3;
        DELETE FROM kv WHERE s = 'b';
        SELECT * FROM kv;",
    )
    .unwrap();
    let mut rows: Vec<&str> = Vec::new();
    let results = h.results();
    rows.extend(results.lines());
    rows.sort();
    assert_eq!(rows, ["+I[3, 300, C]", "+I[4, 400, D]"]);
    let error = h.run("UPDATE kv SET k = 9;").unwrap_err();
    assert!(error.contains("UPDATE cannot change primary key column 'k'"), "{error}");
    h.run(
        "CREATE TABLE agg (k INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('table.merge-engine' = 'aggregation');",
    )
    .unwrap();
    let error = h.run("DELETE FROM agg;").unwrap_err();
    assert!(
        error.contains(
            "Table default_catalog.default_database.agg uses the 'AGGREGATION' merge engine which does not support \
             DELETE or UPDATE statements."
        ),
        "{error}"
    );
    h.run("CREATE TABLE locked (k INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('table.delete.behavior' = 'disable');")
        .unwrap();
    let error = h.run("DELETE FROM locked WHERE k = 1;").unwrap_err();
    assert!(
        error.contains("has delete behavior set to 'disable' which does not support DELETE statements."),
        "{error}"
    );
    // Without a condition every row goes.
    let before = h.results().len();
    h.run("DELETE FROM kv; SELECT * FROM kv;").unwrap();
    assert_eq!(&h.results()[before..], "");
}
