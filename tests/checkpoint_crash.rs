//! `weir run` killed (`kill -9`) at random moments while a checkpointed job reads a file of a
//! million rows, aggregates them by key into managed tables and writes the filtered rows to a
//! filesystem sink; restarted with `--resume` each time, until it finishes. Then the visible
//! part files hold exactly the rows of an uninterrupted run of the same job (no loss, no
//! duplicate) and the managed tables exactly its aggregates, and all equal what is recomputed
//! here from the input (each restart runs at another
//! parallelism than the run before): `totals` from a GROUP BY (its
//! state restored each time), `sums` merged by the table's aggregation merge engine (a batch
//! committed twice would show in its sums), and the rows a regular join of the input with a
//! table of names writes to a second filesystem sink (its state restored each time), and a
//! table partitioned by `k % 7` whose files roll every 16 KB: each partition holds exactly its
//! rows and is committed (`_SUCCESS`).
//!
//! Also: SIGTERM stops the job with a savepoint, from which the job restores; a damaged
//! savepoint is refused, naming what is wrong, and nothing is written.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::events::{events, OnTimeWindows, EPOCH};
use weir::runtime::checkpoint::storage::{read_all, read_latest, run_directories};
use weir::runtime::checkpoint::CompletedCheckpoint;
use weir::runtime::state::runs::run_files;

const ROWS: u64 = 1_000_000;
const KEYS: u64 = 1_000;
const KILLS: usize = 20;

/// What the input makes: the rows the sink keeps (`v < 10`), the aggregates per key (count,
/// sum of v), and per one-second window of event time the count and sum of its rows that are
/// not late (watermark: the largest time so far less 1 s).
struct Expected {
    kept: Vec<String>,
    totals: BTreeMap<u64, (u64, u64)>,
    windows: BTreeMap<u64, (u64, u64)>,
}

/// The input, `id,k,v,ts` per line, from a fixed seed, and what it makes.
fn write_input(path: &Path, rows: u64) -> Expected {
    let mut text = String::with_capacity(rows as usize * 40);
    let mut kept = Vec::new();
    let mut totals: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    let mut windows = OnTimeWindows::default();
    for event in events(rows, KEYS, 0x9e37_79b9_7f4a_7c15) {
        text.push_str(&event.line());
        windows.add(&event);
        if event.v < 10 {
            kept.push(event.fields());
        }
        let total = totals.entry(event.k).or_default();
        total.0 += 1;
        total.1 += event.v;
    }
    std::fs::write(path, text).unwrap();
    kept.sort();
    Expected { kept, totals, windows: windows.windows }
}

fn script(dir: &Path) -> String {
    script_with(dir, "")
}

/// The job of [`script`] with the `SET` statements `settings` first.
fn script_with(dir: &Path, settings: &str) -> String {
    let d = dir.display();
    format!(
        "{settings}SET 'table.store.path' = '{d}/store';\n\
         SET 'pipeline.auto-watermark-interval' = '0';\n\
         SET 'execution.checkpointing.interval' = '200 ms';\n\
         SET 'execution.checkpointing.dir' = '{d}/checkpoints';\n\
         CREATE TABLE src (id BIGINT, k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/input.csv', 'format' = 'csv');\n\
         CREATE TABLE wins (window_end TIMESTAMP(3), n BIGINT, s BIGINT) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/wins', 'format' = 'csv');\n\
         CREATE TABLE keyed_wins (k INT, window_end TIMESTAMP(3), n BIGINT, s BIGINT) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/keyed_wins', 'format' = 'csv');\n\
         CREATE TABLE kept (id BIGINT, k INT, v INT) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/kept', 'format' = 'csv');\n\
         CREATE TABLE names (k INT, name STRING) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/names.csv', 'format' = 'csv');\n\
         CREATE TABLE joined (id BIGINT, name STRING) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/joined', 'format' = 'csv');\n\
         CREATE TABLE parts (id BIGINT, v INT, bucket INT) PARTITIONED BY (bucket) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/parts', 'format' = 'csv',\n\
           'sink.rolling-policy.file-size' = '16kb', 'sink.partition-commit.policy.kind' = 'success-file');\n\
         CREATE TABLE IF NOT EXISTS totals (k INT, n BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED);\n\
         CREATE TABLE IF NOT EXISTS sums (k INT, n BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH (\n\
           'table.merge-engine' = 'aggregation', 'fields.n.agg' = 'sum', 'fields.s.agg' = 'sum');\n\
         EXECUTE STATEMENT SET BEGIN\n\
         INSERT INTO totals SELECT k, COUNT(*), SUM(CAST(v AS BIGINT)) FROM src GROUP BY k;\n\
         INSERT INTO sums SELECT k, CAST(1 AS BIGINT), CAST(v AS BIGINT) FROM src;\n\
         INSERT INTO kept SELECT id, k, v FROM src WHERE v < 10;\n\
         INSERT INTO parts SELECT id, v, k % 7 FROM src WHERE v < 10;\n\
         INSERT INTO joined SELECT s.id, n.name FROM src AS s JOIN names AS n ON s.k = n.k WHERE s.v < 10;\n\
         INSERT INTO wins SELECT window_end, COUNT(*), SUM(CAST(v AS BIGINT))\n\
           FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end;\n\
         INSERT INTO keyed_wins SELECT k, window_end, COUNT(*), SUM(CAST(v AS BIGINT))\n\
           FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end;\n\
         END;\n"
    )
}

/// The rows of a partitioned sink's visible files, each as `<partition directory>/<line>`, sorted.
fn partitioned_rows(dir: &Path) -> Vec<String> {
    let mut rows = Vec::new();
    let Ok(partitions) = std::fs::read_dir(dir) else { return rows };
    for partition in partitions.map(Result::unwrap) {
        let name = partition.file_name().to_string_lossy().to_string();
        rows.extend(common::sink_rows(&partition.path()).into_iter().map(|line| format!("{name}/{line}")));
    }
    rows.sort();
    rows
}

/// What the partitioned sink holds of the kept rows `id,k,v`: `bucket=<k % 7>/id,v`, sorted.
fn parts_of(kept: &[String]) -> Vec<String> {
    let mut rows: Vec<String> = kept
        .iter()
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            let k: u64 = fields[1].parse().unwrap();
            format!("bucket={}/{},{}", k % 7, fields[0], fields[2])
        })
        .collect();
    rows.sort();
    rows
}

/// The count and sum ending each window sink row (`…,n,s`).
fn window_counts(rows: &[String]) -> Vec<(u64, u64)> {
    rows.iter()
        .map(|line| {
            let fields: Vec<&str> = line.rsplitn(3, ',').collect();
            (fields[1].parse().unwrap(), fields[0].parse().unwrap())
        })
        .collect()
}

/// A name for each even key: `k,name-k`.
fn write_names(path: &Path) {
    let text: String = (0..KEYS).step_by(2).map(|k| format!("{k},name-{k}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// What the join writes of the kept rows `id,k,v`: those of even keys, with their names, sorted.
fn joined_of(kept: &[String]) -> Vec<String> {
    let mut joined: Vec<String> = kept
        .iter()
        .filter_map(|line| {
            let mut fields = line.split(',');
            let (id, k) = (fields.next()?, fields.next()?.parse::<u64>().ok()?);
            (k % 2 == 0).then(|| format!("{id},name-{k}"))
        })
        .collect();
    joined.sort();
    joined
}

/// The rows of managed table `table` as `k -> (n, s)`, read by `weir run` in batch mode.
fn table_rows(dir: &Path, table: &str) -> BTreeMap<u64, (u64, u64)> {
    let file = dir.join("read.sql");
    std::fs::write(
        &file,
        format!(
            "SET 'table.store.path' = '{}/store';\nSET 'execution.runtime-mode' = 'batch';\n\
             SET 'sql-client.execution.result-mode' = 'changelog';\nSELECT k, n, s FROM {table};\n",
            dir.display()
        ),
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_weir")).arg("run").arg(&file).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("+I[")?.strip_suffix(']').map(str::to_string))
        .map(|row| {
            let fields: Vec<u64> = row.split(", ").map(|f| f.parse().unwrap()).collect();
            (fields[0], (fields[1], fields[2]))
        })
        .collect()
}

#[test]
fn a_job_killed_at_random_moments_and_resumed_writes_every_result_exactly_once() {
    killed_and_resumed("", &|_| true, &mut |_| {});
}

/// The same with the keyed state on disk and incremental checkpoints: each checkpoint writes
/// every changed entry into its state's store, each resume restores the runs of the newest
/// checkpoint at another parallelism and reads its entries back from them as keys arrive, and
/// the runs no retained checkpoint names are deleted. (The budget is one the job's state about
/// fits in: a smaller one makes the join, whose state holds each key's rows as one entry,
/// rewrite them all the time, which tests speed rather than recovery; eviction under a small
/// budget is tested by the operator harnesses and the state model test.)
#[test]
fn a_job_with_state_on_disk_killed_at_random_moments_and_resumed_writes_every_result_exactly_once() {
    // Before each resume: every run a retained checkpoint names is there (the restore reads
    // them). Runs a killed run linked for a checkpoint that never completed may be there too,
    // until the next completed checkpoint deletes them.
    let mut resumed_from_runs = 0;
    let mut check_runs = |dir: &Path| {
        for job in runs_under(dir) {
            let named = run_files(&read_all(&job));
            for run in &named {
                assert!(run.exists(), "{} is named by a retained checkpoint but gone", run.display());
            }
            resumed_from_runs += usize::from(!named.is_empty());
        }
    };
    let names_runs = |checkpoint: &CompletedCheckpoint| !run_files(std::slice::from_ref(checkpoint)).is_empty();
    let dir = killed_and_resumed(
        "SET 'state.backend.type' = 'rocksdb';\n\
         SET 'state.backend.incremental' = 'true';\n\
         SET 'taskmanager.memory.managed.size' = '32 mb';\n",
        &names_runs,
        &mut check_runs,
    );
    assert!(resumed_from_runs > 0, "no resume restored runs of an incremental checkpoint");
    // Once the job finished, only runs a retained checkpoint names are left.
    for job in runs_under(&dir.path().join("checkpoints")) {
        let named = run_files(&read_all(&job));
        for file in std::fs::read_dir(job.join("shared")).into_iter().flatten() {
            let file = file.unwrap().path();
            assert!(named.contains(&file), "{} is named by no retained checkpoint", file.display());
        }
    }
}

/// Kills and resumes the job of [`script_with`] `settings` until it finishes, calling
/// `before_resume` with its checkpoint directory before each resume; returns its directory.
/// Every other run is killed only after it completed a checkpoint that `wanted` accepts, so
/// resumes from checkpoints happen however slow the machine is; the others may die before
/// their first checkpoint.
fn killed_and_resumed(
    settings: &str,
    wanted: &dyn Fn(&CompletedCheckpoint) -> bool,
    before_resume: &mut dyn FnMut(&Path),
) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let expected = write_input(&dir.path().join("input.csv"), ROWS);
    let (expected_rows, expected_totals) = (expected.kept, expected.totals);
    let expected_joined = joined_of(&expected_rows);
    std::fs::write(dir.path().join("job.sql"), script_with(dir.path(), settings)).unwrap();
    write_names(&dir.path().join("names.csv"));
    // The same job, uninterrupted, beside it.
    let whole = tempfile::tempdir().unwrap();
    std::fs::copy(dir.path().join("input.csv"), whole.path().join("input.csv")).unwrap();
    write_names(&whole.path().join("names.csv"));
    std::fs::write(whole.path().join("job.sql"), script_with(whole.path(), settings)).unwrap();
    let uninterrupted = common::weir_job(whole.path(), &["-p", "2"]);
    // Each restart at another parallelism than the run before: restored state finds its
    // operators however the new plan chains them.
    let checkpoints = dir.path().join("checkpoints");
    let mut run = |runs: usize| {
        before_resume(&checkpoints);
        let newest = newest_checkpoint(&checkpoints);
        let parallelism = [2, 1, 3][runs % 3];
        let mut child = common::weir_job(dir.path(), &["--resume", "-p", &parallelism.to_string()]);
        if runs % 2 == 0 {
            await_checkpoint(&checkpoints, newest, wanted, &mut child);
        }
        child
    };
    // Anywhere from before the first checkpoint to well after it.
    common::kill_until_done(KILLS, 0x2545_f491_4f6c_dd1d, 100..1000, &mut run);
    let output = uninterrupted.wait_with_output().unwrap();
    assert!(output.status.success(), "uninterrupted: {}", String::from_utf8_lossy(&output.stderr));
    let rows = common::sink_rows(&dir.path().join("kept"));
    assert!(
        rows == common::sink_rows(&whole.path().join("kept")),
        "the filesystem sink's rows differ from an uninterrupted run's"
    );
    for table in ["totals", "sums"] {
        assert!(
            table_rows(dir.path(), table) == table_rows(whole.path(), table),
            "{table} differs from an uninterrupted run's"
        );
    }
    let windows = common::sink_rows(&dir.path().join("wins"));
    assert!(windows == common::sink_rows(&whole.path().join("wins")), "the windows differ from an uninterrupted run's");
    let counts = window_counts(&windows);
    assert_eq!(counts.len(), expected.windows.len(), "windows lost or written twice");
    let total = |all: &mut dyn Iterator<Item = (u64, u64)>| all.fold((0, 0), |(n, s), (a, b)| (n + a, s + b));
    assert_eq!(total(&mut counts.into_iter()), total(&mut expected.windows.values().copied()), "late rows miscounted");
    // A window and a timer per key and second.
    let keyed = common::sink_rows(&dir.path().join("keyed_wins"));
    assert!(
        keyed == common::sink_rows(&whole.path().join("keyed_wins")),
        "the keyed windows differ from an uninterrupted run's"
    );
    let keyed_counts = window_counts(&keyed);
    assert_eq!(
        total(&mut keyed_counts.into_iter()),
        total(&mut expected.windows.values().copied()),
        "the keyed windows lost or doubled rows"
    );
    let joined = common::sink_rows(&dir.path().join("joined"));
    assert!(
        joined == common::sink_rows(&whole.path().join("joined")),
        "the join's rows differ from an uninterrupted run's"
    );
    assert!(joined == expected_joined, "the join's rows differ from the input's");
    let parts = partitioned_rows(&dir.path().join("parts"));
    assert!(
        parts == partitioned_rows(&whole.path().join("parts")),
        "the partitioned sink differs from an uninterrupted run's"
    );
    assert!(parts == parts_of(&expected_rows), "the partitioned sink's rows differ from the input's");
    for bucket in 0..7 {
        let success = dir.path().join(format!("parts/bucket={bucket}/_SUCCESS"));
        assert!(success.exists(), "partition {bucket} was not committed");
    }
    assert_eq!(rows.len(), expected_rows.len(), "rows lost or written twice");
    assert!(rows == expected_rows, "the filesystem sink's rows differ from the input's");
    assert!(table_rows(dir.path(), "totals") == expected_totals, "the GROUP BY's results differ");
    assert!(table_rows(dir.path(), "sums") == expected_totals, "the merged sums differ");
    dir
}

/// The id of the newest checkpoint any job under `dir` completed (0 before the first).
fn newest_checkpoint(dir: &Path) -> u64 {
    latest_checkpoints(dir).map(|c| c.id).max().unwrap_or(0)
}

/// The newest checkpoint of each run of each job under `dir`.
fn latest_checkpoints(dir: &Path) -> impl Iterator<Item = CompletedCheckpoint> {
    runs_under(dir).into_iter().filter_map(|run| read_latest(&run))
}

/// The directories of the runs of every job under `dir` (a job's directory holds one per run).
fn runs_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let jobs = std::fs::read_dir(dir).into_iter().flatten().filter_map(|job| Some(job.ok()?.path()));
    jobs.flat_map(|job| run_directories(&job)).collect()
}

/// Waits until a job under `dir` completed a checkpoint newer than `after` that `wanted`
/// accepts, or `child` ended. Fails after ten minutes (a job that stopped checkpointing).
fn await_checkpoint(
    dir: &Path,
    after: u64,
    wanted: &dyn Fn(&CompletedCheckpoint) -> bool,
    child: &mut std::process::Child,
) {
    let started = Instant::now();
    loop {
        if latest_checkpoints(dir).any(|c| c.id > after && wanted(&c)) || child.try_wait().unwrap().is_some() {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(600), "no checkpoint completed in ten minutes");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How sorted `rows` differ from sorted `expected`: how many are missing and how many extra,
/// the first of each, and the run's standard error (for a failure's report).
fn multiset_difference(rows: &[String], expected: &[String], stderr: &str) -> String {
    let (mut missing, mut extra) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < rows.len() || j < expected.len() {
        match (rows.get(i), expected.get(j)) {
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                extra.push(x);
                i += 1;
            }
            (Some(x), None) => {
                extra.push(x);
                i += 1;
            }
            (_, Some(y)) => {
                missing.push(y);
                j += 1;
            }
            (None, None) => break,
        }
    }
    format!(
        "{} missing (first {:?}), {} extra (first {:?}); the run's stderr:\n{stderr}",
        missing.len(),
        missing.first(),
        extra.len(),
        extra.first()
    )
}

#[test]
fn sigterm_stops_with_a_savepoint_the_job_restores_from_and_a_damaged_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let expected = write_input(&dir.path().join("input.csv"), ROWS);
    let (expected_rows, expected_totals) = (expected.kept, expected.totals);
    let savepoints = dir.path().join("savepoints");
    let script =
        format!("SET 'execution.checkpointing.savepoint-dir' = '{}';\n{}", savepoints.display(), script(dir.path()));
    std::fs::write(dir.path().join("job.sql"), script).unwrap();
    write_names(&dir.path().join("names.csv"));
    let child = common::weir_job(dir.path(), &["-p", "2"]);
    // Stopped once the job is under way: its first checkpoint is written.
    let checkpoints = dir.path().join("checkpoints");
    let started = Instant::now();
    while runs_under(&checkpoints).is_empty() {
        assert!(started.elapsed() < Duration::from_secs(60), "no checkpoint after a minute");
        std::thread::sleep(Duration::from_millis(10));
    }
    let stopped = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(stopped.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{stderr}");
    let path = stderr
        .lines()
        .find_map(|l| l.strip_prefix("Savepoint completed. Path: "))
        .unwrap_or_else(|| panic!("no savepoint reported: {stderr}"))
        .to_string();
    let visible = common::sink_rows(&dir.path().join("kept")).len();
    assert!(
        visible < expected_rows.len(),
        "stopped before the end: {visible} of {} rows; {stderr}",
        expected_rows.len()
    );

    // A damaged copy is refused, saying so, and writes nothing.
    let damaged = dir.path().join("damaged");
    std::fs::create_dir(&damaged).unwrap();
    let mut bytes = std::fs::read(Path::new(&path).join("_metadata")).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(damaged.join("_metadata"), bytes).unwrap();
    let before = common::sink_rows(&dir.path().join("kept"));
    let recovery = format!("execution.state-recovery.path={}", damaged.display());
    let output = common::weir_job(dir.path(), &["-p", "3", "--set", &recovery]).wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(!output.status.success());
    assert!(stderr.contains("is damaged: its checksum does not match its contents"), "{stderr}");
    assert_eq!(common::sink_rows(&dir.path().join("kept")), before, "a refused restore wrote rows");

    // The savepoint itself restores, at another parallelism, to the whole result.
    let recovery = format!("execution.state-recovery.path={path}");
    let output = common::weir_job(dir.path(), &["-p", "3", "--set", &recovery]).wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{stderr}");
    let rows = common::sink_rows(&dir.path().join("kept"));
    assert!(
        rows == expected_rows,
        "the filesystem sink's rows differ: {}",
        multiset_difference(&rows, &expected_rows, &stderr)
    );
    let (joined, expected_joined) = (common::sink_rows(&dir.path().join("joined")), joined_of(&expected_rows));
    assert!(
        joined == expected_joined,
        "the join's rows differ: {}",
        multiset_difference(&joined, &expected_joined, &stderr)
    );
    assert!(table_rows(dir.path(), "totals") == expected_totals, "the GROUP BY's results differ");
    assert!(table_rows(dir.path(), "sums") == expected_totals, "the merged sums differ");
}

/// Streaming INSERT jobs checkpoint, each into its own directory; SELECT jobs and jobs in batch
/// mode take none, as in Flink.
#[test]
fn insert_jobs_checkpoint_into_their_own_directories_and_queries_and_batch_jobs_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoints = dir.path().join("checkpoints");
    let script = format!(
        "SET 'execution.checkpointing.interval' = '10 ms';\n\
         SET 'execution.checkpointing.dir' = '{}';\n\
         CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '20000');\n\
         CREATE TABLE out_a (id BIGINT) WITH ('connector' = 'blackhole');\n\
         SET 'pipeline.name' = 'streaming';\n\
         INSERT INTO out_a SELECT id FROM gen;\n\
         SET 'pipeline.name' = 'query';\n\
         SELECT COUNT(*) FROM gen;\n\
         SET 'execution.runtime-mode' = 'batch';\n\
         SET 'pipeline.name' = 'batch';\n\
         INSERT INTO out_a SELECT id FROM gen;\n",
        checkpoints.display()
    );
    let registry = weir::connectors::ConnectorRegistry::default();
    let config = weir::runtime::RuntimeConfig::default().with_parallelism(2);
    let mut session = weir::session::Session::new(config, registry, Box::new(std::io::sink()));
    session.execute_script(&script).map_err(|e| e.error.to_string()).unwrap();
    let jobs: Vec<String> =
        std::fs::read_dir(&checkpoints).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(jobs, ["streaming"]);
    let runs = run_directories(&checkpoints.join("streaming"));
    assert_eq!(runs.len(), 1, "one run: {runs:?}");
    let kept: Vec<_> = std::fs::read_dir(&runs[0])
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("chk-"))
        .collect();
    assert_eq!(kept.len(), 1, "a finished job keeps its final checkpoint");
}

/// The input of [`a_multi_file_job_killed_and_resumed_at_falling_parallelism_loses_no_window_row`]:
/// `files` files of `rows` rows each, `id,k,v,ts`; file `f` holds the `f`-th stretch of event
/// time, one row a millisecond, in order. However the files are shared out among subtasks, no
/// row is late. Returns the rows per one-second window and per key (count, sum of v).
fn write_files(dir: &Path, files: u64, rows: u64) -> (BTreeMap<u64, u64>, BTreeMap<u64, (u64, u64)>) {
    std::fs::create_dir_all(dir).unwrap();
    let (mut windows, mut totals) = (BTreeMap::new(), BTreeMap::<u64, (u64, u64)>::new());
    for f in 0..files {
        let mut text = String::new();
        for i in 0..rows {
            let id = f * rows + i;
            let (k, v) = (id % 97, id % 13);
            let ts = EPOCH + id;
            let second = ts / 1000 % 86_400;
            let (h, m, s, millis) = (second / 3600, second / 60 % 60, second % 60, ts % 1000);
            text.push_str(&format!("{id},{k},{v},2023-11-14 {h:02}:{m:02}:{s:02}.{millis:03}\n"));
            *windows.entry(ts - ts % 1000 + 1000).or_default() += 1;
            let total = totals.entry(k).or_default();
            total.0 += 1;
            total.1 += v;
        }
        std::fs::write(dir.join(format!("part-{f}.csv")), text).unwrap();
    }
    (windows, totals)
}

/// A statement set over a directory of four files (two scans of it: one filtered into the
/// filesystem sink, one into a GROUP BY and a window aggregate), killed with `kill -9` at 12
/// random moments and resumed each time at another parallelism, down to 1 (a subtask then reads
/// what several had left side by side). It ends with the filesystem sink's rows exactly once, the
/// managed table's totals and every window's count equal to a recomputation: no row late.
#[test]
fn a_multi_file_job_killed_and_resumed_at_falling_parallelism_loses_no_window_row() {
    const FILES: u64 = 4;
    const ROWS: u64 = 100_000;
    const KILLS: usize = 12;
    let dir = tempfile::tempdir().unwrap();
    let (windows, totals) = write_files(&dir.path().join("input"), FILES, ROWS);
    let d = dir.path().display();
    let script = format!(
        "SET 'table.store.path' = '{d}/store';\n\
         SET 'pipeline.auto-watermark-interval' = '0';\n\
         SET 'execution.checkpointing.interval' = '100 ms';\n\
         SET 'execution.checkpointing.dir' = '{d}/checkpoints';\n\
         CREATE TABLE src (id BIGINT, k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/input', 'format' = 'csv');\n\
         CREATE TABLE wins (window_end TIMESTAMP(3), n BIGINT) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/wins', 'format' = 'csv');\n\
         CREATE TABLE kept (id BIGINT, k INT, v INT) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/kept', 'format' = 'csv');\n\
         CREATE TABLE IF NOT EXISTS totals (k INT, n BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED);\n\
         EXECUTE STATEMENT SET BEGIN\n\
         INSERT INTO totals SELECT k, COUNT(*), SUM(CAST(v AS BIGINT)) FROM src GROUP BY k;\n\
         INSERT INTO kept SELECT id, k, v FROM src WHERE v < 3;\n\
         INSERT INTO wins SELECT window_end, COUNT(*)\n\
           FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end;\n\
         END;\n"
    );
    std::fs::write(dir.path().join("job.sql"), script).unwrap();
    // 3, 2, 1, 3, 2, 1, …: every restore but one into fewer subtasks than the run before.
    common::kill_until_done(KILLS, 0x5851_f42d_4c95_7f2d, 150..750, |runs| {
        common::weir_job(dir.path(), &["--resume", "-p", &(3 - (runs - 1) % 3).to_string()])
    });
    let mut expected_kept: Vec<String> =
        (0..FILES * ROWS).filter(|id| id % 13 < 3).map(|id| format!("{id},{},{}", id % 97, id % 13)).collect();
    expected_kept.sort();
    let kept = common::sink_rows(&dir.path().join("kept"));
    assert!(kept == expected_kept, "the filesystem sink: {}", multiset_difference(&kept, &expected_kept, ""));
    assert!(table_rows(dir.path(), "totals") == totals, "the GROUP BY's results differ");
    let written: Vec<(String, u64)> = common::sink_rows(&dir.path().join("wins"))
        .iter()
        .map(|line| {
            let (end, n) = line.rsplit_once(',').unwrap();
            (end.to_string(), n.parse().unwrap())
        })
        .collect();
    assert_eq!(written.len(), windows.len(), "windows lost or written twice");
    let short: Vec<&(String, u64)> =
        written.iter().filter(|(_, n)| !windows.values().any(|w| w == n)).take(3).collect();
    assert!(short.is_empty(), "rows dropped as late, first in {short:?}");
    assert_eq!(written.iter().map(|(_, n)| n).sum::<u64>(), FILES * ROWS, "every row in its window");
}

/// Rows of the library pipeline of [`a_library_pipeline_killed_and_resumed_keeps_its_keyed_state`].
const LIBRARY_ROWS: i64 = 150_000;

/// The job process of [`a_library_pipeline_killed_and_resumed_keeps_its_keyed_state`]: runs the
/// library pipeline of `common::keyed_totals` in `WEIR_LIBRARY_JOB_DIR` at
/// `WEIR_LIBRARY_JOB_PARALLELISM`, from its newest checkpoint if there is one, to its end.
#[test]
#[ignore = "the job process of a_library_pipeline_killed_and_resumed_keeps_its_keyed_state"]
fn library_job_process() {
    let Ok(dir) = std::env::var("WEIR_LIBRARY_JOB_DIR") else { return };
    let parallelism = std::env::var("WEIR_LIBRARY_JOB_PARALLELISM").unwrap().parse().unwrap();
    let (out, checkpoints) = (Path::new(&dir).join("out"), Path::new(&dir).join("checkpoints"));
    let restore = common::keyed_totals::latest(&checkpoints);
    let pipeline = common::keyed_totals::pipeline(&out, &checkpoints, parallelism, restore, LIBRARY_ROWS);
    assert_eq!(pipeline.run().unwrap(), weir::runtime::JobStatus::Finished);
}

/// A pipeline built with the library API (a keyed function with state and timers per key), its
/// process killed with `kill -9` at 6 random moments and restarted from its newest checkpoint at
/// parallelism 1, 2 and 3 in turn: each key's totals are written once, equal to a recomputation.
#[test]
fn a_library_pipeline_killed_and_resumed_keeps_its_keyed_state() {
    let dir = tempfile::tempdir().unwrap();
    common::kill_until_done(6, 0x9e37_79b9_7f4a_7c15, 300..1500, |runs| {
        Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "checkpoint_crash::library_job_process",
                "--ignored",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env("WEIR_LIBRARY_JOB_DIR", dir.path())
            .env("WEIR_LIBRARY_JOB_PARALLELISM", (1 + runs % 3).to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    });
    let written = common::keyed_totals::written(&dir.path().join("out"));
    assert_eq!(written, common::keyed_totals::expected(LIBRARY_ROWS));
}
