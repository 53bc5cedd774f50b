//! Completed checkpoints on disk: `chk-N/_metadata` under the job's checkpoint directory.
//!
//! `_metadata` is a snapshot file ([`super::file`]) whose payload is, in weir's encoding
//! ([`super::codec`]): the checkpoint's id (u64) and trigger time (i64), the number of subtask
//! parts (u32), and for each its chain's name, its subtask index and parallelism (u32 each) and
//! each operator of the chain, head first (u32 count, then each operator's id and sections), and
//! what the planner wrote about the job (a u32 flag, then the text when there is one).
//!
//! A checkpoint is written whole into a hidden `.chk-N.inprogress` directory, which is then
//! renamed to `chk-N`: a crash leaves either no `chk-N` or a complete one. So a `chk-N` whose
//! `_metadata` does not read was damaged after it was written (truncated, emptied, changed or
//! deleted), and the newest checkpoint being damaged is an error, never a silent fall-back to
//! an older one ([`latest_checkpoint`]): as in Flink, a recovery that cannot read the
//! checkpoint it should start from fails.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::codec::{DecodeError, Decoder, Encoder};
use super::completed::{CompletedCheckpoint, OperatorState, SubtaskState};
use super::file::{read_snapshot, write_snapshot_parts, SnapshotError};
use super::state::StateReader;

/// The file that makes a `chk-N` directory a checkpoint.
pub const METADATA: &str = "_metadata";
/// The directory beside the `chk-N` directories (and inside a savepoint) that holds the files
/// of incremental checkpoints of the on-disk state backend, shared between checkpoints.
pub const SHARED_DIR: &str = "shared";

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

/// Writes `checkpoint` as `dir/chk-N/_metadata` and returns the directory, which appears
/// whole or not at all: it is written as `.chk-N.inprogress` and renamed.
///
/// # Errors
/// What the file system reports.
pub fn write_checkpoint(dir: &Path, checkpoint: &CompletedCheckpoint) -> std::io::Result<PathBuf> {
    let chk = dir.join(format!("chk-{}", checkpoint.id));
    let staging = dir.join(format!(".chk-{}.inprogress", checkpoint.id));
    if staging.exists() {
        fs::remove_dir_all(&staging)?;
    }
    write_into(&staging, checkpoint)?;
    fs::rename(&staging, &chk)?;
    fs::File::open(dir).and_then(|d| d.sync_all())?;
    Ok(chk)
}

/// Writes `checkpoint` as `target/_metadata`, its state runs named relative to `target`.
fn write_into(target: &Path, checkpoint: &CompletedCheckpoint) -> std::io::Result<()> {
    let base = std::path::absolute(target)?;
    let relative = |name: &str, bytes: &[u8]| crate::state::runs::stored_relative(name, bytes, &base);
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
            operator.state.encode_into(&mut e, &mut pieces, &relative);
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

/// The longest [`directory_name`] kept whole: file names end at 255 bytes, and a savepoint's
/// directory puts `savepoint-<id>-` before it.
const MAX_DIRECTORY_NAME: usize = 200;

/// The name of job `job` as a directory name (its checkpoints' directory, its savepoints'
/// suffix): letters, digits and `._,-` kept, anything else `_`. A longer name than
/// [`MAX_DIRECTORY_NAME`] bytes (a statement set of many sinks) keeps its first 160 bytes and
/// ends with a hash of the whole (FNV-1a), so that it stays a valid file name and one job
/// always finds the same directory.
pub fn directory_name(job: &str) -> String {
    let name: String = job.chars().map(|c| if c.is_alphanumeric() || "._,-".contains(c) { c } else { '_' }).collect();
    if name.len() <= MAX_DIRECTORY_NAME {
        return name;
    }
    let hash = crate::ids::Fnv::of(&[job.as_bytes()]);
    let mut end = 160;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}-{hash:016x}", &name[..end])
}

/// Writes `checkpoint` as the savepoint `dir/savepoint-<id>-<name>/_metadata` (atomically) and
/// returns its directory: a checkpoint by another name, outside the job's checkpoint
/// directory, so that no retention deletes it.
///
/// # Errors
/// What the file system reports.
pub fn write_savepoint(dir: &Path, name: &str, checkpoint: &CompletedCheckpoint) -> std::io::Result<PathBuf> {
    let savepoint = std::path::absolute(dir)?.join(format!("savepoint-{}-{name}", checkpoint.id));
    if crate::state::runs::names_runs(checkpoint) {
        let shared = savepoint.join(SHARED_DIR);
        let mut owned = checkpoint.clone();
        for operator in owned.subtasks.iter_mut().flat_map(|s| &mut s.operators) {
            operator.state = crate::state::runs::relocate_runs(&operator.state, &shared)?;
        }
        write_into(&savepoint, &owned)?;
        return Ok(savepoint);
    }
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
    let mut checkpoint = decode(&payload).map_err(|source| RestoreError::Malformed { path: path.clone(), source })?;
    // Its state runs are named relative to its directory.
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if let Ok(dir) = std::path::absolute(dir) {
        for operator in checkpoint.subtasks.iter_mut().flat_map(|s| &mut s.operators) {
            operator.state = crate::state::runs::resolve_runs(std::mem::take(&mut operator.state), &dir);
        }
    }
    Ok(checkpoint)
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

/// Every checkpoint under `dir` that reads, oldest first.
pub fn read_all(dir: &Path) -> Vec<CompletedCheckpoint> {
    numbered(dir).into_iter().filter_map(|(_, p)| read_checkpoint(&p).ok()).collect()
}

/// The newest checkpoint under `dir`, read; `None` when there is none or it does not read.
pub fn read_latest(dir: &Path) -> Option<CompletedCheckpoint> {
    latest_checkpoint(dir).ok().flatten().and_then(|chk| read_checkpoint(&chk).ok())
}

/// The lock file of a run's checkpoint directory, held while the run's job runs.
const RUN_LOCK: &str = ".lock";

/// Makes the run directory `dir` and locks its lock file for as long as the returned file is
/// open (the job's life).
///
/// # Errors
/// The directory or its lock file cannot be made or locked.
pub fn lock_run_directory(dir: &Path) -> std::io::Result<fs::File> {
    fs::create_dir_all(dir)?;
    let lock = fs::File::create(dir.join(RUN_LOCK))?;
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)?;
    Ok(lock)
}

/// Tidies the runs of one job under `dir` (`<execution.checkpointing.dir>/<job name>`) before a
/// run resumes from one of them: in each run directory whose lock no live job holds, deletes
/// the state runs in `shared/` that no retained checkpoint names (written for checkpoints a
/// killed run never completed), and deletes a run directory that holds no checkpoint at all.
/// A directory a live job holds is left alone. Returns how many files and directories went.
pub fn tidy_runs(dir: &Path) -> usize {
    let Ok(dir) = std::path::absolute(dir) else { return 0 };
    let Ok(entries) = fs::read_dir(&dir) else { return 0 };
    let runs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    // Every retained checkpoint of every run: a file any of them names stays, wherever it is.
    let kept: Vec<CompletedCheckpoint> = runs.iter().flat_map(|run| read_all(run)).collect();
    let mut removed = 0;
    for run in runs {
        let Ok(lock) = fs::File::open(run.join(RUN_LOCK)) else { continue };
        if rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err() {
            continue;
        }
        if numbered(&run).is_empty() {
            if fs::remove_dir_all(&run).is_ok() {
                removed += 1;
            }
            continue;
        }
        removed += crate::state::runs::retire_runs(&run.join(SHARED_DIR), &kept);
    }
    removed
}

/// The directories of the runs of one job under `dir` (`<execution.checkpointing.dir>/<job
/// name>`): each run writes its checkpoints into a directory named after its job id, as Flink
/// writes them under `<dir>/<job id>`. `dir` itself counts too: weir wrote a job's checkpoints
/// straight into it before runs had directories of their own.
pub fn run_directories(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut runs: Vec<PathBuf> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name();
            let is_run =
                e.file_type().ok()?.is_dir() && !name.to_str()?.starts_with("chk-") && !numbered(&e.path()).is_empty();
            is_run.then(|| e.path())
        })
        .collect();
    if !numbered(dir).is_empty() {
        runs.push(dir.to_path_buf());
    }
    runs.sort();
    runs
}

/// The newest checkpoint of the runs of one job under `dir` (see [`run_directories`]): the
/// newest of the run whose newest checkpoint was written last. A run killed before its first
/// checkpoint has none and is passed over.
///
/// # Errors
/// As [`latest_checkpoint`], for the run that wrote last: an older run's checkpoint is never
/// taken in place of a newer one that does not read.
pub fn latest_checkpoint_of_runs(dir: &Path) -> Result<Option<PathBuf>, DamagedCheckpoint> {
    let written = |run: &PathBuf| {
        let (_, newest) = numbered(run).pop()?;
        fs::metadata(newest.join(METADATA)).or_else(|_| fs::metadata(&newest)).and_then(|m| m.modified()).ok()
    };
    let last = run_directories(dir).into_iter().filter_map(|run| Some((written(&run)?, run))).max();
    match last {
        Some((_, run)) => latest_checkpoint(&run),
        None => Ok(None),
    }
}

/// The newest checkpoint under `dir` (its highest `chk-N`); `None` when there is none.
///
/// # Errors
/// The newest one does not read (its `_metadata` is missing, cut off, changed or not a file):
/// the message names the file, says what is wrong with it and which older checkpoint could be
/// named instead. An older checkpoint is never taken in its place without the user saying so.
pub fn latest_checkpoint(dir: &Path) -> Result<Option<PathBuf>, DamagedCheckpoint> {
    let mut found = numbered(dir).into_iter().rev().map(|(_, p)| p);
    let Some(newest) = found.next() else { return Ok(None) };
    match read_snapshot(&newest.join(METADATA)) {
        Ok(_) => Ok(Some(newest)),
        Err(reason) => {
            let older = found.find(|p| read_snapshot(&p.join(METADATA)).is_ok());
            Err(DamagedCheckpoint { path: newest.join(METADATA), reason, older })
        }
    }
}

/// The newest checkpoint of a directory does not read.
#[derive(Debug, thiserror::Error)]
#[error(
    "The newest checkpoint '{}' cannot be read: {reason}. weir does not fall back to an older checkpoint by itself: \
     {}",
    path.display(),
    match older {
        Some(older) => format!(
            "to start from the newest one that reads, set 'execution.state-recovery.path' = '{}'",
            older.display()
        ),
        None => "no older checkpoint reads either; move the directory away to start afresh".to_string(),
    }
)]
pub struct DamagedCheckpoint {
    /// The newest checkpoint's metadata file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub reason: SnapshotError,
    /// The newest older checkpoint that reads, if any.
    pub older: Option<PathBuf>,
}

/// Deletes all but the newest `keep` checkpoints under `dir`, and what an interrupted write
/// left (`.chk-N.inprogress`).
pub fn retain_newest(dir: &Path, keep: usize) {
    if let Ok(entries) = fs::read_dir(dir) {
        let staging = entries.flatten().filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(".chk-") && name.ends_with(".inprogress")
        });
        for entry in staging {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
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
    fn a_long_job_name_is_a_bounded_directory_name_of_its_own() {
        let long = "insert-into_default_catalog.default_database.".repeat(8);
        let name = directory_name(&long);
        assert!(name.len() <= MAX_DIRECTORY_NAME && name.len() > 160, "{name}");
        assert_eq!(name, directory_name(&long), "one job, one directory");
        assert_ne!(name, directory_name(&format!("{long}x")));
        assert_eq!(directory_name("insert-into t"), "insert-into_t", "short names as they were");
        let wide = "é".repeat(150);
        assert!(directory_name(&wide).len() <= MAX_DIRECTORY_NAME);
    }

    #[test]
    fn checkpoints_read_back_and_only_the_newest_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        for id in 1..=4 {
            write_checkpoint(dir.path(), &checkpoint(id)).unwrap();
        }
        retain_newest(dir.path(), 2);
        assert_eq!(numbered(dir.path()).iter().map(|(n, _)| *n).collect::<Vec<_>>(), vec![3, 4]);
        let latest = latest_checkpoint(dir.path()).unwrap().unwrap();
        let read = read_checkpoint(&latest).unwrap();
        assert_eq!(read, checkpoint(4));
        assert_eq!(read.subtasks[0].operators[0].state.section("sent").unwrap().u64().unwrap(), 400);
    }

    /// A damaged newest checkpoint is refused, naming its file and the older one that reads,
    /// whatever the damage: cut off, emptied, a flipped byte, deleted, or a FIFO in its place
    /// (which must not block the reader).
    #[test]
    fn a_damaged_newest_checkpoint_is_refused_not_skipped() {
        type Damage = fn(&Path);
        let damages: [(&str, Damage); 5] = [
            ("truncated", |m| {
                let bytes = fs::read(m).unwrap();
                fs::write(m, &bytes[..bytes.len() / 2]).unwrap();
            }),
            ("emptied", |m| fs::write(m, b"").unwrap()),
            ("flipped", |m| {
                let mut bytes = fs::read(m).unwrap();
                let middle = bytes.len() / 2;
                bytes[middle] ^= 0x10;
                fs::write(m, bytes).unwrap();
            }),
            ("deleted", |m| fs::remove_file(m).unwrap()),
            ("fifo", |m| {
                fs::remove_file(m).unwrap();
                assert!(std::process::Command::new("mkfifo").arg(m).status().unwrap().success());
            }),
        ];
        for (what, damage) in damages {
            let dir = tempfile::tempdir().unwrap();
            write_checkpoint(dir.path(), &checkpoint(1)).unwrap();
            let chk2 = write_checkpoint(dir.path(), &checkpoint(2)).unwrap();
            assert_eq!(latest_checkpoint(dir.path()).unwrap(), Some(chk2.clone()));
            damage(&chk2.join(METADATA));
            let error = latest_checkpoint(dir.path()).unwrap_err();
            assert_eq!(error.path, chk2.join(METADATA), "{what}");
            assert_eq!(error.older, Some(dir.path().join("chk-1")), "{what}");
            let message = error.to_string();
            assert!(
                message.contains("chk-2/_metadata' cannot be read") && message.contains("chk-1"),
                "{what}: {message}"
            );
            assert!(read_checkpoint(&chk2).is_err(), "{what}");
        }
    }

    /// A write cut off by a crash leaves only a hidden staging directory: no `chk-N` to
    /// mistake for a damaged checkpoint, and retention clears it.
    #[test]
    fn an_interrupted_write_leaves_no_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        write_checkpoint(dir.path(), &checkpoint(1)).unwrap();
        let staging = dir.path().join(".chk-2.inprogress");
        fs::create_dir(&staging).unwrap();
        fs::write(staging.join("._metadata.1.inprogress"), b"WEIRSNAP").unwrap();
        assert_eq!(latest_checkpoint(dir.path()).unwrap(), Some(dir.path().join("chk-1")));
        retain_newest(dir.path(), 1);
        assert!(!staging.exists());
        assert_eq!(latest_checkpoint(tempfile::tempdir().unwrap().path()).unwrap(), None);
    }
}
