//! Deduplicate: `ROW_NUMBER() OVER (PARTITION BY key ORDER BY time_attr [ASC|DESC])` filtered to
//! rank 1 without selecting it — the first or the last row per key, on processing or event time.
//!
//! - **First row, processing time**: the first row of a key goes out as `+I`, every later one
//!   is dropped (insert-only output).
//! - **Last row, processing time**: each row replaces its key's row: `+I` the first time, then
//!   `-U old` (when the consumer wants update-befores) and `+U new`. A retraction of the kept row
//!   (updating input) deletes it (`-D`).
//! - **Event time**: a row replaces the kept one when its rowtime is later or equal (last row) or
//!   earlier (first row), with the same output as above. A first-row deduplication over
//!   insert-only input without mini-batch emits inserts only (Flink 2's `outputInsertOnly`): the
//!   row with the earliest rowtime is kept until the watermark passes that rowtime and then goes
//!   out; rows of the key after that are dropped.
//!
//! With mini-batch the rows of a bundle wait for its flush marker; at the flush, each key's rows
//! are applied in arrival order, and with `compact_changes` (or on processing time, where Flink's
//! mini-batch deduplication always compacts) only the key's final change is emitted.
//!
//! State: the row kept per key (with whether it went out), and the keys' event-time timers,
//! checkpointed and restored by key, with `table.exec.state.ttl`.

use std::time::Duration;

use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::{KeyedTimers, ValueState};
use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result, RowKind, SubtaskInfo, Value};

use crate::spec::OperatorSpec;
use crate::window::millis_of;

/// The state section of the kept rows.
const ROWS: &str = "deduplicate-rows";
/// The state section of the timers of insert-only first-row deduplication.
const TIMERS: &str = "deduplicate-timers";

/// Everything a [`DeduplicateOperator`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct DeduplicateSpec {
    /// The key columns.
    pub key: Vec<usize>,
    /// Keep the last row (else the first).
    pub keep_last: bool,
    /// The rowtime column ordering the rows; `None`: processing time.
    pub rowtime: Option<usize>,
    /// The number of input columns.
    pub input_arity: usize,
    /// Only inserts go out (first row over insert-only input without mini-batch).
    pub output_insert_only: bool,
    /// Whether a replaced row is retracted with `-U` before its `+U`.
    pub update_before: bool,
    /// Rows wait for the mini-batch flush marker.
    pub mini_batch: bool,
    /// `table.exec.deduplicate.mini-batch.compact-changes-enabled`.
    pub compact_changes: bool,
    /// `table.exec.state.ttl`.
    pub state_ttl: Option<Duration>,
}

impl OperatorSpec for DeduplicateSpec {
    type Operator = DeduplicateOperator;

    fn build(&self, _subtask: &SubtaskInfo) -> DeduplicateOperator {
        DeduplicateOperator {
            rows: ValueState::new(ROWS, self.state_ttl),
            timers: KeyedTimers::new(TIMERS),
            spec: self.clone(),
            bundle: Vec::new(),
        }
    }
}

/// A key's row, and 1 once it went out (insert-only first row), else 0.
type Kept = (Box<[Value]>, u64);

/// Deduplication; see the module documentation.
#[derive(Debug)]
pub struct DeduplicateOperator {
    spec: DeduplicateSpec,
    rows: ValueState<Kept>,
    timers: KeyedTimers,
    /// The mini-batch's rows, in arrival order.
    bundle: Vec<(RowKind, Box<[Value]>)>,
}

impl DeduplicateOperator {
    fn key_of(&self, row: &[Value]) -> Vec<Value> {
        self.spec.key.iter().map(|&c| row[c].clone()).collect()
    }

    /// Whether `new` replaces `kept`.
    fn replaces(&self, kept: &[Value], new: &[Value]) -> bool {
        let Some(time) = self.spec.rowtime else { return self.spec.keep_last };
        let at = |row: &[Value]| millis_of(&row[time]).unwrap_or(i64::MIN);
        if self.spec.keep_last {
            at(new) >= at(kept)
        } else {
            at(new) < at(kept)
        }
    }

    /// Applies one row of the input; the change it makes is pushed to `emitted`.
    fn apply(&mut self, kind: RowKind, row: &[Value], ctx: &mut OperatorContext, emitted: &mut Chunk) -> Result<()> {
        let now = ctx.processing_time();
        let key = self.key_of(row);
        let kept = self.rows.get(&key, now).cloned();
        if !kind.is_accumulate() {
            // A retraction of the kept row deletes it; of any other row, it changes nothing.
            if kept.as_ref().is_some_and(|(k, _)| k.as_ref() == row) {
                self.rows.remove(&key);
                emitted.push(RowKind::Delete, row);
            }
            return Ok(());
        }
        if self.spec.output_insert_only {
            return self.hold_first(key, kept, row, ctx, emitted);
        }
        match kept {
            None => {
                emitted.push(RowKind::Insert, row);
                self.rows.put(&key, (row.into(), 1), now);
            }
            Some((old, _)) if self.replaces(&old, row) => {
                if self.spec.update_before {
                    emitted.push(RowKind::UpdateBefore, &old);
                }
                emitted.push(RowKind::UpdateAfter, row);
                self.rows.put(&key, (row.into(), 1), now);
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// Insert-only first row: on processing time the first row goes out at once; on event time
    /// the earliest row waits for the watermark to pass its rowtime.
    fn hold_first(
        &mut self,
        key: Vec<Value>,
        kept: Option<Kept>,
        row: &[Value],
        ctx: &mut OperatorContext,
        emitted: &mut Chunk,
    ) -> Result<()> {
        let now = ctx.processing_time();
        let Some(time_col) = self.spec.rowtime else {
            if kept.is_none() {
                emitted.push(RowKind::Insert, row);
                self.rows.put(&key, (row.into(), 1), now);
            }
            return Ok(());
        };
        let time = millis_of(&row[time_col]).unwrap_or(i64::MIN);
        match kept {
            Some((_, 1)) => return Ok(()),
            Some((old, _)) if !self.replaces(&old, row) => return Ok(()),
            Some((old, _)) => {
                self.timers.remove(&key, millis_of(&old[time_col]).unwrap_or(i64::MIN));
            }
            None => {}
        }
        if time <= ctx.current_watermark() {
            emitted.push(RowKind::Insert, row);
            self.rows.put(&key, (row.into(), 1), now);
        } else {
            self.rows.put(&key, (row.into(), 0), now);
            self.timers.register(&key, time);
        }
        Ok(())
    }

    /// Applies the bundle's rows; with compaction, only each key's final change goes out.
    fn flush_bundle(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        if self.bundle.is_empty() {
            return Ok(());
        }
        let bundle = std::mem::take(&mut self.bundle);
        let keys = bundle.iter().map(|(_, row)| self.key_of(row)).collect::<std::collections::HashSet<_>>().len();
        ctx.record_bundle(bundle.len(), keys);
        let compact = self.spec.compact_changes || self.spec.rowtime.is_none();
        let mut emitted = Chunk::with_capacity(self.spec.input_arity, bundle.len());
        if !compact {
            for (kind, row) in &bundle {
                self.apply(*kind, row, ctx, &mut emitted)?;
            }
            out.collect(emitted);
            return Ok(());
        }
        // Each key's first state in the bundle, then its changes applied without output; the
        // difference between the two goes out.
        let now = ctx.processing_time();
        let mut before: Vec<(Vec<Value>, Option<Kept>)> = Vec::new();
        let mut index = std::collections::HashMap::new();
        let mut scratch = Chunk::with_capacity(self.spec.input_arity, 0);
        for (kind, row) in &bundle {
            let key = self.key_of(row);
            if !index.contains_key(&key) {
                index.insert(key.clone(), before.len());
                before.push((key, self.rows.get(&self.key_of(row), now).cloned()));
            }
            self.apply(*kind, row, ctx, &mut scratch)?;
        }
        for (key, old) in before {
            let new = self.rows.get(&key, now).cloned();
            match (old, new) {
                (None, Some((new, _))) => emitted.push(RowKind::Insert, &new),
                (Some((old, _)), None) => emitted.push(RowKind::Delete, &old),
                (Some((old, _)), Some((new, _))) if old != new => {
                    if self.spec.update_before {
                        emitted.push(RowKind::UpdateBefore, &old);
                    }
                    emitted.push(RowKind::UpdateAfter, &new);
                }
                _ => {}
            }
        }
        out.collect(emitted);
        Ok(())
    }
}

impl Operator for DeduplicateOperator {
    fn name(&self) -> &str {
        "Deduplicate"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        if self.spec.mini_batch {
            self.bundle.extend(chunk.rows().map(|(kind, row)| (kind, Box::<[Value]>::from(row))));
            return Ok(());
        }
        let mut emitted = Chunk::with_capacity(self.spec.input_arity, chunk.len());
        for (kind, row) in chunk.rows() {
            self.apply(kind, row, ctx, &mut emitted)?;
        }
        out.collect(emitted);
        Ok(())
    }

    /// Insert-only first rows whose rowtime the watermark passed go out.
    fn process_watermark(&mut self, watermark: i64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        let now = ctx.processing_time();
        let mut emitted = Chunk::with_capacity(self.spec.input_arity, 0);
        while let Some((_, keys)) = self.timers.pop_due(watermark) {
            for key in keys {
                if let Some(kept) = self.rows.get_mut(&key, now).filter(|(_, out)| *out == 0) {
                    emitted.push(RowKind::Insert, &kept.0);
                    kept.1 = 1;
                }
            }
        }
        out.collect(emitted);
        out.emit_watermark(watermark);
        Ok(())
    }

    fn process_flush_marker(&mut self, marker: i64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush_bundle(ctx, out)?;
        out.emit_flush_marker(marker);
        Ok(())
    }

    fn prepare_snapshot_pre_barrier(&mut self, _: u64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush_bundle(ctx, out)
    }

    fn end_of_input(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush_bundle(ctx, out)
    }

    fn snapshot_state(&mut self, _: u64, ctx: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        self.rows.snapshot(state, ctx.processing_time());
        self.timers.snapshot(state);
        Ok(())
    }

    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        let info = ctx.subtask().clone();
        self.rows.restore(states, &info)?;
        self.timers.restore(states, &info)
    }
}

#[cfg(test)]
#[path = "deduplicate_tests.rs"]
mod tests;
