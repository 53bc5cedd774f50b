//! Event-time timers per key: what a window, join or sort operator must do for a key once the
//! watermark reaches a time. Checkpointed and restored by key like the other keyed state.
//!
//! On the heap backend every timer is on the heap. With the on-disk backend the earliest timers
//! are on the heap and, once they hold more than their share of the managed memory, the latest
//! ones in a store ([`TimerStore`]); checkpoints write the heap's timers as the section of the
//! timers and the store's runs as its `@runs` section (incremental) or every timer in the
//! section (full). Either backend restores from either form.

use std::collections::BTreeMap;
use std::sync::Arc;

use hashbrown::HashSet;

use super::backend;
use super::disk_tier::{key_groups_of, read_run_entries};
use super::runs::RunsSection;
use super::timer_store::{self, TimerStore};
use super::{owns_key, Key};
use crate::checkpoint::codec::Encoder;
use crate::checkpoint::{StateReader, StateWriter};
use crate::error::{Error, Result};
use crate::subtask::SubtaskInfo;
use crate::value::Value;

/// Timers on the heap, by time; a key has at most one timer per time.
#[derive(Debug, Clone, Default)]
pub(crate) struct HeapTimers {
    pub(crate) by_time: BTreeMap<i64, HashSet<Key>>,
    /// How many.
    pub(crate) count: usize,
}

impl HeapTimers {
    /// Sets the timer of `key` at `time`; whether it is new.
    pub(crate) fn insert(&mut self, key: &[Value], time: i64) -> bool {
        let keys = self.by_time.entry(time).or_default();
        if keys.contains(key) {
            return false;
        }
        keys.insert(Key::from(key));
        self.count += 1;
        true
    }

    fn remove(&mut self, key: &[Value], time: i64) -> bool {
        let Some(keys) = self.by_time.get_mut(&time) else { return false };
        let removed = keys.remove(key);
        if keys.is_empty() {
            self.by_time.remove(&time);
        }
        self.count -= usize::from(removed);
        removed
    }

    fn first_time(&self) -> Option<i64> {
        self.by_time.keys().next().copied()
    }

    fn take(&mut self, time: i64) -> Vec<Key> {
        let keys: Vec<Key> = self.by_time.remove(&time).into_iter().flatten().collect();
        self.count -= keys.len();
        keys
    }
}

/// Where the timers beyond the heap are.
#[derive(Debug)]
enum Spill {
    /// Not yet known: the timers bind to the backend of the subtask they run in with their
    /// first timer.
    Unbound,
    /// Nowhere: every timer is on the heap.
    Heap,
    /// In a store of the on-disk backend.
    Disk(Box<TimerStore>),
}

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
#[derive(Debug)]
pub struct KeyedTimers {
    name: String,
    heap: HeapTimers,
    spill: Spill,
}

/// A copy of every timer (operators are cloned from a prototype per subtask, before they hold
/// any); a copy of timers on disk is on the heap and binds again with its next timer.
impl Clone for KeyedTimers {
    fn clone(&self) -> Self {
        let mut heap = self.heap.clone();
        let spill = match &self.spill {
            Spill::Unbound | Spill::Disk(_) => Spill::Unbound,
            Spill::Heap => Spill::Heap,
        };
        if let Spill::Disk(disk) = &self.spill {
            disk.for_each(|time, key| {
                heap.insert(&key, time);
            });
        }
        KeyedTimers { name: self.name.clone(), heap, spill }
    }
}

impl KeyedTimers {
    /// No timers; `name` is their section in checkpoints.
    pub fn new(name: &str) -> Self {
        KeyedTimers { name: name.to_string(), heap: HeapTimers::default(), spill: Spill::Unbound }
    }

    /// Binds to the backend of the running subtask, once.
    fn bind(&mut self) {
        if !matches!(self.spill, Spill::Unbound) {
            return;
        }
        let disk = backend::current()
            .and_then(|scope| Some((Arc::clone(scope.backend.disk_backend()?), scope.max_parallelism)));
        self.spill = match disk {
            Some((disk, max_parallelism)) => Spill::Disk(Box::new(TimerStore::new(disk, max_parallelism))),
            None => Spill::Heap,
        };
    }

    /// Sets a timer for `key` at `time` (once: a second one at the same time is the same timer).
    /// Returns whether it is new.
    pub fn register(&mut self, key: &[Value], time: i64) -> bool {
        self.bind();
        match &mut self.spill {
            Spill::Disk(disk) if disk.holds(time, key) => disk.register(time, key),
            Spill::Disk(disk) => {
                let new = self.heap.insert(key, time);
                if new {
                    disk.make_room(&mut self.heap);
                }
                new
            }
            Spill::Unbound | Spill::Heap => self.heap.insert(key, time),
        }
    }

    /// Removes the timer of `key` at `time`, returning whether there was one.
    pub fn remove(&mut self, key: &[Value], time: i64) -> bool {
        match &mut self.spill {
            Spill::Disk(disk) if disk.holds(time, key) => disk.remove(time, key),
            Spill::Disk(disk) => {
                let removed = self.heap.remove(key, time);
                disk.charge(&self.heap);
                removed
            }
            Spill::Unbound | Spill::Heap => self.heap.remove(key, time),
        }
    }

    /// Brings stored timers back when the heap has none left.
    fn refill(&mut self) {
        if let Spill::Disk(disk) = &mut self.spill {
            if self.heap.count == 0 && disk.has_stored() {
                disk.refill(&mut self.heap);
            }
        }
    }

    /// The earliest time with timers, if any.
    pub fn next_time(&mut self) -> Option<i64> {
        self.refill();
        self.heap.first_time()
    }

    /// Removes and returns timers of the earliest time at or before `watermark` (a timer fires
    /// when the watermark reaches its time), with their keys in no particular order. Call it
    /// until it returns `None` to fire every due timer in time order.
    pub fn pop_due(&mut self, watermark: i64) -> Option<(i64, Vec<Key>)> {
        self.pop_due_by(|time| time <= watermark)
    }

    /// Removes and returns timers of the earliest time when `due` says that time has come
    /// (times in order: once one is not due, none after it is fired). On the heap every timer of
    /// the time comes at once; with timers on disk, a time's timers may come in several calls,
    /// each with a bounded number of them.
    pub fn pop_due_by(&mut self, due: impl Fn(i64) -> bool) -> Option<(i64, Vec<Key>)> {
        let time = self.next_time().filter(|&t| due(t))?;
        let keys = self.heap.take(time);
        if let Spill::Disk(disk) = &mut self.spill {
            disk.charge(&self.heap);
        }
        Some((time, keys))
    }

    /// How many timers are set (with timers on disk after a restore, a scan of the store the
    /// first time).
    pub fn len(&self) -> usize {
        self.heap.count + self.stored_len()
    }

    fn stored_len(&self) -> usize {
        match &self.spill {
            Spill::Disk(disk) => disk.len(),
            Spill::Unbound | Spill::Heap => 0,
        }
    }

    /// Whether no timer is set.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the timers as the section of these timers: per time, its keys (a stored timer as
    /// a time of its own); with incremental checkpoints of the on-disk backend, the heap's
    /// timers so and the store's runs as the `@runs` section.
    pub fn snapshot(&mut self, state: &mut StateWriter) {
        let out = state.section(&self.name);
        let at = out.len();
        out.u32(0);
        let mut times = self.heap.by_time.len() as u32;
        for (time, keys) in &self.heap.by_time {
            out.i64(*time);
            out.u32(keys.len() as u32);
            keys.iter().for_each(|k| out.values(k));
        }
        if let Spill::Disk(disk) = &mut self.spill {
            match disk.incremental().map(std::path::Path::to_path_buf) {
                Some(shared) => {
                    out.patch_u32(at, times);
                    if let Some(manifest) = disk.checkpoint() {
                        let max_parallelism = disk.max_parallelism();
                        RunsSection { max_parallelism, shared, manifest }.write(&self.name, state);
                    }
                    return;
                }
                None => disk.for_each(|time, key| {
                    write_timer(out, time, &key);
                    times += 1;
                }),
            }
        }
        out.patch_u32(at, times);
    }

    /// Takes back the timers of every old subtask's state (either form) whose keys subtask
    /// `info` owns.
    ///
    /// # Errors
    /// A damaged section, naming the timers; checkpointed runs that cannot be read.
    pub fn restore(&mut self, states: &[StateReader], info: &SubtaskInfo) -> Result<()> {
        self.bind();
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
        self.restore_runs(states, info)?;
        for (time, key) in restored {
            self.register(&key, time);
        }
        Ok(())
    }

    /// Takes back the timers of every old subtask's `@runs` section whose keys `info` owns: as
    /// the store when their layout allows, otherwise read one by one.
    fn restore_runs(&mut self, states: &[StateReader], info: &SubtaskInfo) -> Result<()> {
        let malformed = |e| Error::Restore(format!("the timers '{}' are malformed: {e}", self.name));
        let runs = RunsSection::read_all(&self.name, states).map_err(malformed)?;
        let Some(first) = runs.first() else { return Ok(()) };
        if let Spill::Disk(disk) = &mut self.spill {
            if RunsSection::same_layout(&runs, info.max_parallelism) && disk.is_unused() {
                let manifests: Vec<_> = runs.iter().map(|r| r.manifest.clone()).collect();
                let groups = key_groups_of(info.index, info.parallelism, info.max_parallelism);
                disk.restore_runs(&first.shared, &manifests, groups);
                return Ok(());
            }
        }
        let scratch = tempfile::tempdir().map_err(|e| Error::Restore(format!("no scratch directory: {e}")))?;
        for (at, section) in runs.iter().enumerate() {
            let mut timers = Vec::new();
            let mut damaged = false;
            let dir = scratch.path().join(at.to_string());
            read_run_entries(&dir, &section.shared, std::slice::from_ref(&section.manifest), |stored_key, _| {
                match timer_store::decode(stored_key) {
                    Some((time, key)) if owns_key(&key, info) => timers.push((time, key)),
                    Some(_) => {}
                    None => damaged = true,
                }
            })
            .map_err(|e| Error::Restore(format!("the timers '{}' cannot be read: {e}", self.name)))?;
            if damaged {
                return Err(Error::Restore(format!(
                    "the timers '{}' hold a stored timer that does not decode",
                    self.name
                )));
            }
            for (time, key) in timers {
                self.register(&key, time);
            }
        }
        Ok(())
    }
}

/// One timer as a time of its own in the section: the time, a count of one and the key.
fn write_timer(out: &mut Encoder, time: i64, key: &[Value]) {
    out.i64(time);
    out.u32(1);
    out.values(key);
}
