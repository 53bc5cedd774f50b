//! Python functions written for PyFlink (`CREATE FUNCTION … LANGUAGE PYTHON`): a file of PyFlink
//! functions runs unchanged and prints what Flink 2.3 printed for the same script
//! (`tests/python_udf/udfs.flink.out`); general and pandas functions over random rows (NULLs,
//! non-ASCII text, several Arrow batches per chunk) equal a recomputation in Rust at several
//! parallelisms; and what goes wrong (an exception, a wrong result type, a missing module or
//! file, a failing table function, an aggregate function, another interpreter) is reported with
//! the statement and the cause.
//! A checkpointed job with a general, a pandas and a table function, writing into a table of an
//! in-memory catalog and two managed tables from one scan, killed at random moments and resumed
//! at changing parallelism, writes what an uninterrupted run and a recomputation write.
//!
//! The functions import pandas and pyarrow from the interpreter `python.executable` names:
//! `WEIR_PYARROW`, which `scripts/test` sets (`scripts/ensure-pyarrow` installs both).

use crate::common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::Buffer;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use weir::connectors::ConnectorRegistry;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

/// The Python with pandas and pyarrow: `WEIR_PYARROW`, which `scripts/test` sets.
fn python() -> String {
    std::env::var("WEIR_PYARROW").expect(
        "WEIR_PYARROW is not set: run scripts/test (or scripts/ensure-pyarrow), which installs pandas and pyarrow",
    )
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python_udf")
}

/// Flink's printed row in weir's spelling: PyFlink printed lists and maps as Python does
/// (`['a', 'b']`, `{'a': 1}`), the SQL client as Java does (`[a, b]`, `{a=1}`).
fn java_spelling(line: &str) -> String {
    line.replace("': ", "=").replace('\'', "")
}

/// `weir run udfs.sql -pyexec …` in the fixtures' directory at `parallelism`; its standard output.
fn run_script(parallelism: usize) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["run", "udfs.sql", "--format", "changelog", "-p", &parallelism.to_string()])
        .args(["-pyexec", &python()])
        .current_dir(fixtures())
        .output()
        .unwrap();
    assert!(output.status.success(), "weir failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn a_pyflink_file_runs_unchanged_and_prints_flinks_rows() {
    let flink = std::fs::read_to_string(fixtures().join("udfs.flink.out")).unwrap();
    let expected: Vec<String> = flink.lines().map(java_spelling).collect();
    let weir = run_script(1);
    assert_eq!(weir.lines().collect::<Vec<_>>(), expected);

    // At parallelism 3 the rows of each query arrive in another order, and the grouped counts
    // change in another order: the same rows, and the same final count per key.
    let weir = run_script(3);
    let (plain, changes): (Vec<&str>, Vec<&str>) =
        weir.lines().partition(|l| !l.starts_with("+I[true") && !l.starts_with("+I[false") && !l.contains('U'));
    let (flink_plain, flink_changes): (Vec<&String>, Vec<&String>) =
        expected.iter().partition(|l| !l.starts_with("+I[true") && !l.starts_with("+I[false") && !l.contains('U'));
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    assert_eq!(
        sorted(plain.iter().map(|s| s.to_string()).collect()),
        sorted(flink_plain.iter().map(|s| s.to_string()).collect())
    );
    let last = |changes: &[String], key: &str| {
        changes.iter().rev().find(|l| l[3..].starts_with(key) && !l.starts_with("-U")).cloned().unwrap()[3..]
            .to_string()
    };
    let changes: Vec<String> = changes.iter().map(|s| s.to_string()).collect();
    let flink_changes: Vec<String> = flink_changes.iter().map(|s| s.to_string()).collect();
    for key in ["true", "false"] {
        assert_eq!(last(&changes, key), last(&flink_changes, key), "final count of {key}");
    }
}

/// Runs `sql` in a session at `parallelism`, printing changes; the `+I` lines sorted, or the
/// error as a user reads it.
fn run(sql: &str, parallelism: usize) -> Result<Vec<String>, String> {
    let out = Buffer::default();
    let runtime = RuntimeConfig::default().with_parallelism(parallelism);
    let mut session = Session::new(runtime, ConnectorRegistry::default(), Box::new(out.clone()));
    session.set("sql-client.execution.result-mode", "changelog").unwrap();
    session.set("python.executable", &python()).unwrap();
    session.execute_script(sql).map_err(|e| e.in_file("script"))?;
    let text = String::from_utf8_lossy(&out.0.lock()).into_owned();
    let mut lines: Vec<String> = text.lines().filter(|l| l.starts_with("+I[")).map(str::to_string).collect();
    lines.sort();
    Ok(lines)
}

/// The functions the random test calls, a general and a pandas one for each kind of value.
const RANDOM_UDFS: &str = r#"
from decimal import Decimal
from pyflink.table import DataTypes
from pyflink.table.udf import udf

@udf(result_type=DataTypes.BIGINT())
def inc(x):
    return None if x is None else x + 1

@udf(result_type=DataTypes.STRING())
def rev(s):
    return None if s is None else s[::-1]

@udf(result_type=DataTypes.DECIMAL(12, 2))
def third(p):
    return None if p is None else p / 3

@udf(result_type=DataTypes.BIGINT(), func_type="pandas")
def triple(x):
    return x * 3

@udf(result_type=DataTypes.STRING(), func_type="pandas")
def upper(s):
    return s.str.upper()
"#;

/// One random row: id, a BIGINT, a STRING, a DECIMAL(12, 3), each but id NULL now and then.
struct RandomRow {
    id: usize,
    x: Option<i64>,
    s: Option<String>,
    p: Option<i64>,
}

fn random_rows(rng: &mut SmallRng, n: usize) -> Vec<RandomRow> {
    let words = ["apple", "pear", "ßtraße", "café", "x", "", "Zoë"];
    (0..n)
        .map(|id| RandomRow {
            id,
            x: rng.random_bool(0.9).then(|| rng.random_range(-1_000_000_000_000..1_000_000_000_000)),
            s: rng
                .random_bool(0.9)
                .then(|| {
                    let count = rng.random_range(1..4);
                    (0..count).map(|_| words[rng.random_range(0..words.len())]).collect::<Vec<_>>().join(" ")
                })
                // An empty field is NULL in the CSV the rows are written to.
                .filter(|s| !s.is_empty()),
            p: rng.random_bool(0.9).then(|| rng.random_range(-99_999_999..99_999_999)),
        })
        .collect()
}

/// A DECIMAL of `unscaled` at `scale`, as weir prints it.
fn decimal(unscaled: i64, scale: u32) -> String {
    let sign = if unscaled < 0 { "-" } else { "" };
    let digits = format!("{:0>width$}", unscaled.unsigned_abs(), width = scale as usize + 1);
    let (int, frac) = digits.split_at(digits.len() - scale as usize);
    format!("{sign}{int}.{frac}")
}

/// What the functions give for `row`, computed in Rust, as weir prints the row.
fn recomputed(row: &RandomRow) -> String {
    let or_null = |v: Option<String>| v.unwrap_or_else(|| "null".into());
    // p / 3 at scale 2, rounded half up: unscaled (scale 3) / 30.
    let third = row.p.map(|p| {
        let (q, r) = (p / 30, p % 30);
        let rounded = if r.abs() * 2 >= 30 { q + p.signum() } else { q };
        decimal(rounded, 2)
    });
    format!(
        "+I[{}, {}, {}, {}, {}, {}]",
        row.id,
        or_null(row.x.map(|x| (x + 1).to_string())),
        or_null(row.s.as_ref().map(|s| s.chars().rev().collect())),
        or_null(third),
        or_null(row.x.map(|x| (x * 3).to_string())),
        or_null(row.s.as_ref().map(|s| s.to_uppercase())),
    )
}

#[test]
fn general_and_pandas_functions_equal_a_recomputation_on_random_rows() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("random_udfs.py"), RANDOM_UDFS).unwrap();
    let mut rng = SmallRng::seed_from_u64(0x5eed_0040);
    let rows = random_rows(&mut rng, 3_000);
    let mut csv = String::new();
    for r in &rows {
        let p = r.p.map(|p| decimal(p, 3));
        let cell = |v: Option<String>| v.unwrap_or_default();
        writeln!(csv, "{},{},{},{}", r.id, cell(r.x.map(|x| x.to_string())), cell(r.s.clone()), cell(p)).unwrap();
    }
    let data = dir.path().join("rows.csv");
    std::fs::write(&data, csv).unwrap();
    let mut expected: Vec<String> = rows.iter().map(recomputed).collect();
    expected.sort();
    for (parallelism, batch) in [(1, 1000), (2, 7), (4, 1)] {
        let sql = format!(
            "SET 'python.files' = '{}';\n\
             SET 'python.fn-execution.arrow.batch.size' = '{batch}';\n\
             CREATE TEMPORARY FUNCTION inc AS 'random_udfs.inc' LANGUAGE PYTHON;\n\
             CREATE TEMPORARY FUNCTION rev AS 'random_udfs.rev' LANGUAGE PYTHON;\n\
             CREATE TEMPORARY FUNCTION third AS 'random_udfs.third' LANGUAGE PYTHON;\n\
             CREATE TEMPORARY FUNCTION triple AS 'random_udfs.triple' LANGUAGE PYTHON;\n\
             CREATE TEMPORARY FUNCTION upper_py AS 'random_udfs.upper' LANGUAGE PYTHON;\n\
             CREATE TABLE t (id INT, x BIGINT, s STRING, p DECIMAL(12, 3)) WITH ('connector' = 'filesystem', \
               'path' = '{}', 'format' = 'csv', 'csv.null-literal' = '');\n\
             SELECT id, inc(x), rev(s), third(p), triple(x), upper_py(s) FROM t;",
            dir.path().join("random_udfs.py").display(),
            data.display()
        );
        let got = run(&sql, parallelism).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got.len(), rows.len(), "parallelism {parallelism}");
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!(g, e, "parallelism {parallelism}, arrow batch size {batch}");
        }
    }
}

/// The error `sql` fails with, after the functions of `udfs.py` are on the path.
fn error_of(statements: &str) -> String {
    let sql = format!("SET 'python.files' = '{}';\n{statements}", fixtures().join("errors.py").display());
    run(&sql, 1).expect_err("the script should fail")
}

#[test]
fn what_goes_wrong_says_where_and_why() {
    // An exception in the function fails the job with the traceback.
    let err = error_of(
        "CREATE TEMPORARY FUNCTION inverse AS 'errors.inverse' LANGUAGE PYTHON;\n\
         SELECT inverse(n) FROM (VALUES (1), (0)) AS t (n);",
    );
    assert!(err.contains("Python function 'inverse' failed") && err.contains("ZeroDivisionError"), "{err}");
    assert!(err.contains("errors.py\", line"), "the traceback names the line: {err}");

    // `os._exit` would end weir with every job: it fails the job instead.
    let err = error_of(
        "CREATE TEMPORARY FUNCTION hard_exit AS 'errors.hard_exit' LANGUAGE PYTHON;\n\
         SELECT hard_exit(n) FROM (VALUES (1), (0)) AS t (n);",
    );
    assert!(err.contains("Python function 'hard_exit' failed") && err.contains("os._exit(3) was called"), "{err}");

    // A result of another type than declared.
    let err = error_of(
        "CREATE TEMPORARY FUNCTION wrong AS 'errors.wrong_type' LANGUAGE PYTHON;\n\
         SELECT wrong(1);",
    );
    assert!(err.contains("the result 'one' is not a value of the declared type BIGINT"), "{err}");

    // A module that is not there: at the statement, with Python's message.
    let err = error_of("CREATE TEMPORARY FUNCTION f AS 'no_such_module.f' LANGUAGE PYTHON;");
    assert!(err.starts_with("script:2:1:"), "{err}");
    assert!(err.contains("Instantiating python function 'no_such_module.f' failed"), "{err}");
    assert!(err.contains("ModuleNotFoundError: No module named 'no_such_module'"), "{err}");

    // An object that is not a udf.
    let err = error_of("CREATE TEMPORARY FUNCTION f AS 'errors.plain' LANGUAGE PYTHON;");
    assert!(err.contains("is not a function made with pyflink.table.udf.udf (it is a function)"), "{err}");

    // A table function that raises on a row, and one that yields rows of another shape than
    // its result types: the job fails naming the function.
    let err = error_of(
        "CREATE TEMPORARY FUNCTION split AS 'errors.split' LANGUAGE PYTHON;\n\
         SELECT s, w FROM (VALUES ('a b'), (CAST(NULL AS STRING))) AS t(s), LATERAL TABLE(split(s)) AS x(w);",
    );
    assert!(err.contains("Python function 'split' failed") && err.contains("AttributeError"), "{err}");
    let err = error_of(
        "CREATE TEMPORARY FUNCTION one_column AS 'errors.one_column' LANGUAGE PYTHON;\n\
         SELECT * FROM LATERAL TABLE(one_column('a'));",
    );
    assert!(
        err.contains("Python function 'one_column' failed") && err.contains("not a value of the declared type ROW<"),
        "{err}"
    );

    // A pandas function whose result is not a Series of the batch's length fails the job with
    // PyFlink's message: never run again row by row (where batches of one would pass).
    let err = error_of(
        "CREATE TEMPORARY FUNCTION batch_total AS 'errors.batch_total' LANGUAGE PYTHON;\n\
         SELECT batch_total(n) FROM (VALUES (1), (2), (3), (4), (5)) AS t (n);",
    );
    assert!(
        err.contains("The result length '1' of Pandas UDF 'batch_total' is not equal to the input length '5'"),
        "{err}"
    );
    let err = error_of(
        "CREATE TEMPORARY FUNCTION scalar_total AS 'errors.scalar_total' LANGUAGE PYTHON;\n\
         SELECT scalar_total(n) FROM (VALUES (1), (2)) AS t (n);",
    );
    assert!(
        err.contains("The result type of Pandas UDF 'scalar_total' must be pandas.Series or pandas.DataFrame"),
        "{err}"
    );

    // An aggregate function without `retract` over updating input fails the job naming it, as
    // Flink's does at run time; a pandas aggregate function is refused.
    let err = error_of(
        "CREATE TEMPORARY FUNCTION count_py AS 'errors.count' LANGUAGE PYTHON;\n\
         SELECT count_py(n) FROM (SELECT k, COUNT(*) AS n FROM (VALUES (1), (1), (2)) AS t (k) GROUP BY k);",
    );
    assert!(err.contains("'count_py' has no method 'retract', which its updating input needs"), "{err}");
    // An aggregate function whose get_value or create_accumulator raises fails the job with its
    // traceback: no row stands in for the result (a NULL would be a wrong result).
    let err = error_of(
        "CREATE TEMPORARY FUNCTION ratio_of_last AS 'errors.ratio_of_last' LANGUAGE PYTHON;\n\
         SELECT k, ratio_of_last(n) FROM (VALUES (1, 2), (1, 0), (2, 4)) AS t (k, n) GROUP BY k;",
    );
    assert!(err.contains("Python function 'ratio_of_last' failed") && err.contains("ZeroDivisionError"), "{err}");
    let err = error_of(
        "CREATE TEMPORARY FUNCTION no_accumulator AS 'errors.no_accumulator' LANGUAGE PYTHON;\n\
         SELECT no_accumulator(n) FROM (VALUES (1), (2)) AS t (n);",
    );
    assert!(err.contains("Python function 'no_accumulator' failed") && err.contains("no accumulator today"), "{err}");
    let err = error_of("CREATE TEMPORARY FUNCTION mean_py AS 'errors.mean_udaf' LANGUAGE PYTHON;");
    assert!(err.contains("Not supported by weir: the Python pandas aggregate function 'errors.mean_udaf'"), "{err}");

    // PyFlink's program API is not there, and says so.
    let err = error_of("CREATE TEMPORARY FUNCTION f AS 'errors_program.f' LANGUAGE PYTHON;");
    assert!(err.contains("'TableEnvironment' is not available inside weir"), "{err}");

    // A python.files entry that is not there.
    let err =
        run("SET 'python.files' = 'no/such/file.py';\nCREATE TEMPORARY FUNCTION f AS 'file.f' LANGUAGE PYTHON;", 1)
            .unwrap_err();
    assert!(err.contains("python.files: 'no/such/file.py' does not exist"), "{err}");

    // Calls with the wrong number of arguments fail at planning.
    let err = error_of(
        "CREATE TEMPORARY FUNCTION inverse AS 'errors.inverse' LANGUAGE PYTHON;\n\
         SELECT inverse(1, 2);",
    );
    assert!(err.contains("script:3:8:") && err.contains("inverse"), "{err}");
}

#[test]
fn an_interpreter_of_another_python_version_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("python9");
    std::fs::write(&fake, "#!/bin/sh\necho 9.1\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = Buffer::default();
    let mut session = Session::new(RuntimeConfig::default(), ConnectorRegistry::default(), Box::new(out));
    session.set("python.executable", &fake.display().to_string()).unwrap();
    let sql = format!(
        "SET 'python.files' = '{}';\nCREATE TEMPORARY FUNCTION f AS 'errors.inverse' LANGUAGE PYTHON;",
        fixtures().join("errors.py").display()
    );
    let err = session.execute_script(&sql).unwrap_err().in_file("script");
    assert!(err.contains("it is Python 9.1, and weir embeds Python 3."), "{err}");
}

#[test]
fn the_example_runs_with_the_interpreter_on_the_path() {
    let output = Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["run", "examples/python_udf.sql", "--format", "changelog", "-p", "2"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    // The last count of each size class; together they count the 20 orders.
    let last = last_rows(&text);
    assert!(last.keys().all(|k| k == "large" || k == "small"), "{last:?}");
    assert_eq!(last.values().map(|fields| fields[0].parse::<i64>().unwrap()).sum::<i64>(), 20, "{text}");
}

/// The last row of each key (the first field) of a printed changelog: its other fields.
fn last_rows(text: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut last = std::collections::BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("+I[") || l.starts_with("+U[")) {
        let fields: Vec<String> = line[3..line.len() - 1].split(", ").map(str::to_string).collect();
        last.insert(fields[0].clone(), fields[1..].to_vec());
    }
    last
}

/// The pandas example runs as its header says, with the interpreter `scripts/ensure-pyarrow`
/// makes: every one of its 20 orders is counted once its products' last rows are in.
#[test]
fn the_pandas_example_runs_with_the_interpreter_ensure_pyarrow_makes() {
    let output = Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["run", "examples/pandas_udf.sql", "--format", "changelog", "-p", "2", "-pyexec", &python()])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    let last: std::collections::BTreeMap<String, (i64, f64)> = last_rows(&text)
        .into_iter()
        .map(|(product, fields)| (product, (fields[0].parse().unwrap(), fields[1].parse().unwrap())))
        .collect();
    assert!(last.keys().all(|k| ["1", "2", "3"].contains(&k.as_str())), "{last:?}");
    assert_eq!(last.values().map(|(orders, _)| orders).sum::<i64>(), 20, "{text}");
    // Each order is 1 to 5 items at 1 to 10 each.
    assert!(last.values().all(|&(orders, revenue)| revenue >= orders as f64 && revenue <= 50.0 * orders as f64));
}

#[test]
fn a_pandas_function_without_pandas_is_refused_at_its_statement() {
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("bare");
    let created = Command::new("python3").args(["-m", "venv", "--without-pip"]).arg(&venv).status().unwrap();
    assert!(created.success());
    let script = dir.path().join("pandas.sql");
    std::fs::write(
        &script,
        format!(
            "SET 'python.files' = '{}';\nCREATE TEMPORARY FUNCTION total AS 'udfs.total' LANGUAGE PYTHON;\n",
            fixtures().join("udfs.py").display()
        ),
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_weir"))
        .arg("run")
        .arg(&script)
        .arg("-pyexec")
        .arg(venv.join("bin/python"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(err.contains("pandas.sql:2:1:") && err.contains("No module named 'pandas'"), "{err}");
}

/// The functions of the crash test: a general function picks the rows, a pandas one buckets
/// them, a table function gives each digit of a value.
const CRASH_UDFS: &str = r#"
from pyflink.table import DataTypes
from pyflink.table.udf import udf, udtf

@udtf(result_types=DataTypes.INT())
def digits(v):
    for c in str(v):
        yield int(c)

@udf(result_type=DataTypes.BOOLEAN())
def small(v):
    return v < 10

@udf(result_type=DataTypes.INT(), func_type="pandas")
def bucket(k):
    return k % 7
"#;

/// The checkpointed job over `dir/input.csv`, sharing one scan: the rows a general Python
/// function keeps into a CSV table of an in-memory catalog, a count and sum per bucket a pandas
/// function computes into a managed table, and a count per digit of the values a table function
/// splits into another.
fn crash_job(dir: &Path) -> String {
    let d = dir.display();
    format!(
        "SET 'table.store.path' = '{d}/store';\n\
         SET 'execution.checkpointing.interval' = '200 ms';\n\
         SET 'execution.checkpointing.dir' = '{d}/checkpoints';\n\
         SET 'python.files' = '{d}/crash_udfs.py';\n\
         CREATE TEMPORARY FUNCTION small AS 'crash_udfs.small' LANGUAGE PYTHON;\n\
         CREATE TEMPORARY FUNCTION bucket AS 'crash_udfs.bucket' LANGUAGE PYTHON;\n\
         CREATE TEMPORARY FUNCTION digits AS 'crash_udfs.digits' LANGUAGE PYTHON;\n\
         CREATE CATALOG mem WITH ('type' = 'generic_in_memory');\n\
         CREATE DATABASE mem.sales;\n\
         CREATE TABLE src (id BIGINT, k INT, v INT, ts TIMESTAMP(3)) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/input.csv', 'format' = 'csv');\n\
         CREATE TABLE mem.sales.kept (id BIGINT, v INT) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/kept', 'format' = 'csv');\n\
         CREATE TABLE IF NOT EXISTS totals (b INT, n BIGINT, s BIGINT, PRIMARY KEY (b) NOT ENFORCED);\n\
         CREATE TABLE IF NOT EXISTS per_digit (d INT, n BIGINT, PRIMARY KEY (d) NOT ENFORCED);\n\
         EXECUTE STATEMENT SET BEGIN\n\
         INSERT INTO mem.sales.kept SELECT id, v FROM src WHERE small(v);\n\
         INSERT INTO totals SELECT bucket(k), COUNT(*), SUM(CAST(v AS BIGINT)) FROM src GROUP BY bucket(k);\n\
         INSERT INTO per_digit SELECT d, COUNT(*) FROM src, LATERAL TABLE(digits(v)) AS t(d) GROUP BY d;\n\
         END;\n"
    )
}

/// What the job of `dir` wrote: the kept rows, the totals and the counts per digit, read back
/// sorted.
fn crash_results(dir: &Path) -> (Vec<String>, Vec<String>, Vec<String>) {
    let d = dir.display();
    let read = |query: &str| {
        run(
            &format!(
                "SET 'table.store.path' = '{d}/store';\nSET 'execution.runtime-mode' = 'batch';\n\
                 CREATE TABLE kept (id BIGINT, v INT) WITH ('connector' = 'filesystem', 'path' = '{d}/kept', \
                 'format' = 'csv');\n{query}\n"
            ),
            2,
        )
        .unwrap_or_else(|e| panic!("{e}"))
    };
    (read("SELECT id, v FROM kept;"), read("SELECT b, n, s FROM totals;"), read("SELECT d, n FROM per_digit;"))
}

#[test]
fn a_job_with_python_functions_killed_at_random_moments_and_resumed_writes_every_row_once() {
    const ROWS: u64 = 300_000;
    let (dir, whole) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mut kept, mut totals) = (Vec::new(), std::collections::BTreeMap::<u64, (u64, u64)>::new());
    let mut per_digit = std::collections::BTreeMap::<char, u64>::new();
    let mut csv = String::new();
    for event in common::events::events(ROWS, 1_000, 0x5eed_7e57_0040_0001) {
        csv.push_str(&event.line());
        if event.v < 10 {
            kept.push(format!("+I[{}, {}]", event.id, event.v));
        }
        let total = totals.entry(event.k % 7).or_default();
        *total = (total.0 + 1, total.1 + event.v);
        for digit in event.v.to_string().chars() {
            *per_digit.entry(digit).or_default() += 1;
        }
    }
    let per_digit: Vec<String> = per_digit.iter().map(|(d, n)| format!("+I[{d}, {n}]")).collect();
    kept.sort();
    let mut totals: Vec<String> = totals.iter().map(|(b, (n, s))| format!("+I[{b}, {n}, {s}]")).collect();
    totals.sort();
    for d in [dir.path(), whole.path()] {
        std::fs::write(d.join("input.csv"), &csv).unwrap();
        std::fs::write(d.join("crash_udfs.py"), CRASH_UDFS).unwrap();
        std::fs::write(d.join("job.sql"), crash_job(d)).unwrap();
    }
    let python = python();
    let uninterrupted = common::weir_job(whole.path(), &["-p", "2", "-pyexec", &python]);
    let resume = |parallelism: usize| {
        common::weir_job(dir.path(), &["--resume", "-p", &parallelism.to_string(), "-pyexec", &python])
    };
    common::kill_until_done(10, 0x2545_f491_4f6c_0040, 150..900, |runs| resume([2, 1, 3][runs % 3]));
    let output = uninterrupted.wait_with_output().unwrap();
    assert!(output.status.success(), "uninterrupted: {}", String::from_utf8_lossy(&output.stderr));

    let (rows, sums, digits) = crash_results(dir.path());
    let (whole_rows, whole_sums, whole_digits) = crash_results(whole.path());
    assert!(rows == whole_rows, "the kept rows differ from an uninterrupted run's");
    assert_eq!(sums, whole_sums, "the totals differ from an uninterrupted run's");
    assert_eq!(digits, whole_digits, "the counts per digit differ from an uninterrupted run's");
    assert_eq!(digits, per_digit, "the counts per digit differ from the input's");
    assert_eq!(rows.len(), kept.len(), "rows lost or written twice");
    assert!(rows == kept, "the kept rows differ from the input's");
    assert_eq!(sums, totals, "the totals differ from the input's");
}

/// A table function's generator is run only as far as its rows are taken, a chunk at a time:
/// three calls of 300 000 rows each (more than any mailbox holds) give every row once and in
/// each call's order, and a generator that fails after its first rows fails the job naming it.
#[test]
fn a_generator_is_pulled_a_chunk_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("gen.py"),
        "from pyflink.table import DataTypes\n\
         from pyflink.table.udf import udtf\n\n\
         @udtf(result_types=[DataTypes.BIGINT()])\n\
         def count_to(n):\n    for i in range(n):\n        yield i\n\n\
         @udtf(result_types=[DataTypes.BIGINT()])\n\
         def fails_after(n):\n    for i in range(n):\n        yield i\n    raise ValueError('no more')\n",
    )
    .unwrap();
    let header = format!(
        "SET 'python.files' = '{}';\n\
         SET 'execution.runtime-mode' = 'batch';\n\
         CREATE TEMPORARY FUNCTION count_to AS 'gen.count_to' LANGUAGE PYTHON;\n\
         CREATE TEMPORARY FUNCTION fails_after AS 'gen.fails_after' LANGUAGE PYTHON;\n\
         CREATE TABLE s (n INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3', \
           'fields.n.kind' = 'sequence', 'fields.n.start' = '300000', 'fields.n.end' = '300002');\n",
        dir.path().join("gen.py").display()
    );
    let counted = run(
        &format!(
            "{header}SELECT n, COUNT(*), SUM(i), MIN(i), MAX(i) FROM s, LATERAL TABLE(count_to(n)) AS t(i) GROUP BY n;"
        ),
        1,
    )
    .unwrap();
    let sum = |n: i64| n * (n - 1) / 2;
    let expected: Vec<String> =
        (300_000..=300_002).map(|n| format!("+I[{n}, {n}, {}, 0, {}]", sum(n), n - 1)).collect();
    assert_eq!(counted, expected);
    let err = run(&format!("{header}SELECT i FROM s, LATERAL TABLE(fails_after(n)) AS t(i);"), 1).unwrap_err();
    assert!(err.contains("fails_after") && err.contains("no more"), "{err}");
}

/// The final rows of a changelog printed by print sinks: per `ident> ` (the subtask suffix
/// `:N` dropped), `+I`/`+U` add a row and `-U`/`-D` take one away.
fn final_rows(printed: &str) -> Vec<String> {
    let mut rows: std::collections::BTreeMap<String, i64> = std::collections::BTreeMap::new();
    for line in printed.lines() {
        let Some((ident, change)) = line.split_once("> ") else { continue };
        let ident = ident.split(':').next().unwrap_or(ident);
        let (sign, row) = match change.get(..2) {
            Some("+I" | "+U") => (1, &change[2..]),
            Some("-U" | "-D") => (-1, &change[2..]),
            _ => continue,
        };
        *rows.entry(format!("{ident}> {row}")).or_default() += sign;
    }
    rows.into_iter().flat_map(|(row, n)| std::iter::repeat_n(row, n.max(0) as usize)).collect()
}

/// PyFlink aggregate functions (`udafs.py`: an `AggregateFunction` typed by its own methods, one
/// typed by `udaf(...)`, list accumulators updated in place, `retract` over updating input) end
/// with the rows Flink 2.3 printed (`udafs.flink.out`), at parallelism 1, 2 and 3.
#[test]
fn pyflink_aggregate_functions_end_with_flinks_rows() {
    let expected = final_rows(&std::fs::read_to_string(fixtures().join("udafs.flink.out")).unwrap());
    for parallelism in [1, 2, 3] {
        let output = Command::new(env!("CARGO_BIN_EXE_weir"))
            .args(["run", "udafs.sql", "-p", &parallelism.to_string(), "-pyexec", &python()])
            .current_dir(fixtures())
            .output()
            .unwrap();
        assert!(output.status.success(), "weir failed: {}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(final_rows(&String::from_utf8_lossy(&output.stdout)), expected, "parallelism {parallelism}");
    }
}

/// The optimized plans of `text`, one per EXPLAIN: the physical and the execution plan's lines.
fn optimized_plans(text: &str) -> Vec<Vec<String>> {
    let mut plans = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in text.lines() {
        if line.starts_with("== ") {
            if let Some(plan) = current.take() {
                plans.push(plan);
            }
            if line.starts_with("== Optimized") {
                current = Some(vec![line.to_string()]);
            }
            continue;
        }
        if let Some(plan) = current.as_mut().filter(|_| !line.trim().is_empty()) {
            plan.push(line.to_string());
        }
    }
    plans.extend(current);
    plans
}

/// EXPLAIN prints Python functions as Flink 2.3 does: a `PythonCalc` of general or pandas
/// calls over a `Calc` of the columns and the condition, a `PythonCorrelate` for a table
/// function (`explain.flink.out`).
#[test]
fn explain_prints_python_calls_as_flinks_python_nodes() {
    let output = Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["run", "explain.sql", "-pyexec", &python()])
        .current_dir(fixtures())
        .output()
        .unwrap();
    assert!(output.status.success(), "weir failed: {}", String::from_utf8_lossy(&output.stderr));
    let flink = std::fs::read_to_string(fixtures().join("explain.flink.out")).unwrap();
    let (ours, theirs) = (optimized_plans(&String::from_utf8_lossy(&output.stdout)), optimized_plans(&flink));
    assert_eq!(ours.len(), 20, "{ours:?}");
    assert_eq!(ours, theirs);
}
