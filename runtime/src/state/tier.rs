//! Where a keyed state's entries are: all in a hash map on the heap, or, with the on-disk
//! backend, a bounded hot set over a store ([`DiskTier`]). A state starts unbound and binds to
//! the backend of the subtask it runs in ([`super::backend::scoped`]) when it first takes an
//! entry.
//!
//! In a checkpoint, a heap tier writes its entries as the state's section (`name`); a disk tier
//! writes the same section (a full snapshot) or, with `state.backend.incremental`, the manifest
//! of its store's runs as section `name@runs`. Either backend restores from either form, so a
//! job may change its backend between runs.

use hashbrown::hash_map::EntryRef;
use weir_statestore::Manifest;

use super::backend;
use super::disk_tier::{key_groups_of, read_runs, DiskTier};
use super::runs::RunsSection;
use super::{owns_key, Key};
use crate::checkpoint::codec::{DecodeError, Decoder, Encoder};
use crate::checkpoint::{StateReader, StateWriter};
use crate::error::{Error, Result};
use crate::subtask::SubtaskInfo;
use crate::value::Value;

/// The maps of keyed state (hashbrown's default hasher: keys of values hash faster with it
/// than with Fx in the operators measured).
pub(crate) type FxHashMap<K, V> = hashbrown::HashMap<K, V>;

/// What a tier holds per key, in the checkpoint encoding.
pub(crate) trait Codec: Sized {
    /// Writes the entry.
    fn encode(&self, out: &mut Encoder);
    /// Reads what [`Codec::encode`] wrote.
    fn decode(input: &mut Decoder<'_>) -> std::result::Result<Self, DecodeError>;
}

/// The entries of one keyed state of one subtask.
#[derive(Debug)]
pub(crate) enum Tier<T> {
    /// On the heap; `bound` once the state has looked for its backend.
    Heap { map: FxHashMap<Key, T>, bound: bool },
    /// With the on-disk backend.
    Disk(Box<DiskTier<T>>),
}

/// A copy of every entry (operators are cloned from a prototype per subtask, before they hold
/// any); a copy of a disk tier is a heap tier that binds again when it takes an entry.
impl<T: Codec + Clone> Clone for Tier<T> {
    fn clone(&self) -> Self {
        match self {
            Tier::Heap { map, bound } => Tier::Heap { map: map.clone(), bound: *bound },
            Tier::Disk(disk) => {
                let mut map = FxHashMap::new();
                disk.for_each(|key, item| {
                    map.insert(Key::from(key), item.clone());
                });
                Tier::Heap { map, bound: false }
            }
        }
    }
}

/// Makes room for one more key when `entries` is full, or says that the memory limit leaves none
/// ([`crate::memory::fallible`]): called before an insert, it grows the map exactly when the
/// insert would.
fn room_for_one<V>(entries: &mut FxHashMap<Key, V>) -> Result<()> {
    if entries.len() < entries.capacity() {
        return Ok(());
    }
    crate::memory::fallible(|| entries.try_reserve(1))
}

impl<T: Codec> Tier<T> {
    /// An empty tier, not yet bound to a backend.
    pub(crate) fn new() -> Self {
        Tier::Heap { map: FxHashMap::new(), bound: false }
    }

    /// Binds to the backend of the running subtask, once.
    fn bind(&mut self) {
        let Tier::Heap { map, bound } = self else { return };
        if *bound {
            return;
        }
        *bound = true;
        let Some(scope) = backend::current() else { return };
        let Some(disk) = scope.backend.disk_backend() else { return };
        let mut tier = DiskTier::new(std::sync::Arc::clone(disk), scope.max_parallelism);
        for (key, item) in std::mem::take(map) {
            tier.insert(key, item);
        }
        *self = Tier::Disk(Box::new(tier));
    }

    /// The entry of `key`.
    pub(crate) fn get(&mut self, key: &[Value]) -> Option<&T> {
        match self {
            Tier::Heap { map, .. } => map.get(key),
            Tier::Disk(disk) => disk.get(key),
        }
    }

    /// The entry of `key`, to change.
    pub(crate) fn get_mut(&mut self, key: &[Value]) -> Option<&mut T> {
        match self {
            Tier::Heap { map, .. } => map.get_mut(key),
            Tier::Disk(disk) => disk.get_mut(key),
        }
    }

    /// Sets the entry of `key`.
    pub(crate) fn insert(&mut self, key: Key, item: T) {
        self.bind();
        match self {
            Tier::Heap { map, .. } => {
                map.insert(key, item);
            }
            Tier::Disk(disk) => disk.insert(key, item),
        }
    }

    /// The entry of `key`, made by `make` when there is none.
    pub(crate) fn get_or_insert_with(&mut self, key: &[Value], make: impl FnOnce() -> T) -> &mut T {
        self.bind();
        match self {
            Tier::Heap { map, .. } => map.entry_ref(key).or_insert_with(make),
            Tier::Disk(disk) => disk.get_or_insert_with(key, make),
        }
    }

    /// Says whether the memory limit leaves room for one more key on the heap.
    ///
    /// # Errors
    /// It does not (nothing is changed then).
    pub(crate) fn reserve_one(&mut self) -> Result<()> {
        match self {
            Tier::Heap { map, .. } => room_for_one(map),
            Tier::Disk(_) => Ok(()),
        }
    }

    /// The entry of `key` to change: a present one `keep` accepts stays; otherwise `make` gives
    /// the new one, or `None`, which removes a present entry (and adds none).
    pub(crate) fn upsert(
        &mut self,
        key: &[Value],
        keep: impl FnOnce(&T) -> bool,
        make: impl FnOnce() -> Option<T>,
    ) -> Option<&mut T> {
        self.bind();
        match self {
            Tier::Heap { map, .. } => match map.entry_ref(key) {
                EntryRef::Occupied(entry) if keep(entry.get()) => Some(entry.into_mut()),
                EntryRef::Occupied(mut entry) => match make() {
                    Some(item) => {
                        *entry.get_mut() = item;
                        Some(entry.into_mut())
                    }
                    None => {
                        entry.remove();
                        None
                    }
                },
                EntryRef::Vacant(entry) => Some(entry.insert(make()?)),
            },
            Tier::Disk(disk) => disk.upsert(key, keep, make),
        }
    }

    /// Removes the entry of `key`, returning it.
    pub(crate) fn remove(&mut self, key: &[Value]) -> Option<T> {
        match self {
            Tier::Heap { map, .. } => map.remove(key),
            Tier::Disk(disk) => disk.remove(key),
        }
    }

    /// Keeps the entries `keep` accepts, after it had them to change.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&[Value], &mut T) -> bool) {
        match self {
            Tier::Heap { map, .. } => map.retain(|key, item| keep(key, item)),
            Tier::Disk(disk) => disk.retain(keep),
        }
    }

    /// Visits every entry.
    pub(crate) fn for_each(&self, mut visit: impl FnMut(&[Value], &T)) {
        match self {
            Tier::Heap { map, .. } => map.iter().for_each(|(key, item)| visit(key, item)),
            Tier::Disk(disk) => disk.for_each(visit),
        }
    }

    /// Whether no key holds an entry.
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Tier::Heap { map, .. } => map.is_empty(),
            Tier::Disk(disk) => disk.holds_nothing(),
        }
    }

    /// How many keys hold an entry (with the on-disk backend, a scan of the store).
    pub(crate) fn len(&self) -> usize {
        match self {
            Tier::Heap { map, .. } => map.len(),
            Tier::Disk(disk) => disk.len(),
        }
    }

    /// Writes the state as its section `name`: the entries `write` accepts (it writes the key
    /// and the live part of the entry into the encoder and returns true), or the manifest of an
    /// incremental checkpoint.
    pub(crate) fn snapshot(
        &mut self,
        name: &str,
        state: &mut StateWriter,
        mut write: impl FnMut(&[Value], &T, &mut Encoder) -> bool,
    ) {
        match self {
            Tier::Heap { map, .. } => {
                let out = state.section(name);
                let at = out.len();
                out.u32(0);
                let count = map.iter().map(|(key, item)| u32::from(write(key, item, out))).sum();
                out.patch_u32(at, count);
            }
            Tier::Disk(disk) if disk.incremental() => {
                if let Some(manifest) = disk.checkpoint() {
                    let section = RunsSection {
                        max_parallelism: disk.max_parallelism(),
                        shared: disk.shared().to_path_buf(),
                        manifest,
                    };
                    section.write(name, state);
                }
            }
            Tier::Disk(disk) => {
                let out = state.section(name);
                let at = out.len();
                out.u32(0);
                let count = disk.write_all(out, write);
                out.patch_u32(at, count);
            }
        }
    }

    /// Takes back the entries of every old subtask's section `name` (either form) whose keys
    /// subtask `info` owns; `read` decodes one entry of the full form.
    ///
    /// # Errors
    /// A damaged section, naming the state; checkpointed runs that cannot be read.
    pub(crate) fn restore(
        &mut self,
        name: &str,
        states: &[StateReader],
        info: &SubtaskInfo,
        mut read: impl FnMut(&mut Decoder<'_>) -> std::result::Result<(Key, T), DecodeError>,
    ) -> Result<()> {
        self.bind();
        let malformed = |e: DecodeError| Error::Restore(format!("the keyed state '{name}' is malformed: {e}"));
        for state in states {
            let Some(mut input) = state.section(name) else { continue };
            for _ in 0..input.u32().map_err(malformed)? {
                let (key, item) = read(&mut input).map_err(malformed)?;
                if owns_key(&key, info) {
                    self.insert(key, item);
                }
            }
        }
        let runs = RunsSection::read_all(name, states).map_err(malformed)?;
        let Some(first) = runs.first() else { return Ok(()) };
        let same_layout = RunsSection::same_layout(&runs, info.max_parallelism);
        if let Tier::Disk(disk) = self {
            if same_layout && disk.is_empty() {
                let manifests: Vec<Manifest> = runs.iter().map(|r| r.manifest.clone()).collect();
                let groups = key_groups_of(info.index, info.parallelism, info.max_parallelism);
                disk.restore_runs(&first.shared, &manifests, groups);
                return Ok(());
            }
        }
        // Another layout, or a heap state: read every entry and keep the owned ones.
        let scratch = tempfile::tempdir().map_err(|e| Error::Restore(format!("no scratch directory: {e}")))?;
        let mut restored = Vec::new();
        for (at, section) in runs.iter().enumerate() {
            let dir = scratch.path().join(at.to_string());
            let mut damaged = None;
            read_runs(&dir, &section.shared, std::slice::from_ref(&section.manifest), |key, bytes| {
                if owns_key(&key, info) {
                    match T::decode(&mut Decoder::new(bytes)) {
                        Ok(item) => restored.push((key, item)),
                        Err(e) => damaged = Some(e),
                    }
                }
            })
            .map_err(|e| Error::Restore(format!("the keyed state '{name}' cannot be read: {e}")))?;
            if let Some(e) = damaged {
                return Err(malformed(e));
            }
            for (key, item) in restored.drain(..) {
                self.insert(key, item);
            }
        }
        Ok(())
    }
}
