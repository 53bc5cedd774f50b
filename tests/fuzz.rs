//! A fuzzing harness for the parser, binder and planner: scripts from the repository (the
//! conformance cases, EXPLAIN references, SQL logic tests and examples) are mutated at random —
//! tokens deleted, repeated, swapped or replaced by SQL keywords, operators, literals and
//! deeply nested or very long expressions — and planned with `Session::explain_script`, which
//! runs DDL and `SET` and plans every query without starting a job. Every case must end with a
//! result or an error: no panic, no stack overflow, and no case slower than a few seconds.
//!
//! CI runs `WEIR_FUZZ_CASES` cases (300 by default) from seed `WEIR_FUZZ_SEED` (1); a longer run:
//! `WEIR_FUZZ_CASES=100000 cargo test --release --test integration fuzz:: -- --nocapture`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use weir::connectors::ConnectorRegistry;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

/// Pieces a mutation may insert.
const PIECES: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP BY",
    "HAVING",
    "JOIN",
    "ON",
    "AS",
    "CAST(",
    "AS INT)",
    "(",
    ")",
    ",",
    ";",
    "*",
    "+",
    "-",
    "/",
    "%",
    "=",
    "<>",
    "AND",
    "OR",
    "NOT",
    "NULL",
    "TRUE",
    "'x'",
    "''",
    "0",
    "-1",
    "2147483648",
    "1e309",
    "9999999999999999999999999999999999999999",
    "DISTINCT",
    "COUNT(*)",
    "SUM(",
    "CASE WHEN",
    "THEN",
    "END",
    "INTERVAL '1' SECOND",
    "TIMESTAMP '2024-01-01 00:00:00'",
    "DECIMAL(38, 38)",
    "VARCHAR(0)",
    "ARRAY[1, 2]",
    "MAP['a', 1]",
    "ROW(1, 'a')",
    "/*+ OPTIONS('a' = 'b') */",
    "FOR SYSTEM_TIME AS OF",
    "PROCTIME()",
    "LIKE",
    "IS NULL",
    "IN (1, 2)",
    "BETWEEN 1 AND 2",
    "UNION ALL",
    "WITH",
    "VALUES (1)",
    "EXPLAIN",
    "SET",
    "RESET",
    "STATEMENT SET",
    "BEGIN",
    "INSERT INTO",
    "CREATE TABLE",
    "CREATE VIEW",
    "DROP TABLE",
    "`weird name`",
    "\"",
    "\\",
    "\u{00e9}",
    "\u{1F600}",
    "--",
    "/*",
];

/// The scripts mutations start from.
fn seeds() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["tests/conformance", "tests/explain", "examples"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "sql") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut scripts: Vec<String> = files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    // The SQL of every record of the SQL logic tests.
    let mut records: Vec<PathBuf> =
        std::fs::read_dir(root.join("tests/slt")).unwrap().map(|e| e.unwrap().path()).collect();
    // In name order, so that a seed picks the same scripts on every machine.
    records.sort();
    for path in records {
        if path.extension().is_some_and(|e| e == "slt") {
            let text = std::fs::read_to_string(&path).unwrap();
            // A record's SQL runs from its header to its `----` line or a blank line.
            let mut sql = String::new();
            let mut in_sql = false;
            for line in text.lines() {
                if line.starts_with("statement") || line.starts_with("query") {
                    in_sql = true;
                } else if line.is_empty() || line == "----" {
                    in_sql = false;
                } else if in_sql {
                    sql.push_str(line);
                    sql.push('\n');
                }
            }
            scripts.push(sql);
        }
    }
    scripts
}

/// Splits `sql` into rough tokens (words, quoted strings, single symbols) and spaces.
fn tokens(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in sql.chars() {
        if c.is_alphanumeric() || c == '_' || c == '.' {
            current.push(c);
        } else {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            out.push(c.to_string());
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// A generated expression: a long flat chain or a deep nesting.
fn generated(rng: &mut SmallRng) -> String {
    let n = rng.random_range(1..2000);
    match rng.random_range(0..4) {
        0 => vec!["1"; n].join(" + "),
        1 => (0..n).map(|i| format!("{i} = {i}")).collect::<Vec<_>>().join(" OR "),
        2 => (0..n.min(1200)).fold("1".to_string(), |e, _| format!("({e})")),
        _ => (0..n.min(300)).fold("1".to_string(), |e, _| format!("ABS({e})")),
    }
}

/// `seed` with one of its statements (the last, most often: the query the tables are for)
/// mutated one to three times, so that most cases reach the binder and the planner.
fn mutate(seed: &str, rng: &mut SmallRng) -> String {
    let mut statements: Vec<String> = seed.split_inclusive(';').map(str::to_string).collect();
    let last = statements.iter().rposition(|s| !s.trim().is_empty()).unwrap_or(0);
    let at = if rng.random_bool(0.7) { last } else { rng.random_range(0..=last) };
    if let Some(statement) = statements.get_mut(at) {
        *statement = mutate_statement(statement, rng);
    }
    statements.concat()
}

/// `statement` after one to three random mutations of its tokens.
fn mutate_statement(statement: &str, rng: &mut SmallRng) -> String {
    let mut toks = tokens(statement);
    for _ in 0..rng.random_range(1..=3) {
        if toks.is_empty() {
            toks.push("SELECT".to_string());
        }
        let at = rng.random_range(0..toks.len());
        match rng.random_range(0..7) {
            0 => {
                toks.remove(at);
            }
            1 => {
                let t = toks[at].clone();
                toks.insert(at, t);
            }
            2 => {
                let other = rng.random_range(0..toks.len());
                toks.swap(at, other);
            }
            3 => toks[at] = PIECES[rng.random_range(0..PIECES.len())].to_string(),
            4 => toks.insert(at, format!(" {} ", PIECES[rng.random_range(0..PIECES.len())])),
            5 => toks.insert(at, format!(" {} ", generated(rng))),
            _ => {
                let len = rng.random_range(0..toks.len() - at + 1).min(40);
                let piece: Vec<String> = toks[at..at + len].to_vec();
                toks.splice(at..at, piece);
            }
        }
    }
    toks.concat()
}

/// Plans `script` in a fresh session (tables in memory), on a thread of its own so that a hang
/// is caught; returns how long it took and whether the whole script planned without error.
fn plan(script: String) -> Result<(Duration, bool), String> {
    let (done, wait) = std::sync::mpsc::channel();
    let shown = script.chars().take(300).collect::<String>();
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            let started = Instant::now();
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut session =
                    Session::new(RuntimeConfig::default(), ConnectorRegistry::default(), Box::new(std::io::sink()));
                session.explain_script(&script).is_ok()
            }));
            let _ = done.send(outcome.map(|ok| (started.elapsed(), ok)).map_err(|_| "panicked".to_string()));
        })
        .map_err(|e| e.to_string())?;
    match wait.recv_timeout(Duration::from_secs(20)) {
        Ok(Ok(took)) => Ok(took),
        Ok(Err(e)) => Err(format!("{e} on:\n{shown}")),
        Err(_) => Err(format!("no answer in 20 s on:\n{shown}")),
    }
}

#[test]
fn mutated_scripts_never_crash_or_hang_the_planner() {
    let cases: usize = std::env::var("WEIR_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let seed: u64 = std::env::var("WEIR_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let scripts = seeds();
    assert!(scripts.len() > 20, "too few seed scripts: {}", scripts.len());
    let mut rng = SmallRng::seed_from_u64(seed);
    let started = Instant::now();
    let (mut slowest, mut planned) = (Duration::ZERO, 0);
    for case in 0..cases {
        let script = mutate(&scripts[rng.random_range(0..scripts.len())], &mut rng);
        let (took, ok) = plan(script).unwrap_or_else(|e| panic!("case {case} (seed {seed}): {e}"));
        slowest = slowest.max(took);
        planned += usize::from(ok);
    }
    eprintln!(
        "fuzz: {cases} cases from seed {seed} ({planned} planned, the others refused with an error) in {:.1} s, \
         slowest {:.3} s: no panic, overflow or hang",
        started.elapsed().as_secs_f64(),
        slowest.as_secs_f64()
    );
    assert!(slowest < Duration::from_secs(10), "a case took {slowest:?}");
}
