//! Restores that follow the state compatibility check: for each fully or partially compatible
//! example pair of docs/compat.md, a job of the old script is stopped with a savepoint
//! mid-stream, a job of the new script starts from it, and the table both write ends equal to
//! the table a run of the new script from the start writes (on the columns whose state was kept,
//! for a partially compatible pair). An incompatible pair is refused, naming the operator.

use std::path::{Path, PathBuf};

use common::Buffer;
use weir::connectors::ConnectorRegistry;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

use crate::common;

/// `MyTable` of the rules' examples, its values computed from a sequence (so that every run reads
/// the same rows), at `rate` rows per second.
fn tables(rate: u64) -> String {
    format!(
        "CREATE TEMPORARY TABLE MyTable (
  id BIGINT,
  a AS CAST(MOD(id, 7) AS INT), b AS id * 3, c AS CAST(MOD(id, 13) AS STRING), d AS CAST(MOD(id, 5) AS INT),
  ts AS TO_TIMESTAMP_LTZ(id * 10, 3),
  proctime AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',
        'fields.id.end' = '{ROWS}', 'rows-per-second' = '{rate}');
"
    )
}

/// Rows of a run: the old job is stopped after its first checkpoint, long before it read them all.
const ROWS: u64 = 20_000;
/// The old job's rate: reading every row takes it 5 s.
const SLOW: u64 = 4_000;
const FAST: u64 = 1_000_000_000;

/// A session of parallelism 1 keeping its tables in `dir/data`, checkpointing every 100 ms into
/// `dir/checkpoints` and taking savepoints into `dir/savepoints`.
fn session(dir: &Path, out: Buffer) -> Session {
    let mut session =
        Session::new(RuntimeConfig::default().with_parallelism(1), ConnectorRegistry::default(), Box::new(out));
    let set = [
        ("table.store.path", dir.join("data").display().to_string()),
        ("execution.checkpointing.interval", "100 ms".to_string()),
        ("execution.checkpointing.dir", dir.join("checkpoints").display().to_string()),
        ("execution.checkpointing.savepoint-dir", dir.join("savepoints").display().to_string()),
        ("pipeline.name", "job".to_string()),
    ];
    for (k, v) in set {
        session.set(k, &v).unwrap();
    }
    session
}

/// An example pair: the result table's DDL, the old and new INSERTs, and the columns compared.
struct Pair {
    name: &'static str,
    sink: &'static str,
    old: &'static str,
    new: &'static str,
    compared: &'static str,
}

/// The OVER pair's rows written after the restore, with the new call: computed from the rows the
/// frame held, they are those of a run from the start.
const OVER_COUNTS: &str = "SELECT a, b, cnt FROM r WHERE cnt IS NOT NULL";

/// Runs `old` until its first checkpoint completes and stops it with a savepoint; its path.
fn savepoint_of(dir: &Path, pair: &Pair) -> PathBuf {
    let mut old = session(dir, Buffer::default());
    let stop = old.stopper();
    let script = format!("{}{}\n{};", tables(SLOW), pair.sink, pair.old);
    let running = std::thread::spawn(move || old.execute_script(&script).map_err(|e| e.in_statement()));
    let checkpoints = dir.join("checkpoints").join("job");
    common::wait_until("the old job completes a checkpoint", || {
        running.is_finished()
            || weir::runtime::checkpoint::storage::latest_checkpoint_of_runs(&checkpoints).is_ok_and(|c| c.is_some())
    });
    let lines = stop();
    if let Err(e) = running.join().unwrap() {
        assert!(e.contains("cancelled") || e.contains("Cancelled"), "{}: the old job failed: {e}", pair.name);
    }
    let line = lines.iter().find(|l| l.starts_with("Savepoint completed. Path: ")).unwrap_or_else(|| {
        panic!("{}: the old job ended before its savepoint (it reads {ROWS} rows in 5 s): {lines:?}", pair.name)
    });
    PathBuf::from(line.trim_start_matches("Savepoint completed. Path: "))
}

/// Runs `script` to its end in a session over `dir` (restoring from `from`), then returns the
/// rows of `query` over the tables it wrote, sorted.
fn run(dir: &Path, script: &str, from: Option<&Path>, query: &str) -> Result<Vec<String>, String> {
    let mut new = session(dir, Buffer::default());
    if let Some(savepoint) = from {
        new.set("execution.state-recovery.path", &savepoint.display().to_string()).unwrap();
    }
    // The old job's last subtasks let go of the data directory shortly after it stopped.
    common::wait_until("the data directory is free", || {
        new.execute_script("SHOW TABLES;")
            .map_or_else(|e| !e.in_statement().contains("in use by another process"), |()| true)
    });
    new.execute_script(script).map_err(|e| e.in_statement())?;
    // A restored job reads on from the savepoint's position: fewer rows than the table has.
    let rows_read: u64 = new
        .job_reports()
        .iter()
        .flat_map(|j| &j.vertices)
        .filter(|v| v.name.starts_with("MyTable"))
        .map(|v| v.records_read)
        .sum();
    assert_eq!(from.is_some(), rows_read < ROWS, "read {rows_read} of {ROWS} rows (restored: {})", from.is_some());
    // The data directory is opened by one session at a time.
    drop(new);
    Ok(read(dir, query))
}

/// The rows of `query` over the tables in `dir`, sorted.
fn read(dir: &Path, query: &str) -> Vec<String> {
    let out = Buffer::default();
    let mut reader = session(dir, out.clone());
    let script = format!(
        "SET 'execution.runtime-mode' = 'batch';\nSET 'sql-client.execution.result-mode' = 'changelog';\n{query};"
    );
    reader.execute_script(&script).unwrap_or_else(|e| panic!("{query}: {}", e.in_statement()));
    let text = String::from_utf8(out.0.lock().clone()).unwrap();
    let mut rows: Vec<String> = text.lines().map(str::to_string).collect();
    rows.sort();
    rows
}

fn restores_as_the_new_script_from_the_start(pair: &Pair) {
    let restored = tempfile::tempdir().unwrap();
    let savepoint = savepoint_of(restored.path(), pair);
    let script = format!("{}{}\n{};", tables(FAST), pair.sink, pair.new);
    let after =
        run(restored.path(), &script, Some(&savepoint), pair.compared).unwrap_or_else(|e| panic!("{}: {e}", pair.name));
    let fresh = tempfile::tempdir().unwrap();
    let expected = run(fresh.path(), &script, None, pair.compared).unwrap();
    assert!(!expected.is_empty(), "{}: no result", pair.name);
    assert_same(&after, &expected, pair.name);
    if pair.name.starts_with("OVER") {
        let (restored_counts, counts) = (read(restored.path(), OVER_COUNTS), read(fresh.path(), OVER_COUNTS));
        assert!(!restored_counts.is_empty() && restored_counts.len() < counts.len(), "{}", restored_counts.len());
        let wrong: Vec<&String> = restored_counts.iter().filter(|r| !counts.contains(r)).take(5).collect();
        assert!(wrong.is_empty(), "new OVER calls after the restore differ from a run from the start: {wrong:?}");
    }
}

/// Fails with the rows only one side has (the first few of them).
#[track_caller]
fn assert_same(after: &[String], expected: &[String], name: &str) {
    if after == expected {
        return;
    }
    let only = |a: &[String], b: &[String]| a.iter().filter(|r| !b.contains(r)).take(5).cloned().collect::<Vec<_>>();
    panic!(
        "{name}: the restored run ({} rows) differs from a run from the start ({} rows); only restored: {:?}; only from the start: {:?}",
        after.len(),
        expected.len(),
        only(after, expected),
        only(expected, after)
    );
}

const AGG_SINK: &str =
    "CREATE TABLE IF NOT EXISTS r (a INT, s BIGINT, mx STRING, cnt BIGINT, PRIMARY KEY (a) NOT ENFORCED);";

const PAIRS: &[Pair] = &[
    Pair {
        name: "group aggregate: an aggregate added (partially)",
        sink: AGG_SINK,
        old: "INSERT INTO r (a, s, mx) SELECT a, SUM(b), MAX(c) FROM MyTable GROUP BY a",
        new: "INSERT INTO r SELECT a, SUM(b), MAX(c), COUNT(c) FROM MyTable GROUP BY a",
        compared: "SELECT a, s, mx FROM r",
    },
    Pair {
        name: "group aggregate: an aggregate deleted, the others reordered",
        sink: AGG_SINK,
        old: "INSERT INTO r SELECT a, SUM(b), MAX(c), COUNT(c) FROM MyTable GROUP BY a",
        new: "INSERT INTO r (a, mx, s) SELECT a, MAX(c), SUM(b) FROM MyTable GROUP BY a",
        compared: "SELECT a, s, mx FROM r",
    },
    Pair {
        name: "group aggregate: max changed to min (partially)",
        sink: AGG_SINK,
        old: "INSERT INTO r (a, s, mx) SELECT a, SUM(b), MAX(c) FROM MyTable GROUP BY a",
        new: "INSERT INTO r (a, s, mx) SELECT a, SUM(b), MIN(c) FROM MyTable GROUP BY a",
        compared: "SELECT a, s FROM r",
    },
    Pair {
        name: "temporal sort on processing time: a column added",
        sink: "CREATE TABLE IF NOT EXISTS r (a INT, b BIGINT, c STRING, d INT, PRIMARY KEY (b) NOT ENFORCED);",
        old: "INSERT INTO r (a, b, c) SELECT a, b, c FROM MyTable ORDER BY proctime",
        new: "INSERT INTO r SELECT a, b, c, d FROM MyTable ORDER BY proctime",
        compared: "SELECT a, b, c FROM r",
    },
    Pair {
        name: "temporal sort on event time: the order key no longer selected",
        sink: "CREATE TABLE IF NOT EXISTS r (a INT, b BIGINT, ts TIMESTAMP_LTZ(3), PRIMARY KEY (b) NOT ENFORCED);",
        old: "INSERT INTO r SELECT a, b, ts FROM MyTable ORDER BY ts",
        new: "INSERT INTO r (a, b) SELECT a, b FROM MyTable ORDER BY ts",
        compared: "SELECT a, b FROM r",
    },
    Pair {
        name: "deduplication, first row on processing time: a column added",
        sink: "CREATE TABLE IF NOT EXISTS r (a INT, b BIGINT, c STRING, d INT, PRIMARY KEY (a) NOT ENFORCED);",
        old: "INSERT INTO r (a, b, c) SELECT a, b, c FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY a ORDER BY proctime) AS rk FROM MyTable) WHERE rk = 1",
        new: "INSERT INTO r SELECT a, b, c, d FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY a ORDER BY proctime) AS rk FROM MyTable) WHERE rk = 1",
        compared: "SELECT a, b, c FROM r",
    },
    Pair {
        name: "Top-N: partition keys reordered",
        sink: "CREATE TABLE IF NOT EXISTS r (a INT, d INT, rk BIGINT, b BIGINT, PRIMARY KEY (a, d, rk) NOT ENFORCED);",
        old: "INSERT INTO r SELECT a, d, rk, b FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY a, d ORDER BY b DESC) AS rk FROM MyTable) WHERE rk < 3",
        new: "INSERT INTO r SELECT a, d, rk, b FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY d, a ORDER BY b DESC) AS rk FROM MyTable) WHERE rk < 3",
        compared: "SELECT a, d, rk, b FROM r",
    },
    Pair {
        name: "window aggregate: an aggregate added and window_start selected (partially)",
        sink: "CREATE TABLE IF NOT EXISTS r (a INT, ws TIMESTAMP(3), we TIMESTAMP(3), s BIGINT, mx STRING, cnt BIGINT, PRIMARY KEY (a, we) NOT ENFORCED);",
        old: "INSERT INTO r (a, we, s, mx) SELECT a, window_end, SUM(b), MAX(c) FROM TABLE(TUMBLE(TABLE MyTable, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY a, window_start, window_end",
        new: "INSERT INTO r SELECT a, window_start, window_end, SUM(b), MAX(c), COUNT(c) FROM TABLE(TUMBLE(TABLE MyTable, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY a, window_start, window_end",
        compared: "SELECT a, we, s, mx FROM r",
    },
    Pair {
        name: "OVER aggregate: an aggregate added (partially)",
        sink: "CREATE TABLE IF NOT EXISTS r (a INT, b BIGINT, s BIGINT, mx STRING, cnt BIGINT, PRIMARY KEY (b) NOT ENFORCED);",
        old: "INSERT INTO r (a, b, s, mx) SELECT a, b, SUM(b) OVER w, MAX(c) OVER w FROM MyTable
              WINDOW w AS (PARTITION BY a ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)",
        new: "INSERT INTO r SELECT a, b, SUM(b) OVER w, MAX(c) OVER w, COUNT(c) OVER w FROM MyTable
              WINDOW w AS (PARTITION BY a ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)",
        compared: "SELECT a, b, s, mx FROM r",
    },
    Pair {
        name: "SESSION window aggregate: an aggregate added (partially)",
        sink: "CREATE TABLE IF NOT EXISTS r (a INT, we TIMESTAMP(3), s BIGINT, mx STRING, cnt BIGINT, PRIMARY KEY (a, we) NOT ENFORCED);",
        old: "INSERT INTO r (a, we, s, mx) SELECT a, window_end, SUM(b), MAX(c) FROM TABLE(SESSION(TABLE MyTable PARTITION BY a, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY a, window_start, window_end",
        new: "INSERT INTO r SELECT a, window_end, SUM(b), MAX(c), COUNT(c) FROM TABLE(SESSION(TABLE MyTable PARTITION BY a, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY a, window_start, window_end",
        compared: "SELECT a, we, s, mx FROM r",
    },
];

#[test]
fn compatible_pairs_restore_to_the_result_of_a_run_from_the_start() {
    let wanted = std::env::var("WEIR_COMPAT_PAIRS").ok();
    std::thread::scope(|scope| {
        for pair in PAIRS.iter().filter(|p| wanted.as_ref().is_none_or(|w| p.name.contains(w.as_str()))) {
            scope.spawn(move || restores_as_the_new_script_from_the_start(pair));
        }
    });
}

#[test]
fn an_incompatible_restore_is_refused_naming_the_operator_unless_unclaimed_state_may_go() {
    let dir = tempfile::tempdir().unwrap();
    let pair = Pair {
        name: "group key changed",
        sink: "CREATE TABLE IF NOT EXISTS r_old (a INT, s BIGINT, PRIMARY KEY (a) NOT ENFORCED);
               CREATE TABLE IF NOT EXISTS r (a INT, d INT, s BIGINT, PRIMARY KEY (a, d) NOT ENFORCED);",
        old: "INSERT INTO r_old SELECT a, SUM(b) FROM MyTable GROUP BY a",
        new: "INSERT INTO r SELECT a, d, SUM(b) FROM MyTable GROUP BY a, d",
        compared: "SELECT a, d, s FROM r WHERE d IS NOT NULL",
    };
    let savepoint = savepoint_of(dir.path(), &pair);
    let script = format!("{}{}\n{};", tables(FAST), pair.sink, pair.new);
    let error = run(dir.path(), &script, Some(&savepoint), pair.compared).unwrap_err();
    assert!(
        error.contains("cannot be restored into GroupAggregate(key=[CAST((MyTable.id MOD 7) AS INT), CAST((MyTable.id MOD 5) AS INT)])")
            && error.contains("its state is keyed by")
            && error.contains("ignore-unclaimed-state"),
        "{error}"
    );
    let allowed = format!("SET 'execution.state-recovery.ignore-unclaimed-state' = 'true';\n{script}");
    // The aggregate starts empty; the source goes on from where the savepoint left it.
    let started_empty = run(dir.path(), &allowed, Some(&savepoint), pair.compared).unwrap();
    assert!(!started_empty.is_empty());
}

/// A savepoint whose operator the new job does not have (a GROUP BY, then a stateless INSERT)
/// is refused, naming the operator, as Flink refuses it; with unclaimed state allowed to go, the
/// job starts and its source goes on from the savepoint's position.
#[test]
fn a_restore_into_a_job_without_the_saved_operator_is_refused_unless_unclaimed_state_may_go() {
    let dir = tempfile::tempdir().unwrap();
    let pair = Pair {
        name: "aggregate removed",
        sink: "CREATE TABLE IF NOT EXISTS r_old (a INT, s BIGINT, PRIMARY KEY (a) NOT ENFORCED);
               CREATE TABLE IF NOT EXISTS r (a INT, b BIGINT, PRIMARY KEY (b) NOT ENFORCED);",
        old: "INSERT INTO r_old SELECT a, SUM(b) FROM MyTable GROUP BY a",
        new: "INSERT INTO r SELECT a, b FROM MyTable",
        compared: "SELECT COUNT(*) FROM r",
    };
    let savepoint = savepoint_of(dir.path(), &pair);
    let script = format!("{}{}\n{};", tables(FAST), pair.sink, pair.new);
    let error = run(dir.path(), &script, Some(&savepoint), pair.compared).unwrap_err();
    assert!(
        error.contains("Cannot map checkpoint")
            && error.contains("for operator GroupAggregate(key=[")
            && error.contains("not available in the new program")
            && error.contains("ignore-unclaimed-state"),
        "{error}"
    );
    let allowed = format!("SET 'execution.state-recovery.ignore-unclaimed-state' = 'true';\n{script}");
    assert!(!run(dir.path(), &allowed, Some(&savepoint), pair.compared).unwrap().is_empty());
}

/// A checkpoint of a job that wrote one table through two sinks (a statement set's INSERTs into
/// different columns of it) restored into a job that writes it through one: the state of the
/// second sink (its files not committed yet) has nowhere to go, and the restore is refused saying
/// so, not half restored; allowed to drop it, the job runs.
#[test]
fn a_restore_that_would_merge_two_sinks_of_one_table_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sink = format!(
        "CREATE TABLE r (a INT, b BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');",
        dir.path().join("r").display()
    );
    // The second sink wrote no `a`: an empty field, read as text.
    let compared = format!(
        "CREATE TABLE written (a STRING, b BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = \
         'csv');\nSELECT COUNT(*) FROM written",
        dir.path().join("r").display()
    );
    let pair = Pair {
        name: "two sinks into one",
        sink: Box::leak(sink.into_boxed_str()),
        old: "EXECUTE STATEMENT SET BEGIN\nINSERT INTO r (a, b) SELECT a, b FROM MyTable;\n\
              INSERT INTO r (b) SELECT b FROM MyTable;\nEND",
        new: "INSERT INTO r SELECT a, b FROM MyTable",
        compared: Box::leak(compared.into_boxed_str()),
    };
    let savepoint = savepoint_of(dir.path(), &pair);
    let script = format!("{}{}\n{};", tables(FAST), pair.sink, pair.new);
    let error = run(dir.path(), &script, Some(&savepoint), pair.compared).unwrap_err();
    assert!(
        error.contains("for operator Sink: ")
            && error.contains("through 2 sinks, the new program through 1")
            && error.contains("ignore-unclaimed-state"),
        "{error}"
    );
    let allowed = format!("SET 'execution.state-recovery.ignore-unclaimed-state' = 'true';\n{script}");
    assert!(!run(dir.path(), &allowed, Some(&savepoint), pair.compared).unwrap().is_empty());
}
