//! A chain: the operators of one subtask, joined by forward edges, run in one actor.
//!
//! Elements enter at the head (from a source poll or an input channel) and pass through the
//! operators in order, in the same call; what leaves the last operator is the subtask's
//! output. Every operator call is guarded: an error or a panic becomes an error naming the
//! operator and the subtask.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::checkpoint::{StateReader, StateWriter};
use crate::clock::monotonic_nanos;
use crate::element::StreamElement;
use crate::error::{Error, Result};
use crate::metrics::SubtaskMetrics;
use crate::operator::{
    AsyncNotifier, AsyncState, Operator, OperatorContext, Output, Source, SourceStatus, SubtaskInfo,
};
use crate::timers::TimeDomain;

/// One operator of a chain with its own context and output buffer.
pub(crate) struct ChainedOperator {
    name: String,
    op: Box<dyn Operator>,
    ctx: OperatorContext,
    out: Output,
}

/// The source that heads a chain, if it has one.
pub(crate) struct ChainedSource {
    name: String,
    source: Box<dyn Source>,
    ctx: OperatorContext,
    out: Output,
    /// Whether [`Chain::open_source`] opened it already.
    opened: bool,
}

/// The operators one subtask runs, head first.
pub(crate) struct Chain {
    info: SubtaskInfo,
    source: Option<ChainedSource>,
    ops: Vec<ChainedOperator>,
    /// Origin time of the element being processed, stamped on chunks that lack one.
    origin: u64,
    /// The source split of the element being processed ([`crate::operator::Source::splits`]):
    /// the operators' contexts tell it, and the chunks the chain emits carry it on.
    splits: Option<Arc<crate::operator::Splits>>,
    /// Whether the rows being emitted are rows of that split: true only while a pushed or polled
    /// chunk goes through the operators, for what they emit for it. Rows an operator emits from
    /// a timer, a watermark, the end of its input, a barrier or async work come from no one
    /// split, and leave the chain untagged.
    of_split: bool,
    /// Rows handed to the last operator of the chain (a sink's rows, at a sink subtask).
    rows_into_last: u64,
    /// Woken when async work of any operator makes progress.
    notifier: Arc<AsyncNotifier>,
    /// How many operators, head first, have had their input ended.
    ended: usize,
    /// Rows the head source produced.
    rows_read: u64,
    /// Where the latency of rows reaching the last operator is recorded, at a sink chain.
    latency: Option<Arc<SubtaskMetrics>>,
}

impl ChainedOperator {
    pub(crate) fn new(op: Box<dyn Operator>, ctx: OperatorContext) -> Self {
        ChainedOperator { name: op.name().to_string(), op, ctx, out: Output::new() }
    }
}

impl ChainedSource {
    pub(crate) fn new(source: Box<dyn Source>, ctx: OperatorContext) -> Self {
        ChainedSource { name: source.name().to_string(), source, ctx, out: Output::new(), opened: false }
    }
}

/// Runs `f`, turning an error or a panic into an error naming `operator` and the subtask.
/// The operator's keyed state binds to the subtask's state backend meanwhile, and an error its
/// store met fails the call ([`crate::state::backend::scoped`]).
fn guarded<T>(info: &SubtaskInfo, operator: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let scoped = || crate::state::backend::scoped(&info.state_backend, info.max_parallelism, f);
    // A failure an earlier call recorded and no call took (none should be left) is not this one's.
    let _ = crate::call_failure::take();
    let outcome = catch_unwind(AssertUnwindSafe(scoped));
    // A failure recorded where the operator could not return it fails the call all the same,
    // and is the cause of an error the call returned after it (a NULL accumulator in place of
    // one that could not be made fails the next update).
    let outcome = match (outcome, crate::call_failure::take()) {
        (Ok(_), Some(message)) => Ok(Err(Error::Execution(message))),
        (outcome, _) => outcome,
    };
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(Error::OperatorFailed {
            operator: operator.to_string(),
            subtask: info.index + 1,
            parallelism: info.parallelism,
            source: Box::new(error),
        }),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            Err(Error::OperatorPanicked {
                operator: operator.to_string(),
                subtask: info.index + 1,
                parallelism: info.parallelism,
                message,
            })
        }
    }
}

impl Chain {
    pub(crate) fn new(info: SubtaskInfo, source: Option<ChainedSource>, mut ops: Vec<ChainedOperator>) -> Self {
        let notifier = Arc::new(AsyncNotifier::default());
        for o in &mut ops {
            o.ctx.set_notifier(Arc::clone(&notifier));
        }
        Chain {
            info,
            source,
            ops,
            origin: 0,
            splits: None,
            of_split: false,
            rows_into_last: 0,
            notifier,
            ended: 0,
            rows_read: 0,
            latency: None,
        }
    }

    /// Records into `metrics` the source-to-sink latency of the rows that reach the chain's
    /// last operator (for a chain that ends in a sink).
    pub(crate) fn record_latency_into(&mut self, metrics: Arc<SubtaskMetrics>) {
        self.latency = Some(metrics);
    }

    /// The notifier the chain's operators wake when async work makes progress.
    pub(crate) fn notifier(&self) -> &Arc<AsyncNotifier> {
        &self.notifier
    }

    /// The most pressing async state of any operator in the chain.
    pub(crate) fn async_state(&self) -> AsyncState {
        self.ops.iter().map(|o| o.op.async_state()).max().unwrap_or(AsyncState::Idle)
    }

    /// Polls every operator with async work, head first, running what each emits through the
    /// rest of the chain.
    pub(crate) fn poll_async(&mut self, sink: &mut Vec<StreamElement>) -> Result<()> {
        for i in 0..self.ops.len() {
            let o = &mut self.ops[i];
            if o.op.async_state() == AsyncState::Idle {
                continue;
            }
            guarded(&self.info, &o.name, || o.op.poll_async(&mut o.ctx, &mut o.out))?;
            self.forward(i, sink)?;
        }
        Ok(())
    }

    /// Opens every operator, head first.
    pub(crate) fn open(&mut self) -> Result<()> {
        self.open_source()?;
        let info = &self.info;
        for o in &mut self.ops {
            guarded(info, &o.name, || o.op.open(&mut o.ctx))?;
        }
        Ok(())
    }

    /// Opens the chain's head source, once: before any subtask of the job starts, so that what
    /// a source knows only once open (a Kafka subtask given no partition) is known to its
    /// receivers before any row moves ([`Chain::emits_nothing`]).
    pub(crate) fn open_source(&mut self) -> Result<()> {
        let info = &self.info;
        if let Some(s) = self.source.as_mut().filter(|s| !s.opened) {
            guarded(info, &s.name, || s.source.open(&mut s.ctx))?;
            s.opened = true;
        }
        Ok(())
    }

    /// Whether the chain's head source has read all it can now ([`Source::caught_up`]); `true`
    /// without a source.
    pub(crate) fn source_caught_up(&self) -> bool {
        self.source.as_ref().is_none_or(|s| s.source.caught_up())
    }

    /// Whether the chain's head source has nothing to read for now ([`Source::idle_now`]).
    pub(crate) fn source_idle_now(&self) -> bool {
        self.source.as_ref().is_some_and(|s| s.source.idle_now())
    }

    /// Whether the chain is headed by a source that will emit no row ([`Source::emits_nothing`]).
    pub(crate) fn emits_nothing(&self) -> bool {
        self.source.as_ref().is_some_and(|s| s.source.emits_nothing())
    }

    /// Makes the elements processed next come from `splits` ([`OperatorContext::splits`]).
    pub(crate) fn set_splits(&mut self, splits: Option<Arc<crate::operator::Splits>>) {
        if self.splits == splits {
            return;
        }
        self.ops.iter_mut().for_each(|o| o.ctx.set_splits(splits.clone()));
        self.splits = splits;
    }

    /// Polls the head source once and runs what it emitted through the chain into `sink`.
    pub(crate) fn poll_source(&mut self, sink: &mut Vec<StreamElement>) -> Result<SourceStatus> {
        let Some(s) = &mut self.source else {
            return Ok(SourceStatus::Finished);
        };
        let status = guarded(&self.info, &s.name, || s.source.poll_next(&mut s.ctx, &mut s.out))?;
        // Which split the rows came from, for the operators chained after the source.
        let splits = s.source.splits().map(Arc::new);
        self.set_splits(splits);
        let Some(s) = &mut self.source else { return Ok(status) };
        let mut out = std::mem::take(&mut s.out);
        let now = monotonic_nanos();
        let result = out.drain().try_for_each(|element| {
            let element = match element {
                StreamElement::Chunk(mut c) => {
                    self.rows_read += c.len() as u64;
                    c.set_origin_nanos(now);
                    StreamElement::Chunk(c)
                }
                other => other,
            };
            self.deliver_from_split(0, element, sink)
        });
        if let Some(s) = &mut self.source {
            s.out = out;
        }
        result.map(|()| status)
    }

    /// Runs an element that arrived on input `input` through the chain into `sink`.
    pub(crate) fn push(&mut self, input: usize, element: StreamElement, sink: &mut Vec<StreamElement>) -> Result<()> {
        if let StreamElement::Chunk(c) = &element {
            self.origin = c.origin_nanos();
            self.set_splits(c.splits().cloned());
        }
        self.deliver_from_split(input, element, sink)
    }

    /// [`Chain::deliver`]s an element of the current split to the head operator: what the
    /// operators emit for it carries the split ([`Chain::of_split`] holds only meanwhile).
    fn deliver_from_split(
        &mut self,
        input: usize,
        element: StreamElement,
        sink: &mut Vec<StreamElement>,
    ) -> Result<()> {
        self.of_split = true;
        let delivered = self.deliver(0, input, element, sink);
        self.of_split = false;
        delivered
    }

    /// Ends the input of the operators in turn, head first, running what each emits through
    /// the rest of the chain. An operator's input ends once every operator before it has ended
    /// and has no async work left. Returns whether the whole chain has ended and is idle;
    /// when not, call again after [`Chain::poll_async`].
    pub(crate) fn advance_end(&mut self, sink: &mut Vec<StreamElement>) -> Result<bool> {
        while self.ended < self.ops.len() {
            if self.ended > 0 && self.ops[self.ended - 1].op.async_state() != AsyncState::Idle {
                return Ok(false);
            }
            let i = self.ended;
            let o = &mut self.ops[i];
            guarded(&self.info, &o.name, || o.op.end_of_input(&mut o.ctx, &mut o.out))?;
            self.ended += 1;
            self.forward(i, sink)?;
        }
        Ok(self.async_state() == AsyncState::Idle)
    }

    /// Fires the processing-time timers due at `now`, head first.
    pub(crate) fn fire_processing_timers(&mut self, now: i64, sink: &mut Vec<StreamElement>) -> Result<()> {
        for i in 0..self.ops.len() {
            let o = &mut self.ops[i];
            while let Some(timer) = o.ctx.timers_mut().pop_due(TimeDomain::ProcessingTime, now) {
                guarded(&self.info, &o.name, || o.op.on_timer(timer, &mut o.ctx, &mut o.out))?;
            }
            self.forward(i, sink)?;
        }
        Ok(())
    }

    /// The state of the head source and of every operator, in chain order, for checkpoint
    /// `checkpoint` (taken when its barrier has been aligned at the chain's input): first
    /// every operator, head first, emits what goes before the barrier (into `sink` past the
    /// chain), then each writes its state.
    pub(crate) fn snapshot(&mut self, checkpoint: u64, sink: &mut Vec<StreamElement>) -> Result<Vec<StateWriter>> {
        self.prepare_barrier(checkpoint, sink)?;
        self.snapshot_states(checkpoint)
    }

    /// Lets every operator, head first, emit what goes before checkpoint `checkpoint`'s
    /// barrier (into `sink` past the chain) and start what must be done before it (a sink's
    /// flush, which the runtime then waits for).
    pub(crate) fn prepare_barrier(&mut self, checkpoint: u64, sink: &mut Vec<StreamElement>) -> Result<()> {
        for i in 0..self.ops.len() {
            let o = &mut self.ops[i];
            guarded(&self.info, &o.name, || o.op.prepare_snapshot_pre_barrier(checkpoint, &mut o.ctx, &mut o.out))?;
            self.forward(i, sink)?;
        }
        Ok(())
    }

    /// The state of the head source and of every operator, in chain order, for checkpoint
    /// `checkpoint`, once [`Chain::prepare_barrier`] ran and no async work is in flight.
    pub(crate) fn snapshot_states(&mut self, checkpoint: u64) -> Result<Vec<StateWriter>> {
        self.write_states(checkpoint, |_| true)
    }

    /// The final state of a chain that has finished: its source's position and the state of the
    /// operators that keep state after the end of input ([`Operator::keeps_state_after_end`]);
    /// the others' parts are empty.
    pub(crate) fn final_snapshot(&mut self) -> Result<Vec<StateWriter>> {
        self.write_states(0, |op| op.keeps_state_after_end())
    }

    /// The source's state and that of each operator `wanted` accepts (an empty part for the
    /// others), in chain order.
    fn write_states(&mut self, checkpoint: u64, wanted: impl Fn(&dyn Operator) -> bool) -> Result<Vec<StateWriter>> {
        let mut states = Vec::with_capacity(self.ops.len() + 1);
        if let Some(s) = &mut self.source {
            let mut state = StateWriter::new();
            guarded(&self.info, &s.name, || s.source.snapshot_state(checkpoint, &mut s.ctx, &mut state))?;
            states.push(state);
        }
        for o in &mut self.ops {
            let mut state = StateWriter::new();
            if wanted(o.op.as_ref()) {
                guarded(&self.info, &o.name, || o.op.snapshot_state(checkpoint, &mut o.ctx, &mut state))?;
            }
            states.push(state);
        }
        Ok(states)
    }

    /// Tells the head source and every operator, head first, that checkpoint `checkpoint` is complete.
    pub(crate) fn notify_checkpoint_complete(&mut self, checkpoint: u64, sink: &mut Vec<StreamElement>) -> Result<()> {
        if let Some(s) = &mut self.source {
            guarded(&self.info, &s.name, || s.source.notify_checkpoint_complete(checkpoint, &mut s.ctx))?;
        }
        for i in 0..self.ops.len() {
            let o = &mut self.ops[i];
            guarded(&self.info, &o.name, || o.op.notify_checkpoint_complete(checkpoint, &mut o.ctx, &mut o.out))?;
            self.forward(i, sink)?;
        }
        Ok(())
    }

    /// Gives the head source and each operator, in chain order, the states restored for it
    /// (`states[i]` for the `i`-th, the source first); called before [`Chain::open`], and only
    /// for a chain the checkpoint has state for.
    pub(crate) fn restore(&mut self, states: &[Vec<StateReader>]) -> Result<()> {
        if states.is_empty() {
            return Ok(());
        }
        let mut states = states.iter();
        let info = &self.info;
        // An operator the checkpoint holds nothing for starts empty.
        if let Some(s) = &mut self.source {
            let own = states.next().map_or(&[][..], Vec::as_slice);
            if !own.is_empty() {
                guarded(info, &s.name, || s.source.restore_state(&mut s.ctx, own))?;
            }
        }
        for o in &mut self.ops {
            let own = states.next().map_or(&[][..], Vec::as_slice);
            if !own.is_empty() {
                guarded(info, &o.name, || o.op.restore_state(&mut o.ctx, own))?;
            }
        }
        Ok(())
    }

    /// Rows the head source produced so far.
    pub(crate) fn rows_read(&self) -> u64 {
        self.rows_read
    }

    /// How far the head source has read, when it can tell.
    pub(crate) fn source_progress(&self) -> Option<crate::operator::SourceProgress> {
        self.source.as_ref().and_then(|s| s.source.progress())
    }

    /// Rows handed to the chain's last operator so far.
    pub(crate) fn rows_into_last(&self) -> u64 {
        self.rows_into_last
    }

    /// The earliest processing-time timer of any operator in the chain.
    pub(crate) fn next_processing_timer(&self) -> Option<i64> {
        self.ops.iter().filter_map(|o| o.ctx.timers().next_processing_time()).min()
    }

    /// Hands `element` to operator `index` (or to `sink` past the last one), then forwards
    /// what the operator emitted.
    fn deliver(
        &mut self,
        index: usize,
        input: usize,
        element: StreamElement,
        sink: &mut Vec<StreamElement>,
    ) -> Result<()> {
        if index == self.ops.len() {
            let element = match element {
                StreamElement::Chunk(mut c) => {
                    c.set_origin_nanos(self.origin);
                    c.set_splits(self.splits.clone().filter(|_| self.of_split));
                    StreamElement::Chunk(c)
                }
                other => other,
            };
            sink.push(element);
            return Ok(());
        }
        if index + 1 == self.ops.len() {
            if let StreamElement::Chunk(c) = &element {
                self.rows_into_last += c.len() as u64;
                // A chunk an operator built without an origin inherits the input's.
                let origin = if c.origin_nanos() != 0 { c.origin_nanos() } else { self.origin };
                if let (Some(metrics), true) = (&self.latency, origin != 0) {
                    metrics.record_latency(monotonic_nanos().saturating_sub(origin), c.len());
                }
            }
        }
        // What an operator emits for anything but a chunk (a watermark's timers) is of no split.
        let of_split = self.of_split;
        self.of_split &= matches!(element, StreamElement::Chunk(_));
        let info = &self.info;
        let o = &mut self.ops[index];
        let handled = guarded(info, &o.name, || match element {
            StreamElement::Chunk(chunk) => o.op.process_chunk(input, chunk, &mut o.ctx, &mut o.out),
            StreamElement::Watermark(watermark) => {
                o.ctx.set_watermark(watermark);
                while let Some(timer) = o.ctx.timers_mut().pop_due(TimeDomain::EventTime, watermark) {
                    o.op.on_timer(timer, &mut o.ctx, &mut o.out)?;
                }
                o.op.process_watermark(watermark, &mut o.ctx, &mut o.out)
            }
            StreamElement::FlushMarker(marker) => o.op.process_flush_marker(marker, &mut o.ctx, &mut o.out),
            other => {
                o.out.emit(other);
                Ok(())
            }
        });
        let forwarded = handled.and_then(|()| self.forward(index, sink));
        self.of_split = of_split;
        forwarded
    }

    /// Passes what operator `index` emitted to the next operator.
    fn forward(&mut self, index: usize, sink: &mut Vec<StreamElement>) -> Result<()> {
        if self.ops[index].out.is_empty() {
            return Ok(());
        }
        let mut out = std::mem::take(&mut self.ops[index].out);
        let result = out.drain().try_for_each(|element| self.deliver(index + 1, 0, element, sink));
        self.ops[index].out = out;
        result
    }
}

#[cfg(test)]
mod tests {
    use crate::chunk::Chunk;
    use crate::element::StreamElement;
    use crate::error::Result;
    use crate::fixture::chunk;
    use crate::harness::OperatorHarness;
    use crate::operator::{Operator, OperatorContext, Output, Splits};
    use crate::timers::Timer;

    /// Passes its chunks on, asks for a processing-time timer, and emits a row of its own from
    /// that timer, from each watermark and from the end of its input.
    struct Echo;

    fn own_row() -> Chunk {
        chunk("op | n INT\n+I | 0")
    }

    impl Operator for Echo {
        fn name(&self) -> &str {
            "Echo"
        }

        fn process_chunk(&mut self, _: usize, chunk: Chunk, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
            ctx.register_processing_time_timer(10, Vec::new());
            out.collect(chunk);
            Ok(())
        }

        fn process_watermark(&mut self, watermark: i64, _: &mut OperatorContext, out: &mut Output) -> Result<()> {
            out.collect(own_row());
            out.emit_watermark(watermark);
            Ok(())
        }

        fn on_timer(&mut self, _: Timer, _: &mut OperatorContext, out: &mut Output) -> Result<()> {
            out.collect(own_row());
            Ok(())
        }

        fn end_of_input(&mut self, _: &mut OperatorContext, out: &mut Output) -> Result<()> {
            out.collect(own_row());
            Ok(())
        }
    }

    fn tags(h: &mut OperatorHarness) -> Vec<Option<usize>> {
        h.take_output()
            .into_iter()
            .filter_map(|e| match e {
                StreamElement::Chunk(c) => Some(c.splits().map(|s| s.current)),
                _ => None,
            })
            .collect()
    }

    /// Rows an operator emits for a split's chunk leave the chain tagged with that split; rows
    /// it emits from a timer, a watermark or the end of its input come from no one split and
    /// leave untagged (a split-aware watermark assigner after a forward edge counts them for no
    /// split).
    #[test]
    fn only_rows_emitted_for_a_splits_chunk_carry_its_split() {
        let mut h = OperatorHarness::new(Echo);
        h.set_splits(Some(Splits { current: 1, open: vec![true, true] }));
        h.push("op | n INT\n+I | 1").unwrap();
        assert_eq!(tags(&mut h), [Some(1)]);
        h.advance_processing_time(10).unwrap();
        h.watermark(5).unwrap();
        h.end_input().unwrap();
        assert_eq!(tags(&mut h), [None, None, None]);
        h.push("op | n INT\n+I | 2").unwrap();
        assert_eq!(tags(&mut h), [Some(1)]);
    }
}
