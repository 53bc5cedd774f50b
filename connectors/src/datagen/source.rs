//! The `datagen` source of one subtask: its share of the rows, at its share of the rate.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::SeedableRng;
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::operator::owned_parts;
use weir_runtime::{
    Chunk, DataType, OperatorContext, Output, Result, RowKind, Source, SourceStatus, SubtaskInfo, Value,
};

use super::field::FieldGenerator;

/// Generates rows from per-field generators, limited to a rate in processing time.
///
/// Subtask i of p produces rows `[n * i / p, n * (i + 1) / p)` of a bounded table (so sequences
/// are split without overlap or gaps) at `rows-per-second / p` rows per second: the first row
/// comes at once, and t ms of processing time after the first poll it has produced at most
/// `1 + t * rate / 1000` rows.
#[derive(Debug, Clone)]
pub struct DatagenSource {
    name: String,
    fields: Arc<Vec<FieldGenerator>>,
    /// The type of each field.
    types: Arc<[DataType]>,
    total_rows: Option<u64>,
    rows_per_second: u64,
    next: u64,
    end: Option<u64>,
    rate: f64,
    started_at: Option<i64>,
    emitted: u64,
    rng: Option<SmallRng>,
    /// Ranges of row numbers taken over from other subtasks at a restore, done after this one.
    queued: VecDeque<(u64, Option<u64>)>,
}

impl DatagenSource {
    pub(crate) fn new(
        name: String,
        fields: Arc<Vec<FieldGenerator>>,
        types: Arc<[DataType]>,
        total_rows: Option<u64>,
        rows_per_second: u64,
    ) -> Self {
        DatagenSource {
            name,
            fields,
            types,
            total_rows,
            rows_per_second,
            next: 0,
            end: total_rows,
            rate: rows_per_second as f64,
            started_at: None,
            emitted: 0,
            rng: None,
            queued: VecDeque::new(),
        }
    }

    /// The instance for one subtask.
    pub fn for_subtask(&self, info: &SubtaskInfo) -> Self {
        let p = info.parallelism.max(1) as u128;
        let i = info.index as u128;
        let split = |total: u64, i: u128| (u128::from(total) * i / p) as u64;
        DatagenSource {
            next: self.total_rows.map_or(0, |n| split(n, i)),
            end: self.total_rows.map(|n| split(n, i + 1)),
            rate: self.rows_per_second as f64 / p as f64,
            rng: Some(SmallRng::from_os_rng()),
            ..self.clone()
        }
    }
}

impl Source for DatagenSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn poll_next(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<SourceStatus> {
        let now = ctx.processing_time();
        let started = *self.started_at.get_or_insert(now);
        let allowed = 1 + ((now - started).max(0) as f64 * self.rate / 1000.0) as u64;
        let mut remaining = self.end.map_or(u64::MAX, |end| end - self.next);
        while remaining == 0 {
            let Some((next, end)) = self.queued.pop_front() else { return Ok(SourceStatus::Finished) };
            (self.next, self.end) = (next, end);
            remaining = end.map_or(u64::MAX, |end| end - next);
        }
        let batch = (allowed.saturating_sub(self.emitted)).min(remaining).min(ctx.chunk_size() as u64);
        if batch == 0 {
            // The next row is due once `emitted + 1` rows are allowed.
            let due = started + (self.emitted as f64 * 1000.0 / self.rate).ceil() as i64;
            return Ok(SourceStatus::Wait(Duration::from_millis((due - now).max(1) as u64)));
        }
        let rng = self.rng.get_or_insert_with(SmallRng::from_os_rng);
        // Column at a time: each field fills its own array.
        let columns = self
            .fields
            .iter()
            .zip(self.types.iter())
            .map(|(f, ty)| f.generate_column(rng, self.next, batch as usize, now, ty))
            .collect();
        let chunk = Chunk::from_arrays(vec![RowKind::Insert; batch as usize], columns);
        self.next += batch;
        self.emitted += batch;
        out.collect(chunk);
        let done = self.end.is_some_and(|end| self.next >= end) && self.queued.is_empty();
        Ok(if done { SourceStatus::Finished } else { SourceStatus::Ready })
    }

    /// The row numbers still to generate: this subtask's range from the next row, then the
    /// ranges it took over. Random values are not replayed: a restored job draws new ones.
    fn snapshot_state(&mut self, _: u64, _: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        let ranges = state.section(RANGES);
        ranges.u32(1 + self.queued.len() as u32);
        for (next, end) in std::iter::once((self.next, self.end)).chain(self.queued.iter().copied()) {
            ranges.u64(next);
            ranges.value(&end.map_or(Value::Null, |e| Value::BigInt(e as i64)));
        }
        Ok(())
    }

    /// Goes on with the ranges of the old subtasks this one takes over (its own at the same
    /// parallelism), in order.
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        let mut ranges = VecDeque::new();
        for state in owned_parts(states, ctx.subtask()) {
            let Some(mut section) = state.section(RANGES) else { continue };
            let malformed = |e: weir_runtime::checkpoint::codec::DecodeError| {
                weir_runtime::Error::Restore(format!("the state of datagen source '{}' is malformed: {e}", self.name))
            };
            for _ in 0..section.u32().map_err(malformed)? {
                let next = section.u64().map_err(malformed)?;
                let end = section.value().map_err(malformed)?.as_i64().map(|e| e as u64);
                ranges.push_back((next, end));
            }
        }
        let Some((next, end)) = ranges.pop_front() else {
            // Nothing to take over: a bounded table has no rows left for this subtask; an
            // unbounded one goes on generating.
            if self.end.is_some() {
                (self.next, self.end) = (0, Some(0));
            }
            return Ok(());
        };
        (self.next, self.end, self.queued) = (next, end, ranges);
        Ok(())
    }
}

/// The section of a datagen source's state: the ranges of row numbers still to generate.
const RANGES: &str = "ranges";
