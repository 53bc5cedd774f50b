//! The one operator every window operator runs as: it counts late rows, follows the watermark,
//! fires windows when it rises and at the end of input, and checkpoints the watermark beside
//! the windows' own state. What differs between slicing (TUMBLE, HOP, CUMULATE), sessions and
//! windows the rows carry is the [`Windows`] it drives.
//!
//! Windows of processing time follow the job's clock instead: a row joins the window of the
//! time it arrives, and a window fires once the clock reaches its end (a processing-time timer
//! at the next window's end), so no row arriving in a window's last millisecond comes after it
//! fired; the progress checkpointed is then the clock fired up to, less 1 ms. The end of input
//! fires every window left, of either time, so a bounded job loses none.

use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result, RowKind, SubtaskInfo, Timer, Value};

/// The section of a window operator's state holding the watermark up to which it fired windows.
pub(crate) const PROGRESS: &str = "progress";

/// How a window aggregate keeps and fires its windows.
pub trait Windows: std::fmt::Debug + Send {
    /// Flink's name of the operator.
    fn name(&self) -> &'static str;

    /// Adds one input row, the watermark (or, over processing time, the time fired up to)
    /// being `watermark` and the clock `now`; returns whether it was late (and dropped).
    ///
    /// # Errors
    /// The memory limit refuses the state room for it.
    fn add(&mut self, kind: RowKind, row: &[Value], watermark: i64, now: i64) -> Result<bool>;

    /// Whether the windows are of processing time (fired by the clock, not the watermark).
    fn processing_time(&self) -> bool {
        false
    }

    /// The earliest time a window fires at (its end - 1), when one is waiting.
    fn next_fire_time(&mut self) -> Option<i64> {
        None
    }

    /// Emits into `fired` every window the watermark `watermark` makes due, earliest first,
    /// and drops what no later window needs.
    ///
    /// # Errors
    /// What an aggregate function refuses while merging slices.
    fn fire(&mut self, watermark: i64, fired: &mut Fired<'_>) -> Result<()>;

    /// The number of columns of the emitted rows.
    fn arity(&self) -> usize;

    /// Writes the windows' state.
    fn snapshot(&mut self, state: &mut StateWriter);

    /// Takes back the windows' state of the keys subtask `info` owns.
    ///
    /// # Errors
    /// A damaged state, or one of other aggregates.
    fn restore(&mut self, states: &[StateReader], info: &SubtaskInfo) -> Result<()>;
}

/// Where the rows of fired windows go: a chunk handed on to the output each time it holds the
/// job's chunk size, so that a watermark firing many windows at once (the end of input fires
/// all of them) sends them on in chunks of bounded size.
pub struct Fired<'a> {
    chunk: Chunk,
    limit: usize,
    out: &'a mut Output,
}

impl<'a> Fired<'a> {
    fn new(arity: usize, limit: usize, out: &'a mut Output) -> Self {
        Fired { chunk: Chunk::with_capacity(arity, 0), limit: limit.max(1), out }
    }

    /// The chunk the next window's rows go into.
    pub fn chunk(&mut self) -> &mut Chunk {
        if self.chunk.len() >= self.limit {
            let next = Chunk::with_capacity(self.chunk.arity(), self.limit);
            self.out.collect(std::mem::replace(&mut self.chunk, next));
        }
        &mut self.chunk
    }

    /// Hands on the rows not sent yet.
    fn finish(self) {
        if !self.chunk.is_empty() {
            self.out.collect(self.chunk);
        }
    }
}

/// A window aggregate over `W`; see the module documentation.
#[derive(Debug)]
pub struct WindowOperator<W> {
    windows: W,
    /// The last watermark: windows whose end - 1 is at or before it have fired.
    watermark: i64,
}

impl<W: Windows> WindowOperator<W> {
    /// The operator driving `windows`.
    pub(crate) fn over(windows: W) -> Self {
        WindowOperator { windows, watermark: i64::MIN }
    }

    /// Fires the windows due at `watermark`, in chunks of up to `chunk_size` rows.
    fn fire(&mut self, watermark: i64, chunk_size: usize, out: &mut Output) -> Result<()> {
        let mut fired = Fired::new(self.windows.arity(), chunk_size, out);
        self.windows.fire(watermark, &mut fired)?;
        fired.finish();
        Ok(())
    }

    /// Over processing time: fires the windows whose end - 1 is at or before `progress`.
    fn advance_to(&mut self, progress: i64, chunk_size: usize, out: &mut Output) -> Result<()> {
        if progress > self.watermark {
            self.watermark = progress;
            self.fire(progress, chunk_size, out)?;
        }
        Ok(())
    }

    /// Over processing time: a timer at the next window's end (one timer per time).
    fn schedule(&mut self, ctx: &mut OperatorContext) {
        if let Some(time) = self.windows.next_fire_time() {
            ctx.register_processing_time_timer(time + 1, Vec::new());
        }
    }
}

impl<W: Windows> Operator for WindowOperator<W> {
    fn name(&self) -> &str {
        self.windows.name()
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let now = ctx.processing_time();
        let processing_time = self.windows.processing_time();
        if processing_time {
            // Windows that ended before this row came fire before it joins its own.
            self.advance_to(now - 1, ctx.chunk_size(), out)?;
        }
        let mut late = 0;
        for (kind, row) in chunk.rows() {
            late += u64::from(self.windows.add(kind, row, self.watermark, now)?);
        }
        ctx.record_late_dropped(late);
        if processing_time {
            self.schedule(ctx);
        }
        Ok(())
    }

    fn on_timer(&mut self, _timer: Timer, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        if self.windows.processing_time() {
            self.advance_to(ctx.processing_time() - 1, ctx.chunk_size(), out)?;
            self.schedule(ctx);
        }
        Ok(())
    }

    fn process_watermark(&mut self, watermark: i64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        if watermark > self.watermark && !self.windows.processing_time() {
            self.watermark = watermark;
            self.fire(watermark, ctx.chunk_size(), out)?;
        }
        out.emit_watermark(watermark);
        Ok(())
    }

    /// The end of input fires every window, as the final watermark does.
    fn end_of_input(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.watermark = i64::MAX;
        self.fire(i64::MAX, ctx.chunk_size(), out)?;
        Ok(())
    }

    /// The windows' state and the watermark they fired up to.
    fn snapshot_state(&mut self, _: u64, _: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        self.windows.snapshot(state);
        state.section(PROGRESS).i64(self.watermark);
        Ok(())
    }

    /// The windows of the keys this subtask owns now; the watermark is the lowest the old
    /// subtasks wrote (they all saw the same watermarks before the barrier).
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        self.windows.restore(states, ctx.subtask())?;
        let mut watermark = None::<i64>;
        for state in states {
            if let Some(mut input) = state.section(PROGRESS) {
                let old = input.i64().map_err(|e| {
                    weir_runtime::Error::Restore(format!("the state of {} is malformed: {e}", self.windows.name()))
                })?;
                watermark = Some(watermark.map_or(old, |w| w.min(old)));
            }
        }
        self.watermark = watermark.unwrap_or(i64::MIN);
        if self.windows.processing_time() {
            self.schedule(ctx);
        }
        Ok(())
    }
}
