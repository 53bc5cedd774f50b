//! A managed sink's writes in a job that checkpoints: rows are staged per checkpoint and
//! committed into the table when the checkpoint that holds them completes, exactly once.
//!
//! Every sink instance (a fresh start or a restore) writes under a *run id* of its own, and
//! numbers its staged batches 1, 2, 3, …. A commit applies the due batches and sets the table
//! store's commit marker of the run to the last batch's number, in the same transaction. The
//! checkpoint holds the batches not committed yet, with their run; a restored sink commits
//! those whose numbers are above the run's marker (the completed checkpoint's commit that the
//! failure interrupted) and skips the others (committed before the failure). So a batch is
//! applied once however often the job fails and restores.

use std::sync::Arc;

use weir_runtime::checkpoint::codec::DecodeError;
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::{Error as RuntimeError, Result as RuntimeResult};
use weir_store::codec::EncodedRows;

use super::store::ManagedTable;

/// The section of a sink's state that holds its staged batches.
const STAGED: &str = "staged";

/// Rows waiting for a checkpoint to complete.
#[derive(Debug, Clone)]
pub struct Staged {
    /// The checkpoint whose barrier closed the batch (`u64::MAX`: the end of input, due at the
    /// next checkpoint that completes).
    pub checkpoint: u64,
    /// The batch's number in its run.
    pub batch: u64,
    /// The rows.
    pub rows: EncodedRows,
}

/// The batches of one sink instance.
#[derive(Debug)]
pub struct StagedBatches {
    run: u128,
    next_batch: u64,
    batches: Vec<Staged>,
}

impl Default for StagedBatches {
    fn default() -> Self {
        StagedBatches { run: rand::random(), next_batch: 1, batches: Vec::new() }
    }
}

impl StagedBatches {
    /// Stages `rows` (when there are any) for `checkpoint`.
    pub fn stage(&mut self, checkpoint: u64, rows: EncodedRows) {
        if rows.is_empty() {
            return;
        }
        self.batches.push(Staged { checkpoint, batch: self.next_batch, rows });
        self.next_batch += 1;
    }

    /// Whether a batch waits.
    pub fn is_empty(&self) -> bool {
        self.batches.is_empty()
    }

    /// Takes the batches of checkpoints up to `checkpoint`, oldest first.
    pub fn take_due(&mut self, checkpoint: u64) -> Vec<Staged> {
        let (due, later) = std::mem::take(&mut self.batches).into_iter().partition(|b| b.checkpoint <= checkpoint);
        self.batches = later;
        due
    }

    /// This instance's run id.
    pub fn run(&self) -> u128 {
        self.run
    }

    /// Writes the run and the batches not committed yet.
    pub fn snapshot(&self, state: &mut StateWriter) {
        let out = state.section(STAGED);
        out.u64((self.run >> 64) as u64);
        out.u64(self.run as u64);
        out.u32(self.batches.len() as u32);
        for b in &self.batches {
            out.u64(b.checkpoint);
            out.u64(b.batch);
            out.bytes(&b.rows.to_bytes());
        }
    }
}

/// Commits `batches` of run `run` into `table` with the run's marker set to the last one.
///
/// # Errors
/// What the table reports; nothing of the batches is applied then.
pub fn commit(
    table: &ManagedTable,
    run: u128,
    batches: &[Staged],
    targets: Option<&[usize]>,
) -> crate::error::Result<usize> {
    let Some(last) = batches.last() else { return Ok(0) };
    let rows: Vec<&EncodedRows> = batches.iter().map(|b| &b.rows).collect();
    let key = marker_key(run);
    table.write_batches(&rows, targets, Some((&key, &last.batch.to_le_bytes())))
}

/// Commits what a checkpointed sink (`state`) staged and its run had not committed when it
/// stopped; returns how many batches that was.
///
/// # Errors
/// A malformed state, or what the table reports.
pub fn restore(
    table: &Arc<ManagedTable>,
    name: &str,
    state: &StateReader,
    targets: Option<&[usize]>,
) -> RuntimeResult<usize> {
    let Some(mut input) = state.section(STAGED) else { return Ok(0) };
    let malformed = |e: String| RuntimeError::Restore(format!("the state of the sink '{name}' is malformed: {e}"));
    let decode = |e: DecodeError| malformed(e.to_string());
    let run = (u128::from(input.u64().map_err(decode)?) << 64) | u128::from(input.u64().map_err(decode)?);
    let committed = match table.marker(&marker_key(run)).map_err(|e| RuntimeError::execution(e.to_string()))? {
        Some(bytes) => u64::from_le_bytes(bytes.try_into().map_err(|_| malformed("its commit marker".into()))?),
        None => 0,
    };
    let mut due = Vec::new();
    for _ in 0..input.u32().map_err(decode)? {
        let checkpoint = input.u64().map_err(decode)?;
        let batch = input.u64().map_err(decode)?;
        let bytes = input.bytes().map_err(decode)?;
        if batch > committed {
            let rows = EncodedRows::from_bytes(table.types().to_vec(), bytes).map_err(|e| malformed(e.to_string()))?;
            due.push(Staged { checkpoint, batch, rows });
        }
    }
    commit(table, run, &due, targets).map_err(|e| RuntimeError::execution(e.to_string()))?;
    tracing::info!(sink = name, run = %format!("{run:032x}"), committed, batches = due.len(), "restored sink committed its checkpoint");
    Ok(due.len())
}

/// The commit marker of run `run` in the table store.
fn marker_key(run: u128) -> Vec<u8> {
    format!("sink-run-{run:032x}").into_bytes()
}
