//! Partitioned filesystem tables (`PARTITIONED BY`): the scripts of `tests/partitioned/` (Nexmark
//! q10 as it is, and a table with NULL, empty and escaped partition values) run by the `weir`
//! binary at parallelism 1, 2 and 4, with and without checkpoints, and compared with Apache Flink
//! 2.3's runs of the same scripts: the rows read back from the files (`.flink.out`, by the
//! conformance rules) and the directories and success files written (`.flink.layout`).

use crate::common;

use std::path::Path;
use std::process::Command;

use common::conformance::compare;

/// The directories and `_`-files below `dir`, relative, sorted (part files are named by a
/// random id: left out).
fn layout(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let relative = path.strip_prefix(dir).unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                dirs.push(path);
                found.push(relative);
            } else if path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('_')) {
                found.push(relative);
            }
        }
    }
    found.sort();
    found
}

/// Runs case `case` with its directories in a new temporary folder; `checkpoints` keeps the
/// script's checkpoint interval, else the job runs without checkpoints.
fn run_case(case: &str, parallelism: usize, checkpoints: bool) -> Result<(), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let script = std::fs::read_to_string(root.join(format!("tests/partitioned/{case}.sql"))).unwrap();
    let mut script = script
        .replace("${OUT}", &out.display().to_string())
        .replace("${NEXMARK_DIR}", &out.display().to_string())
        .replace("${SUBMIT_TIME}", "run");
    if !checkpoints {
        script = script.replace("SET 'execution.checkpointing.interval' = '1s';", "");
    }
    let file = work.path().join(format!("{case}.sql"));
    std::fs::write(&file, script).unwrap();
    // Input paths are relative to the conformance cases' folder, where their data is.
    let output = Command::new(env!("CARGO_BIN_EXE_weir"))
        .current_dir(root.join("tests/conformance"))
        .arg("run")
        .arg(&file)
        .args(["--parallelism", &parallelism.to_string()])
        .args(["--set", &format!("execution.checkpointing.dir={}", work.path().join("checkpoints").display())])
        .output()
        .map_err(|e| format!("cannot start weir: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_string());
    }
    let expected = std::fs::read_to_string(root.join(format!("tests/partitioned/{case}.flink.out"))).unwrap();
    compare(case, &String::from_utf8_lossy(&output.stdout), &expected, false)?;
    let expected_layout = std::fs::read_to_string(root.join(format!("tests/partitioned/{case}.flink.layout"))).unwrap();
    let written = layout(&out);
    let wanted: Vec<&str> = expected_layout.lines().collect();
    if written != wanted {
        return Err(format!("the directories written differ from Flink's:\n{written:#?}\nFlink:\n{wanted:#?}"));
    }
    Ok(())
}

#[test]
fn partitioned_tables_are_written_and_read_as_flink_does() {
    let mut failures = Vec::new();
    for case in ["partitioned_regions", "nexmark_q10"] {
        for parallelism in [1, 2, 4] {
            for checkpoints in [true, false] {
                if let Err(e) = run_case(case, parallelism, checkpoints) {
                    failures.push(format!("{case} (parallelism {parallelism}, checkpoints {checkpoints}): {e}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runs `sql` and returns its standard error, expecting a failure.
fn refused(sql: &str) -> String {
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("job.sql");
    std::fs::write(&file, sql.replace("{dir}", &work.path().display().to_string())).unwrap();
    let output =
        Command::new(env!("CARGO_BIN_EXE_weir")).current_dir(work.path()).arg("run").arg(&file).output().unwrap();
    assert!(!output.status.success(), "the script ran: {}", String::from_utf8_lossy(&output.stdout));
    String::from_utf8_lossy(&output.stderr).to_string()
}

#[test]
fn what_flink_refuses_about_partitions_is_refused_with_its_message() {
    let err = refused(
        "CREATE TABLE t (a INT, b STRING) PARTITIONED BY (c) WITH ('connector' = 'filesystem', 'path' = '{dir}/t', 'format' = 'csv');",
    );
    assert!(
        err.contains("Partition column 'c' not defined in the table schema. Available columns: ['a', 'b']"),
        "{err}"
    );
    let err = refused(
        "CREATE TABLE t (a INT, b STRING) PARTITIONED BY (b) WITH ('connector' = 'kafka', 'topic' = 't', \
         'properties.bootstrap.servers' = 'localhost:1', 'format' = 'json');\n\
         INSERT INTO t VALUES (1, 'x');",
    );
    assert!(err.contains("is a partitioned table, but the underlying DynamicTableSink doesn't implement the SupportsPartitioning interface"), "{err}");
    let err = refused(
        "CREATE TABLE t (a INT, b STRING) PARTITIONED BY (b) WITH ('connector' = 'filesystem', 'path' = '{dir}/t', \
         'format' = 'csv', 'sink.partition-commit.policy.kind' = 'metastore,success-file');\n\
         INSERT INTO t VALUES (1, 'x');",
    );
    assert!(err.contains("Can not configure a 'metastore' partition commit policy for a file system table"), "{err}");
}

#[test]
fn print_and_blackhole_take_a_partitioned_table_as_flink_does() {
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("job.sql");
    std::fs::write(
        &file,
        "CREATE TABLE t (a INT, b STRING) PARTITIONED BY (b) WITH ('connector' = 'print');\n\
         CREATE TABLE u (a INT, b STRING) PARTITIONED BY (b) WITH ('connector' = 'blackhole');\n\
         INSERT INTO t VALUES (1, 'x');\nINSERT INTO u VALUES (1, 'x');\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_weir")).arg("run").arg(&file).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "+I[1, x]\n");
}

/// What `sql` prints as changes (`+I[…]`, sorted), or its error.
fn changes(sql: &str) -> Result<Vec<String>, String> {
    let out = common::Buffer::default();
    let runtime = weir::runtime::RuntimeConfig::default().with_parallelism(2);
    let registry = weir::connectors::ConnectorRegistry::default();
    let mut session = weir::session::Session::new(runtime, registry, Box::new(out.clone()));
    session.set("sql-client.execution.result-mode", "changelog").unwrap();
    session.execute_script(sql).map_err(|e| e.error.to_string())?;
    let text = String::from_utf8_lossy(&out.0.lock()).into_owned();
    let mut lines: Vec<String> = text.lines().filter(|l| l.starts_with("+I[")).map(str::to_string).collect();
    lines.sort();
    Ok(lines)
}

#[test]
fn a_filter_on_partition_columns_reads_only_the_partitions_it_can_pass() {
    let dir = tempfile::tempdir().unwrap();
    for (partition, text) in [("k=1/p=a", "1,x\n2,y\n"), ("k=1/p=b", "3,z\n"), ("k=2/p=a", "not a number,w\n")] {
        std::fs::create_dir_all(dir.path().join(partition)).unwrap();
        std::fs::write(dir.path().join(partition).join("data.csv"), text).unwrap();
    }
    let table = format!(
        "CREATE TABLE t (id INT, s STRING, k INT, p STRING) PARTITIONED BY (k, p) WITH (\
         'connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n",
        dir.path().display()
    );
    let query = |condition: &str| changes(&format!("{table}SELECT id, s, k, p FROM t WHERE {condition};\n"));
    // The malformed file of k=2 is never opened when the filter rules its partition out.
    assert_eq!(query("k = 1").unwrap(), ["+I[1, x, 1, a]", "+I[2, y, 1, a]", "+I[3, z, 1, b]"]);
    assert_eq!(query("k < 2 AND p = 'b'").unwrap(), ["+I[3, z, 1, b]"]);
    assert_eq!(query("k = 1 AND id > 1").unwrap(), ["+I[2, y, 1, a]", "+I[3, z, 1, b]"]);
    assert_eq!(query("k + 1 = 2 AND p <> 'a'").unwrap(), ["+I[3, z, 1, b]"]);
    assert_eq!(query("k = 3").unwrap(), Vec::<String>::new());
    // A filter that can pass k=2's rows reads its file, and fails on it as an unpruned scan does.
    for condition in ["k = 2", "k = 1 OR id > 0", "id > 0", "p = 'a'"] {
        let error = query(condition).unwrap_err();
        assert!(error.contains("not a number"), "{condition}: {error}");
    }
}
