//! weir's on-disk keyed state: a store of sorted byte keys and values, for state larger than
//! memory.
//!
//! - **Writes** go into a write buffer (a sorted map); when it holds
//!   [`Options::write_buffer_bytes`] it is written out as a run: an immutable file of sorted
//!   entries in LZ4-compressed blocks (`run.rs` has the layout) with a Bloom filter and a block
//!   index kept in memory.
//! - **Reads** look in the buffer, then in the runs newest first; a run whose key range or
//!   filter excludes the key reads nothing, else one block, through a cache bounded by
//!   [`Options::block_cache_bytes`].
//! - **Compaction** (`store/compact.rs`): runs written since the last checkpoint merge freely
//!   (no checkpoint holds them); at a checkpoint they become one *layer*, and layers merge into
//!   the *base* (files cut by key-group ranges, never overlapping) one range at a time, paced
//!   by what the layers hold, so no checkpoint rewrites the whole state.
//! - **Checkpoints are incremental**: [`Store::checkpoint`] flushes the buffer and hard-links
//!   each run into a directory the job's checkpoints share; a run linked by an earlier
//!   checkpoint is not written again, so a checkpoint writes its new layer plus the base files
//!   its merges rewrote. [`remove_unreferenced`] deletes the runs no kept checkpoint names.
//! - **Keys begin with their key group** (two bytes, big-endian), so a store restored at another
//!   parallelism ([`Store::restore`]) links the runs inside its key groups and rewrites only
//!   those that straddle its range's ends.
//!
//! The store is owned by one operator subtask and used from its thread: no locks, no journal
//! (a checkpoint is the only durability a stream job needs: after a crash it restarts from one).

mod bloom;
mod cache;
pub mod error;
pub mod key_groups;
pub mod manifest;
mod merge;
mod run;
mod store;

pub use error::{Error, Result};
pub use key_groups::KeyGroupSet;
pub use manifest::{Manifest, RunKind, RunRef};
pub use store::{key_group_of, remove_unreferenced, Options, Stats, Store};

#[cfg(test)]
mod tests;
