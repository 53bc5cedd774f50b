//! What a job's on-disk states hold and did, for `--stats`, the metrics and the web UI: each
//! store reports its [`Stats`] after it writes; a store that closes leaves its counts behind,
//! so the figures of a finished job still hold everything it did.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use weir_statestore::Stats;

/// The figures of one job's on-disk states, shared by its backend and its metrics.
#[derive(Debug, Default)]
pub struct StateStats {
    book: Mutex<Book>,
    entries_written: AtomicU64,
}

#[derive(Debug, Default)]
struct Book {
    /// The last stats of each open store, by store number.
    live: HashMap<u64, Stats>,
    /// The counts of the stores that closed.
    closed: Counts,
    /// The bytes the open stores hold on disk.
    disk_bytes: u64,
    /// The most bytes the stores held on disk at once.
    peak_disk_bytes: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    cache_hits: u64,
    cache_misses: u64,
    bytes_written: u64,
}

impl Counts {
    fn add(&mut self, stats: &Stats) {
        self.cache_hits += stats.cache_hits;
        self.cache_misses += stats.cache_misses;
        self.bytes_written += stats.bytes_written;
    }
}

impl StateStats {
    /// Records what store `n` holds and did so far.
    pub(crate) fn report(&self, n: u64, stats: Stats) {
        let mut book = self.book.lock();
        let before = book.live.insert(n, stats).map_or(0, |s| s.disk_bytes);
        book.disk_bytes = book.disk_bytes + stats.disk_bytes - before;
        book.peak_disk_bytes = book.peak_disk_bytes.max(book.disk_bytes);
    }

    /// Store `n` closed: its counts stay, its bytes on disk are gone.
    pub(crate) fn close(&self, n: u64) {
        let mut book = self.book.lock();
        if let Some(stats) = book.live.remove(&n) {
            book.closed.add(&stats);
            book.disk_bytes -= stats.disk_bytes;
        }
    }

    /// Counts `n` entries written from the heap into the stores.
    pub(crate) fn entries_written(&self, n: u64) {
        self.entries_written.fetch_add(n, Ordering::Relaxed);
    }

    /// The figures now.
    pub fn summary(&self) -> StateSummary {
        let book = self.book.lock();
        let mut counts = book.closed;
        book.live.values().for_each(|s| counts.add(s));
        StateSummary {
            disk_bytes: book.disk_bytes,
            peak_disk_bytes: book.peak_disk_bytes,
            cache_bytes: book.live.values().map(|s| s.cache_bytes as u64).sum(),
            write_buffer_bytes: book.live.values().map(|s| s.buffer_bytes as u64).sum(),
            runs: book.live.values().map(|s| s.runs as u64).sum(),
            cache_hits: counts.cache_hits,
            cache_misses: counts.cache_misses,
            bytes_written: counts.bytes_written,
            entries_written: self.entries_written.load(Ordering::Relaxed),
        }
    }
}

/// A job's on-disk state at one moment and what it did until then.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StateSummary {
    /// Bytes of the open stores' runs on disk.
    pub disk_bytes: u64,
    /// The most bytes on disk at once.
    pub peak_disk_bytes: u64,
    /// Bytes of cached blocks.
    pub cache_bytes: u64,
    /// Bytes in the stores' write buffers.
    pub write_buffer_bytes: u64,
    /// Runs on disk.
    pub runs: u64,
    /// Reads whose block was cached.
    pub cache_hits: u64,
    /// Reads that read their block from disk.
    pub cache_misses: u64,
    /// Bytes written into runs (flushes and compactions).
    pub bytes_written: u64,
    /// Entries written from the heap into the stores (evicted, or written for a checkpoint).
    pub entries_written: u64,
}

impl StateSummary {
    /// The share of block reads the cache answered, when there was any read.
    pub fn cache_hit_rate(&self) -> Option<f64> {
        let reads = self.cache_hits + self.cache_misses;
        (reads > 0).then(|| self.cache_hits as f64 / reads as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(disk_bytes: u64, hits: u64, written: u64) -> Stats {
        Stats { disk_bytes, cache_hits: hits, cache_misses: 1, bytes_written: written, ..Stats::default() }
    }

    #[test]
    fn a_closed_store_keeps_its_counts_and_leaves_its_bytes() {
        let book = StateStats::default();
        book.report(0, stats(100, 3, 1000));
        book.report(1, stats(50, 1, 10));
        book.report(0, stats(200, 5, 2000));
        book.close(0);
        book.entries_written(7);
        let summary = book.summary();
        assert_eq!(summary.disk_bytes, 50);
        assert_eq!(summary.peak_disk_bytes, 250);
        assert_eq!((summary.cache_hits, summary.cache_misses), (6, 2));
        assert_eq!(summary.bytes_written, 2010);
        assert_eq!(summary.entries_written, 7);
        assert_eq!(summary.cache_hit_rate(), Some(0.75));
        assert_eq!(StateSummary::default().cache_hit_rate(), None);
    }
}
