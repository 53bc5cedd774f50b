//! `weir run` killed at random points while a script merges rows into a managed table: after
//! every kill, each INSERT that had returned is in the table exactly once, in order, and no
//! INSERT is half applied.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const KILLS: usize = 20;
const STATEMENTS_PER_RUN: usize = 150;

/// A script whose statement `s` of run `run` adds one to `n` of keys 1 and 2 and appends its
/// name to their `log`, then prints `ack <name>` once the INSERT has returned.
fn script(dir: &Path, run: usize) -> String {
    let mut sql = format!(
        "SET 'table.store.path' = '{}';\n\
         SET 'sql-client.execution.result-mode' = 'changelog';\n\
         CREATE TABLE IF NOT EXISTS counters (k INT, n BIGINT, log STRING, PRIMARY KEY (k) NOT ENFORCED) WITH (\n\
           'table.merge-engine' = 'aggregation', 'fields.n.agg' = 'sum', 'fields.log.agg' = 'listagg');\n",
        dir.display()
    );
    for s in 0..STATEMENTS_PER_RUN {
        let name = format!("r{run}s{s}");
        sql.push_str(&format!(
            "INSERT INTO counters VALUES (1, 1, '{name}'), (2, 1, '{name}');\nSELECT 'ack {name}';\n"
        ));
    }
    sql
}

/// The rows of `counters` in data directory `dir` as `(k, n, log)`, read by `weir run` in batch
/// mode from a script written to `scratch`.
fn read_counters(dir: &Path, scratch: &Path) -> Vec<(i64, i64, Vec<String>)> {
    let file = scratch.join("read.sql");
    std::fs::write(
        &file,
        format!(
            "SET 'table.store.path' = '{}';\nSET 'execution.runtime-mode' = 'batch';\n\
             SET 'sql-client.execution.result-mode' = 'changelog';\nSELECT k, n, log FROM counters;\n",
            dir.display()
        ),
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_weir")).arg("run").arg(&file).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    let mut rows: Vec<(i64, i64, Vec<String>)> = text
        .lines()
        .filter_map(|l| l.strip_prefix("+I[")?.strip_suffix(']').map(str::to_string))
        .map(|row| {
            let mut parts = row.splitn(3, ", ");
            let k = parts.next().unwrap().parse().unwrap();
            let n = parts.next().unwrap().parse().unwrap();
            let log = parts.next().unwrap().split(',').map(str::to_string).collect();
            (k, n, log)
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn statements_that_returned_survive_kills_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut expected_before: Vec<String> = Vec::new();
    let mut random = 0x2545_f491_4f6c_dd1d_u64;
    for run in 0..KILLS {
        let file = dir.path().join(format!("run{run}.sql"));
        std::fs::write(&file, script(&data, run)).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_weir"))
            .arg("run")
            .arg(&file)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Acknowledgements arrive on another thread while this one picks the moment to kill.
        let stdout = child.stdout.take().unwrap();
        let (sender, acks) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(name) = line.strip_prefix("+I[ack ").and_then(|l| l.strip_suffix(']')) {
                    let _ = sender.send(name.to_string());
                }
            }
        });
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        // Wait for 1 to 60 acknowledgements, then for up to 3 ms more, and kill.
        let wanted = 1 + (random % 60) as usize;
        let mut acknowledged = Vec::new();
        while acknowledged.len() < wanted {
            match acks.recv_timeout(Duration::from_secs(30)) {
                Ok(name) => acknowledged.push(name),
                Err(e) => panic!("run {run}: no acknowledgement from weir run: {e}"),
            }
        }
        std::thread::sleep(Duration::from_micros(random % 3000));
        child.kill().unwrap();
        child.wait().unwrap();
        reader.join().unwrap();
        acknowledged.extend(acks.try_iter());

        let rows = read_counters(&data, dir.path());
        assert_eq!(rows.len(), 2, "run {run}: {rows:?}");
        let (log, other) = (&rows[0].2, &rows[1].2);
        assert_eq!(log, other, "run {run}: a statement was half applied");
        assert_eq!(rows[0].1, log.len() as i64, "run {run}: count and log disagree");
        // Earlier runs' statements, then this run's from its first, in order, each once; at least
        // up to the last one acknowledged.
        assert_eq!(&log[..expected_before.len()], &expected_before[..], "run {run}: earlier statements changed");
        let this_run: Vec<String> = (0..log.len() - expected_before.len()).map(|s| format!("r{run}s{s}")).collect();
        assert_eq!(
            &log[expected_before.len()..],
            &this_run[..],
            "run {run}: statements missing, repeated or reordered"
        );
        assert!(this_run.len() >= acknowledged.len(), "run {run}: acknowledged {acknowledged:?}, stored {this_run:?}");
        eprintln!("run {run}: {} statements acknowledged, {} stored", acknowledged.len(), this_run.len());
        expected_before = log.clone();
    }
}
