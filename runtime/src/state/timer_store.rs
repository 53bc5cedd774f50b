//! The timers of a [`super::KeyedTimers`] that the on-disk backend keeps off the heap: the
//! latest ones, in a [`weir_statestore::Store`] whose keys sort by key group, then time, then key. A store key is
//! the key group (two bytes, big-endian, so a restore at another parallelism reads only its
//! ranges), the time (eight bytes, big-endian, its sign bit flipped so the bytes sort as the
//! times do) and the key's values in the checkpoint encoding; the value is empty.
//!
//! Timers are ordered by time, then by their key's encoding. Every timer before the `bound` is
//! on the heap, every one at or after it in the store. When the heap's timers hold more than
//! their share of the budget, its latest times move into the store (the bound moves down to
//! them); when the heap has none left, the earliest stored timers come back: the first few of
//! each key group, read one group after the other, of which those before the first timer any
//! group left behind (the new bound) move to the heap. Flink's RocksDB timer service keeps a
//! cached head per key group for the same reason: the store's order is by key group first.

use std::ops::RangeInclusive;
use std::path::Path;
use std::sync::Arc;

use weir_statestore::Manifest;

use super::backend::{fail, DiskBackend};
use super::local_store::LocalStore;
use super::timers::HeapTimers;
use super::Key;
use crate::checkpoint::codec::{Decoder, Encoder};
use crate::partition::{hash_values, key_group};
use crate::value::Value;

/// Heap bytes per time of the heap's timers: its node in the time map and its key set.
const TIME_BYTES: usize = 96;

/// Timers a refill brings back at least from each key group that holds some.
const MIN_PER_GROUP: usize = 8;

/// The store key of the timer of `key` at `time`.
fn store_key(time: i64, key: &[Value], max_parallelism: usize, buf: &mut Vec<u8>) {
    let group = key_group(hash_values(key), max_parallelism) as u16;
    let mut out = Encoder::from_buffer(std::mem::take(buf));
    out.raw(&group.to_be_bytes());
    out.raw(&((time as u64) ^ (1 << 63)).to_be_bytes());
    out.values(key);
    *buf = out.into_bytes();
}

/// A timer's place in the order: its time and its key's encoding (of a store key).
fn position(store_key: &[u8]) -> Option<(i64, &[u8])> {
    let time = u64::from_be_bytes(store_key.get(2..10)?.try_into().ok()?) ^ (1 << 63);
    Some((time as i64, &store_key[10..]))
}

/// The time and key of a store key (of a [`TimerStore`], or of its checkpointed runs).
pub(crate) fn decode(store_key: &[u8]) -> Option<(i64, Key)> {
    let (time, key) = position(store_key)?;
    Some((time, Decoder::new(key).values().ok()?))
}

/// `groups` widened to hold the key group of `store_key`.
fn widened(groups: Option<RangeInclusive<u16>>, store_key: &[u8]) -> Option<RangeInclusive<u16>> {
    let group = weir_statestore::key_group_of(store_key);
    Some(groups.map_or(group..=group, |g| *g.start().min(&group)..=*g.end().max(&group)))
}

fn key_bytes(key: &[Value]) -> Vec<u8> {
    let mut out = Encoder::new();
    out.values(key);
    out.into_bytes()
}

/// The timers of one timer set of one subtask that are in its store.
#[derive(Debug)]
pub(crate) struct TimerStore {
    /// Opened when the first timers leave the heap.
    store: Option<LocalStore>,
    backend: Arc<DiskBackend>,
    max_parallelism: usize,
    /// The first timer's place that the heap does not hold: every timer at or after it is in
    /// the store (`None`: the store holds none).
    bound: Option<(i64, Vec<u8>)>,
    /// How many timers the store holds (`None`: not known since a restore).
    stored: Option<usize>,
    /// The key groups the store's timers are in.
    groups: Option<RangeInclusive<u16>>,
    /// Heap bytes a timer on the heap takes (its key's slot and what its values allocate).
    timer_bytes: usize,
    /// Bytes charged to the budget.
    charged: usize,
    buf: Vec<u8>,
}

impl TimerStore {
    /// No stored timers, of `backend`, for a subtask with `max_parallelism` key groups.
    pub(crate) fn new(backend: Arc<DiskBackend>, max_parallelism: usize) -> Self {
        backend.budget.tier_opened();
        TimerStore {
            store: None,
            backend,
            max_parallelism,
            bound: None,
            stored: Some(0),
            groups: None,
            timer_bytes: 2 * std::mem::size_of::<Key>() + 16,
            charged: 0,
            buf: Vec::new(),
        }
    }

    /// Whether the timer of `key` at `time` belongs in the store (at or after the bound).
    pub(crate) fn holds(&self, time: i64, key: &[Value]) -> bool {
        match &self.bound {
            None => false,
            Some((bound, _)) if time != *bound => time > *bound,
            // A bound at the start of its time (where a spill leaves it) holds every key there,
            // without encoding the key on each registration.
            Some((_, bound_key)) => bound_key.is_empty() || key_bytes(key) >= *bound_key,
        }
    }

    /// Whether timers may be in the store (the heap's run out: [`TimerStore::refill`] first).
    pub(crate) fn has_stored(&self) -> bool {
        self.bound.is_some()
    }

    /// Sets the stored timer of `key` at `time` (one [`TimerStore::holds`]); whether it is new.
    pub(crate) fn register(&mut self, time: i64, key: &[Value]) -> bool {
        let Some(store) = &mut self.store else { return false };
        store_key(time, key, self.max_parallelism, &mut self.buf);
        let written = match store.get(&self.buf) {
            Ok(Some(_)) => return false,
            Ok(None) => store.put(&self.buf, &[]),
            Err(error) => Err(error),
        };
        if let Err(error) = written {
            fail(error);
            return false;
        }
        self.stored = self.stored.map(|n| n + 1);
        self.groups = widened(self.groups.take(), &self.buf);
        true
    }

    /// Removes the stored timer of `key` at `time` (one [`TimerStore::holds`]); whether there
    /// was one.
    pub(crate) fn remove(&mut self, time: i64, key: &[Value]) -> bool {
        let Some(store) = &mut self.store else { return false };
        store_key(time, key, self.max_parallelism, &mut self.buf);
        let removed = match store.get(&self.buf) {
            Ok(Some(_)) => store.delete(&self.buf).map(|()| true),
            Ok(None) => Ok(false),
            Err(error) => Err(error),
        };
        match removed {
            Ok(removed) => {
                self.stored = self.stored.map(|n| n - usize::from(removed));
                removed
            }
            Err(error) => {
                fail(error);
                false
            }
        }
    }

    /// Charges the budget for `heap` and, when the job's state holds too much and these timers
    /// more than their share, moves the heap's latest times (half its timers, at least one
    /// time) into the store.
    pub(crate) fn make_room(&mut self, heap: &mut HeapTimers) {
        self.charge(heap);
        let room = self.backend.budget.room(self.charged, &self.backend.store_options());
        if heap.count == 0 || room.used <= room.left || self.charged <= room.share {
            return;
        }
        if self.store.is_none() {
            self.store = LocalStore::create(&self.backend);
        }
        let Some(store) = &mut self.store else { return };
        let (target, mut moved, mut key_bytes) = (heap.count.div_ceil(2), 0, 0);
        let mut lowest = None;
        while moved < target {
            let Some((time, keys)) = heap.by_time.pop_last() else { break };
            for key in keys {
                store_key(time, &key, self.max_parallelism, &mut self.buf);
                if let Err(error) = store.put(&self.buf, &[]) {
                    fail(error);
                }
                key_bytes += self.buf.len() - 10;
                self.groups = widened(self.groups.take(), &self.buf);
                moved += 1;
            }
            lowest = Some(time);
        }
        heap.count -= moved;
        self.stored = self.stored.map(|n| n + moved);
        // Everything at the lowest time moved, so the bound is its first place.
        self.bound = lowest.map(|time| (time, Vec::new())).or(self.bound.take());
        if let Some(average) = key_bytes.checked_div(moved) {
            self.timer_bytes = 2 * std::mem::size_of::<Key>() + average;
        }
        self.backend.stats.entries_written(moved as u64);
        store.report();
        self.charge(heap);
        tracing::debug!(moved, heap = heap.count, stored = ?self.stored, "timers left the heap");
    }

    /// Brings the earliest stored timers back into `heap`, which holds none: at least a few,
    /// while the store holds some (the bound moves up past them).
    pub(crate) fn refill(&mut self, heap: &mut HeapTimers) {
        let (Some(store), Some(groups)) = (&mut self.store, self.groups.clone()) else {
            (self.bound, self.stored) = (None, Some(0));
            return;
        };
        let room = self.backend.budget.room(self.charged, &self.backend.store_options());
        let batch = (room.share / 2 / self.timer_bytes.max(1)).clamp(64, 1 << 16);
        let per_group = (batch / groups.len()).max(MIN_PER_GROUP);
        let mut loaded: Vec<Vec<u8>> = Vec::new();
        // The first timer a group left behind, the earliest of them: the new bound.
        let mut next: Option<(i64, Vec<u8>)> = None;
        for group in groups {
            // Key groups are below 32 768 (the largest `pipeline.max-parallelism`): `group + 1` fits.
            let (from, until) = (group.to_be_bytes(), group.saturating_add(1).to_be_bytes());
            for (taken, entry) in store.scan_range(&from, &until).enumerate() {
                let stored_key = match entry {
                    Ok((stored_key, _)) => stored_key,
                    Err(error) => return fail(error),
                };
                let Some((time, key)) = position(&stored_key) else {
                    return fail("a stored timer does not decode");
                };
                if next.as_ref().is_some_and(|(t, k)| (time, key) >= (*t, k.as_slice())) {
                    break;
                }
                if taken == per_group {
                    next = Some((time, key.to_vec()));
                    break;
                }
                loaded.push(stored_key);
            }
        }
        let mut moved = 0;
        for stored_key in loaded {
            let Some((time, key_bytes)) = position(&stored_key) else { return fail("a stored timer does not decode") };
            if next.as_ref().is_some_and(|(t, k)| (time, key_bytes) >= (*t, k.as_slice())) {
                continue;
            }
            let Ok(key) = Decoder::new(key_bytes).values::<Key>() else {
                return fail("a stored timer does not decode");
            };
            if let Err(error) = store.delete(&stored_key) {
                return fail(error);
            }
            heap.insert(&key, time);
            moved += 1;
        }
        self.stored = match next {
            None => Some(0),
            Some(_) => self.stored.map(|n| n - moved),
        };
        self.bound = next;
        store.report();
        self.charge(heap);
        tracing::debug!(moved, heap = heap.count, stored = ?self.stored, "timers came back to the heap");
    }

    /// Charges the budget for what `heap` holds.
    pub(crate) fn charge(&mut self, heap: &HeapTimers) {
        let want = heap.count * self.timer_bytes + heap.by_time.len() * TIME_BYTES;
        self.backend.budget.charge(want as isize - self.charged as isize);
        self.charged = want;
    }

    /// Visits every stored timer, by time and key (in key-group order).
    pub(crate) fn for_each(&self, mut visit: impl FnMut(i64, Key)) {
        let Some(store) = &self.store else { return };
        for entry in store.scan(&[]) {
            match entry.map(|(stored_key, _)| decode(&stored_key)) {
                Ok(Some((time, key))) => visit(time, key),
                Ok(None) => return fail("a stored timer does not decode"),
                Err(error) => return fail(error),
            }
        }
    }

    /// How many timers the store holds (counted by a scan after a restore).
    pub(crate) fn len(&self) -> usize {
        self.stored.unwrap_or_else(|| {
            let mut n = 0;
            self.for_each(|_, _| n += 1);
            n
        })
    }

    /// Makes the store's content an incremental checkpoint in the backend's shared directory;
    /// `None` when no timer ever left the heap (or the store failed, which is recorded).
    pub(crate) fn checkpoint(&mut self) -> Option<Manifest> {
        let shared = self.backend.shared.clone();
        let store = self.store.as_mut()?;
        let manifest = store.checkpoint(&shared).map_err(fail).ok()?;
        store.report();
        Some(manifest)
    }

    /// Takes the timers of checkpointed runs `manifests` in the key groups `key_groups`, from
    /// `shared`, as the store (which must hold none yet).
    pub(crate) fn restore_runs(&mut self, shared: &Path, manifests: &[Manifest], key_groups: RangeInclusive<u16>) {
        self.store = LocalStore::restore(&self.backend, shared, manifests, key_groups.clone());
        if self.store.is_some() {
            (self.bound, self.stored, self.groups) = (Some((i64::MIN, Vec::new())), None, Some(key_groups));
        }
    }

    /// Whether the store was never opened.
    pub(crate) fn is_unused(&self) -> bool {
        self.store.is_none()
    }

    /// Whether checkpoints are incremental, and where their runs are shared.
    pub(crate) fn incremental(&self) -> Option<&Path> {
        self.backend.incremental.then_some(self.backend.shared.as_path())
    }

    /// The number of key groups the store keys are laid out by.
    pub(crate) fn max_parallelism(&self) -> usize {
        self.max_parallelism
    }
}

impl Drop for TimerStore {
    fn drop(&mut self) {
        self.backend.budget.charge(-(self.charged as isize));
        self.backend.budget.tier_closed();
    }
}
