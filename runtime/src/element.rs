//! What flows on a channel between subtasks.

use crate::chunk::Chunk;

/// Watermark value before any watermark has been seen.
pub const NO_WATERMARK: i64 = i64::MIN;

/// The watermark a finished input holds: it fires every remaining event-time timer.
pub const MAX_WATERMARK: i64 = i64::MAX;

/// One element of a stream. Everything but chunks is a control element that every
/// downstream subtask receives.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamElement {
    /// A batch of rows.
    Chunk(Chunk),
    /// Event time has reached this many epoch milliseconds: no row with an earlier rowtime follows.
    Watermark(i64),
    /// The sending channel has gone idle (`true`) or is active again (`false`); idle channels
    /// do not hold back the watermark.
    Idle(bool),
    /// A mini-batch flush marker: bundle operators flush what they buffered. Markers carry
    /// increasing values (the end of the mini-batch interval) and are aligned like watermarks.
    FlushMarker(i64),
    /// A checkpoint barrier: what the sending channel sent before it belongs to the checkpoint,
    /// what follows to the next one. Barriers are aligned over the inputs
    /// ([`crate::checkpoint::BarrierAligner`]) before an operator sees one.
    Barrier(CheckpointBarrier),
    /// The sending channel has no more data.
    EndOfInput,
}

/// A checkpoint barrier as it travels with the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointBarrier {
    /// The checkpoint's number: 1 for a job's first, increasing.
    pub id: u64,
    /// When the coordinator triggered it, in epoch milliseconds of the job's clock.
    pub timestamp: i64,
    /// Whether inputs are aligned for it (exactly once) or only counted (at least once).
    pub mode: CheckpointingMode,
}

/// `execution.checkpointing.mode`: what a checkpoint guarantees about the rows in its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CheckpointingMode {
    /// Every row is in the state of exactly one checkpoint: an input that has delivered the
    /// barrier waits until every other input has delivered it too.
    #[default]
    ExactlyOnce,
    /// Inputs never wait: rows that overtake a barrier on a fast input are in the checkpoint
    /// and are replayed after a restore, so they may be counted twice.
    AtLeastOnce,
}

impl CheckpointingMode {
    /// The mode's name as Flink writes it (`EXACTLY_ONCE`, `AT_LEAST_ONCE`).
    pub fn flink_name(self) -> &'static str {
        match self {
            CheckpointingMode::ExactlyOnce => "EXACTLY_ONCE",
            CheckpointingMode::AtLeastOnce => "AT_LEAST_ONCE",
        }
    }
}
