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
//! With mini-batch the rows of a bundle wait for its flush marker (or for the bundle to reach
//! `table.exec.mini-batch.size` rows); at the flush, each key's rows
//! are applied in arrival order, and with `compact_changes` (or on processing time, where Flink's
//! mini-batch deduplication always compacts) only the key's final change is emitted.
//!
//! State: the row kept per key (with whether it went out), and the keys' event-time timers,
//! checkpointed and restored by key, with `table.exec.state.ttl`.

use std::time::Duration;

use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::{KeyedTimers, ValueState};
use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result, RowKind, SubtaskInfo, Value};

use crate::aggregate::bundle::{row_bytes, BundleMeter, BundleTrigger};
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
    /// Mini-batch: rows wait for the flush marker, or until the bundle is due by this trigger
    /// (`table.exec.mini-batch.size`, as Flink's `CountBundleTrigger`); `None`: row by row.
    pub mini_batch: Option<BundleTrigger>,
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
            bundle_bytes: 0,
            meter: self.mini_batch.map(BundleMeter::new),
            key: Vec::new(),
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
    /// About how many bytes the bundle's rows take.
    bundle_bytes: usize,
    /// When the bundle is due, and its rows and origin; `None` without mini-batch.
    meter: Option<BundleMeter>,
    /// The key of the row being applied.
    key: Vec<Value>,
}

impl DeduplicateOperator {
    /// Sets `self.key` to the key of `row`.
    fn set_key(&mut self, row: &[Value]) {
        self.key.clear();
        self.key.extend(self.spec.key.iter().map(|&c| row[c].clone()));
    }

    /// Whether `new` replaces `kept`.
    fn replaces(spec: &DeduplicateSpec, kept: &[Value], new: &[Value]) -> bool {
        let Some(time) = spec.rowtime else { return spec.keep_last };
        let at = |row: &[Value]| millis_of(&row[time]).unwrap_or(i64::MIN);
        if spec.keep_last {
            at(new) >= at(kept)
        } else {
            at(new) < at(kept)
        }
    }

    /// Applies one row of the input, whose key is in `self.key`; the change it makes is pushed
    /// to `emitted`.
    fn apply(&mut self, kind: RowKind, row: &[Value], ctx: &mut OperatorContext, emitted: &mut Chunk) -> Result<()> {
        let now = ctx.processing_time();
        let Self { spec, rows, key, .. } = self;
        // What the kept row says of this one: none kept, replaced, or kept (and whether it
        // went out, for an insert-only first row).
        let kept = rows.get(key, now).map(|(old, out)| (old.as_ref() == row, Self::replaces(spec, old, row), *out));
        if !kind.is_accumulate() {
            // A retraction of the kept row deletes it; of any other row, it changes nothing.
            if kept.is_some_and(|(equal, _, _)| equal) {
                rows.remove(key);
                emitted.push(RowKind::Delete, row);
            }
            return Ok(());
        }
        if spec.output_insert_only {
            let kept = kept.map(|(_, replaces, out)| (replaces, out == 1));
            return self.hold_first(kept, row, ctx, emitted);
        }
        match kept {
            None => {
                emitted.push(RowKind::Insert, row);
                rows.put(key, (row.into(), 1), now);
            }
            Some((_, true, _)) => {
                let old = rows.get_mut(key, now).expect("the key keeps a row");
                if spec.update_before {
                    emitted.push(RowKind::UpdateBefore, &old.0);
                }
                emitted.push(RowKind::UpdateAfter, row);
                old.0 = row.into();
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// Insert-only first row: on processing time the first row goes out at once; on event time
    /// the earliest row waits for the watermark to pass its rowtime. `kept`: whether the row
    /// kept for the key would be replaced by `row`, and whether it went out.
    fn hold_first(
        &mut self,
        kept: Option<(bool, bool)>,
        row: &[Value],
        ctx: &mut OperatorContext,
        emitted: &mut Chunk,
    ) -> Result<()> {
        let now = ctx.processing_time();
        let Self { spec, rows, timers, key, .. } = self;
        let Some(time_col) = spec.rowtime else {
            if kept.is_none() {
                emitted.push(RowKind::Insert, row);
                rows.put(key, (row.into(), 1), now);
            }
            return Ok(());
        };
        match kept {
            Some((_, true)) | Some((false, _)) => return Ok(()),
            Some((true, false)) => {
                let old = rows.get(key, now).map_or(i64::MIN, |(old, _)| millis_of(&old[time_col]).unwrap_or(i64::MIN));
                timers.remove(key, old);
            }
            None => {}
        }
        let time = millis_of(&row[time_col]).unwrap_or(i64::MIN);
        if time <= ctx.current_watermark() {
            emitted.push(RowKind::Insert, row);
            rows.put(key, (row.into(), 1), now);
        } else {
            rows.put(key, (row.into(), 0), now);
            timers.register(key, time);
        }
        Ok(())
    }

    /// Applies the bundle's rows; with compaction, only each key's final change goes out.
    fn flush_bundle(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        if self.bundle.is_empty() {
            return Ok(());
        }
        let bundle = std::mem::take(&mut self.bundle);
        self.bundle_bytes = 0;
        let compact = self.spec.compact_changes || self.spec.rowtime.is_none();
        let now = ctx.processing_time();
        let mut emitted = Chunk::with_capacity(self.spec.input_arity, bundle.len());
        // With compaction each key's state before the bundle, taken when the key first comes;
        // its changes are applied without output, and the difference goes out at the end.
        let mut before: std::collections::HashMap<Vec<Value>, Option<Kept>> = std::collections::HashMap::new();
        let mut scratch = Chunk::with_capacity(self.spec.input_arity, 0);
        for (kind, row) in &bundle {
            self.set_key(row);
            if !before.contains_key(&self.key) {
                let kept = if compact { self.rows.get(&self.key, now).cloned() } else { None };
                before.insert(self.key.clone(), kept);
            }
            self.apply(*kind, row, ctx, if compact { &mut scratch } else { &mut emitted })?;
        }
        let groups = before.len();
        if compact {
            for (key, old) in before {
                match (old, self.rows.get(&key, now)) {
                    (None, Some((new, _))) => emitted.push(RowKind::Insert, new),
                    (Some((old, _)), None) => emitted.push(RowKind::Delete, &old),
                    (Some((old, _)), Some((new, _))) if old != *new => {
                        if self.spec.update_before {
                            emitted.push(RowKind::UpdateBefore, &old);
                        }
                        emitted.push(RowKind::UpdateAfter, new);
                    }
                    _ => {}
                }
            }
        }
        if let Some(meter) = &mut self.meter {
            meter.flushed(groups, ctx, &mut emitted);
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
        if let Some(meter) = &mut self.meter {
            meter.arriving(&chunk);
            let row_bytes = row_bytes(&chunk);
            for (kind, row) in chunk.rows() {
                self.bundle.push((kind, row.into()));
                self.bundle_bytes += row_bytes;
                if self.meter.as_mut().is_some_and(|m| m.add(1, self.bundle_bytes)) {
                    self.flush_bundle(ctx, out)?;
                }
            }
            return Ok(());
        }
        let mut emitted = Chunk::with_capacity(self.spec.input_arity, chunk.len());
        for (kind, row) in chunk.rows() {
            self.set_key(row);
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

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for DeduplicateSpec {
    /// Per key: the row kept (first or last) and its time; the timers of a mini-batch or event-time deduplication.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{column_types, row_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        StateSignature::new("Deduplicate", STATE_VERSION)
            .state(ROWS, StateKind::Value, column_types(input, &self.key), row_types(input))
            .state(TIMERS, StateKind::Timers, column_types(input, &self.key), vec!["BIGINT (time)".to_string()])
    }
}

#[cfg(test)]
#[path = "deduplicate_tests.rs"]
mod tests;
