//! Writing into a managed table: rows merge into the stored rows by the table's merge engine.
//!
//! A sink over bounded input (`INSERT … VALUES`, a bounded query) writes everything in one
//! atomic, durable batch at the end of its input, so the statement is applied whole or not at
//! all, and is durable before the script's next statement starts. Over unbounded input each
//! chunk is one batch, merged as it arrives.

use std::sync::Arc;

use weir_runtime::{Chunk, Error as RuntimeError, Operator, OperatorContext, Output, RowKind};
use weir_store::codec::EncodedRows;

use super::store::ManagedTable;

/// One sink subtask (managed tables are written at parallelism 1).
pub struct ManagedSink {
    name: String,
    table: Arc<ManagedTable>,
    /// The columns of a partial write (`INSERT INTO t (id, a) …`).
    targets: Option<Arc<[usize]>>,
    /// Whether rows wait for the end of input.
    bounded: bool,
    /// Rows not written yet, encoded (a few dozen bytes a row).
    buffer: EncodedRows,
}

impl ManagedSink {
    /// A sink named `name` writing into `table`; `bounded`: one batch at the end of input.
    pub fn new(name: String, table: Arc<ManagedTable>, targets: Option<Arc<[usize]>>, bounded: bool) -> Self {
        let buffer = table.buffer();
        ManagedSink { name, table, targets, bounded, buffer }
    }

    fn commit(&mut self) -> weir_runtime::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let changes = self
            .table
            .write(&self.buffer, self.targets.as_deref())
            .map_err(|e| RuntimeError::execution(e.to_string()))?;
        tracing::debug!(table = %self.table.descriptor().name, rows = self.buffer.len(), changes, "merged a batch");
        self.buffer.clear();
        Ok(())
    }
}

impl Operator for ManagedSink {
    fn name(&self) -> &str {
        &self.name
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> weir_runtime::Result<()> {
        // Keyed writes: `-U` rows carry nothing the following `+U` does not replace.
        for (kind, row) in chunk.rows().filter(|(kind, _)| *kind != RowKind::UpdateBefore) {
            self.buffer.push(kind, row).map_err(|e| {
                RuntimeError::execution(format!("Cannot write into table '{}': {e}", self.table.descriptor().name))
            })?;
        }
        if self.bounded {
            Ok(())
        } else {
            self.commit()
        }
    }

    fn end_of_input(&mut self, _ctx: &mut OperatorContext, _out: &mut Output) -> weir_runtime::Result<()> {
        self.commit()
    }
}
