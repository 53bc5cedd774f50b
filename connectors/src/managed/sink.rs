//! Writing into a managed table: rows merge into the stored rows by the table's merge engine.
//!
//! A sink over bounded input (`INSERT … VALUES`, a bounded query) writes everything in one
//! atomic, durable batch at the end of its input, so the statement is applied whole or not at
//! all, and is durable before the script's next statement starts. Over unbounded input the
//! sink writes whatever has arrived as one batch, and while that batch commits, gathers the
//! next (group commit: batches grow when commits are slow).
//!
//! Commits (a synced transaction) run on a thread of their own, never on the subtask's worker
//! thread; the sink is busy while one is in flight, and takes no input while it also holds
//! [`MAX_PENDING_ROWS`] rows.

use std::sync::Arc;

use futures::channel::oneshot;
use weir_runtime::{AsyncState, Chunk, Error as RuntimeError, Operator, OperatorContext, Output, RowKind};
use weir_store::codec::EncodedRows;

use super::store::ManagedTable;
use crate::write_in_flight::WriteInFlight;

/// Rows an unbounded sink gathers while a commit is in flight before it stops taking input.
pub const MAX_PENDING_ROWS: usize = 64 * 1024;

/// One sink subtask (managed tables are written at parallelism 1).
pub struct ManagedSink {
    name: String,
    table: Arc<ManagedTable>,
    /// The columns of a partial write (`INSERT INTO t (id, a) …`).
    targets: Option<Arc<[usize]>>,
    /// Whether rows wait for the end of input.
    bounded: bool,
    /// Rows not handed to a commit yet, encoded (a few dozen bytes a row).
    buffer: EncodedRows,
    /// The commit in flight.
    write: WriteInFlight,
    ending: bool,
    /// `'sink.ignore-delete'`: `-D` rows are dropped before they reach the table.
    ignore_delete: bool,
}

impl ManagedSink {
    /// A sink named `name` writing into `table`; `bounded`: one batch at the end of input.
    pub fn new(name: String, table: Arc<ManagedTable>, targets: Option<Arc<[usize]>>, bounded: bool) -> Self {
        let buffer = table.buffer();
        ManagedSink {
            name,
            table,
            targets,
            bounded,
            buffer,
            write: WriteInFlight::default(),
            ending: false,
            ignore_delete: false,
        }
    }

    /// The sink, dropping `-D` rows when `ignore` is set (`'sink.ignore-delete'`).
    pub fn ignoring_deletes(mut self, ignore: bool) -> Self {
        self.ignore_delete = ignore;
        self
    }

    /// Hands the buffered rows to a commit of their own, unless one is in flight.
    fn commit(&mut self, ctx: &mut OperatorContext) -> weir_runtime::Result<()> {
        if !self.write.is_idle() || self.buffer.is_empty() {
            return Ok(());
        }
        let rows = std::mem::replace(&mut self.buffer, self.table.buffer());
        let (table, targets) = (Arc::clone(&self.table), self.targets.clone());
        let (done, commit) = oneshot::channel();
        std::thread::Builder::new()
            .name(format!("commit {}", table.descriptor().name))
            .spawn(move || {
                let result = table.write(&rows, targets.as_deref());
                tracing::debug!(table = %table.descriptor().name, rows = rows.len(), ok = result.is_ok(), "committed a batch");
                // The table (and its store) is let go before the sink hears of the result, so
                // that a session ending right after the job holds no store any more.
                drop((table, rows));
                let _ = done.send(result);
            })
            .map_err(|e| RuntimeError::execution(format!("Cannot start a commit into '{}': {e}", self.name)))?;
        let name = self.name.clone();
        let committed = async move {
            match commit.await {
                Ok(result) => result.map(|_| ()).map_err(|e| e.to_string()),
                Err(_) => Err(format!("The commit into '{name}' stopped without a result")),
            }
        };
        if self.write.start(committed, ctx).map_err(RuntimeError::execution)? {
            self.committed(ctx)?;
        }
        Ok(())
    }

    /// Polls the commit in flight; when it is done, starts the next if rows are waiting.
    fn poll_commit(&mut self, ctx: &mut OperatorContext) -> weir_runtime::Result<()> {
        if self.write.poll(ctx).map_err(RuntimeError::execution)? {
            self.committed(ctx)?;
        }
        Ok(())
    }

    /// After a commit: the next one, over unbounded input or once the input has ended.
    fn committed(&mut self, ctx: &mut OperatorContext) -> weir_runtime::Result<()> {
        if !self.bounded || self.ending {
            self.commit(ctx)?;
        }
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
        ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> weir_runtime::Result<()> {
        // Keyed writes: `-U` rows carry nothing the following `+U` does not replace.
        let ignore_delete = self.ignore_delete;
        let kept = |kind: &RowKind| *kind != RowKind::UpdateBefore && !(ignore_delete && *kind == RowKind::Delete);
        for (kind, row) in chunk.rows().filter(|(kind, _)| kept(kind)) {
            self.buffer.push(kind, row).map_err(|e| {
                RuntimeError::execution(format!("Cannot write into table '{}': {e}", self.table.descriptor().name))
            })?;
        }
        if self.bounded {
            Ok(())
        } else {
            self.commit(ctx)
        }
    }

    fn end_of_input(&mut self, ctx: &mut OperatorContext, _out: &mut Output) -> weir_runtime::Result<()> {
        self.ending = true;
        self.commit(ctx)
    }

    fn async_state(&self) -> AsyncState {
        self.write.async_state(!self.bounded && self.buffer.len() >= MAX_PENDING_ROWS)
    }

    fn poll_async(&mut self, ctx: &mut OperatorContext, _out: &mut Output) -> weir_runtime::Result<()> {
        self.poll_commit(ctx)
    }
}
