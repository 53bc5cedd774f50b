//! Catalog statements as Flink's SQL client runs them: `tests/ddl/catalog_statements.sql` (SHOW
//! of catalogs, databases, tables, views, columns and functions, SHOW CREATE TABLE, DESCRIBE,
//! USE, CREATE TABLE … LIKE, CREATE TABLE AS SELECT, ALTER TABLE) runs statement by statement,
//! and what each prints equals what Flink 2.3 printed (`catalog_statements.flink.out`, each
//! statement after a `>>>` line); a statement Flink refused (`ERROR …`) weir refuses too.
//! `tests/ddl/catalogs.sql` does the same for catalogs and databases (`catalogs.flink.out`,
//! printed by PyFlink statement by statement), weir's refusals carrying Flink's messages.

use crate::common;

use common::Buffer;
use weir::connectors::ConnectorRegistry;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

/// The statements of Flink's output and what it printed for each.
fn flink_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        match line.strip_prefix(">>> ") {
            Some(statement) => blocks.push((statement.to_string(), String::new())),
            None => {
                if let Some((_, printed)) = blocks.last_mut() {
                    printed.push_str(line);
                    printed.push('\n');
                }
            }
        }
    }
    blocks
}

/// The message a user reads for a statement Flink refused: the root cause's when Flink gave one
/// (`… || CAUSE Exception: message`), else the message after the exception's class names.
fn flink_message(refusal: &str) -> &str {
    let message = refusal.rsplit_once(" || CAUSE ").map_or(refusal, |(_, cause)| cause);
    message.rsplit_once("Exception: ").map_or(message, |(_, m)| m).trim()
}

/// The rows of a query's table (`| +I | … |`), sorted: PyFlink prints `N rows in set` under a
/// streaming query where the SQL client, like weir, prints `Received a total of N rows`.
fn query_rows(printed: &str) -> Vec<&str> {
    let mut rows: Vec<&str> = printed.lines().filter(|l| l.starts_with("| +") || l.starts_with("| -")).collect();
    rows.sort_unstable();
    rows
}

/// The Optimized Physical and Execution Plan sections of an EXPLAIN.
fn physical_plans(printed: &str) -> &str {
    printed.find("== Optimized Physical Plan ==").map_or(printed, |at| printed[at..].trim_end())
}

/// Runs the statements of `tests/ddl/{name}.flink.out` one by one in a session and compares what
/// each printed with what Flink printed; a statement Flink refused weir refuses, and with
/// `messages`, with the message Flink's user reads.
fn equals_flink(name: &str, messages: bool) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ddl");
    let flink = std::fs::read_to_string(dir.join(format!("{name}.flink.out"))).unwrap();
    let out = Buffer::default();
    let mut session =
        Session::new(RuntimeConfig::default().with_parallelism(1), ConnectorRegistry::default(), Box::new(out.clone()));
    let blocks = flink_blocks(&flink);
    assert!(blocks.len() >= 10, "{} statements", blocks.len());
    for (statement, printed) in blocks {
        out.0.lock().clear();
        let result = session.execute_script(&format!("{statement};"));
        let ours = String::from_utf8_lossy(&out.0.lock()).into_owned();
        match printed.strip_prefix("ERROR ") {
            Some(refusal) => {
                let Err(error) = result else {
                    panic!("{statement}: Flink refused it ({refusal}); weir printed {ours}");
                };
                let error = error.error.to_string();
                // Parse errors are worded by each parser (Calcite's `Encountered "X" at …`).
                let parse = refusal.starts_with("SqlParserException");
                let expected = flink_message(refusal.trim_end());
                assert!(
                    !messages || parse || error.contains(expected),
                    "{statement}: weir said {error}, Flink {expected}"
                );
            }
            None => {
                assert!(
                    result.is_ok(),
                    "{statement}: {}",
                    result.err().map(|e| e.error.to_string()).unwrap_or_default()
                );
                if statement.starts_with("SELECT") {
                    assert_eq!(query_rows(&ours), query_rows(&printed), "{statement}");
                } else if statement.starts_with("EXPLAIN") {
                    // The Abstract Syntax Tree is weir's own logical plan (tests/explain/README.md).
                    assert_eq!(physical_plans(&ours), physical_plans(&printed), "{statement}");
                } else {
                    assert_eq!(ours, printed, "{statement}");
                }
            }
        }
    }
}

#[test]
fn catalog_statements_print_what_flinks_sql_client_prints() {
    equals_flink("catalog_statements", false);
}

/// `tests/ddl/catalogs.sql`: in-memory catalogs and databases created, used, listed and dropped;
/// tables and views in them, named in full, in part and from inside with `USE`; each refusal with
/// Flink's message.
#[test]
fn catalogs_and_databases_behave_as_in_flink() {
    equals_flink("catalogs", true);
}

/// `tests/ddl/show_like.sql`: `SHOW TABLES | VIEWS | DATABASES | CATALOGS` with `FROM` and
/// `[NOT] LIKE`, as Flink filters them.
#[test]
fn show_statements_filter_names_as_flink_does() {
    equals_flink("show_like", true);
}

/// A statement set sharing one scan writes into tables of two catalogs, each at its full name;
/// the rows read back from each, and the job's EXPLAIN names each sink by its catalog.
#[test]
fn one_job_writes_into_tables_of_two_catalogs() {
    let dir = tempfile::tempdir().unwrap();
    let out = Buffer::default();
    let mut session =
        Session::new(RuntimeConfig::default().with_parallelism(2), ConnectorRegistry::default(), Box::new(out.clone()));
    session.set("sql-client.execution.result-mode", "changelog").unwrap();
    let table = |name: &str| {
        format!(
            "CREATE TABLE {name} (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n",
            dir.path().join(name).display()
        )
    };
    let script = format!(
        "CREATE CATALOG mem WITH ('type' = 'generic_in_memory');\n\
         CREATE DATABASE mem.sales;\n\
         CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '100', \
           'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100');\n\
         USE mem.sales;\n{}{}\
         EXECUTE STATEMENT SET BEGIN\n\
           INSERT INTO evens SELECT id FROM default_catalog.default_database.gen WHERE MOD(id, 2) = 0;\n\
           INSERT INTO default_catalog.default_database.odds SELECT id FROM default_catalog.default_database.gen WHERE MOD(id, 2) = 1;\n\
         END;\n\
         SELECT COUNT(*), SUM(id) FROM evens;\n\
         USE CATALOG default_catalog;\n\
         SELECT COUNT(*), SUM(id) FROM odds;\n\
         EXPLAIN STATEMENT SET BEGIN\n\
           INSERT INTO mem.sales.evens SELECT id FROM gen;\n\
         END;\n",
        table("evens"),
        table("default_catalog.default_database.odds"),
    );
    if let Err(e) = session.execute_script(&script) {
        panic!("{}", e.in_file("script"));
    }
    let text = String::from_utf8_lossy(&out.0.lock()).into_owned();
    let finals: Vec<&str> = text.lines().filter(|l| l.starts_with("+I[") || l.starts_with("+U[")).collect();
    assert_eq!(finals.last(), Some(&"+U[50, 2500]"), "{text}");
    assert!(finals.contains(&"+U[50, 2550]"), "{text}");
    assert!(text.contains("Sink(table=[mem.sales.evens], fields=[id])"), "{text}");
    assert!(text.contains("TableSourceScan(table=[[default_catalog, default_database, gen]]"), "{text}");
}
