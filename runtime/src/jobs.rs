//! The jobs of a process, as a watcher sees them: each job's id, name, state and times, its
//! vertices (operator chains) with their parallelism, inputs and live metrics, its checkpoint
//! statistics and exceptions, and the handle that stops it.
//!
//! [`crate::job::start`] describes every job it starts ([`JobTopology`], [`JobLifecycle`]);
//! whoever starts jobs registers them in a [`JobRegistry`], which a web server or a shell reads
//! without holding up the jobs: everything here is atomics and short locks, never a lock the
//! subtasks take while they process rows.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::clock::{Clock, SystemClock};

use parking_lot::{Mutex, RwLock};

use crate::checkpoint::stats::CheckpointStats;
use crate::checkpoint::{CheckpointConfig, CompletedCheckpoints};
use crate::error::{Error, Result};
use crate::graph::{Fnv, JobGraph, VertexId};
use crate::job::{JobCanceller, JobHandle, JobStatus};
use crate::metrics::{JobMetrics, SubtaskMetrics};
use crate::partition::ShipStrategy;

/// Milliseconds since the epoch, by the wall clock ([`SystemClock`]).
pub fn epoch_millis() -> i64 {
    SystemClock.now_millis()
}

/// A job's id: 32 hexadecimal digits, as Flink writes a `JobID`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(String);

impl JobId {
    /// A new id, different from every other this process makes.
    pub fn random() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let count = NEXT.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        let mixed = Fnv::of(&[&nanos.to_le_bytes(), &std::process::id().to_le_bytes(), &count.to_le_bytes()]);
        JobId(format!("{mixed:016x}{:016x}", Fnv::of(&[&mixed.to_le_bytes(), &count.to_le_bytes()])))
    }

    /// The id as Flink prints it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for JobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A job's state, named as Flink names a `JobStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// Its subtasks run.
    Running,
    /// Asked to stop; its subtasks are stopping.
    Cancelling,
    /// Every source ended and every row was processed, or it was stopped with a savepoint.
    Finished,
    /// Stopped before its end.
    Canceled,
    /// A subtask failed.
    Failed,
}

impl JobState {
    /// Flink's name (`RUNNING`, `CANCELLING`, `FINISHED`, `CANCELED`, `FAILED`).
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Running => "RUNNING",
            JobState::Cancelling => "CANCELLING",
            JobState::Finished => "FINISHED",
            JobState::Canceled => "CANCELED",
            JobState::Failed => "FAILED",
        }
    }

    /// Whether the job has ended.
    pub fn is_terminal(self) -> bool {
        match self {
            JobState::Running | JobState::Cancelling => false,
            JobState::Finished | JobState::Canceled | JobState::Failed => true,
        }
    }
}

/// An error a job failed with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobException {
    /// When (epoch milliseconds).
    pub timestamp: i64,
    /// The error's message.
    pub message: String,
}

/// A job's state over time, shared by the job's thread (which ends it) and its watchers.
#[derive(Debug)]
pub struct JobLifecycle {
    state: Mutex<JobState>,
    /// Set when the job is stopped with a savepoint: it ends `FINISHED`, as Flink's do.
    stopped_with_savepoint: std::sync::atomic::AtomicBool,
    start_time: i64,
    end_time: AtomicI64,
    exception: Mutex<Option<JobException>>,
}

impl JobLifecycle {
    pub(crate) fn running() -> Self {
        JobLifecycle {
            state: Mutex::new(JobState::Running),
            stopped_with_savepoint: std::sync::atomic::AtomicBool::new(false),
            start_time: epoch_millis(),
            end_time: AtomicI64::new(-1),
            exception: Mutex::new(None),
        }
    }

    /// The state now.
    pub fn state(&self) -> JobState {
        *self.state.lock()
    }

    /// When the job started (epoch milliseconds).
    pub fn start_time(&self) -> i64 {
        self.start_time
    }

    /// When it ended (epoch milliseconds), -1 while it runs.
    pub fn end_time(&self) -> i64 {
        self.end_time.load(Ordering::Acquire)
    }

    /// The error it failed with.
    pub fn exception(&self) -> Option<JobException> {
        self.exception.lock().clone()
    }

    /// A running job was asked to stop.
    pub(crate) fn cancelling(&self) {
        let mut state = self.state.lock();
        if *state == JobState::Running {
            *state = JobState::Cancelling;
        }
    }

    /// The job is being stopped with a savepoint: once it ends it is `FINISHED`, not `CANCELED`.
    pub(crate) fn stopping_with_savepoint(&self) {
        self.stopped_with_savepoint.store(true, Ordering::Release);
        self.cancelling();
    }

    /// A stop with a savepoint was refused before it began: the job runs on, as in Flink,
    /// unless it was cancelled meanwhile (`cancelled`).
    pub(crate) fn running_again(&self, cancelled: bool) {
        self.stopped_with_savepoint.store(false, Ordering::Release);
        let mut state = self.state.lock();
        if *state == JobState::Cancelling && !cancelled {
            *state = JobState::Running;
        }
    }

    /// The job's thread ended with `result`.
    pub(crate) fn ended(&self, result: &Result<JobStatus>) {
        let now = epoch_millis();
        let stopped = self.stopped_with_savepoint.load(Ordering::Acquire);
        let state = match result {
            Ok(JobStatus::Finished) => JobState::Finished,
            Ok(JobStatus::Cancelled) | Err(Error::Cancelled) if stopped => JobState::Finished,
            Ok(JobStatus::Cancelled) | Err(Error::Cancelled) => JobState::Canceled,
            Err(error) => {
                *self.exception.lock() = Some(JobException { timestamp: now, message: error.to_string() });
                JobState::Failed
            }
        };
        self.end_time.store(now, Ordering::Release);
        *self.state.lock() = state;
    }
}

/// An input of a vertex: the vertex it comes from and how rows are shipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VertexInput {
    /// Index of the sending vertex in [`JobTopology::vertices`].
    pub from: usize,
    /// Which input of the receiving chain's head (0, or 1 for a second input).
    pub input: usize,
    /// Flink's name of the ship strategy (`FORWARD`, `HASH`, `REBALANCE`, `BROADCAST`, `GLOBAL`).
    pub ship_strategy: &'static str,
}

/// A vertex as Flink's web UI shows it: one operator chain.
#[derive(Debug, Clone)]
pub struct VertexInfo {
    /// 32 hexadecimal digits, stable for the same plan.
    pub id: String,
    /// The chain's name, operators joined by ` -> `.
    pub name: String,
    /// The chained operators, head first.
    pub operators: Vec<String>,
    /// Their ids as metrics label them (32 hexadecimal digits, from the ids their state is
    /// checkpointed under), in the same order.
    pub operator_ids: Vec<String>,
    /// Its subtasks.
    pub parallelism: usize,
    /// Where its rows come from.
    pub inputs: Vec<VertexInput>,
    /// Each subtask's live metrics.
    pub subtasks: Vec<Arc<SubtaskMetrics>>,
}

/// The vertices of a running job, in deployment order (sources first).
#[derive(Debug, Clone, Default)]
pub struct JobTopology {
    /// One per operator chain.
    pub vertices: Vec<VertexInfo>,
}

impl JobTopology {
    /// The topology of `graph` deployed as `chains`, whose vertices have the stable ids `ids`
    /// ([`JobGraph::operator_ids`]), with each chain's subtask metrics.
    pub(crate) fn new(
        graph: &JobGraph,
        chains: &[Vec<VertexId>],
        ids: &[String],
        metrics: &[Vec<Arc<SubtaskMetrics>>],
    ) -> Self {
        let mut chain_of = vec![0; graph.vertices().len()];
        for (c, chain) in chains.iter().enumerate() {
            chain.iter().for_each(|v| chain_of[v.0] = c);
        }
        let vertices = chains
            .iter()
            .enumerate()
            .map(|(c, chain)| {
                let head = chain[0];
                let operators: Vec<String> = chain.iter().map(|v| graph.vertex(*v).name.clone()).collect();
                let key = ids.get(head.0).map_or(&[][..], |id| id.as_bytes());
                let hex =
                    |id: &str| format!("{:016x}{:016x}", Fnv::of(&[id.as_bytes()]), Fnv::of(&[b"op", id.as_bytes()]));
                let operator_ids = chain.iter().map(|v| hex(ids.get(v.0).map_or("", String::as_str))).collect();
                let inputs = graph
                    .inputs_of(head)
                    .map(|e| VertexInput {
                        from: chain_of[e.from.0],
                        input: e.input,
                        ship_strategy: ship_strategy(&e.strategy),
                    })
                    .collect();
                VertexInfo {
                    id: format!("{:016x}{:016x}", Fnv::of(&[key]), Fnv::of(&[key, &(c as u64).to_le_bytes()])),
                    name: operators.join(" -> "),
                    operators,
                    operator_ids,
                    parallelism: graph.vertex(head).parallelism,
                    inputs,
                    subtasks: metrics.get(c).cloned().unwrap_or_default(),
                }
            })
            .collect();
        JobTopology { vertices }
    }
}

/// Flink's name of a ship strategy, as its web UI labels an edge.
pub fn ship_strategy(strategy: &ShipStrategy) -> &'static str {
    match strategy {
        ShipStrategy::Forward => "FORWARD",
        ShipStrategy::Hash(_) => "HASH",
        ShipStrategy::Rebalance => "REBALANCE",
        ShipStrategy::Broadcast => "BROADCAST",
        ShipStrategy::Single => "GLOBAL",
    }
}

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
