//! Union: merges any number of inputs into one stream.

use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result};

/// Passes rows from every input through unchanged. Watermarks are aligned by the runtime
/// (the minimum over all inputs), as Flink's union does.
#[derive(Debug, Default)]
pub struct UnionOperator;

impl Operator for UnionOperator {
    fn name(&self) -> &str {
        "Union"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        out.collect(chunk);
        Ok(())
    }
}
