//! Sources of sorted entries merged into one: for a key held by several, the newest source's
//! entry wins.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::error::Result;
use crate::run::Entry;

/// A source of entries in ascending key order.
pub(crate) type Source = Box<dyn Iterator<Item = Result<Entry>>>;

/// The entries of its sources in key order, one per key: the first (newest) source's that
/// holds it. Tombstones are passed on, or left out with `drop_tombstones`.
pub(crate) struct Merge {
    sources: Vec<Source>,
    heads: Vec<Option<Option<Vec<u8>>>>,
    heap: BinaryHeap<Reverse<(Vec<u8>, usize)>>,
    drop_tombstones: bool,
    failed: Option<crate::error::Error>,
}

impl Merge {
    /// The merge of `sources`, newest first.
    pub(crate) fn new(sources: Vec<Source>, drop_tombstones: bool) -> Merge {
        let heads = sources.iter().map(|_| None).collect();
        let mut merge = Merge { sources, heads, heap: BinaryHeap::new(), drop_tombstones, failed: None };
        for i in 0..merge.sources.len() {
            merge.advance(i);
        }
        merge
    }

    /// Reads the next entry of source `i` into the heap.
    fn advance(&mut self, i: usize) {
        match self.sources[i].next() {
            Some(Ok((key, value))) => {
                self.heads[i] = Some(value);
                self.heap.push(Reverse((key, i)));
            }
            Some(Err(e)) => self.failed = Some(e),
            None => {}
        }
    }
}

impl Iterator for Merge {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Result<Entry>> {
        loop {
            if let Some(e) = self.failed.take() {
                self.heap.clear();
                return Some(Err(e));
            }
            let Reverse((key, i)) = self.heap.pop()?;
            let value = self.heads[i].take().flatten();
            self.advance(i);
            // Older sources' entries of the same key are shadowed.
            while let Some(Reverse((next, _))) = self.heap.peek() {
                if *next != key {
                    break;
                }
                let Some(Reverse((_, j))) = self.heap.pop() else { break };
                self.heads[j] = None;
                self.advance(j);
            }
            if value.is_some() || !self.drop_tombstones {
                return Some(Ok((key, value)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(entries: &[(&str, Option<&str>)]) -> Source {
        let owned: Vec<Result<Entry>> =
            entries.iter().map(|(k, v)| Ok((k.as_bytes().to_vec(), v.map(|v| v.as_bytes().to_vec())))).collect();
        Box::new(owned.into_iter())
    }

    fn text(merge: Merge) -> Vec<String> {
        merge
            .map(|e| {
                let (k, v) = e.unwrap();
                let v = v.map_or("-".to_string(), |v| String::from_utf8(v).unwrap());
                format!("{}={v}", String::from_utf8(k).unwrap())
            })
            .collect()
    }

    #[test]
    fn the_newest_source_wins_and_tombstones_drop_when_asked() {
        let sources = || {
            vec![
                source(&[("b", Some("new")), ("c", None)]),
                source(&[("a", Some("old")), ("b", Some("old")), ("c", Some("old")), ("d", Some("old"))]),
            ]
        };
        assert_eq!(text(Merge::new(sources(), false)), ["a=old", "b=new", "c=-", "d=old"]);
        assert_eq!(text(Merge::new(sources(), true)), ["a=old", "b=new", "d=old"]);
    }
}
