//! SQL logic tests: every `tests/slt/*.slt` file runs in one session, record by record, and each
//! record's output must equal the expected text below its `----` line. `WEIR_BLESS=1 cargo test
//! --test integration slt::` rewrites the expected texts with what weir prints (review the diff before you keep
//! it). The format, close to sqllogictest's:
//!
//! ```text
//! # a comment
//! statement ok
//! CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
//!
//! query rowsort
//! SELECT a FROM t;
//! ----
//! +I[1]
//!
//! statement error
//! SELECT nope FROM t;
//! ----
//! 1:8: SQL validation failed. …
//! ```
//!
//! - `statement ok`: the SQL runs without error; what it prints is not compared.
//! - `statement error`: it fails with the expected message, `line:column: message`.
//! - `query`: what it prints (query results as a changelog, `print` sinks' lines, EXPLAIN text),
//!   in order; `query rowsort`: the same lines sorted (for parallel jobs).
//!
//! The SQL of a record ends at a `----` line or a blank line; the expected text runs to the next
//! record (a line starting with `statement`, `query` or `#`) or the end of the file, without its
//! trailing blank lines. Paths in the SQL are relative to `tests/slt/`. Each file runs in a
//! session of its own at parallelism 1 with `'sql-client.execution.result-mode' = 'changelog'`
//! (a bare `RESET` would return it to tableau: reset single keys instead).

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::Buffer;
use parking_lot::Mutex;
use weir::connectors::{ConnectorRegistry, PrintTarget};
use weir::runtime::RuntimeConfig;
use weir::session::Session;

/// What a record expects.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Ok,
    Error,
    Query { sort: bool },
}

/// One record: its header, SQL and expected text, and the lines around it kept as they are.
#[derive(Debug)]
struct Record {
    /// Comment and blank lines before the record.
    before: Vec<String>,
    header: String,
    kind: Kind,
    sql: Vec<String>,
    expected: Option<Vec<String>>,
    /// Line number of the header, for messages.
    line: usize,
}

fn is_header(line: &str) -> bool {
    line.starts_with("statement") || line.starts_with("query") || line.starts_with('#')
}

fn parse(text: &str, file: &Path) -> (Vec<Record>, Vec<String>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut records = Vec::new();
    // Lines to keep before the next record (comments, blank lines).
    let mut pending: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if !(line.starts_with("statement") || line.starts_with("query")) {
            pending.push(line.to_string());
            i += 1;
            continue;
        }
        let kind = match line.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["statement", "ok"] => Kind::Ok,
            ["statement", "error"] => Kind::Error,
            ["query"] => Kind::Query { sort: false },
            ["query", "rowsort"] => Kind::Query { sort: true },
            _ => panic!("{}:{}: unknown record header '{line}'", file.display(), i + 1),
        };
        let header_line = i + 1;
        i += 1;
        let mut sql = Vec::new();
        while i < lines.len() && !lines[i].is_empty() && lines[i] != "----" {
            sql.push(lines[i].to_string());
            i += 1;
        }
        let mut expected = None;
        let mut blanks_after = 0;
        if i < lines.len() && lines[i] == "----" {
            i += 1;
            let mut text = Vec::new();
            while i < lines.len() && !is_header(lines[i]) {
                text.push(lines[i].to_string());
                i += 1;
            }
            while text.last().is_some_and(|l| l.is_empty()) {
                text.pop();
                blanks_after += 1;
            }
            expected = Some(text);
        }
        records.push(Record {
            before: std::mem::take(&mut pending),
            header: line.to_string(),
            kind,
            sql,
            expected,
            line: header_line,
        });
        pending = vec![String::new(); blanks_after];
    }
    (records, pending)
}

/// Runs `sql` in `session`; what it printed, or its error as `line:column: message`.
fn run(session: &mut Session, printed: &Arc<Mutex<Vec<u8>>>, out: &Buffer, sql: &str) -> Result<String, String> {
    printed.lock().clear();
    out.0.lock().clear();
    let result = session.execute_script(sql).map_err(|e| {
        let at = e.position();
        format!("{}:{}: {}", at.line, at.column, e.error.message_without_position())
    });
    let mut text = String::from_utf8_lossy(&printed.lock()).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.0.lock()));
    result.map(|()| text)
}

/// Runs one file; returns its failures and, when blessing, writes the file with what ran.
fn check_file(path: &Path, bless: bool) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let (mut records, trailer) = parse(&text, path);
    let printed = Arc::new(Mutex::new(Vec::new()));
    let registry = ConnectorRegistry::with_print_target(PrintTarget::Buffer(Arc::clone(&printed)));
    let out = Buffer::default();
    let mut session = Session::new(RuntimeConfig::default().with_parallelism(1), registry, Box::new(out.clone()));
    session.set("sql-client.execution.result-mode", "changelog").unwrap();
    let mut failures = Vec::new();
    let at = |r: &Record| format!("{}:{}", path.display(), r.line);
    // Paths in the scripts are relative to their file's directory (the tests of other modules
    // share this process, hence its working directory).
    let data = format!("'path' = '{}/data/", path.parent().unwrap().display());
    for record in &mut records {
        let sql = record.sql.join("\n").replace("'path' = 'data/", &data);
        let result = run(&mut session, &printed, &out, &sql);
        let actual: Option<Vec<String>> = match (record.kind, result) {
            (Kind::Ok, Ok(_)) => None,
            (Kind::Ok, Err(e)) => {
                failures.push(format!("{}: expected success, got: {e}\n{sql}", at(record)));
                None
            }
            (Kind::Error, Ok(_)) => {
                failures.push(format!("{}: expected an error, it ran\n{sql}", at(record)));
                record.expected.clone()
            }
            (Kind::Error, Err(e)) => Some(e.lines().map(str::to_string).collect()),
            (Kind::Query { .. }, Err(e)) => {
                failures.push(format!("{}: expected rows, got: {e}\n{sql}", at(record)));
                record.expected.clone()
            }
            (Kind::Query { sort }, Ok(text)) => {
                let mut lines: Vec<String> = text.trim_end().lines().map(str::to_string).collect();
                if sort {
                    lines.sort();
                }
                Some(lines)
            }
        };
        if let Some(actual) = actual {
            if bless {
                record.expected = Some(actual);
            } else if record.expected.as_ref() != Some(&actual) {
                failures.push(format!(
                    "{}: {}\n{sql}\n--- expected\n{}\n--- weir printed\n{}",
                    at(record),
                    record.header,
                    record.expected.as_ref().map_or("(nothing)".to_string(), |e| e.join("\n")),
                    actual.join("\n")
                ));
            }
        }
    }
    session.cancel_all();
    if bless {
        std::fs::write(path, render(&records, &trailer)).unwrap();
    }
    failures
}

fn render(records: &[Record], trailer: &[String]) -> String {
    let mut text = String::new();
    for r in records {
        r.before.iter().for_each(|l| text.push_str(&format!("{l}\n")));
        text.push_str(&format!("{}\n", r.header));
        r.sql.iter().for_each(|l| text.push_str(&format!("{l}\n")));
        if let Some(expected) = &r.expected {
            text.push_str("----\n");
            expected.iter().for_each(|l| text.push_str(&format!("{l}\n")));
        }
    }
    trailer.iter().for_each(|l| text.push_str(&format!("{l}\n")));
    text
}

#[test]
fn sql_logic_tests() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/slt");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .slt files in {}", dir.display());
    let bless = std::env::var_os("WEIR_BLESS").is_some();
    let failures: Vec<String> = files.iter().flat_map(|f| check_file(f, bless)).collect();
    assert!(failures.is_empty(), "{} failing records:\n\n{}", failures.len(), failures.join("\n\n"));
}
