//! The conformance suite over Kafka: each case's files are loaded into topics of their own
//! (one partition, in file order, as one subtask reads a file), the case's `filesystem` tables
//! become bounded `kafka` tables over them, and the output must equal Apache Flink's for the
//! files at parallelism 1, 2 and 4. A tumbling window over a topic of four partitions, one of
//! them idle, fires as a from-scratch count of the rows says while the job runs on.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::conformance::{compare, EXPECTED_TO_PASS};
use common::kafka::broker;

/// `'connector' = 'filesystem', 'path' = 'data/F', 'format' = 'X'` in `script`, by data file.
fn file_tables(script: &str) -> Vec<(String, String, String)> {
    let pattern =
        regex::Regex::new(r"'connector' = 'filesystem', 'path' = 'data/([^']+)', 'format' = '([a-z]+)'").unwrap();
    pattern.captures_iter(script).map(|c| (c[0].to_string(), c[1].to_string(), c[2].to_string())).collect()
}

#[test]
fn conformance_cases_read_from_topics_match_flink() {
    let broker = broker();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let work = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in EXPECTED_TO_PASS {
        let script = std::fs::read_to_string(dir.join(format!("{case}.sql"))).unwrap();
        let tables = file_tables(&script);
        if tables.is_empty() {
            continue;
        }
        let mut rewritten = script.clone();
        for (clause, file, format) in tables {
            let topic = format!("{case}-{}-{:08x}", file.replace(['.', '/'], "-"), rand::random::<u32>());
            broker.create_topic(&topic, 1);
            let text = std::fs::read_to_string(dir.join("data").join(&file)).unwrap();
            let lines: Vec<String> = text.lines().filter(|l| !l.is_empty()).map(str::to_string).collect();
            broker.produce(&topic, &lines, |_| 0);
            let kafka = format!(
                "'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{}', \
                 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = '{format}'",
                broker.bootstrap
            );
            rewritten = rewritten.replace(&clause, &kafka);
        }
        let script_path = work.path().join(format!("{case}.sql"));
        std::fs::write(&script_path, &rewritten).unwrap();
        let expected = std::fs::read_to_string(dir.join(format!("{case}.flink.out"))).unwrap();
        let ordered = script.lines().next().is_some_and(|l| l.contains("[ordered]"));
        ran += 1;
        for p in [1, 2, 4] {
            // From the cases' folder, so that tables not moved to topics (a lookup table's file)
            // are found where the case names them.
            let output = Command::new(env!("CARGO_BIN_EXE_weir"))
                .current_dir(&dir)
                .args(["run", script_path.to_str().unwrap(), "--parallelism", &p.to_string()])
                .output()
                .unwrap();
            let result = if output.status.success() {
                compare(case, &String::from_utf8_lossy(&output.stdout), &expected, ordered)
            } else {
                Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
            };
            if let Err(e) = result {
                failures.push(format!("{case} at parallelism {p}: {e}"));
                break;
            }
        }
    }
    assert!(ran >= 30, "only {ran} cases read files");
    assert!(failures.is_empty(), "cases over topics that differ from Flink:\n{}", failures.join("\n"));
}

/// Event times of the window test's rows: one a second, in order, from 10:00:00.
fn row_time(i: usize) -> String {
    format!("2024-01-01 10:{:02}:{:02}", i / 60, i % 60)
}

/// Per window minute and key, the number of rows `0..rows` of [`row_time`] and key `i % 5`.
fn window_counts(rows: impl Iterator<Item = usize>) -> Vec<String> {
    let mut counts = BTreeMap::new();
    for i in rows {
        *counts.entry((i / 60, i % 5)).or_insert(0) += 1;
    }
    counts.into_iter().map(|((minute, key), n)| format!("+I[2024-01-01T10:{minute:02}, {key}, {n}]")).collect()
}

/// The window test's script over `topic`: bounded or not, and with an extra column the query
/// does not read (`note STRING`, so that the scan is projected) when `unread_column`.
fn window_script(topic: &str, bootstrap: &str, bounded: bool, unread_column: bool) -> String {
    let bounded = if bounded { ", 'scan.bounded.mode' = 'latest-offset'" } else { "" };
    let note = if unread_column { ", note STRING" } else { "" };
    format!(
        "CREATE TABLE events (k INT, ts TIMESTAMP(3){note}, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) \
         WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', \
         'scan.startup.mode' = 'earliest-offset', 'format' = 'csv'{bounded});\n\
         CREATE TABLE out (window_start TIMESTAMP(3), k INT, n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'w');\n\
         INSERT INTO out SELECT window_start, k, COUNT(*) FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) \
         GROUP BY window_start, window_end, k;\n"
    )
}

/// The rows a running window job prints (without their `w> ` prefix), until `wanted` of them
/// came or 30 s passed, then whatever comes within 500 ms more (nothing should).
fn printed_windows(receive: &std::sync::mpsc::Receiver<String>, wanted: usize) -> Vec<String> {
    let strip = |l: String| l.split_once("> ").map_or(l.clone(), |(_, r)| r.to_string());
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while got.len() < wanted && Instant::now() < deadline {
        if let Ok(line) = receive.recv_timeout(Duration::from_millis(100)) {
            got.push(strip(line));
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    got.extend(receive.try_iter().map(strip));
    got.sort();
    got
}

/// Each subtask reads its partitions side by side, with a watermark per partition: no
/// partition's rows are late for another's progress, at any parallelism.
#[test]
fn a_window_over_several_partitions_counts_every_row() {
    let broker = broker();
    const ROWS: usize = 600;
    let topic = format!("partitions-{:08x}", rand::random::<u32>());
    broker.create_topic(&topic, 4);
    let lines: Vec<String> = (0..ROWS).map(|i| format!("{},{}", i % 5, row_time(i))).collect();
    broker.produce(&topic, &lines, |i| (i % 4) as i32);
    let work = tempfile::tempdir().unwrap();
    let script = work.path().join("windows.sql");
    std::fs::write(&script, window_script(&topic, &broker.bootstrap, true, false)).unwrap();
    let expected = window_counts(0..ROWS);
    // At 6, two subtasks are given no partition: they end at once.
    for p in [1, 2, 3, 4, 6] {
        let output = Command::new(env!("CARGO_BIN_EXE_weir"))
            .args(["run", script.to_str().unwrap(), "--parallelism", &p.to_string()])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let mut got: Vec<String> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|l| l.split_once("> ").map_or(l, |(_, r)| r).to_string())
            .collect();
        got.sort();
        assert_eq!(got, expected, "parallelism {p}");
    }
}

/// Rows keep coming to partitions 0 to 2 while partition 3 has none: with
/// `table.exec.source.idle-timeout`, or the table's `scan.watermark.idle-timeout`, partition 3
/// (read to its end, no records) holds no watermark back, and the windows the other
/// partitions' watermarks pass fire while the job runs on, at every parallelism (at 4, its
/// subtask, which reads it alone, is idle as a whole).
#[test]
fn a_window_over_four_partitions_fires_while_one_partition_is_idle() {
    let broker = broker();
    const ROWS: usize = 900;
    let lines: Vec<String> = (0..ROWS).map(|i| format!("{},{}", i % 5, row_time(i))).collect();
    // The windows whose end the watermark passes once every row is read (the last row's time
    // less the 5 s delay), counted from the rows themselves.
    let watermark_minute = (ROWS - 1 - 5) / 60;
    let expected = window_counts((0..ROWS).filter(|i| i / 60 < watermark_minute));
    let work = tempfile::tempdir().unwrap();
    let script = work.path().join("windows.sql");
    // At 6, two subtasks are given no partition: idle at once, they hold nothing back.
    // The second flag: the idle timeout is the table's `scan.watermark.idle-timeout`.
    for (p, by_table) in [(1, false), (2, false), (4, false), (6, false), (4, true), (3, true)] {
        let topic = format!("idle-partition-{p}-{:08x}", rand::random::<u32>());
        broker.create_topic(&topic, 4);
        broker.produce(&topic, &lines[..ROWS / 2], |i| (i % 3) as i32);
        let mut sql = window_script(&topic, &broker.bootstrap, false, false);
        let mut setting = "table.exec.source.idle-timeout=500ms";
        if by_table {
            sql = sql.replace("'format' = 'csv'", "'format' = 'csv', 'scan.watermark.idle-timeout' = '500ms'");
            setting = "table.exec.source.idle-timeout=0ms";
        }
        std::fs::write(&script, sql).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_weir"))
            .args(["run", script.to_str().unwrap(), "--parallelism", &p.to_string()])
            .args(["--set", setting])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let receive = common::stdout_lines(&mut child);
        // The rest comes 20 rows at a time, every 100 ms: partitions 0 to 2 are never idle.
        for (k, slice) in lines[ROWS / 2..].chunks(20).enumerate() {
            let first = ROWS / 2 + k * 20;
            broker.produce(&topic, slice, |i| ((first + i) % 3) as i32);
            std::thread::sleep(Duration::from_millis(100));
        }
        // Nothing beyond the watermark fires while the job runs on.
        let got = printed_windows(&receive, expected.len());
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(got, expected, "parallelism {p}, by the table's option: {by_table}");
    }
}

/// Six subtasks over four partitions, a table whose query reads only some of its columns (the
/// scan is projected), and no idle timeout: the two subtasks given no partition are idle at
/// once, projected or not, so the windows every partition's watermark passes fire while the
/// job runs. (A projected scan once hid that its subtask was idle: the windows never fired.)
#[test]
fn subtasks_without_partitions_hold_no_window_back_under_a_projection() {
    let broker = broker();
    const ROWS: usize = 600;
    let topic = format!("projected-{:08x}", rand::random::<u32>());
    broker.create_topic(&topic, 4);
    let lines: Vec<String> = (0..ROWS).map(|i| format!("{},{},unused-{i}", i % 5, row_time(i))).collect();
    broker.produce(&topic, &lines, |i| (i % 4) as i32);
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("projected.sql");
    std::fs::write(&path, window_script(&topic, &broker.bootstrap, false, true)).unwrap();
    // Every partition's watermark is past the last full minute: its windows fire.
    let expected = window_counts((0..ROWS).filter(|i| i / 60 < (ROWS - 1 - 5) / 60));
    let mut child = Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["run", path.to_str().unwrap(), "--parallelism", "6"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let receive = common::stdout_lines(&mut child);
    let got = printed_windows(&receive, expected.len());
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(got, expected);
}

/// A case with late rows, its file in a topic of one partition, at parallelism 4: the three
/// subtasks given no partition are known to emit nothing before any row moves, so which rows
/// are late does not depend on when they got their first turn. (It did: about one run in eight
/// counted a late row in a CUMULATE window it was late for.) Twenty runs, each equal to Flink's.
#[test]
fn late_rows_are_late_whatever_the_empty_subtasks_timing() {
    let broker = broker();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let case = "hop_cumulate_window";
    let script = std::fs::read_to_string(dir.join(format!("{case}.sql"))).unwrap();
    let topic = format!("late-rows-{:08x}", rand::random::<u32>());
    broker.create_topic(&topic, 1);
    let text = std::fs::read_to_string(dir.join("data/orders.csv")).unwrap();
    let lines: Vec<String> = text.lines().filter(|l| !l.is_empty()).map(str::to_string).collect();
    broker.produce(&topic, &lines, |_| 0);
    let kafka = format!(
        "'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{}', \
         'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'csv'",
        broker.bootstrap
    );
    let file = "'connector' = 'filesystem', 'path' = 'data/orders.csv', 'format' = 'csv'";
    assert!(script.contains(file));
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join(format!("{case}.sql"));
    std::fs::write(&path, script.replace(file, &kafka)).unwrap();
    let expected = std::fs::read_to_string(dir.join(format!("{case}.flink.out"))).unwrap();
    for run in 0..20 {
        let output =
            Command::new(env!("CARGO_BIN_EXE_weir")).args(["run", path.to_str().unwrap(), "-p", "4"]).output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        if let Err(e) = compare(case, &String::from_utf8_lossy(&output.stdout), &expected, false) {
            panic!("run {run}: {e}");
        }
    }
}
