//! WindowTableFunction over `SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), gap)` on its own:
//! unlike TUMBLE, HOP and CUMULATE, a row's session is known only once it has closed, so the
//! rows wait in their session ([`super::sessions`]) and go out, each with the session's
//! `window_start`, `window_end` and `window_time` appended, when the watermark reaches its end - 1
//! (as Flink's unaligned window table function emits them). Late rows are dropped and counted.

use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::state::StateValue;
use weir_runtime::{Chunk, Error, Result, RowKind, SubtaskInfo, Timestamp, Value};

use super::sessions::{SessionContent, SessionShape, SessionWindows};
use super::{WindowOperator, WindowZone};
use crate::spec::OperatorSpec;

/// Everything a [`SessionTableFunctionOperator`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionTableFunctionSpec {
    /// The `PARTITION BY` columns: sessions are per their values.
    pub partition: Vec<usize>,
    /// The time column.
    pub time_col: usize,
    /// The gap, in milliseconds.
    pub gap: i64,
    /// Where sessions meet instants (the session time zone over a TIMESTAMP_LTZ).
    pub zone: WindowZone,
    /// The number of input columns.
    pub input_arity: usize,
}

impl OperatorSpec for SessionTableFunctionSpec {
    type Operator = SessionTableFunctionOperator;

    fn build(&self, _subtask: &SubtaskInfo) -> SessionTableFunctionOperator {
        let shape = SessionShape {
            name: "WindowTableFunction",
            keys: self.partition.clone(),
            time_col: self.time_col,
            gap: self.gap,
            zone: self.zone,
        };
        WindowOperator::over(SessionWindows::new(shape, self.input_arity))
    }
}

/// The SESSION window table function; see the module documentation.
pub type SessionTableFunctionOperator = WindowOperator<SessionWindows<SessionRows>>;

/// The rows of one session, in the order they came.
#[derive(Debug, Clone)]
pub struct SessionRows(Vec<Box<[Value]>>);

impl SessionContent for SessionRows {
    /// The number of input columns.
    type Context = usize;

    fn of_row(_arity: &usize, kind: RowKind, row: &[Value]) -> Result<Self> {
        if kind != RowKind::Insert {
            return Err(Error::execution(format!(
                "The SESSION window table function takes only inserts, but received a '{kind}' row."
            )));
        }
        Ok(SessionRows(vec![row.into()]))
    }

    fn absorb(&mut self, _arity: &mut usize, other: Self) -> Result<()> {
        self.0.extend(other.0);
        Ok(())
    }

    fn emit(self, _arity: &usize, _key: &[Value], (start, end): (i64, i64), zone: WindowZone, emitted: &mut Chunk) {
        for row in self.0 {
            emitted.push_with(RowKind::Insert, |values| {
                values.extend(row.into_vec());
                values.push(Value::Timestamp(Timestamp::from_millis(start)));
                values.push(Value::Timestamp(Timestamp::from_millis(end)));
                values.push(zone.window_time(end));
            });
        }
    }

    fn arity(arity: &usize) -> usize {
        arity + 3
    }

    fn fits(&self, arity: &usize) -> bool {
        self.0.iter().all(|row| row.len() == *arity)
    }

    /// Rows hold no aggregate calls.
    fn remap_calls(&mut self, _: &usize, _: &[Option<usize>]) -> bool {
        false
    }
}

impl StateValue for SessionRows {
    fn encode(&self, out: &mut Encoder) {
        out.u32(self.0.len() as u32);
        self.0.iter().for_each(|row| out.values(row));
    }

    fn decode(input: &mut Decoder<'_>) -> std::result::Result<Self, DecodeError> {
        (0..input.u32()?).map(|_| input.values()).collect::<std::result::Result<_, _>>().map(SessionRows)
    }
}

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for SessionTableFunctionSpec {
    /// Per partition key: its open sessions (start, end and rows); their timers; the watermark fired up to.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{column_types, row_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        let key = column_types(input, &self.partition);
        let mut value = vec!["start BIGINT".to_string(), "end BIGINT".to_string()];
        value.extend(row_types(input));
        let signature = StateSignature::new("SessionWindowTableFunction", STATE_VERSION).state(
            super::sessions::SESSIONS,
            StateKind::Value,
            key.clone(),
            value,
        );
        super::windows_signature(signature, super::sessions::TIMERS, key)
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use weir_runtime::harness::OperatorHarness;
    use weir_runtime::print::value_to_string;

    use super::*;
    use crate::window::tests::{counted, random_input};

    fn spec(gap: i64) -> SessionTableFunctionSpec {
        SessionTableFunctionSpec { partition: vec![0], time_col: 2, gap, zone: WindowZone::default(), input_arity: 3 }
    }

    fn chunk(rows: &[(i32, i64, i64)]) -> Chunk {
        let mut chunk = Chunk::with_capacity(3, rows.len());
        for &(k, v, ts) in rows {
            chunk.push(
                RowKind::Insert,
                &[Value::Int(k), Value::BigInt(v), Value::Timestamp(Timestamp::from_millis(ts))],
            );
        }
        chunk
    }

    /// From scratch: per key, the rows that were not late in time order, a new session wherever
    /// the next time is more than `gap` after the one before; each row goes out with its
    /// session's bounds. A row is late when its own window, merged with the sessions open when it
    /// came, had ended by the watermark.
    fn from_scratch(steps: &[(Vec<(i32, i64, i64)>, Option<i64>)], gap: i64) -> (Vec<String>, u64) {
        let mut sessions: Vec<(i32, i64, i64, Vec<(i64, i64)>)> = Vec::new();
        let (mut watermark, mut late) = (i64::MIN, 0);
        let mut lines = Vec::new();
        let time = |t: i64| value_to_string(&Value::Timestamp(Timestamp::from_millis(t)));
        for (rows, emitted) in steps {
            for &(k, v, ts) in rows {
                let (start, end) = (ts, ts + gap);
                let touches = |s: &(i32, i64, i64, Vec<(i64, i64)>)| s.0 == k && s.1 <= end && s.2 >= start;
                let merged_end = sessions.iter().filter(|s| touches(s)).map(|s| s.2).fold(end, i64::max);
                if merged_end - 1 <= watermark {
                    // The sessions it touches stay as they were.
                    late += 1;
                    continue;
                }
                let (merged, open): (Vec<_>, Vec<_>) = sessions.drain(..).partition(|s| touches(s));
                sessions = open;
                let (mut start, mut members) = (start, vec![(v, ts)]);
                for s in merged {
                    start = start.min(s.1);
                    members.extend(s.3);
                }
                sessions.push((k, start, merged_end, members));
            }
            if let Some(w) = emitted {
                watermark = *w;
                let (due, open): (Vec<_>, Vec<_>) = sessions.drain(..).partition(|s| s.2 - 1 <= watermark);
                sessions = open;
                for (k, start, end, members) in due {
                    for (v, ts) in members {
                        lines.push(format!(
                            "+I[{k}, {v}, {}, {}, {}, {}]",
                            time(ts),
                            time(start),
                            time(end),
                            time(end - 1)
                        ));
                    }
                }
            }
        }
        for (k, start, end, members) in sessions {
            for (v, ts) in members {
                lines.push(format!("+I[{k}, {v}, {}, {}, {}, {}]", time(ts), time(start), time(end), time(end - 1)));
            }
        }
        (lines, late)
    }

    #[test]
    fn rows_go_out_with_their_sessions_bounds_when_the_session_closes() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(29);
        for round in 0..200 {
            let gap = [3, 10, 25][round % 3];
            let steps = random_input(&mut rng);
            let (expected, late) = from_scratch(&steps, gap);
            let mut h = OperatorHarness::new(spec(gap).build(&SubtaskInfo::new("w", 0, 1)));
            for (rows, watermark) in &steps {
                h.push_chunk(0, chunk(rows)).unwrap();
                if let Some(w) = watermark {
                    h.watermark(*w).unwrap();
                }
            }
            h.end_input().unwrap();
            assert_eq!(counted(h.take_lines()), counted(expected), "round {round}, gap {gap}");
            assert_eq!(h.late_records_dropped(), late, "round {round}");
        }
    }
}
