//! MiniBatchAssigner: tells the bundle operators downstream when to flush.
//!
//! In processing-time mode it emits a flush marker at every multiple of the interval
//! (`table.exec.mini-batch.allow-latency`) of the job's clock, from a timer and whenever rows
//! pass; upstream watermarks are dropped except the final one. In row-time mode it passes
//! watermarks on only when they cross an interval boundary (the watermark itself makes bundle
//! operators flush), so that downstream flushes happen once per interval of event time.

use weir_runtime::element::MAX_WATERMARK;
use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result, Timer};

/// How the assigner measures the interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MiniBatchMode {
    /// Processing time: flush markers from the job's clock.
    ProcTime,
    /// Event time: only watermarks at interval boundaries pass.
    RowTime,
}

/// Everything a [`MiniBatchAssignerOperator`] is built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MiniBatchAssignerSpec {
    /// `table.exec.mini-batch.allow-latency` in milliseconds.
    pub interval_millis: i64,
    /// Processing time or event time.
    pub mode: MiniBatchMode,
}

impl crate::spec::OperatorSpec for MiniBatchAssignerSpec {
    type Operator = MiniBatchAssignerOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> MiniBatchAssignerOperator {
        MiniBatchAssignerOperator::new(self.interval_millis, self.mode)
    }
}

/// Emits flush markers (processing time) or boundary watermarks (event time).
#[derive(Debug, Clone)]
pub struct MiniBatchAssignerOperator {
    interval: i64,
    mode: MiniBatchMode,
    /// The last marker or watermark emitted.
    current: i64,
    /// Row time: the end of the interval of the last watermark sent on; a watermark at or
    /// past it goes on, one before it is held back.
    pending: Option<i64>,
}

impl MiniBatchAssignerOperator {
    /// An assigner with an interval of `interval_millis` (at least 1 in processing time).
    pub fn new(interval_millis: i64, mode: MiniBatchMode) -> Self {
        // As in Flink, nothing at or before the epoch is marked.
        let current = if mode == MiniBatchMode::ProcTime { 0 } else { i64::MIN };
        MiniBatchAssignerOperator { interval: interval_millis.max(0), mode, current, pending: None }
    }

    fn emit_batch_marker(&mut self, now: i64, ctx: &mut OperatorContext, out: &mut Output) {
        let interval = self.interval.max(1);
        let batch = now - now.rem_euclid(interval);
        if batch > self.current {
            self.current = batch;
            out.emit_flush_marker(batch);
        }
        ctx.register_processing_time_timer(batch + interval, Vec::new());
    }

    /// The last millisecond of the interval that contains `watermark`: the next watermark at or
    /// past it goes on (Flink's `RowTimeMiniBatchAssginerOperator`).
    fn interval_end(&self, watermark: i64) -> i64 {
        if self.interval <= 0 {
            return watermark;
        }
        watermark - (watermark + self.interval).rem_euclid(self.interval) + self.interval - 1
    }
}

impl Operator for MiniBatchAssignerOperator {
    fn name(&self) -> &str {
        "MiniBatchAssigner"
    }

    fn open(&mut self, ctx: &mut OperatorContext) -> Result<()> {
        if self.mode == MiniBatchMode::ProcTime {
            let now = ctx.processing_time();
            let interval = self.interval.max(1);
            ctx.register_processing_time_timer(now - now.rem_euclid(interval) + interval, Vec::new());
        }
        Ok(())
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        out.collect(chunk);
        if self.mode == MiniBatchMode::ProcTime {
            let now = ctx.processing_time();
            let interval = self.interval.max(1);
            if now - now.rem_euclid(interval) > self.current {
                self.emit_batch_marker(now, ctx, out);
            }
        }
        Ok(())
    }

    fn on_timer(&mut self, timer: Timer, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.emit_batch_marker(timer.time.max(ctx.processing_time()), ctx, out);
        Ok(())
    }

    fn process_watermark(&mut self, watermark: i64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        match self.mode {
            MiniBatchMode::ProcTime => {
                if watermark == MAX_WATERMARK {
                    out.emit_watermark(watermark);
                }
            }
            MiniBatchMode::RowTime => {
                if watermark == MAX_WATERMARK {
                    self.pending = None;
                    self.current = watermark;
                    out.emit_watermark(watermark);
                    return Ok(());
                }
                // As Flink's: before any watermark went on, the interval that ends the first
                // one at or past is the one starting at 0, so the first watermark goes on.
                let target = self.pending.unwrap_or_else(|| self.interval_end(0));
                if watermark >= target && watermark > self.current {
                    self.current = watermark;
                    self.pending = Some(self.interval_end(watermark));
                    out.emit_watermark(watermark);
                }
            }
        }
        Ok(())
    }

    fn end_of_input(&mut self, _ctx: &mut OperatorContext, _out: &mut Output) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::harness::OperatorHarness;

    #[test]
    fn processing_time_mode_marks_each_interval_from_the_clock() {
        let mut h = OperatorHarness::new(MiniBatchAssignerOperator::new(1000, MiniBatchMode::ProcTime));
        h.push("op | INT\n+I | 1").unwrap();
        h.advance_processing_time(999).unwrap();
        h.watermark(5).unwrap();
        assert_eq!(h.take_lines(), ["+I[1]"], "upstream watermarks are dropped");
        h.advance_processing_time(1).unwrap();
        assert_eq!(h.take_lines(), ["flush-marker 1000"]);
        h.advance_processing_time(2500).unwrap();
        h.push("op | INT\n+I | 2").unwrap();
        assert_eq!(h.take_lines(), ["flush-marker 3000", "+I[2]"]);
        h.watermark(i64::MAX).unwrap();
        assert_eq!(h.take_lines(), [format!("watermark {}", i64::MAX)]);
    }

    #[test]
    fn row_time_mode_passes_only_boundary_watermarks() {
        let mut h = OperatorHarness::new(MiniBatchAssignerOperator::new(5, MiniBatchMode::RowTime));
        for w in 0..=21 {
            h.watermark(w).unwrap();
        }
        // As Flink's: the watermark at an interval's end goes on, and so does the next one.
        let expected = ["watermark 4", "watermark 5", "watermark 9", "watermark 10", "watermark 14", "watermark 15"];
        assert_eq!(h.take_lines()[..6], expected);
        // The first watermark goes on at once, as Flink's does; then one per interval.
        let mut h = OperatorHarness::new(MiniBatchAssignerOperator::new(50, MiniBatchMode::RowTime));
        for w in [8_000, 8_030, 8_049, 8_050, 8_120, 8_100, 8_170] {
            h.watermark(w).unwrap();
        }
        let expected = ["watermark 8000", "watermark 8049", "watermark 8050", "watermark 8120", "watermark 8170"];
        assert_eq!(h.take_lines(), expected);
        h.watermark(i64::MAX).unwrap();
        assert_eq!(h.take_lines(), [format!("watermark {}", i64::MAX)]);
    }
}
