//! Reading a managed table: its current rows (all, or the one row of a key), then, when the
//! scan follows the table, every change committed after them.

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Duration;

use weir_runtime::{Chunk, OperatorContext, Output, Result, RowKind, Source, SourceStatus, Value};

use super::store::Changes;

/// How long a following scan waits before it looks for new changes again.
const FOLLOW_INTERVAL: Duration = Duration::from_millis(2);

/// One scan of a managed table (it runs at parallelism 1).
pub struct ManagedScan {
    name: String,
    arity: usize,
    /// Rows still to emit, as `+I`.
    snapshot: VecDeque<Vec<Value>>,
    /// The changes after the snapshot, when the scan follows the table.
    changes: Option<Receiver<Changes>>,
    /// Changes received and not yet emitted.
    pending: VecDeque<(RowKind, Vec<Value>)>,
}

impl ManagedScan {
    /// A scan named `name` of rows with `arity` columns: `snapshot`, then what `changes` brings
    /// (without `changes`, the scan ends after the snapshot).
    pub fn new(
        name: impl Into<String>,
        arity: usize,
        snapshot: Vec<Vec<Value>>,
        changes: Option<Receiver<Changes>>,
    ) -> Self {
        ManagedScan { name: name.into(), arity, snapshot: snapshot.into(), changes, pending: VecDeque::new() }
    }
}

impl Source for ManagedScan {
    fn name(&self) -> &str {
        &self.name
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
