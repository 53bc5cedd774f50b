//! Rank (Top-N): `ROW_NUMBER() | RANK() | DENSE_RANK() OVER (PARTITION BY … ORDER BY …)` filtered
//! to a constant range of ranks, and `ORDER BY … LIMIT n OFFSET m` (one partition, ROW_NUMBER,
//! ranks `m + 1 ..= m + n`), over a stream that may update.
//!
//! Per partition key the operator keeps rows sorted by the ORDER BY keys (rows of equal keys in
//! the order they came, as Flink's Top-N buffer keeps them). Each change of the input changes the
//! rows ranked in the range; the operator emits the difference between the ranked rows before
//! and after it:
//!
//! - with the rank selected, per rank: a row replaced by another is `-U old` (when the consumer
//!   wants update-befores) and `+U new`; a rank that appears is `+I`, one that disappears `-D`;
//! - without it, the rows that left the range are `-D`, those that entered it `+I`.
//!
//! Over insert-only input (Flink's `AppendFastStrategy`) a row ranked past the range's end can
//! never come back into it, so only the rows ranked up to the end are kept. Over updating input
//! (`RetractStrategy`) every row is kept, so that a retraction lets the next row move up; `-U`
//! and `-D` rows remove an equal row. State is one sorted list per partition key, checkpointed
//! and restored by key, with `table.exec.state.ttl`.

use std::time::Duration;

use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::{StateValue, ValueState};
use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result, RowKind, SubtaskInfo, Value};

use crate::ranking::{compare_rows, RankRange, RankType, SortKey};
use crate::spec::OperatorSpec;

/// The state section of the sorted rows.
const ROWS: &str = "rank-rows";

/// Everything a [`RankOperator`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct RankSpec {
    /// The partition columns (none: one partition).
    pub partition: Vec<usize>,
    /// The ORDER BY keys.
    pub order: Vec<SortKey>,
    /// ROW_NUMBER, RANK or DENSE_RANK.
    pub rank_type: RankType,
    /// The ranks emitted.
    pub range: RankRange,
    /// Whether each row is followed by its rank (the query selects it).
    pub output_rank: bool,
    /// The number of input columns.
    pub input_arity: usize,
    /// The input only inserts (Flink's `AppendFastStrategy`; else `RetractStrategy`).
    pub append_only: bool,
    /// Whether a replaced rank is retracted with `-U` before its `+U`.
    pub update_before: bool,
    /// `table.exec.state.ttl`.
    pub state_ttl: Option<Duration>,
}

impl RankSpec {
    /// Flink's name of the strategy: `AppendFastStrategy` or `RetractStrategy`.
    pub fn strategy(&self) -> &'static str {
        if self.append_only {
            "AppendFastStrategy"
        } else {
            "RetractStrategy"
        }
    }

    fn arity(&self) -> usize {
        self.input_arity + usize::from(self.output_rank)
    }
}

impl OperatorSpec for RankSpec {
    type Operator = RankOperator;

    fn build(&self, _subtask: &SubtaskInfo) -> RankOperator {
        RankOperator { rows: ValueState::new(ROWS, self.state_ttl), spec: self.clone(), key: Vec::new() }
    }
}

/// One partition's rows, sorted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SortedRows(Vec<Box<[Value]>>);

impl StateValue for SortedRows {
    fn encode(&self, out: &mut Encoder) {
        out.u32(self.0.len() as u32);
        self.0.iter().for_each(|row| out.values(row));
    }

    fn decode(input: &mut Decoder<'_>) -> std::result::Result<Self, DecodeError> {
        let rows = (0..input.u32()?).map(|_| input.values()).collect::<std::result::Result<_, _>>()?;
        Ok(SortedRows(rows))
    }
}

/// The positions in `rows` of the rows ranked at most `end`, with their ranks, in order.
fn ranked(spec: &RankSpec, rows: &[Box<[Value]>], end: u64) -> Vec<(u64, usize)> {
    let mut out = Vec::new();
    let mut rank = 0u64;
    for (index, row) in rows.iter().enumerate() {
        let tie = index > 0 && compare_rows(&spec.order, &rows[index - 1], row).is_eq();
        rank = match spec.rank_type {
            RankType::RowNumber => index as u64 + 1,
            RankType::Rank if tie => rank,
            RankType::Rank => index as u64 + 1,
            RankType::DenseRank if tie => rank,
            RankType::DenseRank => rank + 1,
        };
        if rank > end {
            break;
        }
        out.push((rank, index));
    }
    out
}

/// The positions of the rows ranked in the range, with their ranks.
fn in_range(spec: &RankSpec, rows: &[Box<[Value]>]) -> Vec<(u64, usize)> {
    let start = spec.range.start;
    ranked(spec, rows, spec.range.end).into_iter().filter(|(r, _)| *r >= start).collect()
}

/// Pushes `row` (with `rank` when the rank is selected) as `kind`.
fn push(spec: &RankSpec, emitted: &mut Chunk, kind: RowKind, rank: u64, row: &[Value]) {
    emitted.push_with(kind, |values| {
        values.extend_from_slice(row);
        if spec.output_rank {
            values.push(Value::BigInt(rank as i64));
        }
    });
}

/// Whether `a` and `b` are equal rows: the same row of the list (one address), or equal values.
fn same_row(a: &[Value], b: &[Value]) -> bool {
    std::ptr::eq(a, b) || a == b
}

/// Emits what changed between the ranked rows `before` and `after`.
fn emit_difference(spec: &RankSpec, before: &[(u64, &[Value])], after: &[(u64, &[Value])], emitted: &mut Chunk) {
    let mut added: Vec<Option<(u64, &[Value])>> = after.iter().copied().map(Some).collect();
    let mut removed = Vec::new();
    for &(rank, row) in before {
        // Unchanged: the same row at the same rank (or anywhere in the range, unselected).
        let same =
            added.iter().position(|a| a.is_some_and(|(r, a)| same_row(a, row) && (!spec.output_rank || r == rank)));
        match same {
            Some(at) => added[at] = None,
            None => removed.push((rank, row)),
        }
    }
    let mut added: Vec<(u64, &[Value])> = added.into_iter().flatten().collect();
    for (rank, row) in removed {
        let replaced = spec.output_rank.then(|| added.iter().position(|(r, _)| *r == rank)).flatten();
        match replaced {
            Some(at) => {
                let (_, new) = added.remove(at);
                if spec.update_before {
                    push(spec, emitted, RowKind::UpdateBefore, rank, row);
                }
                push(spec, emitted, RowKind::UpdateAfter, rank, new);
            }
            None => push(spec, emitted, RowKind::Delete, rank, row),
        }
    }
    for (rank, row) in added {
        push(spec, emitted, RowKind::Insert, rank, row);
    }
}

/// How one change moved a partition's rows: where a row ranked before it is now.
enum Moved {
    /// The row at `at` was taken out (it is `gone[0]`); the rows after it moved up by one.
    Removed { at: usize },
    /// A row was put in at `at`, so the rows from there moved down by one; those past `kept`
    /// (ranked past the end, over insert-only input) were taken out, in order, into `gone`.
    Inserted { at: usize, kept: usize },
}

impl Moved {
    /// The row that was at position `i` before the change, in `rows` or among the `gone` ones.
    fn row<'a>(&self, i: usize, rows: &'a [Box<[Value]>], gone: &'a [Box<[Value]>]) -> &'a [Value] {
        match *self {
            Moved::Removed { at } if i == at => &gone[0],
            Moved::Removed { at } if i > at => &rows[i - 1],
            Moved::Removed { .. } => &rows[i],
            Moved::Inserted { at, kept } => {
                let now = if i >= at { i + 1 } else { i };
                if now < kept {
                    &rows[now]
                } else {
                    &gone[now - kept]
                }
            }
        }
    }
}

/// Top-N; see the module documentation.
#[derive(Debug)]
pub struct RankOperator {
    spec: RankSpec,
    rows: ValueState<SortedRows>,
    key: Vec<Value>,
}

impl RankOperator {
    /// Applies one change of the input to its partition's rows and emits what it changed. The
    /// ranked rows before and after are compared in place: no row is copied but the ones emitted.
    fn apply(&mut self, kind: RowKind, row: &[Value], now: i64, emitted: &mut Chunk) -> Result<()> {
        let Self { spec, rows: state, key } = self;
        let Some(sorted) = state.get_mut_or_insert_with(key, now, || Some(SortedRows::default()))? else {
            return Ok(());
        };
        let rows = &mut sorted.0;
        let before = in_range(spec, rows);
        let (moved, gone) = if !kind.is_accumulate() {
            // The equal row kept last among its ties (Flink retracts from the end).
            let end = rows.partition_point(|kept| compare_rows(&spec.order, kept, row).is_le());
            let start = rows.partition_point(|kept| compare_rows(&spec.order, kept, row).is_lt());
            match (start..end).rev().find(|&i| rows[i].as_ref() == row) {
                Some(at) => (Moved::Removed { at }, vec![rows.remove(at)]),
                // Not kept: ranked past the end of an append-only input, or expired.
                None => return Ok(()),
            }
        } else {
            let at = rows.partition_point(|kept| compare_rows(&spec.order, kept, row).is_le());
            rows.insert(at, row.into());
            let kept = if spec.append_only { ranked(spec, rows, spec.range.end).len() } else { rows.len() };
            (Moved::Inserted { at, kept }, rows.split_off(kept))
        };
        let before: Vec<(u64, &[Value])> = before.into_iter().map(|(r, i)| (r, moved.row(i, rows, &gone))).collect();
        let after: Vec<(u64, &[Value])> =
            in_range(spec, rows).into_iter().map(|(r, i)| (r, rows[i].as_ref())).collect();
        emit_difference(spec, &before, &after, emitted);
        if rows.is_empty() {
            state.remove(key);
        }
        Ok(())
    }
}

impl Operator for RankOperator {
    fn name(&self) -> &str {
        "Rank"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let now = ctx.processing_time();
        let mut emitted = Chunk::with_capacity(self.spec.arity(), chunk.len());
        for (kind, row) in chunk.rows() {
            self.key.clear();
            self.key.extend(self.spec.partition.iter().map(|&c| row[c].clone()));
            self.apply(kind, row, now, &mut emitted)?;
        }
        out.collect(emitted);
        Ok(())
    }

    fn snapshot_state(&mut self, _: u64, ctx: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        self.rows.snapshot(state, ctx.processing_time());
        Ok(())
    }

    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        self.rows.restore(states, ctx.subtask())
    }
}

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for RankSpec {
    /// Per partition key: the rows it ranks, in order, with their counts.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{column_types, row_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        StateSignature::new("Rank", STATE_VERSION).state(
            ROWS,
            StateKind::Value,
            column_types(input, &self.partition),
            row_types(input),
        )
    }
}

#[cfg(test)]
#[path = "rank_tests.rs"]
mod tests;
