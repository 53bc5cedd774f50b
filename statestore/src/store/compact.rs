//! How the store merges its runs.
//!
//! - **Fresh runs** (written since the last checkpoint) merge as they are written: the two
//!   newest while the newer is at least half the older's size, so they grow geometrically.
//!   No checkpoint holds them, so these merges cost checkpoints nothing.
//! - **At a checkpoint** the fresh runs become one layer, and layers merge into the base one
//!   key-group range at a time (about `1 / Options::base_files` of the store), going round the
//!   store from a cursor. A layer's entries in a merged range are dead; a layer dead in every
//!   key group it spans is deleted. The base's files never overlap, so a merge rewrites only
//!   the files of its range.
//! - **The pace**: each layer grants the merges [`PACE`] times its bytes (at most
//!   `1 / MIN_PASS` of the store), and a range is merged while the grant left covers half of
//!   what it will write. A checkpoint after a change of a fraction `f` of the state therefore
//!   writes about `f` (the layer) plus `2 f` (merges) plus at most half a range: with 1 % of
//!   the keys changed, about 3 % of the state, and never the whole of it. A pass round the
//!   store takes about `1 / (PACE f)` checkpoints, so that many layers stand above the base;
//!   past [`MAX_LAYERS`] a checkpoint merges a range whatever the grant.

use std::sync::Arc;

use super::layer::{key_groups_of, BaseScan, Layer, LayerScan};
use super::Store;
use crate::error::{Error, Result};
use crate::merge::{Merge, Source};
use crate::run::{Run, RunScan, RunWriter};
use crate::store::key_group_of;

/// Bytes of merges into the base a layer grants per byte it holds.
const PACE: u64 = 2;
/// A layer grants at most this fraction (one in) of the store's bytes: a pass round the store
/// takes at least this many checkpoints (a first checkpoint of a large state does not rewrite
/// it all at once).
const MIN_PASS: u64 = 16;
/// Layers past which a checkpoint merges a range into the base whatever the grant.
const MAX_LAYERS: usize = 64;

/// The next range of key groups to merge into the base.
struct Step {
    /// Its first and last key group (a base file straddling the range's ends widens it).
    first: u16,
    last: u16,
    /// Whether some layer has live entries in it.
    live: bool,
    /// About what merging it writes.
    estimate: u64,
}

impl Store {
    /// Merges the two newest fresh runs while the newer is at least half the older's size.
    pub(super) fn compact_fresh(&mut self) -> Result<()> {
        while self.fresh.len() >= 2 && self.fresh[0].bytes() * 2 >= self.fresh[1].bytes() {
            let pair = [self.fresh.remove(0), self.fresh.remove(0)];
            let drop_tombstones = self.fresh.is_empty() && self.nothing_older();
            let merged = self.merge_runs(&pair, drop_tombstones)?;
            self.remove_runs(pair)?;
            if let Some(run) = merged {
                self.fresh.insert(0, run);
            }
        }
        Ok(())
    }

    /// One run of `runs` (newest first), without tombstones when nothing older remains.
    fn merge_runs(&mut self, runs: &[Arc<Run>], drop_tombstones: bool) -> Result<Option<Arc<Run>>> {
        let sources: Vec<Source> = runs.iter().map(|r| Box::new(RunScan::new(Arc::clone(r), &[])) as Source).collect();
        let mut writer = RunWriter::create(&self.new_run_path())?;
        for entry in Merge::new(sources, drop_tombstones) {
            let (key, value) = entry?;
            writer.add(&key, value.as_deref())?;
        }
        let run = self.finish(writer)?;
        self.bytes_written += run.as_ref().map_or(0, |run| run.bytes());
        Ok(run)
    }

    /// Deletes runs the store no longer reads (a checkpoint's link to one stays).
    fn remove_runs(&mut self, runs: impl IntoIterator<Item = Arc<Run>>) -> Result<()> {
        for run in runs {
            self.cache.forget_run(run.id());
            std::fs::remove_file(run.path()).map_err(Error::io(run.path()))?;
        }
        Ok(())
    }

    /// Before a checkpoint: the fresh runs become one layer, and layers merge into the base as
    /// the pace allows.
    pub(super) fn settle(&mut self) -> Result<()> {
        if !self.fresh.is_empty() {
            let runs = std::mem::take(&mut self.fresh);
            let layer = if let [run] = &runs[..] {
                Some(Arc::clone(run))
            } else {
                let merged = self.merge_runs(&runs, self.nothing_older())?;
                self.remove_runs(runs)?;
                merged
            };
            if let Some(run) = layer {
                let store_bytes: u64 = self.runs().map(|r| r.bytes()).sum::<u64>() + run.bytes();
                let grant = (PACE * run.bytes()).min(store_bytes / MIN_PASS);
                self.credit = self.credit.saturating_add(i64::try_from(grant).unwrap_or(i64::MAX));
                self.layers.insert(0, Layer { run, merged: Default::default() });
            }
        }
        let mut forced = self.layers.len() > MAX_LAYERS;
        let Some((lo, hi)) = self.span() else { return Ok(()) };
        let width = (u32::from(hi) - u32::from(lo) + 1).div_ceil(u32::from(self.options.base_files.max(1)));
        let mut covered = 0u32;
        while covered <= u32::from(hi) - u32::from(lo) && !self.layers.is_empty() {
            let from = if (lo..=hi).contains(&self.cursor) { self.cursor } else { lo };
            let step = self.step(from, lo, hi, width);
            if step.live {
                let estimate = i64::try_from(step.estimate).unwrap_or(i64::MAX);
                if !forced && self.credit < estimate / 2 {
                    break;
                }
                forced = false;
                let written = self.merge_into_base(&step, lo, width)?;
                self.credit -= i64::try_from(written).unwrap_or(i64::MAX);
            }
            covered += u32::from(step.last.max(from)) - u32::from(from) + 1;
            self.cursor = if step.last >= hi { lo } else { step.last + 1 };
        }
        if self.layers.is_empty() {
            self.credit = 0;
        }
        Ok(())
    }

    /// The key groups from the first layer's or base file's to the last one's.
    fn span(&self) -> Option<(u16, u16)> {
        let spans = self.layers.iter().map(Layer::key_groups).chain(self.base.iter().map(|run| key_groups_of(run)));
        spans.reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
    }

    /// The range of `width` key groups (counted from `lo`) holding `from`, widened to the
    /// base files it overlaps.
    fn step(&self, from: u16, lo: u16, hi: u16, width: u32) -> Step {
        let start = u32::from(lo) + (u32::from(from) - u32::from(lo)) / width * width;
        let (mut first, mut last) = (start as u16, (start + width - 1).min(u32::from(hi)) as u16);
        let mut estimate = 0;
        for run in &self.base {
            let (f, l) = key_groups_of(run);
            if l >= first && f <= last {
                (first, last) = (first.min(f), last.max(l));
                estimate += run.bytes();
            }
        }
        let mut live = false;
        for layer in &self.layers {
            let (f, l) = layer.key_groups();
            let (a, b) = (f.max(first), l.min(last));
            if a <= b && !layer.merged.covers(a..=b) {
                live = true;
                let share = f64::from(u32::from(b) - u32::from(a) + 1) / f64::from(u32::from(l) - u32::from(f) + 1);
                estimate += (layer.run.bytes() as f64 * share) as u64;
            }
        }
        Step { first, last, live, estimate }
    }

    /// Merges every layer's live entries in the step's range with the base files there into
    /// new base files (one per `width` key groups from `lo`); returns the bytes written.
    fn merge_into_base(&mut self, step: &Step, lo: u16, width: u32) -> Result<u64> {
        let from = step.first.to_be_bytes();
        let files = self.base.partition_point(|run| key_groups_of(run).1 < step.first)
            ..self.base.partition_point(|run| key_groups_of(run).0 <= step.last);
        let mut sources: Vec<Source> =
            self.layers.iter().map(|layer| Box::new(LayerScan::new(layer, &from)) as Source).collect();
        sources.push(Box::new(BaseScan::new(&self.base[files.clone()], &from)));
        let mut written = Vec::new();
        let mut current: Option<(u32, RunWriter)> = None;
        for entry in Merge::new(sources, true) {
            let (key, value) = entry?;
            let group = key_group_of(&key);
            if group > step.last {
                break;
            }
            let file = u32::from(group.saturating_sub(lo)) / width;
            if current.as_ref().is_none_or(|(n, _)| *n != file) {
                if let Some((_, writer)) = current.take() {
                    written.extend(self.finish(writer)?);
                }
                current = Some((file, RunWriter::create(&self.new_run_path())?));
            }
            if let Some((_, writer)) = current.as_mut() {
                writer.add(&key, value.as_deref())?;
            }
        }
        if let Some((_, writer)) = current.take() {
            written.extend(self.finish(writer)?);
        }
        let bytes: u64 = written.iter().map(|run| run.bytes()).sum();
        self.bytes_written += bytes;
        let replaced: Vec<Arc<Run>> = self.base.splice(files, written).collect();
        self.remove_runs(replaced)?;
        for layer in &mut self.layers {
            layer.merged.insert(step.first..=step.last);
        }
        let (dead, live): (Vec<Layer>, Vec<Layer>) =
            std::mem::take(&mut self.layers).into_iter().partition(Layer::dead);
        self.layers = live;
        self.remove_runs(dead.into_iter().map(|layer| layer.run))?;
        tracing::debug!(dir = %self.dir.display(), first = step.first, last = step.last, bytes, layers = self.layers.len(), "state layers merged into the base");
        Ok(bytes)
    }

    /// Ends a run a merge wrote, numbered for the cache.
    fn finish(&mut self, writer: RunWriter) -> Result<Option<Arc<Run>>> {
        let id = self.next_id();
        Ok(writer.finish(id)?.map(Arc::new))
    }
}
