//! A source of Arrow record batches, read by one subtask: the library's way in for data that
//! is already columnar.

use std::sync::Arc;

use weir_runtime::columnar::{arrow_type, RecordBatch};
use weir_runtime::{Chunk, OperatorContext, Output, Result, RowKind, Schema, Source, SourceStatus};

use crate::error::Error;

/// Emits each batch's rows as `+I`, in chunks of at most `execution.chunk-size` rows (slices of
/// the batch: the arrays are not copied), then finishes.
#[derive(Debug, Clone)]
pub struct BatchSource {
    name: String,
    batches: Arc<[RecordBatch]>,
    batch: usize,
    row: usize,
}

impl BatchSource {
    /// A source named `name` of `batches`, whose columns must have the Arrow types of
    /// `schema`'s fields (see `weir_runtime::columnar`).
    ///
    /// # Errors
    /// A batch with another number of columns, or a column of another type, named.
    pub fn new(name: impl Into<String>, schema: &Schema, batches: Vec<RecordBatch>) -> crate::Result<Self> {
        let name = name.into();
        for (b, batch) in batches.iter().enumerate() {
            if batch.num_columns() != schema.arity() {
                return Err(Error::Validation(format!(
                    "Record batch {b} of source '{name}' has {} columns, the schema declares {}.",
                    batch.num_columns(),
                    schema.arity()
                )));
            }
            for (field, column) in schema.fields.iter().zip(batch.columns()) {
                let expected = arrow_type(&field.data_type);
                if column.data_type() != &expected {
                    return Err(Error::Validation(format!(
                        "Column '{}' of record batch {b} of source '{name}' is {}; its type {} is held as {expected}.",
                        field.name,
                        column.data_type(),
                        field.data_type
                    )));
                }
            }
        }
        Ok(BatchSource { name, batches: batches.into(), batch: 0, row: 0 })
    }
}

impl Source for BatchSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn poll_next(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<SourceStatus> {
        let Some(batch) = self.batches.get(self.batch) else { return Ok(SourceStatus::Finished) };
        let rows = (batch.num_rows() - self.row).min(ctx.chunk_size().max(1));
        out.collect(Chunk::from_record_batch(&batch.slice(self.row, rows), RowKind::Insert));
        self.row += rows;
        if self.row >= batch.num_rows() {
            self.batch += 1;
            self.row = 0;
        }
        Ok(if self.batch >= self.batches.len() { SourceStatus::Finished } else { SourceStatus::Ready })
    }
}
