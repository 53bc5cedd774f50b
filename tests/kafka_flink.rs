//! weir beside Apache Flink 2.3 over the same Kafka records (`tests/kafka_flink/`): each case's
//! write part ran on Flink with Flink's own Kafka connector and formats, and its records
//! (`CASE.records`, bytes as Flink's encoders wrote them) and what Flink's read part printed
//! over them (`CASE.flink.out`) are committed, as are the records weir's encoders write for the
//! same write part (`CASE.weir.records`) and what Flink printed over those
//! (`CASE.flink-of-weir.out`). `tests/kafka_flink/bless.py` writes them all.
//!
//! Here weir reads Flink's records at parallelism 1, 2 and 4 and must print what Flink printed;
//! and weir's encoders must still write the records Flink was shown to read as its own.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::conformance::compare;
use common::kafka::{broker, Record};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kafka_flink")
}

/// Every case: the names of the `.sql` files.
fn cases() -> Vec<String> {
    let mut cases: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.strip_suffix(".sql").map(str::to_string))
        .collect();
    cases.sort();
    cases
}

/// A case's partitions (`-- partitions: N`), write part and read part (after `-- read`).
fn parts(case: &str) -> (i32, String, String) {
    let text = std::fs::read_to_string(dir().join(format!("{case}.sql"))).unwrap();
    let (head, rest) = text.split_once('\n').unwrap();
    let partitions = head.rsplit(':').next().unwrap().trim().parse().unwrap();
    let (write, read) = rest.split_once("-- read\n").unwrap();
    (partitions, write.to_string(), read.to_string())
}

fn fill(sql: &str, topic: &str, bootstrap: &str) -> String {
    sql.replace("{topic}", topic).replace("{bootstrap}", bootstrap)
}

fn read(case: &str, name: &str) -> String {
    std::fs::read_to_string(dir().join(format!("{case}.{name}"))).unwrap()
}

/// Runs `sql` with `weir run -p parallelism`: its standard output, or the failure.
fn weir(work: &Path, sql: &str, parallelism: usize) -> Result<String, String> {
    let script = work.join(format!("script-{}.sql", rand::random::<u32>()));
    std::fs::write(&script, sql).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["run", "-p", &parallelism.to_string()])
        .arg(&script)
        .current_dir(work)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    if output.status.success() {
        Ok(text(&output.stdout))
    } else {
        Err(text(&output.stderr))
    }
}

/// Printed rows without the `N> ` a print sink of several subtasks puts before each (Flink's
/// outputs were printed by one).
fn without_subtasks(printed: &str) -> String {
    let line = |l: &str| match l.split_once("> ") {
        Some((n, row)) if n.chars().all(|c| c.is_ascii_digit()) => row.to_string(),
        _ => l.to_string(),
    };
    printed.lines().map(|l| line(l) + "\n").collect()
}

/// A line of a `.records` file: partition, timestamp, key, value, headers (hex; `-`: none,
/// `''`: no bytes).
fn parse_record(line: &str) -> Record {
    let bytes = |hex: &str| match hex {
        "-" => None,
        "''" => Some(Vec::new()),
        hex => Some((0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect()),
    };
    let fields: Vec<&str> = line.split('\t').collect();
    let headers = match fields[4] {
        "-" => Vec::new(),
        list => list.split(',').map(|h| h.split_once('=').unwrap()).map(|(k, v)| (k.to_string(), bytes(v))).collect(),
    };
    Record {
        partition: fields[0].parse().unwrap(),
        timestamp: fields[1].parse().unwrap(),
        key: bytes(fields[2]),
        value: bytes(fields[3]),
        headers,
    }
}

fn records(case: &str, name: &str) -> Vec<Record> {
    read(case, name).lines().filter(|l| !l.is_empty()).map(parse_record).collect()
}

/// What a reader sees of `records` whatever the partitioning and the clock: key, value and
/// headers, counted.
fn contents(records: &[Record]) -> BTreeMap<String, usize> {
    let mut counted = BTreeMap::new();
    for r in records {
        let text = format!("{:?} {:?} {:?}", r.key, r.value, r.headers);
        *counted.entry(text).or_insert(0) += 1;
    }
    counted
}

#[test]
fn weir_reads_the_records_flinks_encoders_wrote_as_flink_reads_them() {
    let broker = broker();
    let work = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for case in cases() {
        let (partitions, _, read_part) = parts(&case);
        let topic = format!("{case}-flink-{:08x}", rand::random::<u32>());
        broker.create_topic(&topic, partitions);
        broker.produce_records(&topic, &records(&case, "records"));
        let expected = read(&case, "flink.out");
        for p in [1, 2, 4] {
            let outcome = weir(work.path(), &fill(&read_part, &topic, &broker.bootstrap), p)
                .and_then(|printed| compare(&case, &without_subtasks(&printed), &expected, false));
            if let Err(e) = outcome {
                failures.push(format!("{case} at parallelism {p}: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn weir_writes_the_records_flink_was_shown_to_read_as_its_own() {
    let broker = broker();
    let work = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for case in cases() {
        // What Flink printed over weir's records is what it printed over its own.
        if let Err(e) = compare(&case, &read(&case, "flink-of-weir.out"), &read(&case, "flink.out"), false) {
            failures.push(format!("{case}: Flink reads weir's records otherwise than its own: {e}"));
        }
        let (partitions, write_part, _) = parts(&case);
        let topic = format!("{case}-weir-{:08x}", rand::random::<u32>());
        broker.create_topic(&topic, partitions);
        if let Err(e) = weir(work.path(), &fill(&write_part, &topic, &broker.bootstrap), 1) {
            failures.push(format!("{case}: the write part failed: {e}"));
            continue;
        }
        let written = broker.read_records(&topic, true);
        if contents(&written) != contents(&records(&case, "weir.records")) {
            failures.push(format!("{case}: weir writes other records than those Flink was shown"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
