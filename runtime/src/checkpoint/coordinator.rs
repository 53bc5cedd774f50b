//! The job's side of checkpoints: when to trigger one, numbering them, collecting the
//! subtasks' parts until a checkpoint is complete, and keeping the completed ones.
//!
//! With `execution.checkpointing.interval` set, a checkpoint is triggered every interval,
//! but never while `max-concurrent-checkpoints` are in progress nor sooner than `min-pause`
//! after the last one completed; one still in progress after `timeout` is aborted. A later
//! checkpoint that completes supersedes earlier ones still in progress. Completed checkpoints
//! are written to the configured directory ([`super::storage`]) and the newest `num-retained`
//! kept; they are also published in memory for [`crate::job::JobHandle`].

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::completed::{CompletedCheckpoint, CompletedCheckpoints, OperatorState, SubtaskState};
use super::options::{CheckpointConfig, Retention};
use super::state::StateWriter;
use super::stats::{CheckpointOutcome, CheckpointRecord, RestoredCheckpoint};
use super::storage::{highest_checkpoint_number, retain_newest, write_checkpoint};
use crate::element::{CheckpointBarrier, CheckpointingMode};
use crate::error::{Error, Result};
use crate::state::runs::run_sizes;

/// Pairs each operator's id with what it wrote.
fn operator_states(states: Vec<(String, StateWriter)>) -> Vec<OperatorState> {
    states.into_iter().map(|(id, state)| OperatorState { id, state: state.into_reader() }).collect()
}

/// A subtask of a running job: its chain's index in the job and its own index. Chains are
/// told apart by index, not by name: two chains of one job may have the same name (two `Calc`s
/// after one shared scan).
pub(crate) type SubtaskKey = (usize, usize);

#[derive(Debug)]
struct Pending {
    timestamp: i64,
    expected: usize,
    parts: BTreeMap<SubtaskKey, SubtaskState>,
}

/// Triggers a job's checkpoints and completes each when its last part arrives.
#[derive(Debug)]
pub(crate) struct CheckpointCoordinator {
    config: CheckpointConfig,
    last_id: u64,
    /// When the last periodic checkpoint was triggered and when the last one completed.
    last_trigger: Option<i64>,
    last_completion: Option<i64>,
    pending: BTreeMap<u64, Pending>,
    completed: Arc<Mutex<CompletedCheckpoints>>,
    /// The final state of every subtask that has finished, by chain and index.
    finished: BTreeMap<SubtaskKey, SubtaskState>,
    /// Per finished subtask, the first checkpoint that holds its final state: the ones it
    /// had taken its part of before it finished hold that part instead.
    final_from: BTreeMap<SubtaskKey, u64>,
    /// Set when the savepoint that stops the job begins: no checkpoint starts after it.
    stopping: bool,
    /// The state runs the newest completed (or the restored) checkpoint names: a checkpoint
    /// writes only the runs not among them.
    last_runs: std::collections::HashSet<std::path::PathBuf>,
}

impl CheckpointCoordinator {
    /// A coordinator following `config`, publishing completed checkpoints into `completed`.
    /// Checkpoints are numbered on from the one the job was restored from.
    /// A job started afresh in a directory holding older checkpoints numbers after them, so
    /// that the newest checkpoint there is always the newest run's.
    pub(crate) fn new(config: CheckpointConfig, completed: Arc<Mutex<CompletedCheckpoints>>) -> Self {
        let restored = config.restore.as_ref().map_or(0, |r| r.checkpoint.id);
        if restored > 0 {
            let restore_timestamp = crate::clock::epoch_millis();
            completed.lock().stats.restored = Some(RestoredCheckpoint { id: restored, restore_timestamp });
        }
        let on_disk = config.dir.as_deref().map_or(0, highest_checkpoint_number);
        let last_runs =
            config.restore.as_ref().map(|r| run_sizes(std::slice::from_ref(&r.checkpoint)).into_keys().collect());
        CheckpointCoordinator {
            last_id: restored.max(on_disk),
            config,
            last_trigger: None,
            last_completion: None,
            pending: BTreeMap::new(),
            completed,
            finished: BTreeMap::new(),
            final_from: BTreeMap::new(),
            stopping: false,
            last_runs: last_runs.unwrap_or_default(),
        }
    }

    /// The next checkpoint to begin is the savepoint that stops the job: none begins after it,
    /// so sinks commit nothing that a job restored from it would write again.
    pub(crate) fn stop_after_next(&mut self) {
        self.stopping = true;
    }

    /// The id of the newest checkpoint begun (0 before the first).
    pub(crate) fn last_begun(&self) -> u64 {
        self.last_id
    }

    /// Whether the savepoint that stops the job has begun.
    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping
    }

    /// How many subtasks have finished (and take no part in later checkpoints).
    pub(crate) fn finished_count(&self) -> usize {
        self.finished.len()
    }

    /// Whether checkpoint `id` holds the final state of subtask `key`: the subtask had
    /// finished before it took its part of the checkpoint (a checkpoint whose part it took
    /// while running holds that part, and what the subtask did after it is not in it).
    pub(crate) fn holds_final_state(&self, key: SubtaskKey, id: u64) -> bool {
        self.final_from.get(&key).is_some_and(|&first| id >= first)
    }

    /// Every subtask has finished: takes the job's final checkpoint, of their final states
    /// alone, and returns its id.
    ///
    /// # Errors
    /// The checkpoint cannot be written: the job fails, as its sinks cannot commit.
    pub(crate) fn final_checkpoint(&mut self, now: i64) -> Result<u64> {
        self.pending.clear();
        self.last_id += 1;
        let id = self.last_id;
        self.pending.insert(id, Pending { timestamp: now, expected: 0, parts: BTreeMap::new() });
        tracing::debug!(checkpoint = id, "final checkpoint");
        self.complete(now, id).ok_or_else(|| {
            Error::execution(format!(
                "The final checkpoint {id} of the job cannot be written to '{}'; its sinks did not commit what they wrote last.",
                self.config.dir.as_deref().map_or_else(String::new, |d| d.display().to_string())
            ))
        })
    }

    /// A subtask finished with `states`: later checkpoints hold them as its part, and a
    /// checkpoint in progress that waited for it takes them; returns the checkpoints that
    /// are complete now.
    pub(crate) fn finished(
        &mut self,
        now: i64,
        (chain, vertex): (usize, String),
        (subtask, parallelism): (usize, usize),
        states: Vec<(String, StateWriter)>,
    ) -> Vec<u64> {
        let operators = operator_states(states);
        let key = (chain, subtask);
        let part = SubtaskState { vertex, subtask, parallelism, operators };
        self.finished.insert(key, part.clone());
        let waiting: Vec<u64> =
            self.pending.iter().filter(|(_, p)| !p.parts.contains_key(&key)).map(|(&id, _)| id).collect();
        // The checkpoints in progress whose part the subtask took while running come before
        // the first that holds its final state: every later one does.
        let taken = self.pending.iter().filter(|(_, p)| p.parts.contains_key(&key)).map(|(&id, _)| id).max();
        let first = match taken {
            Some(id) => id + 1,
            None => waiting.first().copied().unwrap_or(self.last_id + 1),
        };
        self.final_from.insert(key, first);
        let mut done = Vec::new();
        for id in waiting {
            if let Some(pending) = self.pending.get_mut(&id) {
                pending.parts.insert(key, part.clone());
                if pending.parts.len() >= pending.expected {
                    done.extend(self.complete(now, id));
                }
            }
        }
        done
    }

    /// When the next periodic checkpoint is due (job clock, epoch milliseconds), counted from
    /// `started` for the first; `None` without an interval.
    pub(crate) fn next_trigger(&self, started: i64) -> Option<i64> {
        let interval = self.config.interval?.as_millis() as i64;
        let by_interval = self.last_trigger.unwrap_or(started) + interval;
        let by_pause = self.last_completion.map_or(i64::MIN, |t| t + self.config.min_pause.as_millis() as i64);
        Some(by_interval.max(by_pause))
    }

    /// When the job's loop must wake for its checkpoints: the next periodic trigger, or, while
    /// as many checkpoints as allowed are in progress, when the oldest of them times out (so a
    /// checkpoint that cannot complete never stops the ones after it).
    pub(crate) fn next_wakeup(&self, started: i64) -> Option<i64> {
        let next = self.next_trigger(started)?;
        if self.may_trigger() {
            return Some(next);
        }
        let oldest = self.pending.values().map(|p| p.timestamp).min()?;
        Some(next.max(oldest + self.config.timeout.as_millis() as i64 + 1))
    }

    /// Whether a periodic checkpoint may start now: fewer than the allowed number in progress,
    /// and no savepoint stopping the job begun.
    pub(crate) fn may_trigger(&self) -> bool {
        !self.stopping && self.pending.len() < self.config.max_concurrent
    }

    /// The mode periodic checkpoints take.
    pub(crate) fn mode(&self) -> CheckpointingMode {
        self.config.mode
    }

    /// Starts the next checkpoint at `now`, which `expected` subtasks will each take a part of;
    /// returns its barrier.
    pub(crate) fn begin(&mut self, now: i64, expected: usize, mode: CheckpointingMode) -> CheckpointBarrier {
        self.last_id += 1;
        self.last_trigger = Some(now);
        self.pending.insert(self.last_id, Pending { timestamp: now, expected, parts: BTreeMap::new() });
        self.completed.lock().stats.in_progress = self.pending.len();
        tracing::debug!(checkpoint = self.last_id, expected, "checkpoint triggered");
        CheckpointBarrier { id: self.last_id, timestamp: now, mode }
    }

    /// A subtask's part arrived at `now`; returns the id when the checkpoint is now complete.
    pub(crate) fn add(
        &mut self,
        now: i64,
        checkpoint: u64,
        (chain, vertex): (usize, String),
        (subtask, parallelism): (usize, usize),
        states: Vec<(String, StateWriter)>,
    ) -> Option<u64> {
        let pending = self.pending.get_mut(&checkpoint)?;
        let operators = operator_states(states);
        pending.parts.insert((chain, subtask), SubtaskState { vertex, subtask, parallelism, operators });
        if pending.parts.len() < pending.expected {
            return None;
        }
        self.complete(now, checkpoint)
    }

    /// Completes `checkpoint`, whose last part has arrived: the parts of subtasks that had
    /// finished before it join it, it is stored and published.
    fn complete(&mut self, now: i64, checkpoint: u64) -> Option<u64> {
        let mut done = self.pending.remove(&checkpoint)?;
        let acknowledged = done.parts.len();
        for (key, part) in &self.finished {
            done.parts.entry(*key).or_insert_with(|| part.clone());
        }
        let superseded: Vec<(u64, i64)> =
            self.pending.range(..checkpoint).map(|(&id, pending)| (id, pending.timestamp)).collect();
        self.pending.retain(|&id, _| id > checkpoint);
        superseded
            .into_iter()
            .for_each(|(id, triggered)| self.failed(id, triggered, now, "superseded by a later checkpoint"));
        self.last_completion = Some(now);
        let plan = self.config.plan.clone();
        let subtasks: Vec<SubtaskState> = done.parts.into_values().collect();
        let sections: u64 = subtasks.iter().flat_map(|s| &s.operators).map(|o| o.state.byte_len()).sum();
        let completed = CompletedCheckpoint { id: checkpoint, timestamp: done.timestamp, subtasks, plan };
        // The state runs of incremental checkpoints are part of the state; those an earlier
        // checkpoint named were not written for this one.
        let runs = run_sizes(std::slice::from_ref(&completed));
        let new_run_bytes: u64 = runs.iter().filter(|(run, _)| !self.last_runs.contains(*run)).map(|(_, b)| b).sum();
        let state_size = sections + runs.values().sum::<u64>();
        // Runs may have left the state since the last checkpoint, or joined it.
        let runs_changed = !runs.is_empty() || !self.last_runs.is_empty();
        self.last_runs = runs.into_keys().collect();
        let writing = std::time::Instant::now();
        let Some(size) = self.store(&completed) else {
            self.failed(checkpoint, done.timestamp, now, "the checkpoint could not be written");
            return None;
        };
        let write_us = writing.elapsed().as_micros() as u64;
        let record = CheckpointRecord {
            id: checkpoint,
            outcome: CheckpointOutcome::Completed,
            trigger_timestamp: done.timestamp,
            end_timestamp: now,
            state_size,
            checkpointed_size: size + new_run_bytes,
            num_subtasks: done.expected,
            num_acknowledged_subtasks: acknowledged,
            external_path: self
                .config
                .dir
                .as_ref()
                .map(|dir| dir.join(format!("chk-{checkpoint}")).display().to_string()),
            failure_message: None,
        };
        tracing::info!(
            checkpoint,
            subtasks = completed.subtasks.len(),
            bytes = size,
            checkpointed_bytes = record.checkpointed_size,
            state_bytes = record.state_size,
            duration_ms = now - completed.timestamp,
            write_us,
            "checkpoint completed"
        );
        let mut kept = self.completed.lock();
        kept.count += 1;
        kept.latest_id = kept.latest_id.max(checkpoint);
        kept.stats.in_progress = self.pending.len();
        kept.stats.record(record);
        if self.config.dir.is_none() {
            kept.retained.push(completed);
        }
        let excess = kept.retained.len().saturating_sub(self.config.num_retained.max(1));
        kept.retained.drain(..excess);
        // The runs only retired checkpoints named go, unless a checkpoint in progress may
        // have linked runs no completed one names yet.
        drop(kept);
        if let Some(dir) = self.config.dir.as_ref().filter(|_| runs_changed && self.pending.is_empty()) {
            retire_state_runs(dir);
        }
        Some(checkpoint)
    }

    /// Writes `checkpoint` to the checkpoint directory, if there is one, keeping the newest;
    /// returns the size written. A checkpoint that cannot be written does not complete (no
    /// sink commits on it) but does not fail the job: as in Flink, the next one may succeed.
    fn store(&self, checkpoint: &CompletedCheckpoint) -> Option<u64> {
        let Some(dir) = &self.config.dir else { return Some(0) };
        match write_checkpoint(dir, checkpoint) {
            Ok(chk) => {
                retain_newest(dir, self.config.num_retained);
                Some(std::fs::metadata(chk.join(super::storage::METADATA)).map_or(0, |m| m.len()))
            }
            Err(error) => {
                tracing::warn!(checkpoint = checkpoint.id, dir = %dir.display(), %error, "cannot write the checkpoint");
                None
            }
        }
    }

    /// A subtask could not take its part of `checkpoint`: it will not complete.
    pub(crate) fn abort(&mut self, checkpoint: u64) {
        if let Some(pending) = self.pending.remove(&checkpoint) {
            tracing::info!(checkpoint, "checkpoint aborted");
            self.failed(checkpoint, pending.timestamp, pending.timestamp, "a subtask could not take its part");
        }
    }

    /// Counts checkpoint `id`, triggered at `triggered`, as failed at `now` for `why`.
    fn failed(&self, id: u64, triggered: i64, now: i64, why: &str) {
        let mut kept = self.completed.lock();
        kept.stats.in_progress = self.pending.len();
        kept.stats.record(CheckpointRecord {
            id,
            outcome: CheckpointOutcome::Failed,
            trigger_timestamp: triggered,
            end_timestamp: now,
            state_size: 0,
            checkpointed_size: 0,
            num_subtasks: 0,
            num_acknowledged_subtasks: 0,
            external_path: None,
            failure_message: Some(why.to_string()),
        });
    }

    /// Aborts the checkpoints in progress for longer than the timeout at `now`.
    pub(crate) fn expire(&mut self, now: i64) {
        let timeout = self.config.timeout.as_millis() as i64;
        let expired: Vec<u64> =
            self.pending.iter().filter(|(_, p)| now - p.timestamp > timeout).map(|(&id, _)| id).collect();
        for id in expired {
            tracing::warn!(checkpoint = id, timeout_ms = timeout, "checkpoint expired before it completed");
            if let Some(pending) = self.pending.remove(&id) {
                self.failed(id, pending.timestamp, now, "Checkpoint expired before completing.");
            }
        }
    }

    /// The job ended (`finished` when every source ran out, else cancelled or failed): its
    /// checkpoints on disk are kept or deleted as the retention says. A finished job keeps its
    /// final checkpoint (every source done, every sink committed), so that resuming it finds
    /// nothing left to do, unless no checkpoint is to outlive the job.
    pub(crate) fn job_ended(&self, finished: bool, cancelled: bool) {
        let Some(dir) = &self.config.dir else { return };
        let keep = match self.config.retention {
            Retention::NoExternalizedCheckpoints => 0,
            _ if finished => 1,
            Retention::DeleteOnCancellation if cancelled => 0,
            _ => usize::MAX,
        };
        retain_newest(dir, keep);
        let shared = dir.join(super::storage::SHARED_DIR);
        if !shared.exists() {
            return;
        }
        if keep == 0 {
            if let Err(error) = std::fs::remove_dir_all(&shared) {
                tracing::warn!(dir = %shared.display(), %error, "cannot delete the state runs of a job");
            }
        } else {
            retire_state_runs(dir);
        }
    }
}

/// Deletes the files of the on-disk state backend's incremental checkpoints under `dir` that
/// none of the checkpoints kept there names.
fn retire_state_runs(dir: &std::path::Path) {
    let shared = dir.join(super::storage::SHARED_DIR);
    if let Ok(shared) = std::path::absolute(shared) {
        crate::state::runs::retire_runs(&shared, &super::storage::read_all(dir));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn coordinator(config: CheckpointConfig) -> CheckpointCoordinator {
        CheckpointCoordinator::new(config, Arc::default())
    }

    #[test]
    fn periodic_checkpoints_keep_their_interval_and_pause() {
        let config = CheckpointConfig {
            interval: Some(Duration::from_millis(100)),
            min_pause: Duration::from_millis(50),
            ..CheckpointConfig::default()
        };
        let mut c = coordinator(config);
        assert_eq!(c.next_trigger(1_000), Some(1_100));
        let barrier = c.begin(1_100, 1, CheckpointingMode::ExactlyOnce);
        assert!(!c.may_trigger(), "one checkpoint at a time");
        assert_eq!(c.add(1_180, barrier.id, (0, "s".into()), (0, 1), Vec::new()), Some(1));
        // Due by the interval at 1 200, held back by the pause until 1 230.
        assert_eq!(c.next_trigger(1_000), Some(1_230));
        assert!(c.may_trigger());
    }

    /// A checkpoint that never completes expires, and the next one is due then.
    #[test]
    fn a_stuck_checkpoint_times_out_and_makes_room_for_the_next() {
        let config = CheckpointConfig {
            interval: Some(Duration::from_millis(100)),
            timeout: Duration::from_millis(1_000),
            ..CheckpointConfig::default()
        };
        let mut c = coordinator(config);
        c.begin(100, 2, CheckpointingMode::ExactlyOnce);
        assert!(!c.may_trigger());
        assert_eq!(c.next_wakeup(0), Some(1_101), "woken when the checkpoint in progress times out");
        c.expire(1_101);
        assert!(c.may_trigger());
        assert_eq!(c.next_wakeup(0), Some(200));
    }

    #[test]
    fn a_checkpoint_completes_with_its_last_part_and_expires_without_it() {
        let mut c =
            coordinator(CheckpointConfig { timeout: Duration::from_millis(500), ..CheckpointConfig::default() });
        let first = c.begin(0, 2, CheckpointingMode::ExactlyOnce);
        assert_eq!(c.add(10, first.id, (0, "a".into()), (0, 2), Vec::new()), None);
        c.expire(600);
        assert_eq!(c.add(610, first.id, (0, "a".into()), (1, 2), Vec::new()), None, "expired");
        let second = c.begin(700, 1, CheckpointingMode::ExactlyOnce);
        assert_eq!(c.add(710, second.id, (0, "a".into()), (0, 1), Vec::new()), Some(2));
        assert_eq!(c.completed.lock().retained.iter().map(|c| c.id).collect::<Vec<_>>(), vec![2]);
    }

    /// A subtask that took its part of a checkpoint and then finished: that checkpoint holds
    /// the part (what the subtask did after it is not in it), the next ones its final state.
    #[test]
    fn a_checkpoint_holds_a_subtasks_final_state_only_when_it_finished_before_its_part() {
        let mut c = coordinator(CheckpointConfig::default());
        let first = c.begin(0, 2, CheckpointingMode::ExactlyOnce);
        assert_eq!(c.add(10, first.id, (0, "a".into()), (0, 2), Vec::new()), None);
        assert!(c.finished(20, (0, "a".into()), (0, 2), Vec::new()).is_empty(), "subtask 1's part is missing");
        assert_eq!(c.add(30, first.id, (0, "a".into()), (1, 2), Vec::new()), Some(first.id));
        assert!(!c.holds_final_state((0, 0), first.id), "subtask 0 took its part of it running");
        let second = c.begin(40, 1, CheckpointingMode::ExactlyOnce);
        assert!(c.holds_final_state((0, 0), second.id));
        assert!(!c.holds_final_state((0, 1), second.id), "subtask 1 runs");
        // A subtask finishing while a checkpoint waits for its part gives that one its final state.
        assert_eq!(c.finished(50, (0, "a".into()), (1, 2), Vec::new()), vec![second.id]);
        assert!(c.holds_final_state((0, 1), second.id));
    }
}
