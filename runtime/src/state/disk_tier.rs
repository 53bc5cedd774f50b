//! A keyed state's entries with the on-disk backend: a bounded hot set on the heap over a
//! [`Store`] (see [`super::backend`]).
//!
//! An entry is in the hot map, in the store, or in both (a clean hot entry equals the
//! store's). Changes are made in the hot map and marked dirty; an entry leaves the hot map when
//! the job's hot tiers hold more than their budget (a dirty one is written to the store then,
//! a clean one dropped), a quarter of the map at a time, passing over the entries used since
//! the last eviction once (a clock). A miss reads the store and keeps what it finds in the hot
//! map. In the store a key is its key group (two bytes, big-endian, so a restore at another
//! parallelism reads only its ranges) followed by its values in the checkpoint encoding.

use std::ops::RangeInclusive;
use std::path::Path;
use std::sync::Arc;

use hashbrown::hash_map::EntryRef;
use weir_statestore::{Manifest, Store};

use super::backend::{fail, DiskBackend};
use super::local_store::LocalStore;
use super::tier::{Codec, FxHashMap};
use super::Key;
use crate::checkpoint::codec::{Decoder, Encoder};
use crate::partition::{hash_values, key_group};
use crate::value::Value;

/// Entries scanned between the writes of a [`DiskTier::retain`].
const RETAIN_BATCH: usize = 4096;

/// Entries an eviction decodes again to measure what a hot entry allocates.
const ENTRY_SAMPLE: usize = 64;

/// A hot entry and what the tier knows of it. The entry is boxed: a table slot stays a key
/// and a pointer wide whatever the entry's size (a group's accumulators take hundreds of
/// bytes inline), so the table costs less memory and moves less when it grows or shrinks.
#[derive(Debug)]
struct Slot<T> {
    item: Box<T>,
    /// Changed since the store last had it.
    dirty: bool,
    /// Used since the last eviction passed it.
    recent: bool,
    /// The store may hold the key (its removal must reach the store).
    stored: bool,
}

/// The entries of one state of one subtask with the on-disk backend.
#[derive(Debug)]
pub(crate) struct DiskTier<T> {
    hot: FxHashMap<Key, Slot<T>>,
    /// The store, opened when the first entry leaves the heap.
    store: Option<LocalStore>,
    backend: Arc<DiskBackend>,
    max_parallelism: usize,
    /// Heap bytes a hot entry allocates besides its slot in the map (measured on a sample
    /// each time the hot map doubled and when entries are evicted).
    entry_bytes: usize,
    /// The hot map's size when `entry_bytes` was last measured.
    measured_at: usize,
    /// Bytes charged to the budget.
    charged: usize,
    key_buf: Vec<u8>,
}

/// The store key of `key`: its key group, then its values.
fn store_key(key: &[Value], max_parallelism: usize, buf: &mut Vec<u8>) {
    let group = key_group(hash_values(key), max_parallelism) as u16;
    let mut out = Encoder::from_buffer(std::mem::take(buf));
    out.raw(&group.to_be_bytes());
    out.values(key);
    *buf = out.into_bytes();
}

/// Deletes `key` from `store`, if the tier has one.
fn delete_stored(store: &mut Option<LocalStore>, key: &[Value], max_parallelism: usize, buf: &mut Vec<u8>) {
    if let Some(store) = store {
        store_key(key, max_parallelism, buf);
        if let Err(error) = store.delete(buf) {
            fail(error);
        }
    }
}

/// The key a store key holds.
fn decode_key(bytes: &[u8]) -> Option<Key> {
    Decoder::new(bytes.get(2..)?).values().ok()
}

fn encode<T: Codec>(item: &T) -> Vec<u8> {
    let mut out = Encoder::new();
    item.encode(&mut out);
    out.into_bytes()
}

/// The heap bytes one hot entry allocates besides its table slot: its box and what it holds,
/// measured by decoding `sample` (store keys and values just written) with the allocator's
/// count; with no counting allocator, `encoded`, the entries' average encoded size.
fn measure_entry_bytes<T: Codec>(sample: &[(Vec<u8>, Vec<u8>)], encoded: usize) -> usize {
    let Some(before) = crate::memory::thread_heap_bytes() else { return encoded };
    let decoded: Vec<(Option<Key>, Option<Box<T>>)> = sample
        .iter()
        .map(|(key, value)| (decode_key(key), T::decode(&mut Decoder::new(value)).ok().map(Box::new)))
        .collect();
    let after = crate::memory::thread_heap_bytes().unwrap_or(before);
    // The sample's own vector is not part of an entry.
    let own = (decoded.capacity() * std::mem::size_of::<(Option<Key>, Option<Box<T>>)>()) as i64;
    let allocated = ((after - before - own).max(0) as usize) / decoded.len().max(1);
    drop(decoded);
    // Each allocation also costs the system allocator a header and rounding, about a quarter.
    allocated * 5 / 4
}

/// The key groups subtask `index` of `parallelism` owns of `max_parallelism`: the contiguous
/// range [`crate::partition::subtask_for_key_group`] assigns it.
pub(crate) fn key_groups_of(index: usize, parallelism: usize, max_parallelism: usize) -> RangeInclusive<u16> {
    let (i, p, m) = (index, parallelism.max(1), max_parallelism);
    let start = (i * m).div_ceil(p);
    let end = ((i + 1) * m).div_ceil(p).saturating_sub(1);
    start as u16..=end as u16
}

impl<T: Codec> DiskTier<T> {
    /// An empty tier of `backend`, for a subtask with `max_parallelism` key groups.
    pub(crate) fn new(backend: Arc<DiskBackend>, max_parallelism: usize) -> Self {
        backend.budget.tier_opened();
        DiskTier {
            hot: FxHashMap::new(),
            store: None,
            backend,
            max_parallelism,
            // Until the first measurement: the box, as large as the entry's inline size.
            entry_bytes: std::mem::size_of::<T>().max(16),
            measured_at: ENTRY_SAMPLE / 2,
            charged: 0,
            key_buf: Vec::new(),
        }
    }

    /// The store, opened first if need be (`None` when it cannot be: the failure is recorded).
    fn open_store(&mut self) -> Option<&mut LocalStore> {
        if self.store.is_none() {
            self.store = LocalStore::create(&self.backend);
        }
        self.store.as_mut()
    }

    /// Brings `key` into the hot map if the store has it.
    fn ensure(&mut self, key: &[Value]) {
        if self.hot.contains_key(key) {
            return;
        }
        self.make_room();
        let Some(store) = &mut self.store else { return };
        store_key(key, self.max_parallelism, &mut self.key_buf);
        match store.get(&self.key_buf) {
            Ok(Some(bytes)) => match T::decode(&mut Decoder::new(&bytes)) {
                Ok(item) => {
                    let item = Box::new(item);
                    self.hot.insert(Key::from(key), Slot { item, dirty: false, recent: true, stored: true });
                }
                Err(error) => fail(format!("a stored entry does not decode: {error}")),
            },
            Ok(None) => {}
            Err(error) => fail(error),
        }
    }

    /// Charges the budget for the hot map's size and, when the job's tiers hold too much and
    /// this one more than its share, evicts a quarter of it.
    fn make_room(&mut self) {
        if self.hot.len() >= 2 * self.measured_at {
            self.measure_hot();
        }
        self.charge();
        if self.hot.is_empty() {
            return;
        }
        let room = self.backend.budget.room(self.charged, &self.backend.store_options());
        // The table may take half the room (its slots are allocated whether used or not, and it
        // doubles when full); the entries' own allocations and the other tiers, the rest.
        let slots = (room.left / 2 / Self::SLOT_BYTES).max(16);
        let max_entries = (1usize << slots.ilog2()) * 7 / 8;
        if self.hot.len() >= max_entries {
            // A quarter out, then a fresh table of the same size: the slots evicted entries
            // leave as tombstones would otherwise make the next inserts double the table.
            self.evict((self.hot.len() / 4).max(1));
            self.hot.shrink_to(max_entries);
            self.charge();
        } else if room.used > room.left && self.charged > room.share {
            // A tier under its share leaves the eviction to those over it: evicting from it
            // would scan its table on every access while the total stays too high.
            self.evict((self.hot.len() / 4).max(1));
            // Slots free the memory they charge only when the table shrinks.
            if self.hot.capacity() >= 2 * self.hot.len() {
                self.hot.shrink_to(self.hot.len());
                self.charge();
            }
        }
    }

    /// Writes out (dirty) or drops (clean) `target` hot entries not used since the last pass.
    fn evict(&mut self, target: usize) {
        if self.open_store().is_none() {
            return;
        }
        let Some(store) = &mut self.store else { return };
        let (max_parallelism, key_buf) = (self.max_parallelism, &mut self.key_buf);
        let (mut evicted, mut encoded_bytes, mut encoded) = (0usize, 0usize, 0usize);
        let mut sample: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for _pass in 0..2 {
            self.hot.retain(|key, slot| {
                if evicted >= target {
                    return true;
                }
                if slot.recent {
                    slot.recent = false;
                    return true;
                }
                if slot.dirty {
                    store_key(key, max_parallelism, key_buf);
                    let value = encode(&*slot.item);
                    encoded_bytes += key_buf.len() + value.len();
                    encoded += 1;
                    if let Err(error) = store.put(key_buf, &value) {
                        fail(error);
                    }
                    if sample.len() < ENTRY_SAMPLE {
                        sample.push((key_buf.clone(), value));
                    }
                }
                evicted += 1;
                false
            });
            if evicted >= target {
                break;
            }
        }
        self.backend.stats.entries_written(encoded as u64);
        store.report();
        if let Some(average) = encoded_bytes.checked_div(encoded) {
            self.entry_bytes = measure_entry_bytes::<T>(&sample, average);
            self.measured_at = self.hot.len();
        }
        self.charge();
        tracing::debug!(
            evicted,
            written = encoded,
            hot = self.hot.len(),
            entry_bytes = self.entry_bytes,
            charged = self.charged,
            job_charged = self.backend.budget.room(self.charged, &self.backend.store_options()).used,
            process_heap = crate::memory::heap_bytes(),
            "keyed state entries left the heap"
        );
    }

    /// Measures what a hot entry allocates on a sample of the hot map's entries (the table's
    /// order is the keys' hashes', so the sample is as good as a random one).
    fn measure_hot(&mut self) {
        let mut sample = Vec::with_capacity(ENTRY_SAMPLE);
        let mut encoded_bytes = 0;
        for (key, slot) in self.hot.iter().take(ENTRY_SAMPLE) {
            let mut store_key_bytes = Vec::new();
            store_key(key, self.max_parallelism, &mut store_key_bytes);
            let value = encode(&*slot.item);
            encoded_bytes += store_key_bytes.len() + value.len();
            sample.push((store_key_bytes, value));
        }
        if let Some(average) = encoded_bytes.checked_div(sample.len()) {
            self.entry_bytes = measure_entry_bytes::<T>(&sample, average);
        }
        self.measured_at = self.hot.len();
    }

    /// Bytes of a slot of the hot map's table (a key, a slot and its control byte).
    const SLOT_BYTES: usize = std::mem::size_of::<(Key, Slot<T>)>() + 1;

    /// Charges the budget for what the hot map holds: its table (every slot, used or not) and
    /// what its entries allocate.
    fn charge(&mut self) {
        // A table of n slots holds up to 7/8 n entries (`capacity`).
        let slots = if self.hot.capacity() == 0 { 0 } else { (self.hot.capacity() * 8 / 7).next_power_of_two() };
        let want = slots * Self::SLOT_BYTES + self.hot.len() * self.entry_bytes;
        self.backend.budget.charge(want as isize - self.charged as isize);
        self.charged = want;
    }

    /// The entry of `key`.
    pub(crate) fn get(&mut self, key: &[Value]) -> Option<&T> {
        self.ensure(key);
        let slot = self.hot.get_mut(key)?;
        slot.recent = true;
        Some(&*slot.item)
    }

    /// The entry of `key`, to change.
    pub(crate) fn get_mut(&mut self, key: &[Value]) -> Option<&mut T> {
        self.ensure(key);
        let slot = self.hot.get_mut(key)?;
        slot.recent = true;
        slot.dirty = true;
        Some(&mut *slot.item)
    }

    /// Sets the entry of `key`.
    pub(crate) fn insert(&mut self, key: Key, item: T) {
        if let Some(slot) = self.hot.get_mut(&key) {
            *slot.item = item;
            (slot.dirty, slot.recent) = (true, true);
            return;
        }
        self.make_room();
        let stored = self.store.is_some();
        self.hot.insert(key, Slot { item: Box::new(item), dirty: true, recent: true, stored });
    }

    /// The entry of `key`, made by `make` when there is none.
    pub(crate) fn get_or_insert_with(&mut self, key: &[Value], make: impl FnOnce() -> T) -> &mut T {
        self.ensure(key);
        let slot = self.hot.entry_ref(key).or_insert_with(|| Slot {
            item: Box::new(make()),
            dirty: true,
            recent: true,
            stored: false,
        });
        slot.dirty = true;
        slot.recent = true;
        &mut slot.item
    }

    /// The entry of `key` to change: a present one `keep` accepts stays; otherwise `make` gives
    /// the new one, or `None`, which removes a present entry.
    pub(crate) fn upsert(
        &mut self,
        key: &[Value],
        keep: impl FnOnce(&T) -> bool,
        make: impl FnOnce() -> Option<T>,
    ) -> Option<&mut T> {
        self.ensure(key);
        let slot = match self.hot.entry_ref(key) {
            EntryRef::Occupied(entry) if keep(&entry.get().item) => entry.into_mut(),
            EntryRef::Occupied(mut entry) => match make() {
                Some(item) => {
                    *entry.get_mut().item = item;
                    entry.into_mut()
                }
                None => {
                    let gone = entry.remove();
                    if gone.stored {
                        delete_stored(&mut self.store, key, self.max_parallelism, &mut self.key_buf);
                    }
                    return None;
                }
            },
            EntryRef::Vacant(entry) => {
                entry.insert(Slot { item: Box::new(make()?), dirty: true, recent: true, stored: false })
            }
        };
        slot.dirty = true;
        slot.recent = true;
        Some(&mut slot.item)
    }

    /// Removes the entry of `key`, returning it.
    pub(crate) fn remove(&mut self, key: &[Value]) -> Option<T> {
        self.ensure(key);
        let slot = self.hot.remove(key)?;
        if slot.stored {
            self.delete_stored(key);
        }
        Some(*slot.item)
    }

    fn delete_stored(&mut self, key: &[Value]) {
        delete_stored(&mut self.store, key, self.max_parallelism, &mut self.key_buf);
    }

    /// Keeps the entries `keep` accepts, after it had them to change; a stored entry it
    /// changes is written back.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&[Value], &mut T) -> bool) {
        let mut removed: Vec<Key> = Vec::new();
        self.hot.retain(|key, slot| {
            let kept = keep(key, &mut slot.item);
            if kept {
                slot.dirty = true;
            } else if slot.stored {
                removed.push(key.clone());
            }
            kept
        });
        removed.iter().for_each(|key| self.delete_stored(key));
        let Some(store) = &mut self.store else { return };
        let mut from: Vec<u8> = Vec::new();
        loop {
            let mut changes: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
            let mut scanned = 0;
            let mut last = None;
            for entry in store.scan(&from) {
                let (stored_key, value) = match entry {
                    Ok(entry) => entry,
                    Err(error) => {
                        fail(error);
                        return;
                    }
                };
                scanned += 1;
                if let (Some(value), Some(key)) = (&value, decode_key(&stored_key)) {
                    if !self.hot.contains_key(&key) {
                        match T::decode(&mut Decoder::new(value)) {
                            Ok(mut item) => {
                                if !keep(&key, &mut item) {
                                    changes.push((stored_key.clone(), None));
                                } else {
                                    let now = encode(&item);
                                    if now != *value {
                                        changes.push((stored_key.clone(), Some(now)));
                                    }
                                }
                            }
                            Err(error) => fail(format!("a stored entry does not decode: {error}")),
                        }
                    }
                }
                last = Some(stored_key);
                if scanned >= RETAIN_BATCH {
                    break;
                }
            }
            for (key, value) in changes {
                let written = match value {
                    Some(value) => store.put(&key, &value),
                    None => store.delete(&key),
                };
                if let Err(error) = written {
                    fail(error);
                }
            }
            match last {
                Some(mut key) if scanned >= RETAIN_BATCH => {
                    key.push(0);
                    from = key;
                }
                _ => return,
            }
        }
    }

    /// Visits every entry: the hot ones, then the stored ones not hot.
    pub(crate) fn for_each(&self, mut visit: impl FnMut(&[Value], &T)) {
        self.hot.iter().for_each(|(key, slot)| visit(key, &slot.item));
        self.for_each_stored(|key, bytes| match T::decode(&mut Decoder::new(bytes)) {
            Ok(item) => visit(key, &item),
            Err(error) => fail(format!("a stored entry does not decode: {error}")),
        });
    }

    /// Visits the key and encoded entry of every stored key that is not hot.
    fn for_each_stored(&self, mut visit: impl FnMut(&[Value], &[u8])) {
        let Some(store) = &self.store else { return };
        for entry in store.scan(&[]) {
            match entry {
                Ok((stored_key, Some(value))) => {
                    if let Some(key) = decode_key(&stored_key).filter(|k| !self.hot.contains_key(k)) {
                        visit(&key, &value);
                    }
                }
                Ok((_, None)) => {}
                Err(error) => return fail(error),
            }
        }
    }

    /// Whether no key holds an entry (reads the store until it finds one).
    pub(crate) fn holds_nothing(&self) -> bool {
        if !self.hot.is_empty() {
            return false;
        }
        let Some(store) = &self.store else { return true };
        for entry in store.scan(&[]) {
            match entry {
                Ok((_, Some(_))) => return false,
                Ok((_, None)) => {}
                Err(error) => {
                    fail(error);
                    return false;
                }
            }
        }
        true
    }

    /// How many keys hold an entry.
    pub(crate) fn len(&self) -> usize {
        let mut stored = 0;
        self.for_each_stored(|_, _| stored += 1);
        self.hot.len() + stored
    }

    /// Writes the dirty hot entries into the store, which then holds every entry.
    fn write_dirty(&mut self) {
        if !self.hot.values().any(|slot| slot.dirty) || self.open_store().is_none() {
            return;
        }
        let Some(store) = &mut self.store else { return };
        let mut written = 0;
        for (key, slot) in self.hot.iter_mut().filter(|(_, slot)| slot.dirty) {
            store_key(key, self.max_parallelism, &mut self.key_buf);
            if let Err(error) = store.put(&self.key_buf, &encode(&*slot.item)) {
                fail(error);
                break;
            }
            slot.dirty = false;
            slot.stored = true;
            written += 1;
        }
        self.backend.stats.entries_written(written);
    }

    /// Makes the store's content an incremental checkpoint in the backend's shared directory;
    /// `None` when the state has no entry (or the store failed, which is recorded).
    pub(crate) fn checkpoint(&mut self) -> Option<Manifest> {
        self.write_dirty();
        let shared = self.backend.shared.clone();
        let store = self.store.as_mut()?;
        let manifest = store.checkpoint(&shared).map_err(fail).ok()?;
        store.report();
        Some(manifest)
    }

    /// Writes every entry that `write` accepts (it writes it into `out` and returns true) and
    /// returns how many it accepted: a full snapshot.
    pub(crate) fn write_all(
        &mut self,
        out: &mut Encoder,
        mut write: impl FnMut(&[Value], &T, &mut Encoder) -> bool,
    ) -> u32 {
        self.write_dirty();
        let mut count = 0;
        self.hot.iter().for_each(|(key, slot)| count += u32::from(write(key, &slot.item, out)));
        self.for_each_stored(|key, bytes| match T::decode(&mut Decoder::new(bytes)) {
            Ok(item) => count += u32::from(write(key, &item, out)),
            Err(error) => fail(format!("a stored entry does not decode: {error}")),
        });
        count
    }

    /// Takes the entries of checkpointed runs `manifests` in the key groups `key_groups`, from
    /// `shared`, as this tier's store (the tier must be empty).
    pub(crate) fn restore_runs(&mut self, shared: &Path, manifests: &[Manifest], key_groups: RangeInclusive<u16>) {
        self.store = LocalStore::restore(&self.backend, shared, manifests, key_groups);
    }

    /// Whether checkpoints are incremental (`state.backend.incremental`).
    pub(crate) fn incremental(&self) -> bool {
        self.backend.incremental
    }

    /// Where incremental checkpoints keep their runs.
    pub(crate) fn shared(&self) -> &Path {
        &self.backend.shared
    }

    /// Whether the tier holds nothing and has no store yet.
    pub(crate) fn is_empty(&self) -> bool {
        self.hot.is_empty() && self.store.is_none()
    }

    /// The number of key groups the tier's store keys are laid out by.
    pub(crate) fn max_parallelism(&self) -> usize {
        self.max_parallelism
    }
}

impl<T> Drop for DiskTier<T> {
    fn drop(&mut self) {
        self.backend.budget.charge(-(self.charged as isize));
        self.backend.budget.tier_closed();
    }
}

/// Every entry of checkpointed runs `manifests` in `shared`, by key and encoded entry, read
/// through a scratch store in `scratch`, which the caller removes (a restore into a heap state,
/// or at another number of key groups).
pub(crate) fn read_runs(
    scratch: &Path,
    shared: &Path,
    manifests: &[Manifest],
    mut visit: impl FnMut(Key, &[u8]),
) -> weir_statestore::Result<()> {
    read_run_entries(scratch, shared, manifests, |key, value| {
        if let Some(key) = decode_key(key) {
            visit(key, value);
        }
    })
}

/// Every entry of checkpointed runs `manifests` in `shared`, by store key and value, read
/// through a scratch store in `scratch`, which the caller removes.
pub(crate) fn read_run_entries(
    scratch: &Path,
    shared: &Path,
    manifests: &[Manifest],
    mut visit: impl FnMut(&[u8], &[u8]),
) -> weir_statestore::Result<()> {
    let store = Store::restore(scratch, weir_statestore::Options::default(), shared, manifests, 0..=u16::MAX)?;
    for entry in store.scan(&[]) {
        if let (key, Some(value)) = entry? {
            visit(&key, &value);
        }
    }
    Ok(())
}
