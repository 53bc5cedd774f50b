//! Keyed state for operators: value, list and map state scoped to a key, with Flink's state
//! TTL, checkpointed and restored at any parallelism by construction.
//!
//! Each state is one named section of the operator's checkpoint ([`crate::checkpoint`]). A
//! subtask restored at another parallelism reads every old subtask's section and keeps the keys
//! the job's HASH exchange now sends it ([`owns_key`]: the key's key group, as Flink assigns
//! key groups to subtasks). With a TTL (`table.exec.state.ttl`), an entry expires that long
//! after it was last written, in processing time, and is never returned once expired (Flink's
//! `OnCreateAndWrite` and `NeverReturnExpired`); expired entries are dropped when read, by
//! [`ValueState::purge_expired`] and its kin, and are never written into a checkpoint.
//!
//! ```
//! use weir_runtime::state::ValueState;
//! use weir_runtime::Value;
//!
//! let mut counts: ValueState<i64> = ValueState::new("counts", None);
//! let key = [Value::string("a")];
//! let n = counts.get(&key, 0).copied().unwrap_or(0);
//! counts.put(&key, n + 1, 0);
//! assert_eq!(counts.get(&key, 0), Some(&1));
//! ```

pub mod backend;
mod disk_tier;
mod keyed;
mod local_store;
pub mod runs;
mod stats;
mod tier;
mod timer_store;
mod timers;
mod user_map;
mod value;
mod work_dir;

pub use backend::{BackendConfig, BackendKind, StateBackend};
pub use keyed::{ListMut, ListState, MapState, ValueState};
pub use stats::{StateStats, StateSummary};
pub use timers::KeyedTimers;
pub use value::StateValue;

use crate::partition::{hash_values, subtask_for_hash_in};
use crate::subtask::SubtaskInfo;
use crate::value::Value;

/// A key of keyed state: the values of the operator's key columns, held inline up to two
/// values (the common case), so that a lookup that hits reads no other memory.
pub type Key = smallvec::SmallVec<[Value; 2]>;

/// Whether subtask `info` owns `key`: the HASH exchange on all of the key's columns sends it
/// there (its key group, of `info.max_parallelism`, is assigned to the subtask).
pub fn owns_key(key: &[Value], info: &SubtaskInfo) -> bool {
    subtask_for_hash_in(hash_values(key), info.max_parallelism, info.parallelism) == info.index
}

/// When entries expire: `ttl` milliseconds after their last write (none: never).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ttl {
    millis: Option<i64>,
}

impl Ttl {
    /// Entries live `ttl` after their last write; `None` (or zero), forever.
    pub fn new(ttl: Option<std::time::Duration>) -> Self {
        Ttl { millis: ttl.map(|d| d.as_millis() as i64).filter(|&m| m > 0) }
    }

    /// Whether entries expire at all.
    pub fn is_on(&self) -> bool {
        self.millis.is_some()
    }

    /// Whether an entry last written at `written` has expired at `now`.
    pub fn expired(&self, written: i64, now: i64) -> bool {
        self.millis.is_some_and(|ttl| now.saturating_sub(written) >= ttl)
    }
}

#[cfg(test)]
mod tests;
