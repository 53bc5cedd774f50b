//! A completed checkpoint as the job keeps and writes it: the subtasks' parts with each operator's
//! state, and the completed checkpoints a job keeps in memory.

use std::sync::Arc;

use super::state::StateReader;
use super::stats::CheckpointStats;

/// One subtask's part of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubtaskState {
    /// The subtask's chain, as metrics name it (`Source: orders -> Calc`).
    pub vertex: String,
    /// The subtask's index.
    pub subtask: usize,
    /// The chain's parallelism when the checkpoint was taken.
    pub parallelism: usize,
    /// The state of each operator of the chain, head first (a source's position first).
    pub operators: Vec<OperatorState>,
}

/// One operator's state in a subtask's part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorState {
    /// The operator's stable id ([`crate::graph::JobGraph::operator_ids`]): a restored job
    /// hands the state to its operator of the same id.
    pub id: String,
    /// What it wrote.
    pub state: StateReader,
}

/// A checkpoint every running subtask took its part of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletedCheckpoint {
    /// Its number.
    pub id: u64,
    /// When it was triggered, in epoch milliseconds of the job's clock.
    pub timestamp: i64,
    /// The subtasks' parts, ordered by chain (as the job deploys them) and subtask.
    pub subtasks: Vec<SubtaskState>,
    /// What the job's planner wrote about the job ([`super::CheckpointConfig::plan`]).
    pub plan: Option<Arc<String>>,
}

/// The completed checkpoints a job keeps in memory (the newest `num-retained`, when it writes
/// none to disk), and how many completed in all.
#[derive(Debug, Default)]
pub struct CompletedCheckpoints {
    /// The newest, oldest first; empty when checkpoints are written to disk (their state is let
    /// go once written, and its buffers serve the next snapshots).
    pub retained: Vec<CompletedCheckpoint>,
    /// How many checkpoints completed.
    pub count: u64,
    /// The id of the newest one (0 before the first).
    pub latest_id: u64,
    /// Counts and history of every checkpoint that ended, completed or not.
    pub stats: CheckpointStats,
}
