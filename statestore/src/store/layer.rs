//! Layers and the base as sources of a scan: a layer's entries in key groups already merged
//! into the base are skipped (the scan seeks past them), and the base's files are read one
//! after another.

use std::sync::Arc;

use crate::error::Result;
use crate::key_groups::KeyGroupSet;
use crate::run::{Entry, Run, RunScan};
use crate::store::key_group_of;

/// A run a checkpoint holds above the base, with the key groups merged into the base since.
#[derive(Debug)]
pub(crate) struct Layer {
    pub(crate) run: Arc<Run>,
    /// Key groups whose entries in the run are dead (the base has them, or newer ones).
    pub(crate) merged: KeyGroupSet,
}

impl Layer {
    /// The key groups from its first key's to its last key's.
    pub(crate) fn key_groups(&self) -> (u16, u16) {
        key_groups_of(&self.run)
    }

    /// Whether every key group it spans is merged into the base.
    pub(crate) fn dead(&self) -> bool {
        let (first, last) = self.key_groups();
        self.merged.covers(first..=last)
    }
}

/// The key groups from a run's first key's to its last key's.
pub(crate) fn key_groups_of(run: &Run) -> (u16, u16) {
    (key_group_of(run.first_key()), key_group_of(run.last_key()))
}

/// The live entries of a layer at or after a key.
pub(crate) struct LayerScan {
    run: Arc<Run>,
    merged: KeyGroupSet,
    inner: RunScan,
}

impl LayerScan {
    /// The live entries of `layer` at or after `from`.
    pub(crate) fn new(layer: &Layer, from: &[u8]) -> LayerScan {
        LayerScan {
            run: Arc::clone(&layer.run),
            merged: layer.merged.clone(),
            inner: RunScan::new(Arc::clone(&layer.run), from),
        }
    }
}

impl Iterator for LayerScan {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Result<Entry>> {
        loop {
            let (key, value) = match self.inner.next()? {
                Ok(entry) => entry,
                Err(e) => return Some(Err(e)),
            };
            let Some(dead) = self.merged.range_of(key_group_of(&key)) else {
                return Some(Ok((key, value)));
            };
            let next = dead.end().checked_add(1)?;
            self.inner = RunScan::new(Arc::clone(&self.run), &next.to_be_bytes());
        }
    }
}

/// The entries of the base's files at or after a key, file after file.
pub(crate) struct BaseScan {
    files: std::vec::IntoIter<Arc<Run>>,
    inner: Option<RunScan>,
}

impl BaseScan {
    /// The entries of `base` (files in key order) at or after `from`.
    pub(crate) fn new(base: &[Arc<Run>], from: &[u8]) -> BaseScan {
        let first = base.partition_point(|run| run.first_key() <= from).saturating_sub(1);
        let mut files = base.get(first..).unwrap_or_default().to_vec().into_iter();
        let inner = files.next().map(|run| RunScan::new(run, from));
        BaseScan { files, inner }
    }
}

impl Iterator for BaseScan {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Result<Entry>> {
        loop {
            if let Some(entry) = self.inner.as_mut()?.next() {
                return Some(entry);
            }
            self.inner = Some(RunScan::new(self.files.next()?, &[]));
        }
    }
}
