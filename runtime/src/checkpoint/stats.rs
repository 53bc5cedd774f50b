//! What a job's checkpoints did, as Flink's web UI and REST API report it: counts, the newest
//! completed and failed checkpoint, the one the job was restored from, and a short history.

use std::collections::VecDeque;

/// How many checkpoints the history keeps, newest first: Flink's `web.checkpoints.history` default.
pub const HISTORY: usize = 10;

/// Whether a checkpoint completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointOutcome {
    /// Every running subtask took its part and the checkpoint was stored.
    Completed,
    /// It was aborted, expired or could not be stored.
    Failed,
}

impl CheckpointOutcome {
    /// Flink's name of the status (`COMPLETED`, `FAILED`).
    pub fn as_str(self) -> &'static str {
        match self {
            CheckpointOutcome::Completed => "COMPLETED",
            CheckpointOutcome::Failed => "FAILED",
        }
    }
}

/// One checkpoint that ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointRecord {
    /// Its number.
    pub id: u64,
    /// Completed or failed.
    pub outcome: CheckpointOutcome,
    /// When it was triggered (epoch milliseconds of the job's clock).
    pub trigger_timestamp: i64,
    /// When it ended: the last part arrived, or it failed.
    pub end_timestamp: i64,
    /// Bytes of operator state it holds (with the state runs of an incremental checkpoint,
    /// Flink's full checkpoint size).
    pub state_size: u64,
    /// Bytes written for it: its file and the state runs no earlier checkpoint named (0 when
    /// checkpoints stay in memory).
    pub checkpointed_size: u64,
    /// Subtasks that were to take a part.
    pub num_subtasks: usize,
    /// Subtasks that took theirs.
    pub num_acknowledged_subtasks: usize,
    /// Where it was written, when it was.
    pub external_path: Option<String>,
    /// Why it failed.
    pub failure_message: Option<String>,
}

impl CheckpointRecord {
    /// Milliseconds from trigger to end.
    pub fn duration_ms(&self) -> i64 {
        (self.end_timestamp - self.trigger_timestamp).max(0)
    }
}

/// The checkpoint a job started from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoredCheckpoint {
    /// Its number.
    pub id: u64,
    /// When the job restored it (epoch milliseconds of the job's clock).
    pub restore_timestamp: i64,
}

/// Counts and history of a job's checkpoints; kept by the checkpoint coordinator, read by
/// whoever watches the job.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckpointStats {
    /// Checkpoints completed.
    pub completed: u64,
    /// Bytes written for the completed checkpoints, summed.
    pub checkpointed_bytes: u64,
    /// The most state bytes a completed checkpoint held.
    pub max_state_bytes: u64,
    /// Checkpoints that failed.
    pub failed: u64,
    /// Checkpoints triggered and not yet ended.
    pub in_progress: usize,
    /// The checkpoint the job started from.
    pub restored: Option<RestoredCheckpoint>,
    /// The newest completed checkpoint.
    pub latest_completed: Option<CheckpointRecord>,
    /// The newest failed checkpoint.
    pub latest_failed: Option<CheckpointRecord>,
    /// The last [`HISTORY`] checkpoints that ended, newest first.
    pub history: VecDeque<CheckpointRecord>,
}

impl CheckpointStats {
    /// Every checkpoint triggered.
    pub fn total(&self) -> u64 {
        self.completed + self.failed + self.in_progress as u64
    }

    /// Records a checkpoint that ended.
    pub fn record(&mut self, record: CheckpointRecord) {
        match record.outcome {
            CheckpointOutcome::Completed => {
                self.completed += 1;
                self.checkpointed_bytes += record.checkpointed_size;
                self.max_state_bytes = self.max_state_bytes.max(record.state_size);
                self.latest_completed = Some(record.clone());
            }
            CheckpointOutcome::Failed => {
                self.failed += 1;
                self.latest_failed = Some(record.clone());
            }
        }
        self.history.push_front(record);
        self.history.truncate(HISTORY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: u64, outcome: CheckpointOutcome) -> CheckpointRecord {
        CheckpointRecord {
            id,
            outcome,
            trigger_timestamp: 10,
            end_timestamp: 25,
            state_size: 100,
            checkpointed_size: 0,
            num_subtasks: 2,
            num_acknowledged_subtasks: 2,
            external_path: None,
            failure_message: None,
        }
    }

    #[test]
    fn the_history_keeps_the_newest_first_and_counts_every_outcome() {
        let mut stats = CheckpointStats::default();
        for id in 1..=12 {
            let outcome = if id % 4 == 0 { CheckpointOutcome::Failed } else { CheckpointOutcome::Completed };
            stats.record(record(id, outcome));
        }
        assert_eq!((stats.completed, stats.failed), (9, 3));
        assert_eq!(stats.history.len(), HISTORY);
        assert_eq!(stats.history.front().map(|r| r.id), Some(12));
        assert_eq!(stats.latest_completed.as_ref().map(|r| r.id), Some(11));
        assert_eq!(stats.latest_failed.as_ref().map(|r| (r.id, r.duration_ms())), Some((12, 15)));
    }
}
