//! The function conformance suite: every call in `tests/functions/calls.txt` (written on
//! Apache Flink 2.3 by `tests/functions/generate.py`) evaluated by weir as
//! `SELECT CAST(call AS STRING) FROM (VALUES (1)) AS t(x)`: weir must print the value Flink
//! printed, or refuse (at planning or running) where Flink refused.
//!
//! Functions weir does not have yet are listed in [`NOT_YET`]; their calls run and are reported
//! but do not fail the suite. A call of a listed function that passes fails it, so the list only
//! shrinks. `WEIR_FUNCTIONS=NAME,…` runs only the calls of those functions; `WEIR_FUNCTIONS_VERBOSE=1`
//! prints every failing call.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::Buffer;
use weir::connectors::ConnectorRegistry;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

/// Functions (as the calls name them first) whose calls are not expected to pass yet:
/// `(a, b) OVERLAPS (c, d)`, and `+`/`-` of a TIME and an interval.
const NOT_YET: &[&str] = &["OVERLAPS", "+/-"];

/// Calls where weir's value differs from Flink 2.3's on purpose, and why.
const DIFFERENCES: &[(&str, &str)] = &[
    ("SECOND(DATE '2024-02-29')", "Flink reads a DATE's day number as milliseconds for units below a day (19 782 days give 19 seconds); weir gives 0"),
    ("EXTRACT(SECOND FROM DATE '2024-02-29')", "as SECOND(DATE …)"),
    ("EXTRACT(MILLISECOND FROM DATE '2024-02-29')", "as SECOND(DATE …): Flink gives 782"),
    ("EXP(42)", "Java 17's Double.toString prints 1.73927494152050099E18, more digits than the shortest text weir prints (1.739274941520501E18) for the same double"),
    ("COSH(1)", "Java's Math.cosh and Rust's f64::cosh differ in the last bit"),
    ("TYPEOF('abc')", "weir types a character literal STRING NOT NULL, Flink CHAR(3) NOT NULL"),
    ("ELT(-1, 'a', 'b', 'c')", "Flink refuses a constant index below 1 when planning; weir gives NULL, as it does for such an index read from a column"),
    ("DATE_FORMAT(TIMESTAMP '2024-02-29 13:45:30.123', '''')", "Flink fails on the pattern '' (a quoted quote); weir writes nothing"),
    ("CAST(12345.678 AS DECIMAL(5, 2))", "Flink prints an empty text for the value that does not fit; weir gives NULL, as Flink does elsewhere"),
    ("UNHEX('6')", "the byte 0x06 prints as a control character; the test's output capture drops it"),
];

/// What Flink gave for a call.
#[derive(Debug)]
enum Expected {
    Value(String),
    Refused(String),
}

struct Call {
    family: String,
    sql: String,
    expected: Expected,
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

fn calls() -> Vec<Call> {
    calls_in("calls.txt")
}

/// The calls of `tests/functions/<file>`.
fn calls_in(file: &str) -> Vec<Call> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/functions").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut family = String::new();
    let mut calls = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("# ") {
            family = name.to_string();
            continue;
        }
        let Some((sql, result)) = line.split_once('\t') else { continue };
        let result = unescape(result);
        let expected = match result.strip_prefix("!ERROR ") {
            Some(message) => Expected::Refused(message.to_string()),
            None => Expected::Value(result),
        };
        calls.push(Call { family: family.clone(), sql: sql.to_string(), expected });
    }
    calls
}

/// The function a call is of: its first word (`JSON_VALUE`, `CAST`, `TRIM`), or the operator
/// for an expression such as `a || b` or `x IS JSON`.
fn function_of(sql: &str) -> String {
    let head: String = sql.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    if !head.is_empty() && sql[head.len()..].starts_with('(') {
        return head.to_ascii_uppercase();
    }
    for operator in
        ["IS NOT JSON", "IS JSON", "||", "LIKE", "SIMILAR TO", "BETWEEN", "IN (", "OVERLAPS", "DISTINCT FROM"]
    {
        if sql.contains(operator) {
            return operator.trim_end_matches(" (").to_string();
        }
    }
    if sql.contains(" + INTERVAL") || sql.contains(" - INTERVAL") || sql.contains(" + ") || sql.contains(" - ") {
        return "+/-".into();
    }
    head.to_ascii_uppercase()
}

/// Whether two printed MAPs hold the same entries: Flink prints a map in its hash map's order,
/// weir in the order the entries came. Only flat maps (`{k=v, …}` without nesting) compare so.
fn same_map(a: &str, b: &str) -> bool {
    let entries = |m: &str| -> Option<Vec<String>> {
        let inner = m.strip_prefix('{')?.strip_suffix('}')?;
        if inner.contains(['{', '[', '(']) {
            return None;
        }
        let mut e: Vec<String> = inner.split(", ").map(str::to_string).collect();
        e.sort();
        Some(e)
    };
    entries(a).is_some_and(|x| Some(x) == entries(b))
}

/// weir's value of `call` as a string (`null` for NULL), or its error.
fn evaluate(session: &mut Session, out: &Buffer, call: &str) -> Result<String, String> {
    out.0.lock().clear();
    let sql = format!("SELECT CAST({call} AS STRING) FROM (VALUES (1)) AS t(x);");
    session.execute_script(&sql).map_err(|e| e.error.message_without_position())?;
    let printed = String::from_utf8_lossy(&out.0.lock()).into_owned();
    let printed = printed.trim_end_matches('\n');
    match printed.strip_prefix("+I[").and_then(|p| p.strip_suffix(']')) {
        Some(value) => Ok(value.to_string()),
        None => Err(format!("unexpected output: {printed}")),
    }
}

#[test]
fn builtin_functions_give_flinks_results() {
    let out = Buffer::default();
    let runtime = RuntimeConfig::default().with_parallelism(1);
    let mut session = Session::new(runtime, ConnectorRegistry::default(), Box::new(out.clone()));
    session.set("sql-client.execution.result-mode", "changelog").unwrap();
    let only: Option<BTreeSet<String>> =
        std::env::var("WEIR_FUNCTIONS").ok().map(|v| v.split(',').map(|s| s.trim().to_ascii_uppercase()).collect());
    let verbose = std::env::var("WEIR_FUNCTIONS_VERBOSE").is_ok();
    let mut failures: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut passing_not_yet: BTreeSet<String> = BTreeSet::new();
    let mut per_family: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for call in calls() {
        let function = function_of(&call.sql);
        if only.as_ref().is_some_and(|o| !o.contains(&function)) {
            continue;
        }
        let got = evaluate(&mut session, &out, &call.sql);
        if DIFFERENCES.iter().any(|(c, _)| *c == call.sql) {
            continue;
        }
        let failure = match (&call.expected, &got) {
            (Expected::Value(want), Ok(value)) if want == value || same_map(want, value) => None,
            (Expected::Refused(_), Err(_)) => None,
            (Expected::Value(want), Ok(value)) => Some(format!("{} = {value}, Flink: {want}", call.sql)),
            (Expected::Value(want), Err(error)) => Some(format!("{} refused: {error}; Flink: {want}", call.sql)),
            (Expected::Refused(message), Ok(value)) => {
                Some(format!("{} = {value}; Flink refused: {message}", call.sql))
            }
        };
        let counts = per_family.entry(call.family.clone()).or_default();
        counts.1 += 1;
        match failure {
            None => {
                counts.0 += 1;
                if NOT_YET.contains(&function.as_str()) {
                    passing_not_yet.insert(function);
                }
            }
            Some(text) => failures.entry(function).or_default().push(text),
        }
    }
    for (family, (passed, total)) in &per_family {
        println!("{family}: {passed} of {total} calls as Flink's");
    }
    let mut unexpected = Vec::new();
    for (function, texts) in &failures {
        let listed = NOT_YET.contains(&function.as_str());
        println!("{} {function}: {} calls differ", if listed { "not yet" } else { "FAIL" }, texts.len());
        if verbose || !listed {
            for t in texts {
                println!("    {t}");
            }
        }
        if !listed {
            unexpected.extend(texts.iter().cloned());
        }
        passing_not_yet.remove(function);
    }
    assert!(unexpected.is_empty(), "{} calls differ from Flink's:\n{}", unexpected.len(), unexpected.join("\n"));
    assert!(passing_not_yet.is_empty(), "functions in NOT_YET whose calls all pass: {passing_not_yet:?}");
}

/// docs/sql.md lists every built-in function of Flink 2.3 (`tests/functions/flink_functions.txt`,
/// its `SHOW FUNCTIONS`) with weir's status, and each plain `yes` is a function weir resolves.
#[test]
fn the_docs_list_every_flink_builtin_with_weirs_status() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = std::fs::read_to_string(root.join("docs/sql.md")).unwrap();
    let listed: BTreeMap<String, String> = docs
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.strip_prefix("| `")?.splitn(2, "` | ").collect();
            let [name, status] = cells.as_slice() else { return None };
            Some((name.to_string(), status.trim_end_matches(" |").to_string()))
        })
        .collect();
    let flink = std::fs::read_to_string(root.join("tests/functions/flink_functions.txt")).unwrap();
    let mut supported = 0;
    for name in flink.lines().filter(|l| !l.is_empty()) {
        let status = listed.get(name).unwrap_or_else(|| panic!("docs/sql.md does not list {name}"));
        if status == "yes" {
            let known = weir::operators::expr::functions::lookup(name).is_some()
                || weir::operators::aggregate::registry::is_aggregate(name);
            assert!(known, "docs/sql.md says weir has {name}, but weir does not resolve it");
        }
        assert!(
            status.starts_with("yes")
                || status.contains(": ")
                || status.starts_with("Table API only")
                || status.starts_with("needs "),
            "{name}: a missing function says why: {status}"
        );
        supported += usize::from(status.starts_with("yes"));
    }
    println!("{supported} of {} Flink built-ins", flink.lines().count());
}

/// The differential fuzzer: the random and edge calls of `tests/functions/fuzz_calls.txt`
/// (written on Apache Flink 2.3 by `tests/functions/fuzz.py`) evaluated by weir, each compared
/// with Flink's value or refusal. A call that differs fails the test unless
/// `tests/functions/fuzz_differences.txt` lists it under a reason; a listed call that now
/// agrees fails it too, so the list only shrinks. `WEIR_FUZZ_PRINT=1` prints every differing
/// call that is not listed, in the list's format.
#[test]
fn fuzzed_calls_give_flinks_results() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/functions");
    let listed_text = std::fs::read_to_string(root.join("fuzz_differences.txt")).unwrap_or_default();
    let listed: BTreeMap<String, String> = {
        let mut reason = String::new();
        let mut listed = BTreeMap::new();
        for line in listed_text.lines() {
            if let Some(r) = line.strip_prefix("# ") {
                reason = r.to_string();
            } else if !line.trim().is_empty() {
                listed.insert(line.to_string(), reason.clone());
            }
        }
        listed
    };
    let out = Buffer::default();
    let runtime = RuntimeConfig::default().with_parallelism(1);
    let mut session = Session::new(runtime, ConnectorRegistry::default(), Box::new(out.clone()));
    session.set("sql-client.execution.result-mode", "changelog").unwrap();
    let (mut compared, mut equal) = (0usize, 0usize);
    let mut unlisted = Vec::new();
    let mut unlisted_calls: Vec<(String, String)> = Vec::new();
    let mut agreeing_listed = Vec::new();
    let mut per_family: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for call in calls_in("fuzz_calls.txt") {
        let got = evaluate(&mut session, &out, &call.sql);
        let same = match (&call.expected, &got) {
            (Expected::Value(want), Ok(value)) => want == value || same_map(want, value),
            (Expected::Refused(_), Err(_)) => true,
            _ => false,
        };
        compared += 1;
        let counts = per_family.entry(call.family.clone()).or_default();
        counts.1 += 1;
        if same {
            equal += 1;
            counts.0 += 1;
            if listed.contains_key(&call.sql) {
                agreeing_listed.push(call.sql.clone());
            }
        } else if !listed.contains_key(&call.sql) {
            let theirs = match &call.expected {
                Expected::Value(v) => v.clone(),
                Expected::Refused(m) => format!("refused: {m}"),
            };
            let ours = got.unwrap_or_else(|e| format!("refused: {e}"));
            unlisted_calls.push((function_of(&call.sql), call.sql.clone()));
            unlisted.push(format!("{}\n    weir: {ours}\n    Flink: {theirs}", call.sql));
        }
    }
    for (family, (same, total)) in &per_family {
        println!("{family}: {same} of {total} calls as Flink's");
    }
    println!("{compared} calls compared, {equal} equal to Flink's, {} listed differences", listed.len());
    if std::env::var("WEIR_FUZZ_PRINT").is_ok() {
        for u in &unlisted {
            println!("{u}");
        }
    }
    // `WEIR_FUZZ_LIST=FILE` writes the differing calls not listed, grouped by function, in the
    // list's format (a `# FUNCTION: reason` line to fill in before each group).
    if let Ok(file) = std::env::var("WEIR_FUZZ_LIST") {
        unlisted_calls.sort();
        let mut text = String::new();
        let mut last = String::new();
        for (function, sql) in &unlisted_calls {
            if *function != last {
                text.push_str(&format!("\n# {function}: \n"));
                last = function.clone();
            }
            text.push_str(sql);
            text.push('\n');
        }
        std::fs::write(file, text).unwrap();
    }
    assert!(compared >= 20_000, "the fuzzer's file holds {compared} calls");
    assert!(
        unlisted.is_empty(),
        "{} calls differ from Flink's and are not listed:\n{}",
        unlisted.len(),
        unlisted.join("\n")
    );
    assert!(
        agreeing_listed.is_empty(),
        "listed differences that now agree (remove them):\n{}",
        agreeing_listed.join("\n")
    );
}
