//! The jobs of a process, as a watcher sees them: each job's id, name, state and times, its
//! vertices (operator chains) with their parallelism, inputs and live metrics, its checkpoint
//! statistics and exceptions, and the handle that stops it.
//!
//! [`crate::job::start`] describes every job it starts ([`JobTopology`], [`JobLifecycle`]);
//! whoever starts jobs registers them in a [`JobRegistry`], which a web server or a shell reads
//! without holding up the jobs: everything here is atomics and short locks, never a lock the
//! subtasks take while they process rows.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};

use crate::checkpoint::stats::CheckpointStats;
use crate::checkpoint::{CheckpointConfig, CompletedCheckpoints};
pub use crate::clock::epoch_millis;
use crate::error::{Error, Result};
pub use crate::ids::JobId;
use crate::job::{JobCanceller, JobHandle};
pub use crate::lifecycle::{ship_strategy, JobException, JobLifecycle, JobState, JobTopology, VertexInfo, VertexInput};
use crate::metrics::JobMetrics;

/// A registered job: everything a watcher reads about it, and the way to stop it.
#[derive(Debug)]
pub struct JobInfo {
    /// Its id.
    pub id: JobId,
    /// Its name (`insert-into_default_catalog.default_database.t`, or `pipeline.name`).
    pub name: String,
    /// `STREAMING` or `BATCH`, as Flink's `job-type`.
    pub streaming: bool,
    /// Its vertices.
    pub topology: JobTopology,
    /// How it takes checkpoints.
    pub checkpointing: CheckpointConfig,
    /// Where it takes a savepoint when stopped with one and no directory is named
    /// (`execution.checkpointing.savepoint-dir`).
    pub savepoint_dir: Option<PathBuf>,
    lifecycle: Arc<JobLifecycle>,
    checkpoints: Arc<Mutex<CompletedCheckpoints>>,
    /// Its metrics (the state backend's figures among them).
    metrics: JobMetrics,
    canceller: JobCanceller,
}

impl JobInfo {
    /// Its state, times and exception.
    pub fn lifecycle(&self) -> &JobLifecycle {
        &self.lifecycle
    }

    /// A copy of its checkpoint statistics now.
    pub fn checkpoint_stats(&self) -> CheckpointStats {
        self.checkpoints.lock().stats.clone()
    }

    /// Its metrics, live while it runs and final after it ends.
    pub fn metrics(&self) -> &JobMetrics {
        &self.metrics
    }

    /// Asks the job to stop; returns at once.
    pub fn cancel(&self) {
        self.lifecycle.cancelling();
        self.canceller.cancel();
    }

    /// Waits until the job has ended, at most `timeout`; whether it has.
    pub fn await_end(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        while !self.lifecycle.state().is_terminal() {
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        true
    }

    /// Stops the job with a savepoint into `dir`, its sources ended first when `drain` (see
    /// [`JobCanceller::stop_with_savepoint`] and [`JobCanceller::drain_with_savepoint`]).
    ///
    /// # Errors
    /// As those; also when the job runs in batch mode or takes no periodic checkpoints.
    pub fn stop_with_savepoint(&self, dir: &Path, timeout: Duration, drain: bool) -> Result<Option<PathBuf>> {
        self.require_checkpoints()?;
        if drain {
            return self.canceller.drain_with_savepoint(dir, &self.directory_name(), timeout);
        }
        self.canceller.stop_with_savepoint(dir, &self.directory_name(), timeout)
    }

    /// Takes a savepoint into `dir` and lets the job run on (see [`JobCanceller::savepoint`]).
    ///
    /// # Errors
    /// As [`JobCanceller::savepoint`]; also when the job runs in batch mode or takes no
    /// periodic checkpoints.
    pub fn savepoint(&self, dir: &Path, timeout: Duration) -> Result<Option<PathBuf>> {
        self.require_checkpoints()?;
        self.canceller.savepoint(dir, &self.directory_name(), timeout)
    }

    /// A job takes savepoints when it takes periodic checkpoints: a job in batch mode takes
    /// none (as in Flink), and a streaming job without `execution.checkpointing.interval` has
    /// sinks that commit what they write at once (files, Kafka records, managed tables), so
    /// that what its subtasks write between a savepoint's barrier and the job's end would be
    /// written again by a job restored from it.
    fn require_checkpoints(&self) -> Result<()> {
        if !self.streaming {
            return Err(Error::execution(format!(
                "Job {} runs in BATCH mode (execution.runtime-mode), which takes no checkpoints and no savepoints.",
                self.id
            )));
        }
        if self.checkpointing.interval.is_none() {
            return Err(Error::execution(format!(
                "Job {} was started without execution.checkpointing.interval: its sinks commit what they write at \
                 once, so a savepoint could not hold what they committed after it. Set \
                 'execution.checkpointing.interval' (for example to '10 s') before starting a job you want to stop \
                 with a savepoint.",
                self.id
            )));
        }
        Ok(())
    }

    /// The job's name as a directory name.
    fn directory_name(&self) -> String {
        crate::checkpoint::storage::directory_name(&self.name)
    }
}

/// How many jobs that ended a registry keeps (the oldest are let go first).
pub const ENDED_JOBS_KEPT: usize = 1000;

/// The jobs a process started, oldest first; cheap to clone and share. It keeps every running
/// job and the newest [`ENDED_JOBS_KEPT`] that ended.
#[derive(Debug, Clone, Default)]
pub struct JobRegistry {
    jobs: Arc<RwLock<Vec<Arc<JobInfo>>>>,
}

/// What [`JobRegistry::register`] needs besides the handle.
#[derive(Debug, Clone)]
pub struct Registration {
    /// The job's name.
    pub name: String,
    /// Streaming (true) or batch.
    pub streaming: bool,
    /// How it takes checkpoints.
    pub checkpointing: CheckpointConfig,
    /// `execution.checkpointing.savepoint-dir`, if set.
    pub savepoint_dir: Option<PathBuf>,
}

impl Registration {
    /// A streaming job named `name`, started with `config` (its checkpointing; no savepoint
    /// directory).
    pub fn new(name: impl Into<String>, config: &crate::RuntimeConfig) -> Self {
        Registration {
            name: name.into(),
            streaming: true,
            checkpointing: config.checkpointing.clone(),
            savepoint_dir: None,
        }
    }
}

impl JobRegistry {
    /// Adds the job `handle` runs; returns what watchers see of it.
    pub fn register(&self, handle: &JobHandle, registration: Registration) -> Arc<JobInfo> {
        let info = Arc::new(JobInfo {
            id: handle.id().clone(),
            name: registration.name,
            streaming: registration.streaming,
            topology: handle.topology().clone(),
            checkpointing: registration.checkpointing,
            savepoint_dir: registration.savepoint_dir,
            lifecycle: Arc::clone(handle.lifecycle()),
            checkpoints: handle.checkpoint_history(),
            metrics: handle.metrics().clone(),
            canceller: handle.canceller(),
        });
        let mut jobs = self.jobs.write();
        let ended = jobs.iter().filter(|j| j.lifecycle.state().is_terminal()).count();
        if ended >= ENDED_JOBS_KEPT {
            if let Some(oldest) = jobs.iter().position(|j| j.lifecycle.state().is_terminal()) {
                jobs.remove(oldest);
            }
        }
        jobs.push(Arc::clone(&info));
        info
    }

    /// Every job, oldest first.
    pub fn jobs(&self) -> Vec<Arc<JobInfo>> {
        self.jobs.read().clone()
    }

    /// The job with id `id`.
    pub fn get(&self, id: &str) -> Option<Arc<JobInfo>> {
        self.jobs.read().iter().find(|j| j.id.as_str() == id).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids_are_32_hex_digits_and_differ() {
        let (a, b) = (JobId::random(), JobId::random());
        assert_eq!(a.as_str().len(), 32);
        assert!(a.as_str().chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn a_job_that_failed_keeps_its_error_and_end_time() {
        let lifecycle = JobLifecycle::running();
        assert_eq!((lifecycle.state(), lifecycle.end_time()), (JobState::Running, -1));
        lifecycle.cancelling();
        lifecycle.ended(&Err(Error::execution("boom")));
        assert_eq!(lifecycle.state(), JobState::Failed);
        assert!(lifecycle.end_time() >= lifecycle.start_time());
        assert!(lifecycle.exception().is_some_and(|e| e.message.contains("boom")));
    }
}
