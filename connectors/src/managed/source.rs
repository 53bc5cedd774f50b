//! Reading a managed table: its current rows (all, or the one row of a key), then, when the
//! scan follows the table, every change committed after them. Planning reads nothing: a point
//! query or a batch scan reads when its subtask opens, a following scan subscribes when its job
//! is built.

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Duration;

use weir_runtime::{Chunk, OperatorContext, Output, Result, RowKind, Source, SourceStatus, Value};

use std::sync::Arc;

use super::store::{Changes, ManagedTable};

/// How long a following scan waits before it looks for new changes again.
const FOLLOW_INTERVAL: Duration = Duration::from_millis(2);

/// What a scan reads.
pub enum ScanRead {
    /// The one row of this primary key (a point query), read when the scan opens; then the
    /// scan ends.
    Key(Arc<ManagedTable>, Vec<Value>),
    /// The rows the table holds when the scan opens; then the scan ends (batch mode).
    Snapshot(Arc<ManagedTable>),
    /// Rows taken when the job was built, then every change committed after them: a following
    /// scan subscribes when its job is built, so that it misses no commit of a statement that
    /// runs after the job started.
    Following(Vec<Vec<Value>>, Receiver<Changes>),
}

/// One scan of a managed table (it runs at parallelism 1).
pub struct ManagedScan {
    name: String,
    arity: usize,
    /// What to read, until the scan opens.
    read: Option<ScanRead>,
    /// Rows still to emit, as `+I`.
    snapshot: VecDeque<Vec<Value>>,
    /// The changes after the snapshot, when the scan follows the table.
    changes: Option<Receiver<Changes>>,
    /// Changes received and not yet emitted.
    pending: VecDeque<(RowKind, Vec<Value>)>,
}

impl ManagedScan {
    /// A scan named `name` of rows with `arity` columns that reads `read` (nothing: `None`).
    pub fn new(name: impl Into<String>, arity: usize, read: Option<ScanRead>) -> Self {
        ManagedScan {
            name: name.into(),
            arity,
            read,
            snapshot: VecDeque::new(),
            changes: None,
            pending: VecDeque::new(),
        }
    }
}

impl Source for ManagedScan {
    fn name(&self) -> &str {
        &self.name
    }

    fn open(&mut self, _ctx: &mut OperatorContext) -> Result<()> {
        let rows = match self.read.take() {
            None => return Ok(()),
            Some(ScanRead::Key(table, key)) => table.get(&key)?.into_iter().collect(),
            Some(ScanRead::Snapshot(table)) => table.scan()?,
            Some(ScanRead::Following(rows, changes)) => {
                self.changes = Some(changes);
                rows
            }
        };
        tracing::debug!(table = %self.name, rows = rows.len(), follows = self.changes.is_some(), "scanning a managed table");
        self.snapshot = rows.into();
        Ok(())
    }

    fn poll_next(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<SourceStatus> {
        let size = ctx.chunk_size();
        if !self.snapshot.is_empty() {
            let mut chunk = Chunk::with_capacity(self.arity, size.min(self.snapshot.len()));
            while chunk.len() < size {
                let Some(row) = self.snapshot.pop_front() else { break };
                chunk.push(RowKind::Insert, &row);
            }
            out.collect(chunk);
            return Ok(SourceStatus::Ready);
        }
        let Some(changes) = &self.changes else { return Ok(SourceStatus::Finished) };
        while self.pending.len() < size {
            match changes.try_recv() {
                Ok(batch) => self.pending.extend(batch.iter().cloned()),
                Err(TryRecvError::Empty) => break,
                // The table was dropped or its definition replaced: nothing more will come.
                Err(TryRecvError::Disconnected) if self.pending.is_empty() => return Ok(SourceStatus::Finished),
                Err(TryRecvError::Disconnected) => break,
            }
        }
        if self.pending.is_empty() {
            return Ok(SourceStatus::Wait(FOLLOW_INTERVAL));
        }
        let mut chunk = Chunk::with_capacity(self.arity, size.min(self.pending.len()));
        while chunk.len() < size {
            let Some((kind, row)) = self.pending.pop_front() else { break };
            chunk.push(kind, &row);
        }
        out.collect(chunk);
        Ok(SourceStatus::Ready)
    }
}
