//! Checkpoints in a running job: barriers from the sources, alignment at every input, and each
//! subtask's state taken at the same cut of the streams.

mod common;

use common::{collect, wait_until};
use std::time::Duration;

use weir::runtime::checkpoint::{
    storage, CheckpointConfig, CheckpointingMode, CompletedCheckpoint, StateReader, StateWriter,
};
use weir::runtime::chunk::Chunk;
use weir::runtime::graph::JobGraph;
use weir::runtime::operator::{Operator, OperatorContext, Output, Source, SourceStatus};
use weir::runtime::{job, RowKind, RuntimeConfig, ShipStrategy, Value};

/// An endless source of rows `[n % 7, n]`, 50 per poll, that checkpoints how many it sent.
struct Counting {
    sent: u64,
}

impl Source for Counting {
    fn name(&self) -> &str {
        "Counting"
    }

    fn poll_next(&mut self, _ctx: &mut OperatorContext, out: &mut Output) -> weir::runtime::Result<SourceStatus> {
        let mut chunk = Chunk::new(2);
        for _ in 0..50 {
            let n = self.sent as i64;
            chunk.push(RowKind::Insert, &[Value::BigInt(n % 7), Value::BigInt(n)]);
            self.sent += 1;
        }
        out.collect(chunk);
        Ok(SourceStatus::Ready)
    }

    fn snapshot_state(
        &mut self,
        _: u64,
        _: &mut OperatorContext,
        state: &mut StateWriter,
    ) -> weir::runtime::Result<()> {
        state.section("sent").u64(self.sent);
        Ok(())
    }
}

/// Counts the rows it sees and passes them on; checkpoints the count.
struct Tally {
    seen: u64,
}

impl Operator for Tally {
    fn name(&self) -> &str {
        "Tally"
    }

    fn process_chunk(
        &mut self,
        _: usize,
        chunk: Chunk,
        _: &mut OperatorContext,
        out: &mut Output,
    ) -> weir::runtime::Result<()> {
        self.seen += chunk.len() as u64;
        out.collect(chunk);
        Ok(())
    }

    fn snapshot_state(
        &mut self,
        _: u64,
        _: &mut OperatorContext,
        state: &mut StateWriter,
    ) -> weir::runtime::Result<()> {
        state.section("seen").u64(self.seen);
        Ok(())
    }
}

fn counter(states: &StateReader, section: &str) -> u64 {
    states.section(section).and_then(|mut s| s.u64().ok()).unwrap_or_else(|| panic!("no section {section}"))
}

/// Rows the sources had sent and rows the tallies had seen, summed over subtasks.
fn totals(checkpoint: &CompletedCheckpoint) -> (u64, u64) {
    let mut sent = 0;
    let mut seen = 0;
    for part in &checkpoint.subtasks {
        if part.vertex.starts_with("Counting") {
            sent += counter(&part.operators[0], "sent");
        } else if part.vertex.starts_with("Tally") {
            seen += counter(&part.operators[0], "seen");
        }
    }
    (sent, seen)
}

/// Two sources, hashed into three tallies (each with two input channels), into a sink.
fn job_with_checkpoints(mode: CheckpointingMode, checkpoints: usize) -> Vec<CompletedCheckpoint> {
    let mut g = JobGraph::new();
    let source = g.add_source("Counting", 2, |_| Box::new(Counting { sent: 0 }));
    let tally = g.add_operator("Tally", 3, |_| Box::new(Tally { seen: 0 }));
    let (sink, _rows) = collect(&mut g, 1);
    g.connect(source, tally, ShipStrategy::Hash(vec![0]));
    g.connect(tally, sink, ShipStrategy::Rebalance);
    let config = RuntimeConfig::default().with_worker_threads(2).with_chunk_size(64);
    let handle = job::start(g, config).unwrap();
    for n in 1..=checkpoints {
        handle.trigger_checkpoint(mode);
        wait_until("the checkpoint completes", || handle.completed_checkpoints().len() >= n);
    }
    let completed = handle.completed_checkpoints();
    handle.cancel();
    let _ = handle.wait();
    completed
}

#[test]
fn every_subtask_takes_its_part_at_the_same_cut() {
    let completed = job_with_checkpoints(CheckpointingMode::ExactlyOnce, 5);
    assert_eq!(completed.iter().map(|c| c.id).collect::<Vec<_>>(), vec![1, 2, 3, 4, 5]);
    let mut last_sent = 0;
    for checkpoint in &completed {
        // Two sources, three tallies and the sink: every subtask took its part.
        assert_eq!(checkpoint.subtasks.len(), 6, "{checkpoint:?}");
        let (sent, seen) = totals(checkpoint);
        // Aligned: the tallies counted exactly the rows the sources had sent before the barrier.
        assert_eq!(sent, seen, "checkpoint {}", checkpoint.id);
        assert!(sent >= last_sent);
        last_sent = sent;
    }
}

#[test]
fn at_least_once_never_loses_a_row_before_the_cut() {
    let completed = job_with_checkpoints(CheckpointingMode::AtLeastOnce, 3);
    for checkpoint in &completed {
        let (sent, seen) = totals(checkpoint);
        // Unaligned inputs may let rows after the barrier in, never leave one before it out.
        assert!(seen >= sent, "checkpoint {}: sent {sent}, seen {seen}", checkpoint.id);
    }
}

#[test]
fn a_job_without_state_completes_checkpoints_with_empty_parts() {
    let mut g = JobGraph::new();
    let source = g.add_source("Counting", 1, |_| Box::new(Counting { sent: 0 }));
    let (sink, _rows) = collect(&mut g, 2);
    g.connect(source, sink, ShipStrategy::Rebalance);
    let handle = job::start(g, RuntimeConfig::default().with_worker_threads(1)).unwrap();
    handle.trigger_checkpoint(CheckpointingMode::ExactlyOnce);
    wait_until("the checkpoint completes", || !handle.completed_checkpoints().is_empty());
    let checkpoint = handle.completed_checkpoints().remove(0);
    assert_eq!(checkpoint.subtasks.len(), 3);
    assert!(checkpoint
        .subtasks
        .iter()
        .filter(|p| p.vertex.starts_with("Sink"))
        .all(|p| p.operators.iter().all(StateReader::is_empty)));
    handle.cancel();
    let _ = handle.wait();
}

#[test]
fn periodic_checkpoints_are_written_and_the_newest_kept() {
    let dir = tempfile::tempdir().unwrap();
    let checkpointing = CheckpointConfig {
        interval: Some(Duration::from_millis(20)),
        num_retained: 2,
        dir: Some(dir.path().to_path_buf()),
        ..CheckpointConfig::default()
    };
    let mut g = JobGraph::new();
    let source = g.add_source("Counting", 2, |_| Box::new(Counting { sent: 0 }));
    let tally = g.add_operator("Tally", 2, |_| Box::new(Tally { seen: 0 }));
    let (sink, _rows) = collect(&mut g, 1);
    g.connect(source, tally, ShipStrategy::Hash(vec![0]));
    g.connect(tally, sink, ShipStrategy::Rebalance);
    let config = RuntimeConfig::default().with_worker_threads(2).with_checkpointing(checkpointing);
    let handle = job::start(g, config).unwrap();
    wait_until("three checkpoints complete", || handle.completed_checkpoints().len() >= 3);
    handle.cancel();
    let _ = handle.wait();
    // Cancelled: the checkpoints stay (RETAIN_ON_CANCELLATION), the newest two of them.
    let mut kept: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    kept.sort();
    assert_eq!(kept.len(), 2, "{kept:?}");
    let latest = storage::latest_checkpoint(dir.path()).unwrap();
    let read = storage::read_checkpoint(&latest).unwrap();
    let (sent, seen) = totals(&read);
    assert_eq!(sent, seen);
    assert!(kept.contains(&format!("chk-{}", read.id)));
}

#[test]
fn a_finished_job_deletes_its_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("chk-1")).unwrap();
    let checkpointing = CheckpointConfig {
        interval: Some(Duration::from_millis(5)),
        dir: Some(dir.path().to_path_buf()),
        ..CheckpointConfig::default()
    };
    let mut g = JobGraph::new();
    let source = common::keyed_numbers(&mut g, 1, 1_000, 3);
    let (sink, rows) = collect(&mut g, 1);
    g.connect(source, sink, ShipStrategy::Forward);
    let config = RuntimeConfig::default().with_worker_threads(1).with_checkpointing(checkpointing);
    assert_eq!(job::run(g, config).unwrap(), weir::runtime::JobStatus::Finished);
    assert_eq!(rows.rows().len(), 1_000);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
