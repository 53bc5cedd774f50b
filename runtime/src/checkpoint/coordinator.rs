//! The job's side of checkpoints: numbering them, and collecting the subtasks' parts until a
//! checkpoint is complete.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::state::{StateReader, StateWriter};

/// One subtask's part of a checkpoint.
#[derive(Debug, Clone)]
pub struct SubtaskState {
    /// The subtask's chain, as metrics name it (`Source: orders -> Calc`).
    pub vertex: String,
    /// The subtask's index.
    pub subtask: usize,
    /// The state of each operator of the chain, head first (a source's position first).
    pub operators: Vec<StateReader>,
}

/// A checkpoint every running subtask took its part of.
#[derive(Debug, Clone)]
pub struct CompletedCheckpoint {
    /// Its number.
    pub id: u64,
    /// When it was triggered, in epoch milliseconds of the job's clock.
    pub timestamp: i64,
    /// The subtasks' parts, ordered by chain and subtask.
    pub subtasks: Vec<SubtaskState>,
}

#[derive(Debug)]
struct Pending {
    timestamp: i64,
    expected: usize,
    parts: Vec<SubtaskState>,
}

/// Numbers a job's checkpoints and completes each when its last part arrives.
#[derive(Debug, Default)]
pub(crate) struct CheckpointTracker {
    last_id: u64,
    pending: BTreeMap<u64, Pending>,
    completed: Arc<Mutex<Vec<CompletedCheckpoint>>>,
}

impl CheckpointTracker {
    /// A tracker publishing completed checkpoints into `completed`.
    pub(crate) fn new(completed: Arc<Mutex<Vec<CompletedCheckpoint>>>) -> Self {
        CheckpointTracker { last_id: 0, pending: BTreeMap::new(), completed }
    }

    /// Starts the next checkpoint, which `expected` subtasks will each take a part of.
    pub(crate) fn begin(&mut self, timestamp: i64, expected: usize) -> u64 {
        self.last_id += 1;
        self.pending.insert(self.last_id, Pending { timestamp, expected, parts: Vec::new() });
        self.last_id
    }

    /// A subtask's part arrived; returns the id when the checkpoint is now complete.
    pub(crate) fn add(
        &mut self,
        checkpoint: u64,
        vertex: String,
        subtask: usize,
        states: Vec<StateWriter>,
    ) -> Option<u64> {
        let pending = self.pending.get_mut(&checkpoint)?;
        let operators = states.into_iter().map(StateWriter::into_reader).collect();
        pending.parts.push(SubtaskState { vertex, subtask, operators });
        if pending.parts.len() < pending.expected {
            return None;
        }
        let mut done = self.pending.remove(&checkpoint)?;
        done.parts.sort_by(|a, b| (&a.vertex, a.subtask).cmp(&(&b.vertex, b.subtask)));
        // A later checkpoint supersedes the earlier ones still pending: they cannot complete
        // in order any more.
        self.pending.retain(|&id, _| id > checkpoint);
        tracing::info!(checkpoint, subtasks = done.parts.len(), "checkpoint completed");
        self.completed.lock().push(CompletedCheckpoint {
            id: checkpoint,
            timestamp: done.timestamp,
            subtasks: done.parts,
        });
        Some(checkpoint)
    }

    /// A subtask could not take its part of `checkpoint`: it will not complete.
    pub(crate) fn abort(&mut self, checkpoint: u64) {
        if self.pending.remove(&checkpoint).is_some() {
            tracing::info!(checkpoint, "checkpoint aborted");
        }
    }
}
