//! What the three group aggregates (GroupAggregate in mini-batch, LocalGroupAggregate,
//! GlobalGroupAggregate) share about mini-batch bundles: when one is due ([`BundleTrigger`]),
//! how many rows it took and when its oldest data left its source (`BundleMeter`), what a
//! flush records, and that a bundle flushes on every flush marker, watermark and at the end of
//! input (`Bundled`).

use weir_runtime::{Chunk, OperatorContext, Output, Result};

/// When a mini-batch bundle flushes besides on markers, watermarks and the end of input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BundleTrigger {
    /// `table.exec.mini-batch.size`: flush at this many buffered rows.
    pub size: Option<usize>,
    /// Flush when the buffered rows take about this many bytes.
    pub memory_budget: usize,
}

/// About how many bytes a bundle holding one row of `chunk` takes for it (its values and
/// the row's bookkeeping), for the memory budget.
pub(crate) fn row_bytes(chunk: &Chunk) -> usize {
    chunk.arity() * std::mem::size_of::<weir_runtime::Value>() + 64
}

impl BundleTrigger {
    /// How many of the next `left` rows go into a bundle holding `buffered` rows before the
    /// size trigger fires (at least one).
    pub fn room(&self, buffered: usize, left: usize) -> usize {
        self.size.map_or(left, |s| s.saturating_sub(buffered).clamp(1, left))
    }

    /// Whether a bundle of `buffered` rows taking `bytes` bytes is due to flush.
    pub fn is_due(&self, buffered: usize, bytes: usize) -> bool {
        self.size.is_some_and(|s| buffered >= s) || bytes >= self.memory_budget
    }
}

/// The bookkeeping of the bundle being filled: its trigger, the rows it took and the origin of
/// its oldest data (for latency).
#[derive(Debug, Clone)]
pub(crate) struct BundleMeter {
    trigger: BundleTrigger,
    rows: usize,
    /// When the bundle's oldest data left its source, 0 when unknown.
    origin: u64,
}

impl BundleMeter {
    /// An empty bundle flushed by `trigger`.
    pub(crate) fn new(trigger: BundleTrigger) -> Self {
        BundleMeter { trigger, rows: 0, origin: 0 }
    }

    /// Notes that rows of `chunk` are about to join the bundle (the first chunk sets its origin).
    pub(crate) fn arriving(&mut self, chunk: &Chunk) {
        if self.origin == 0 {
            self.origin = chunk.origin_nanos();
        }
    }

    /// How many of the next `left` rows fit before the size trigger fires (at least one).
    pub(crate) fn room(&self, left: usize) -> usize {
        self.trigger.room(self.rows, left)
    }

    /// Counts `rows` more rows; whether the bundle, now taking `bytes` bytes, is due to flush.
    pub(crate) fn add(&mut self, rows: usize, bytes: usize) -> bool {
        self.rows += rows;
        self.trigger.is_due(self.rows, bytes)
    }

    /// Whether the bundle took no rows since the last flush.
    pub(crate) fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Ends the bundle: records it (its rows and `groups` keys) in the subtask's metrics and
    /// gives `emitted`, the flush's output, the bundle's origin. The next bundle starts empty.
    pub(crate) fn flushed(&mut self, groups: usize, ctx: &OperatorContext, emitted: &mut Chunk) {
        ctx.record_bundle(self.rows, groups);
        emitted.set_origin_nanos(std::mem::take(&mut self.origin));
        self.rows = 0;
    }
}

/// An operator holding a bundle, which it flushes on every flush marker and watermark (both
/// then pass on) and at the end of input, as Flink's bundle operators do.
pub(crate) trait Bundled {
    /// Emits what the bundle holds and starts the next one.
    ///
    /// # Errors
    /// When the state cannot take the bundle (the memory limit is reached).
    fn flush(&mut self, ctx: &OperatorContext, out: &mut Output) -> Result<()>;

    /// The [`weir_runtime::Operator::process_flush_marker`] of a bundle operator.
    fn flush_on_marker(&mut self, marker: i64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush(ctx, out)?;
        out.emit_flush_marker(marker);
        Ok(())
    }

    /// The [`weir_runtime::Operator::process_watermark`] of a bundle operator.
    fn flush_on_watermark(&mut self, watermark: i64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush(ctx, out)?;
        out.emit_watermark(watermark);
        Ok(())
    }

    /// The [`weir_runtime::Operator::end_of_input`] of a bundle operator.
    fn flush_at_end(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush(ctx, out)
    }
}
