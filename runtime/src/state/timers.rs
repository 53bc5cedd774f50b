//! Event-time timers per key: what a window, join or sort operator must do for a key once the
//! watermark reaches a time. Checkpointed and restored by key like the other keyed state.

use std::collections::BTreeMap;

use hashbrown::HashSet;

use super::{owns_key, Key};
use crate::checkpoint::{StateReader, StateWriter};
use crate::error::{Error, Result};
use crate::operator::SubtaskInfo;
use crate::value::Value;

/// Timers by time, each for a key; a key has at most one timer per time.
///
/// ```
/// use weir_runtime::state::KeyedTimers;
/// use weir_runtime::Value;
///
/// let mut timers = KeyedTimers::new("window-timers");
/// timers.register(&[Value::Int(1)], 59_999);
/// timers.register(&[Value::Int(2)], 119_999);
/// assert!(timers.pop_due(60_000).is_some_and(|(time, keys)| time == 59_999 && keys.len() == 1));
/// assert!(timers.pop_due(60_000).is_none(), "the other is not due yet");
/// ```
#[derive(Debug, Clone)]
pub struct KeyedTimers {
    name: String,
    by_time: BTreeMap<i64, HashSet<Key>>,
    count: usize,
}

impl KeyedTimers {
    /// No timers; `name` is their section in checkpoints.
    pub fn new(name: &str) -> Self {
        KeyedTimers { name: name.to_string(), by_time: BTreeMap::new(), count: 0 }
    }

    /// Sets a timer for `key` at `time` (once: a second one at the same time is the same timer).
    /// Returns whether it is new.
    pub fn register(&mut self, key: &[Value], time: i64) -> bool {
        let keys = self.by_time.entry(time).or_default();
        if keys.contains(key) {
            return false;
        }
        keys.insert(Key::from(key));
        self.count += 1;
        true
    }

    /// Removes the timer of `key` at `time`, returning whether there was one.
    pub fn remove(&mut self, key: &[Value], time: i64) -> bool {
        let Some(keys) = self.by_time.get_mut(&time) else { return false };
        let removed = keys.remove(key);
        if keys.is_empty() {
            self.by_time.remove(&time);
        }
        self.count -= usize::from(removed);
        removed
    }

    /// The earliest time with timers, if any.
    pub fn next_time(&self) -> Option<i64> {
        self.by_time.keys().next().copied()
    }

    /// Removes and returns the timers of the earliest time at or before `watermark` (a timer
    /// fires when the watermark reaches its time), with their keys in no particular order.
    /// Call it until it returns `None` to fire every due timer in time order.
    pub fn pop_due(&mut self, watermark: i64) -> Option<(i64, Vec<Key>)> {
        self.pop_due_by(|time| time <= watermark)
    }

    /// Removes and returns the timers of the earliest time when `due` says that time has come
    /// (times in order: once one is not due, none after it is fired).
    pub fn pop_due_by(&mut self, due: impl Fn(i64) -> bool) -> Option<(i64, Vec<Key>)> {
        let time = self.next_time().filter(|&t| due(t))?;
        let keys: Vec<Key> = self.by_time.remove(&time).into_iter().flatten().collect();
        self.count -= keys.len();
        Some((time, keys))
    }

    /// How many timers are set.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no timer is set.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Writes every timer as the section of these timers: per time, its keys.
    pub fn snapshot(&self, state: &mut StateWriter) {
        let out = state.section(&self.name);
        out.u32(self.by_time.len() as u32);
        for (time, keys) in &self.by_time {
            out.i64(*time);
            out.u32(keys.len() as u32);
            keys.iter().for_each(|k| out.values(k));
        }
    }

    /// Takes back the timers of every old subtask's state whose keys subtask `info` owns.
    ///
    /// # Errors
    /// A damaged section, naming the timers.
    pub fn restore(&mut self, states: &[StateReader], info: &SubtaskInfo) -> Result<()> {
        let malformed = |e| Error::Restore(format!("the timers '{}' are malformed: {e}", self.name));
        let mut restored = Vec::new();
        for state in states {
            let Some(mut input) = state.section(&self.name) else { continue };
            for _ in 0..input.u32().map_err(malformed)? {
                let time = input.i64().map_err(malformed)?;
                for _ in 0..input.u32().map_err(malformed)? {
                    let key: Key = input.values().map_err(malformed)?;
                    if owns_key(&key, info) {
                        restored.push((time, key));
                    }
                }
            }
        }
        for (time, key) in restored {
            self.register(&key, time);
        }
        Ok(())
    }
}
