//! A sink that hands every row, as it arrives, to a function: how a SQL session prints query
//! results while the query runs. When the function blocks (a terminal or pipe that is not read),
//! the sink does too, and backpressure holds the whole job: memory stays bounded by its state.

use std::sync::Arc;

use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result, Row};

/// What a [`RowSink`] calls with the rows of each chunk; an error fails the job.
pub type RowConsumer = Arc<dyn Fn(&[Row]) -> Result<()> + Send + Sync>;

/// Calls a [`RowConsumer`] for the rows of every chunk, in arrival order.
pub struct RowSink {
    consumer: RowConsumer,
}

impl RowSink {
    /// A sink calling `consumer` with each chunk's rows.
    pub fn new(consumer: RowConsumer) -> Self {
        RowSink { consumer }
    }
}

impl Operator for RowSink {
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
        (self.consumer)(&chunk.to_rows())
    }
}
