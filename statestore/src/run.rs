//! A run: an immutable file of entries sorted by key, each a value or a tombstone. A run is
//! written once, by [`RunWriter`], and then only read; a checkpoint shares it by linking it.
//!
//! Layout: data blocks of about [`BLOCK_BYTES`] of entries, each stored LZ4-compressed (or as
//! it is, when that is not smaller: a first byte says which), then a CRC-32 of it; the index
//! (each block's first key, offset and length; the run's last key), the Bloom filter of its
//! keys, and a fixed footer (where index and filter are, the entry count, a CRC-32 of index and
//! filter, a magic number). An entry is its key's length (LEB128), the key, a kind byte
//! (0: value, 1: tombstone), and for a value its length (LEB128) and bytes.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::bloom::{hash64, Bloom};
use crate::cache::BlockCache;
use crate::error::{Error, Result};

/// The size a data block is cut at.
pub(crate) const BLOCK_BYTES: usize = 4096;
const FOOTER_BYTES: usize = 8 * 5 + 4 + 4;
const MAGIC: u32 = 0x5745_5231; // "WER1"
const VALUE: u8 = 0;
const TOMBSTONE: u8 = 1;
/// A block's first byte: its entries as they are.
const RAW: u8 = 0;
/// A block's first byte: its entries LZ4-compressed, their length first.
const LZ4: u8 = 1;

/// An entry as runs and merges carry it: the key and its value, `None` for a tombstone.
pub(crate) type Entry = (Vec<u8>, Option<Vec<u8>>);

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut n = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        n |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(n);
        }
    }
    None
}

fn slice<'a>(bytes: &'a [u8], at: &mut usize, len: usize) -> Option<&'a [u8]> {
    let s = bytes.get(*at..at.checked_add(len)?)?;
    *at += len;
    Some(s)
}

/// Writes a run; keys must come in strictly ascending order.
pub(crate) struct RunWriter {
    path: PathBuf,
    file: BufWriter<File>,
    block: Vec<u8>,
    block_first: Option<Vec<u8>>,
    index: Vec<u8>,
    blocks: u32,
    offset: u64,
    hashes: Vec<u64>,
    last: Vec<u8>,
}

impl RunWriter {
    /// A new run file at `path` (which must not exist).
    pub(crate) fn create(path: &Path) -> Result<RunWriter> {
        let file = File::options().write(true).create_new(true).open(path).map_err(Error::io(path))?;
        Ok(RunWriter {
            path: path.to_path_buf(),
            file: BufWriter::with_capacity(256 * 1024, file),
            block: Vec::with_capacity(BLOCK_BYTES + 512),
            block_first: None,
            index: Vec::new(),
            blocks: 0,
            offset: 0,
            hashes: Vec::new(),
            last: Vec::new(),
        })
    }

    /// Adds an entry: `value`, or a tombstone for `None`.
    pub(crate) fn add(&mut self, key: &[u8], value: Option<&[u8]>) -> Result<()> {
        debug_assert!(self.hashes.is_empty() || key > self.last.as_slice(), "keys out of order");
        if self.block_first.is_none() {
            self.block_first = Some(key.to_vec());
        }
        put_varint(&mut self.block, key.len() as u64);
        self.block.extend_from_slice(key);
        match value {
            Some(v) => {
                self.block.push(VALUE);
                put_varint(&mut self.block, v.len() as u64);
                self.block.extend_from_slice(v);
            }
            None => self.block.push(TOMBSTONE),
        }
        self.hashes.push(hash64(key));
        self.last.clear();
        self.last.extend_from_slice(key);
        if self.block.len() >= BLOCK_BYTES {
            self.end_block()?;
        }
        Ok(())
    }

    fn end_block(&mut self) -> Result<()> {
        let Some(first) = self.block_first.take() else { return Ok(()) };
        let compressed = lz4_flex::block::compress_prepend_size(&self.block);
        let mut stored = Vec::with_capacity(compressed.len().min(self.block.len()) + 5);
        if compressed.len() < self.block.len() {
            stored.push(LZ4);
            stored.extend_from_slice(&compressed);
        } else {
            stored.push(RAW);
            stored.extend_from_slice(&self.block);
        }
        let crc = crc32fast::hash(&stored);
        stored.extend_from_slice(&crc.to_le_bytes());
        self.file.write_all(&stored).map_err(Error::io(&self.path))?;
        put_varint(&mut self.index, first.len() as u64);
        self.index.extend_from_slice(&first);
        self.index.extend_from_slice(&self.offset.to_le_bytes());
        self.index.extend_from_slice(&(stored.len() as u32).to_le_bytes());
        self.offset += stored.len() as u64;
        self.blocks += 1;
        self.block.clear();
        Ok(())
    }

    /// Ends the run, durable on disk, and opens it for reading; `None` when no entry was added
    /// (and the file is removed).
    pub(crate) fn finish(mut self, id: u64) -> Result<Option<Run>> {
        if self.hashes.is_empty() {
            drop(self.file);
            std::fs::remove_file(&self.path).map_err(Error::io(&self.path))?;
            return Ok(None);
        }
        self.end_block()?;
        let mut index = Vec::with_capacity(self.index.len() + self.last.len() + 16);
        index.extend_from_slice(&self.blocks.to_le_bytes());
        index.extend_from_slice(&self.index);
        put_varint(&mut index, self.last.len() as u64);
        index.extend_from_slice(&self.last);
        let bloom = Bloom::build(&self.hashes);
        let mut crc = crc32fast::Hasher::new();
        crc.update(&index);
        crc.update(bloom.as_bytes());
        let mut footer = Vec::with_capacity(FOOTER_BYTES);
        let index_at = self.offset;
        let bloom_at = index_at + index.len() as u64;
        for n in [index_at, index.len() as u64, bloom_at, bloom.as_bytes().len() as u64, self.hashes.len() as u64] {
            footer.extend_from_slice(&n.to_le_bytes());
        }
        footer.extend_from_slice(&crc.finalize().to_le_bytes());
        footer.extend_from_slice(&MAGIC.to_le_bytes());
        for part in [&index[..], bloom.as_bytes(), &footer] {
            self.file.write_all(part).map_err(Error::io(&self.path))?;
        }
        let file = self.file.into_inner().map_err(|e| Error::io(&self.path)(e.into_error()))?;
        file.sync_all().map_err(Error::io(&self.path))?;
        Run::open(&self.path, id).map(Some)
    }
}

/// Where a block is in its run's file.
#[derive(Debug)]
struct BlockAt {
    first: Box<[u8]>,
    offset: u64,
    len: u32,
}

/// A run open for reading: its index and Bloom filter in memory, its blocks read on demand.
#[derive(Debug)]
pub(crate) struct Run {
    id: u64,
    path: PathBuf,
    file: File,
    blocks: Vec<BlockAt>,
    last: Box<[u8]>,
    bloom: Bloom,
    entries: u64,
    bytes: u64,
}

impl Run {
    /// Opens the run at `path`, `id` naming its blocks in the cache.
    pub(crate) fn open(path: &Path, id: u64) -> Result<Run> {
        let file = File::open(path).map_err(Error::io(path))?;
        let bytes = file.metadata().map_err(Error::io(path))?.len();
        let damaged = |reason: &str| Error::damaged(path, reason);
        if bytes < FOOTER_BYTES as u64 {
            return Err(damaged("shorter than its footer"));
        }
        let mut footer = [0u8; FOOTER_BYTES];
        file.read_exact_at(&mut footer, bytes - FOOTER_BYTES as u64).map_err(Error::io(path))?;
        let word = |i: usize| u64::from_le_bytes(footer[i * 8..i * 8 + 8].try_into().unwrap_or_default());
        let (index_at, index_len, bloom_at, bloom_len, entries) = (word(0), word(1), word(2), word(3), word(4));
        let crc = u32::from_le_bytes(footer[40..44].try_into().unwrap_or_default());
        if u32::from_le_bytes(footer[44..48].try_into().unwrap_or_default()) != MAGIC {
            return Err(damaged("not a run file (no magic number)"));
        }
        if index_at.checked_add(index_len) != Some(bloom_at)
            || bloom_at.checked_add(bloom_len) != Some(bytes - FOOTER_BYTES as u64)
        {
            return Err(damaged("its footer does not fit its length"));
        }
        let mut meta = vec![0u8; (index_len + bloom_len) as usize];
        file.read_exact_at(&mut meta, index_at).map_err(Error::io(path))?;
        if crc32fast::hash(&meta) != crc {
            return Err(damaged("its index or filter fails its checksum"));
        }
        let bloom = Bloom::from_bytes(meta.split_off(index_len as usize));
        let (blocks, last) = Self::read_index(&meta).ok_or_else(|| damaged("its index is malformed"))?;
        Ok(Run { id, path: path.to_path_buf(), file, blocks, last, bloom, entries, bytes })
    }

    fn read_index(index: &[u8]) -> Option<(Vec<BlockAt>, Box<[u8]>)> {
        let mut at = 0;
        let count = u32::from_le_bytes(slice(index, &mut at, 4)?.try_into().ok()?);
        let mut blocks = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let len = varint(index, &mut at)? as usize;
            let first = slice(index, &mut at, len)?.into();
            let offset = u64::from_le_bytes(slice(index, &mut at, 8)?.try_into().ok()?);
            let len = u32::from_le_bytes(slice(index, &mut at, 4)?.try_into().ok()?);
            blocks.push(BlockAt { first, offset, len });
        }
        let len = varint(index, &mut at)? as usize;
        let last = slice(index, &mut at, len)?.into();
        (at == index.len() && !blocks.is_empty()).then_some((blocks, last))
    }

    /// The id naming its blocks in the cache.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The file's name.
    pub(crate) fn file_name(&self) -> String {
        self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    /// Its first key.
    pub(crate) fn first_key(&self) -> &[u8] {
        &self.blocks[0].first
    }

    /// Its last key.
    pub(crate) fn last_key(&self) -> &[u8] {
        &self.last
    }

    /// How many entries (values and tombstones) it holds.
    pub(crate) fn entries(&self) -> u64 {
        self.entries
    }

    /// Its size on disk.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The entries of block `n`, checked.
    fn read_block(&self, n: usize) -> Result<Vec<u8>> {
        let at = &self.blocks[n];
        let mut block = vec![0u8; at.len as usize];
        self.file.read_exact_at(&mut block, at.offset).map_err(Error::io(&self.path))?;
        let Some(body_len) = block.len().checked_sub(4) else {
            return Err(Error::damaged(&self.path, format!("block {n} is shorter than its checksum")));
        };
        let crc = u32::from_le_bytes(block[body_len..].try_into().unwrap_or_default());
        block.truncate(body_len);
        if crc32fast::hash(&block) != crc {
            return Err(Error::damaged(&self.path, format!("block {n} fails its checksum")));
        }
        match block.first() {
            Some(&RAW) => {
                block.remove(0);
                Ok(block)
            }
            Some(&LZ4) => lz4_flex::block::decompress_size_prepended(&block[1..])
                .map_err(|e| Error::damaged(&self.path, format!("block {n} does not decompress: {e}"))),
            _ => Err(Error::damaged(&self.path, format!("block {n} has no known encoding"))),
        }
    }

    /// What the run says of `key`: `None` when it holds no entry for it, `Some(None)` for a
    /// tombstone, `Some(Some(value))` for a value.
    pub(crate) fn get(&self, key: &[u8], hash: u64, cache: &mut BlockCache) -> Result<Option<Option<Vec<u8>>>> {
        if key < self.first_key() || key > self.last_key() || !self.bloom.may_contain(hash) {
            return Ok(None);
        }
        let n = self.blocks.partition_point(|b| &*b.first <= key).saturating_sub(1);
        let block = match cache.get(self.id, n) {
            Some(block) => block,
            None => cache.insert(self.id, n, self.read_block(n)?),
        };
        let mut entries = BlockEntries { block: &block, at: 0 };
        while let Some(entry) = entries.next_entry() {
            let (k, value) = entry.ok_or_else(|| Error::damaged(&self.path, format!("block {n} is malformed")))?;
            match k.cmp(key) {
                std::cmp::Ordering::Less => continue,
                std::cmp::Ordering::Equal => return Ok(Some(value.map(<[u8]>::to_vec))),
                std::cmp::Ordering::Greater => break,
            }
        }
        Ok(None)
    }

    /// The block holding the first key at or after `from`.
    fn block_of(&self, from: &[u8]) -> usize {
        self.blocks.partition_point(|b| &*b.first <= from).saturating_sub(1)
    }
}

/// The entries of one block, in order.
struct BlockEntries<'a> {
    block: &'a [u8],
    at: usize,
}

type RawEntry<'a> = (&'a [u8], Option<&'a [u8]>);

impl<'a> BlockEntries<'a> {
    /// The next entry; `Some(None)` for malformed bytes.
    fn next_entry(&mut self) -> Option<Option<RawEntry<'a>>> {
        if self.at >= self.block.len() {
            return None;
        }
        Some(self.decode())
    }

    fn decode(&mut self) -> Option<RawEntry<'a>> {
        let len = varint(self.block, &mut self.at)? as usize;
        let key = slice(self.block, &mut self.at, len)?;
        match *slice(self.block, &mut self.at, 1)?.first()? {
            VALUE => {
                let len = varint(self.block, &mut self.at)? as usize;
                Some((key, Some(slice(self.block, &mut self.at, len)?)))
            }
            TOMBSTONE => Some((key, None)),
            _ => None,
        }
    }
}

/// The entries of a run in key order from a key on, read block by block past the cache (a
/// scan does not evict what lookups use).
pub(crate) struct RunScan {
    run: Arc<Run>,
    from: Vec<u8>,
    next_block: usize,
    block: Vec<u8>,
    at: usize,
}

impl RunScan {
    /// The entries of `run` at or after `from`.
    pub(crate) fn new(run: Arc<Run>, from: &[u8]) -> RunScan {
        let next_block = run.block_of(from);
        RunScan { run, from: from.to_vec(), next_block, block: Vec::new(), at: 0 }
    }
}

impl Iterator for RunScan {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Result<Entry>> {
        loop {
            if self.at >= self.block.len() {
                if self.next_block >= self.run.blocks.len() {
                    return None;
                }
                match self.run.read_block(self.next_block) {
                    Ok(block) => self.block = block,
                    Err(e) => {
                        self.next_block = self.run.blocks.len();
                        return Some(Err(e));
                    }
                }
                self.next_block += 1;
                self.at = 0;
            }
            let mut entries = BlockEntries { block: &self.block, at: self.at };
            let entry = entries.next_entry()?;
            self.at = entries.at;
            let Some((key, value)) = entry else {
                let reason = format!("block {} is malformed", self.next_block - 1);
                self.at = self.block.len();
                self.next_block = self.run.blocks.len();
                return Some(Err(Error::damaged(self.run.path(), reason)));
            };
            if key >= self.from.as_slice() {
                return Some(Ok((key.to_vec(), value.map(<[u8]>::to_vec))));
            }
        }
    }
}
