//! The `datagen` source of one subtask: its share of the rows, at its share of the rate.

use std::sync::Arc;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::SeedableRng;
use weir_runtime::{Chunk, DataType, OperatorContext, Output, Result, RowKind, Source, SourceStatus, SubtaskInfo};

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
        let remaining = self.end.map_or(u64::MAX, |end| end - self.next);
        if remaining == 0 {
            return Ok(SourceStatus::Finished);
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
        Ok(if self.end.is_some_and(|end| self.next >= end) { SourceStatus::Finished } else { SourceStatus::Ready })
    }
}
