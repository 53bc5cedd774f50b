//! Table functions written in Rust and registered with `Session::register_table_function`:
//! `SPLIT(s, sep)` joined to random rows in every form Flink takes (`, LATERAL TABLE`, `CROSS
//! JOIN`, `JOIN … ON TRUE`, `LEFT JOIN … ON TRUE`) and counted per word, equal to a
//! recomputation at parallelism 1, 2 and 4 with mini-batch on and off; over updating input;
//! named in EXPLAIN's Correlate; wrong calls refused when planned and a failing call failing
//! the job with the function's message.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::Buffer;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use weir::operators::expr::functions::wrong_types;
use weir::operators::expr::types::is_string;
use weir::prelude::*;

/// `SPLIT(s, sep)`: a row (word, length) per part of `s` split at `sep`; no row for a NULL.
#[derive(Debug)]
struct Split;

impl TableUdf for Split {
    fn name(&self) -> &str {
        "SPLIT"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(2)
    }

    fn result_fields(&self, args: &[&DataType]) -> Result<Vec<Field>, ExprError> {
        if !args.iter().all(|t| is_string(t)) {
            return Err(wrong_types(self.name(), args, "<CHARACTER>, <CHARACTER>"));
        }
        Ok(vec![Field::new("word", DataType::string()), Field::new("length", DataType::int())])
    }

    fn eval(&self, args: &[Value], emit: &mut dyn FnMut(&[Value])) -> Result<(), ExprError> {
        let (Some(s), Some(separator)) = (args[0].as_str(), args[1].as_str()) else { return Ok(()) };
        if separator.is_empty() {
            return Err(ExprError("SPLIT takes no empty separator".into()));
        }
        for word in s.split(separator) {
            emit(&[Value::string(word), Value::Int(word.chars().count() as i32)]);
        }
        Ok(())
    }
}

fn new_session(out: &Buffer, parallelism: usize) -> Session {
    let runtime = RuntimeConfig::default().with_parallelism(parallelism);
    let mut session = Session::new(runtime, ConnectorRegistry::default(), Box::new(out.clone()));
    session.set("sql-client.execution.result-mode", "changelog").unwrap();
    session.register_table_function("split", Arc::new(Split)).unwrap();
    session
}

/// Random rows `id, s` (`s` one to four words of a small alphabet joined by spaces, now and then
/// NULL) as CSV, and the rows.
fn random_rows(seed: u64, n: usize) -> (String, Vec<(i64, Option<String>)>) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let words = ["a", "bb", "ccc", "dd", "e", "fff"];
    let rows: Vec<(i64, Option<String>)> = (0..n as i64)
        .map(|id| {
            let s = rng.random_bool(0.9).then(|| {
                let count = rng.random_range(1..5);
                (0..count).map(|_| words[rng.random_range(0..words.len())]).collect::<Vec<_>>().join(" ")
            });
            (id, s)
        })
        .collect();
    let csv = rows.iter().map(|(id, s)| format!("{id},{}\n", s.as_deref().unwrap_or(""))).collect();
    (csv, rows)
}

fn table(dir: &std::path::Path) -> String {
    format!(
        "CREATE TABLE t (id BIGINT, s STRING) WITH ('connector' = 'filesystem', 'path' = '{}', \
         'format' = 'csv', 'csv.null-literal' = '');\n",
        dir.join("rows.csv").display()
    )
}

/// The `+I` rows printed, sorted.
fn inserted(out: &Buffer) -> Vec<String> {
    let text = String::from_utf8_lossy(&out.0.lock()).into_owned();
    let mut rows: Vec<String> = text.lines().filter(|l| l.starts_with("+I")).map(str::to_string).collect();
    rows.sort();
    rows
}

/// The joined rows `+I[id, word, length]` a recomputation gives, with `left` a NULL row for
/// each id without words (a NULL `s`).
fn expected_joined(rows: &[(i64, Option<String>)], left: bool) -> Vec<String> {
    let mut expected = Vec::new();
    for (id, s) in rows {
        match s {
            Some(s) => expected.extend(s.split(' ').map(|w| format!("+I[{id}, {w}, {}]", w.len()))),
            None if left => expected.push(format!("+I[{id}, null, null]")),
            None => {}
        }
    }
    expected.sort();
    expected
}

#[test]
fn every_join_form_of_a_rust_table_function_equals_a_recomputation() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, rows) = random_rows(0x7ab1_0040, 1_500);
    std::fs::write(dir.path().join("rows.csv"), csv).unwrap();
    let inner = expected_joined(&rows, false);
    let forms = [
        ("SELECT id, word, length FROM t, LATERAL TABLE(split(s, ' ')) AS w(word, length);", &inner),
        ("SELECT id, word, length FROM t CROSS JOIN LATERAL TABLE(SPLIT(s, ' ')) AS w(word, length);", &inner),
        ("SELECT id, w.word, w.length FROM t JOIN LATERAL TABLE(split(s, ' ')) AS w ON TRUE;", &inner),
    ];
    let left = expected_joined(&rows, true);
    for parallelism in [1, 2, 4] {
        for (query, expected) in forms {
            let out = Buffer::default();
            let mut session = new_session(&out, parallelism);
            session
                .execute_script(&format!("{}{query}", table(dir.path())))
                .unwrap_or_else(|e| panic!("{}", e.in_file("s")));
            assert_eq!(&inserted(&out), expected, "{query} at parallelism {parallelism}");
        }
        let out = Buffer::default();
        let mut session = new_session(&out, parallelism);
        let query = "SELECT id, word, length FROM t LEFT JOIN LATERAL TABLE(split(s, ' ')) AS w(word, length) ON TRUE;";
        session
            .execute_script(&format!("{}{query}", table(dir.path())))
            .unwrap_or_else(|e| panic!("{}", e.in_file("s")));
        assert_eq!(inserted(&out), left, "{query} at parallelism {parallelism}");
    }
}

#[test]
fn a_word_count_over_a_rust_table_function_equals_a_recomputation() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, rows) = random_rows(0x7ab1_0041, 3_000);
    std::fs::write(dir.path().join("rows.csv"), csv).unwrap();
    let mut counts: BTreeMap<String, i64> = BTreeMap::new();
    for (id, s) in &rows {
        for word in s.iter().flat_map(|s| s.split(' ')) {
            if id % 3 != 0 {
                *counts.entry(word.to_string()).or_default() += 1;
            }
        }
    }
    let expected: BTreeMap<String, String> = counts.into_iter().map(|(w, n)| (w, n.to_string())).collect();
    for parallelism in [1, 2, 4] {
        for mini_batch in [false, true] {
            let out = Buffer::default();
            let mut session = new_session(&out, parallelism);
            let settings = if mini_batch { common::MINI_BATCH } else { "" };
            // The filter reads only `t`'s columns: it runs below the Correlate.
            let script = format!(
                "{settings}{}SELECT word, COUNT(*) FROM t, LATERAL TABLE(split(s, ' ')) AS w(word, length) \
                 WHERE MOD(id, 3) <> 0 GROUP BY word;",
                table(dir.path())
            );
            session.execute_script(&script).unwrap_or_else(|e| panic!("{}", e.in_file("script")));
            assert_eq!(out.final_rows(), expected, "parallelism {parallelism}, mini-batch {mini_batch}");
        }
    }
}

#[test]
fn a_rust_table_function_over_updating_input_takes_back_the_rows_of_retracted_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, rows) = random_rows(0x7ab1_0042, 800);
    std::fs::write(dir.path().join("rows.csv"), csv).unwrap();
    // The newest sentence per id modulo 10, split into words, counted per word: each change of
    // a key's sentence retracts the words of the one before.
    let mut newest: BTreeMap<i64, Option<String>> = BTreeMap::new();
    for (id, s) in &rows {
        newest.insert(id % 10, s.clone());
    }
    let mut counts: BTreeMap<String, i64> = BTreeMap::new();
    for word in newest.values().flatten().flat_map(|s| s.split(' ')) {
        *counts.entry(word.to_string()).or_default() += 1;
    }
    let expected: BTreeMap<String, String> = counts.into_iter().map(|(w, n)| (w, n.to_string())).collect();
    let out = Buffer::default();
    let mut session = new_session(&out, 2);
    let script = format!(
        "{}SELECT word, COUNT(*) FROM (SELECT k, LAST_VALUE(s) AS s FROM (SELECT MOD(id, 10) AS k, s FROM t) \
         GROUP BY k) AS latest, LATERAL TABLE(split(s, ' ')) AS w(word, length) GROUP BY word;",
        table(dir.path())
    );
    session.execute_script(&script).unwrap_or_else(|e| panic!("{}", e.in_file("script")));
    assert_eq!(out.final_rows(), expected);
}

#[test]
fn a_rust_table_function_shows_in_explain_and_runs_on_constants() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rows.csv"), "").unwrap();
    let out = Buffer::default();
    let mut session = new_session(&out, 1);
    let script = format!(
        "{}EXPLAIN SELECT id, word FROM t, LATERAL TABLE(split(s, ',')) AS w(word, length);",
        table(dir.path())
    );
    session.execute_script(&script).unwrap();
    let text = String::from_utf8_lossy(&out.0.lock()).into_owned();
    assert!(
        text.contains(
            "Correlate(invocation=[SPLIT($cor0.s, _UTF-16LE',')], correlate=[table(SPLIT($cor0.s, _UTF-16LE','))], \
             select=[id,s,word,length], rowType=[RecordType(BIGINT id, VARCHAR(2147483647) s, \
             VARCHAR(2147483647) word, INTEGER length)], joinType=[INNER])"
        ),
        "{text}"
    );
    assert!(text.contains("LogicalCorrelate(correlation=[$cor0], joinType=[inner], requiredColumns=[{1}])"), "{text}");

    out.0.lock().clear();
    session.execute_script("SELECT * FROM TABLE(split('x-yy', '-'));").unwrap();
    assert_eq!(inserted(&out), ["+I[x, 1]", "+I[yy, 2]"]);
    out.0.lock().clear();
    session.execute_script("SELECT w, n FROM LATERAL TABLE(split('p', '-')) AS t(w, n);").unwrap();
    assert_eq!(inserted(&out), ["+I[p, 1]"]);
}

#[test]
fn wrong_calls_are_refused_when_planned_and_a_failing_call_fails_the_job() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rows.csv"), "1,a b\n").unwrap();
    let out = Buffer::default();
    let mut session = new_session(&out, 1);
    session.execute_script(&table(dir.path())).unwrap();
    let refused = |session: &mut Session, query: &str| session.execute_script(query).unwrap_err().in_file("s");
    let unknown = refused(&mut session, "SELECT * FROM t, LATERAL TABLE(nope(s));");
    assert!(unknown.contains("No match found for function signature nope(<CHARACTER>)"), "{unknown}");
    let count = refused(&mut session, "SELECT * FROM t, LATERAL TABLE(split(s));");
    assert!(count.contains("Invalid number of arguments to function 'split'. Was expecting 2 arguments"), "{count}");
    let types = refused(&mut session, "SELECT * FROM t, LATERAL TABLE(split(id, ' '));");
    assert!(types.contains("Cannot apply 'SPLIT' to arguments of type 'SPLIT(<BIGINT>, "), "{types}");
    let aliases = refused(&mut session, "SELECT * FROM t, LATERAL TABLE(split(s, ' ')) AS w(word);");
    assert!(
        aliases.contains("List of column aliases must have same degree as table; table has 2 columns"),
        "{aliases}"
    );
    let condition =
        refused(&mut session, "SELECT * FROM t LEFT JOIN LATERAL TABLE(split(s, ' ')) AS w ON w.word = 'a';");
    assert!(condition.contains("LATERAL TABLE joined otherwise than by CROSS JOIN or ON TRUE"), "{condition}");
    let twice = session.register_table_function("Split", Arc::new(Split)).unwrap_err();
    assert_eq!(twice.to_string(), "Could not register function: function 'Split' already exists");

    let failing = refused(&mut session, "SELECT * FROM t, LATERAL TABLE(split(s, ''));");
    assert!(failing.contains("Table function 'SPLIT' failed: SPLIT takes no empty separator"), "{failing}");
}
