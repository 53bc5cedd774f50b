//! `weir sql` driven through a pseudo-terminal: a user types statements and reads the screen.

use rexpect::session::spawn_command;
use std::process::Command;

#[test]
fn the_shell_runs_statements_typed_at_its_prompt() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_weir"));
    command.args(["sql", "--parallelism", "1"]);
    let mut shell = spawn_command(command, Some(30_000)).unwrap();
    shell.exp_string("weir> ").unwrap();
    shell.send_line("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3',").unwrap();
    shell.exp_string("-> ").unwrap();
    shell.send_line("'fields.a.kind' = 'sequence', 'fields.a.start' = '1', 'fields.a.end' = '3');").unwrap();
    shell.exp_string("[INFO] Execute statement succeeded.").unwrap();
    shell.send_line("SELECT SUM(a) AS total FROM t;").unwrap();
    shell.exp_string("| +U |           6 |").unwrap();
    shell.exp_string("Received a total of 5 rows").unwrap();
    shell.send_line("SELECT nope FROM t;").unwrap();
    // Flink's message, which names the position; other errors start with theirs.
    shell.exp_string("SQL validation failed. From line 1, column 8: Column 'nope' not found in any table").unwrap();
    shell.send_line("SELECT a FROM t WHERE;").unwrap();
    shell.exp_string("At line 1, column 22: SQL parse failed. Expected: an expression, found: ;").unwrap();
    shell.send_line("HELP;").unwrap();
    shell.exp_string("QUIT;                        leave").unwrap();
    shell.send_line("QUIT;").unwrap();
    shell.exp_eof().unwrap();
}

/// A SELECT on an endless source prints rows as they come; Ctrl-C cancels it and the prompt
/// comes back for the next statement, as in Flink's SQL client.
#[test]
fn ctrl_c_cancels_a_running_query_and_the_shell_goes_on() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_weir"));
    command.args(["sql", "--parallelism", "1"]);
    let mut shell = spawn_command(command, Some(30_000)).unwrap();
    shell.exp_string("weir> ").unwrap();
    shell.send_line("CREATE TABLE s (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '20');").unwrap();
    shell.exp_string("[INFO] Execute statement succeeded.").unwrap();
    shell.send_line("SELECT a FROM s;").unwrap();
    shell.exp_string("| +I |").unwrap();
    shell.send_control('c').unwrap();
    shell.exp_string("Query terminated, received a total of").unwrap();
    shell.exp_string("[INFO] The statement was cancelled.").unwrap();
    shell.exp_string("weir> ").unwrap();
    shell.send_line("SELECT 1 + 1 AS two;").unwrap();
    shell.exp_string("| +I |           2 |").unwrap();
    shell.send_line("QUIT;").unwrap();
    shell.exp_eof().unwrap();
}

#[test]
fn ctrl_c_stops_an_unbounded_job_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("endless.sql");
    std::fs::write(
        &script,
        "CREATE TABLE src (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');\n\
         CREATE TABLE out (a INT) WITH ('connector' = 'print', 'print-identifier' = 'out');\n\
         INSERT INTO out SELECT a FROM src;\n",
    )
    .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_weir"));
    command.args(["run", script.to_str().unwrap(), "--parallelism", "1"]);
    let mut run = spawn_command(command, Some(30_000)).unwrap();
    run.exp_string("out> +I[").unwrap();
    run.send_control('c').unwrap();
    run.exp_string("Stopping the running jobs...").unwrap();
    run.exp_eof().unwrap();
    match run.process.wait().unwrap() {
        rexpect::process::wait::WaitStatus::Exited(_, code) => assert_eq!(code, 0),
        other => panic!("weir run ended with {other:?}"),
    }
}

/// An INSERT into an endless job returns the prompt with the job's id, as Flink's client does;
/// `SHOW JOBS` lists it running, `STOP JOB … WITH SAVEPOINT` stops it and prints where the
/// savepoint went, and a query cancelled with Ctrl-C leaves the background job running.
#[test]
fn an_unbounded_insert_returns_the_prompt_and_stop_job_takes_a_savepoint() {
    let dir = tempfile::tempdir().unwrap();
    let savepoints = dir.path().join("savepoints");
    let mut command = Command::new(env!("CARGO_BIN_EXE_weir"));
    command.current_dir(dir.path()).args(["sql", "--parallelism", "1"]);
    command.args(["--set", "execution.checkpointing.interval=200ms"]);
    command.args(["--set", &format!("execution.checkpointing.savepoint-dir={}", savepoints.display())]);
    let mut shell = spawn_command(command, Some(30_000)).unwrap();
    shell.exp_string("weir> ").unwrap();
    shell.send_line("CREATE TABLE s (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '100');").unwrap();
    shell.exp_string("[INFO] Execute statement succeeded.").unwrap();
    shell.send_line("CREATE TABLE t (a INT) WITH ('connector' = 'blackhole');").unwrap();
    shell.exp_string("[INFO] Execute statement succeeded.").unwrap();
    shell.send_line("INSERT INTO t SELECT a FROM s;").unwrap();
    shell.exp_string("[INFO] Submitting SQL update statement to the cluster...").unwrap();
    shell.exp_string("[INFO] SQL update statement has been successfully submitted to the cluster:").unwrap();
    let (_, id) = shell.exp_regex("Job ID: [0-9a-f]{32}").unwrap();
    let id = id.trim_start_matches("Job ID: ").to_string();
    shell.exp_string("weir> ").unwrap();

    // A query, cancelled with Ctrl-C, while the job runs on.
    shell.send_line("SELECT a FROM s;").unwrap();
    shell.exp_string("| +I |").unwrap();
    shell.send_control('c').unwrap();
    shell.exp_string("[INFO] The statement was cancelled.").unwrap();
    shell.exp_string("weir> ").unwrap();

    shell.send_line("SHOW JOBS;").unwrap();
    shell.exp_string("job id").unwrap();
    // Cells are right-aligned in their columns, as Flink's client prints them.
    let line = |status: &str| format!(r"\| {id} \| insert-into_default_catalog\.default_database\.t \| +{status} \|");
    shell.exp_regex(&line("RUNNING")).unwrap();
    shell.send_line(&format!("DESCRIBE JOB '{id}';")).unwrap();
    shell.exp_regex(&line("RUNNING")).unwrap();
    shell.exp_string("1 row in set").unwrap();

    shell.send_line(&format!("STOP JOB '{id}' WITH SAVEPOINT;")).unwrap();
    shell.exp_string("savepoint path").unwrap();
    let (_, path) = shell.exp_regex(r"/\S*savepoint-\d+-\S+").unwrap();
    assert!(std::path::Path::new(&path).exists(), "no savepoint at {path}");
    assert!(path.starts_with(&savepoints.display().to_string()));
    shell.exp_string("weir> ").unwrap();
    shell.send_line("SHOW JOBS;").unwrap();
    // Stopped with a savepoint, the job ends FINISHED, as in Flink.
    shell.exp_regex(&line("FINISHED")).unwrap();
    shell.send_line(&format!("STOP JOB '{id}';")).unwrap();
    shell.exp_string("the job is FINISHED").unwrap();
    shell.send_line("STOP JOB 'nope' WITH DRAIN;").unwrap();
    shell.exp_string("Could not find job 'nope' in this session.").unwrap();
    shell.send_line("QUIT;").unwrap();
    shell.exp_eof().unwrap();
}

/// `weir sql -i INIT -f FILE` runs the init file, then the file, as Flink's client does.
#[test]
fn sql_dash_f_runs_a_file_after_its_init_file() {
    let dir = tempfile::tempdir().unwrap();
    let init = dir.path().join("init.sql");
    let file = dir.path().join("file.sql");
    std::fs::write(&init, "CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '4', 'fields.a.kind' = 'sequence', 'fields.a.start' = '1', 'fields.a.end' = '4');\n").unwrap();
    std::fs::write(&file, "SELECT SUM(a) AS total FROM t;\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["sql", "-p", "1", "-i", init.to_str().unwrap(), "-f", file.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("| +U |          10 |"), "{stdout}");
}

/// `weir run` on a terminal draws its progress (for files, bytes read of their total) and ends
/// with a summary line; with its output not a terminal it prints the summary line alone.
#[test]
fn weir_run_shows_progress_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("numbers.csv");
    let text: String = (0..400_000).map(|i| format!("{},{}\n", i % 100, i)).collect();
    std::fs::write(&data, text).unwrap();
    let script = dir.path().join("sum.sql");
    std::fs::write(
        &script,
        format!(
            "CREATE TABLE src (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
             CREATE TABLE out (k INT, total BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');\n\
             INSERT INTO out SELECT k, SUM(v) FROM src GROUP BY k;\n",
            data.display()
        ),
    )
    .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_weir"));
    command.args(["run", script.to_str().unwrap(), "-p", "1"]);
    let mut run = spawn_command(command, Some(60_000)).unwrap();
    let (_, summary) = run.exp_regex(r"Done in [0-9.]+ s: wrote [0-9,]+ rows to out\.").unwrap();
    assert!(summary.contains("wrote 400,000 rows to out"), "{summary}");
    run.exp_eof().unwrap();

    let piped =
        Command::new(env!("CARGO_BIN_EXE_weir")).args(["run", script.to_str().unwrap(), "-p", "1"]).output().unwrap();
    assert!(piped.status.success());
    let stderr = String::from_utf8_lossy(&piped.stderr);
    let summary = regex::Regex::new(r"^Done in [0-9.]+ s: wrote 400,000 rows to out\.\n$").unwrap();
    assert!(summary.is_match(&stderr), "the summary alone when not on a terminal: {stderr:?}");
}

/// A job whose Python function takes minutes per row: `STOP JOB … WITH SAVEPOINT` waits for a
/// savepoint the job cannot take until the call returns (saying so after a second), and Ctrl-C
/// ends the wait at once with a message (the job is cancelled in the background); `QUIT` then says it is cancelling the
/// jobs, and Ctrl-C leaves without waiting for the stuck call.
#[test]
fn ctrl_c_interrupts_a_stop_and_a_quit_that_wait_on_a_stuck_job() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("slow.py"),
        "import time\n\
         from pyflink.table import DataTypes\n\
         from pyflink.table.udf import udf\n\n\
         @udf(result_type=DataTypes.INT())\n\
         def slow(a):\n    time.sleep(600)\n    return a\n",
    )
    .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_weir"));
    command.current_dir(dir.path()).args(["sql", "--parallelism", "1"]);
    command.args(["--set", "execution.checkpointing.interval=1h"]);
    command.args(["--set", &format!("execution.checkpointing.savepoint-dir={}", dir.path().join("sp").display())]);
    command.args(["--set", "python.files=slow.py"]);
    let mut shell = spawn_command(command, Some(30_000)).unwrap();
    shell.exp_string("weir> ").unwrap();
    for statement in [
        "CREATE TEMPORARY FUNCTION slow AS 'slow.slow' LANGUAGE PYTHON;",
        "CREATE TABLE s (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '1');",
        "CREATE TABLE t (a INT) WITH ('connector' = 'blackhole');",
    ] {
        shell.send_line(statement).unwrap();
        shell.exp_string("[INFO] Execute statement succeeded.").unwrap();
    }
    shell.send_line("INSERT INTO t SELECT slow(a) FROM s;").unwrap();
    let (_, id) = shell.exp_regex("Job ID: [0-9a-f]{32}").unwrap();
    let id = id.trim_start_matches("Job ID: ").to_string();
    shell.exp_string("weir> ").unwrap();
    // The first row is in the function by now, or will be while the stop waits; the wait says
    // so after a second, and Ctrl-C then ends it.
    shell.send_line(&format!("STOP JOB '{id}' WITH SAVEPOINT;")).unwrap();
    shell.exp_string(&format!("Waiting for the savepoint of job {id}... (Ctrl-C to stop waiting")).unwrap();
    shell.send_control('c').unwrap();
    shell.exp_string(&format!("Stopping job {id} was interrupted")).unwrap();
    shell.exp_string("[INFO] The statement was cancelled.").unwrap();
    shell.exp_string("weir> ").unwrap();
    shell.send_line("QUIT;").unwrap();
    shell.exp_string("Cancelling the session's jobs... (Ctrl-C to leave without waiting)").unwrap();
    shell.send_control('c').unwrap();
    shell.exp_string("Left without waiting for the jobs to end.").unwrap();
    shell.exp_eof().unwrap();
}
