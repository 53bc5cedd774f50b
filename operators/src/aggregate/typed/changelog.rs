//! Flink's changelog of a typed group aggregate, built a column at a time: one place decides
//! what a group's change emits, for the one-phase and the global aggregate alike.

use arrow_array::ArrayRef;
use weir_runtime::{Chunk, RowKind};

use super::{word_column, Group, TypedCalls};

/// What to emit besides a group's new result.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EmitOptions {
    /// Emit `-U` before `+U`.
    pub update_before: bool,
    /// Emit an unchanged result anyway (state TTL downstream).
    pub emit_unchanged: bool,
}

/// The rows emitted so far: per row its kind, the source of its key (an input row or a bundle
/// group) and a result column per call.
pub(crate) struct Changelog {
    kinds: Vec<RowKind>,
    sources: Vec<u32>,
    results: Vec<Vec<Option<i64>>>,
}

impl Changelog {
    pub fn new(calls: usize, rows: usize) -> Self {
        Changelog {
            kinds: Vec::with_capacity(rows),
            sources: Vec::with_capacity(rows),
            results: (0..calls).map(|_| Vec::with_capacity(rows)).collect(),
        }
    }

    fn push(&mut self, kind: RowKind, source: u32, results: impl Iterator<Item = Option<i64>>) {
        self.kinds.push(kind);
        self.sources.push(source);
        for (column, r) in self.results.iter_mut().zip(results) {
            column.push(r);
        }
    }

    /// Emits the change of `group` after an update (`first`: it had no rows before), keyed by
    /// `source`, as Flink does: `+I` for a new group, `-U`/`+U` for a changed result (or an
    /// unchanged one with `emit_unchanged`), `-D` when its last row left. Returns whether the
    /// group is gone (its state must be dropped).
    pub fn record(
        &mut self,
        group: &mut Group<'_>,
        calls: &TypedCalls,
        first: bool,
        source: u32,
        options: EmitOptions,
    ) -> bool {
        if *group.rows() <= 0 {
            if !first {
                self.push(RowKind::Delete, source, (0..calls.len()).map(|c| group.last(c)));
            }
            return true;
        }
        if first {
            self.push(RowKind::Insert, source, calls.iter().enumerate().map(|(c, call)| group.result(c, call)));
        } else if options.emit_unchanged || group.changed(calls) {
            if options.update_before {
                self.push(RowKind::UpdateBefore, source, (0..calls.len()).map(|c| group.last(c)));
            }
            self.push(RowKind::UpdateAfter, source, calls.iter().enumerate().map(|(c, call)| group.result(c, call)));
        } else {
            return false;
        }
        group.remember_results(calls);
        false
    }

    /// The sources of the rows, in order (to gather their keys).
    pub fn sources(&self) -> &[u32] {
        &self.sources
    }

    /// The chunk of the rows: `keys` (one array per key column, a row per emitted row), then
    /// a column per call.
    pub fn finish(self, keys: Vec<ArrayRef>, calls: &TypedCalls) -> Chunk {
        let mut arrays = keys;
        for (column, call) in self.results.iter().zip(calls.iter()) {
            arrays.push(word_column(&call.result_type, column));
        }
        Chunk::from_arrays(self.kinds, arrays)
    }
}
