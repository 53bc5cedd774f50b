//! The working directory of a job's on-disk state: `weir-state-*` under the system's
//! temporary directory or `state.backend.rocksdb.localdir`, deleted when the job's run ends.
//!
//! A process killed with `kill -9` deletes nothing, so each directory holds a `.lock` file its
//! process keeps locked while it runs; a new directory is made only after deleting every
//! `weir-state-*` directory beside it whose lock is free (its process is gone). A directory
//! whose lock is held, or that has no lock file yet (being made), is left alone.

use std::fs::File;
use std::io;
use std::path::Path;

use rustix::fs::{flock, FlockOperation};

/// The most open files a process may ask for on Linux unless `fs.nr_open` says more.
const NR_OPEN: u64 = 1 << 20;

/// The prefix of every working directory's name.
const PREFIX: &str = "weir-state-";

/// The lock file in each working directory.
const LOCK: &str = ".lock";

/// A working directory, locked for as long as it lives and then deleted.
#[derive(Debug)]
pub(crate) struct WorkDir {
    /// Deleted on drop, before the lock is released (fields drop in order).
    dir: tempfile::TempDir,
    _lock: File,
}

impl WorkDir {
    /// A new working directory under `parent`, after deleting those killed processes left.
    ///
    /// # Errors
    /// `parent` or the directory cannot be made, or its lock file cannot be locked.
    pub(crate) fn create(parent: &Path) -> io::Result<WorkDir> {
        raise_open_files_limit();
        std::fs::create_dir_all(parent)?;
        let removed = remove_abandoned(parent);
        if removed > 0 {
            tracing::info!(dir = %parent.display(), removed, "deleted the state directories of ended processes");
        }
        let dir = tempfile::Builder::new().prefix(PREFIX).tempdir_in(parent)?;
        let lock = File::create(dir.path().join(LOCK))?;
        flock(&lock, FlockOperation::LockExclusive)?;
        Ok(WorkDir { dir, _lock: lock })
    }

    /// Where the directory is.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Deletes the working directories under `parent` whose lock no process holds; returns how
/// many. A directory that cannot be read or deleted is left (and logged).
fn remove_abandoned(parent: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(parent) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(PREFIX) {
            continue;
        }
        let dir = entry.path();
        let Ok(lock) = File::open(dir.join(LOCK)) else { continue };
        match flock(&lock, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => match std::fs::remove_dir_all(&dir) {
                Ok(()) => removed += 1,
                Err(error) => {
                    tracing::warn!(dir = %dir.display(), %error, "cannot delete an abandoned state directory")
                }
            },
            Err(rustix::io::Errno::WOULDBLOCK) => {}
            Err(error) => {
                tracing::warn!(dir = %dir.display(), %error, "cannot lock a state directory's lock file");
            }
        }
    }
    removed
}

/// Raises the process's open-file limit to its hard limit. A store keeps each of its runs open
/// (at a 10 GB state, about 64 base files and 60 layers), and a job has a store per state and
/// subtask: more than the 1 024 files many systems allow a process by default, where the hard
/// limit is far higher (Flink's documentation asks RocksDB users to raise it by hand). A limit
/// that cannot be raised stays, and a store that cannot open a file says so.
fn raise_open_files_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let limit = getrlimit(Resource::Nofile);
    let wanted = limit.maximum.unwrap_or(NR_OPEN);
    if limit.current.is_some_and(|current| current < wanted) {
        let raised = Rlimit { current: Some(wanted), maximum: limit.maximum };
        match setrlimit(Resource::Nofile, raised) {
            Ok(()) => tracing::debug!(from = limit.current, to = wanted, "raised the open-file limit"),
            Err(error) => tracing::debug!(current = limit.current, wanted, %error, "cannot raise the open-file limit"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_whose_process_ended_is_deleted_and_a_live_one_is_kept() {
        let parent = tempfile::tempdir().unwrap();
        let live = WorkDir::create(parent.path()).unwrap();
        // What a killed process leaves: a directory with state in it and a lock nobody holds.
        let abandoned = parent.path().join("weir-state-abandoned");
        std::fs::create_dir_all(abandoned.join("state-0")).unwrap();
        std::fs::write(abandoned.join("state-0/run"), b"entries").unwrap();
        File::create(abandoned.join(LOCK)).unwrap();
        // One being made by another process: no lock file yet.
        let being_made = parent.path().join("weir-state-new");
        std::fs::create_dir_all(&being_made).unwrap();
        // Not weir's.
        let other = parent.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        File::create(other.join(LOCK)).unwrap();

        let second = WorkDir::create(parent.path()).unwrap();
        assert!(!abandoned.exists(), "an abandoned directory was kept");
        assert!(live.path().exists() && being_made.exists() && other.exists());
        assert_ne!(live.path(), second.path());

        let (live_path, second_path) = (live.path().to_path_buf(), second.path().to_path_buf());
        drop(live);
        assert!(!live_path.exists(), "a directory outlived its run");
        assert!(second_path.exists());
    }
}
