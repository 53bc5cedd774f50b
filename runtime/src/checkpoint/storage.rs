//! Completed checkpoints on disk: `chk-N/_metadata` under the job's checkpoint directory.
//!
//! `_metadata` is a snapshot file ([`super::file`]) whose payload is, in weir's encoding
//! ([`super::codec`]): the checkpoint's id (u64) and trigger time (i64), the number of subtask
//! parts (u32), and for each its chain's name, its subtask index and parallelism (u32 each) and
//! each operator of the chain, head first (u32 count, then each operator's id and sections), and
//! what the planner wrote about the job (a u32 flag, then the text when there is one). A `chk-N`
//! directory without a readable `_metadata` is not a checkpoint: it is skipped when looking for
//! the latest one and refused when named.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::codec::{DecodeError, Decoder, Encoder};
use super::coordinator::{CompletedCheckpoint, OperatorState, SubtaskState};
use super::file::{read_snapshot, write_snapshot_parts, SnapshotError};
use super::state::StateReader;

/// The file that makes a `chk-N` directory a checkpoint.
pub const METADATA: &str = "_metadata";

/// Why a checkpoint cannot be restored.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// The metadata file is missing, damaged or of another format.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The metadata passed its checksum but does not decode: written by another build.
    #[error("checkpoint '{}' cannot be read: {source}", path.display())]
    Malformed {
        /// The metadata file.
        path: PathBuf,
        /// Where decoding stopped.
        source: DecodeError,
    },
}

/// Writes `checkpoint` as `dir/chk-N/_metadata` (atomically) and returns the directory.
///
/// # Errors
/// What the file system reports.
pub fn write_checkpoint(dir: &Path, checkpoint: &CompletedCheckpoint) -> std::io::Result<PathBuf> {
    let chk = dir.join(format!("chk-{}", checkpoint.id));
    write_into(&chk, checkpoint)?;
    Ok(chk)
}

/// Writes `checkpoint` as `target/_metadata`.
fn write_into(target: &Path, checkpoint: &CompletedCheckpoint) -> std::io::Result<()> {
    // The operators' state is written from where it is, not copied into one payload first.
    let mut pieces = Vec::new();
    let mut e = Encoder::new();
    e.u64(checkpoint.id);
    e.i64(checkpoint.timestamp);
    e.u32(checkpoint.subtasks.len() as u32);
    for part in &checkpoint.subtasks {
        e.str(&part.vertex);
        e.u32(part.subtask as u32);
        e.u32(part.parallelism as u32);
        e.u32(part.operators.len() as u32);
        for operator in &part.operators {
            e.str(&operator.id);
            operator.state.encode_into(&mut e, &mut pieces);
        }
    }
    match &checkpoint.plan {
        Some(plan) => {
            e.u32(1);
            e.str(plan);
        }
        None => e.u32(0),
    }
    pieces.push(e.into_bytes().into());
    write_snapshot_parts(&target.join(METADATA), &pieces)
}

/// Writes `checkpoint` as the savepoint `dir/savepoint-<id>-<name>/_metadata` (atomically) and
/// returns its directory: a checkpoint by another name, outside the job's checkpoint
/// directory, so that no retention deletes it.
///
/// # Errors
/// What the file system reports.
pub fn write_savepoint(dir: &Path, name: &str, checkpoint: &CompletedCheckpoint) -> std::io::Result<PathBuf> {
    let savepoint = dir.join(format!("savepoint-{}-{name}", checkpoint.id));
    write_into(&savepoint, checkpoint)?;
    Ok(savepoint)
}

/// Reads the checkpoint in directory `chk` (or whose `_metadata` file `chk` names).
///
/// # Errors
/// A missing, partial or damaged checkpoint, saying which.
pub fn read_checkpoint(chk: &Path) -> Result<CompletedCheckpoint, RestoreError> {
    let path = if chk.is_dir() { chk.join(METADATA) } else { chk.to_path_buf() };
    let payload = read_snapshot(&path)?;
    decode(&payload).map_err(|source| RestoreError::Malformed { path, source })
}

fn decode(payload: &[u8]) -> Result<CompletedCheckpoint, DecodeError> {
    let mut d = Decoder::new(payload);
    let id = d.u64()?;
    let timestamp = d.i64()?;
    let parts = d.u32()?;
    let mut subtasks = Vec::new();
    for _ in 0..parts {
        let vertex = d.str()?.to_string();
        let subtask = d.u32()? as usize;
        let parallelism = d.u32()? as usize;
        let count = d.u32()?;
        let operators = (0..count)
            .map(|_| Ok(OperatorState { id: d.str()?.to_string(), state: StateReader::decode(&mut d)? }))
            .collect::<Result<Vec<_>, DecodeError>>()?;
        subtasks.push(SubtaskState { vertex, subtask, parallelism, operators });
    }
    let plan = if d.u32()? == 1 { Some(Arc::new(d.str()?.to_string())) } else { None };
    Ok(CompletedCheckpoint { id, timestamp, subtasks, plan })
}

/// The `chk-N` directories under `dir` with their numbers, lowest first.
fn numbered(dir: &Path) -> Vec<(u64, PathBuf)> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<(u64, PathBuf)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let n = e.file_name().to_str()?.strip_prefix("chk-")?.parse().ok()?;
            Some((n, e.path()))
        })
        .collect();
    found.sort();
    found
}

/// The highest `N` of the `chk-N` directories under `dir` (0 when there is none).
pub fn highest_checkpoint_number(dir: &Path) -> u64 {
    numbered(dir).last().map_or(0, |(n, _)| *n)
}

/// Every complete checkpoint under `dir`, oldest first (those that do not read are skipped).
pub fn read_all(dir: &Path) -> Vec<CompletedCheckpoint> {
    numbered(dir).into_iter().filter_map(|(_, p)| read_checkpoint(&p).ok()).collect()
}

/// The newest complete checkpoint under `dir`, read.
pub fn read_latest(dir: &Path) -> Option<CompletedCheckpoint> {
    latest_checkpoint(dir).and_then(|chk| read_checkpoint(&chk).ok())
}

/// The newest complete checkpoint under `dir`: the highest `chk-N` whose metadata reads.
pub fn latest_checkpoint(dir: &Path) -> Option<PathBuf> {
    numbered(dir).into_iter().rev().map(|(_, p)| p).find(|p| read_snapshot(&p.join(METADATA)).is_ok())
}

/// Deletes all but the newest `keep` checkpoints under `dir`.
pub fn retain_newest(dir: &Path, keep: usize) {
    let found = numbered(dir);
    let excess = found.len().saturating_sub(keep);
    for (_, path) in found.into_iter().take(excess) {
        if let Err(error) = fs::remove_dir_all(&path) {
            tracing::warn!(path = %path.display(), %error, "cannot delete an old checkpoint");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::StateWriter;

    fn checkpoint(id: u64) -> CompletedCheckpoint {
        let mut state = StateWriter::new();
        state.section("sent").u64(id * 100);
        CompletedCheckpoint {
            id,
            timestamp: 1_000 + id as i64,
            subtasks: vec![SubtaskState {
                vertex: "Source: s".into(),
                subtask: 0,
                parallelism: 1,
                operators: vec![OperatorState { id: "Source: s#1-0".into(), state: state.into_reader() }],
            }],
            plan: Some(Arc::new(format!("plan {id}"))),
        }
    }

    #[test]
    fn checkpoints_read_back_and_only_the_newest_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        for id in 1..=4 {
            write_checkpoint(dir.path(), &checkpoint(id)).unwrap();
        }
        retain_newest(dir.path(), 2);
        assert_eq!(numbered(dir.path()).iter().map(|(n, _)| *n).collect::<Vec<_>>(), vec![3, 4]);
        let latest = latest_checkpoint(dir.path()).unwrap();
        let read = read_checkpoint(&latest).unwrap();
        assert_eq!(read, checkpoint(4));
        assert_eq!(read.subtasks[0].operators[0].state.section("sent").unwrap().u64().unwrap(), 400);
    }

    #[test]
    fn a_partial_checkpoint_is_skipped_and_refused_when_named() {
        let dir = tempfile::tempdir().unwrap();
        write_checkpoint(dir.path(), &checkpoint(1)).unwrap();
        let chk2 = write_checkpoint(dir.path(), &checkpoint(2)).unwrap();
        let metadata = chk2.join(METADATA);
        let bytes = fs::read(&metadata).unwrap();
        fs::write(&metadata, &bytes[..bytes.len() / 2]).unwrap();
        assert_eq!(latest_checkpoint(dir.path()), Some(dir.path().join("chk-1")));
        let error = read_checkpoint(&chk2).unwrap_err().to_string();
        assert!(error.contains("is incomplete"), "{error}");
        fs::create_dir(dir.path().join("chk-3")).unwrap();
        assert_eq!(latest_checkpoint(dir.path()), Some(dir.path().join("chk-1")));
    }
}
