//! A job as a watcher sees it, apart from the handle that stops it: how it ended ([`JobStatus`]),
//! its state and times ([`JobLifecycle`]) and its vertices ([`JobTopology`]). [`crate::job`] fills
//! these in; [`crate::jobs`] lists them.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::clock::epoch_millis;
use crate::error::{Error, Result};
use crate::graph::{JobGraph, VertexId};
use crate::ids::Fnv;
use crate::metrics::SubtaskMetrics;
use crate::partition::ShipStrategy;

/// How a job ended without an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobStatus {
    /// Every source finished and every subtask processed all its input.
    Finished,
    /// [`crate::job::JobHandle::cancel`] stopped the job first.
    Cancelled,
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
