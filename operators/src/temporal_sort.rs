//! TemporalSort: a streaming `ORDER BY` whose first key is a time attribute, ascending, then any
//! other keys. All rows come to one subtask.
//!
//! On event time (Flink's `RowTimeSortOperator`) rows wait, grouped by rowtime, until the
//! watermark passes their rowtime; then each time's rows go out sorted by the other keys (rows
//! of equal keys in arrival order), times in ascending order. A row whose rowtime is not after
//! the last time that went out is late: it is dropped and counted (`numLateRecordsDropped`). A
//! row whose rowtime the watermark has passed but which is not late waits for the next watermark,
//! as Flink's timer registered in the past fires at the next watermark.
//!
//! On processing time (`ProcTimeSortOperator`) rows are buffered while processing time stands
//! still and go out sorted by the other keys when it moves on (a timer at the next
//! millisecond); rows still buffered when the input ends, or when a checkpoint's barrier comes,
//! go out then.
//!
//! State: the waiting rows by time and the last time emitted, not keyed (one subtask).

use std::collections::BTreeMap;

use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::element::NO_WATERMARK;
use weir_runtime::operator::owned_parts;
use weir_runtime::{Chunk, Error, Operator, OperatorContext, Output, Result, RowKind, SubtaskInfo, Timer, Value};

use crate::ranking::{compare_rows, SortKey};
use crate::spec::OperatorSpec;
use crate::window::millis_of;

/// The state section of the waiting rows.
const ROWS: &str = "sort-rows";
/// The state section of the last time emitted.
const LAST_TIME: &str = "sort-last-time";

/// Everything a [`TemporalSortOperator`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct TemporalSortSpec {
    /// The time attribute column (the first ORDER BY key, ascending).
    pub time_col: usize,
    /// Whether it is a rowtime (else a processing time).
    pub rowtime: bool,
    /// The ORDER BY keys after the time attribute.
    pub order: Vec<SortKey>,
    /// The number of columns.
    pub arity: usize,
}

impl OperatorSpec for TemporalSortSpec {
    type Operator = TemporalSortOperator;

    fn build(&self, _subtask: &SubtaskInfo) -> TemporalSortOperator {
        TemporalSortOperator { spec: self.clone(), waiting: BTreeMap::new(), last_time: NO_WATERMARK }
    }
}

/// Temporal sort; see the module documentation.
#[derive(Debug)]
pub struct TemporalSortOperator {
    spec: TemporalSortSpec,
    /// Rows by rowtime (or by the processing time they came at).
    waiting: BTreeMap<i64, Vec<Box<[Value]>>>,
    /// The last time whose rows went out (Flink's `lastTriggeringTs`).
    last_time: i64,
}

impl TemporalSortOperator {
    /// Emits the rows of every time up to `until`, in order.
    fn emit_until(&mut self, until: i64, out: &mut Output) {
        let mut emitted = Chunk::with_capacity(self.spec.arity, 0);
        while let Some(entry) = self.waiting.first_entry().filter(|e| *e.key() <= until) {
            let (time, mut rows) = entry.remove_entry();
            // A stable sort: rows of equal keys keep their arrival order.
            rows.sort_by(|a, b| compare_rows(&self.spec.order, a, b));
            rows.iter().for_each(|row| emitted.push(RowKind::Insert, row));
            self.last_time = time;
        }
        out.collect(emitted);
    }
}

impl Operator for TemporalSortOperator {
    fn name(&self) -> &str {
        "TemporalSort"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let now = ctx.processing_time();
        let mut late = 0;
        for (kind, row) in chunk.rows() {
            if kind != RowKind::Insert {
                return Err(Error::execution(format!(
                    "TemporalSort doesn't support consuming update and delete changes, but received a '{kind}' row."
                )));
            }
            // On processing time no row is late: one that comes in the millisecond whose rows
            // a checkpoint's barrier just sent on goes out at the next tick, after them.
            let time = if self.spec.rowtime { millis_of(&row[self.spec.time_col]) } else { Some(now) };
            match time {
                Some(time) if time > self.last_time || !self.spec.rowtime => {
                    self.waiting.entry(time).or_default().push(row.into());
                }
                _ => late += 1,
            }
        }
        ctx.record_late_dropped(late);
        if !self.spec.rowtime && !self.waiting.is_empty() {
            ctx.register_processing_time_timer(now + 1, Vec::new());
        }
        let _ = out;
        Ok(())
    }

    fn process_watermark(&mut self, watermark: i64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        if self.spec.rowtime {
            self.emit_until(watermark, out);
        }
        out.emit_watermark(watermark);
        Ok(())
    }

    /// Processing time moved on: the rows that came before it go out.
    fn on_timer(&mut self, timer: Timer, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        if !self.spec.rowtime {
            self.emit_until(timer.time - 1, out);
        }
        Ok(())
    }

    fn end_of_input(&mut self, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        if !self.spec.rowtime {
            self.emit_until(i64::MAX, out);
        }
        Ok(())
    }

    /// On processing time the rows held go out before a checkpoint's barrier (in the order they
    /// would have gone at the next tick): a checkpoint holds none, so a restored job may select
    /// other columns.
    fn prepare_snapshot_pre_barrier(&mut self, _: u64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        if !self.spec.rowtime {
            self.emit_until(i64::MAX, out);
        }
        Ok(())
    }

    fn snapshot_state(&mut self, _: u64, _ctx: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        let rows = state.section(ROWS);
        rows.u32(self.waiting.values().map(Vec::len).sum::<usize>() as u32);
        for (time, list) in &self.waiting {
            for row in list {
                rows.i64(*time);
                rows.values(row);
            }
        }
        state.section(LAST_TIME).i64(self.last_time);
        Ok(())
    }

    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        let malformed = |e| Error::Restore(format!("the rows of TemporalSort are malformed: {e}"));
        for state in owned_parts(states, &ctx.subtask().clone()) {
            if let Some(mut input) = state.section(ROWS) {
                for _ in 0..input.u32().map_err(malformed)? {
                    let time = input.i64().map_err(malformed)?;
                    self.waiting.entry(time).or_default().push(input.values().map_err(malformed)?);
                }
            }
            if let Some(mut input) = state.section(LAST_TIME) {
                self.last_time = self.last_time.max(input.i64().map_err(malformed)?);
            }
        }
        if !self.spec.rowtime && !self.waiting.is_empty() {
            ctx.register_processing_time_timer(ctx.processing_time() + 1, Vec::new());
        }
        Ok(())
    }
}

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for TemporalSortSpec {
    /// The rows waiting for the watermark, by time; the last time emitted.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{row_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        let mut value = vec!["BIGINT (time)".to_string()];
        value.extend(row_types(input));
        StateSignature::new("TemporalSort", STATE_VERSION).state(ROWS, StateKind::Raw, Vec::new(), value).state(
            LAST_TIME,
            StateKind::Raw,
            Vec::new(),
            vec!["BIGINT".to_string()],
        )
    }
}

#[cfg(test)]
#[path = "temporal_sort_tests.rs"]
mod tests;
