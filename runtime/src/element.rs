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
    /// The sending channel has no more data.
    EndOfInput,
}
