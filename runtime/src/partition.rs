//! Ship strategies: how a subtask's output is divided among the subtasks of the next vertex.
//!
//! HASH routes by key groups, as Flink does: a key hashes to one of `max_parallelism` key
//! groups, and key groups are spread over the receiving subtasks in contiguous ranges. The hash
//! is weir's own and fixed (no per-process seed), so a key lands on the same subtask on every
//! run.

use std::hash::{Hash, Hasher};

use rustc_hash::FxHasher;

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Int16Type, Int32Type, Int64Type, Int8Type};
use arrow_array::Array;

use crate::chunk::Chunk;
use crate::columnar::{value_at, ArrowType};
use crate::element::StreamElement;
use crate::value::{hash_null, hash_str, Value};

/// How rows travel along an edge.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ShipStrategy {
    /// Subtask i sends to subtask i; both sides have the same parallelism.
    Forward,
    /// Rows with equal values in these columns go to the same subtask.
    Hash(Vec<usize>),
    /// Rows go round-robin to every subtask.
    Rebalance,
    /// Every row goes to every subtask.
    Broadcast,
    /// Every row goes to subtask 0.
    Single,
}

impl ShipStrategy {
    /// Whether sender subtask `from` has a channel to receiver subtask `to`.
    pub fn connects(&self, from: usize, to: usize) -> bool {
        match self {
            ShipStrategy::Forward => from == to,
            ShipStrategy::Single => to == 0,
            _ => true,
        }
    }

    /// The name Flink uses in plans (`FORWARD`, `HASH`, `REBALANCE`, `BROADCAST`, `GLOBAL`).
    pub fn flink_name(&self) -> &'static str {
        match self {
            ShipStrategy::Forward => "FORWARD",
            ShipStrategy::Hash(_) => "HASH",
            ShipStrategy::Rebalance => "REBALANCE",
            ShipStrategy::Broadcast => "BROADCAST",
            ShipStrategy::Single => "GLOBAL",
        }
    }
}

pub use crate::subtask::default_max_parallelism;

/// The stable hash of a key's values: [`hash_key`] of a row holding just the key.
pub fn hash_values(key: &[Value]) -> u64 {
    let mut hasher = FxHasher::default();
    key.iter().for_each(|v| v.hash(&mut hasher));
    hasher.finish()
}

/// The stable hash of the key columns `keys` of `row`.
pub fn hash_key(row: &[Value], keys: &[usize]) -> u64 {
    let mut hasher = FxHasher::default();
    for &k in keys {
        row[k].hash(&mut hasher);
    }
    hasher.finish()
}

/// The stable hash of the key columns `keys` of every row of `chunk`, into `out`: for each
/// row the same hash as [`hash_key`] of its row view, computed a column at a time.
pub fn hash_key_columns(chunk: &Chunk, keys: &[usize], out: &mut Vec<u64>) {
    let columns = chunk.columns();
    let rows = chunk.len();
    let mut hashers = vec![FxHasher::default(); rows];
    for &k in keys {
        hash_column(columns.arrays()[k].as_ref(), columns.selection(), &mut hashers);
    }
    out.clear();
    out.extend(hashers.iter().map(Hasher::finish));
}

/// Feeds each row's cell of `array` (rows `selection`, or all) to its hasher, as its value hashes.
fn hash_column(array: &dyn Array, selection: Option<&[u32]>, hashers: &mut [FxHasher]) {
    let row = |k: usize| selection.map_or(k, |s| s[k] as usize);
    macro_rules! primitive {
        ($t:ty, $make:expr) => {{
            let a = array.as_primitive::<$t>();
            for (k, h) in hashers.iter_mut().enumerate() {
                let i = row(k);
                if a.is_null(i) {
                    hash_null(h);
                } else {
                    $make(a.value(i)).hash(h);
                }
            }
        }};
    }
    match array.data_type() {
        ArrowType::Int8 => primitive!(Int8Type, Value::TinyInt),
        ArrowType::Int16 => primitive!(Int16Type, Value::SmallInt),
        ArrowType::Int32 => primitive!(Int32Type, Value::Int),
        ArrowType::Int64 => primitive!(Int64Type, Value::BigInt),
        ArrowType::Date32 => primitive!(Date32Type, Value::Date),
        ArrowType::Utf8 => {
            let a = array.as_string::<i32>();
            for (k, h) in hashers.iter_mut().enumerate() {
                let i = row(k);
                if a.is_null(i) {
                    hash_null(h);
                } else {
                    hash_str(a.value(i), h);
                }
            }
        }
        _ => {
            for (k, h) in hashers.iter_mut().enumerate() {
                value_at(array, row(k)).hash(h);
            }
        }
    }
}

/// The key group of a key hash: the hash is mixed (Murmur3's finalizer) so that similar keys
/// spread, then reduced modulo `max_parallelism`.
pub fn key_group(hash: u64, max_parallelism: usize) -> usize {
    let mut h = hash;
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    (h % max_parallelism as u64) as usize
}

/// The subtask that owns a key group, as Flink assigns contiguous key-group ranges.
pub fn subtask_for_key_group(key_group: usize, max_parallelism: usize, parallelism: usize) -> usize {
    key_group * parallelism / max_parallelism
}

/// The subtask that receives rows with this key hash, with the default number of key groups.
pub fn subtask_for_hash(hash: u64, parallelism: usize) -> usize {
    subtask_for_hash_in(hash, default_max_parallelism(parallelism), parallelism)
}

/// The subtask that receives rows with this key hash, with `max_parallelism` key groups.
pub fn subtask_for_hash_in(hash: u64, max_parallelism: usize, parallelism: usize) -> usize {
    subtask_for_key_group(key_group(hash, max_parallelism), max_parallelism, parallelism)
}

/// Divides one sender subtask's output among the receivers of one edge.
#[derive(Debug)]
pub struct Partitioner {
    strategy: ShipStrategy,
    sender: usize,
    receivers: usize,
    /// Key groups of the receivers (HASH).
    key_groups: usize,
    next_round_robin: usize,
    /// Receiver of each row of the chunk being routed; reused across chunks.
    targets: Vec<u32>,
    /// Key hash of each row of the chunk being routed; reused across chunks.
    hashes: Vec<u64>,
}

impl Partitioner {
    /// A partitioner for sender subtask `sender` of an edge with `receivers` receiving subtasks
    /// (HASH with the default number of key groups for them).
    pub fn new(strategy: ShipStrategy, sender: usize, receivers: usize) -> Self {
        Partitioner {
            strategy,
            sender,
            receivers,
            key_groups: default_max_parallelism(receivers),
            // Start round-robin at the sender's index so that parallel senders do not all hit 0 first.
            next_round_robin: sender,
            targets: Vec::new(),
            hashes: Vec::new(),
        }
    }

    /// The same partitioner with the receivers' `max_parallelism` key groups (`None`: the default).
    pub fn with_max_parallelism(mut self, max_parallelism: Option<usize>) -> Self {
        if let Some(n) = max_parallelism {
            self.key_groups = n;
        }
        self
    }

    /// Routes one element: a chunk is split by the strategy, a control element goes to every
    /// receiver this sender has a channel to. Calls `send(receiver, element)` in order.
    pub fn route(&mut self, element: StreamElement, mut send: impl FnMut(usize, StreamElement)) {
        let mut chunk = match element {
            StreamElement::Chunk(chunk) => chunk,
            control => {
                let channels: Vec<usize> =
                    (0..self.receivers).filter(|&r| self.strategy.connects(self.sender, r)).collect();
                for (i, &r) in channels.iter().enumerate() {
                    if i + 1 == channels.len() {
                        send(r, control);
                        break;
                    }
                    send(r, control.clone());
                }
                return;
            }
        };
        // A receiver of another edge hears from several senders: the split of one sender's
        // source means nothing there.
        if !matches!(self.strategy, ShipStrategy::Forward) {
            chunk.set_splits(None);
        }
        match &self.strategy {
            ShipStrategy::Forward => send(self.sender, StreamElement::Chunk(chunk)),
            ShipStrategy::Single => send(0, StreamElement::Chunk(chunk)),
            _ if self.receivers == 1 => send(0, StreamElement::Chunk(chunk)),
            ShipStrategy::Broadcast => {
                for r in 1..self.receivers {
                    send(r, StreamElement::Chunk(chunk.clone()));
                }
                send(0, StreamElement::Chunk(chunk));
            }
            ShipStrategy::Hash(keys) => {
                self.targets.clear();
                let (groups, receivers) = (self.key_groups, self.receivers);
                let target = |hash| subtask_for_hash_in(hash, groups, receivers) as u32;
                if chunk.is_columnar() {
                    hash_key_columns(&chunk, keys, &mut self.hashes);
                    self.targets.extend(self.hashes.iter().map(|&h| target(h)));
                } else {
                    self.targets.extend(chunk.rows().map(|(_, row)| target(hash_key(row, keys))));
                }
                self.split(chunk, &mut send);
            }
            ShipStrategy::Rebalance => {
                self.targets.clear();
                for _ in 0..chunk.len() {
                    self.targets.push(self.next_round_robin as u32);
                    self.next_round_robin = (self.next_round_robin + 1) % self.receivers;
                }
                self.split(chunk, &mut send);
            }
        }
    }

    /// Splits `chunk` by `self.targets` (one receiver per row): a columnar chunk into parts
    /// that share its arrays, each with its own selection; a chunk of rows by moving the values.
    fn split(&mut self, chunk: Chunk, send: &mut impl FnMut(usize, StreamElement)) {
        if chunk.is_columnar() {
            let mut rows: Vec<Vec<u32>> = vec![Vec::new(); self.receivers];
            for (row, &target) in self.targets.iter().enumerate() {
                rows[target as usize].push(row as u32);
            }
            for (r, kept) in rows.iter().enumerate() {
                if kept.is_empty() {
                    continue;
                }
                send(r, StreamElement::Chunk(chunk.selected(kept)));
            }
            return;
        }
        let arity = chunk.arity();
        let origin = chunk.origin_nanos();
        let expected = chunk.len() / self.receivers + 1;
        let mut parts: Vec<Chunk> = (0..self.receivers).map(|_| Chunk::with_capacity(arity, expected)).collect();
        let kinds = chunk.kinds().to_vec();
        let mut values = chunk.into_values().into_iter();
        for (row, &target) in self.targets.iter().enumerate() {
            parts[target as usize].push_with(kinds[row], |out| out.extend(values.by_ref().take(arity)));
        }
        for (r, mut part) in parts.into_iter().enumerate() {
            if !part.is_empty() {
                part.set_origin_nanos(origin);
                send(r, StreamElement::Chunk(part));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_hash_as_their_rows() {
        let mut chunk =
            Chunk::with_types(&[crate::DataType::int(), crate::DataType::string(), crate::DataType::bigint()]);
        for i in 0..50 {
            let text = if i % 7 == 0 { Value::Null } else { Value::string(&format!("k{}", i % 5)) };
            chunk.push(crate::RowKind::Insert, &[Value::Int(i % 3), text, Value::BigInt(i64::from(i))]);
        }
        chunk.columns();
        chunk.select(&(0..50).filter(|i| i % 4 != 1).collect::<Vec<u32>>());
        let mut by_columns = Vec::new();
        hash_key_columns(&chunk, &[1, 0], &mut by_columns);
        let by_rows: Vec<u64> = chunk.rows().map(|(_, r)| hash_key(r, &[1, 0])).collect();
        assert_eq!(by_columns, by_rows);
    }

    /// A chunk keeps its source split across a forward edge only: a receiver of another edge
    /// hears from several senders (after a restore into fewer subtasks, each reading several
    /// splits), where one sender's split means nothing.
    #[test]
    fn the_source_split_crosses_forward_edges_only() {
        let mut chunk = Chunk::with_types(&[crate::DataType::int()]);
        for i in 0..8 {
            chunk.push(crate::RowKind::Insert, &[Value::Int(i)]);
        }
        chunk.set_splits(Some(std::sync::Arc::new(crate::subtask::Splits { current: 1, open: vec![true, true] })));
        let strategies = [
            (ShipStrategy::Forward, true),
            (ShipStrategy::Rebalance, false),
            (ShipStrategy::Hash(vec![0]), false),
            (ShipStrategy::Broadcast, false),
            (ShipStrategy::Single, false),
        ];
        for (strategy, kept) in strategies {
            let mut partitioner = Partitioner::new(strategy.clone(), 0, 2);
            partitioner.route(StreamElement::Chunk(chunk.clone()), |_, e| {
                if let StreamElement::Chunk(c) = e {
                    assert_eq!(c.splits().is_some(), kept, "{strategy:?}");
                }
            });
        }
    }

    #[test]
    fn a_columnar_chunk_splits_into_parts_that_share_its_arrays() {
        let mut chunk = Chunk::with_types(&[crate::DataType::int()]);
        for i in 0..100 {
            chunk.push(crate::RowKind::Insert, &[Value::Int(i)]);
        }
        chunk.columns();
        let mut partitioner = Partitioner::new(ShipStrategy::Hash(vec![0]), 0, 3);
        let mut received: Vec<(usize, Vec<String>)> = Vec::new();
        partitioner.route(StreamElement::Chunk(chunk.clone()), |r, e| {
            if let StreamElement::Chunk(c) = e {
                assert_eq!(c.columns().arrays()[0].len(), 100);
                received.push((r, c.to_lines()));
            }
        });
        let mut all: Vec<String> = received.iter().flat_map(|(_, lines)| lines.clone()).collect();
        all.sort();
        let mut expected = chunk.to_lines();
        expected.sort();
        assert_eq!(all, expected);
        for (r, lines) in &received {
            for (line, row) in
                lines.iter().zip(chunk.rows().filter(|(_, row)| subtask_for_hash(hash_key(row, &[0]), 3) == *r))
            {
                assert_eq!(
                    line,
                    &crate::chunk::Chunk::from_rows(1, [crate::Row::new(row.0, row.1.to_vec())]).to_lines()[0]
                );
            }
        }
    }

    #[test]
    fn max_parallelism_follows_flink() {
        assert_eq!(default_max_parallelism(1), 128);
        assert_eq!(default_max_parallelism(100), 256);
        assert_eq!(default_max_parallelism(30_000), 32_768);
    }

    #[test]
    fn key_groups_cover_every_subtask() {
        for p in 1..=8 {
            let max = default_max_parallelism(p);
            let owners: std::collections::BTreeSet<usize> =
                (0..max).map(|kg| subtask_for_key_group(kg, max, p)).collect();
            assert_eq!(owners.len(), p);
        }
    }
}
