//! The operator contract: plain state machines that know nothing of actors.
//!
//! An [`Operator`] reacts to chunks, watermarks, flush markers, timers and the end of its
//! input, writing what it emits to an [`Output`]. A [`Source`] produces data when polled.
//! The runtime wraps either in an actor; [`crate::harness::OperatorHarness`] drives one
//! directly in tests. Every callback may fail with an [`Error`](crate::Error); the runtime then fails the
//! job with a message naming the operator and subtask.

use std::sync::Arc;
use std::task::{Wake, Waker};
use std::time::Duration;

use tokio::sync::Notify;

use crate::checkpoint::{StateReader, StateWriter};
use crate::chunk::Chunk;
use crate::clock::Clock;
use crate::element::{StreamElement, NO_WATERMARK};
use crate::error::Result;
use crate::metrics::{OperatorCounts, OperatorMetrics};
pub use crate::subtask::{SourceProgress, Splits, SubtaskInfo};
use crate::timers::{TimeDomain, Timer, TimerService};
use crate::value::Value;

/// Where an operator writes what it emits. Elements reach the next operator in the order written.
#[derive(Debug, Default)]
pub struct Output {
    elements: Vec<StreamElement>,
}

impl Output {
    /// An empty output.
    pub fn new() -> Self {
        Output::default()
    }

    /// Emits a chunk of rows; empty chunks are dropped.
    pub fn collect(&mut self, chunk: Chunk) {
        if !chunk.is_empty() {
            self.elements.push(StreamElement::Chunk(chunk));
        }
    }

    /// Emits a watermark.
    pub fn emit_watermark(&mut self, watermark: i64) {
        self.elements.push(StreamElement::Watermark(watermark));
    }

    /// Emits a mini-batch flush marker.
    pub fn emit_flush_marker(&mut self, marker: i64) {
        self.elements.push(StreamElement::FlushMarker(marker));
    }

    /// Emits any element (used by the runtime to pass control elements along).
    pub fn emit(&mut self, element: StreamElement) {
        if !matches!(&element, StreamElement::Chunk(c) if c.is_empty()) {
            self.elements.push(element);
        }
    }

    /// Whether nothing was emitted.
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// Takes everything emitted so far, in order.
    pub fn drain(&mut self) -> std::vec::Drain<'_, StreamElement> {
        self.elements.drain(..)
    }
}

/// How far an operator is with work it started and has not finished (async lookups in flight).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AsyncState {
    /// Nothing pending: the operator finishes all its work inside its callbacks.
    Idle,
    /// Work is in flight; the operator still takes input. The runtime calls
    /// [`Operator::poll_async`] when the context's waker fires.
    Busy,
    /// Work is in flight and the operator takes no more input until some completes: the
    /// runtime holds back the subtask's input (its mailbox fills, and upstream waits).
    Saturated,
}

/// Wakes a subtask when async work of one of its operators made progress. Completing futures
/// call [`Waker::wake`]; a wake that comes while nobody listens is kept, so none is lost.
#[derive(Debug, Default)]
pub struct AsyncNotifier {
    notify: Notify,
}

impl AsyncNotifier {
    /// Resolves after the next wake (at once if one came since the last call).
    pub async fn notified(&self) {
        self.notify.notified().await;
    }
}

impl Wake for AsyncNotifier {
    fn wake(self: Arc<Self>) {
        self.notify.notify_one();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.notify.notify_one();
    }
}

/// What an operator may ask of the runtime: who it is, what time it is, and timers.
pub struct OperatorContext {
    info: SubtaskInfo,
    clock: Arc<dyn Clock>,
    chunk_size: usize,
    watermark: i64,
    timers: TimerService,
    bundles: Arc<OperatorMetrics>,
    notifier: Arc<AsyncNotifier>,
    checkpointing: bool,
    splits: Option<Arc<Splits>>,
}

impl OperatorContext {
    /// A context for subtask `info`, reading processing time from `clock`.
    pub fn new(info: SubtaskInfo, clock: Arc<dyn Clock>, chunk_size: usize) -> Self {
        OperatorContext {
            info,
            clock,
            chunk_size,
            watermark: NO_WATERMARK,
            timers: TimerService::default(),
            bundles: Arc::default(),
            notifier: Arc::default(),
            checkpointing: false,
            splits: None,
        }
    }

    /// The splits of the source at the head of the chain, when it reads several side by side
    /// ([`Source::splits`]), as of the rows being processed.
    pub fn splits(&self) -> Option<&Splits> {
        self.splits.as_deref()
    }

    /// Sets what [`OperatorContext::splits`] answers (the chain does, for each chunk it runs;
    /// tests may).
    pub fn set_splits(&mut self, splits: Option<Arc<Splits>>) {
        self.splits = splits;
    }

    /// The context of a job that checkpoints periodically (`execution.checkpointing.interval`).
    pub fn with_checkpointing(mut self, checkpointing: bool) -> Self {
        self.checkpointing = checkpointing;
        self
    }

    /// Whether the job checkpoints periodically. A transactional sink then makes what it wrote
    /// visible only when a checkpoint holding it completes
    /// ([`Operator::notify_checkpoint_complete`]), at the end of input too: a job that
    /// checkpoints ends with a final checkpoint, which every finished subtask is told of
    /// before it stops.
    pub fn checkpointing(&self) -> bool {
        self.checkpointing
    }

    /// A waker for the futures an operator polls itself: waking it makes the runtime call
    /// [`Operator::poll_async`] on the subtask's operators.
    pub fn waker(&self) -> Waker {
        Waker::from(Arc::clone(&self.notifier))
    }

    /// The context, counting mini-batch bundles into `bundles` (the subtask's metrics).
    pub fn with_bundle_metrics(mut self, bundles: Arc<OperatorMetrics>) -> Self {
        self.bundles = bundles;
        self
    }

    /// Counts a flushed mini-batch bundle of `rows` rows over `keys` distinct keys in the
    /// subtask's metrics.
    pub fn record_bundle(&self, rows: usize, keys: usize) {
        self.bundles.record(rows, keys);
        tracing::trace!(vertex = %self.info.vertex, subtask = self.info.index, rows, keys, "mini-batch flushed");
    }

    /// Counts `rows` rows dropped for arriving late (after the watermark passed the windows
    /// they belong to) in the subtask's metrics (`numLateRecordsDropped`).
    pub fn record_late_dropped(&self, rows: u64) {
        if rows > 0 {
            self.bundles.record_late_dropped(rows);
            tracing::debug!(vertex = %self.info.vertex, subtask = self.info.index, rows, "late rows dropped");
        }
    }

    /// The bundles and late rows recorded through this context's metrics so far.
    pub fn bundle_metrics(&self) -> OperatorCounts {
        self.bundles.snapshot()
    }

    /// Which subtask this is.
    pub fn subtask(&self) -> &SubtaskInfo {
        &self.info
    }

    /// Current processing time in epoch milliseconds, from the job's clock.
    pub fn processing_time(&self) -> i64 {
        self.clock.now_millis()
    }

    /// The last watermark this operator received ([`NO_WATERMARK`] before the first).
    pub fn current_watermark(&self) -> i64 {
        self.watermark
    }

    /// Preferred number of rows per emitted chunk (`execution.chunk-size`).
    pub fn chunk_size(&self) -> usize {
        self.chunk_size
    }

    /// Asks for [`Operator::on_timer`] once the watermark reaches `time`. Registering the
    /// same `(time, key)` twice fires once.
    pub fn register_event_time_timer(&mut self, time: i64, key: Vec<Value>) {
        self.timers.register(TimeDomain::EventTime, time, key);
    }

    /// Asks for [`Operator::on_timer`] once processing time reaches `time`.
    pub fn register_processing_time_timer(&mut self, time: i64, key: Vec<Value>) {
        self.timers.register(TimeDomain::ProcessingTime, time, key);
    }

    /// Writes the timers registered here and still pending into `state`, for an operator whose
    /// [`Operator::snapshot_state`] keeps its timers (keyed by the key given at registration).
    pub fn snapshot_timers(&self, state: &mut StateWriter) {
        self.timers.snapshot(state);
    }

    /// Registers again the timers of `states` (what [`OperatorContext::snapshot_timers`] wrote in
    /// every old subtask) whose keys this subtask owns.
    ///
    /// # Errors
    /// A damaged section.
    pub fn restore_timers(&mut self, states: &[StateReader]) -> Result<()> {
        self.timers.restore(states, &self.info)
    }

    /// Cancels a timer registered earlier; does nothing if there is none.
    pub fn delete_timer(&mut self, domain: TimeDomain, time: i64, key: &[Value]) {
        self.timers.delete(domain, time, key);
    }

    /// The job's clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    pub(crate) fn set_notifier(&mut self, notifier: Arc<AsyncNotifier>) {
        self.notifier = notifier;
    }

    pub(crate) fn set_watermark(&mut self, watermark: i64) {
        self.watermark = self.watermark.max(watermark);
    }

    pub(crate) fn timers_mut(&mut self) -> &mut TimerService {
        &mut self.timers
    }

    pub(crate) fn timers(&self) -> &TimerService {
        &self.timers
    }
}

/// A stream operator: a state machine driven by the runtime, one instance per subtask.
///
/// Calls for one instance never overlap. `open` comes first, `end_of_input` last, after
/// which the runtime calls nothing more. Implementations must not block: a callback that
/// waits holds up every other subtask on the same worker thread.
pub trait Operator: Send {
    /// Name shown in errors, metrics and logs, e.g. `Calc` or `GroupAggregate`.
    fn name(&self) -> &str;

    /// Called once before any element.
    fn open(&mut self, _ctx: &mut OperatorContext) -> Result<()> {
        Ok(())
    }

    /// Processes a chunk that arrived on input `input` (0 for one-input operators; 0 or 1
    /// for two-input operators).
    fn process_chunk(&mut self, input: usize, chunk: Chunk, ctx: &mut OperatorContext, out: &mut Output) -> Result<()>;

    /// Event time has advanced to `watermark` (aligned over all inputs). Event-time timers
    /// up to it have already fired. The default forwards the watermark.
    fn process_watermark(&mut self, watermark: i64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        out.emit_watermark(watermark);
        Ok(())
    }

    /// A mini-batch flush marker arrived (aligned over all inputs). The default forwards it.
    fn process_flush_marker(&mut self, marker: i64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        out.emit_flush_marker(marker);
        Ok(())
    }

    /// A timer registered through the context fired.
    fn on_timer(&mut self, _timer: Timer, _ctx: &mut OperatorContext, _out: &mut Output) -> Result<()> {
        Ok(())
    }

    /// Every input has ended; emit what is still buffered. Called exactly once, after the
    /// operators before it in the chain have ended and finished their async work. Work started
    /// here (a final flush) may still be in flight; the runtime waits for it before the end
    /// of input travels on.
    fn end_of_input(&mut self, _ctx: &mut OperatorContext, _out: &mut Output) -> Result<()> {
        Ok(())
    }

    /// Whether async work is in flight and whether more input is welcome. Operators that do
    /// all their work inside their callbacks keep the default, [`AsyncState::Idle`].
    fn async_state(&self) -> AsyncState {
        AsyncState::Idle
    }

    /// The context's waker fired: emit what completed and start what waited for room.
    fn poll_async(&mut self, _ctx: &mut OperatorContext, _out: &mut Output) -> Result<()> {
        Ok(())
    }

    /// The barrier of checkpoint `checkpoint` has arrived on every input: emit what must
    /// travel before it rather than be kept in the state (a mini-batch bundle is flushed, as
    /// Flink's `prepareSnapshotPreBarrier` does). Called on every operator of the chain, head
    /// first, before any of them snapshots.
    fn prepare_snapshot_pre_barrier(
        &mut self,
        _checkpoint: u64,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> Result<()> {
        Ok(())
    }

    /// Writes the operator's state into checkpoint `checkpoint`, whose barrier has arrived on
    /// every input (aligned): the state holds the effect of exactly what came before the
    /// barrier. Called between the other callbacks, never while async work is in flight (the
    /// runtime waits for it, holding back the input), before the barrier travels on; an
    /// operator without state keeps the default and writes nothing.
    fn snapshot_state(&mut self, _checkpoint: u64, _ctx: &mut OperatorContext, _state: &mut StateWriter) -> Result<()> {
        Ok(())
    }

    /// Whether the operator's state is of use once its input has ended: a sink that commits on
    /// checkpoints keeps what it has still to commit. A subtask that has finished reports a
    /// final state holding its source's position and the state of such operators only; the
    /// others, whose input will never come again, write none (Flink keeps no state of fully
    /// finished operators either), so a job ending does not write its whole state once more.
    fn keeps_state_after_end(&self) -> bool {
        false
    }

    /// Checkpoint `checkpoint` is complete: every subtask has written its part. A sink commits
    /// here what it wrote before that checkpoint's barrier (Flink's `notifyCheckpointComplete`).
    /// Not called for every checkpoint (a later one may come first): commit everything up to
    /// `checkpoint`.
    fn notify_checkpoint_complete(
        &mut self,
        _checkpoint: u64,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> Result<()> {
        Ok(())
    }

    /// Takes back state written by [`Operator::snapshot_state`], before `open`. `states` holds
    /// what every subtask of the checkpointed job wrote, by its index, whatever the parallelism
    /// was: keyed state keeps the keys of the key groups this subtask owns now; other state
    /// takes the parts `k` with `k % parallelism == index` ([`owned_parts`]).
    fn restore_state(&mut self, _ctx: &mut OperatorContext, _states: &[StateReader]) -> Result<()> {
        Ok(())
    }
}

/// The parts of `states` (by old subtask index) that subtask `index` of `parallelism` takes
/// over when state is not keyed: `k % parallelism == index`, so its own part at the same
/// parallelism and every part exactly once at another.
pub fn owned_parts<'a>(states: &'a [StateReader], info: &SubtaskInfo) -> impl Iterator<Item = &'a StateReader> {
    let (index, parallelism) = (info.index, info.parallelism.max(1));
    states.iter().enumerate().filter(move |(k, _)| k % parallelism == index).map(|(_, s)| s)
}

/// What a source asks for after a poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceStatus {
    /// Poll again as soon as the output has been sent.
    Ready,
    /// Nothing to read now; poll again after this much processing time.
    Wait(Duration),
    /// The source is exhausted; the runtime emits the final watermark and the end of input.
    Finished,
}

/// A source of rows, one instance per subtask.
pub trait Source: Send {
    /// Name shown in errors, metrics and logs.
    fn name(&self) -> &str;

    /// Called once before the first poll.
    fn open(&mut self, _ctx: &mut OperatorContext) -> Result<()> {
        Ok(())
    }

    /// Emits the next batch of data (ideally one chunk of `ctx.chunk_size()` rows) and
    /// watermarks, and says when to poll again. Must not block.
    fn poll_next(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<SourceStatus>;

    /// Writes where the source is (file and offset, sequence position) into checkpoint
    /// `checkpoint`, between two polls: a restored source goes on from there. A source that
    /// cannot be replayed keeps the default and writes nothing.
    fn snapshot_state(&mut self, _checkpoint: u64, _ctx: &mut OperatorContext, _state: &mut StateWriter) -> Result<()> {
        Ok(())
    }

    /// Checkpoint `checkpoint` is complete: a source that reports its position elsewhere (a
    /// Kafka consumer group's committed offsets) reports the position that checkpoint holds.
    /// Not called for every checkpoint (a later one may come first).
    fn notify_checkpoint_complete(&mut self, _checkpoint: u64, _ctx: &mut OperatorContext) -> Result<()> {
        Ok(())
    }

    /// How far the source has read, when it can tell (a file source: bytes read of the bytes
    /// it has to read); shown as the progress of a bounded job. `None` by default.
    fn progress(&self) -> Option<SourceProgress> {
        None
    }

    /// Whether the source has read everything it can read now (a Kafka consumer at the end of
    /// each of its partitions): the runtime marks a source idle
    /// (`table.exec.source.idle-timeout`) only when it has emitted nothing for the timeout *and*
    /// this holds, so a source still waiting for its first fetch is not idle, and its rows are
    /// not late for the others' progress. The default: `true`.
    fn caught_up(&self) -> bool {
        true
    }

    /// Whether the source has nothing to read at all for now (a Kafka subtask given no
    /// partition, which discovery may give one later): the runtime marks it idle at once,
    /// whatever `table.exec.source.idle-timeout` says, as Flink marks a reader without splits.
    /// The default: `false`.
    fn idle_now(&self) -> bool {
        false
    }

    /// Whether this subtask will emit no row at all, known before it starts (it was given no
    /// file to read): its receivers do not wait for its watermark, so which rows are late
    /// downstream does not depend on when this subtask happens to finish. Asked after a
    /// restore, before `open`; the default is `false`.
    fn emits_nothing(&self) -> bool {
        false
    }

    /// Takes back what [`Source::snapshot_state`] wrote, before `open`: `states` holds what
    /// every subtask of the checkpointed job wrote, by its index; a source goes on from the
    /// parts [`owned_parts`] gives it.
    fn restore_state(&mut self, _ctx: &mut OperatorContext, _states: &[StateReader]) -> Result<()> {
        Ok(())
    }

    /// The splits this subtask reads side by side, when it reads more than one (a restore
    /// gave it what several subtasks of the checkpointed job were reading): which one the rows
    /// of the last poll came from, and which are still open. The operators chained after the
    /// source see it in [`OperatorContext::splits`], so that a watermark assigner can keep one
    /// watermark per split and emit the least, as the subtasks' own watermarks were combined
    /// downstream before. `None` (the default): one stream.
    fn splits(&self) -> Option<Splits> {
        None
    }
}
