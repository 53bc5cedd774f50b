//! Checkpoints in a running job: barriers from the sources, alignment at every input, and each
//! subtask's state taken at the same cut of the streams.

use crate::common;

use common::{collect, wait_until};
use std::sync::Arc;
use std::time::Duration;

use std::future::Future;
use weir::runtime::checkpoint::{
    storage, CheckpointConfig, CheckpointingMode, CompletedCheckpoint, Restore, StateReader, StateWriter,
};
use weir::runtime::chunk::Chunk;
use weir::runtime::graph::JobGraph;

use weir::runtime::operator::{owned_parts, AsyncState, Operator, OperatorContext, Output, Source, SourceStatus};
use weir::runtime::state::owns_key;
use weir::runtime::{job, RowKind, RuntimeConfig, ShipStrategy, Value};

/// A source of rows `[n % 7, n]`, 50 per poll, endless or ending after `limit` rows, that
/// checkpoints how many it sent.
struct Counting {
    sent: u64,
    limit: Option<u64>,
}

impl Counting {
    fn endless() -> Box<Counting> {
        Box::new(Counting { sent: 0, limit: None })
    }
}

impl Source for Counting {
    fn name(&self) -> &str {
        "Counting"
    }

    fn poll_next(&mut self, _ctx: &mut OperatorContext, out: &mut Output) -> weir::runtime::Result<SourceStatus> {
        let mut chunk = Chunk::new(2);
        let end = self.limit.unwrap_or(u64::MAX).min(self.sent + 50);
        while self.sent < end {
            let n = self.sent as i64;
            chunk.push(RowKind::Insert, &[Value::BigInt(n % 7), Value::BigInt(n)]);
            self.sent += 1;
        }
        out.collect(chunk);
        Ok(if Some(self.sent) == self.limit { SourceStatus::Finished } else { SourceStatus::Ready })
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

    /// Each subtask goes on from its own position (the sources keep their parallelism here).
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> weir::runtime::Result<()> {
        self.sent = owned_parts(states, ctx.subtask()).map(|s| counter(s, "sent")).sum();
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
            sent += counter(&part.operators[0].state, "sent");
        } else if part.vertex.starts_with("Tally") {
            seen += counter(&part.operators[0].state, "seen");
        }
    }
    (sent, seen)
}

/// Two sources, hashed into three tallies (each with two input channels), into a sink.
fn job_with_checkpoints(mode: CheckpointingMode, checkpoints: usize) -> Vec<CompletedCheckpoint> {
    let mut g = JobGraph::new();
    let source = g.add_source("Counting", 2, |_| Counting::endless());
    let tally = g.add_operator("Tally", 3, |_| Box::new(Tally { seen: 0 }));
    let (sink, _rows) = collect(&mut g, 1);
    g.connect(source, tally, ShipStrategy::Hash(vec![0]));
    g.connect(tally, sink, ShipStrategy::Rebalance);
    let retained = CheckpointConfig { num_retained: checkpoints, ..CheckpointConfig::default() };
    let config = RuntimeConfig::default().with_worker_threads(2).with_chunk_size(64).with_checkpointing(retained);
    let handle = job::start(g, config).unwrap();
    for n in 1..=checkpoints {
        handle.trigger_checkpoint(mode);
        wait_until("the checkpoint completes", || handle.completed_count() >= n as u64);
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
    let source = g.add_source("Counting", 1, |_| Counting::endless());
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
        .all(|p| p.operators.iter().all(|o| o.state.is_empty())));
    handle.cancel();
    let _ = handle.wait();
}

/// Two endless sources hashed into two tallies, into a sink; what the sink received.
fn counting_graph() -> (JobGraph, weir::connectors::CollectHandle) {
    let mut g = JobGraph::new();
    let source = g.add_source("Counting", 2, |_| Counting::endless());
    let tally = g.add_operator("Tally", 2, |_| Box::new(Tally { seen: 0 }));
    let (sink, rows) = collect(&mut g, 1);
    g.connect(source, tally, ShipStrategy::Hash(vec![0]));
    g.connect(tally, sink, ShipStrategy::Rebalance);
    (g, rows)
}

/// [`counting_graph`], checkpointing as `checkpointing` says; returned once three checkpoints
/// have completed.
fn counting_job(checkpointing: CheckpointConfig) -> job::JobHandle {
    let (g, _rows) = counting_graph();
    let config = RuntimeConfig::default().with_worker_threads(2).with_checkpointing(checkpointing);
    let handle = job::start(g, config).unwrap();
    wait_until("three checkpoints complete", || handle.completed_count() >= 3);
    handle
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
    let handle = counting_job(checkpointing);
    handle.cancel();
    let _ = handle.wait();
    // Cancelled: the checkpoints stay (RETAIN_ON_CANCELLATION), the newest two of them.
    let mut kept: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("chk-"))
        .collect();
    kept.sort();
    assert_eq!(kept.len(), 2, "{kept:?}");
    let latest = storage::latest_checkpoint(dir.path()).unwrap().unwrap();
    let read = storage::read_checkpoint(&latest).unwrap();
    let (sent, seen) = totals(&read);
    assert_eq!(sent, seen);
    assert!(kept.contains(&format!("chk-{}", read.id)));
}

/// The savepoint that stops a job is the last checkpoint it completes, however often it
/// checkpoints: a later one would let sinks commit rows that a job restored from the savepoint
/// writes again.
#[test]
fn no_checkpoint_completes_after_the_savepoint_that_stops_the_job() {
    for _ in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let checkpoints = dir.path().join("checkpoints");
        let checkpointing = CheckpointConfig {
            interval: Some(Duration::from_millis(1)),
            num_retained: 100,
            dir: Some(checkpoints.clone()),
            ..CheckpointConfig::default()
        };
        let handle = counting_job(checkpointing);
        let path = handle
            .stop_with_savepoint(&dir.path().join("savepoints"), "counting", Duration::from_secs(30))
            .unwrap()
            .expect("the endless job was running");
        assert_eq!(handle.wait().unwrap(), weir::runtime::JobStatus::Cancelled);
        let savepoint = storage::read_checkpoint(&path).unwrap();
        let latest = storage::read_checkpoint(&storage::latest_checkpoint(&checkpoints).unwrap().unwrap()).unwrap();
        assert_eq!(latest.id, savepoint.id, "checkpoint {} completed after the savepoint", latest.id);
        assert_eq!(totals(&savepoint), totals(&latest));
    }
}

/// A finished job keeps only its final checkpoint, numbered after what the directory held: a
/// job restored from it has nothing left to do.
#[test]
fn a_finished_job_keeps_only_its_final_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("chk-7")).unwrap();
    let checkpointing = CheckpointConfig {
        interval: Some(Duration::from_millis(5)),
        dir: Some(dir.path().to_path_buf()),
        ..CheckpointConfig::default()
    };
    let build = || {
        let mut g = JobGraph::new();
        let source = g.add_source("Counting", 1, |_| Box::new(Counting { sent: 0, limit: Some(1_000) }));
        let (sink, rows) = collect(&mut g, 1);
        g.connect(source, sink, ShipStrategy::Forward);
        (g, rows)
    };
    let (g, rows) = build();
    let config = RuntimeConfig::default().with_worker_threads(1).with_checkpointing(checkpointing.clone());
    assert_eq!(job::run(g, config).unwrap(), weir::runtime::JobStatus::Finished);
    assert_eq!(rows.rows().len(), 1_000);
    let kept: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("chk-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let final_checkpoint = storage::read_checkpoint(&storage::latest_checkpoint(dir.path()).unwrap().unwrap()).unwrap();
    assert!(final_checkpoint.id > 7, "numbered after chk-7: {}", final_checkpoint.id);

    let (g, rows) = build();
    let restore = Restore { checkpoint: Arc::new(final_checkpoint), ignore_unclaimed_state: false };
    let config = RuntimeConfig::default()
        .with_worker_threads(1)
        .with_checkpointing(CheckpointConfig { restore: Some(restore), ..checkpointing });
    assert_eq!(job::run(g, config).unwrap(), weir::runtime::JobStatus::Finished);
    assert!(rows.rows().is_empty(), "the final checkpoint's source has nothing left");
}

/// Counts rows per key (`row[0]`), keeping on restore the keys whose key groups it owns; every
/// row it is sent must be of a key it owns (the HASH exchange and keyed state agree).
struct KeyedTally {
    counts: std::collections::BTreeMap<i64, u64>,
}

impl Operator for KeyedTally {
    fn name(&self) -> &str {
        "KeyedTally"
    }

    fn process_chunk(
        &mut self,
        _: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        _: &mut Output,
    ) -> weir::runtime::Result<()> {
        for (_, row) in chunk.rows() {
            assert!(owns_key(&row[..1], ctx.subtask()), "a row of a key another subtask owns");
            *self.counts.entry(row[0].as_i64().unwrap()).or_default() += 1;
        }
        Ok(())
    }

    fn snapshot_state(
        &mut self,
        _: u64,
        _: &mut OperatorContext,
        state: &mut StateWriter,
    ) -> weir::runtime::Result<()> {
        let counts = state.section("counts");
        counts.u32(self.counts.len() as u32);
        for (&key, &n) in &self.counts {
            counts.value(&Value::BigInt(key));
            counts.u64(n);
        }
        Ok(())
    }

    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> weir::runtime::Result<()> {
        let me = ctx.subtask().clone();
        for state in states {
            let mut counts = state.section("counts").unwrap();
            for _ in 0..counts.u32().unwrap() {
                let key = counts.value().unwrap();
                let n = counts.u64().unwrap();
                if owns_key(std::slice::from_ref(&key), &me) {
                    *self.counts.entry(key.as_i64().unwrap()).or_default() += n;
                }
            }
        }
        Ok(())
    }
}

/// Counting sources (restoring their position) hashed into `tallies` keyed tallies.
fn keyed_job(tallies: usize, restore: Option<CompletedCheckpoint>) -> job::JobHandle {
    keyed_job_in(tallies, None, restore).unwrap()
}

/// [`keyed_job`] with `max_parallelism` key groups (`pipeline.max-parallelism`).
fn keyed_job_in(
    tallies: usize,
    max_parallelism: Option<usize>,
    restore: Option<CompletedCheckpoint>,
) -> weir::runtime::Result<job::JobHandle> {
    let mut g = JobGraph::new();
    let source = g.add_source("Counting", 2, |_| Counting::endless());
    let tally = g.add_operator("KeyedTally", tallies, |_| Box::new(KeyedTally { counts: Default::default() }));
    g.connect(source, tally, ShipStrategy::Hash(vec![0]));
    let restore = restore.map(|c| Restore { checkpoint: Arc::new(c), ignore_unclaimed_state: false });
    let checkpointing = CheckpointConfig { restore, ..CheckpointConfig::default() };
    let mut config = RuntimeConfig::default().with_worker_threads(2).with_checkpointing(checkpointing);
    config.max_parallelism = max_parallelism;
    job::start(g, config)
}

/// Rows sent, and rows counted per key, in a checkpoint of [`keyed_job`].
fn keyed_totals(checkpoint: &CompletedCheckpoint) -> (u64, std::collections::BTreeMap<i64, u64>) {
    let mut sent = 0;
    let mut counts = std::collections::BTreeMap::new();
    for part in &checkpoint.subtasks {
        if part.vertex == "Counting" {
            sent += counter(&part.operators[0].state, "sent");
            continue;
        }
        let mut section = part.operators[0].state.section("counts").unwrap();
        for _ in 0..section.u32().unwrap() {
            let key = section.value().unwrap().as_i64().unwrap();
            let n = section.u64().unwrap();
            assert!(counts.insert(key, n).is_none(), "key {key} counted by two subtasks");
        }
    }
    (sent, counts)
}

fn checkpoint_now(handle: &job::JobHandle) -> CompletedCheckpoint {
    let before = handle.completed_count();
    handle.trigger_checkpoint(CheckpointingMode::ExactlyOnce);
    wait_until("the checkpoint completes", || handle.completed_count() > before);
    handle.completed_checkpoints().pop().unwrap()
}

#[test]
fn a_restored_job_goes_on_from_its_checkpoint_at_another_parallelism() {
    let first = keyed_job(2, None);
    let taken = checkpoint_now(&first);
    first.cancel();
    let _ = first.wait();
    let (sent, counts) = keyed_totals(&taken);
    assert_eq!(sent, counts.values().sum::<u64>());

    // Three tallies take over the keys of two; the sources go on from where they were.
    let second = keyed_job(3, Some(taken.clone()));
    let next = checkpoint_now(&second);
    second.cancel();
    let _ = second.wait();
    assert_eq!(next.id, taken.id + 1, "checkpoints are numbered on");
    let (sent_after, counts_after) = keyed_totals(&next);
    assert!(sent_after >= sent);
    assert_eq!(sent_after, counts_after.values().sum::<u64>(), "no row lost or counted twice");
    for (key, n) in &counts {
        assert!(counts_after[key] >= *n, "key {key} kept its count");
    }
}

#[test]
fn key_groups_follow_pipeline_max_parallelism() {
    // Four key groups over two tallies, then over three (each tally asserts that it is sent only
    // keys it owns, and a restore keeps only those).
    let first = keyed_job_in(2, Some(4), None).unwrap();
    let taken = checkpoint_now(&first);
    first.cancel();
    let _ = first.wait();
    let second = keyed_job_in(3, Some(4), Some(taken.clone())).unwrap();
    let next = checkpoint_now(&second);
    second.cancel();
    let _ = second.wait();
    let (sent, counts) = keyed_totals(&next);
    assert_eq!(sent, counts.values().sum::<u64>(), "no row lost or counted twice");
    assert!(counts.keys().all(|k| keyed_totals(&taken).1.get(k).is_none_or(|n| counts[k] >= *n)));
    // More tallies than key groups: refused before the job starts, with Flink's message.
    let Err(error) = keyed_job_in(5, Some(4), None) else { panic!("five subtasks over four key groups ran") };
    let error = error.to_string();
    assert!(
        error.contains(
            "Vertex KeyedTally's parallelism (5) is higher than the max parallelism (4). Please lower the \
             parallelism or increase the max parallelism."
        ),
        "{error}"
    );
}

#[test]
fn state_the_new_job_has_no_operator_for_fails_its_start() {
    let first = keyed_job(2, None);
    let taken = checkpoint_now(&first);
    first.cancel();
    let _ = first.wait();
    let mut g = JobGraph::new();
    let source = g.add_source("Counting", 2, |_| Counting::endless());
    let (sink, _rows) = collect(&mut g, 1);
    g.connect(source, sink, ShipStrategy::Rebalance);
    let restore = |ignore_unclaimed_state| {
        let restore = Restore { checkpoint: Arc::new(taken.clone()), ignore_unclaimed_state };
        RuntimeConfig::default().with_checkpointing(CheckpointConfig { restore: Some(restore), ..Default::default() })
    };
    let error = job::start(g.clone(), restore(false)).unwrap().wait().unwrap_err().to_string();
    assert!(error.starts_with("Cannot restore the job: Cannot map checkpoint"), "{error}");
    assert!(error.contains("operator 'KeyedTally'"), "{error}");
    let allowed = job::start(g, restore(true)).unwrap();
    checkpoint_now(&allowed);
    allowed.cancel();
    let _ = allowed.wait();
}

/// Holds each chunk for a few milliseconds of async work before passing it on, in order.
struct Delayer {
    pending: std::collections::VecDeque<(std::pin::Pin<Box<tokio::time::Sleep>>, Chunk)>,
}

impl Delayer {
    fn emit_ready(&mut self, ctx: &mut OperatorContext, out: &mut Output) {
        let waker = ctx.waker();
        let mut cx = std::task::Context::from_waker(&waker);
        while let Some((sleep, _)) = self.pending.front_mut() {
            if sleep.as_mut().poll(&mut cx).is_pending() {
                break;
            }
            let (_, chunk) = self.pending.pop_front().unwrap();
            out.collect(chunk);
        }
    }
}

impl Operator for Delayer {
    fn name(&self) -> &str {
        "Delayer"
    }

    fn process_chunk(
        &mut self,
        _: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> weir::runtime::Result<()> {
        self.pending.push_back((Box::pin(tokio::time::sleep(Duration::from_millis(2))), chunk));
        self.emit_ready(ctx, out);
        Ok(())
    }

    fn async_state(&self) -> AsyncState {
        match self.pending.len() {
            0 => AsyncState::Idle,
            1..4 => AsyncState::Busy,
            _ => AsyncState::Saturated,
        }
    }

    fn poll_async(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> weir::runtime::Result<()> {
        self.emit_ready(ctx, out);
        Ok(())
    }

    fn end_of_input(&mut self, _: &mut OperatorContext, _: &mut Output) -> weir::runtime::Result<()> {
        Ok(())
    }
}

/// Rows in flight in an async operator belong before the barrier: the snapshot waits for them.
#[test]
fn a_barrier_waits_for_the_async_work_in_flight() {
    let mut g = JobGraph::new();
    let source = g.add_source("Counting", 2, |_| Counting::endless());
    let delayer = g.add_operator("Delayer", 2, |_| Box::new(Delayer { pending: Default::default() }));
    let tally = g.add_operator("Tally", 2, |_| Box::new(Tally { seen: 0 }));
    g.connect(source, delayer, ShipStrategy::Hash(vec![0]));
    g.connect(delayer, tally, ShipStrategy::Forward);
    let handle = job::start(g, RuntimeConfig::default().with_worker_threads(2)).unwrap();
    for _ in 0..5 {
        let checkpoint = checkpoint_now(&handle);
        let mut sent = 0;
        let mut seen = 0;
        for part in &checkpoint.subtasks {
            if part.vertex == "Counting" {
                sent += counter(&part.operators[0].state, "sent");
            } else {
                // The chain Delayer -> Tally: the tally is its second operator.
                assert_eq!(part.vertex, "Delayer -> Tally");
                seen += counter(&part.operators[1].state, "seen");
            }
        }
        assert_eq!(sent, seen, "checkpoint {}", checkpoint.id);
    }
    handle.cancel();
    let _ = handle.wait();
}

/// A job at `parallelism` checkpointing every 20 ms into `dir`, started from `restore`.
fn checkpointed(parallelism: usize, dir: &std::path::Path, restore: Option<Restore>) -> RuntimeConfig {
    let checkpointing = CheckpointConfig {
        interval: Some(Duration::from_millis(20)),
        dir: Some(dir.to_path_buf()),
        restore,
        ..CheckpointConfig::default()
    };
    RuntimeConfig::default().with_parallelism(parallelism).with_worker_threads(2).with_checkpointing(checkpointing)
}

/// datagen (two seconds of rows) → filesystem sink, checkpointed every 20 ms, cancelled mid-way (a failure
/// without clean-up) and restored from its latest checkpoint, at another parallelism: the
/// files hold every row exactly once.
#[test]
fn a_job_restored_after_a_failure_writes_every_row_exactly_once() {
    use weir::connectors::TableDescriptor;
    use weir::prelude::Pipeline;
    let checkpoints = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let schema = weir::runtime::parse::parse_schema(&[("id", "BIGINT")]).unwrap();
    let source = TableDescriptor::new(
        "numbers",
        schema.clone(),
        &[
            ("connector", "datagen"),
            ("rows-per-second", "50000"),
            ("fields.id.kind", "sequence"),
            ("fields.id.start", "1"),
            ("fields.id.end", "100000"),
        ],
    );
    let path = out.path().display().to_string();
    let sink = TableDescriptor::new(
        "files",
        schema,
        &[("connector", "filesystem"), ("path", path.as_str()), ("format", "csv")],
    );
    let run = |parallelism: usize, restore: Option<Restore>| {
        let pipeline = Pipeline::new(checkpointed(parallelism, checkpoints.path(), restore));
        pipeline.from_table(&source).unwrap().rebalance().to_table(&sink).unwrap();
        pipeline.start().unwrap()
    };
    let failing = run(2, None);
    wait_until("three checkpoints complete", || failing.completed_count() >= 3);
    failing.cancel();
    let _ = failing.wait();
    let latest = storage::latest_checkpoint(checkpoints.path()).unwrap().expect("a checkpoint on disk");
    let checkpoint = Arc::new(storage::read_checkpoint(&latest).unwrap());
    let restored = run(3, Some(Restore { checkpoint, ignore_unclaimed_state: false }));
    assert_eq!(restored.wait().unwrap(), weir::runtime::JobStatus::Finished);
    let mut ids: Vec<i64> = Vec::new();
    for entry in std::fs::read_dir(out.path()).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        ids.extend(text.lines().map(|l| l.parse::<i64>().unwrap()));
    }
    ids.sort_unstable();
    assert_eq!(ids.len(), 100_000, "every row once");
    assert_eq!(ids, (1..=100_000).collect::<Vec<i64>>());
}

/// Checkpoints go on completing after some subtasks finish, holding their final state: a
/// source that had ended before the checkpoint does not send its rows again after a restore.
#[test]
fn checkpoints_after_a_source_ends_hold_its_final_state() {
    let build = |restore: Option<CompletedCheckpoint>| {
        let mut g = JobGraph::new();
        let limited = g.add_source("Limited", 2, |_| Box::new(Counting { sent: 0, limit: Some(500) }));
        let endless = g.add_source("Counting", 1, |_| Counting::endless());
        let tally = g.add_operator("KeyedTally", 2, |_| Box::new(KeyedTally { counts: Default::default() }));
        g.connect(limited, tally, ShipStrategy::Hash(vec![0]));
        g.connect(endless, tally, ShipStrategy::Hash(vec![0]));
        let restore = restore.map(|c| Restore { checkpoint: Arc::new(c), ignore_unclaimed_state: false });
        let checkpointing =
            CheckpointConfig { interval: Some(Duration::from_millis(10)), restore, ..CheckpointConfig::default() };
        job::start(g, RuntimeConfig::default().with_worker_threads(2).with_checkpointing(checkpointing)).unwrap()
    };
    let totals = |c: &CompletedCheckpoint| {
        let sent = |name: &str| -> u64 {
            c.subtasks.iter().filter(|p| p.vertex == name).map(|p| counter(&p.operators[0].state, "sent")).sum()
        };
        let mut seen = 0;
        for part in c.subtasks.iter().filter(|p| p.vertex == "KeyedTally") {
            let mut section = part.operators[0].state.section("counts").unwrap();
            for _ in 0..section.u32().unwrap() {
                section.value().unwrap();
                seen += section.u64().unwrap();
            }
        }
        (sent("Limited"), sent("Counting"), seen, c.subtasks.len())
    };
    let first = build(None);
    wait_until("a checkpoint after the bounded source ended", || {
        first.completed_checkpoints().iter().any(|c| totals(c).0 == 1000)
    });
    let after_end = first.completed_checkpoints().into_iter().find(|c| totals(c).0 == 1000).unwrap();
    first.cancel();
    let _ = first.wait();
    let (limited, counting, seen, parts) = totals(&after_end);
    assert_eq!((limited, parts), (1000, 5), "both Limited subtasks are in it, as finished");
    assert_eq!(limited + counting, seen);
    let second = build(Some(after_end.clone()));
    let next = checkpoint_now(&second);
    second.cancel();
    let _ = second.wait();
    let (limited, counting_after, seen, _) = totals(&next);
    assert_eq!(limited, 1000, "the ended source did not start over");
    assert!(counting_after >= counting);
    assert_eq!(limited + counting_after, seen, "no row lost or counted twice");
}

/// A source whose chain still waits for async work to take checkpoint 1 takes checkpoint 2
/// instead when it is triggered: the later checkpoint completes, the earlier is given up.
#[test]
fn a_later_trigger_supersedes_one_still_waiting_for_async_work() {
    let mut g = JobGraph::new();
    let source = g.add_source("Counting", 1, |_| Counting::endless());
    let delayer = g.add_operator("Delayer", 1, |_| Box::new(Delayer { pending: Default::default() }));
    let tally = g.add_operator("Tally", 1, |_| Box::new(Tally { seen: 0 }));
    g.connect(source, delayer, ShipStrategy::Forward);
    g.connect(delayer, tally, ShipStrategy::Forward);
    let handle = job::start(g, RuntimeConfig::default().with_worker_threads(1)).unwrap();
    for _ in 0..5 {
        handle.trigger_checkpoint(CheckpointingMode::ExactlyOnce);
    }
    wait_until("the last checkpoint completes", || handle.completed_checkpoints().iter().any(|c| c.id == 5));
    let last = handle.completed_checkpoints().into_iter().find(|c| c.id == 5).unwrap();
    let part = &last.subtasks[0];
    assert_eq!(part.vertex, "Counting -> Delayer -> Tally");
    assert_eq!(counter(&part.operators[0].state, "sent"), counter(&part.operators[2].state, "seen"));
    handle.cancel();
    let _ = handle.wait();
}

/// A pipeline built with the library API, whose keyed function keeps state per key: failed
/// twice mid-way (cancelled without clean-up) and restored from its latest checkpoint each time,
/// at another parallelism, it writes each key's totals once, equal to a recomputation.
#[test]
fn a_library_pipeline_keeps_its_keyed_state_across_restores() {
    use common::keyed_totals::{expected, latest, pipeline, written};
    const ROWS: i64 = 60_000;
    let checkpoints = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let run =
        |parallelism, restore| pipeline(out.path(), checkpoints.path(), parallelism, restore, ROWS).start().unwrap();
    let first = run(2, None);
    wait_until("three checkpoints complete", || first.completed_count() >= 3);
    first.cancel();
    let _ = first.wait();
    let second = run(3, latest(checkpoints.path()));
    wait_until("three more checkpoints complete", || second.completed_count() >= 3);
    second.cancel();
    let _ = second.wait();
    let last = run(1, latest(checkpoints.path()));
    assert_eq!(last.wait().unwrap(), weir::runtime::JobStatus::Finished);
    assert_eq!(written(out.path()), expected(ROWS));
}

/// Through the library, a job without periodic checkpoints stops with a savepoint all the
/// same: every subtask takes its part at one cut.
#[test]
fn a_job_without_periodic_checkpoints_stops_with_a_savepoint() {
    let dir = tempfile::tempdir().unwrap();
    let handle = job::start(counting_graph().0, RuntimeConfig::default().with_worker_threads(2)).unwrap();
    let path = handle
        .stop_with_savepoint(dir.path(), "counting", Duration::from_secs(30))
        .unwrap()
        .expect("the endless job was running");
    assert_eq!(handle.wait().unwrap(), weir::runtime::JobStatus::Cancelled);
    let savepoint = storage::read_checkpoint(&path).unwrap();
    assert_eq!(savepoint.subtasks.len(), 5, "{savepoint:?}");
    let (sent, seen) = totals(&savepoint);
    assert_eq!(sent, seen);
}

/// Drained into a savepoint without periodic checkpoints: the sources end, every subtask
/// reports its final state, and the savepoint holds where each source ended.
#[test]
fn a_job_without_periodic_checkpoints_drains_into_a_savepoint() {
    let dir = tempfile::tempdir().unwrap();
    let (g, rows) = counting_graph();
    let handle = job::start(g, RuntimeConfig::default().with_worker_threads(2)).unwrap();
    let path = handle
        .canceller()
        .drain_with_savepoint(dir.path(), "counting", Duration::from_secs(30))
        .unwrap()
        .expect("the endless job was running");
    assert_eq!(handle.wait().unwrap(), weir::runtime::JobStatus::Finished);
    let savepoint = storage::read_checkpoint(&path).unwrap();
    // Each source's final state says how far it read; the sink received all of it.
    let sent: u64 = savepoint
        .subtasks
        .iter()
        .filter(|p| p.vertex.starts_with("Counting"))
        .map(|p| counter(&p.operators[0].state, "sent"))
        .sum();
    assert!(sent > 0);
    assert_eq!(sent, rows.rows().len() as u64, "the savepoint holds where every source ended");
}

/// Without periodic checkpoints a subtask that finishes keeps no state: once one has, the job
/// refuses a savepoint with Flink's words (one without the finished subtask would start it
/// from its beginning when restored) and runs on.
#[test]
fn a_job_without_periodic_checkpoints_refuses_a_savepoint_once_a_subtask_finished() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = JobGraph::new();
    let endless = g.add_source("Counting", 1, |_| Counting::endless());
    let bounded = g.add_source("Counting", 1, |_| Box::new(Counting { sent: 0, limit: Some(100) }));
    let tally = g.add_operator("Tally", 1, |_| Box::new(Tally { seen: 0 }));
    let (sink, _rows) = collect(&mut g, 1);
    g.connect(endless, tally, ShipStrategy::Forward);
    g.connect(bounded, tally, ShipStrategy::Forward);
    g.connect(tally, sink, ShipStrategy::Forward);
    let handle = job::start(g, RuntimeConfig::default().with_worker_threads(1)).unwrap();
    // Until the bounded source has finished, a savepoint holds it; from then on it is refused.
    // (A savepoint asked for just as the bounded source finishes may wait for its part until
    // its timeout: the loop asks again.)
    let mut refused = None;
    wait_until("a savepoint is refused", || {
        refused = handle
            .canceller()
            .savepoint(dir.path(), "counting", Duration::from_secs(1))
            .err()
            .map(|e| e.to_string())
            .filter(|e| e.contains("Some tasks of the job have already finished"));
        refused.is_some()
    });
    let refused = refused.unwrap();
    assert!(refused.contains("execution.checkpointing.interval"), "{refused}");
    let stopped = handle.stop_with_savepoint(dir.path(), "counting", Duration::from_secs(30)).unwrap_err();
    assert!(stopped.to_string().contains("already finished"), "{stopped}");
    assert_eq!(handle.lifecycle().state().as_str(), "RUNNING", "a refused stop leaves the job running");
    handle.cancel();
    assert_eq!(handle.wait().unwrap(), weir::runtime::JobStatus::Cancelled);
}
