//! A sink that drops every row and only counts them: the cheapest possible end of a pipeline.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result};

/// Discards rows, adding their number to a shared counter.
#[derive(Debug, Clone, Default)]
pub struct DiscardSink {
    rows: Arc<AtomicU64>,
}

impl DiscardSink {
    /// A sink counting into `rows`.
    pub fn new(rows: Arc<AtomicU64>) -> Self {
        DiscardSink { rows }
    }
}

impl Operator for DiscardSink {
    fn name(&self) -> &str {
        "Sink: Discard"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> Result<()> {
        self.rows.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn process_watermark(&mut self, _watermark: i64, _ctx: &mut OperatorContext, _out: &mut Output) -> Result<()> {
        Ok(())
    }
}
