//! WatermarkAssigner: generates watermarks from `WATERMARK FOR column AS expression`.

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMicrosecondType;
use weir_runtime::columnar::value_at;
use weir_runtime::{Chunk, Error, Operator, OperatorContext, Output, Result, Timer, Value};

use crate::expr::Expr;
use crate::window::millis_of as millis;

/// Everything a [`WatermarkAssignerOperator`] is built from.
#[derive(Debug, Clone)]
pub struct WatermarkAssignerSpec {
    /// The rowtime column (EXPLAIN names it).
    pub rowtime: usize,
    /// The watermark of a row.
    pub watermark: Expr,
    /// `pipeline.auto-watermark-interval` in milliseconds (0: every advance goes out at once).
    pub interval_millis: i64,
}

impl crate::spec::OperatorSpec for WatermarkAssignerSpec {
    type Operator = WatermarkAssignerOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> WatermarkAssignerOperator {
        WatermarkAssignerOperator::new(self.watermark.clone()).with_interval(self.interval_millis)
    }
}

/// Forwards rows and sends watermarks on as Flink's `WatermarkAssignerOperator` does: the
/// watermark is the largest its rows produced (starting at 0; it never goes back; a row with a
/// NULL watermark produces none), sent right after a row that moved it on by more than the
/// interval (`pipeline.auto-watermark-interval`, 200 ms by default) since the last one sent, and
/// otherwise every interval of processing time. So on disordered input the rows late downstream
/// are those late in Flink: a row is late only for a watermark that went out before it. With an
/// interval of 0 every advance goes out after its row. On-time rows are never split apart.
#[derive(Debug, Clone)]
pub struct WatermarkAssignerOperator {
    watermark: Expr,
    /// `column - INTERVAL 'd'` (or the column itself): the watermark read from the column
    /// directly, without evaluating the expression per row.
    bounded_delay: Option<(usize, i64)>,
    /// The watermark sent last (Flink's `lastWatermark`, 0 before the first).
    current: i64,
    /// The largest watermark of the rows so far (Flink's `currentWatermark`, from 0).
    max: i64,
    /// How far the watermark moves on before it goes out after a row, and how often (in
    /// processing time) it goes out otherwise; 0 sends every advance at once.
    interval: i64,
    /// Per split of the source before it, when it reads several side by side
    /// ([`OperatorContext::splits`]): the largest watermark of the split's rows so far (`None`
    /// before its first). The watermark emitted is the least over the open splits.
    split_max: Vec<Option<i64>>,
    /// Whether a processing-time tick is due: the watermark is looked at again every interval
    /// (with splits, at least every [`SPLIT_WATERMARK_INTERVAL`] ms, so that a split going idle
    /// lets it advance without new rows), as Flink's periodic watermarks are.
    ticking: bool,
}

/// How often, in milliseconds, the watermark of several splits is looked at again without new
/// rows when the interval is 0 (Flink's `pipeline.auto-watermark-interval` default).
pub const SPLIT_WATERMARK_INTERVAL: i64 = 200;

/// `(column, d)` when `watermark` is `column - INTERVAL 'd'` (a day-time interval) or `column`.
fn bounded_delay(watermark: &Expr) -> Option<(usize, i64)> {
    match watermark {
        Expr::Column { index, .. } => Some((*index, 0)),
        Expr::Call { function: crate::expr::Function::Minus, args, .. } => match args.as_slice() {
            [Expr::Column { index, .. }, Expr::Literal { value: Value::IntervalDayTime(d), .. }] => Some((*index, *d)),
            _ => None,
        },
        _ => None,
    }
}

impl WatermarkAssignerOperator {
    /// An assigner computing each row's watermark with `watermark` (a TIMESTAMP expression).
    pub fn new(watermark: Expr) -> Self {
        WatermarkAssignerOperator {
            bounded_delay: bounded_delay(&watermark),
            watermark,
            current: 0,
            max: 0,
            interval: 0,
            split_max: Vec::new(),
            ticking: false,
        }
    }

    /// The assigner sending watermarks at `interval` milliseconds (see the type).
    pub fn with_interval(mut self, interval: i64) -> Self {
        self.interval = interval.max(0);
        self
    }

    /// The watermark now: the rows' largest, or with splits the least of the open splits'.
    fn watermark_now(&self, ctx: &OperatorContext) -> i64 {
        let Some(splits) = ctx.splits() else { return self.max };
        (0..splits.open.len().min(self.split_max.len()))
            .filter(|&k| splits.open[k])
            .map(|k| self.split_max[k].unwrap_or(i64::MIN))
            .min()
            .unwrap_or(self.max)
    }

    /// Asks for the next periodic look at the watermark, unless one is due.
    fn tick(&mut self, ctx: &mut OperatorContext) {
        let every = if self.interval > 0 {
            self.interval
        } else if ctx.splits().is_some() {
            SPLIT_WATERMARK_INTERVAL
        } else {
            return;
        };
        if !self.ticking {
            self.ticking = true;
            let at = ctx.processing_time() + every;
            ctx.register_processing_time_timer(at, Vec::new());
        }
    }
}

impl Operator for WatermarkAssignerOperator {
    fn name(&self) -> &str {
        "WatermarkAssigner"
    }

    /// With splits, the chunk's rows are all of the current split: the watermark is the least
    /// of the open splits' (a split without a row yet holds it back), so that no split's rows
    /// are late for another's progress.
    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        // Without splits, the watermark is the largest of the rows'; with them, the largest of
        // this split's, held at the least of the other open splits'.
        let (mut max, held) = match ctx.splits() {
            None => (self.max, i64::MAX),
            Some(splits) => {
                if self.split_max.len() < splits.open.len() {
                    self.split_max.resize(splits.open.len(), None);
                }
                let held = (0..splits.open.len())
                    .filter(|&k| k != splits.current && splits.open[k])
                    .map(|k| self.split_max[k].unwrap_or(i64::MIN))
                    .min()
                    .unwrap_or(i64::MAX);
                (self.split_max[splits.current].unwrap_or(0), held)
            }
        };
        // Each row's watermark, read from the column it needs (the whole row only for a
        // watermark expression other than `column - delay`).
        let marks: Vec<Option<i64>> = match self.bounded_delay {
            Some((column, delay)) => {
                column_millis(&chunk, column).into_iter().map(|t| t.map(|t| t.saturating_sub(delay))).collect()
            }
            None => chunk
                .rows()
                .map(|(_, row)| Ok(millis(&self.watermark.eval(row).map_err(|e| Error::execution(e.to_string()))?)))
                .collect::<Result<Vec<_>>>()?,
        };
        // The first row not sent on yet.
        let mut from = 0;
        for (i, watermark) in marks.into_iter().enumerate() {
            if let Some(watermark) = watermark {
                max = max.max(watermark);
            }
            // Flink's eager watermark: after a row that moved it on by more than the interval.
            let effective = max.min(held);
            if effective > self.current && i128::from(effective) - i128::from(self.current) > i128::from(self.interval)
            {
                out.collect(chunk.selected(&(from as u32..i as u32 + 1).collect::<Vec<_>>()));
                from = i + 1;
                self.current = effective;
                out.emit_watermark(effective);
            }
        }
        match ctx.splits() {
            Some(splits) => self.split_max[splits.current] = Some(max),
            None => self.max = max,
        }
        match from {
            0 => out.collect(chunk),
            from if from < chunk.len() => {
                out.collect(chunk.selected(&(from as u32..chunk.len() as u32).collect::<Vec<_>>()))
            }
            _ => {}
        }
        self.tick(ctx);
        Ok(())
    }

    /// The periodic look at the watermark: it goes out when it is ahead of the last one sent
    /// (with splits, the least of the open splits': one that went idle no longer holds it back).
    fn on_timer(&mut self, _timer: Timer, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.ticking = false;
        let now = self.watermark_now(ctx);
        if now > self.current {
            self.current = now;
            out.emit_watermark(now);
        }
        self.tick(ctx);
        Ok(())
    }

    fn process_watermark(&mut self, watermark: i64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        // Only the end of input (the maximum watermark) passes from upstream.
        if watermark == i64::MAX {
            self.current = watermark;
            out.emit_watermark(watermark);
        }
        Ok(())
    }
}

/// The milliseconds of column `c` for each row of `chunk` (`None` for NULL).
fn column_millis(chunk: &Chunk, c: usize) -> Vec<Option<i64>> {
    let column = chunk.columns().compacted(c);
    // A TIMESTAMP or TIMESTAMP_LTZ column holds microseconds: read them without making values.
    if let Some(micros) = column.as_primitive_opt::<TimestampMicrosecondType>() {
        return micros.iter().map(|m| m.map(|m| m.div_euclid(1000))).collect();
    }
    (0..chunk.len()).map(|i| millis(&value_at(column.as_ref(), i))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Function;
    use weir_runtime::harness::OperatorHarness;
    use weir_runtime::{DataType, Timestamp};

    #[test]
    fn emits_rising_watermarks_after_rows() {
        let ts = Expr::column(0, DataType::timestamp(3));
        let five_seconds =
            Expr::literal(Value::IntervalDayTime(5000), DataType::new(weir_runtime::LogicalType::IntervalDayTime));
        let watermark = Expr::call(Function::Minus, vec![ts, five_seconds]).unwrap();
        let mut h = OperatorHarness::new(WatermarkAssignerOperator::new(watermark));
        h.push("op | ts TIMESTAMP(3)\n+I | 2024-01-01 10:00:10\n+I | 2024-01-01 10:00:08").unwrap();
        h.push("op | ts TIMESTAMP(3)\n+I | 2024-01-01 10:00:09").unwrap();
        h.watermark(7).unwrap();
        h.watermark(i64::MAX).unwrap();
        let expected = Timestamp::from_millis(1_704_103_205_000).millis;
        assert_eq!(
            h.take_lines(),
            [
                "+I[2024-01-01T10:00:10]".to_string(),
                format!("watermark {expected}"),
                "+I[2024-01-01T10:00:08]".to_string(),
                "+I[2024-01-01T10:00:09]".to_string(),
                format!("watermark {}", i64::MAX),
            ]
        );
    }

    /// Rows of two splits read side by side: the watermark follows the split that is behind,
    /// so the rows of neither are late for the other's; a finished split holds nothing back.
    #[test]
    fn the_watermark_of_several_splits_is_the_least_of_theirs() {
        use weir_runtime::Splits;
        let ts = Expr::column(0, DataType::timestamp(3));
        let mut h = OperatorHarness::new(WatermarkAssignerOperator::new(ts));
        let rows = |times: &[&str]| {
            let lines: Vec<String> = times.iter().map(|t| format!("+I | 1970-01-01 00:00:00.{t}")).collect();
            format!("op | ts TIMESTAMP(3)\n{}", lines.join("\n"))
        };
        let split = |current: usize, open: [bool; 2]| Some(Splits { current, open: open.to_vec() });
        h.set_splits(split(0, [true, true]));
        h.push(&rows(&["500", "600"])).unwrap();
        h.set_splits(split(1, [true, true]));
        h.push(&rows(&["100", "200"])).unwrap();
        h.set_splits(split(0, [true, true]));
        h.push(&rows(&["700"])).unwrap();
        h.set_splits(split(1, [true, false]));
        h.push(&rows(&["300"])).unwrap();
        h.set_splits(split(0, [true, false]));
        h.push(&rows(&["800"])).unwrap();
        assert_eq!(
            h.take_lines(),
            [
                "+I[1970-01-01T00:00:00.500]",
                "+I[1970-01-01T00:00:00.600]",
                "+I[1970-01-01T00:00:00.100]",
                "watermark 100",
                "+I[1970-01-01T00:00:00.200]",
                "watermark 200",
                "+I[1970-01-01T00:00:00.700]",
                "+I[1970-01-01T00:00:00.300]",
                "watermark 300",
                "+I[1970-01-01T00:00:00.800]",
                "watermark 800",
            ]
        );
    }

    #[test]
    fn a_late_row_follows_the_watermark_it_is_late_for() {
        let ts = Expr::column(0, DataType::timestamp(3));
        let mut h = OperatorHarness::new(WatermarkAssignerOperator::new(ts));
        h.push(
            "op | ts TIMESTAMP(3)\n+I | 1970-01-01 00:00:00.010\n+I | 1970-01-01 00:00:00.020\n\
             +I | 1970-01-01 00:00:00.015\n+I | 1970-01-01 00:00:00.030",
        )
        .unwrap();
        h.push("op | ts TIMESTAMP(3)\n+I | 1970-01-01 00:00:00.025").unwrap();
        assert_eq!(
            h.take_lines(),
            [
                "+I[1970-01-01T00:00:00.010]",
                "watermark 10",
                "+I[1970-01-01T00:00:00.020]",
                "watermark 20",
                "+I[1970-01-01T00:00:00.015]",
                "+I[1970-01-01T00:00:00.030]",
                "watermark 30",
                "+I[1970-01-01T00:00:00.025]",
            ]
        );
    }

    /// At Flink's default interval (200 ms) a watermark goes out after a row that moved it on by
    /// more than 200 ms since the last one sent; smaller steps wait for the next processing-time
    /// tick, so a row behind them is not late (as in Flink, conformance case
    /// `watermark_interval`).
    #[test]
    fn small_steps_wait_for_the_interval() {
        let ts = Expr::column(0, DataType::timestamp(3));
        let mut h = OperatorHarness::new(WatermarkAssignerOperator::new(ts).with_interval(200));
        let rows = |times: &[&str]| {
            let lines: Vec<String> = times.iter().map(|t| format!("+I | 1970-01-01 00:00:{t}")).collect();
            format!("op | ts TIMESTAMP(3)\n{}", lines.join("\n"))
        };
        h.push(&rows(&["01.100", "01.900", "02.050", "01.950", "02.500"])).unwrap();
        h.push(&rows(&["02.600"])).unwrap();
        assert_eq!(
            h.take_lines(),
            [
                "+I[1970-01-01T00:00:01.100]",
                "watermark 1100",
                "+I[1970-01-01T00:00:01.900]",
                "watermark 1900",
                "+I[1970-01-01T00:00:02.050]",
                "+I[1970-01-01T00:00:01.950]",
                "+I[1970-01-01T00:00:02.500]",
                "watermark 2500",
                "+I[1970-01-01T00:00:02.600]",
            ]
        );
        // The next tick sends what waited.
        h.advance_processing_time(200).unwrap();
        assert_eq!(h.take_lines(), ["watermark 2600"]);
        h.advance_processing_time(200).unwrap();
        assert!(h.take_lines().is_empty(), "nothing new to send");
    }
}
