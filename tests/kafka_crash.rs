//! `weir run` reading a topic and writing a topic on a real Apache Kafka broker, killed with
//! `kill -9` at random moments and restarted with `--resume` at another parallelism each time
//! (3, 1, 2, …), in two job shapes: a filter into a `kafka` sink, and a GROUP BY count into an
//! `upsert-kafka` sink. With `exactly-once`, a `read_committed` reader of the output sees every
//! expected record exactly once and none of an aborted transaction; with `at-least-once`, none
//! is lost.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use common::kafka::{assert_each_once, broker, copies, Broker};

/// Input records; sized so that a run on a fast machine outlasts twelve kills.
const ROWS: usize = 200_000;
const KILLS: usize = 12;
/// The keys of the count shape: `k = id % KEYS`.
const KEYS: usize = 7;

/// Input records `id,k,v`: `v` cycles through 0..20, so the filter `v < 10` keeps half.
fn input(rows: usize) -> Vec<String> {
    (0..rows).map(|id| format!("{id},{},{}", id % KEYS, id % 20)).collect()
}

/// What the job does between the source and the sink.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// `SELECT id, k, v WHERE v < 10` into a `kafka` sink (csv values) or files.
    Filter,
    /// `SELECT k, COUNT(*) GROUP BY k` into an `upsert-kafka` sink (csv key and value): without
    /// mini-batch every input record updates its key's count by one.
    Count,
}

fn script(dir: &Path, bootstrap: &str, input: &str, output: &str, shape: Shape, delivery: &str) -> String {
    let d = dir.display();
    let kafka = format!(
        "'topic' = '{output}', 'properties.bootstrap.servers' = '{bootstrap}',\n\
           'sink.delivery-guarantee' = '{delivery}', 'sink.transactional-id-prefix' = 'crash-{output}'"
    );
    let (sink, query) = match (shape, delivery) {
        // The filesystem sink's files are exactly-once: they check the source's restored offsets.
        (Shape::Filter, "files") => (
            format!(
                "(id BIGINT, k INT, v INT) WITH ('connector' = 'filesystem', 'path' = '{d}/out', 'format' = 'csv')"
            ),
            "SELECT id, k, v FROM src WHERE v < 10",
        ),
        (Shape::Filter, _) => (
            format!("(id BIGINT, k INT, v INT) WITH ('connector' = 'kafka', 'format' = 'csv', {kafka})"),
            "SELECT id, k, v FROM src WHERE v < 10",
        ),
        (Shape::Count, _) => (
            format!(
                "(k INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',\n\
                   'key.format' = 'csv', 'value.format' = 'csv', {kafka})"
            ),
            "SELECT k, COUNT(*) FROM src GROUP BY k",
        ),
    };
    format!(
        "SET 'execution.checkpointing.interval' = '200 ms';\n\
         SET 'execution.checkpointing.dir' = '{d}/checkpoints';\n\
         CREATE TABLE src (id BIGINT, k INT, v INT) WITH ('connector' = 'kafka', 'topic' = '{input}',\n\
           'properties.bootstrap.servers' = '{bootstrap}', 'properties.group.id' = 'crash-{input}',\n\
           'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'csv');\n\
         CREATE TABLE out {sink};\n\
         INSERT INTO out {query};\n"
    )
}

/// Runs the job until it finishes, killing it `KILLS` times at random moments first; each
/// restart resumes from the newest checkpoint at parallelism 3, 1 and 2 in turn.
fn kill_and_resume(dir: &Path, seed: u64, pause_ms: std::ops::Range<u64>) {
    common::kill_until_done(KILLS, seed, pause_ms, |runs| {
        Command::new(env!("CARGO_BIN_EXE_weir"))
            .args(["run", "--resume", "-p", &[3, 1, 2][(runs - 1) % 3].to_string()])
            .arg(dir.join("job.sql"))
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    });
}

/// A finished crash loop: the job's directory, the output topic and the input records.
struct Loop {
    dir: tempfile::TempDir,
    broker: &'static Broker,
    output: String,
    lines: Vec<String>,
}

/// Runs the crash loop of `shape` into `delivery` ("files", "at-least-once", "exactly-once").
fn crash_loop(shape: Shape, delivery: &str, seed: u64) -> Loop {
    let broker = broker();
    let dir = tempfile::tempdir().unwrap();
    let suffix = format!("{:08x}", rand::random::<u32>());
    let (input_topic, output) = (format!("crash-in-{suffix}"), format!("crash-out-{suffix}"));
    broker.create_topic(&input_topic, 4);
    broker.create_topic(&output, 3);
    // Without transactions the job is fast: a longer input leaves time for all the kills.
    let lines = input(if delivery == "exactly-once" { ROWS } else { 4 * ROWS });
    broker.produce(&input_topic, &lines, |i| (i % 4) as i32);
    std::fs::write(
        dir.path().join("job.sql"),
        script(dir.path(), &broker.bootstrap, &input_topic, &output, shape, delivery),
    )
    .unwrap();
    // The filesystem sink is fast: shorter runs leave time for all the kills.
    let pause_ms = if delivery == "files" { 100..450 } else { 150..850 };
    kill_and_resume(dir.path(), seed, pause_ms);
    Loop { dir, broker, output, lines }
}

/// The input records the filter keeps.
fn kept(lines: &[String]) -> Vec<String> {
    lines.iter().filter(|l| l.rsplit(',').next().unwrap().parse::<u32>().unwrap() < 10).cloned().collect()
}

/// Tells how many records of aborted transactions a `read_uncommitted` reader sees beside
/// the committed ones. The rows of a checkpoint go to Kafka only while its transaction
/// commits, so a kill lands inside one now and then, not always: how often is reported, not
/// checked.
fn report_aborted(broker: &Broker, output: &str, committed: usize) {
    let all = broker.read_all(output, false).len();
    eprintln!("{committed} committed records, {} of aborted transactions", all - committed);
}

#[test]
fn exactly_once_writes_every_record_once_across_kill_9_and_resume() {
    let run = crash_loop(Shape::Filter, "exactly-once", 0x9e37_79b9_7f4a_7c15);
    let values: Vec<String> = run.broker.read_all(&run.output, true).into_iter().map(|(_, v)| v).collect();
    assert_each_once(&copies(&values), &kept(&run.lines));
    report_aborted(run.broker, &run.output, values.len());
}

/// Every input record raises its key's count by one, and the checkpointed count restores with
/// the source's offsets: a `read_committed` reader sees each count 1, 2, …, n of each key exactly
/// once, in order per key (one partition per key).
#[test]
fn an_exactly_once_aggregate_writes_each_count_once_across_kill_9_and_resume() {
    let run = crash_loop(Shape::Count, "exactly-once", 0x6a09_e667_f3bc_c908);
    let records = run.broker.read_all(&run.output, true);
    let mut counts: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (key, value) in &records {
        let key = key.clone().expect("upsert-kafka writes the key");
        // The value holds every column (`value.fields-include` = ALL): `k,n`.
        let count = value.rsplit(',').next().and_then(|n| n.parse().ok());
        counts.entry(key).or_default().push(count.unwrap_or_else(|| panic!("not `k,n`: {value:?}")));
    }
    for k in 0..KEYS {
        let n = run.lines.iter().filter(|l| l.split(',').nth(1) == Some(&k.to_string())).count() as u64;
        let written = counts.remove(&k.to_string()).unwrap_or_default();
        let expected: Vec<u64> = (1..=n).collect();
        if written != expected {
            panic!("key {k}: {n} records, counts written (as runs): {}", runs(&written));
        }
    }
    assert!(counts.is_empty(), "keys that are not in the input: {:?}", counts.keys());
    report_aborted(run.broker, &run.output, records.len());
}

/// `values` as runs of consecutive numbers: `1..=40, 37..=90`.
fn runs(values: &[u64]) -> String {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &v in values {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == v => *end = v,
            _ => runs.push((v, v)),
        }
    }
    runs.iter().map(|(a, b)| format!("{a}..={b}")).collect::<Vec<_>>().join(", ")
}

#[test]
fn at_least_once_loses_nothing_across_kill_9_and_resume() {
    let run = crash_loop(Shape::Filter, "at-least-once", 0x2545_f491_4f6c_dd1d);
    let values: Vec<String> = run.broker.read_all(&run.output, false).into_iter().map(|(_, v)| v).collect();
    let copies = copies(&values);
    let expected = kept(&run.lines);
    let missing: Vec<&String> = expected.iter().filter(|r| !copies.contains_key(*r)).take(3).collect();
    assert!(missing.is_empty(), "missing: {missing:?}");
    assert_eq!(copies.len(), expected.len(), "records that the filter drops were written");
}

/// The source's offsets are exactly-once state: into the filesystem sink (exactly-once), every
/// record the filter keeps is there once after the kills and resumes at parallelism 1 to 3.
#[test]
fn the_sources_offsets_restore_exactly_across_kill_9_and_rescaling() {
    let run = crash_loop(Shape::Filter, "files", 0x5851_f42d_4c95_7f2d);
    let rows = common::sink_rows(&run.dir.path().join("out"));
    assert_each_once(&copies(&rows), &kept(&run.lines));
}
