//! WatermarkAssigner: generates watermarks from `WATERMARK FOR column AS expression`.

use weir_runtime::{Chunk, Error, Operator, OperatorContext, Output, Result, Value};

use crate::expr::Expr;

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
        WatermarkAssignerOperator::new(self.watermark.clone())
    }
}

/// Forwards rows and, after each chunk, the largest watermark its rows produced, when that
/// is larger than the last one emitted. Watermarks never go back; rows with a NULL watermark
/// are passed on without producing one.
#[derive(Debug, Clone)]
pub struct WatermarkAssignerOperator {
    watermark: Expr,
    current: i64,
}

impl WatermarkAssignerOperator {
    /// An assigner computing each row's watermark with `watermark` (a TIMESTAMP expression).
    pub fn new(watermark: Expr) -> Self {
        WatermarkAssignerOperator { watermark, current: i64::MIN }
    }
}

impl Operator for WatermarkAssignerOperator {
    fn name(&self) -> &str {
        "WatermarkAssigner"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let mut max = self.current;
        for (_, row) in chunk.rows() {
            match self.watermark.eval(row).map_err(|e| Error::execution(e.to_string()))? {
                Value::Timestamp(t) | Value::TimestampLtz(t) => max = max.max(t.millis),
                _ => {}
            }
        }
        out.collect(chunk);
        if max > self.current {
            self.current = max;
            out.emit_watermark(max);
        }
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
}
