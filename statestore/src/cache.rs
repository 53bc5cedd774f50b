//! The block cache: the blocks lookups read last, up to a byte budget, least recently used
//! first out.

use std::sync::Arc;

use lru::LruCache;

/// Blocks by (run id, block number), within a byte budget.
#[derive(Debug)]
pub(crate) struct BlockCache {
    blocks: LruCache<(u64, usize), Arc<Vec<u8>>>,
    bytes: usize,
    budget: usize,
    hits: u64,
    misses: u64,
}

impl BlockCache {
    /// An empty cache holding at most `budget` bytes of blocks.
    pub(crate) fn new(budget: usize) -> BlockCache {
        BlockCache { blocks: LruCache::unbounded(), bytes: 0, budget, hits: 0, misses: 0 }
    }

    /// Block `n` of run `run`, if cached (counted as a hit or a miss).
    pub(crate) fn get(&mut self, run: u64, n: usize) -> Option<Arc<Vec<u8>>> {
        let found = self.blocks.get(&(run, n)).cloned();
        match found {
            Some(_) => self.hits += 1,
            None => self.misses += 1,
        }
        found
    }

    /// Caches block `n` of run `run`, evicting the least recently used past the budget.
    pub(crate) fn insert(&mut self, run: u64, n: usize, block: Vec<u8>) -> Arc<Vec<u8>> {
        let block = Arc::new(block);
        self.bytes += block.len();
        if let Some(old) = self.blocks.put((run, n), Arc::clone(&block)) {
            self.bytes -= old.len();
        }
        while self.bytes > self.budget {
            let Some((_, old)) = self.blocks.pop_lru() else { break };
            self.bytes -= old.len();
        }
        block
    }

    /// Drops the blocks of run `run` (a run compacted away).
    pub(crate) fn forget_run(&mut self, run: u64) {
        let gone: Vec<(u64, usize)> = self.blocks.iter().map(|(k, _)| *k).filter(|(r, _)| *r == run).collect();
        for key in gone {
            if let Some(old) = self.blocks.pop(&key) {
                self.bytes -= old.len();
            }
        }
    }

    /// Bytes of blocks held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Lookups that found their block cached, and those that read it.
    pub(crate) fn hits_and_misses(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }
}
