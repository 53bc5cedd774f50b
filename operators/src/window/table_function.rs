//! WindowTableFunction: `TABLE(TUMBLE | HOP | CUMULATE(TABLE t, DESCRIPTOR(ts), …))` on its
//! own (not merged into a window aggregate). Each row is emitted once per window it belongs
//! to, right away, with `window_start`, `window_end` and `window_time` (`window_end - 1 ms`)
//! appended; a row whose time is NULL belongs to no window and is dropped, as Flink drops it.

use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result, Timestamp, Value};

use super::WindowSpec;
use crate::spec::OperatorSpec;

/// Everything a [`WindowTableFunctionOperator`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowTableFunctionSpec {
    /// The time column (`DESCRIPTOR(ts)`).
    pub time_col: usize,
    /// The windows.
    pub window: WindowSpec,
    /// Whether the time column is a TIMESTAMP_LTZ (then `window_time` is one too, and the
    /// windows follow `window.zone`).
    pub ltz: bool,
}

impl OperatorSpec for WindowTableFunctionSpec {
    type Operator = WindowTableFunctionOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> WindowTableFunctionOperator {
        WindowTableFunctionOperator { spec: self.clone() }
    }
}

/// Appends the window columns to each row, once per window; see the module documentation.
#[derive(Debug)]
pub struct WindowTableFunctionOperator {
    spec: WindowTableFunctionSpec,
}

/// The epoch milliseconds of a TIMESTAMP or TIMESTAMP_LTZ value; `None` for NULL.
pub(crate) fn millis_of(value: &Value) -> Option<i64> {
    match value {
        Value::Timestamp(t) | Value::TimestampLtz(t) => Some(t.millis),
        _ => None,
    }
}

impl Operator for WindowTableFunctionOperator {
    fn name(&self) -> &str {
        "WindowTableFunction"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let spec = &self.spec;
        let mut emitted = Chunk::with_capacity(chunk.arity() + 3, chunk.len());
        for (kind, row) in chunk.rows() {
            let Some(time) = millis_of(&row[spec.time_col]) else { continue };
            let zone = spec.window.zone;
            for (start, end) in spec.window.windows_of(zone.local(time)) {
                emitted.push_with(kind, |values| {
                    values.extend_from_slice(row);
                    values.push(Value::Timestamp(Timestamp::from_millis(start)));
                    values.push(Value::Timestamp(Timestamp::from_millis(end)));
                    values.push(zone.window_time(end));
                });
            }
        }
        emitted.set_origin_nanos(chunk.origin_nanos());
        out.collect(emitted);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::WindowKind;
    use weir_runtime::harness::OperatorHarness;

    #[test]
    fn each_row_goes_out_once_per_window_and_null_times_are_dropped() {
        let spec = WindowTableFunctionSpec {
            time_col: 1,
            window: WindowSpec::new(WindowKind::Hop { size: 120_000, slide: 60_000 }, 0),
            ltz: false,
        };
        let mut h = OperatorHarness::new(spec.build(&weir_runtime::SubtaskInfo::new("w", 0, 1)));
        h.push(
            "op | k INT | ts TIMESTAMP(3)\n+I | 1 | 2024-01-01 10:00:30\n+I | 2 | null\n-D | 3 | 2024-01-01 10:01:00",
        )
        .unwrap();
        assert_eq!(
            h.take_lines(),
            [
                "+I[1, 2024-01-01T10:00:30, 2024-01-01T10:00, 2024-01-01T10:02, 2024-01-01T10:01:59.999]",
                "+I[1, 2024-01-01T10:00:30, 2024-01-01T09:59, 2024-01-01T10:01, 2024-01-01T10:00:59.999]",
                "-D[3, 2024-01-01T10:01, 2024-01-01T10:01, 2024-01-01T10:03, 2024-01-01T10:02:59.999]",
                "-D[3, 2024-01-01T10:01, 2024-01-01T10:00, 2024-01-01T10:02, 2024-01-01T10:01:59.999]",
            ]
        );
    }
}
