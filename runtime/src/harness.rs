//! A test harness that drives one operator without actors: push fixtures, watermarks,
//! flush markers and processing time; read back what it emitted as Flink prints it.
//!
//! The harness runs the operator exactly as a subtask does (event-time timers fire before a
//! watermark is processed; errors and panics name the operator), on a [`ManualClock`].

use std::sync::Arc;

use crate::chain::{Chain, ChainedOperator};
use crate::checkpoint::{StateReader, StateWriter};
use crate::chunk::Chunk;
use crate::clock::ManualClock;
use crate::element::StreamElement;
use crate::error::Result;
use crate::fixture::chunk;
use crate::metrics::{OperatorCounts, OperatorMetrics};
use crate::operator::{Operator, OperatorContext, SubtaskInfo};
use crate::state::StateBackend;

/// The environment variable that puts the keyed state of every harness on the on-disk backend
/// (`rocksdb`) with a budget of four kilobytes, so that entries leave the heap after the first
/// few dozen keys: the same tests then check both backends.
pub const STATE_BACKEND_VARIABLE: &str = "WEIR_TEST_STATE_BACKEND";

/// Whether [`STATE_BACKEND_VARIABLE`] puts the harnesses' keyed state on disk.
pub fn state_on_disk() -> bool {
    std::env::var(STATE_BACKEND_VARIABLE).is_ok_and(|v| v == "rocksdb")
}

/// The backend [`STATE_BACKEND_VARIABLE`] asks for: the heap unless it says `rocksdb`.
///
/// # Panics
/// The on-disk backend's directory cannot be made (a test cannot run then).
fn backend_for_tests() -> StateBackend {
    match state_on_disk() {
        true => StateBackend::disk(4 << 10, None).expect("a directory for the on-disk state backend"),
        false => StateBackend::heap(),
    }
}

/// Drives one operator instance by hand.
pub struct OperatorHarness {
    chain: Chain,
    clock: Arc<ManualClock>,
    bundles: Arc<OperatorMetrics>,
    output: Vec<StreamElement>,
    opened: bool,
    ending: bool,
    /// The split the chunks pushed next come from ([`OperatorHarness::set_splits`]).
    splits: Option<Arc<crate::operator::Splits>>,
}

impl OperatorHarness {
    /// A harness for subtask 1 of 1, with the clock at 0 and chunks of 1024 rows.
    pub fn new(operator: impl Operator + 'static) -> Self {
        Self::with_subtask(Box::new(operator), 0, 1)
    }

    /// A harness for subtask `index` (0-based) of `parallelism`.
    pub fn with_subtask(operator: Box<dyn Operator>, index: usize, parallelism: usize) -> Self {
        Self::build(operator, index, parallelism, false)
    }

    /// A harness for subtask `index` of `parallelism` of a job that checkpoints periodically
    /// ([`OperatorContext::checkpointing`]): sinks commit on checkpoints only.
    pub fn checkpointing(operator: Box<dyn Operator>, index: usize, parallelism: usize) -> Self {
        Self::build(operator, index, parallelism, true)
    }

    /// A harness for subtask `index` of `parallelism` keeping its keyed state in `backend`.
    pub fn with_state_backend(
        operator: Box<dyn Operator>,
        index: usize,
        parallelism: usize,
        backend: StateBackend,
    ) -> Self {
        Self::build_on(operator, index, parallelism, false, backend)
    }

    fn build(operator: Box<dyn Operator>, index: usize, parallelism: usize, checkpointing: bool) -> Self {
        Self::build_on(operator, index, parallelism, checkpointing, backend_for_tests())
    }

    fn build_on(
        operator: Box<dyn Operator>,
        index: usize,
        parallelism: usize,
        checkpointing: bool,
        backend: StateBackend,
    ) -> Self {
        let clock = Arc::new(ManualClock::new(0));
        let info = SubtaskInfo::new(operator.name(), index, parallelism).with_state_backend(backend);
        let bundles = Arc::new(OperatorMetrics::default());
        let ctx = OperatorContext::new(info.clone(), Arc::clone(&clock) as _, 1024)
            .with_bundle_metrics(Arc::clone(&bundles))
            .with_checkpointing(checkpointing);
        let chain = Chain::new(info, None, vec![ChainedOperator::new(operator, ctx)]);
        OperatorHarness { chain, clock, bundles, output: Vec::new(), opened: false, ending: false, splits: None }
    }

    /// The mini-batch bundles the operator recorded so far.
    pub fn bundle_metrics(&self) -> OperatorCounts {
        self.bundles.snapshot()
    }

    /// Makes the rows pushed next come from split `splits.current` of a source reading
    /// several ([`crate::operator::Source::splits`]); `None`: one stream.
    pub fn set_splits(&mut self, splits: Option<crate::operator::Splits>) {
        self.splits = splits.map(Arc::new);
    }

    /// The late rows the operator dropped so far (`numLateRecordsDropped`).
    pub fn late_records_dropped(&self) -> u64 {
        self.bundles.snapshot().late_records_dropped
    }

    fn ensure_open(&mut self) -> Result<()> {
        if !self.opened {
            self.opened = true;
            self.chain.open()?;
        }
        Ok(())
    }

    /// Pushes the rows of a text-table fixture (see [`crate::fixture`]) on input 0.
    ///
    /// # Errors
    /// What the operator reported.
    pub fn push(&mut self, fixture: &str) -> Result<()> {
        self.push_chunk(0, chunk(fixture))
    }

    /// Pushes the rows of a fixture on input `input`.
    ///
    /// # Errors
    /// What the operator reported.
    pub fn push_input(&mut self, input: usize, fixture: &str) -> Result<()> {
        self.push_chunk(input, chunk(fixture))
    }

    /// Pushes a chunk on input `input`.
    ///
    /// # Errors
    /// What the operator reported.
    pub fn push_chunk(&mut self, input: usize, mut chunk: Chunk) -> Result<()> {
        self.ensure_open()?;
        if self.splits.is_some() {
            chunk.set_splits(self.splits.clone());
        }
        self.chain.push(input, StreamElement::Chunk(chunk), &mut self.output)
    }

    /// Advances event time: due event-time timers fire, then the operator sees the watermark.
    ///
    /// # Errors
    /// What the operator reported.
    pub fn watermark(&mut self, watermark: i64) -> Result<()> {
        self.ensure_open()?;
        self.chain.push(0, StreamElement::Watermark(watermark), &mut self.output)
    }

    /// Delivers a mini-batch flush marker.
    ///
    /// # Errors
    /// What the operator reported.
    pub fn flush_marker(&mut self, marker: i64) -> Result<()> {
        self.ensure_open()?;
        self.chain.push(0, StreamElement::FlushMarker(marker), &mut self.output)
    }

    /// The processing time the operator sees (it starts at 0).
    pub fn processing_time(&self) -> i64 {
        crate::clock::Clock::now_millis(&*self.clock)
    }

    /// Moves processing time forward by `millis` and fires the timers that became due.
    ///
    /// # Errors
    /// What the operator reported.
    pub fn advance_processing_time(&mut self, millis: i64) -> Result<()> {
        self.ensure_open()?;
        self.clock.advance(millis);
        let now = crate::clock::Clock::now_millis(&*self.clock);
        self.chain.fire_processing_timers(now, &mut self.output)
    }

    /// Ends the input.
    ///
    /// # Errors
    /// What the operator reported.
    pub fn end_input(&mut self) -> Result<()> {
        self.ensure_open()?;
        self.ending = true;
        self.chain.advance_end(&mut self.output).map(drop)
    }

    /// The operator's async state: whether work is in flight and whether it takes input.
    pub fn async_state(&self) -> crate::operator::AsyncState {
        self.chain.async_state()
    }

    /// Polls the operator's async work once, as the runtime does once its waker fired and what
    /// it emitted before was sent on.
    ///
    /// # Errors
    /// What the operator reports while polling.
    pub fn poll_async(&mut self) -> Result<()> {
        self.ensure_open()?;
        self.chain.poll_async(&mut self.output)
    }

    /// Waits until the operator's async work is done (inside a tokio runtime), emitting what
    /// completes and, after [`OperatorHarness::end_input`], finishing the end of input.
    ///
    /// # Errors
    /// What the operator reports while polling.
    pub async fn settle(&mut self) -> Result<()> {
        self.ensure_open()?;
        loop {
            if self.ending && self.chain.advance_end(&mut self.output)? {
                return Ok(());
            }
            if self.chain.async_state() == crate::operator::AsyncState::Idle {
                return Ok(());
            }
            let notifier = Arc::clone(self.chain.notifier());
            notifier.notified().await;
            self.chain.poll_async(&mut self.output)?;
        }
    }

    /// The operator's state for checkpoint `checkpoint`, as a restored operator reads it (what
    /// it emits before the barrier is in the output).
    ///
    /// # Errors
    /// What the operator's snapshot reports.
    pub fn snapshot(&mut self, checkpoint: u64) -> Result<StateReader> {
        self.ensure_open()?;
        let mut states = self.chain.snapshot(checkpoint, &mut self.output)?;
        Ok(states.pop().map(StateWriter::into_reader).unwrap_or_default())
    }

    /// Tells the operator that checkpoint `checkpoint` is complete.
    ///
    /// # Errors
    /// What the operator reports.
    pub fn notify_checkpoint_complete(&mut self, checkpoint: u64) -> Result<()> {
        self.ensure_open()?;
        self.chain.notify_checkpoint_complete(checkpoint, &mut self.output)
    }

    /// Restores the operator from `states` (what [`OperatorHarness::snapshot`] returned for each
    /// subtask of the checkpointed job, by subtask index); before anything else.
    ///
    /// # Errors
    /// What the operator's restore reports, or a harness already running.
    pub fn restore(&mut self, states: Vec<StateReader>) -> Result<()> {
        if self.opened {
            return Err(crate::error::Error::execution("the operator is already open: restore it first"));
        }
        self.chain.restore(&[states])
    }

    /// Checkpoints every subtask of one operator (`parts`, by index) as `checkpoint`, appends
    /// what each emitted to `lines`, and replaces them with `parallelism` subtasks built by
    /// `build(index, parallelism)` and restored from that checkpoint: a failure and a restore
    /// at another parallelism. Returns the checkpoint's states, by old subtask index.
    ///
    /// # Errors
    /// What a snapshot or a restore reports.
    pub fn rescale(
        parts: &mut Vec<OperatorHarness>,
        checkpoint: u64,
        parallelism: usize,
        build: impl Fn(usize, usize) -> OperatorHarness,
        lines: &mut Vec<String>,
    ) -> Result<Vec<StateReader>> {
        let states = parts.iter_mut().map(|h| h.snapshot(checkpoint)).collect::<Result<Vec<_>>>()?;
        parts.iter_mut().for_each(|h| lines.extend(h.take_lines()));
        *parts = (0..parallelism)
            .map(|i| {
                let mut h = build(i, parallelism);
                h.restore(states.clone()).map(|()| h)
            })
            .collect::<Result<_>>()?;
        Ok(states)
    }

    /// Takes everything emitted so far.
    pub fn take_output(&mut self) -> Vec<StreamElement> {
        std::mem::take(&mut self.output)
    }

    /// Takes everything emitted so far as text: rows as Flink prints them (`+I[1, a]`),
    /// `watermark N`, `flush-marker N`, `barrier N`, `idle` / `active`, `end-of-input`.
    pub fn take_lines(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        for element in self.take_output() {
            match element {
                StreamElement::Chunk(c) => lines.extend(c.to_lines()),
                StreamElement::Watermark(w) => lines.push(format!("watermark {w}")),
                StreamElement::FlushMarker(m) => lines.push(format!("flush-marker {m}")),
                StreamElement::Idle(true) => lines.push("idle".into()),
                StreamElement::Idle(false) => lines.push("active".into()),
                StreamElement::Barrier(b) => lines.push(format!("barrier {}", b.id)),
                StreamElement::EndOfInput => lines.push("end-of-input".into()),
            }
        }
        lines
    }
}
