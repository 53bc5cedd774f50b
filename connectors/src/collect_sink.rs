//! A sink that keeps everything it receives in memory, for tests and small jobs.

use std::sync::Arc;

use parking_lot::Mutex;
use weir_runtime::columnar::RecordBatch;
use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result, Row, RowKind, SubtaskInfo};

#[derive(Debug, Default)]
struct Collected {
    rows: Vec<(usize, Row)>,
    watermarks: Vec<(usize, i64)>,
    /// Per watermark: the subtask, the watermark and how many rows that subtask had received.
    watermark_positions: Vec<(usize, i64, usize)>,
    rows_per_subtask: Vec<usize>,
    ended: usize,
}

/// Shared view of what the subtasks of a [`CollectSink`] received; clone it freely.
#[derive(Debug, Clone, Default)]
pub struct CollectHandle {
    inner: Arc<Mutex<Collected>>,
}

impl CollectHandle {
    /// A new, empty collection.
    pub fn new() -> Self {
        CollectHandle::default()
    }

    /// The sink instance for one subtask.
    pub fn sink(&self, info: &SubtaskInfo) -> CollectSink {
        CollectSink { handle: self.clone(), subtask: info.index }
    }

    /// Every row received, in arrival order per subtask (subtasks interleave).
    pub fn rows(&self) -> Vec<Row> {
        self.inner.lock().rows.iter().map(|(_, r)| r.clone()).collect()
    }

    /// Every row received with the 0-based subtask that received it.
    pub fn rows_by_subtask(&self) -> Vec<(usize, Row)> {
        self.inner.lock().rows.clone()
    }

    /// Every row as Flink prints it (`+I[1, apple]`).
    pub fn lines(&self) -> Vec<String> {
        self.rows().iter().map(Row::to_string).collect()
    }

    /// Every watermark received, with the subtask that received it, in arrival order.
    pub fn watermarks(&self) -> Vec<(usize, i64)> {
        self.inner.lock().watermarks.clone()
    }

    /// Every watermark received as `(subtask, watermark, rows)`: `rows` is how many rows that
    /// subtask had received when the watermark came, so tests can check that no watermark
    /// overtook a row.
    pub fn watermark_positions(&self) -> Vec<(usize, i64, usize)> {
        self.inner.lock().watermark_positions.clone()
    }

    /// How many sink subtasks saw the end of their input.
    pub fn ended_subtasks(&self) -> usize {
        self.inner.lock().ended
    }
}

/// The operator that feeds a [`CollectHandle`].
#[derive(Debug)]
pub struct CollectSink {
    handle: CollectHandle,
    subtask: usize,
}

impl Operator for CollectSink {
    fn name(&self) -> &str {
        "Sink: Collect"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> Result<()> {
        let mut inner = self.handle.inner.lock();
        inner.rows.extend(chunk.to_rows().into_iter().map(|r| (self.subtask, r)));
        if inner.rows_per_subtask.len() <= self.subtask {
            inner.rows_per_subtask.resize(self.subtask + 1, 0);
        }
        inner.rows_per_subtask[self.subtask] += chunk.len();
        Ok(())
    }

    fn process_watermark(&mut self, watermark: i64, _ctx: &mut OperatorContext, _out: &mut Output) -> Result<()> {
        let mut inner = self.handle.inner.lock();
        inner.watermarks.push((self.subtask, watermark));
        let rows = inner.rows_per_subtask.get(self.subtask).copied().unwrap_or(0);
        inner.watermark_positions.push((self.subtask, watermark, rows));
        Ok(())
    }

    fn end_of_input(&mut self, _ctx: &mut OperatorContext, _out: &mut Output) -> Result<()> {
        self.handle.inner.lock().ended += 1;
        Ok(())
    }
}

/// A batch of rows a [`BatchCollectHandle`] received: the row kinds beside the columns.
#[derive(Debug, Clone)]
pub struct ChangelogBatch {
    /// The kind of each row (`+I`, `-U`, `+U`, `-D`).
    pub kinds: Vec<RowKind>,
    /// The rows' columns, named as the stream's schema names them.
    pub batch: RecordBatch,
}

/// Shared view of the chunks a [`BatchCollectSink`] received, as Arrow record batches; clone it
/// freely. Unlike [`CollectHandle`] it keeps the arrays as they came (no row is built).
#[derive(Debug, Clone, Default)]
pub struct BatchCollectHandle {
    chunks: Arc<Mutex<Vec<Chunk>>>,
    names: Arc<[String]>,
}

impl BatchCollectHandle {
    /// A new, empty collection of batches whose columns are named `names`.
    pub fn new(names: Vec<String>) -> Self {
        BatchCollectHandle { chunks: Arc::default(), names: names.into() }
    }

    /// The sink instance for one subtask.
    pub fn sink(&self) -> BatchCollectSink {
        BatchCollectSink { handle: self.clone() }
    }

    /// Every batch received, in arrival order (subtasks interleave).
    ///
    /// # Errors
    /// A chunk whose columns do not match the names (a stream of another arity).
    pub fn batches(&self) -> std::result::Result<Vec<ChangelogBatch>, arrow_schema::ArrowError> {
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        self.chunks
            .lock()
            .iter()
            .map(|c| Ok(ChangelogBatch { kinds: c.kinds().to_vec(), batch: c.to_record_batch(&names)? }))
            .collect()
    }

    /// How many rows arrived.
    pub fn row_count(&self) -> usize {
        self.chunks.lock().iter().map(Chunk::len).sum()
    }
}

/// The operator that feeds a [`BatchCollectHandle`].
#[derive(Debug)]
pub struct BatchCollectSink {
    handle: BatchCollectHandle,
}

impl Operator for BatchCollectSink {
    fn name(&self) -> &str {
        "Sink: CollectBatches"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> Result<()> {
        self.handle.chunks.lock().push(chunk);
        Ok(())
    }
}
