//! The `kafka` connector when the broker misbehaves, each on a broker of its own that the test
//! kills, restarts or configures: the broker killed and restarted mid-job, a topic deleted
//! mid-job, and transaction timeouts the broker enforces. Each outcome is the one
//! docs/connectors.md states.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::kafka::{assert_each_once, copies, Broker};

/// Input records `id,v`; the job keeps those with `v < 10` (half).
fn input(rows: usize) -> Vec<String> {
    (0..rows).map(|id| format!("{id},{}", id % 20)).collect()
}

fn kept(lines: &[String]) -> Vec<String> {
    lines.iter().filter(|l| l.rsplit(',').next().unwrap().parse::<u32>().unwrap() < 10).cloned().collect()
}

/// A filter from `input` into `output` with an exactly-once sink; `sink` adds sink options.
fn filter_job(dir: &Path, bootstrap: &str, input: &str, output: &str, interval: &str, sink: &str) -> String {
    format!(
        "SET 'execution.checkpointing.interval' = '{interval}';\n\
         SET 'execution.checkpointing.dir' = '{d}/checkpoints';\n\
         CREATE TABLE src (id BIGINT, v INT) WITH ('connector' = 'kafka', 'topic' = '{input}',\n\
           'properties.bootstrap.servers' = '{bootstrap}', 'scan.startup.mode' = 'earliest-offset',\n\
           'scan.bounded.mode' = 'latest-offset', 'format' = 'csv');\n\
         CREATE TABLE out (id BIGINT, v INT) WITH ('connector' = 'kafka', 'topic' = '{output}',\n\
           'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'csv',\n\
           'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'f-{output}'{sink});\n\
         INSERT INTO out SELECT id, v FROM src WHERE v < 10;\n",
        d = dir.display()
    )
}

fn start_job(dir: &Path, resume: bool) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_weir"));
    command.arg("run");
    if resume {
        command.arg("--resume");
    }
    command.arg(dir.join("job.sql")).current_dir(dir).stdout(Stdio::null()).stderr(Stdio::piped());
    command.spawn().unwrap()
}

/// Waits for `child` at most `limit`: its success and standard error; fails on a hang.
fn finish(child: Child, limit: Duration) -> (bool, String) {
    let id = child.id();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(child.wait_with_output());
    });
    match receive.recv_timeout(limit) {
        Ok(output) => {
            let output = output.unwrap();
            (output.status.success(), String::from_utf8_lossy(&output.stderr).into_owned())
        }
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &id.to_string()]).status();
            panic!("the job neither finished nor failed within {limit:?}");
        }
    }
}

/// How often each record is in `topic` for a `read_committed` reader.
fn committed(broker: &Broker, topic: &str) -> BTreeMap<String, usize> {
    let values: Vec<String> = broker.read_all(topic, true).into_iter().map(|(_, v)| v).collect();
    copies(&values)
}

/// The broker killed (`kill -9`) while an exactly-once job reads and writes, and started again
/// a few seconds later: the job goes on once the broker is back (librdkafka reconnects; a
/// commit waits for it), or, if a commit could not wait, fails with an error naming the sink
/// and the broker's answer; resumed from its last checkpoint, it writes every record once.
#[test]
fn a_job_outlives_the_broker_killed_and_restarted_and_writes_every_record_once() {
    let broker = Broker::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    broker.create_topic("in", 2);
    broker.create_topic("out", 2);
    let lines = input(200_000);
    broker.produce("in", &lines, |i| (i % 2) as i32);
    std::fs::write(dir.path().join("job.sql"), filter_job(dir.path(), &broker.bootstrap, "in", "out", "300 ms", ""))
        .unwrap();
    let job = start_job(dir.path(), false);
    std::thread::sleep(Duration::from_millis(1500));
    broker.kill();
    std::thread::sleep(Duration::from_secs(3));
    broker.restart();
    let (mut ok, mut stderr) = finish(job, Duration::from_secs(180));
    let mut resumes = 0;
    while !ok {
        eprintln!("the job failed with the broker gone: {stderr}");
        assert!(stderr.contains("Kafka"), "the error names neither Kafka nor the table: {stderr}");
        resumes += 1;
        assert!(resumes <= 3, "the job did not finish after {resumes} resumes: {stderr}");
        (ok, stderr) = finish(start_job(dir.path(), true), Duration::from_secs(180));
    }
    eprintln!("finished after {resumes} resumes");
    assert_each_once(&committed(&broker, "out"), &kept(&lines));
}

/// The source's topic deleted while an unbounded job reads it: the job fails within a bounded
/// time with an error that names the topic.
#[test]
fn a_topic_deleted_mid_job_fails_the_job_naming_it() {
    let broker = Broker::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    broker.create_topic("gone", 2);
    broker.produce("gone", &input(1000), |i| (i % 2) as i32);
    let sql = format!(
        "CREATE TABLE src (id BIGINT, v INT) WITH ('connector' = 'kafka', 'topic' = 'gone',\n\
           'properties.bootstrap.servers' = '{}', 'scan.startup.mode' = 'earliest-offset', 'format' = 'csv');\n\
         CREATE TABLE out (id BIGINT, v INT) WITH ('connector' = 'blackhole');\n\
         INSERT INTO out SELECT * FROM src;\n",
        broker.bootstrap
    );
    std::fs::write(dir.path().join("job.sql"), sql).unwrap();
    let job = start_job(dir.path(), false);
    std::thread::sleep(Duration::from_secs(3));
    broker.delete_topic("gone");
    let started = Instant::now();
    let (ok, stderr) = finish(job, Duration::from_secs(120));
    eprintln!("failed {:.1} s after the deletion: {stderr}", started.elapsed().as_secs_f64());
    assert!(!ok, "the job went on without its topic");
    assert!(stderr.contains("reading topic 'gone'"), "the error does not name the topic: {stderr}");
}

/// The broker's `transaction.max.timeout.ms` below the transaction timeout weir asks for: the
/// job fails at its start with the broker's answer and the option to lower. Within the limit,
/// a checkpoint interval far longer than the timeout loses nothing: weir opens a checkpoint's
/// transaction only when the checkpoint completes and commits it at once, so no transaction is
/// open while the job waits for a checkpoint.
#[test]
fn transaction_timeouts_are_checked_at_start_and_never_expire_between_checkpoints() {
    let broker = Broker::start(&["transaction.max.timeout.ms=5000"]);
    let dir = tempfile::tempdir().unwrap();
    broker.create_topic("in", 1);
    broker.create_topic("out", 1);
    let lines = input(2000);
    broker.produce("in", &lines, |_| 0);
    // librdkafka asks for transaction.timeout.ms = 60000 unless told otherwise.
    std::fs::write(dir.path().join("job.sql"), filter_job(dir.path(), &broker.bootstrap, "in", "out", "1 s", ""))
        .unwrap();
    let (ok, stderr) = finish(start_job(dir.path(), false), Duration::from_secs(120));
    assert!(!ok, "a transaction timeout above the broker's maximum was accepted");
    assert!(stderr.contains("transaction.timeout.ms"), "the error does not name the option: {stderr}");
    // A one-second transaction timeout and checkpoints every eight seconds.
    let dir = tempfile::tempdir().unwrap();
    let sink = ", 'properties.transaction.timeout.ms' = '1000'";
    std::fs::write(dir.path().join("job.sql"), filter_job(dir.path(), &broker.bootstrap, "in", "out", "8 s", sink))
        .unwrap();
    let (ok, stderr) = finish(start_job(dir.path(), false), Duration::from_secs(120));
    assert!(ok, "{stderr}");
    assert_each_once(&committed(&broker, "out"), &kept(&lines));
}
