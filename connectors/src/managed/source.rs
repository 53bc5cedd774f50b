//! Reading a managed table: its current rows (all, or the one row of a key), then, when the
//! scan follows the table, every change committed after them. Planning reads nothing: a point
//! query or a batch scan reads when its subtask opens, a following scan subscribes when its job
//! is built.
//!
//! In a job that checkpoints, a following scan keeps the table as it has emitted it (each
//! key's last row) and checkpoints that view. Restored, it emits the difference between the
//! view and the table as it is now (`-D` for keys gone, `-U`/`+U` for rows changed, `+I` for
//! new keys), then follows the table: downstream sees a changelog whose result is the table,
//! as if the scan had never stopped (changes in between are folded into one per key, as an
//! upsert source's are). The view costs about the table's size in memory.

use std::collections::{HashMap, VecDeque};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Duration;

use weir_runtime::checkpoint::{StateReader, StateWriter};
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
    /// runs after the job started. The rows are emitted when `emit_rows` says so
    /// (`'scan.startup.mode' = 'full'`); a restored scan compares them with its view.
    Following {
        /// The table's rows when the job was built.
        rows: Vec<Vec<Value>>,
        /// Whether a scan that starts afresh emits them.
        emit_rows: bool,
        /// Every change committed after them.
        changes: Receiver<Changes>,
    },
}

/// The section of a following scan's state: the rows it has emitted, one per key.
const VIEW: &str = "view";

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
    /// The table's primary key columns.
    key: Vec<usize>,
    /// With checkpoints, in a following scan: each key's row as last emitted.
    view: Option<HashMap<Vec<Value>, Vec<Value>>>,
    /// The view a restored scan starts from.
    restored: Option<HashMap<Vec<Value>, Vec<Value>>>,
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
            key: Vec::new(),
            view: None,
            restored: None,
        }
    }

    /// The scan of a table whose primary key is `key` (its column indexes).
    pub fn with_key(mut self, key: Vec<usize>) -> Self {
        self.key = key;
        self
    }

    fn key_of(&self, row: &[Value]) -> Vec<Value> {
        self.key.iter().map(|&k| row[k].clone()).collect()
    }

    /// Records an emitted row in the view, if the scan keeps one.
    fn remember(&mut self, kind: RowKind, row: &[Value]) {
        if self.view.is_none() {
            return;
        }
        let key = self.key_of(row);
        let Some(view) = self.view.as_mut() else { return };
        match kind {
            RowKind::Insert | RowKind::UpdateAfter => {
                view.insert(key, row.to_vec());
            }
            RowKind::Delete => {
                view.remove(&key);
            }
            RowKind::UpdateBefore => {}
        }
    }

    /// What a restored scan emits first: the changes from the view it had emitted to `rows`.
    fn difference(
        &self,
        restored: &HashMap<Vec<Value>, Vec<Value>>,
        rows: Vec<Vec<Value>>,
    ) -> Vec<(RowKind, Vec<Value>)> {
        let mut changes = Vec::new();
        let mut current: HashMap<Vec<Value>, Vec<Value>> = HashMap::with_capacity(rows.len());
        for row in rows {
            current.insert(self.key_of(&row), row);
        }
        for (key, old) in restored {
            match current.get(key) {
                None => changes.push((RowKind::Delete, old.clone())),
                Some(new) if new != old => {
                    changes.push((RowKind::UpdateBefore, old.clone()));
                    changes.push((RowKind::UpdateAfter, new.clone()));
                }
                Some(_) => {}
            }
        }
        changes
            .extend(current.into_iter().filter(|(k, _)| !restored.contains_key(k)).map(|(_, r)| (RowKind::Insert, r)));
        changes
    }
}

impl Source for ManagedScan {
    fn name(&self) -> &str {
        &self.name
    }

    fn open(&mut self, ctx: &mut OperatorContext) -> Result<()> {
        let rows = match self.read.take() {
            None => return Ok(()),
            Some(ScanRead::Key(table, key)) => table.get(&key)?.into_iter().collect(),
            Some(ScanRead::Snapshot(table)) => table.scan()?,
            Some(ScanRead::Following { rows, emit_rows, changes }) => {
                self.changes = Some(changes);
                if ctx.checkpointing() {
                    self.view = Some(HashMap::new());
                }
                match self.restored.take() {
                    Some(restored) => {
                        self.pending = self.difference(&restored, rows).into();
                        self.view = Some(restored);
                        Vec::new()
                    }
                    None if emit_rows => rows,
                    None => Vec::new(),
                }
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
                self.remember(RowKind::Insert, &row);
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
            self.remember(kind, &row);
            chunk.push(kind, &row);
        }
        out.collect(chunk);
        Ok(SourceStatus::Ready)
    }

    /// A following scan's view: each key's row as last emitted.
    fn snapshot_state(&mut self, _: u64, _: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        if let Some(view) = &self.view {
            let out = state.section(VIEW);
            out.u32(view.len() as u32);
            view.values().for_each(|row| out.values(row));
        }
        Ok(())
    }

    /// Takes back the view; the difference to the table goes out first when the scan opens.
    fn restore_state(&mut self, _: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        let malformed = |e: weir_runtime::checkpoint::codec::DecodeError| {
            weir_runtime::Error::Restore(format!("the state of the scan of '{}' is malformed: {e}", self.name))
        };
        let mut view = HashMap::new();
        for state in states {
            let Some(mut input) = state.section(VIEW) else { continue };
            for _ in 0..input.u32().map_err(malformed)? {
                let row: Vec<Value> = input.values().map_err(malformed)?;
                view.insert(self.key_of(&row), row);
            }
        }
        self.restored = Some(view);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::TableDescriptor;
    use crate::managed::store::TableStore;
    use weir_runtime::operator::SubtaskInfo;
    use weir_runtime::parse::parse_schema;
    use weir_store::codec::EncodedRows;

    fn context() -> OperatorContext {
        let info = SubtaskInfo::new("scan", 0, 1);
        OperatorContext::new(info, Arc::new(weir_runtime::ManualClock::new(0)), 1024).with_checkpointing(true)
    }

    fn write(table: &ManagedTable, rows: &[(RowKind, i32, &str)]) {
        let mut batch = EncodedRows::new(table.types().to_vec());
        for (kind, k, v) in rows {
            batch.push(*kind, &[Value::Int(*k), Value::string(v)]).unwrap();
        }
        table.write(&batch, None).unwrap();
    }

    fn scan(table: &ManagedTable) -> ManagedScan {
        let (rows, changes) = table.follow(true).unwrap();
        ManagedScan::new("t", 2, Some(ScanRead::Following { rows, emit_rows: true, changes })).with_key(vec![0])
    }

    /// Polls until the scan has nothing more, returning its rows as Flink prints them, sorted.
    fn drain(scan: &mut ManagedScan, ctx: &mut OperatorContext) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let mut out = Output::new();
            let status = scan.poll_next(ctx, &mut out).unwrap();
            for element in out.drain() {
                if let weir_runtime::element::StreamElement::Chunk(chunk) = element {
                    lines
                        .extend(chunk.rows().map(|(kind, row)| weir_runtime::Row::new(kind, row.to_vec()).to_string()));
                }
            }
            if status != SourceStatus::Ready {
                break;
            }
        }
        lines.sort();
        lines
    }

    /// A restored following scan emits what changed since its checkpoint as one change per key,
    /// then follows the table.
    #[test]
    fn a_restored_following_scan_emits_the_difference_to_the_table_then_follows_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = TableStore::in_memory(dir.path()).unwrap();
        let schema = parse_schema(&[("k", "INT"), ("v", "STRING")]).unwrap();
        let descriptor = TableDescriptor::new("t", schema, &[]).with_primary_key(&["k"]);
        store.create(&descriptor, "t").unwrap();
        let table = store.table(&descriptor).unwrap();
        write(&table, &[(RowKind::Insert, 1, "a"), (RowKind::Insert, 2, "b")]);

        let mut ctx = context();
        let mut first = scan(&table);
        first.open(&mut ctx).unwrap();
        assert_eq!(drain(&mut first, &mut ctx), ["+I[1, a]", "+I[2, b]"]);
        let mut state = StateWriter::new();
        first.snapshot_state(1, &mut ctx, &mut state).unwrap();
        drop(first); // the job fails; the table changes meanwhile
        write(&table, &[(RowKind::UpdateAfter, 1, "a2"), (RowKind::Delete, 2, "b"), (RowKind::Insert, 3, "c")]);

        let mut ctx = context();
        let mut restored = scan(&table);
        restored.restore_state(&mut ctx, &[state.into_reader()]).unwrap();
        restored.open(&mut ctx).unwrap();
        assert_eq!(drain(&mut restored, &mut ctx), ["+I[3, c]", "+U[1, a2]", "-D[2, b]", "-U[1, a]"]);
        write(&table, &[(RowKind::Insert, 4, "d")]);
        assert_eq!(drain(&mut restored, &mut ctx), ["+I[4, d]"]);
    }
}
