//! Checkpoints: barriers that cut a running job's streams, the alignment of barriers at the
//! inputs of a subtask, and the state operators write when a barrier passes them.
//!
//! A checkpoint is triggered at the sources: each source subtask snapshots its position and
//! sends a [`CheckpointBarrier`] downstream with its data. A subtask whose inputs have all
//! delivered the barrier ([`BarrierAligner`]) snapshots the state of its chain's operators
//! ([`crate::operator::Operator::snapshot_state`]) and forwards the barrier; the job collects
//! the snapshots, and a checkpoint is complete when every subtask has written its own.
//! Snapshots are stored in weir's versioned format ([`codec`] for values, [`file`] for the
//! checksummed container).

pub mod aligner;
pub mod codec;
pub mod completed;
pub(crate) mod coordinator;
pub mod file;
pub mod options;
pub(crate) mod restore;
pub mod state;
pub mod stats;
pub mod storage;

pub use crate::element::{CheckpointBarrier, CheckpointingMode};
pub use aligner::{Alignment, BarrierAligner};
pub use completed::{CompletedCheckpoint, CompletedCheckpoints, OperatorState, SubtaskState};
pub use options::{CheckpointConfig, Restore, Retention};
pub use state::{StateReader, StateWriter};
pub use storage::SHARED_DIR;
