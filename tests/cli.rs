//! The `weir` command line.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn weir(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_weir")).current_dir(env!("CARGO_MANIFEST_DIR")).args(args).output().unwrap()
}

#[test]
fn the_quickstart_runs_and_prints_a_consistent_changelog() {
    let output = weir(&["run", "examples/quickstart.sql", "--parallelism", "2"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let mut table: BTreeMap<String, i64> = BTreeMap::new();
    for line in stdout.lines() {
        let (prefix, change) = line.split_once("> ").unwrap();
        assert!(prefix == "per_product:1" || prefix == "per_product:2", "{line}");
        let (kind, row) = change.split_at(2);
        *table.entry(row.to_string()).or_insert(0) += if kind.starts_with('+') { 1 } else { -1 };
    }
    table.retain(|_, n| *n != 0);
    let orders: i64 = table.keys().map(|row| row.split(", ").nth(1).unwrap().parse::<i64>().unwrap()).sum();
    assert_eq!(orders, 20, "the final counts add up to the 20 generated orders: {table:?}");
}

#[test]
fn options_apply_before_the_script() {
    let output = weir(&["run", "examples/quickstart.sql", "--set", "parallelism.default=1"]);
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.lines().all(|l| l.starts_with("per_product> ")), "{stdout}");
}

#[test]
fn metrics_report_rows_and_mini_batch_bundles() {
    let output = weir(&[
        "run",
        "examples/quickstart.sql",
        "--metrics",
        "--set",
        "table.exec.mini-batch.enabled=true",
        "--set",
        "table.exec.mini-batch.allow-latency=1 s",
        "--set",
        "table.exec.mini-batch.size=5",
    ]);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("job ended: "), "{stderr}");
    assert!(stderr.contains("rows in "), "{stderr}");
    let bundles = stderr.lines().find(|l| l.trim_start().starts_with("LocalGroupAggregate: ")).expect(&stderr);
    assert!(bundles.contains("mini-batch bundles"), "{stderr}");
}

#[test]
fn errors_point_at_file_line_and_column_and_fail_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.sql");
    std::fs::write(&script, "CREATE TABLE t (a INT) WITH ('connector' = 'datagen');\nSELECT b FROM t;\n").unwrap();
    let path = script.display().to_string();
    let output = weir(&["run", &path]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(output.stderr).unwrap().trim(),
        format!("{path}:2:8: SQL validation failed. Column 'b' not found in any table")
    );
    let output = weir(&["frobnicate"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("Unknown command 'frobnicate'."));
    let output = weir(&["run", "missing.sql"]);
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("missing.sql: "));
}

#[test]
fn stats_count_the_late_rows_a_window_aggregate_dropped() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let json = tempfile::tempdir().unwrap();
    let json = json.path().join("stats.json");
    let output = Command::new(env!("CARGO_BIN_EXE_weir"))
        .current_dir(&dir)
        .args(["run", "tumble_window.sql", "-p", "2", "--stats", "--stats-json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stderr).unwrap();
    // Eight rows of the file arrive after the watermark passed their minute.
    assert!(text.contains("GlobalWindowAggregate: numLateRecordsDropped 8"), "{text}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let dropped: u64 = report["jobs"][0]["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|v| v["operators"].as_array().cloned().unwrap_or_default())
        .map(|o| o["numLateRecordsDropped"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(dropped, 8);
}

#[test]
fn stats_report_the_run_as_text_and_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("count.sql");
    std::fs::write(
        &script,
        "CREATE TABLE src (a INT, b BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '50000', \
         'rows-per-second' = '1000000000', 'fields.a.min' = '1', 'fields.a.max' = '100');\n\
         CREATE TABLE snk (a INT, n BIGINT, PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'blackhole');\n\
         INSERT INTO snk SELECT a, COUNT(*) FROM src GROUP BY a;\n",
    )
    .unwrap();
    let json = dir.path().join("stats.json");
    let output = weir(&["run", script.to_str().unwrap(), "-p", "2", "--stats", "--stats-json", json.to_str().unwrap()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stderr).unwrap();
    assert!(text.contains("== weir stats =="), "{text}");
    assert!(text.contains("job 1: INSERT INTO snk"), "{text}");
    assert!(text.contains("rows in 50000"), "{text}");
    assert!(text.contains("latency source → sink: p50"), "{text}");

    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // CPU time comes in clock ticks (10 ms): a run this short may take none.
    let (cpu, user, system) =
        (report["cpu_seconds"].as_f64(), report["user_cpu_seconds"].as_f64(), report["system_cpu_seconds"].as_f64());
    let (cpu, user, system) = (cpu.unwrap(), user.unwrap(), system.unwrap());
    assert!(cpu >= 0.0 && (cpu - (user + system)).abs() < 1e-9, "{report}");
    assert!(report["peak_rss_bytes"].as_u64().unwrap() > 0);
    let job = &report["jobs"][0];
    assert_eq!(job["name"], "INSERT INTO snk");
    assert_eq!(job["rows_in"].as_u64(), Some(50_000));
    // Every input row updates its group: the sink writes one row per input row.
    assert_eq!(job["rows_out"].as_u64(), Some(50_000));
    let latency = &job["latency_micros"];
    assert_eq!(latency["count"].as_u64(), Some(50_000));
    assert!(latency["p50"].as_u64() <= latency["p99"].as_u64());
    assert!(latency["p99"].as_u64() <= latency["max"].as_u64());
    let vertices = job["vertices"].as_array().unwrap();
    assert!(vertices.iter().any(|v| v["name"].as_str().unwrap().contains("GroupAggregate")), "{vertices:?}");
    assert!(vertices.iter().all(|v| v["parallelism"].as_u64() == Some(2)));
}

/// With state on disk and incremental checkpoints, `--stats` reports what the state's stores did
/// and what the checkpoints wrote: the state runs count in both, and a checkpoint after a few
/// changes writes less than the whole state.
#[test]
fn stats_report_the_state_on_disk_and_what_each_checkpoint_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let script = counting_on_disk(dir.path());
    let json = dir.path().join("stats.json");
    let output = weir(&["run", script.to_str().unwrap(), "-p", "2", "--stats", "--stats-json", json.to_str().unwrap()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stderr).unwrap();
    assert!(text.contains("state (EmbeddedRocksDBStateBackend): at most"), "{text}");
    assert!(text.contains("checkpoints: "), "{text}");

    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let job = &report["jobs"][0];
    assert_eq!(job["state_backend"], "EmbeddedRocksDBStateBackend");
    let state = &job["state"];
    assert!(state["peak_disk_bytes"].as_u64().unwrap() > 0, "{state}");
    assert!(state["bytes_written"].as_u64().unwrap() > 0, "{state}");
    assert!(state["entries_written"].as_u64().unwrap() > 0, "{state}");
    assert!(state["cache_hits"].as_u64().unwrap() + state["cache_misses"].as_u64().unwrap() > 0, "{state}");
    let checkpoints = &job["checkpoints"];
    let completed = checkpoints["completed"].as_u64().unwrap();
    assert!(completed >= 3, "{checkpoints}");
    let (mean, largest) = (checkpoints["mean_checkpointed_bytes"].as_u64(), checkpoints["max_state_bytes"].as_u64());
    // The state's runs count in its size: 100 000 groups take hundreds of kilobytes.
    assert!(largest.unwrap() > 300_000, "{checkpoints}");
    // A checkpoint writes the runs written since the one before, not the whole state.
    assert!(mean.unwrap() > 0 && mean.unwrap() < largest.unwrap(), "{checkpoints}");

    // The same job on the heap reports no state figures.
    let heap = std::fs::read_to_string(&script).unwrap().replace("'rocksdb'", "'hashmap'");
    std::fs::write(&script, heap).unwrap();
    let output = weir(&["run", script.to_str().unwrap(), "-p", "2", "--stats-json", json.to_str().unwrap()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["jobs"][0]["state_backend"], "HashMapStateBackend");
    assert!(report["jobs"][0]["state"].is_null());
}

/// Planning reads no table data and opens no connection: a script over a PostgreSQL table whose
/// server is not there and a managed table whose data directory does not exist explains, and
/// the directory is still not there afterwards.
/// A GROUP BY of 400 000 rows over 100 000 keys with its state on disk under a 1 mb budget and
/// an incremental checkpoint every 100 ms, in `dir`.
fn counting_on_disk(dir: &Path) -> std::path::PathBuf {
    let script = dir.join("count.sql");
    std::fs::write(
        &script,
        format!(
            "SET 'state.backend.type' = 'rocksdb';\n\
             SET 'state.backend.incremental' = 'true';\n\
             SET 'taskmanager.memory.managed.size' = '1 mb';\n\
             SET 'execution.checkpointing.interval' = '100 ms';\n\
             SET 'execution.checkpointing.dir' = '{}';\n\
             CREATE TABLE src (a INT, b BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '400000', \
             'rows-per-second' = '200000', 'fields.a.min' = '1', 'fields.a.max' = '100000');\n\
             CREATE TABLE snk (a INT, n BIGINT, PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'blackhole');\n\
             INSERT INTO snk SELECT a, COUNT(*) FROM src GROUP BY a;\n",
            dir.join("checkpoints").display()
        ),
    )
    .unwrap();
    script
}

/// Each store keeps its runs open: a job on disk raises a low open-file limit to the hard
/// limit instead of failing with "Too many open files".
#[test]
fn a_job_on_disk_raises_a_low_open_file_limit() {
    let dir = tempfile::tempdir().unwrap();
    let script = counting_on_disk(dir.path());
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -Sn 64 && exec '{}' run '{}' -p 2", env!("CARGO_BIN_EXE_weir"), script.display()))
        .env("WEIR_LOG", "weir_runtime::state=debug")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("raised the open-file limit") && stderr.contains("from=64"), "{stderr}");
}

#[test]
fn explain_plans_without_reaching_any_table() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("no-such-store");
    let script = dir.path().join("plan.sql");
    std::fs::write(
        &script,
        "CREATE TABLE pg (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'jdbc', \
         'url' = 'jdbc:postgresql://127.0.0.1:1/nowhere', 'table-name' = 'pg');\n\
         CREATE TABLE src (k BIGINT, proc AS PROCTIME()) WITH ('connector' = 'datagen', 'number-of-rows' = '5');\n\
         CREATE TABLE out_pg (id BIGINT, name STRING) WITH ('connector' = 'jdbc', \
         'url' = 'jdbc:postgresql://127.0.0.1:1/nowhere', 'table-name' = 'out');\n\
         CREATE TABLE m (id BIGINT, v BIGINT, PRIMARY KEY (id) NOT ENFORCED);\n\
         EXPLAIN INSERT INTO out_pg SELECT s.k, d.name FROM src AS s JOIN pg FOR SYSTEM_TIME AS OF s.proc AS d ON s.k = d.id;\n\
         EXPLAIN SELECT * FROM m;\n",
    )
    .unwrap();
    let store_option = format!("table.store.path={}", store.display());
    let output = weir(&["explain", script.to_str().unwrap(), "--set", &store_option]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("LookupJoin(table=[default_catalog.default_database.pg]"), "{stdout}");
    assert!(stdout.contains("TableSourceScan(table=[[default_catalog, default_database, m]]"), "{stdout}");
    assert!(!store.exists(), "planning created the managed tables' directory");
}

/// How long a generated statement may take before the test fails naming it: each takes about a
/// second, so only a compile or run time growing with the statement's size reaches this.
const GENERATED_STATEMENT_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

/// Runs generated SQL `script` through `weir run` in changelog format, killed past
/// [`GENERATED_STATEMENT_LIMIT`].
fn run_generated(script: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("generated.sql");
    std::fs::write(&path, script).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_weir"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", path.to_str().unwrap(), "--format", "changelog"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (done, output) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(child.wait_with_output()));
    match output.recv_timeout(GENERATED_STATEMENT_LIMIT) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("still running after {GENERATED_STATEMENT_LIMIT:?}: {}…", &script[..script.len().min(60)]);
        }
    }
}

/// Machine-generated SQL is big: long flat chains and deep nesting plan and run (no stack
/// overflow, no time growing with the nesting), and nesting past the limit is refused at once.
#[test]
fn machine_generated_sql_runs_or_is_refused_clearly() {
    let ones = vec!["1"; 1500].join("+");
    let ors = (0..2000).map(|i| format!("a = {i}")).collect::<Vec<_>>().join(" OR ");
    let column_sum = vec!["a"; 3000].join(" + ");
    let nested = |depth: usize, inner: &str| (0..depth).fold(inner.to_string(), |e, _| format!("CAST({e} AS INT)"));
    let cases = [
        (format!("SELECT {ones};"), "+I[1500]"),
        (format!("SELECT * FROM (VALUES (1)) AS t(a) WHERE {ors};"), "+I[1]"),
        (format!("SELECT {column_sum} FROM (VALUES (1)) AS t(a);"), "+I[3000]"),
        (format!("SELECT {};", nested(48, "1")), "+I[1]"),
        (format!("SELECT {} FROM (VALUES (7)) AS t(a);", nested(900, "a")), "+I[7]"),
    ];
    for (script, expected) in cases {
        let output = run_generated(&script);
        assert!(output.status.success(), "{}: {}", &script[..60], String::from_utf8_lossy(&output.stderr));
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), expected, "{}", &script[..60]);
    }
    let too_deep = format!("SELECT {};", (0..1001).fold("1".to_string(), |e, _| format!("({e})")));
    let output = run_generated(&too_deep);
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("The statement nests more than 1000 levels of parentheses at line 1, column 1008."),
        "{error}"
    );
    // 9 000 terms plan and run; 200 000 (a 1.2 MB statement) are refused with the place, not
    // by a stack overflow of the thread that would evaluate them.
    let sum = |terms: usize| format!("SELECT {} FROM (VALUES (1)) AS t(a);", vec!["a"; terms].join(" + "));
    let output = run_generated(&sum(9000));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "+I[9000]",
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = run_generated(&sum(200_000));
    assert_eq!(output.status.code(), Some(1));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains(":1:8: SQL validation failed. The expression is more than 10000 operations deep"),
        "{error}"
    );
}

/// A SELECT prints its rows as they come, and a reader that stops reading holds the query back:
/// the process stays small however long the source runs.
#[test]
fn select_streams_its_rows_and_a_slow_reader_bounds_memory() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("endless.sql");
    std::fs::write(
        &path,
        "CREATE TABLE s (a BIGINT, b STRING) WITH ('connector' = 'datagen', 'rows-per-second' = '1000000');\n\
         SELECT * FROM s;\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["run", path.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Rows of an endless query arrive while it runs: the header and a first row.
    let stdout = child.stdout.take().unwrap();
    let (lines, first_lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut first = String::new();
        for _ in 0..4 {
            let _ = reader.read_line(&mut first);
        }
        // The reader is kept, unread, so that the pipe stays open and fills.
        let _ = lines.send((first, reader));
    });
    let (first, _reader) = first_lines.recv_timeout(std::time::Duration::from_secs(20)).unwrap_or_else(|_| {
        let _ = child.kill();
        panic!("no row of the endless query was printed in 20 s")
    });
    assert!(first.contains("| op |") && first.contains("| +I |"), "{first}");
    // Then nobody reads: the pipe fills, the sink waits, and so does the source.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let rss_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    child.kill().unwrap();
    let _ = child.wait();
    assert!(rss_kb < 100 * 1024, "the process grew to {rss_kb} kB");
}

/// A script counting `keys` distinct keys into a blackhole, written to a file in `dir`.
fn many_keys_script(dir: &std::path::Path, keys: u64) -> String {
    let path = dir.join("keys.sql");
    let script = format!(
        "CREATE TABLE src (k BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000000000',
  'number-of-rows' = '{keys}', 'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '{keys}');
CREATE TABLE out (k BIGINT, c BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*) FROM src GROUP BY k;
"
    );
    std::fs::write(&path, script).unwrap();
    path.display().to_string()
}

/// A mistyped file path is reported at the table's `'path'` option, before any job starts (it
/// was at the INSERT, once the job had failed); a job that runs in the background and fails is
/// reported at the INSERT that started it (it was at `0:0`).
#[test]
fn a_missing_path_is_reported_at_its_option_and_a_background_failure_at_its_insert() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("typo.sql");
    std::fs::write(
        &typo,
        "CREATE TABLE bids (\n  a INT\n) WITH (\n  'connector' = 'filesystem',\n  'path' = 'bidz.csv',\n  \
         'format' = 'csv'\n);\nCREATE TABLE out (a INT) WITH ('connector' = 'blackhole');\n\
         INSERT INTO out SELECT a FROM bids;\n",
    )
    .unwrap();
    let path = typo.display().to_string();
    let output = weir(&["run", &path]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with(&format!("{path}:5:3: Cannot access 'bidz.csv': ")), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");

    let background = dir.path().join("background.sql");
    std::fs::write(
        &background,
        "CREATE TABLE s (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');\n\
         CREATE TABLE out (a INT) WITH ('connector' = 'blackhole');\n\
         INSERT INTO out SELECT a / (a - a) FROM s;\n",
    )
    .unwrap();
    let path = background.display().to_string();
    let output = weir(&["run", &path]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with(&format!("{path}:3:1: Operator 'Calc'")), "{stderr}");
    assert!(stderr.contains("/ by zero"), "{stderr}");
}

/// State that outgrows `taskmanager.memory.process.size` ends the command with an error naming
/// the operator and the statement, not with the system's out-of-memory killer.
#[test]
fn a_job_past_its_memory_limit_ends_with_an_error_naming_the_operator() {
    let dir = tempfile::tempdir().unwrap();
    let path = many_keys_script(dir.path(), 1_000_000);
    let output = weir(&["run", &path, "--set", "taskmanager.memory.process.size=64mb"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with(&format!("{path}:4:1: Operator '")), "{stderr}");
    // The subtask whose step took the process past the limit is named: nearly always the
    // aggregate whose state grows, but on a busy machine the source's step may be the last
    // straw (docs/runtime.md, Memory limits).
    let named = ["Operator 'GroupAggregate", "Operator 'src'"];
    assert!(named.iter().any(|n| stderr.contains(n)) && stderr.contains("out of memory"), "{stderr}");
    assert!(stderr.contains("('taskmanager.memory.process.size')"), "{stderr}");
}

/// Under `ulimit -v` threads get stacks that fit, and running out of address space is an error.
#[test]
fn an_address_space_limit_ends_the_job_with_an_error_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let path = many_keys_script(dir.path(), 20_000_000);
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v 2000000 && exec '{}' run '{path}'", env!("CARGO_BIN_EXE_weir")))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("out of memory") && stderr.contains("ulimit -v"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `weir run x.sql | head -1`: the reader leaving ends the command quietly, with exit code 0.
#[test]
fn a_closed_standard_output_ends_the_command_quietly() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    for (name, statement) in [
        ("print.sql", "CREATE TABLE out (a INT) WITH ('connector' = 'print');\nINSERT INTO out SELECT a FROM s;\n"),
        ("select.sql", "SELECT a FROM s;\n"),
    ] {
        let path = dir.path().join(name);
        let source = "CREATE TABLE s (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '100000');\n";
        std::fs::write(&path, format!("{source}{statement}")).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_weir"))
            .args(["run", path.to_str().unwrap(), "--parallelism", "2"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        assert!(!first.is_empty(), "{name}");
        // The reader is dropped here, as `head -1` exits.
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(String::from_utf8_lossy(&output.stderr), "", "{name}");
    }
}

/// `weir sql` whose standard output closes (`| head -c 10`) ends quietly; one whose standard
/// output is full (`> /dev/full`) ends with that error; `weir run` whose standard error closes
/// before it reports an error exits 1. None panics.
#[test]
fn the_shell_and_errors_survive_closed_and_full_outputs() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let statements = "SELECT 1;\nSELECT 2;\nHELP;\nQUIT;\n";
    let shell = |stdout: Stdio| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_weir"))
            .arg("sql")
            .stdin(Stdio::piped())
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(statements.as_bytes()).unwrap();
        child
    };
    // The reader takes 10 bytes and leaves.
    let mut child = shell(Stdio::piped());
    let mut first = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let output = shell(Stdio::from(full)).wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot write to standard output: No space left on device"), "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.sql");
    std::fs::write(&script, "SELECT * FROM nope;\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["run", script.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(1), "an error, not a panic (101)");
}

#[test]
fn every_command_has_help_and_weir_has_a_version() {
    let version = weir(&["--version"]);
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), format!("weir {}", env!("CARGO_PKG_VERSION")));
    for command in ["run", "explain", "sql"] {
        let help = weir(&[command, "--help"]);
        assert!(help.status.success(), "{command}");
        let text = String::from_utf8_lossy(&help.stdout);
        assert!(text.starts_with(&format!("usage: weir {command}")), "{text}");
        assert!(text.contains("--set key=value"), "{text}");
        assert_eq!(weir(&["help", command]).stdout, help.stdout);
    }
    let usage = String::from_utf8_lossy(&weir(&["help"]).stdout).to_string();
    for command in ["weir run FILE.sql", "weir explain FILE.sql", "weir sql", "weir --version"] {
        assert!(usage.contains(command), "{usage}");
    }
}

/// `weir compat OLD.sql NEW.sql` prints a line per stateful operator and the verdict, and exits
/// 0 (fully or partially compatible), 1 (incompatible), 2 (unknown) or 3 (a script does not plan).
#[test]
fn compat_prints_verdicts_and_exits_by_them() {
    let dir = tempfile::tempdir().unwrap();
    let table = "CREATE TABLE MyTable (a INT, b BIGINT, c STRING, d INT) WITH ('connector' = 'datagen');\n\
                 CREATE TABLE out1 (a INT, x BIGINT, y STRING, z BIGINT) WITH ('connector' = 'blackhole');\n";
    let write = |name: &str, insert: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("{table}{insert}\n")).unwrap();
        path.display().to_string()
    };
    let old = write("old.sql", "INSERT INTO out1 (a, x, y) SELECT a, SUM(b), MAX(c) FROM MyTable GROUP BY a;");
    let cases = [
        ("INSERT INTO out1 SELECT a, SUM(b), MAX(c), COUNT(c) FROM MyTable GROUP BY a;", 0, "Partially compatible"),
        ("INSERT INTO out1 (a, x, y) SELECT d, SUM(b), MAX(c) FROM MyTable GROUP BY d;", 1, "Incompatible"),
        ("SET 'table.exec.state.ttl' = '1 h';\nINSERT INTO out1 (a, x, y) SELECT a, SUM(b), MAX(c) FROM MyTable GROUP BY a;", 2, "Compatibility unknown"),
        ("INSERT INTO out1 SELECT nothing FROM MyTable;", 3, "new.sql:3:"),
    ];
    for (insert, code, says) in cases {
        let new = write("new.sql", insert);
        let output = weir(&["compat", &old, &new]);
        let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert_eq!(output.status.code(), Some(code), "{insert}\n{text}");
        assert!(text.contains(says), "{insert}\n{text}");
    }
    let output = weir(&["compat", "--help"]);
    assert!(String::from_utf8_lossy(&output.stdout).contains("exit code: 0 fully or partially compatible"));
}
