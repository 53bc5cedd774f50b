//! The store: a write buffer over runs on disk (see the crate docs): the runs written since the
//! last checkpoint, the layers checkpoints hold, and the base.

use std::collections::BTreeMap;
use std::ops::{Bound, RangeInclusive};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::bloom::hash64;
use crate::cache::BlockCache;
use crate::error::{Error, Result};
use crate::key_groups::KeyGroupSet;
use crate::manifest::{Manifest, RunKind, RunRef};
use crate::merge::{Merge, Source};
use crate::run::{Entry, Run, RunScan, RunWriter};

mod compact;
mod layer;

use layer::{BaseScan, Layer, LayerScan};

/// What the write buffer counts per entry besides its key and value (the map's node, the vectors).
const ENTRY_OVERHEAD: usize = 32;

/// How much memory a store may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Bytes of keys and values written since the last flush held in memory before they are
    /// written out as a run.
    pub write_buffer_bytes: usize,
    /// Bytes of blocks the cache keeps.
    pub block_cache_bytes: usize,
    /// How many files the base is cut into (by key-group ranges of one width): the share of
    /// the state one merge into the base rewrites is about one of them.
    pub base_files: u16,
}

impl Default for Options {
    fn default() -> Self {
        Options { write_buffer_bytes: 16 << 20, block_cache_bytes: 32 << 20, base_files: 64 }
    }
}

/// What a store holds and did, for metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes of its runs on disk.
    pub disk_bytes: u64,
    /// Runs on disk (fresh runs, layers and base files).
    pub runs: usize,
    /// Layers above the base.
    pub layers: usize,
    /// Bytes in the write buffer.
    pub buffer_bytes: usize,
    /// Bytes of cached blocks.
    pub cache_bytes: usize,
    /// Lookups whose block was cached.
    pub cache_hits: u64,
    /// Lookups that read their block.
    pub cache_misses: u64,
    /// Bytes written into runs (flushes and compactions), since the store opened.
    pub bytes_written: u64,
}

/// The key group of a key: its first two bytes, big-endian (every key of a store begins with
/// it; a key shorter than that is in group 0).
pub fn key_group_of(key: &[u8]) -> u16 {
    match key {
        [a, b, ..] => u16::from_be_bytes([*a, *b]),
        _ => 0,
    }
}

/// Sorted keys and their values, written to runs on disk as the write buffer fills.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    options: Options,
    buffer: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    buffer_bytes: usize,
    /// Runs written since the last checkpoint, newest first: no checkpoint holds them, so
    /// merging them costs no checkpoint anything.
    fresh: Vec<Arc<Run>>,
    /// Runs checkpoints hold above the base, newest first.
    layers: Vec<Layer>,
    /// The base's files in key order, no two sharing a key group: entries older than every
    /// layer's.
    base: Vec<Arc<Run>>,
    /// The key group the next merge into the base starts at.
    cursor: u16,
    /// Bytes the merges into the base may still write (see `compact.rs`).
    credit: i64,
    next_id: u64,
    cache: BlockCache,
    bytes_written: u64,
}

impl Store {
    /// An empty store keeping its runs in `dir` (created; files already there are removed).
    ///
    /// # Errors
    /// `dir` cannot be created or cleared.
    pub fn create(dir: &Path, options: Options) -> Result<Store> {
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(Error::io(dir))?;
        }
        std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
        Ok(Store {
            dir: dir.to_path_buf(),
            options,
            buffer: BTreeMap::new(),
            buffer_bytes: 0,
            fresh: Vec::new(),
            layers: Vec::new(),
            base: Vec::new(),
            cursor: 0,
            credit: 0,
            next_id: 0,
            cache: BlockCache::new(options.block_cache_bytes),
            bytes_written: 0,
        })
    }

    /// The directory holding the store's runs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the store holds nothing older than its fresh runs (a merge of those may drop
    /// tombstones).
    fn nothing_older(&self) -> bool {
        self.layers.is_empty() && self.base.is_empty()
    }

    /// The value of `key`.
    ///
    /// # Errors
    /// A run that cannot be read or is damaged.
    pub fn get(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if let Some(value) = self.buffer.get(key) {
            return Ok(value.clone());
        }
        let hash = hash64(key);
        for run in &self.fresh {
            if let Some(value) = run.get(key, hash, &mut self.cache)? {
                return Ok(value);
            }
        }
        let group = key_group_of(key);
        for layer in &self.layers {
            if layer.merged.contains(group) {
                continue;
            }
            if let Some(value) = layer.run.get(key, hash, &mut self.cache)? {
                return Ok(value);
            }
        }
        let file = self.base.partition_point(|run| run.first_key() <= key);
        if let Some(run) = file.checked_sub(1).map(|i| &self.base[i]) {
            if let Some(value) = run.get(key, hash, &mut self.cache)? {
                return Ok(value);
            }
        }
        Ok(None)
    }

    /// Sets the value of `key`.
    ///
    /// # Errors
    /// A full write buffer that cannot be written out.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.write(key, Some(value.to_vec()))
    }

    /// Removes the value of `key`.
    ///
    /// # Errors
    /// A full write buffer that cannot be written out.
    pub fn delete(&mut self, key: &[u8]) -> Result<()> {
        self.write(key, None)
    }

    fn write(&mut self, key: &[u8], value: Option<Vec<u8>>) -> Result<()> {
        let value_len = value.as_ref().map_or(0, Vec::len);
        match self.buffer.get_mut(key) {
            Some(old) => {
                self.buffer_bytes = self.buffer_bytes + value_len - old.as_ref().map_or(0, Vec::len);
                *old = value;
            }
            None => {
                self.buffer_bytes += key.len() + value_len + ENTRY_OVERHEAD;
                self.buffer.insert(key.to_vec(), value);
            }
        }
        if self.buffer_bytes >= self.options.write_buffer_bytes {
            self.flush()?;
        }
        Ok(())
    }

    /// The runs' entries at or after `from` (and before `until`, if given; the caller stops
    /// there), newest source first, after `buffered`. A run without keys in the range, or a
    /// layer whose key groups there are all merged, is left out (a scan reads a block of each
    /// source it has).
    fn sources(&self, buffered: Vec<Result<Entry>>, from: &[u8], until: Option<&[u8]>) -> Vec<Source> {
        let in_range = |run: &Run| run.last_key() >= from && until.is_none_or(|until| run.first_key() < until);
        let groups = key_group_of(from)..=until.map_or(u16::MAX, last_group_before);
        let mut sources: Vec<Source> = vec![Box::new(buffered.into_iter())];
        for run in self.fresh.iter().filter(|run| in_range(run)) {
            sources.push(Box::new(RunScan::new(Arc::clone(run), from)));
        }
        for layer in self.layers.iter().filter(|layer| in_range(&layer.run) && !layer.merged.covers(groups.clone())) {
            sources.push(Box::new(LayerScan::new(layer, from)));
        }
        sources.push(Box::new(BaseScan::new(&self.base, from)));
        sources
    }

    /// The live entries with keys at or after `from`, in key order (the caller stops where its
    /// range ends).
    ///
    /// # Errors
    /// A run that cannot be read.
    pub fn scan(&self, from: &[u8]) -> impl Iterator<Item = Result<Entry>> {
        let buffered: Vec<Result<Entry>> =
            self.buffer.range(from.to_vec()..).map(|(k, v)| Ok((k.clone(), v.clone()))).collect();
        Merge::new(self.sources(buffered, from, None), true)
    }

    /// The live entries with keys in `from..until`, in key order: as [`Store::scan`], but only
    /// that range of the write buffer is copied, so many short scans cost what they read.
    ///
    /// # Errors
    /// A run that cannot be read.
    pub fn scan_range(&self, from: &[u8], until: &[u8]) -> impl Iterator<Item = Result<Entry>> {
        let buffered: Vec<Result<Entry>> = self
            .buffer
            .range::<[u8], _>((Bound::Included(from), Bound::Excluded(until)))
            .map(|(k, v)| Ok((k.clone(), v.clone())))
            .collect();
        let sources = self.sources(buffered, from, Some(until));
        let until = until.to_vec();
        Merge::new(sources, true).take_while(move |entry| entry.as_ref().map_or(true, |(key, _)| *key < until))
    }

    fn new_run_path(&self) -> PathBuf {
        self.dir.join(format!("{:032x}.run", rand::random::<u128>()))
    }

    fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Writes the write buffer out as a fresh run (and merges the fresh runs as `compact.rs`
    /// says).
    ///
    /// # Errors
    /// The run cannot be written.
    pub fn flush(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let mut writer = RunWriter::create(&self.new_run_path())?;
        let keep_tombstones = !(self.fresh.is_empty() && self.nothing_older());
        for (key, value) in std::mem::take(&mut self.buffer) {
            if value.is_some() || keep_tombstones {
                writer.add(&key, value.as_deref())?;
            }
        }
        self.buffer_bytes = 0;
        let id = self.next_id();
        if let Some(run) = writer.finish(id)? {
            self.bytes_written += run.bytes();
            tracing::debug!(dir = %self.dir.display(), bytes = run.bytes(), entries = run.entries(), "state run written");
            self.fresh.insert(0, Arc::new(run));
        }
        self.compact_fresh()
    }

    /// Makes the store's content a checkpoint: flushes the write buffer, makes the fresh runs
    /// one layer, merges layers into the base as far as the pace allows (`compact.rs`), and
    /// links each run into `shared` (a directory every checkpoint of the job shares; a run
    /// already there from an earlier checkpoint is not written again). The manifest names the
    /// runs.
    ///
    /// # Errors
    /// A run that cannot be written or linked.
    pub fn checkpoint(&mut self, shared: &Path) -> Result<Manifest> {
        self.flush()?;
        self.settle()?;
        std::fs::create_dir_all(shared).map_err(Error::io(shared))?;
        let layers = self.layers.iter().map(|layer| (&layer.run, RunKind::Layer, layer.merged.clone()));
        let base = self.base.iter().map(|run| (run, RunKind::Base, KeyGroupSet::default()));
        let mut runs = Vec::with_capacity(self.layers.len() + self.base.len());
        for (run, kind, merged) in layers.chain(base) {
            let name = run.file_name();
            let target = shared.join(&name);
            if !target.exists() {
                link_or_copy(run.path(), &target)?;
            }
            runs.push(RunRef {
                name,
                first_key: run.first_key().to_vec(),
                last_key: run.last_key().to_vec(),
                entries: run.entries(),
                bytes: run.bytes(),
                kind,
                merged,
            });
        }
        Ok(Manifest { runs })
    }

    /// A store in `dir` holding the entries of the checkpoints `manifests` (of stores whose key
    /// groups do not overlap) whose key groups are in `key_groups`: a run entirely inside is
    /// linked from `shared`, one partly inside is rewritten with the live entries inside.
    ///
    /// # Errors
    /// A run missing from `shared`, damaged, or that cannot be linked or written.
    pub fn restore(
        dir: &Path,
        options: Options,
        shared: &Path,
        manifests: &[Manifest],
        key_groups: RangeInclusive<u16>,
    ) -> Result<Store> {
        let mut store = Store::create(dir, options)?;
        for run in manifests.iter().flat_map(|m| &m.runs) {
            let (first, last) = (key_group_of(&run.first_key), key_group_of(&run.last_key));
            if last < *key_groups.start() || first > *key_groups.end() {
                continue;
            }
            let source = shared.join(&run.name);
            let id = store.next_id();
            let restored = if key_groups.contains(&first) && key_groups.contains(&last) {
                let local = dir.join(&run.name);
                link_or_copy(&source, &local)?;
                Some(verified(Run::open(&local, id)?, run, &source)?)
            } else {
                let whole = Layer {
                    run: Arc::new(verified(Run::open(&source, id)?, run, &source)?),
                    merged: run.merged.clone(),
                };
                let mut writer = RunWriter::create(&store.new_run_path())?;
                for entry in LayerScan::new(&whole, &key_groups.start().to_be_bytes()) {
                    let (key, value) = entry?;
                    if key_group_of(&key) > *key_groups.end() {
                        break;
                    }
                    writer.add(&key, value.as_deref())?;
                }
                let id = store.next_id();
                writer.finish(id)?
            };
            let Some(restored) = restored.map(Arc::new) else { continue };
            match run.kind {
                RunKind::Layer => store.layers.push(Layer { run: restored, merged: run.merged.clone() }),
                RunKind::Base => store.base.push(restored),
            }
        }
        store.base.sort_by(|a, b| a.first_key().cmp(b.first_key()));
        Ok(store)
    }

    /// What the store holds and did.
    pub fn stats(&self) -> Stats {
        let (cache_hits, cache_misses) = self.cache.hits_and_misses();
        Stats {
            disk_bytes: self.runs().map(|r| r.bytes()).sum(),
            runs: self.fresh.len() + self.layers.len() + self.base.len(),
            layers: self.layers.len(),
            buffer_bytes: self.buffer_bytes,
            cache_bytes: self.cache.bytes(),
            cache_hits,
            cache_misses,
            bytes_written: self.bytes_written,
        }
    }

    /// Every run: fresh, layers, base.
    fn runs(&self) -> impl Iterator<Item = &Arc<Run>> {
        self.fresh.iter().chain(self.layers.iter().map(|layer| &layer.run)).chain(&self.base)
    }
}

/// The last key group holding a key before `until`: its own, unless `until` is where its group
/// begins.
fn last_group_before(until: &[u8]) -> u16 {
    let group = key_group_of(until);
    if until.len() >= 2 && until[2..].iter().all(|&b| b == 0) {
        group.saturating_sub(1)
    } else {
        group
    }
}

/// `opened`, when it is the run the checkpoint's manifest describes (`described`): the same
/// entries, first and last key and size. A run file replaced by another valid one, or the
/// manifest of another checkpoint, is refused rather than restored.
fn verified(opened: Run, described: &RunRef, path: &Path) -> Result<Run> {
    let held = (opened.entries(), opened.bytes(), opened.first_key(), opened.last_key());
    let expected = (described.entries, described.bytes, &described.first_key[..], &described.last_key[..]);
    if held == expected {
        return Ok(opened);
    }
    Err(Error::Damaged {
        path: path.to_path_buf(),
        reason: format!(
            "it is not the run the checkpoint names: the checkpoint's manifest says {} entries in {} bytes from key \
             {:02x?} to {:02x?}, the file holds {} entries in {} bytes from {:02x?} to {:02x?}",
            expected.0, expected.1, expected.2, expected.3, held.0, held.1, held.2, held.3
        ),
    })
}

/// Hard-links `from` to `to`, or copies it where links cannot be made (another file system).
fn link_or_copy(from: &Path, to: &Path) -> Result<()> {
    if std::fs::hard_link(from, to).is_ok() {
        return Ok(());
    }
    std::fs::copy(from, to).map_err(Error::io(to))?;
    std::fs::File::open(to).and_then(|f| f.sync_all()).map_err(Error::io(to))
}

/// Removes the files of `shared` that no manifest of `kept` names: the runs only checkpoints
/// that are gone used. Returns how many were removed.
///
/// # Errors
/// The directory cannot be listed or a file removed.
pub fn remove_unreferenced(shared: &Path, kept: &[Manifest]) -> Result<usize> {
    let names: std::collections::HashSet<&str> = kept.iter().flat_map(|m| &m.runs).map(|r| r.name.as_str()).collect();
    let mut removed = 0;
    let Ok(entries) = std::fs::read_dir(shared) else { return Ok(0) };
    for entry in entries {
        let entry = entry.map_err(Error::io(shared))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".run") && !names.contains(name.as_str()) {
            std::fs::remove_file(entry.path()).map_err(Error::io(entry.path()))?;
            removed += 1;
        }
    }
    Ok(removed)
}
