//! Catalog statements as Flink's SQL client runs them: `tests/ddl/catalog_statements.sql` (SHOW
//! of catalogs, databases, tables, views, columns and functions, SHOW CREATE TABLE, DESCRIBE,
//! USE, CREATE TABLE … LIKE, CREATE TABLE AS SELECT, ALTER TABLE) runs statement by statement,
//! and what each prints equals what Flink 2.3 printed (`catalog_statements.flink.out`, each
//! statement after a `>>>` line); a statement Flink refused (`ERROR …`) weir refuses too.

mod common;

use common::Buffer;
use weir::connectors::ConnectorRegistry;
use weir::planner::Session;
use weir::runtime::RuntimeConfig;

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

#[test]
fn catalog_statements_print_what_flinks_sql_client_prints() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ddl");
    let flink = std::fs::read_to_string(dir.join("catalog_statements.flink.out")).unwrap();
    let out = Buffer::default();
    let mut session =
        Session::new(RuntimeConfig::default().with_parallelism(1), ConnectorRegistry::default(), Box::new(out.clone()));
    let blocks = flink_blocks(&flink);
    assert!(blocks.len() > 30, "{} statements", blocks.len());
    for (statement, printed) in blocks {
        out.0.lock().clear();
        let result = session.execute_script(&format!("{statement};"));
        let ours = String::from_utf8_lossy(&out.0.lock()).into_owned();
        match printed.strip_prefix("ERROR ") {
            Some(message) => assert!(result.is_err(), "{statement}: Flink refused it ({message}); weir printed {ours}"),
            None => {
                assert!(
                    result.is_ok(),
                    "{statement}: {}",
                    result.err().map(|e| e.error.to_string()).unwrap_or_default()
                );
                assert_eq!(ours, printed, "{statement}");
            }
        }
    }
}
