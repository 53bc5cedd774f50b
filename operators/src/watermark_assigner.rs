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
}

impl crate::spec::OperatorSpec for WatermarkAssignerSpec {
    type Operator = WatermarkAssignerOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> WatermarkAssignerOperator {
        WatermarkAssignerOperator::new(self.watermark.clone()).with_rowtime(self.rowtime)
    }
}

/// Forwards rows and, after each chunk, the largest watermark its rows produced, when that
/// is larger than the last one emitted. Watermarks never go back; rows with a NULL watermark
/// are passed on without producing one.
///
/// A row whose time is at or behind the watermark of the rows before it (a late row) is
/// preceded by that watermark, even in the middle of a chunk: downstream sees it late exactly
/// as if a watermark followed every row, as Flink's per-record watermarks make it. On-time rows
/// are never split apart, so a chunk without late rows goes on whole.
#[derive(Debug, Clone)]
pub struct WatermarkAssignerOperator {
    watermark: Expr,
    /// The rowtime column, whose late values make the watermark go out before them.
    rowtime: Option<usize>,
    /// `column - INTERVAL 'd'` (or the column itself): the watermark read from the column
    /// directly, without evaluating the expression per row.
    bounded_delay: Option<(usize, i64)>,
    current: i64,
    /// Per split of the source before it, when it reads several side by side
    /// ([`OperatorContext::splits`]): the largest watermark of the split's rows so far (`None`
    /// before its first). The watermark emitted is the least over the open splits.
    split_max: Vec<Option<i64>>,
    /// Whether a processing-time tick is due: with splits, the watermark is looked at again
    /// every [`SPLIT_WATERMARK_INTERVAL`] ms, so that a split going idle (no longer open) lets
    /// it advance without new rows, as Flink's periodic watermarks do.
    ticking: bool,
}

/// How often, in milliseconds, the watermark of several splits is looked at again without new
/// rows (Flink's `pipeline.auto-watermark-interval` default).
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
            rowtime: None,
            current: i64::MIN,
            split_max: Vec::new(),
            ticking: false,
        }
    }

    /// The assigner emitting the watermark before each row of column `rowtime` behind it.
    pub fn with_rowtime(mut self, rowtime: usize) -> Self {
        self.rowtime = Some(rowtime);
        self
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
            None => (self.current, i64::MAX),
            Some(splits) => {
                if self.split_max.len() < splits.open.len() {
                    self.split_max.resize(splits.open.len(), None);
                }
                let held = (0..splits.open.len())
                    .filter(|&k| k != splits.current && splits.open[k])
                    .map(|k| self.split_max[k].unwrap_or(i64::MIN))
                    .min()
                    .unwrap_or(i64::MAX);
                (self.split_max[splits.current].unwrap_or(i64::MIN), held)
            }
        };
        // Each row's time and watermark, read from the columns they need (the whole row only
        // for a watermark expression other than `column - delay`).
        let times = match self.rowtime {
            Some(c) => column_millis(&chunk, c),
            None => vec![None; chunk.len()],
        };
        let marks = match self.bounded_delay {
            Some((column, delay)) => {
                let of_column: std::borrow::Cow<[Option<i64>]> = if self.rowtime == Some(column) {
                    std::borrow::Cow::Borrowed(&times)
                } else {
                    std::borrow::Cow::Owned(column_millis(&chunk, column))
                };
                of_column.iter().map(|t| t.map(|t| t.saturating_sub(delay))).collect()
            }
            None => chunk
                .rows()
                .map(|(_, row)| Ok(millis(&self.watermark.eval(row).map_err(|e| Error::execution(e.to_string()))?)))
                .collect::<Result<Vec<_>>>()?,
        };
        // The first row not sent on yet.
        let mut from = 0;
        for (i, (time, watermark)) in times.into_iter().zip(marks).enumerate() {
            let effective = max.min(held);
            let late = time.is_some_and(|time| time <= effective);
            if late && effective > self.current {
                if i > from {
                    out.collect(chunk.selected(&(from as u32..i as u32).collect::<Vec<_>>()));
                }
                from = i;
                self.current = effective;
                out.emit_watermark(effective);
            }
            if let Some(watermark) = watermark {
                max = max.max(watermark);
            }
        }
        if let Some(splits) = ctx.splits() {
            self.split_max[splits.current] = Some(max);
            if !self.ticking {
                self.ticking = true;
                let at = ctx.processing_time() + SPLIT_WATERMARK_INTERVAL;
                ctx.register_processing_time_timer(at, Vec::new());
            }
        }
        let max = max.min(held);
        match from {
            0 => out.collect(chunk),
            from if from < chunk.len() => {
                out.collect(chunk.selected(&(from as u32..chunk.len() as u32).collect::<Vec<_>>()))
            }
            _ => {}
        }
        if max > self.current {
            self.current = max;
            out.emit_watermark(max);
        }
        Ok(())
    }

    /// The periodic look at the open splits' watermarks: the least of them goes out when it
    /// is ahead (a split that went idle no longer holds it back).
    fn on_timer(&mut self, _timer: Timer, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.ticking = false;
        let Some(splits) = ctx.splits() else { return Ok(()) };
        let least = (0..splits.open.len().min(self.split_max.len()))
            .filter(|&k| splits.open[k])
            .map(|k| self.split_max[k].unwrap_or(i64::MIN))
            .min();
        if let Some(least) = least.filter(|&w| w > self.current) {
            self.current = least;
            out.emit_watermark(least);
        }
        self.ticking = true;
        let at = ctx.processing_time() + SPLIT_WATERMARK_INTERVAL;
        ctx.register_processing_time_timer(at, Vec::new());
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
                "+I[2024-01-01T10:00:08]".to_string(),
                format!("watermark {expected}"),
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
        let mut h = OperatorHarness::new(WatermarkAssignerOperator::new(ts).with_rowtime(0));
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
        let mut h = OperatorHarness::new(WatermarkAssignerOperator::new(ts).with_rowtime(0));
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
                "+I[1970-01-01T00:00:00.020]",
                "watermark 20",
                "+I[1970-01-01T00:00:00.015]",
                "+I[1970-01-01T00:00:00.030]",
                "watermark 30",
                "+I[1970-01-01T00:00:00.025]",
            ]
        );
    }
}
