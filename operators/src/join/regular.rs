//! The streaming regular join (Flink's `Join`): both inputs keyed by their join key, each side's
//! rows kept in state, and every change of one side joined with the other side's rows of the
//! same key that the extra condition accepts. Output rows are the left row's columns, then the
//! right row's, NULLs standing in for the side an outer join found nothing on.
//!
//! Per side the state maps each distinct row of a key to how many times it is there and, for an
//! outer side, to how many rows of the other side it joins with (its associations), as Flink's
//! outer join state views keep them. The changes follow Flink's `StreamingJoinOperator`:
//!
//! - a row added on an outer side with no match emits `+I[row, NULLs]`; with matches, each match
//!   that was alone on an outer other side retracts its padded row (`-D[NULLs, match]`) first,
//!   then the pairs go out as `+I`;
//! - a row added on an inner side emits its pairs with the row's own kind (`+I` or `+U`), or
//!   `+I` when the other side is outer (retracting the padded rows as above);
//! - a row retracted emits its pairs as `-D` (outer side) or with its own kind (`-U`, `-D`), its
//!   padded row as `-D` when it had no match, and pads again (`+I[NULLs, match]`) each match of an
//!   outer other side that it was the last association of.
//!
//! A semi join (anti join) emits a left row, with its own kind, while it has matches (has none):
//! a left row comes out when it is added with (without) a match, and goes when it is retracted;
//! a right row that gives a left row its first match inserts (retracts) that row, and one that
//! takes its last match away retracts (inserts) it again, as Flink's semi/anti join operator.
//!
//! A row whose join key holds a NULL matches nothing (SQL's `=`), but is kept, so that an outer
//! join retracts its padded row correctly.

use std::time::Duration;

use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::MapState;
use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result, RowKind, SubtaskInfo, Value};

use super::{push_pair, JoinInputSideSpec, JoinType, PairCondition};
use crate::expr::Expr;
use crate::spec::OperatorSpec;

/// The state sections of the two sides.
const SIDES: [&str; 2] = ["left-records", "right-records"];

/// Everything a [`RegularJoinOperator`] is built from.
#[derive(Debug, Clone)]
pub struct RegularJoinSpec {
    /// INNER, LEFT, RIGHT or FULL.
    pub join_type: JoinType,
    /// The join key columns of the left input and, in the same order, of the right input.
    pub keys: [Vec<usize>; 2],
    /// The number of columns of each input.
    pub arities: [usize; 2],
    /// A condition besides the equal keys, over the joined row (left columns, then right).
    pub condition: Option<Expr>,
    /// What each side's state holds, as Flink sizes it (shown by EXPLAIN).
    pub sides: [JoinInputSideSpec; 2],
    /// Per side, how long a row not written is kept (`table.exec.state.ttl`, or the side's
    /// `STATE_TTL` hint); `None` keeps it forever.
    pub state_ttl: [Option<Duration>; 2],
}

impl OperatorSpec for RegularJoinSpec {
    type Operator = RegularJoinOperator;

    fn build(&self, _subtask: &SubtaskInfo) -> RegularJoinOperator {
        RegularJoinOperator {
            records: [MapState::new(SIDES[0], self.state_ttl[0]), MapState::new(SIDES[1], self.state_ttl[1])],
            spec: self.clone(),
            key: Vec::new(),
            condition: PairCondition::new(self.condition.clone(), self.arities[0], &self.keys),
        }
    }
}

/// How many times a row is on its side, and how many rows of the other side it joins with.
type Record = (u64, u64);

/// The streaming regular join; see the module documentation.
#[derive(Debug)]
pub struct RegularJoinOperator {
    spec: RegularJoinSpec,
    records: [MapState<Box<[Value]>, Record>; 2],
    key: Vec<Value>,
    condition: PairCondition,
}

/// A row of the other side that matches, with its record.
struct Match {
    row: Box<[Value]>,
    count: u64,
    associations: u64,
}

impl RegularJoinOperator {
    /// Pushes the joined row of `row` on side `side` and `other` (NULLs when `None`) into
    /// `emitted` `times` times as `kind` (the left row alone for a semi or anti join).
    fn emit(
        &self,
        emitted: &mut Chunk,
        kind: RowKind,
        side: usize,
        row: Option<&[Value]>,
        other: Option<&[Value]>,
        times: u64,
    ) {
        let (left, right) = if side == 0 { (row, other) } else { (other, row) };
        for _ in 0..times {
            if self.spec.join_type.keeps_left_only() {
                emitted.push(kind, left.unwrap_or_default());
            } else {
                push_pair(emitted, kind, left, right, self.spec.arities);
            }
        }
    }

    /// The rows of the other side of `side` with key `self.key` that the condition accepts
    /// joined with `row`.
    fn matches(&mut self, side: usize, row: &[Value], now: i64) -> Result<Vec<Match>> {
        if self.key.iter().any(Value::is_null) {
            return Ok(Vec::new());
        }
        let other = 1 - side;
        let mut found = Vec::new();
        for (candidate, &(count, associations)) in self.records[other].entries(&self.key, now) {
            let (left, right) = if side == 0 { (row, &candidate[..]) } else { (&candidate[..], row) };
            if !self.condition.accepts(left, right)? {
                continue;
            }
            found.push(Match { row: candidate.clone(), count, associations });
        }
        Ok(found)
    }

    /// Changes the associations of each match (on the other side of `side`) by `delta`.
    fn associate(&mut self, side: usize, matches: &[Match], delta: i64, now: i64) -> Result<()> {
        for m in matches {
            let record = self.records[1 - side].get_mut_or_insert_with(&self.key, m.row.clone(), now, || None)?;
            if let Some(record) = record {
                record.1 = record.1.saturating_add_signed(delta);
            }
        }
        Ok(())
    }

    /// A change of a semi or anti join: the left rows it lets through or holds back.
    fn semi_anti(&mut self, side: usize, kind: RowKind, row: &[Value], now: i64, emitted: &mut Chunk) -> Result<()> {
        let semi = self.spec.join_type == JoinType::LeftSemi;
        let accumulate = kind.is_accumulate();
        let matches = self.matches(side, row, now)?;
        if side == 0 {
            let associations: u64 = matches.iter().map(|m| m.count).sum();
            if semi == (associations > 0) {
                self.emit(emitted, kind, 0, Some(row), None, 1);
            }
            return self.store(0, accumulate, row, associations, now);
        }
        self.store(1, accumulate, row, 0, now)?;
        // The left rows whose first match this is (or whose last match goes).
        let turning = if accumulate { 0 } else { 1 };
        let appears = semi == accumulate;
        for m in matches.iter().filter(|m| m.associations == turning) {
            let kind = if appears { RowKind::Insert } else { RowKind::Delete };
            self.emit(emitted, kind, 0, Some(&m.row), None, m.count);
        }
        self.associate(side, &matches, if accumulate { 1 } else { -1 }, now)
    }

    /// Adds `row` to (or, not `accumulate`, takes it from) the state of `side`, a left row with
    /// its `associations`.
    fn store(&mut self, side: usize, accumulate: bool, row: &[Value], associations: u64, now: i64) -> Result<()> {
        let key: Box<[Value]> = row.into();
        let record =
            self.records[side].get_mut_or_insert_with(&self.key, key.clone(), now, || accumulate.then_some((0, 0)))?;
        let Some(record) = record else { return Ok(()) };
        if accumulate {
            record.0 += 1;
            record.1 = associations;
            return Ok(());
        }
        record.0 = record.0.saturating_sub(1);
        if record.0 == 0 {
            self.records[side].remove(&self.key, &key);
        }
        Ok(())
    }

    fn accumulate(&mut self, side: usize, kind: RowKind, row: &[Value], now: i64, emitted: &mut Chunk) -> Result<()> {
        let matches = self.matches(side, row, now)?;
        let (outer, other_outer) = (self.spec.join_type.is_outer(side), self.spec.join_type.is_outer(1 - side));
        if outer && matches.is_empty() {
            self.emit(emitted, RowKind::Insert, side, Some(row), None, 1);
        }
        if other_outer {
            for m in matches.iter().filter(|m| m.associations == 0) {
                self.emit(emitted, RowKind::Delete, 1 - side, Some(&m.row), None, m.count);
            }
            self.associate(side, &matches, 1, now)?;
        }
        let pair_kind = if outer || other_outer { RowKind::Insert } else { kind };
        for m in &matches {
            self.emit(emitted, pair_kind, side, Some(row), Some(&m.row), m.count);
        }
        let associations: u64 = matches.iter().map(|m| m.count).sum();
        let record =
            self.records[side].get_mut_or_insert_with(&self.key, row.into(), now, || Some((0, associations)))?;
        if let Some(record) = record {
            record.0 += 1;
            record.1 = associations;
        }
        Ok(())
    }

    fn retract(&mut self, side: usize, kind: RowKind, row: &[Value], now: i64, emitted: &mut Chunk) -> Result<()> {
        let key: Box<[Value]> = row.into();
        let mut gone = false;
        if let Some(record) = self.records[side].get_mut_or_insert_with(&self.key, key.clone(), now, || None)? {
            record.0 = record.0.saturating_sub(1);
            gone = record.0 == 0;
        }
        if gone {
            self.records[side].remove(&self.key, &key);
        }
        let matches = self.matches(side, row, now)?;
        let (outer, other_outer) = (self.spec.join_type.is_outer(side), self.spec.join_type.is_outer(1 - side));
        if outer && matches.is_empty() {
            self.emit(emitted, RowKind::Delete, side, Some(row), None, 1);
        }
        let pair_kind = if outer || other_outer { RowKind::Delete } else { kind };
        for m in &matches {
            self.emit(emitted, pair_kind, side, Some(row), Some(&m.row), m.count);
        }
        if other_outer {
            for m in matches.iter().filter(|m| m.associations == 1) {
                self.emit(emitted, RowKind::Insert, 1 - side, Some(&m.row), None, m.count);
            }
            self.associate(side, &matches, -1, now)?;
        }
        Ok(())
    }
}

impl Operator for RegularJoinOperator {
    fn name(&self) -> &str {
        "Join"
    }

    fn process_chunk(&mut self, input: usize, chunk: Chunk, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        let side = input.min(1);
        let now = ctx.processing_time();
        let right_arity = if self.spec.join_type.keeps_left_only() { 0 } else { self.spec.arities[1] };
        let (arity, limit) = (self.spec.arities[0] + right_arity, ctx.chunk_size());
        let mut emitted = Chunk::with_capacity(arity, chunk.len().min(limit));
        for (kind, row) in chunk.rows() {
            // A row can join many: the output goes on in chunks of about the job's chunk size.
            if emitted.len() >= limit {
                out.collect(std::mem::replace(&mut emitted, Chunk::with_capacity(arity, limit)));
            }
            self.key.clear();
            self.key.extend(self.spec.keys[side].iter().map(|&k| row[k].clone()));
            if self.spec.join_type.keeps_left_only() {
                self.semi_anti(side, kind, row, now, &mut emitted)?;
            } else if kind.is_accumulate() {
                self.accumulate(side, kind, row, now, &mut emitted)?;
            } else {
                self.retract(side, kind, row, now, &mut emitted)?;
            }
        }
        if !emitted.is_empty() {
            out.collect(emitted);
        }
        Ok(())
    }

    /// Both sides' rows with their counts and associations.
    fn snapshot_state(&mut self, _: u64, ctx: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        let now = ctx.processing_time();
        self.records.iter_mut().for_each(|side| side.snapshot(state, now));
        Ok(())
    }

    /// The rows of the join keys this subtask owns now.
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        let info = ctx.subtask().clone();
        self.records.iter_mut().try_for_each(|side| side.restore(states, &info))
    }
}

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for RegularJoinSpec {
    /// Per side and join key: the side's rows with their counts (and, for an outer side, how many rows of the other side each matches).
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{column_types, row_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        let right = inputs.get(1).copied().unwrap_or_default();
        let sides = [input, right];
        let mut signature = StateSignature::new("Join", STATE_VERSION);
        for (side, state) in SIDES.iter().enumerate() {
            signature = signature.state(
                state,
                StateKind::Map,
                column_types(sides[side], &self.keys[side]),
                row_types(sides[side]),
            );
        }
        signature
    }
}
