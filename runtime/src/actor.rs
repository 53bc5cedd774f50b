//! The subtask actor: the one generic adapter between operator chains and actix.
//!
//! Each subtask of a chain is an actix actor. It owns the chain, the alignment of its input
//! channels, its timers and its output partitioners. Its mailbox is bounded by a semaphore:
//! a sender takes a permit before it enqueues an element and the receiver returns it when it
//! takes the element out, so at most `execution.mailbox-capacity` elements wait for a subtask.
//! A sender that finds no permit waits (inside `ctx.wait`, so it processes nothing else
//! meanwhile) and backpressure travels upstream to the sources. Nothing is ever dropped.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::fut::wrap_future;
use actix::prelude::*;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio_util::sync::CancellationToken;

use crate::chain::Chain;
use crate::checkpoint::{Alignment, BarrierAligner, CheckpointBarrier, StateWriter};
use crate::clock::Clock;
use crate::element::{StreamElement, MAX_WATERMARK};
use crate::error::{Error, Result};
use crate::input::{InputGate, Progress};
use crate::memory::{self, MemoryGuard};
use crate::metrics::SubtaskMetrics;
use crate::operator::{AsyncState, SourceStatus, SubtaskInfo};
use crate::partition::Partitioner;

/// What subtasks tell the job.
#[derive(Debug)]
pub(crate) enum SubtaskEvent {
    /// The subtask failed; the job fails with this error.
    Failed(Error),
    /// The subtask's actor is gone (finished, cancelled or failed).
    Stopped,
    /// The subtask took its part of checkpoint `checkpoint`: the state of its chain's source
    /// and operators, in chain order.
    Snapshot {
        /// The checkpoint.
        checkpoint: u64,
        /// The subtask's chain: its index in the job and its name.
        vertex: (usize, String),
        /// The subtask's index and its chain's parallelism.
        subtask: (usize, usize),
        /// Each operator's id and state, head first.
        states: Vec<(String, StateWriter)>,
    },
    /// Checkpoint `checkpoint` cannot complete: a later barrier overtook it here.
    Aborted(u64),
    /// The subtask has finished (all its input processed): its final state, for the
    /// checkpoints taken after it (a finished source restores as having nothing left).
    Finished {
        /// The subtask's chain: its index in the job and its name.
        vertex: (usize, String),
        /// The subtask's index and its chain's parallelism.
        subtask: (usize, usize),
        /// Each operator's id and final state, head first.
        states: Vec<(String, StateWriter)>,
    },
}

/// Asks a source subtask to take its part of a checkpoint and send the barrier downstream.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct TriggerCheckpoint(pub CheckpointBarrier);

/// State every subtask of a job shares.
pub(crate) struct JobShared {
    pub token: CancellationToken,
    pub events: UnboundedSender<SubtaskEvent>,
    pub clock: Arc<dyn Clock>,
    pub idle_timeout: Duration,
    /// Watches the job's memory limit, when it has one and the heap is counted.
    pub memory: Option<MemoryGuard>,
    /// Whether a subtask that finishes reports its final state, which later checkpoints hold
    /// for it: from the start in a job that checkpoints periodically, and from the moment a
    /// job without periodic checkpoints is drained into a savepoint.
    pub final_snapshots: AtomicBool,
}

/// A receiving subtask's address, mailbox permits and the channel number it knows us by.
#[derive(Clone)]
pub(crate) struct Target {
    pub addr: Addr<SubtaskActor>,
    pub mailbox: Arc<Semaphore>,
    pub channel: u32,
}

/// One outgoing edge: its partitioner and, per receiver subtask, the index into the targets.
pub(crate) struct OutputEdge {
    pub partitioner: Partitioner,
    pub targets: Vec<Option<usize>>,
}

/// An element on its way into a subtask's mailbox, with the permit that holds its place.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Deliver {
    channel: u32,
    element: StreamElement,
    permit: OwnedSemaphorePermit,
}

/// Partitions one element along one edge into the outbox.
fn route(
    edge: &mut OutputEdge,
    element: StreamElement,
    outbox: &mut VecDeque<(usize, StreamElement)>,
    metrics: &SubtaskMetrics,
) {
    let targets = &edge.targets;
    edge.partitioner.route(element, |receiver, element| {
        if let StreamElement::Chunk(c) = &element {
            metrics.add_records_out(c.len());
        }
        if let Some(target) = targets[receiver] {
            outbox.push_back((target, element));
        }
    });
}

/// Everything a subtask actor is built from.
pub(crate) struct SubtaskSpec {
    pub info: SubtaskInfo,
    pub chain: Chain,
    /// The chain's index in the job: what tells it apart from a chain of the same name.
    pub chain_index: usize,
    /// The stable id of each operator of the chain, head first.
    pub operator_ids: Vec<String>,
    /// Input port of each input channel; `None` for a source subtask.
    pub inputs: Option<Vec<usize>>,
    /// Per input channel, whether its sender emits nothing ([`crate::operator::Source::emits_nothing`]).
    pub silent_inputs: Vec<bool>,
    pub edges: Vec<OutputEdge>,
    pub targets: Vec<Target>,
    pub metrics: Arc<SubtaskMetrics>,
    pub shared: Arc<JobShared>,
}

/// Source-side state: the last poll's status and idleness.
struct SourceState {
    status: SourceStatus,
    last_activity: i64,
    idle: bool,
    /// Processing time read just before the last poll: a wait the source asked for is counted
    /// from it, so that a clock that moves on meanwhile (a test's manual clock) cannot push
    /// the wake-up past the time the source waits for.
    polled_at: i64,
}

/// The actor running one subtask.
pub(crate) struct SubtaskActor {
    info: SubtaskInfo,
    chain: Chain,
    /// The chain's index in the job ([`SubtaskSpec::chain_index`]).
    chain_index: usize,
    /// The stable id of each operator of the chain, head first.
    operator_ids: Vec<String>,
    gate: Option<InputGate>,
    /// Barrier alignment over the input channels (none at a source).
    aligner: Option<BarrierAligner>,
    /// What blocked channels delivered while a checkpoint was being aligned, in arrival order:
    /// taken once it is aligned. Their mailbox places are given back (a blocked channel must
    /// not fill the mailbox the missing barrier has to come through).
    blocked: VecDeque<(usize, StreamElement)>,
    source: Option<SourceState>,
    edges: Vec<OutputEdge>,
    targets: Arc<[Target]>,
    outbox: VecDeque<(usize, StreamElement)>,
    produced: Vec<StreamElement>,
    metrics: Arc<SubtaskMetrics>,
    shared: Arc<JobShared>,
    finished: bool,
    /// Finished in a job that checkpoints: the subtask stays until a checkpoint holding its
    /// final state completes, so that its sinks commit what they wrote last.
    awaiting_final: bool,
    failed: bool,
    timer_wakeup: Option<i64>,
    /// Elements taken from the mailbox while the chain was saturated, with the permits that
    /// keep their places: upstream sees a full mailbox until they are processed.
    stalled: VecDeque<(u32, StreamElement, OwnedSemaphorePermit)>,
    /// A send is waiting for mailbox permits (see [`SubtaskActor::send_outbox`]).
    sending: bool,
    /// Whether a wake-up for the chain's async work is pending.
    listening: bool,
    /// Whether a source poll is scheduled.
    poll_scheduled: bool,
    /// Whether the input has ended and the chain is ending.
    ending: bool,
    /// A checkpoint aligned while the chain had async work in flight: its snapshot waits until
    /// the work is done, and the input waits with it.
    barrier_waiting: Option<CheckpointBarrier>,
    /// The checkpoint whose barrier the chain has been prepared for.
    prepared: Option<u64>,
}

impl SubtaskActor {
    pub(crate) fn new(mut spec: SubtaskSpec) -> Self {
        let now = spec.shared.clock.now_millis();
        if spec.targets.is_empty() {
            spec.chain.record_latency_into(Arc::clone(&spec.metrics));
        }
        SubtaskActor {
            source: spec.inputs.is_none().then_some(SourceState {
                status: SourceStatus::Ready,
                last_activity: now,
                idle: false,
                polled_at: now,
            }),
            aligner: spec.inputs.as_ref().map(|inputs| BarrierAligner::new(inputs.len())),
            blocked: VecDeque::new(),
            sending: false,
            gate: spec.inputs.map(|inputs| InputGate::new(inputs).with_silent(&spec.silent_inputs)),
            info: spec.info,
            chain: spec.chain,
            chain_index: spec.chain_index,
            operator_ids: spec.operator_ids,
            edges: spec.edges,
            targets: spec.targets.into(),
            outbox: VecDeque::new(),
            produced: Vec::new(),
            metrics: spec.metrics,
            shared: spec.shared,
            finished: false,
            awaiting_final: false,
            failed: false,
            timer_wakeup: None,
            stalled: VecDeque::new(),
            listening: false,
            poll_scheduled: false,
            ending: false,
            barrier_waiting: None,
            prepared: None,
        }
    }

    /// Fails the job with `error` and stops this actor.
    fn fail(&mut self, error: Error, ctx: &mut Context<Self>) {
        tracing::error!(subtask = %self.chain_name(), index = self.info.index, error = %error, "subtask failed");
        self.failed = true;
        let _ = self.shared.events.send(SubtaskEvent::Failed(error));
        self.shared.token.cancel();
        ctx.stop();
    }

    fn chain_name(&self) -> &str {
        &self.metrics.name
    }

    /// Runs one step of work (`step` fills `self.produced`), then routes and sends its output.
    fn run_step(&mut self, ctx: &mut Context<Self>, step: impl FnOnce(&mut Self) -> Result<()>) {
        if self.shared.token.is_cancelled() {
            ctx.stop();
            return;
        }
        let started = Instant::now();
        memory::set_running(self.chain_name());
        let result = step(self).map(|()| self.route_produced()).and_then(|()| self.check_memory());
        memory::clear_running();
        self.metrics.add_busy(started.elapsed());
        self.metrics.set_records_into_last(self.chain.rows_into_last());
        self.metrics.set_records_read(self.chain.rows_read());
        if let Some(progress) = self.chain.source_progress() {
            self.metrics.set_source_progress(progress);
        }
        match result {
            Ok(()) => self.send_outbox(ctx),
            Err(error) => self.fail(error, ctx),
        }
    }

    /// Fails with an error naming this subtask when the process has come too close to its
    /// memory limit: the subtask whose step took it there is the one to name, as a JVM names
    /// the task whose allocation failed.
    fn check_memory(&self) -> Result<()> {
        let Some(guard) = &self.shared.memory else { return Ok(()) };
        match guard.exceeded() {
            None => Ok(()),
            Some(found) => Err(Error::OperatorFailed {
                operator: self.chain_name().to_string(),
                subtask: self.info.index + 1,
                parallelism: self.info.parallelism,
                source: Box::new(guard.error(found)),
            }),
        }
    }

    /// Partitions what the chain produced into the outbox, one entry per receiver.
    fn route_produced(&mut self) {
        let mut produced = std::mem::take(&mut self.produced);
        for element in produced.drain(..) {
            let Some((last, rest)) = self.edges.split_last_mut() else {
                continue;
            };
            for edge in rest {
                route(edge, element.clone(), &mut self.outbox, &self.metrics);
            }
            route(last, element, &mut self.outbox, &self.metrics);
        }
        self.produced = produced;
    }

    /// Sends the outbox: at once while mailboxes have room, then by waiting for permits. While
    /// a send waits, a step's output stays in the outbox: the waiting send takes it when it is
    /// done, so that elements leave in the order they were produced.
    fn send_outbox(&mut self, ctx: &mut Context<Self>) {
        if self.sending {
            return;
        }
        while let Some((t, element)) = self.outbox.pop_front() {
            let target = &self.targets[t];
            match Arc::clone(&target.mailbox).try_acquire_owned() {
                Ok(permit) => target.addr.do_send(Deliver { channel: target.channel, element, permit }),
                Err(TryAcquireError::NoPermits) => {
                    self.outbox.push_front((t, element));
                    break;
                }
                Err(TryAcquireError::Closed) => {}
            }
        }
        if self.outbox.is_empty() {
            return self.after_send(ctx);
        }
        let pending: Vec<(usize, StreamElement)> = self.outbox.drain(..).collect();
        let targets = Arc::clone(&self.targets);
        let token = self.shared.token.clone();
        let waiting_since = Instant::now();
        let send_all = async move {
            for (t, element) in pending {
                let target = &targets[t];
                tokio::select! {
                    permit = Arc::clone(&target.mailbox).acquire_owned() => match permit {
                        Ok(permit) => target.addr.do_send(Deliver { channel: target.channel, element, permit }),
                        Err(_) => return,
                    },
                    () = token.cancelled() => return,
                }
            }
        };
        self.sending = true;
        ctx.wait(wrap_future::<_, Self>(send_all).map(move |(), act, ctx| {
            act.sending = false;
            act.metrics.add_backpressured(waiting_since.elapsed());
            // What steps produced meanwhile goes next, in order.
            act.send_outbox(ctx);
        }));
    }

    /// After a step's output is sent: stop when done, else arm timers and poll the source.
    fn after_send(&mut self, ctx: &mut Context<Self>) {
        let async_state = self.chain.async_state();
        let done = self.finished && !self.awaiting_final && async_state == AsyncState::Idle;
        if done || self.shared.token.is_cancelled() {
            ctx.stop();
            return;
        }
        if !self.finished {
            self.arm_timer(ctx);
        }
        if async_state != AsyncState::Idle && !self.listening {
            self.listening = true;
            let notifier = Arc::clone(self.chain.notifier());
            ctx.spawn(wrap_future(async move { notifier.notified().await }).map(|(), act: &mut Self, ctx| {
                act.listening = false;
                act.run_step(ctx, Self::on_async_progress);
            }));
        }
        if self.poll_scheduled
            || async_state == AsyncState::Saturated
            || self.ending
            || self.finished
            || self.barrier_waiting.is_some()
        {
            return;
        }
        if let Some(source) = &self.source {
            match source.status {
                SourceStatus::Ready => {
                    // Yield so that other actors on this worker thread get their turn.
                    self.poll_scheduled = true;
                    ctx.spawn(
                        wrap_future(tokio::task::yield_now()).map(|(), act: &mut Self, ctx| act.poll_source(ctx)),
                    );
                }
                SourceStatus::Wait(delay) => {
                    self.poll_scheduled = true;
                    let wake = source.polled_at + self.source_wait_millis(delay);
                    let sleep = self.shared.clock.sleep_until(wake);
                    ctx.spawn(wrap_future(sleep).map(|(), act: &mut Self, ctx| act.poll_source(ctx)));
                }
                SourceStatus::Finished => {}
            }
        }
    }

    /// Async work of the chain made progress: emit it, finish ending, and take the input
    /// that waited while the chain was saturated.
    fn on_async_progress(&mut self) -> Result<()> {
        self.chain.poll_async(&mut self.produced)?;
        if self.ending {
            return self.finish_ending();
        }
        if let Some(barrier) = self.barrier_waiting {
            if self.chain.async_state() != AsyncState::Idle {
                return Ok(());
            }
            self.barrier_waiting = None;
            self.take_checkpoint(barrier)?;
            self.replay_blocked()?;
        }
        while self.barrier_waiting.is_none() && self.chain.async_state() != AsyncState::Saturated {
            let Some((channel, element, permit)) = self.stalled.pop_front() else { break };
            drop(permit);
            self.on_element(channel as usize, element)?;
        }
        Ok(())
    }

    /// How long a waiting source sleeps: its own delay, cut short when it is due to go idle.
    fn source_wait_millis(&self, delay: Duration) -> i64 {
        let delay = delay.as_millis() as i64;
        let timeout = self.shared.idle_timeout.as_millis() as i64;
        match &self.source {
            Some(s) if timeout > 0 && !s.idle => {
                let idle_at = s.last_activity + timeout;
                delay.min((idle_at - self.shared.clock.now_millis()).max(1))
            }
            _ => delay.max(1),
        }
    }

    /// Wakes the actor for the chain's earliest processing-time timer.
    fn arm_timer(&mut self, ctx: &mut Context<Self>) {
        let Some(next) = self.chain.next_processing_timer() else {
            return;
        };
        if self.timer_wakeup.is_some_and(|w| w <= next) {
            return;
        }
        self.timer_wakeup = Some(next);
        let sleep = self.shared.clock.sleep_until(next);
        ctx.spawn(wrap_future(sleep).map(move |(), act: &mut Self, ctx| {
            if act.timer_wakeup == Some(next) {
                act.timer_wakeup = None;
            }
            let now = act.shared.clock.now_millis();
            act.run_step(ctx, |act| act.chain.fire_processing_timers(now, &mut act.produced));
        }));
    }

    /// Polls the head source once.
    fn poll_source(&mut self, ctx: &mut Context<Self>) {
        self.poll_scheduled = false;
        // A drained source is not polled again.
        if self.ending || self.finished {
            return;
        }
        self.run_step(ctx, |act| {
            let polled_at = act.shared.clock.now_millis();
            let status = act.chain.poll_source(&mut act.produced)?;
            let now = act.shared.clock.now_millis();
            let timeout = act.shared.idle_timeout.as_millis() as i64;
            let emitted =
                act.produced.iter().any(|e| matches!(e, StreamElement::Chunk(_) | StreamElement::Watermark(_)));
            let Some(source) = act.source.as_mut() else {
                return Ok(());
            };
            source.status = status;
            source.polled_at = polled_at;
            if emitted {
                source.last_activity = now;
                if source.idle {
                    source.idle = false;
                    act.produced.insert(0, StreamElement::Idle(false));
                }
            } else if !source.idle
                && (act.chain.source_idle_now()
                    || (timeout > 0 && now - source.last_activity >= timeout && act.chain.source_caught_up()))
            {
                source.idle = true;
                act.produced.push(StreamElement::Idle(true));
            }
            if status == SourceStatus::Finished {
                act.chain.push(0, StreamElement::Watermark(MAX_WATERMARK), &mut act.produced)?;
                act.end_input()?;
            }
            Ok(())
        });
    }

    /// Ends the chain's input; the end goes downstream once the chain's async work is done.
    fn end_input(&mut self) -> Result<()> {
        self.ending = true;
        self.finish_ending()
    }

    /// Ends what can be ended of the chain and, when all of it has, sends the end downstream.
    fn finish_ending(&mut self) -> Result<()> {
        if !self.finished && self.chain.advance_end(&mut self.produced)? {
            let final_snapshots = self.shared.final_snapshots.load(Ordering::SeqCst);
            if final_snapshots {
                let took = Instant::now();
                let states = self.chain.final_snapshot()?;
                let states = self.with_ids(states);
                let took_us = took.elapsed().as_micros() as u64;
                tracing::debug!(subtask = %self.chain_name(), index = self.info.index, took_us, "final state taken");
                let _ = self.shared.events.send(SubtaskEvent::Finished {
                    vertex: (self.chain_index, self.chain_name().to_string()),
                    subtask: (self.info.index, self.info.parallelism),
                    states,
                });
            }
            tracing::debug!(subtask = %self.chain_name(), index = self.info.index, "subtask ended");
            self.produced.push(StreamElement::EndOfInput);
            self.finished = true;
            self.awaiting_final = final_snapshots;
        }
        Ok(())
    }

    /// Handles an element from input channel `channel`.
    fn on_element(&mut self, channel: usize, element: StreamElement) -> Result<()> {
        let (Some(gate), Some(aligner)) = (self.gate.as_mut(), self.aligner.as_mut()) else {
            return Err(Error::InvalidGraph(format!("source '{}' received an element", self.chain_name())));
        };
        if aligner.is_blocked(channel) {
            self.blocked.push_back((channel, element));
            return Ok(());
        }
        let input = gate.input_of(channel);
        let channel_ended = matches!(element, StreamElement::EndOfInput);
        let progress = match element {
            StreamElement::Chunk(chunk) => {
                let progress = gate.on_data(channel);
                self.apply(progress)?;
                self.metrics.add_records_in(chunk.len());
                return self.chain.push(input, StreamElement::Chunk(chunk), &mut self.produced);
            }
            StreamElement::Watermark(w) => gate.on_watermark(channel, w),
            StreamElement::FlushMarker(m) => gate.on_marker(channel, m),
            StreamElement::Idle(idle) => gate.on_idle(channel, idle),
            StreamElement::Barrier(barrier) => {
                let alignment = aligner.on_barrier(channel, barrier);
                return self.on_alignment(alignment);
            }
            StreamElement::EndOfInput => gate.on_end(channel),
        };
        let ended = progress.ended;
        self.apply(progress)?;
        if channel_ended {
            // A channel that ended no longer holds a pending alignment back.
            if let Some(aligner) = self.aligner.as_mut() {
                let alignment = aligner.on_end(channel);
                self.on_alignment(alignment)?;
            }
        }
        if ended {
            self.end_input()?;
        }
        Ok(())
    }

    /// Acts on what a barrier or an ended channel did to the alignment: takes the checkpoint
    /// once aligned, reports one aborted, and takes what blocked channels delivered meanwhile.
    fn on_alignment(&mut self, alignment: Alignment) -> Result<()> {
        let aligned = match alignment {
            Alignment::Pending => return Ok(()),
            Alignment::Aligned(barrier) => Some(barrier),
            Alignment::Aborted(id, aligned) => {
                tracing::info!(subtask = %self.chain_name(), index = self.info.index, checkpoint = id, "checkpoint aborted: a later barrier arrived first");
                let _ = self.shared.events.send(SubtaskEvent::Aborted(id));
                aligned
            }
        };
        if let Some(barrier) = aligned {
            self.take_checkpoint(barrier)?;
        }
        self.replay_blocked()
    }

    /// Delivers what blocked channels sent while a checkpoint was aligned, in order, once it has
    /// been taken; a channel blocked again (by the next barrier) keeps the rest waiting.
    fn replay_blocked(&mut self) -> Result<()> {
        if self.barrier_waiting.is_some() {
            return Ok(());
        }
        let waiting: Vec<(usize, StreamElement)> = self.blocked.drain(..).collect();
        for (channel, element) in waiting {
            self.on_element(channel, element)?;
        }
        Ok(())
    }

    /// Snapshots the chain for `barrier`'s checkpoint, reports it, and sends the barrier on;
    /// with async work in flight, once it is done (the input waits meanwhile).
    fn take_checkpoint(&mut self, barrier: CheckpointBarrier) -> Result<()> {
        if self.prepared != Some(barrier.id) {
            // What goes before the barrier goes now; what the chain starts for it (a sink's
            // flush) is waited for below, like any async work.
            self.prepared = Some(barrier.id);
            self.chain.prepare_barrier(barrier.id, &mut self.produced)?;
        }
        if self.chain.async_state() != AsyncState::Idle {
            self.barrier_waiting = Some(barrier);
            return Ok(());
        }
        let took = Instant::now();
        let states = self.chain.snapshot_states(barrier.id)?;
        let states = self.with_ids(states);
        let took_us = took.elapsed().as_micros() as u64;
        tracing::debug!(subtask = %self.chain_name(), index = self.info.index, checkpoint = barrier.id, took_us, "checkpoint taken");
        let _ = self.shared.events.send(SubtaskEvent::Snapshot {
            checkpoint: barrier.id,
            vertex: (self.chain_index, self.chain_name().to_string()),
            subtask: (self.info.index, self.info.parallelism),
            states,
        });
        self.chain.push(0, StreamElement::Barrier(barrier), &mut self.produced)
    }

    /// Pairs the chain's states, head first, with its operators' ids.
    fn with_ids(&self, states: Vec<StateWriter>) -> Vec<(String, StateWriter)> {
        self.operator_ids.iter().cloned().zip(states).collect()
    }

    /// Runs aligned input progress through the chain.
    fn apply(&mut self, progress: Progress) -> Result<()> {
        if progress.idle == Some(false) {
            self.produced.push(StreamElement::Idle(false));
        }
        if let Some(w) = progress.watermark {
            self.metrics.set_watermark(w);
            self.chain.push(0, StreamElement::Watermark(w), &mut self.produced)?;
        }
        if let Some(m) = progress.marker {
            self.chain.push(0, StreamElement::FlushMarker(m), &mut self.produced)?;
        }
        if progress.idle == Some(true) {
            self.produced.push(StreamElement::Idle(true));
        }
        Ok(())
    }
}

impl Actor for SubtaskActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let token = self.shared.token.clone();
        ctx.spawn(wrap_future(token.cancelled_owned()).map(|(), _act: &mut Self, ctx| ctx.stop()));
        tracing::debug!(subtask = %self.chain_name(), index = self.info.index, "subtask started");
        if let Err(error) = self.chain.open() {
            return self.fail(error, ctx);
        }
        if self.source.is_some() {
            self.poll_source(ctx);
        } else if self.gate.as_ref().is_some_and(InputGate::is_empty) {
            // No sender has a channel to this subtask: its input is over before it starts.
            self.run_step(ctx, Self::end_input);
        }
    }
}

impl Drop for SubtaskActor {
    fn drop(&mut self) {
        if !self.finished && !self.failed && !self.shared.token.is_cancelled() {
            let error = Error::execution(format!(
                "subtask {} ({}/{}) stopped unexpectedly",
                self.chain_name(),
                self.info.index + 1,
                self.info.parallelism
            ));
            let _ = self.shared.events.send(SubtaskEvent::Failed(error));
            self.shared.token.cancel();
        }
        let _ = self.shared.events.send(SubtaskEvent::Stopped);
    }
}

impl Handler<TriggerCheckpoint> for SubtaskActor {
    type Result = ();

    /// A source subtask takes its part of the checkpoint between two polls and sends the
    /// barrier after what it has emitted. Other subtasks, and sources that have ended, let
    /// the trigger pass. A source still waiting for its async work to take an earlier
    /// checkpoint takes this one instead, and the earlier one is aborted.
    fn handle(&mut self, msg: TriggerCheckpoint, ctx: &mut Self::Context) {
        if self.source.is_none() || self.ending || self.finished {
            return;
        }
        if let Some(earlier) = self.barrier_waiting {
            self.barrier_waiting = Some(msg.0);
            let _ = self.shared.events.send(SubtaskEvent::Aborted(earlier.id));
            return;
        }
        self.run_step(ctx, |act| act.take_checkpoint(msg.0));
    }
}

/// Ends a source subtask's input now, as if its source had run out: the final watermark, then
/// the end of its input (how a job is drained).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct EndInput;

impl Handler<EndInput> for SubtaskActor {
    type Result = ();

    fn handle(&mut self, _: EndInput, ctx: &mut Self::Context) {
        let Some(source) = self.source.as_mut() else { return };
        if self.ending || self.finished {
            return;
        }
        source.status = SourceStatus::Finished;
        tracing::debug!(subtask = %self.chain_name(), index = self.info.index, "source drained");
        self.run_step(ctx, |act| {
            act.chain.push(0, StreamElement::Watermark(MAX_WATERMARK), &mut act.produced)?;
            act.end_input()
        });
    }
}

/// Tells a subtask that a checkpoint is complete.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct CheckpointComplete {
    /// The checkpoint.
    pub id: u64,
    /// Whether it holds the subtask's final state (the subtask had finished before it).
    pub holds_final_state: bool,
}

impl Handler<CheckpointComplete> for SubtaskActor {
    type Result = ();

    /// A running subtask, and a finished one told of the checkpoint holding its final state,
    /// pass the news to the chain; the finished one then stops once what the chain started
    /// (a commit) is done.
    fn handle(&mut self, msg: CheckpointComplete, ctx: &mut Self::Context) {
        if self.finished {
            if !(self.awaiting_final && msg.holds_final_state) {
                return;
            }
            self.awaiting_final = false;
        }
        self.run_step(ctx, |act| act.chain.notify_checkpoint_complete(msg.id, &mut act.produced));
    }
}

impl Handler<Deliver> for SubtaskActor {
    type Result = ();

    fn handle(&mut self, msg: Deliver, ctx: &mut Self::Context) {
        let Deliver { channel, element, permit } = msg;
        if !self.stalled.is_empty()
            || self.chain.async_state() == AsyncState::Saturated
            || self.barrier_waiting.is_some()
        {
            // Held with its permit until the chain takes input again.
            self.stalled.push_back((channel, element, permit));
            return;
        }
        // The element leaves the mailbox: its place is free for the next sender.
        drop(permit);
        self.run_step(ctx, |act| act.on_element(channel as usize, element));
    }
}
