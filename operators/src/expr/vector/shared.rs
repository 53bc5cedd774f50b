//! Common subexpressions evaluated once per chunk.
//!
//! Expressions compiled with one [`Sharing`] give every deterministic call they have in common
//! (by [`Expr::same_as`]) one slot; evaluated with one [`SharedValues`], the first evaluation of
//! a slot in a chunk fills it and the others read it. A Calc compiles its condition and its
//! projections together: q21's `REGEXP_EXTRACT(url, …)` in the WHERE clause and in the CASE of
//! the SELECT list runs once per row, as Flink's generated code reuses it.

use std::hash::{Hash, Hasher};

use arrow_array::ArrayRef;
use hashbrown::HashMap;

use super::Datum;
use crate::expr::{Expr, Function};

/// Calls of more nodes than this are not shared (their parts still are): finding one among the
/// shared calls costs a walk over it, so a deep expression (a sum of thousands of terms) would
/// compile in quadratic time.
const MAX_SHARED_NODES: usize = 64;

/// The distinct shared subexpressions of the expressions compiled so far, by slot.
#[derive(Debug, Clone, Default)]
pub struct Sharing {
    exprs: Vec<Expr>,
    /// The slots of the expressions with each structural hash.
    by_hash: HashMap<u64, Vec<usize>>,
}

impl Sharing {
    /// The slot of `expr`: the one of an earlier expression that computes the same thing, or a
    /// new one. `None` for an expression that may give another value when evaluated again
    /// (a random number, the clock), each of whose occurrences is evaluated on its own, and for
    /// one of more than [`MAX_SHARED_NODES`] nodes.
    pub(super) fn slot(&mut self, expr: &Expr) -> Option<usize> {
        if !has_at_most(expr, MAX_SHARED_NODES) || !expr.is_deterministic() {
            return None;
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        hash_structure(expr, &mut hasher);
        let Sharing { exprs, by_hash } = self;
        let candidates = by_hash.entry(hasher.finish()).or_default();
        if let Some(&slot) = candidates.iter().find(|&&slot| exprs[slot].same_as(expr)) {
            return Some(slot);
        }
        exprs.push(expr.clone());
        candidates.push(exprs.len() - 1);
        Some(exprs.len() - 1)
    }
}

/// Whether `expr` has at most `limit` nodes (counted only that far).
fn has_at_most(expr: &Expr, limit: usize) -> bool {
    let mut pending = vec![expr];
    let mut seen = 0;
    while let Some(e) = pending.pop() {
        seen += 1;
        if seen > limit {
            return false;
        }
        if let Expr::Call { args, .. } = e {
            pending.extend(args);
        }
    }
    true
}

/// Hashes what [`Expr::same_as`] compares: expressions it finds the same hash alike.
fn hash_structure(expr: &Expr, state: &mut impl Hasher) {
    match expr {
        Expr::Column { index, ty } => (0u8, index, ty).hash(state),
        Expr::Literal { value, ty } => (1u8, value, ty).hash(state),
        Expr::Call { function, args, ty } => {
            (2u8, ty, args.len()).hash(state);
            match function {
                Function::Scalar(f) => f.name().hash(state),
                other => std::mem::discriminant(other).hash(state),
            }
            args.iter().for_each(|a| hash_structure(a, state));
        }
    }
}

/// The values of shared subexpressions computed so far for one chunk.
///
/// Values computed before [`select`](Self::select) are over the rows before the selection;
/// a later read takes the selected rows of them.
#[derive(Default)]
pub struct SharedValues {
    values: Vec<Option<Datum>>,
    /// Per slot: whether its value is over the rows before `selection`.
    stale: Vec<bool>,
    selection: Vec<u32>,
}

impl SharedValues {
    /// No values yet.
    pub fn new() -> Self {
        SharedValues::default()
    }

    /// From now on expressions are evaluated over `rows` of the rows so far (positions in them,
    /// ascending): the values computed before are read narrowed to those rows.
    pub fn select(&mut self, rows: &[u32]) {
        for slot in 0..self.values.len() {
            // A value still over the rows before an earlier selection is narrowed to it first.
            if self.stale[slot] {
                self.narrow(slot);
            }
            self.stale[slot] = self.values[slot].is_some();
        }
        self.selection = rows.to_vec();
    }

    pub(super) fn get(&mut self, slot: usize) -> Option<Datum> {
        if self.stale.get(slot).copied().unwrap_or(false) {
            self.narrow(slot);
        }
        self.values.get(slot).cloned().flatten()
    }

    pub(super) fn put(&mut self, slot: usize, value: &Datum) {
        if self.values.len() <= slot {
            self.values.resize(slot + 1, None);
            self.stale.resize(slot + 1, false);
        }
        self.values[slot] = Some(value.clone());
        self.stale[slot] = false;
    }

    /// The value of `slot` taken at the selected rows.
    fn narrow(&mut self, slot: usize) {
        self.stale[slot] = false;
        if let Some(Datum::Array(array)) = &self.values[slot] {
            let narrowed: ArrayRef = weir_runtime::chunk::take(array, &self.selection);
            self.values[slot] = Some(Datum::Array(narrowed));
        }
    }
}
