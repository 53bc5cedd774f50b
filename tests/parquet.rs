//! The `parquet` format of the filesystem connector, checked against an independent reader and
//! writer (pyarrow, which `scripts/ensure-pyarrow` installs and `scripts/test` names in
//! `WEIR_PYARROW`): a partitioned table weir writes reads in pyarrow with Flink's Parquet types
//! and the same rows; a file pyarrow writes (INT96 timestamps, maps, lists, rows, a missing
//! column) reads in weir; weir reads back what it wrote at every parallelism, its files rolled
//! by size; and a job reading and writing Parquet, killed at random moments and resumed at
//! another parallelism, writes exactly the rows of an uninterrupted run.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Buffer;
use weir::connectors::ConnectorRegistry;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

/// The Python with pyarrow: `WEIR_PYARROW`, which `scripts/test` sets.
fn pyarrow() -> PathBuf {
    let python = std::env::var("WEIR_PYARROW")
        .expect("WEIR_PYARROW is not set: run scripts/test (or scripts/ensure-pyarrow), which installs pyarrow");
    PathBuf::from(python)
}

/// Runs `tests/parquet/pyarrow_io.py` with `args`; what it printed.
fn pyarrow_io(args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/parquet/pyarrow_io.py");
    let output = Command::new(pyarrow()).arg(script).args(args).output().unwrap();
    assert!(output.status.success(), "pyarrow: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// Runs `sql` in a session at `parallelism` printing changes (`+I[…]`); the lines it printed.
fn run(sql: &str, parallelism: usize) -> Vec<String> {
    let out = Buffer::default();
    let runtime = RuntimeConfig::default().with_parallelism(parallelism);
    let mut session = Session::new(runtime, ConnectorRegistry::default(), Box::new(out.clone()));
    session.set("sql-client.execution.result-mode", "changelog").unwrap();
    if let Err(e) = session.execute_script(sql) {
        panic!("{}", e.in_file("script"));
    }
    let text = String::from_utf8_lossy(&out.0.lock()).into_owned();
    let mut lines: Vec<String> = text.lines().filter(|l| l.starts_with("+I[")).map(str::to_string).collect();
    lines.sort();
    lines
}

const ALL_TYPES: &str = "id INT, tiny TINYINT, small SMALLINT, big BIGINT, flag BOOLEAN, f FLOAT, d DOUBLE, \
    price DECIMAL(10, 2), wide DECIMAL(30, 5), name STRING, bin BYTES, day DATE, t TIME(3), ts TIMESTAMP(3), \
    ts9 TIMESTAMP(9), ltz TIMESTAMP_LTZ(3), tags ARRAY<INT>, attrs MAP<STRING, INT>, r ROW<a INT, b STRING>, dt STRING";

#[test]
fn a_partitioned_table_weir_writes_reads_in_pyarrow_with_flinks_types() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    let table = format!(
        "CREATE TABLE out ({ALL_TYPES}) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', 'path' = '{}', \
         'format' = 'parquet', 'parquet.utc-timezone' = 'true', 'parquet.compression' = 'ZSTD');\n",
        path.display()
    );
    let insert = "INSERT INTO out VALUES \
        (1, CAST(-1 AS TINYINT), CAST(300 AS SMALLINT), 10000000000, TRUE, CAST(1.5 AS FLOAT), 2.25, 12.34, \
         123456789012345678901.12345, 'ada', X'CAFE', DATE '2024-02-29', CAST('12:34:56.789' AS TIME(3)), \
         TIMESTAMP '2024-01-02 03:04:05.678', TIMESTAMP '2024-01-02 03:04:05.123456789', \
         TO_TIMESTAMP_LTZ(1700000000123, 3), ARRAY[1, 2], MAP['a', 1], ROW(7, 'x'), '2024-01-01'), \
        (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
         NULL, '2024-01-02');\n";
    run(&format!("{table}{insert}"), 2);

    let printed = pyarrow_io(&["read", &path.display().to_string()]);
    let (schema, rows) = printed.split_once("\n}\n").unwrap();
    let columns: Vec<String> =
        schema.lines().map(|l| l.trim().replace("field_id=-1 ", "")).filter(|l| l.starts_with("optional")).collect();
    let timestamp = |adjusted: bool, unit: &str| {
        format!(
            "(Timestamp(isAdjustedToUTC={adjusted}, timeUnit={unit}, is_from_converted_type=false, \
             force_set_converted_type=false));"
        )
    };
    let expected = [
        "optional int32 id;".to_string(),
        "optional int32 tiny (Int(bitWidth=8, isSigned=true));".into(),
        "optional int32 small (Int(bitWidth=16, isSigned=true));".into(),
        "optional int64 big;".into(),
        "optional boolean flag;".into(),
        "optional float f;".into(),
        "optional double d;".into(),
        "optional fixed_len_byte_array(5) price (Decimal(precision=10, scale=2));".into(),
        "optional fixed_len_byte_array(13) wide (Decimal(precision=30, scale=5));".into(),
        "optional binary name (String);".into(),
        "optional binary bin;".into(),
        "optional int32 day (Date);".into(),
        "optional int32 t (Time(isAdjustedToUTC=false, timeUnit=milliseconds));".into(),
        format!("optional int64 ts {}", timestamp(false, "microseconds")),
        format!("optional int64 ts9 {}", timestamp(false, "nanoseconds")),
        format!("optional int64 ltz {}", timestamp(true, "microseconds")),
        "optional group tags (List) {".into(),
        "optional int32 element;".into(),
        "optional group attrs (Map) {".into(),
        "optional int32 value;".into(),
        "optional group r {".into(),
        "optional int32 a;".into(),
        "optional binary b (String);".into(),
    ];
    assert_eq!(columns, expected, "{schema}");
    assert!(schema.contains("required binary field_id=-1 key (String);"), "{schema}");
    assert!(schema.contains("required group field_id=-1 flink_schema {"), "{schema}");
    let rows: Vec<&str> = rows.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(
        rows,
        [
            "1, -1, 300, 10000000000, TRUE, 1.5, 2.25, 12.34, 123456789012345678901.12345, ada, x'cafe', 2024-02-29, \
             12:34:56.789000, 2024-01-02 03:04:05.678000, 2024-01-02 03:04:05.123456789, 2023-11-14 22:13:20.123000Z, \
             [1, 2], {a=1}, (7, x), 2024-01-01",
            "2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
             NULL, 2024-01-02",
        ]
    );
    // Committed files only: the in-progress ones are hidden, pyarrow skips none of weir's.
    for partition in ["dt=2024-01-01", "dt=2024-01-02"] {
        let files: Vec<String> = std::fs::read_dir(path.join(partition))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(files.iter().all(|f| f.starts_with("part-")), "{partition}: {files:?}");
    }

    // And weir reads its own files back, the partition column from the directories.
    let read = run(&format!("{table}SELECT * FROM out;\n"), 2);
    assert_eq!(
        read,
        [
            "+I[1, -1, 300, 10000000000, true, 1.5, 2.25, 12.34, 123456789012345678901.12345, ada, [-54, -2], \
             2024-02-29, 12:34:56.789, 2024-01-02T03:04:05.678, 2024-01-02T03:04:05.123456789, \
             2023-11-14T22:13:20.123Z, [1, 2], {a=1}, +I[7, x], 2024-01-01]",
            "+I[2, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, \
             null, null, 2024-01-02]",
        ]
    );
}

#[test]
fn weir_reads_a_file_pyarrow_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let partition = dir.path().join("in/dt=x");
    std::fs::create_dir_all(&partition).unwrap();
    pyarrow_io(&["write", &partition.join("data.parquet").display().to_string()]);
    let sql = format!(
        "CREATE TABLE t (id INT, big BIGINT, name STRING, price DECIMAL(10, 2), day DATE, ts TIMESTAMP(3), \
         tags ARRAY<INT>, attrs MAP<STRING, INT>, point ROW<x DOUBLE, y STRING>, missing STRING, dt STRING) \
         PARTITIONED BY (dt) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'parquet', \
         'parquet.utc-timezone' = 'true');\n\
         SELECT * FROM t;\n",
        dir.path().join("in").display()
    );
    assert_eq!(
        run(&sql, 1),
        [
            "+I[1, 1000000000000, ada, 12.34, 2024-02-29, 2024-01-02T03:04:05.678, [1, 2], {a=1}, +I[1.5, p], null, x]",
            "+I[2, -5, , -0.01, 1969-12-31, 1960-01-01T00:00, [], {}, +I[null, null], null, x]",
            "+I[null, null, null, null, null, null, null, null, null, null, x]",
        ]
    );
    // A column of another type than the file's is refused, naming the file and the column.
    let wrong = format!(
        "CREATE TABLE w (name DATE) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'parquet');\n\
         SELECT * FROM w;\n",
        dir.path().join("in").display()
    );
    let out = Buffer::default();
    let mut session = Session::new(RuntimeConfig::default(), ConnectorRegistry::default(), Box::new(out));
    let error = session.execute_script(&wrong).unwrap_err().error.to_string();
    assert!(error.contains("data.parquet") && error.contains("column 'name' cannot be read as DATE"), "{error}");
    // Nor is a column read through a conversion Flink's Parquet format does not make: an INT64
    // as INT or as TIMESTAMP(3), an INT32 as BIGINT, a DECIMAL(10, 2) as DECIMAL(12, 1), a
    // DOUBLE as INT. A column named in another case is another column (NULL), as in Flink.
    for (declared, holds) in [
        ("big INT", "INT64 values"),
        ("big TIMESTAMP(3)", "INT64 values"),
        ("id BIGINT", "INT32 values"),
        ("price DECIMAL(12, 1)", "DECIMAL(10, 2) values"),
        ("point ROW<x INT, y STRING>", "DOUBLE values"),
    ] {
        let column = declared.split(' ').next().unwrap();
        let wrong = format!(
            "CREATE TABLE w ({declared}) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'parquet');\n\
             SELECT * FROM w;\n",
            dir.path().join("in").display()
        );
        let mut session =
            Session::new(RuntimeConfig::default(), ConnectorRegistry::default(), Box::new(Buffer::default()));
        let error = session.execute_script(&wrong).unwrap_err().error.to_string();
        assert!(
            error.contains("data.parquet")
                && error.contains(&format!("column '{column}' cannot be read as"))
                && error.contains(holds),
            "{declared}: {error}"
        );
    }
    let other_case = format!(
        "CREATE TABLE c (ID INT, Big BIGINT, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', \
         'path' = '{}', 'format' = 'parquet');\n\
         SELECT * FROM c;\n",
        dir.path().join("in").display()
    );
    assert_eq!(run(&other_case, 1), ["+I[null, null, x]", "+I[null, null, x]", "+I[null, null, x]"]);
}

/// `n` rows `(id, k, v)` through datagen's sequence, written into a Parquet table partitioned by
/// `k`, whose files roll every 4 KB; then read back at another parallelism.
#[test]
fn weir_reads_back_what_it_wrote_at_every_parallelism() {
    for (writers, readers) in [(1, 4), (2, 1), (4, 2)] {
        let dir = tempfile::tempdir().unwrap();
        let table = format!(
            "CREATE TABLE seq (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', \
             'fields.id.start' = '1', 'fields.id.end' = '20000');\n\
             CREATE TABLE p (id BIGINT, v STRING, k INT) PARTITIONED BY (k) WITH ('connector' = 'filesystem', \
             'path' = '{}', 'format' = 'parquet', 'sink.rolling-policy.file-size' = '4kb', \
             'parquet.block.size' = '2kb');\n",
            dir.path().display()
        );
        run(
            &format!(
                "{table}INSERT INTO p SELECT id, CONCAT('v', CAST(id AS STRING)), CAST(id % 3 AS INT) FROM seq;\n"
            ),
            writers,
        );
        let files = std::fs::read_dir(dir.path().join("k=0")).unwrap().count();
        assert!(files > 3, "{files} files: the rolling policy should have closed several");
        let read = run(
            &format!(
                "{table}SET 'execution.runtime-mode' = 'batch';\n\
                 SELECT k, COUNT(*), SUM(id), COUNT(DISTINCT v), MIN(v) FROM p GROUP BY k;\n"
            ),
            readers,
        );
        let expected: Vec<String> = (0..3)
            .map(|k| {
                let ids: Vec<i64> = (1..=20_000).filter(|i| i % 3 == k).collect();
                let least = ids.iter().map(|i| format!("v{i}")).min().unwrap();
                format!("+I[{k}, {}, {}, {}, {least}]", ids.len(), ids.iter().sum::<i64>(), ids.len())
            })
            .collect();
        assert_eq!(read, expected, "written at parallelism {writers}, read at {readers}");
    }
}

/// The checkpointed job over the Parquet files of `dir/input`: the rows with `v < 10` into a
/// Parquet table partitioned by `k % 7` whose files roll every 16 KB, and a count and sum per
/// key into a managed table.
fn crash_job(dir: &Path) -> String {
    let d = dir.display();
    format!(
        "SET 'table.store.path' = '{d}/store';\n\
         SET 'execution.checkpointing.interval' = '200 ms';\n\
         SET 'execution.checkpointing.dir' = '{d}/checkpoints';\n\
         CREATE TABLE src (id BIGINT, k INT, v INT, ts TIMESTAMP(3)) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/input', 'format' = 'parquet');\n\
         CREATE TABLE kept (id BIGINT, v INT, bucket INT) PARTITIONED BY (bucket) WITH (\n\
           'connector' = 'filesystem', 'path' = '{d}/kept', 'format' = 'parquet',\n\
           'sink.rolling-policy.file-size' = '16kb');\n\
         CREATE TABLE IF NOT EXISTS totals (k INT, n BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED);\n\
         EXECUTE STATEMENT SET BEGIN\n\
         INSERT INTO kept SELECT id, v, k % 7 FROM src WHERE v < 10;\n\
         INSERT INTO totals SELECT k, COUNT(*), SUM(CAST(v AS BIGINT)) FROM src GROUP BY k;\n\
         END;\n"
    )
}

/// What the job of `dir` wrote: the Parquet table's rows and the managed table's, read back.
fn crash_results(dir: &Path) -> (Vec<String>, Vec<String>) {
    let d = dir.display();
    let read = |query: &str| {
        run(
            &format!(
                "SET 'table.store.path' = '{d}/store';\nSET 'execution.runtime-mode' = 'batch';\n\
                 CREATE TABLE kept (id BIGINT, v INT, bucket INT) PARTITIONED BY (bucket) WITH (\n\
                   'connector' = 'filesystem', 'path' = '{d}/kept', 'format' = 'parquet');\n{query}\n"
            ),
            2,
        )
    };
    (read("SELECT id, v, bucket FROM kept;"), read("SELECT k, n, s FROM totals;"))
}

#[test]
fn a_parquet_job_killed_at_random_moments_and_resumed_writes_every_row_once() {
    const ROWS: u64 = 600_000;
    let dir = tempfile::tempdir().unwrap();
    let (mut kept, mut totals) = (Vec::new(), std::collections::BTreeMap::<u64, (u64, u64)>::new());
    let mut csv = String::new();
    for event in common::events::events(ROWS, 1_000, 0x9e37_79b9_7f4a_7c15) {
        csv.push_str(&event.line());
        if event.v < 10 {
            kept.push(format!("+I[{}, {}, {}]", event.id, event.v, event.k % 7));
        }
        let total = totals.entry(event.k).or_default();
        *total = (total.0 + 1, total.1 + event.v);
    }
    kept.sort();
    let mut totals: Vec<String> = totals.iter().map(|(k, (n, s))| format!("+I[{k}, {n}, {s}]")).collect();
    totals.sort();
    // The input as Parquet files of several row groups each, written by weir.
    std::fs::write(dir.path().join("input.csv"), csv).unwrap();
    let d = dir.path().display();
    run(
        &format!(
            "CREATE TABLE csv (id BIGINT, k INT, v INT, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', \
             'path' = '{d}/input.csv', 'format' = 'csv');\n\
             CREATE TABLE input (id BIGINT, k INT, v INT, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', \
             'path' = '{d}/input', 'format' = 'parquet', 'sink.rolling-policy.file-size' = '2mb', \
             'parquet.block.size' = '256kb');\n\
             INSERT INTO input SELECT * FROM csv;\n"
        ),
        3,
    );
    assert!(std::fs::read_dir(dir.path().join("input")).unwrap().count() >= 3);
    // The same job, uninterrupted, over a copy of the input.
    let whole = tempfile::tempdir().unwrap();
    std::fs::create_dir(whole.path().join("input")).unwrap();
    for file in std::fs::read_dir(dir.path().join("input")).unwrap() {
        let file = file.unwrap();
        std::fs::copy(file.path(), whole.path().join("input").join(file.file_name())).unwrap();
    }
    std::fs::write(dir.path().join("job.sql"), crash_job(dir.path())).unwrap();
    std::fs::write(whole.path().join("job.sql"), crash_job(whole.path())).unwrap();
    let uninterrupted = common::weir_job(whole.path(), &["-p", "2"]);
    let resume = |parallelism: usize| common::weir_job(dir.path(), &["--resume", "-p", &parallelism.to_string()]);
    common::kill_until_done(10, 0x2545_f491_4f6c_dd1d, 100..900, |runs| resume([2, 1, 3][runs % 3]));
    let output = uninterrupted.wait_with_output().unwrap();
    assert!(output.status.success(), "uninterrupted: {}", String::from_utf8_lossy(&output.stderr));

    let (rows, sums) = crash_results(dir.path());
    let (whole_rows, whole_sums) = crash_results(whole.path());
    assert!(rows == whole_rows, "the Parquet sink's rows differ from an uninterrupted run's");
    assert!(sums == whole_sums, "the totals differ from an uninterrupted run's");
    assert_eq!(rows.len(), kept.len(), "rows lost or written twice");
    assert!(rows == kept, "the Parquet sink's rows differ from the input's");
    assert!(sums == totals, "the totals differ from the input's");
}
