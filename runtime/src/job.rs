//! Running a job graph: deployment on a fixed pool of worker threads, completion, failure
//! and cancellation.
//!
//! A job runs on `execution.worker-threads` threads, whatever its parallelism: the job's own
//! thread plus one thread per further worker, each an actix system. Every subtask of
//! every chain is an actor placed round-robin on these threads. The job ends when every
//! actor has stopped: finished (all input ended), cancelled, or because one subtask failed,
//! in which case every other actor stops too and the caller gets that subtask's error.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use actix::prelude::*;
use parking_lot::Mutex;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::actor::{
    CheckpointComplete, JobShared, OutputEdge, SubtaskActor, SubtaskEvent, SubtaskSpec, Target, TriggerCheckpoint,
};
use crate::chain::{Chain, ChainedOperator, ChainedSource};
use crate::checkpoint::coordinator::CheckpointCoordinator;
use crate::checkpoint::restore::RestorePlan;
use crate::checkpoint::{CheckpointingMode, CompletedCheckpoint, CompletedCheckpoints, StateReader};
use crate::config::RuntimeConfig;
use crate::error::{Error, Result};
use crate::graph::{JobGraph, VertexId, VertexKind};
use crate::ids::JobId;
pub use crate::lifecycle::JobStatus;
use crate::lifecycle::{JobLifecycle, JobTopology};
use crate::memory::MemoryGuard;
use crate::metrics::{JobMetrics, SubtaskMetrics};
use crate::operator::{OperatorContext, SubtaskInfo};
use crate::partition::Partitioner;
use crate::state::StateBackend;

/// A running job: cancel it, read its metrics, wait for its end.
///
/// Dropping the handle cancels the job and waits for it to stop.
#[derive(Debug)]
pub struct JobHandle {
    thread: Option<JoinHandle<Result<JobStatus>>>,
    token: CancellationToken,
    metrics: JobMetrics,
    started: std::time::Instant,
    commands: UnboundedSender<JobCommand>,
    checkpoints: Arc<Mutex<CompletedCheckpoints>>,
    /// Where the job writes its checkpoints, if it does.
    checkpoint_dir: Option<PathBuf>,
    id: JobId,
    lifecycle: Arc<JobLifecycle>,
    topology: JobTopology,
}

/// What a [`JobHandle`] asks of its running job.
#[derive(Debug)]
enum JobCommand {
    /// Take a checkpoint now, telling its id to the sender, if any.
    Checkpoint(CheckpointingMode, Option<Reply>),
    /// Take the savepoint that stops the job, telling its id to the sender: no checkpoint
    /// starts after it, so no sink commits what the savepoint does not hold.
    Savepoint(Reply),
    /// End every source now, as if it had run out (a final watermark, then the end of its
    /// input), telling the sender the id of the last checkpoint begun: none begins after it,
    /// so the next to complete is the job's final checkpoint, taken once every subtask finished.
    Drain(Reply),
}

/// Where the job tells a checkpoint's id, or why it takes none.
type Reply = std::sync::mpsc::Sender<Result<u64>>;

impl JobCommand {
    /// Where the command's answer goes, if anywhere.
    fn into_reply(self) -> Option<Reply> {
        match self {
            JobCommand::Checkpoint(_, reply) => reply,
            JobCommand::Savepoint(reply) | JobCommand::Drain(reply) => Some(reply),
        }
    }
}

/// Why a job without periodic checkpoints takes no checkpoint once a subtask has finished: it
/// kept no state of the subtasks that finished, and a checkpoint without them would restore
/// them from their beginning.
fn finished_tasks_refusal() -> Error {
    Error::execution(
        "Some tasks of the job have already finished and checkpointing with finished tasks is not enabled: \
         a job without execution.checkpointing.interval keeps no state of its finished tasks. Set \
         execution.checkpointing.interval before starting the job to take savepoints after some of its sources ended.",
    )
}

impl JobHandle {
    /// When the job was started.
    pub fn started(&self) -> std::time::Instant {
        self.started
    }

    /// The job's id, unique in this process.
    pub fn id(&self) -> &JobId {
        &self.id
    }

    /// The job's state and times, updated by the job itself when it ends.
    pub fn lifecycle(&self) -> &Arc<JobLifecycle> {
        &self.lifecycle
    }

    /// The job's vertices (operator chains), their inputs and live metrics.
    pub fn topology(&self) -> &JobTopology {
        &self.topology
    }

    /// The job's completed checkpoints and their statistics, shared and live.
    pub fn checkpoint_history(&self) -> Arc<Mutex<CompletedCheckpoints>> {
        Arc::clone(&self.checkpoints)
    }

    /// Asks every subtask to stop. Returns at once; [`JobHandle::wait`] then returns
    /// [`JobStatus::Cancelled`] (or the error of a subtask that failed before).
    pub fn cancel(&self) {
        self.lifecycle.cancelling();
        self.token.cancel();
    }

    /// A cloneable way to cancel this job from elsewhere (another thread, a signal handler).
    pub fn canceller(&self) -> JobCanceller {
        JobCanceller {
            token: self.token.clone(),
            commands: self.commands.clone(),
            checkpoints: Arc::clone(&self.checkpoints),
            checkpoint_dir: self.checkpoint_dir.clone(),
            lifecycle: Arc::clone(&self.lifecycle),
        }
    }

    /// Stops the job with a savepoint: takes a checkpoint, writes it into `dir` as
    /// `savepoint-<id>-<name>` and cancels the job; see [`JobCanceller::stop_with_savepoint`].
    ///
    /// # Errors
    /// As [`JobCanceller::stop_with_savepoint`].
    pub fn stop_with_savepoint(&self, dir: &Path, name: &str, timeout: Duration) -> Result<Option<PathBuf>> {
        self.canceller().stop_with_savepoint(dir, name, timeout)
    }

    /// Starts a checkpoint: the running sources take their part and send its barrier through
    /// the job; it completes when every running subtask has taken its part (see
    /// [`JobHandle::completed_checkpoints`]). Does nothing once the job has ended.
    pub fn trigger_checkpoint(&self, mode: CheckpointingMode) {
        let _ = self.commands.send(JobCommand::Checkpoint(mode, None));
    }

    /// The newest completed checkpoints, oldest first: `execution.checkpointing.num-retained`
    /// of them (older ones are let go); read from the checkpoint directory when the job writes
    /// them there.
    pub fn completed_checkpoints(&self) -> Vec<CompletedCheckpoint> {
        match &self.checkpoint_dir {
            Some(dir) => crate::checkpoint::storage::read_all(dir),
            None => self.checkpoints.lock().retained.clone(),
        }
    }

    /// How many checkpoints have completed.
    pub fn completed_count(&self) -> u64 {
        self.checkpoints.lock().count
    }

    /// The job's metrics, live while it runs and final after it ends.
    pub fn metrics(&self) -> &JobMetrics {
        &self.metrics
    }

    /// Whether every subtask has stopped.
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Blocks until the job ends.
    ///
    /// # Errors
    /// The error of the first subtask that failed.
    pub fn wait(mut self) -> Result<JobStatus> {
        self.join()
    }

    fn join(&mut self) -> Result<JobStatus> {
        match self.thread.take() {
            Some(thread) => thread.join().unwrap_or_else(|_| Err(Error::execution("the job's thread panicked"))),
            None => Ok(JobStatus::Cancelled),
        }
    }
}

impl Drop for JobHandle {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.token.cancel();
            let _ = self.join();
        }
    }
}

/// The stack of every thread that runs a job's subtasks. Operators evaluate expressions
/// recursively, a level per node, and machine-generated SQL has expressions thousands of nodes
/// deep (a flat chain of `+`); only the pages they touch are used.
pub const OPERATOR_STACK: usize = 256 << 20;

/// The stack worker threads get: [`OPERATOR_STACK`], or a 32nd of the address space left when
/// `ulimit -v` would not leave room for stacks that big (each thread reserves its stack in full
/// there).
pub fn operator_stack() -> usize {
    crate::memory::stack_size(OPERATOR_STACK, 32)
}

/// Cancels a job, or stops it with a savepoint; cloneable and sendable.
#[derive(Debug, Clone)]
pub struct JobCanceller {
    token: CancellationToken,
    commands: UnboundedSender<JobCommand>,
    checkpoints: Arc<Mutex<CompletedCheckpoints>>,
    checkpoint_dir: Option<PathBuf>,
    lifecycle: Arc<JobLifecycle>,
}

impl JobCanceller {
    /// Asks every subtask of the job to stop (see [`JobHandle::cancel`]).
    pub fn cancel(&self) {
        self.lifecycle.cancelling();
        self.token.cancel();
    }

    /// Takes a savepoint and lets the job run on: a checkpoint triggered now, written into
    /// `dir` as `savepoint-<id>-<name>` once it completes. Returns its path; `None` when the
    /// job ended first.
    ///
    /// # Errors
    /// The checkpoint did not complete within `timeout`, or the savepoint cannot be written.
    pub fn savepoint(&self, dir: &Path, name: &str, timeout: Duration) -> Result<Option<PathBuf>> {
        let (reply, triggered) = std::sync::mpsc::channel();
        if self.commands.send(JobCommand::Checkpoint(CheckpointingMode::ExactlyOnce, Some(reply))).is_err() {
            return Ok(None);
        }
        let Ok(id) = triggered.recv_timeout(timeout) else { return Ok(None) };
        let Some(checkpoint) = self.await_checkpoint(id?, Instant::now() + timeout, name, timeout, false)? else {
            return Ok(None);
        };
        crate::checkpoint::storage::write_savepoint(dir, name, &checkpoint).map(Some).map_err(|e| {
            Error::execution(format!("Cannot write the savepoint of job '{name}' into '{}': {e}", dir.display()))
        })
    }

    /// Waits until checkpoint `id` (or a later one) completed and returns the newest; `None`
    /// when the job ended first. Past `deadline`, fails (cancelling the job when `cancel`).
    fn await_checkpoint(
        &self,
        id: u64,
        deadline: Instant,
        name: &str,
        timeout: Duration,
        cancel: bool,
    ) -> Result<Option<CompletedCheckpoint>> {
        loop {
            if self.checkpoints.lock().latest_id >= id {
                return Ok(match &self.checkpoint_dir {
                    Some(dir) => crate::checkpoint::storage::read_latest(dir),
                    None => self.checkpoints.lock().retained.last().cloned(),
                });
            }
            if self.commands.is_closed() {
                return Ok(None);
            }
            if Instant::now() >= deadline {
                if cancel {
                    self.cancel();
                }
                let what = if cancel { "; the job was cancelled" } else { "" };
                return Err(Error::execution(format!(
                    "The savepoint of job '{name}' did not complete within {} ms{what}.",
                    timeout.as_millis()
                )));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Stops the job with a savepoint: takes a checkpoint (exactly once; the one triggered now,
    /// never one begun before the request, and no checkpoint begins after it, so no sink commits
    /// what the savepoint does not hold; should the job finish first, its final checkpoint
    /// is the savepoint), writes it into
    /// `dir` as `savepoint-<id>-<name>` (a snapshot directory `execution.state-recovery.path`
    /// restores from, kept whatever the retention), then cancels the job. Sinks that commit on
    /// checkpoints commit what the savepoint holds; what the job did after it is done again by
    /// a job restored from it. Returns the savepoint's path; `None` when the job ended first.
    ///
    /// # Errors
    /// The checkpoint did not complete within `timeout`, or the savepoint cannot be written:
    /// the job is cancelled then too.
    pub fn stop_with_savepoint(&self, dir: &Path, name: &str, timeout: Duration) -> Result<Option<PathBuf>> {
        let (reply, triggered) = std::sync::mpsc::channel();
        self.lifecycle.stopping_with_savepoint();
        if self.commands.send(JobCommand::Savepoint(reply)).is_err() {
            return Ok(None);
        }
        let deadline = Instant::now() + timeout;
        // The savepoint is the checkpoint triggered now (or the final one, should the job end).
        let Ok(id) = triggered.recv_timeout(timeout) else { return Ok(None) };
        let id = id.inspect_err(|_| self.lifecycle.running_again(self.token.is_cancelled()))?;
        let checkpoint = self.await_checkpoint(id, deadline, name, timeout, true)?;
        let written = checkpoint.map(|c| crate::checkpoint::storage::write_savepoint(dir, name, &c));
        self.cancel();
        match written {
            Some(Ok(path)) => Ok(Some(path)),
            Some(Err(e)) => Err(Error::execution(format!(
                "Cannot write the savepoint of job '{name}' into '{}': {e}",
                dir.display()
            ))),
            None => Ok(None),
        }
    }
}

impl JobCanceller {
    /// Stops the job as Flink's stop with savepoint and `--drain` does: every source ends now,
    /// as if it had run out, so event time ends (every window and event-time timer fires) and
    /// every operator ends its input; the job's final checkpoint, taken once every subtask has
    /// finished, is written into `dir` as `savepoint-<id>-<name>`, and the job ends finished.
    /// Returns the savepoint's path; `None` when the job ended before the request reached it.
    ///
    /// # Errors
    /// The job did not finish within `timeout` (it is cancelled then), or the savepoint cannot
    /// be written.
    pub fn drain_with_savepoint(&self, dir: &Path, name: &str, timeout: Duration) -> Result<Option<PathBuf>> {
        let (reply, drained) = std::sync::mpsc::channel();
        self.lifecycle.stopping_with_savepoint();
        if self.commands.send(JobCommand::Drain(reply)).is_err() {
            return Ok(None);
        }
        let deadline = Instant::now() + timeout;
        let Ok(last_begun) = drained.recv_timeout(timeout) else { return Ok(None) };
        let last_begun = last_begun.inspect_err(|_| self.lifecycle.running_again(self.token.is_cancelled()))?;
        let Some(checkpoint) = self.await_checkpoint(last_begun + 1, deadline, name, timeout, true)? else {
            return Ok(None);
        };
        crate::checkpoint::storage::write_savepoint(dir, name, &checkpoint).map(Some).map_err(|e| {
            Error::execution(format!("Cannot write the savepoint of job '{name}' into '{}': {e}", dir.display()))
        })
    }
}

/// Runs `graph` to its end.
///
/// # Errors
/// An invalid graph, or the error of the first subtask that failed.
pub fn run(graph: JobGraph, config: RuntimeConfig) -> Result<JobStatus> {
    start(graph, config)?.wait()
}

/// Starts `graph` and returns at once.
///
/// # Errors
/// [`Error::InvalidGraph`] when the graph cannot run; [`Error::Startup`] when threads cannot start.
pub fn start(graph: JobGraph, config: RuntimeConfig) -> Result<JobHandle> {
    graph.validate()?;
    check_max_parallelism(&graph, config.max_parallelism)?;
    let plan = DeploymentPlan::new(&graph)?;
    let token = CancellationToken::new();
    // Every subtask's states share the job's backend, opened before the job starts: a
    // directory it cannot make fails the start.
    let slots = plan.chains.iter().map(|c| graph.vertex(c[0]).parallelism).max().unwrap_or(1);
    let state_files = match &config.checkpointing.dir {
        Some(dir) => Some(std::path::absolute(dir.join(crate::checkpoint::SHARED_DIR))?),
        None => None,
    };
    let state_backend = config.state_backend.open(slots, state_files)?;
    // The checkpoint directory of a job that checkpoints is locked while the job runs: a later
    // run of the same name tidies the directories of runs whose lock is free (killed or ended),
    // never a live one's.
    let checkpoint_lock = match (&config.checkpointing.dir, config.checkpointing.interval) {
        (Some(dir), Some(_)) => Some(crate::checkpoint::storage::lock_run_directory(dir)?),
        _ => None,
    };
    let mut metrics = JobMetrics::default().with_state(&state_backend);
    let mut subtask_metrics = Vec::new();
    for chain in &plan.chains {
        let name = chain_name(&graph, chain);
        let parallelism = graph.vertex(chain[0]).parallelism;
        let is_source = matches!(graph.vertex(chain[0]).kind, crate::graph::VertexKind::Source(_));
        let is_sink = chain.last().is_some_and(|&last| graph.outputs_of(last).next().is_none());
        let per_subtask: Vec<Arc<SubtaskMetrics>> = (0..parallelism)
            .map(|i| Arc::new(SubtaskMetrics::new(name.clone(), i, parallelism).with_role(is_source, is_sink)))
            .collect();
        per_subtask.iter().for_each(|m| metrics.push(Arc::clone(m)));
        subtask_metrics.push(per_subtask);
    }
    let job_token = token.clone();
    let (commands, commands_rx) = unbounded_channel();
    let checkpoints = Arc::new(Mutex::new(CompletedCheckpoints::default()));
    let checkpoint_dir = config.checkpointing.dir.clone();
    let id = config.job_id.clone().unwrap_or_else(JobId::random);
    let coordinator = CheckpointCoordinator::new(config.checkpointing.clone(), Arc::clone(&checkpoints));
    let control = Control { commands: commands_rx, coordinator, state_backend };
    let topology = JobTopology::new(&graph, &plan.chains, &plan.operator_ids, &subtask_metrics);
    let lifecycle = Arc::new(JobLifecycle::running());
    let ends = Arc::clone(&lifecycle);
    let thread = std::thread::Builder::new().name("weir-job".into()).stack_size(operator_stack()).spawn(move || {
        let result = run_on_workers(graph, plan, config, job_token, subtask_metrics, control);
        drop(checkpoint_lock);
        ends.ended(&result);
        result
    })?;
    Ok(JobHandle {
        thread: Some(thread),
        token,
        metrics,
        started: std::time::Instant::now(),
        commands,
        checkpoints,
        checkpoint_dir,
        id,
        lifecycle,
        topology,
    })
}

fn chain_name(graph: &JobGraph, chain: &[VertexId]) -> String {
    chain.iter().map(|v| graph.vertex(*v).name.as_str()).collect::<Vec<_>>().join(" -> ")
}

/// Which chain each vertex belongs to and how channels are numbered at each receiver.
struct DeploymentPlan {
    chains: Vec<Vec<VertexId>>,
    chain_of: Vec<usize>,
    /// `(edge index, sender subtask, receiver subtask)` → channel number at the receiver.
    channels: HashMap<(usize, usize, usize), u32>,
    /// Input port of every channel of every receiving subtask, per chain.
    inputs: Vec<Vec<Vec<usize>>>,
    /// The sender `(chain, subtask)` of every channel of every receiving subtask, per chain.
    senders: Vec<Vec<Vec<(usize, usize)>>>,
    /// Every vertex's stable id ([`JobGraph::operator_ids`]), by vertex.
    operator_ids: Vec<String>,
}

impl DeploymentPlan {
    fn new(graph: &JobGraph) -> Result<Self> {
        let chains = graph.chains()?;
        let mut chain_of = vec![0; graph.vertices().len()];
        for (c, chain) in chains.iter().enumerate() {
            chain.iter().for_each(|v| chain_of[v.0] = c);
        }
        let mut channels = HashMap::new();
        let mut inputs = Vec::with_capacity(chains.len());
        let mut senders = Vec::with_capacity(chains.len());
        for chain in &chains {
            let head = chain[0];
            let parallelism = graph.vertex(head).parallelism;
            let mut per_subtask = vec![Vec::new(); parallelism];
            let mut sent_by = vec![Vec::new(); parallelism];
            for (e, edge) in graph.edges().iter().enumerate().filter(|(_, e)| e.to == head) {
                let sending = graph.vertex(edge.from).parallelism;
                for (r, (ports, from)) in per_subtask.iter_mut().zip(&mut sent_by).enumerate() {
                    for s in (0..sending).filter(|&s| edge.strategy.connects(s, r)) {
                        channels.insert((e, s, r), ports.len() as u32);
                        ports.push(edge.input);
                        from.push((chain_of[edge.from.0], s));
                    }
                }
            }
            inputs.push(per_subtask);
            senders.push(sent_by);
        }
        let operator_ids = graph.operator_ids()?;
        Ok(DeploymentPlan { chains, chain_of, channels, inputs, senders, operator_ids })
    }
}

/// A worker thread of a job beyond its first: an actix system of its own, on a thread with
/// [`operator_stack`] bytes of stack.
struct Worker {
    arbiter: ArbiterHandle,
    system: actix_rt::System,
    thread: JoinHandle<()>,
}

impl Worker {
    /// Starts worker `n`; the system refusing a thread (too many threads, no memory for a
    /// stack) is [`Error::Startup`].
    fn start(n: usize) -> Result<Worker> {
        let (started, handles) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new().name(format!("weir-worker-{n}")).stack_size(operator_stack()).spawn(
            move || {
                let system = actix_rt::System::new();
                let _ = started.send((Arbiter::current(), actix_rt::System::current()));
                let _ = system.run();
            },
        )?;
        let (arbiter, system) =
            handles.recv().map_err(|_| std::io::Error::other(format!("worker thread {n} ended as it started")))?;
        Ok(Worker { arbiter, system, thread })
    }

    /// Stops the worker's system and waits for its thread.
    fn stop(self) {
        self.system.stop();
        let _ = self.thread.join();
    }
}

/// Starts workers `first` to `first + count - 1`, or none: those already started are stopped
/// when one fails.
fn start_workers(first: usize, count: usize) -> Result<Vec<Worker>> {
    let mut workers = Vec::with_capacity(count);
    for n in first..first + count {
        match Worker::start(n) {
            Ok(worker) => workers.push(worker),
            Err(error) => {
                workers.into_iter().for_each(Worker::stop);
                return Err(error);
            }
        }
    }
    Ok(workers)
}

/// The job's thread: starts the workers and actors, waits for every actor to stop.
fn run_on_workers(
    graph: JobGraph,
    plan: DeploymentPlan,
    config: RuntimeConfig,
    token: CancellationToken,
    metrics: Vec<Vec<Arc<SubtaskMetrics>>>,
    control: Control,
) -> Result<JobStatus> {
    let system = actix_rt::System::new();
    let started = Instant::now();
    // A job writing checkpoints to disk runs no subtask on its own thread, which writes them:
    // a write never holds up the subtasks.
    let own_thread_works = config.checkpointing.dir.is_none();
    let (result, others) = system.block_on(async move {
        let (first, count) = if own_thread_works { (2, config.worker_threads - 1) } else { (1, config.worker_threads) };
        let others = match start_workers(first, count) {
            Ok(others) => others,
            Err(error) => return (Err(error), Vec::new()),
        };
        let own = own_thread_works.then(Arbiter::current);
        let workers: Vec<ArbiterHandle> = own.into_iter().chain(others.iter().map(|w| w.arbiter.clone())).collect();
        let result = deploy_and_wait(&graph, &plan, &config, token, metrics, &workers, control).await;
        (result, others)
    });
    others.into_iter().for_each(Worker::stop);
    tracing::info!(elapsed_ms = started.elapsed().as_millis() as u64, ok = result.is_ok(), "job ended");
    result
}

async fn deploy_and_wait(
    graph: &JobGraph,
    plan: &DeploymentPlan,
    config: &RuntimeConfig,
    token: CancellationToken,
    metrics: Vec<Vec<Arc<SubtaskMetrics>>>,
    workers: &[ArbiterHandle],
    mut control: Control,
) -> Result<JobStatus> {
    let (events, mut events_rx) = unbounded_channel();
    let shared = Arc::new(JobShared {
        token: token.clone(),
        events,
        clock: Arc::clone(&config.clock),
        idle_timeout: config.idle_timeout,
        memory: config.effective_memory_limit().and_then(MemoryGuard::new),
        final_snapshots: AtomicBool::new(config.checkpointing.interval.is_some()),
    });
    let mailboxes: Vec<Vec<Arc<Semaphore>>> = plan
        .chains
        .iter()
        .map(|c| {
            let parallelism = graph.vertex(c[0]).parallelism;
            (0..parallelism).map(|_| Arc::new(Semaphore::new(config.mailbox_capacity))).collect()
        })
        .collect();
    let operator_ids = &plan.operator_ids;
    let restore = match &config.checkpointing.restore {
        Some(r) => Some(RestorePlan::new(&r.checkpoint, operator_ids, r.ignore_unclaimed_state)?),
        None => None,
    };
    let mut addrs: Vec<Vec<Addr<SubtaskActor>>> = vec![Vec::new(); plan.chains.len()];
    // Every subtask's chain, built and restored before any starts: a receiver must know which
    // of its senders will emit nothing.
    let mut built: Vec<Vec<Option<(SubtaskInfo, Chain, Vec<String>)>>> = Vec::with_capacity(plan.chains.len());
    for (c, chain) in plan.chains.iter().enumerate() {
        let parallelism = graph.vertex(chain[0]).parallelism;
        let mut subtasks = Vec::with_capacity(parallelism);
        for (index, subtask_metrics) in metrics[c].iter().enumerate() {
            let info = SubtaskInfo::new(chain_name(graph, chain), index, parallelism)
                .with_max_parallelism(config.max_parallelism)
                .with_state_backend(control.state_backend.clone());
            let mut chain_built = build_chain(graph, chain, &info, config, subtask_metrics);
            let ids: Vec<String> = chain.iter().map(|v| operator_ids[v.0].clone()).collect();
            let states: Vec<Vec<StateReader>> = match &restore {
                Some(plan) => ids.iter().map(|id| plan.states_for(id)).collect(),
                None => Vec::new(),
            };
            chain_built.restore(&states)?;
            // Sources open before any subtask starts: one that knows only once open that it
            // will emit nothing is left out of its receivers' watermarks from the first row on.
            chain_built.open_source()?;
            subtasks.push(Some((info, chain_built, ids)));
        }
        built.push(subtasks);
    }
    let mut silent: Vec<Vec<bool>> = built
        .iter()
        .map(|subtasks| {
            subtasks.iter().map(|s| s.as_ref().is_some_and(|(_, chain, _)| chain.emits_nothing())).collect()
        })
        .collect();
    // A subtask whose every input channel comes from a silent sender emits nothing either.
    loop {
        let mut changed = false;
        for c in 0..plan.chains.len() {
            for index in 0..silent[c].len() {
                let channels = silent_channels(plan, c, index, &silent);
                if !silent[c][index] && !channels.is_empty() && channels.iter().all(|&s| s) {
                    silent[c][index] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut total = 0;
    // Receivers first, so that every sender starts knowing its receivers' addresses.
    for (c, chain) in plan.chains.iter().enumerate().rev() {
        for (index, subtask_metrics) in metrics[c].iter().enumerate() {
            let Some((info, chain_built, ids)) = built[c][index].take() else { continue };
            let (edges, targets) = connect_outputs(graph, plan, chain, index, &addrs, &mailboxes, config);
            let inputs = match graph.vertex(chain[0]).kind {
                VertexKind::Source(_) => None,
                VertexKind::Operator(_) => Some(plan.inputs[c][index].clone()),
            };
            let silent_inputs = silent_channels(plan, c, index, &silent);
            let spec = SubtaskSpec {
                chain: chain_built,
                chain_index: c,
                operator_ids: ids,
                inputs,
                silent_inputs,
                info,
                edges,
                targets,
                metrics: Arc::clone(subtask_metrics),
                shared: Arc::clone(&shared),
            };
            let worker = &workers[total % workers.len()];
            total += 1;
            addrs[c].push(SubtaskActor::start_in_arbiter(worker, move |_| SubtaskActor::new(spec)));
        }
    }
    tracing::info!(chains = plan.chains.len(), subtasks = total, workers = workers.len(), "job deployed");
    let sources: Vec<Addr<SubtaskActor>> = plan
        .chains
        .iter()
        .zip(&addrs)
        .filter(|(chain, _)| matches!(graph.vertex(chain[0]).kind, VertexKind::Source(_)))
        .flat_map(|(_, a)| a.iter().cloned())
        .collect();
    let mut stopped = 0;
    let mut first_error = None;
    let clock = Arc::clone(&config.clock);
    let started = clock.now_millis();
    let coordinator = &mut control.coordinator;
    while stopped < total {
        let due = coordinator.next_wakeup(started);
        let tick = async {
            match due {
                Some(at) => clock.sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let (mode, reply) = tokio::select! {
            // Events first: a command sees every subtask that had stopped when it came.
            biased;
            event = events_rx.recv() => {
                let now = clock.now_millis();
                match event {
                    Some(SubtaskEvent::Failed(error)) => {
                        first_error.get_or_insert(error);
                        token.cancel();
                    }
                    Some(SubtaskEvent::Stopped) => stopped += 1,
                    Some(SubtaskEvent::Snapshot { checkpoint, vertex, subtask, states }) => {
                        if let Some(done) = coordinator.add(now, checkpoint, vertex, subtask, states) {
                            notify_complete(&addrs, coordinator, done);
                        }
                    }
                    Some(SubtaskEvent::Aborted(checkpoint)) => coordinator.abort(checkpoint),
                    Some(SubtaskEvent::Finished { vertex, subtask, states }) => {
                        for done in coordinator.finished(now, vertex, subtask, states) {
                            notify_complete(&addrs, coordinator, done);
                        }
                        // Every subtask has finished: the final checkpoint holds them all, and
                        // the subtasks stop once they have heard of it.
                        if coordinator.finished_count() == total {
                            match coordinator.final_checkpoint(now) {
                                Ok(done) => notify_complete(&addrs, coordinator, done),
                                Err(error) => {
                                    first_error.get_or_insert(error);
                                    token.cancel();
                                }
                            }
                        }
                    }
                    None => break,
                }
                continue;
            }
            Some(command) = control.commands.recv() => {
                // Once the savepoint that stops the job has begun, nothing follows it.
                if coordinator.is_stopping() {
                    continue;
                }
                // Without final snapshots, a subtask that finished left no state behind.
                if stopped > 0 && !shared.final_snapshots.load(Ordering::SeqCst) {
                    tracing::warn!(stopped, "checkpoint refused: subtasks finished without final snapshots");
                    if let Some(reply) = command.into_reply() {
                        let _ = reply.send(Err(finished_tasks_refusal()));
                    }
                    continue;
                }
                match command {
                    JobCommand::Checkpoint(mode, reply) => (mode, reply),
                    JobCommand::Savepoint(reply) => {
                        coordinator.stop_after_next();
                        (CheckpointingMode::ExactlyOnce, Some(reply))
                    }
                    JobCommand::Drain(reply) => {
                        coordinator.stop_after_next();
                        // Every subtask finishes from now on: each reports its final state,
                        // which the final checkpoint (the savepoint) holds.
                        shared.final_snapshots.store(true, Ordering::SeqCst);
                        sources.iter().for_each(|s| s.do_send(crate::actor::EndInput));
                        let _ = reply.send(Ok(coordinator.last_begun()));
                        continue;
                    }
                }
            }
            () = tick => {
                coordinator.expire(clock.now_millis());
                if !coordinator.may_trigger() {
                    continue;
                }
                (coordinator.mode(), None)
            }
        };
        let now = clock.now_millis();
        coordinator.expire(now);
        // Subtasks that stopped, or finished and will stop, take no part (their final state does).
        let running = total - stopped.max(coordinator.finished_count());
        let barrier = coordinator.begin(now, running, mode);
        sources.iter().for_each(|s| s.do_send(TriggerCheckpoint(barrier)));
        if let Some(reply) = reply {
            let _ = reply.send(Ok(barrier.id));
        }
    }
    drop(addrs);
    let cancelled = token.is_cancelled();
    coordinator.job_ended(first_error.is_none() && !cancelled, first_error.is_none() && cancelled);
    match first_error {
        Some(error) => Err(error),
        None if token.is_cancelled() => Ok(JobStatus::Cancelled),
        None => Ok(JobStatus::Finished),
    }
}

/// Tells every subtask that checkpoint `id` is complete, and each finished subtask whether it
/// holds its final state.
fn notify_complete(addrs: &[Vec<Addr<SubtaskActor>>], coordinator: &CheckpointCoordinator, id: u64) {
    for (chain, subtasks) in addrs.iter().enumerate() {
        for (index, addr) in subtasks.iter().enumerate() {
            addr.do_send(CheckpointComplete {
                id,
                holds_final_state: coordinator.holds_final_state((chain, index), id),
            });
        }
    }
}

/// What the job's thread takes from its handle: commands, the checkpoints it tracks, and the
/// state backend its subtasks share.
struct Control {
    commands: UnboundedReceiver<JobCommand>,
    coordinator: CheckpointCoordinator,
    state_backend: StateBackend,
}

/// The output edges of subtask `index` of `chain` and the receivers they reach.
fn connect_outputs(
    graph: &JobGraph,
    plan: &DeploymentPlan,
    chain: &[VertexId],
    index: usize,
    addrs: &[Vec<Addr<SubtaskActor>>],
    mailboxes: &[Vec<Arc<Semaphore>>],
    config: &RuntimeConfig,
) -> (Vec<OutputEdge>, Vec<Target>) {
    let tail = chain[chain.len() - 1];
    let mut targets = Vec::new();
    let mut edges = Vec::new();
    for (e, edge) in graph.edges().iter().enumerate().filter(|(_, e)| e.from == tail) {
        let rc = plan.chain_of[edge.to.0];
        let receivers = graph.vertex(edge.to).parallelism;
        let by_receiver = (0..receivers)
            .map(|r| {
                plan.channels.get(&(e, index, r)).map(|&channel| {
                    targets.push(Target {
                        addr: addrs[rc][r].clone(),
                        mailbox: Arc::clone(&mailboxes[rc][r]),
                        channel,
                    });
                    targets.len() - 1
                })
            })
            .collect();
        edges.push(OutputEdge {
            partitioner: Partitioner::new(edge.strategy.clone(), index, receivers)
                .with_max_parallelism(config.max_parallelism),
            targets: by_receiver,
        });
    }
    (edges, targets)
}

/// Per input channel of subtask `index` of chain `c`, whether its sender emits nothing
/// (`silent[chain][subtask]`).
fn silent_channels(plan: &DeploymentPlan, c: usize, index: usize, silent: &[Vec<bool>]) -> Vec<bool> {
    plan.senders[c][index].iter().map(|&(chain, sender)| silent[chain][sender]).collect()
}

/// Refuses a vertex whose parallelism exceeds `pipeline.max-parallelism` (it would own no key
/// group), with Flink's message.
fn check_max_parallelism(graph: &JobGraph, max_parallelism: Option<usize>) -> Result<()> {
    let Some(max) = max_parallelism else { return Ok(()) };
    match graph.vertices().iter().find(|v| v.parallelism > max) {
        Some(v) => Err(Error::InvalidGraph(format!(
            "Vertex {}'s parallelism ({}) is higher than the max parallelism ({max}). Please lower the parallelism \
             or increase the max parallelism.",
            v.name, v.parallelism
        ))),
        None => Ok(()),
    }
}

/// Instantiates the operators of one subtask of `chain`.
fn build_chain(
    graph: &JobGraph,
    chain: &[VertexId],
    info: &SubtaskInfo,
    config: &RuntimeConfig,
    metrics: &SubtaskMetrics,
) -> Chain {
    let context = |v: VertexId| {
        let name = &graph.vertex(v).name;
        let vertex_info = SubtaskInfo { vertex: name.clone(), ..info.clone() };
        OperatorContext::new(vertex_info, Arc::clone(&config.clock), config.chunk_size)
            .with_bundle_metrics(metrics.bundle_metrics(name))
            .with_checkpointing(config.checkpointing.interval.is_some())
    };
    let mut source = None;
    let mut ops = Vec::new();
    for &v in chain {
        let ctx = context(v);
        match &graph.vertex(v).kind {
            VertexKind::Source(factory) => source = Some(ChainedSource::new(factory(ctx.subtask()), ctx)),
            VertexKind::Operator(factory) => ops.push(ChainedOperator::new(factory(ctx.subtask()), ctx)),
        }
    }
    Chain::new(info.clone(), source, ops)
}
