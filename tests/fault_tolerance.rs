//! Checkpointed jobs of shapes that once went wrong: a statement set whose INSERTs read one
//! scan (so that two chains of the job have the same name), and a resume whose newest
//! checkpoint is damaged.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

/// Runs `script` in a session at parallelism 2 in `dir`; fails the test if it has not ended
/// after a minute (a job that never ends, not a slow machine).
fn run_ending(dir: &Path, script: &str) -> String {
    let (done, ended) = mpsc::channel();
    let script = script.replace("{dir}", &dir.display().to_string());
    std::thread::spawn(move || {
        let registry = weir::connectors::ConnectorRegistry::default();
        let config = weir::runtime::RuntimeConfig::default().with_parallelism(2);
        let out = common::Buffer::default();
        let mut session = weir::session::Session::new(config, registry, Box::new(out.clone()));
        let result = session.execute_script(&script).map_err(|e| e.error.to_string());
        let _ = done.send(result.map(|()| String::from_utf8_lossy(&out.0.lock()).to_string()));
    });
    ended.recv_timeout(Duration::from_secs(60)).expect("the job never ended").unwrap()
}

const GEN: &str = "SET 'execution.checkpointing.interval' = '50 ms';\n\
    SET 'execution.checkpointing.dir' = '{dir}/checkpoints';\n\
    CREATE TABLE gen (k INT, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5',\n\
      'fields.k.min' = '1', 'fields.k.max' = '3', 'fields.v.min' = '1', 'fields.v.max' = '3');\n";

/// Two aggregates over one scan: the job ends, with its final checkpoint, as it does without
/// checkpoints.
#[test]
fn a_checkpointed_statement_set_over_one_scan_ends() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "{GEN}CREATE TABLE t1 (k INT, c BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');\n\
         CREATE TABLE t2 (v INT, c BIGINT, PRIMARY KEY (v) NOT ENFORCED) WITH ('connector' = 'blackhole');\n\
         EXECUTE STATEMENT SET BEGIN\n\
         INSERT INTO t1 SELECT k, COUNT(*) FROM gen GROUP BY k;\n\
         INSERT INTO t2 SELECT v, COUNT(*) FROM gen GROUP BY v;\n\
         END;\n"
    );
    run_ending(dir.path(), &script);
    let jobs: Vec<_> = std::fs::read_dir(dir.path().join("checkpoints")).unwrap().flatten().collect();
    assert_eq!(jobs.len(), 1);
    let latest = weir::runtime::checkpoint::storage::latest_checkpoint_of_runs(&jobs[0].path()).unwrap();
    assert!(latest.is_some(), "the final checkpoint is kept");
}

/// A query over a UNION ALL of one table with itself ends, and counts every row twice.
#[test]
fn a_checkpointed_union_of_one_scan_with_itself_ends() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "{GEN}SET 'sql-client.execution.result-mode' = 'changelog';\n\
         SELECT SUM(n) FROM (SELECT k, COUNT(*) AS n FROM (SELECT k FROM gen UNION ALL SELECT k FROM gen) GROUP BY k);\n"
    );
    let out = run_ending(dir.path(), &script);
    assert!(out.lines().rfind(|l| l.contains("+I") || l.contains("+U")).is_some_and(|l| l.contains("10")), "{out}");
}

/// `weir run --resume` whose newest checkpoint was damaged after it was written refuses to
/// start, naming the file and the older checkpoint to name instead; named, that one restores.
#[test]
fn a_resume_from_a_damaged_newest_checkpoint_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let script = format!(
        "SET 'execution.checkpointing.interval' = '1 h';\n\
         SET 'execution.checkpointing.dir' = '{d}/checkpoints';\n\
         SET 'pipeline.name' = 'job';\n\
         CREATE TABLE gen (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');\n\
         CREATE TABLE out_t (k INT) WITH ('connector' = 'blackhole');\n\
         INSERT INTO out_t SELECT k FROM gen;\n"
    );
    std::fs::write(dir.path().join("job.sql"), script).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_weir")).arg("run").args(args).arg(dir.path().join("job.sql")).output().unwrap()
    };
    // Two finished runs, each in a directory of its own: the second resumes from the first's
    // final checkpoint and numbers its own after it.
    let job = dir.path().join("checkpoints/job");
    assert!(run(&[]).status.success());
    let runs = weir::runtime::checkpoint::storage::run_directories(&job);
    assert_eq!(runs.len(), 1, "{runs:?}");
    let kept = runs[0].join("chk-1/_metadata");
    assert!(run(&["--resume"]).status.success());
    let second = weir::runtime::checkpoint::storage::run_directories(&job).into_iter().find(|r| *r != runs[0]).unwrap();
    // The second run keeps only its own final checkpoint; the first's is put back beside it.
    let first = second.join("chk-1");
    std::fs::create_dir(&first).unwrap();
    std::fs::copy(&kept, first.join("_metadata")).unwrap();
    let newest = second.join("chk-2/_metadata");
    let mut bytes = std::fs::read(&newest).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&newest, bytes).unwrap();
    let output = run(&["--resume"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("chk-2/_metadata' cannot be read"), "{stderr}");
    assert!(stderr.contains("checksum"), "{stderr}");
    assert!(stderr.contains(&format!("'execution.state-recovery.path' = '{}'", first.display())), "{stderr}");
    let named = format!("execution.state-recovery.path={}", first.display());
    let output = run(&["--set", &named]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

/// Four files, each in event-time order: files 0 and 1 cover the first half of the time, 2
/// and 3 the second. At parallelism 2 subtask 0 reads files 0 and 2, subtask 1 files 1 and 3,
/// and no row is late. Killed there once its first checkpoint is written and resumed at
/// parallelism 1, the one subtask reads what both had left side by side: every row still
/// lands in its window (none is late), and every window is written once.
#[test]
fn a_restore_to_fewer_subtasks_drops_no_row_as_late() {
    const ROWS: u64 = 250_000;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input");
    std::fs::create_dir(&input).unwrap();
    for file in 0..4u64 {
        let half = file / 2;
        let text: String = (0..ROWS)
            .map(|i| {
                let ts = half * ROWS * 2 + i * 2 + file % 2;
                format!("{file},{ts}\n")
            })
            .collect();
        std::fs::write(input.join(format!("part-{file}.csv")), text).unwrap();
    }
    let d = dir.path().display();
    let script = format!(
        "SET 'execution.checkpointing.interval' = '100 ms';\n\
         SET 'execution.checkpointing.dir' = '{d}/checkpoints';\n\
         CREATE TABLE src (f INT, t BIGINT, ts AS TO_TIMESTAMP_LTZ(t, 3), WATERMARK FOR ts AS ts) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/input', 'format' = 'csv');\n\
         CREATE TABLE wins (window_end TIMESTAMP(3), n BIGINT) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/wins', 'format' = 'csv');\n\
         INSERT INTO wins SELECT window_end, COUNT(*)\n\
           FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end;\n"
    );
    std::fs::write(dir.path().join("job.sql"), script).unwrap();
    let weir = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_weir"))
            .arg("run")
            .args(args)
            .arg(dir.path().join("job.sql"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut first = weir(&["-p", "2"]);
    let checkpoints = dir.path().join("checkpoints");
    let has_checkpoint = || {
        std::fs::read_dir(&checkpoints).is_ok_and(|jobs| {
            jobs.flatten().any(|job| {
                weir::runtime::checkpoint::storage::latest_checkpoint_of_runs(&job.path()).is_ok_and(|c| c.is_some())
            })
        })
    };
    common::wait_until("the first checkpoint is written", || has_checkpoint() || first.try_wait().unwrap().is_some());
    assert!(first.try_wait().unwrap().is_none(), "the job ended before it could be killed");
    first.kill().unwrap();
    first.wait().unwrap();
    let output = weir(&["-p", "1", "--resume"]).wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let mut windows = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(dir.path().join("wins")).unwrap().flatten() {
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        for line in std::fs::read_to_string(entry.path()).unwrap().lines() {
            let (end, n) = line.rsplit_once(',').unwrap();
            let previous = windows.insert(end.to_string(), n.parse::<u64>().unwrap());
            assert!(previous.is_none(), "window {end} written twice");
        }
    }
    // Two files at a time over 2 * ROWS milliseconds each: a window per second of 1,000 rows.
    assert_eq!(windows.len() as u64, 4 * ROWS / 1000, "windows lost");
    let short: Vec<_> = windows.iter().filter(|(_, &n)| n != 1000).take(3).collect();
    assert!(short.is_empty(), "rows dropped as late, first in {short:?}");
}

/// Two jobs of one name running at once (two `weir run` of scripts that set the same
/// `pipeline.name`) each write their checkpoints into a directory of their own, named after
/// their job id: no checkpoint of either fails, each run numbers its checkpoints from 1, and
/// each filesystem sink commits every row. A `file://` URI names the same directory as its path.
#[test]
fn two_jobs_of_one_name_at_once_keep_their_checkpoints_apart() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    // One names the directory as a file:// URI: the same directory.
    let script = |out: &str| {
        let scheme = if out == "a" { "file://" } else { "" };
        format!(
            "SET 'execution.checkpointing.interval' = '100 ms';\n\
             SET 'execution.checkpointing.dir' = '{scheme}{d}/checkpoints';\n\
             SET 'pipeline.name' = 'job';\n\
             CREATE TABLE gen (k INT) WITH ('connector' = 'datagen', 'rows-per-second' = '400', \
               'number-of-rows' = '600', 'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '600');\n\
             CREATE TABLE out_t (k INT) WITH ('connector' = 'filesystem', 'path' = '{d}/{out}', 'format' = 'csv');\n\
             INSERT INTO out_t SELECT k FROM gen;\n"
        )
    };
    let start = |name: &str| {
        std::fs::write(dir.path().join(format!("{name}.sql")), script(name)).unwrap();
        Command::new(env!("CARGO_BIN_EXE_weir"))
            .args(["run", "--stats-json"])
            .arg(dir.path().join(format!("{name}.json")))
            .arg(dir.path().join(format!("{name}.sql")))
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (start("a"), start("b"));
    for (name, child) in [("a", a), ("b", b)] {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{name}: {}", String::from_utf8_lossy(&output.stderr));
        let stats: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(format!("{name}.json"))).unwrap()).unwrap();
        let checkpoints = &stats["jobs"][0]["checkpoints"];
        assert_eq!(checkpoints["failed"], 0, "{name}: {stats}");
        let mut rows: Vec<i64> = Vec::new();
        for file in std::fs::read_dir(dir.path().join(name)).unwrap().flatten() {
            let file_name = file.file_name().to_string_lossy().to_string();
            assert!(!file_name.starts_with('.'), "{name}: an uncommitted file is left: {file_name}");
            rows.extend(std::fs::read_to_string(file.path()).unwrap().lines().map(|l| l.parse::<i64>().unwrap()));
        }
        rows.sort_unstable();
        assert_eq!(rows, (1..=600).collect::<Vec<_>>(), "{name}: every row once");
    }
    let runs = weir::runtime::checkpoint::storage::run_directories(&dir.path().join("checkpoints/job"));
    assert_eq!(runs.len(), 2, "one directory per run: {runs:?}");
    let completed: Vec<u64> = ["a", "b"]
        .iter()
        .map(|name| {
            let stats: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.path().join(format!("{name}.json"))).unwrap())
                    .unwrap();
            stats["jobs"][0]["checkpoints"]["completed"].as_u64().unwrap()
        })
        .collect();
    for run in runs {
        let checkpoints = weir::runtime::checkpoint::storage::read_all(&run);
        let newest = checkpoints.last().expect("a final checkpoint");
        // Numbered from 1: the newest's id is the count of the run's checkpoints.
        assert!(completed.contains(&newest.id), "{}: chk-{} of {completed:?}", run.display(), newest.id);
        let chk: Vec<String> = std::fs::read_dir(&run)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| n.starts_with("chk-"))
            .collect();
        assert_eq!(chk, [format!("chk-{}", newest.id)], "{}", run.display());
    }
}

/// A checkpoint of state on disk names its runs relative to itself: the directory of a killed
/// run moved elsewhere (the original gone) restores from the moved files.
#[test]
fn a_moved_checkpoint_restores_from_its_own_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let script = "SET 'state.backend.type' = 'rocksdb';\n\
         SET 'state.backend.incremental' = 'true';\n\
         SET 'taskmanager.memory.managed.size' = '1 mb';\n\
         SET 'execution.checkpointing.interval' = '100 ms';\n\
         SET 'pipeline.name' = 'job';\n\
         CREATE TABLE gen (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '400000', \
           'rows-per-second' = '100000', 'fields.k.min' = '1', 'fields.k.max' = '50000');\n\
         CREATE TABLE out_t (k INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');\n\
         INSERT INTO out_t SELECT k, COUNT(*) FROM gen GROUP BY k;\n";
    std::fs::write(dir.path().join("job.sql"), script).unwrap();
    let run = |set: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_weir"));
        let checkpoints = format!("execution.checkpointing.dir={d}/checkpoints");
        command.args(["run", "--set", &checkpoints, "--set", set]).arg(dir.path().join("job.sql"));
        command
    };
    // Killed once a checkpoint names runs on disk.
    let mut first = run("pipeline.name=job").spawn().unwrap();
    let job = dir.path().join("checkpoints/job");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let chk = loop {
        assert!(std::time::Instant::now() < deadline, "no checkpoint with state runs");
        let latest = weir::runtime::checkpoint::storage::latest_checkpoint_of_runs(&job).ok().flatten();
        let runs = latest.as_ref().map(|chk| weir::runtime::checkpoint::storage::read_checkpoint(chk).unwrap());
        if runs.is_some_and(|c| !weir::runtime::state::runs::run_files(&[c]).is_empty()) {
            break latest.unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    first.kill().unwrap();
    first.wait().unwrap();
    let run_dir = chk.parent().unwrap().to_path_buf();
    let moved = dir.path().join("moved");
    std::fs::rename(&run_dir, &moved).unwrap();
    std::fs::remove_dir_all(dir.path().join("checkpoints")).unwrap();
    let chk = moved.join(chk.file_name().unwrap());
    let second = run(&format!("execution.state-recovery.path={}", chk.display())).output().unwrap();
    assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
}
