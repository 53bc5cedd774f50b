//! Writing into a managed table: rows merge into the stored rows by the table's merge engine.
//!
//! A sink over bounded input (`INSERT … VALUES`, a bounded query) writes everything in one
//! atomic, durable batch at the end of its input, so the statement is applied whole or not at
//! all, and is durable before the script's next statement starts. Over unbounded input the
//! sink writes whatever has arrived as one batch, and while that batch commits, gathers the
//! next (group commit: batches grow when commits are slow).
//!
//! In a job that checkpoints, the sink commits on checkpoints instead, exactly once: a
//! checkpoint's barrier stages the rows that came before it, and the checkpoint completing
//! commits them (the end of input stages the rest for the job's final checkpoint); see
//! [`super::staged`] for how a restored sink tells which staged batches were committed.
//!
//! Commits (a synced transaction) run on a thread of their own, never on the subtask's worker
//! thread; the sink is busy while one is in flight, and takes no input while it also holds
//! [`MAX_PENDING_ROWS`] rows (with checkpoints it takes input on: the next barrier must come
//! through).

use std::sync::Arc;

use futures::channel::oneshot;
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::operator::owned_parts;
use weir_runtime::{AsyncState, Chunk, Error as RuntimeError, Operator, OperatorContext, Output, RowKind};
use weir_store::codec::EncodedRows;

use super::staged::{self, Staged, StagedBatches};
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
    /// With checkpoints: the rows closed by barriers, waiting for their checkpoints.
    staged: StagedBatches,
    /// With checkpoints: the newest completed checkpoint whose batches are still to commit.
    due: Option<u64>,
    /// Whether the job checkpoints ([`OperatorContext::checkpointing`]), known once open.
    checkpointing: bool,
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
            staged: StagedBatches::default(),
            due: None,
            checkpointing: false,
        }
    }

    /// The sink, dropping `-D` rows when `ignore` is set (`'sink.ignore-delete'`).
    pub fn ignoring_deletes(mut self, ignore: bool) -> Self {
        self.ignore_delete = ignore;
        self
    }

    /// Hands the buffered rows to a commit of their own, unless one is in flight; with
    /// checkpoints, the staged batches of the completed checkpoint instead.
    fn commit(&mut self, ctx: &mut OperatorContext) -> weir_runtime::Result<()> {
        if !self.write.is_idle() {
            return Ok(());
        }
        let (table, targets) = (Arc::clone(&self.table), self.targets.clone());
        let write: Box<dyn FnOnce() -> crate::error::Result<usize> + Send> = if self.checkpointing {
            let Some(checkpoint) = self.due.take() else { return Ok(()) };
            let batches: Vec<Staged> = self.staged.take_due(checkpoint);
            if batches.is_empty() {
                return Ok(());
            }
            let run = self.staged.run();
            Box::new(move || staged::commit(&table, run, &batches, targets.as_deref()))
        } else {
            if self.buffer.is_empty() {
                return Ok(());
            }
            let rows = std::mem::replace(&mut self.buffer, self.table.buffer());
            Box::new(move || table.write(&rows, targets.as_deref()))
        };
        let (done, commit) = oneshot::channel();
        let table = self.table.descriptor().name.clone();
        std::thread::Builder::new()
            .name(format!("commit {table}"))
            .spawn(move || {
                // The write owns the table (and its store): it is let go before the sink hears
                // of the result, so that a session ending right after the job holds no store.
                let result = write();
                tracing::debug!(%table, changes = result.as_ref().ok(), "committed a batch");
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

    /// After a commit: the next one, over unbounded input or once the input has ended (with
    /// checkpoints, when a checkpoint completed meanwhile).
    fn committed(&mut self, ctx: &mut OperatorContext) -> weir_runtime::Result<()> {
        if !self.bounded || self.ending || self.checkpointing {
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
        if self.bounded || self.checkpointing {
            Ok(())
        } else {
            self.commit(ctx)
        }
    }

    fn end_of_input(&mut self, ctx: &mut OperatorContext, _out: &mut Output) -> weir_runtime::Result<()> {
        self.ending = true;
        if self.checkpointing {
            // Due at the final checkpoint (or the next that completes).
            let rows = std::mem::replace(&mut self.buffer, self.table.buffer());
            self.staged.stage(u64::MAX, rows);
            return Ok(());
        }
        self.commit(ctx)
    }

    fn async_state(&self) -> AsyncState {
        self.write.async_state(!self.checkpointing && !self.bounded && self.buffer.len() >= MAX_PENDING_ROWS)
    }

    fn open(&mut self, ctx: &mut OperatorContext) -> weir_runtime::Result<()> {
        self.checkpointing = ctx.checkpointing();
        Ok(())
    }

    /// The rows before the barrier are staged for `checkpoint`; the state holds every batch
    /// not committed yet (no commit is in flight at a barrier: the runtime waits for it).
    fn snapshot_state(
        &mut self,
        checkpoint: u64,
        _: &mut OperatorContext,
        state: &mut StateWriter,
    ) -> weir_runtime::Result<()> {
        if self.checkpointing && !self.ending {
            let rows = std::mem::replace(&mut self.buffer, self.table.buffer());
            self.staged.stage(checkpoint, rows);
        }
        self.staged.snapshot(state);
        Ok(())
    }

    /// What it has still to commit outlives its input.
    fn keeps_state_after_end(&self) -> bool {
        true
    }

    /// Commits the batches staged up to `checkpoint` (all of them after the end of input).
    fn notify_checkpoint_complete(
        &mut self,
        checkpoint: u64,
        ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> weir_runtime::Result<()> {
        let checkpoint = if self.ending { u64::MAX } else { checkpoint };
        self.due = Some(self.due.map_or(checkpoint, |d| d.max(checkpoint)));
        self.commit(ctx)
    }

    /// Commits what the checkpoint staged and the failed run had not committed.
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> weir_runtime::Result<()> {
        for state in owned_parts(states, ctx.subtask()) {
            staged::restore(&self.table, &self.name, state, self.targets.as_deref())?;
        }
        Ok(())
    }

    fn poll_async(&mut self, ctx: &mut OperatorContext, _out: &mut Output) -> weir_runtime::Result<()> {
        self.poll_commit(ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::TableDescriptor;
    use weir_runtime::harness::OperatorHarness;
    use weir_runtime::parse::parse_schema;
    use weir_runtime::Value;

    /// A table summing `n` per key `k`: a batch applied twice shows in the sums.
    fn table(store: &Arc<crate::managed::store::TableStore>) -> Arc<ManagedTable> {
        let schema = parse_schema(&[("k", "INT"), ("n", "BIGINT")]).unwrap();
        let options = [("table.merge-engine", "aggregation"), ("fields.n.agg", "sum")];
        let descriptor = TableDescriptor::new("sums", schema, &options).with_primary_key(&["k"]);
        store.create(&descriptor, "sums").unwrap();
        store.table(&descriptor).unwrap()
    }

    fn sink(table: &Arc<ManagedTable>) -> OperatorHarness {
        let sink = ManagedSink::new("Sink: sums".into(), Arc::clone(table), None, false);
        OperatorHarness::checkpointing(Box::new(sink), 0, 1)
    }

    fn sums(table: &ManagedTable) -> Vec<Vec<Value>> {
        table.scan().unwrap()
    }

    fn add(h: &mut OperatorHarness, k: i32, n: i64) {
        h.push(&format!("op | k INT | n BIGINT\n+I | {k} | {n}\n")).unwrap();
    }

    async fn settle(h: &mut OperatorHarness) {
        h.settle().await.unwrap();
    }

    /// Rows reach the table only when their checkpoint completes; a sink restored from a
    /// checkpoint whose commit was interrupted commits it, one restored after the commit
    /// does not apply it again, and nothing written after the checkpoint is kept.
    #[tokio::test]
    async fn batches_commit_with_their_checkpoint_exactly_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::managed::store::TableStore::in_memory(dir.path()).unwrap();
        let table = table(&store);
        let row = |k: i32, n: i64| vec![Value::Int(k), Value::BigInt(n)];

        let mut h = sink(&table);
        add(&mut h, 1, 10);
        let first = h.snapshot(1).unwrap();
        add(&mut h, 1, 5);
        assert!(sums(&table).is_empty(), "nothing before the checkpoint completes");
        h.notify_checkpoint_complete(1).unwrap();
        settle(&mut h).await;
        assert_eq!(sums(&table), vec![row(1, 10)]);
        let second = h.snapshot(2).unwrap();
        add(&mut h, 2, 7);
        drop(h); // killed before checkpoint 2's commit

        // Restored from checkpoint 1, committed before the failure: nothing applies again.
        sink(&table).restore(vec![first]).unwrap();
        assert_eq!(sums(&table), vec![row(1, 10)]);
        // Restored from checkpoint 2: its batch (the 5) commits, once however often.
        sink(&table).restore(vec![second.clone()]).unwrap();
        sink(&table).restore(vec![second.clone()]).unwrap();
        assert_eq!(sums(&table), vec![row(1, 15)]);

        // The restored run goes on and ends: its last rows wait for the final checkpoint.
        let mut h = sink(&table);
        h.restore(vec![second]).unwrap();
        add(&mut h, 2, 7);
        h.end_input().unwrap();
        let final_state = h.snapshot(0).unwrap();
        assert_eq!(sums(&table), vec![row(1, 15)]);
        h.notify_checkpoint_complete(3).unwrap();
        settle(&mut h).await;
        assert_eq!(sums(&table), vec![row(1, 15), row(2, 7)]);
        sink(&table).restore(vec![final_state]).unwrap();
        assert_eq!(sums(&table), vec![row(1, 15), row(2, 7)]);
    }
}
