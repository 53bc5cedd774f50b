//! Keyed processing: a function with per-key state and timers.
//!
//! The runtime routes rows by key (a HASH edge on the key columns) so that one subtask sees
//! every row of a key; this operator keeps each key's state in keyed value state
//! ([`ValueState`]) and hands the function the state of the row's key. The state and the
//! timers the function registers are checkpointed and restored by key, at the same
//! parallelism or another, as every SQL operator's are.

use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::{StateValue, ValueState};
use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result, RowKind, Timer, Value};

/// Per-key logic. `state` is `None` for a key seen for the first time (or whose state was
/// cleared); leaving it `None` after a call removes the key's state.
pub trait KeyedProcessFunction: Send {
    /// What is kept per key: a value that writes itself into checkpoints ([`StateValue`]).
    type State: Send + StateValue;

    /// Processes one row of key `key`, appending output rows to `out`.
    fn process(
        &mut self,
        key: &[Value],
        kind: RowKind,
        row: &[Value],
        state: &mut Option<Self::State>,
        ctx: &mut OperatorContext,
        out: &mut Chunk,
    ) -> Result<()>;

    /// A timer registered for `timer.key` fired. The default does nothing.
    fn on_timer(
        &mut self,
        _timer: &Timer,
        _state: &mut Option<Self::State>,
        _ctx: &mut OperatorContext,
        _out: &mut Chunk,
    ) -> Result<()> {
        Ok(())
    }
}

/// The name of the functions' keyed state (its section in checkpoints).
const STATE: &str = "keyed-process";

/// A key's state as the function sees it: `None` while it has none. A key whose state is left
/// `None` is removed at once, so a checkpoint only ever holds `Some`.
struct Kept<S>(Option<S>);

impl<S: StateValue> StateValue for Kept<S> {
    fn encode(&self, out: &mut weir_runtime::checkpoint::codec::Encoder) {
        if let Some(state) = &self.0 {
            state.encode(out);
        }
    }

    fn decode(
        input: &mut weir_runtime::checkpoint::codec::Decoder<'_>,
    ) -> std::result::Result<Self, weir_runtime::checkpoint::codec::DecodeError> {
        S::decode(input).map(|s| Kept(Some(s)))
    }
}

/// Runs a [`KeyedProcessFunction`] with state per key.
pub struct KeyedProcessOperator<F: KeyedProcessFunction> {
    name: String,
    keys: Vec<usize>,
    arity: usize,
    function: F,
    state: ValueState<Kept<F::State>>,
    key: Vec<Value>,
}

impl<F: KeyedProcessFunction> KeyedProcessOperator<F> {
    /// An operator named `name` keyed on columns `keys`, emitting rows of `arity` fields.
    pub fn new(name: impl Into<String>, keys: Vec<usize>, arity: usize, function: F) -> Self {
        let state = ValueState::new(STATE, None);
        KeyedProcessOperator { name: name.into(), keys, arity, function, state, key: Vec::new() }
    }

    /// Number of keys with state.
    pub fn key_count(&self) -> usize {
        self.state.len()
    }
}

impl<F: KeyedProcessFunction> Operator for KeyedProcessOperator<F> {
    fn name(&self) -> &str {
        &self.name
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let mut emitted = Chunk::with_capacity(self.arity, chunk.len());
        for (kind, row) in chunk.rows() {
            self.key.clear();
            self.key.extend(self.keys.iter().map(|&k| row[k].clone()));
            let key = &self.key[..];
            // One hash lookup per row; the key is copied into the state only when it is new.
            let Some(kept) = self.state.get_mut_or_insert_with(key, 0, || Some(Kept(None)))? else { continue };
            let result = self.function.process(key, kind, row, &mut kept.0, ctx, &mut emitted);
            if kept.0.is_none() {
                self.state.remove(key);
            }
            result?;
        }
        emitted.set_origin_nanos(chunk.origin_nanos());
        out.collect(emitted);
        Ok(())
    }

    fn on_timer(&mut self, timer: Timer, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        let mut emitted = Chunk::new(self.arity);
        let key = &timer.key[..];
        if let Some(kept) = self.state.get_mut_or_insert_with(key, 0, || Some(Kept(None)))? {
            let result = self.function.on_timer(&timer, &mut kept.0, ctx, &mut emitted);
            if kept.0.is_none() {
                self.state.remove(key);
            }
            result?;
        }
        out.collect(emitted);
        Ok(())
    }

    /// Every key's state and every pending timer.
    fn snapshot_state(&mut self, _checkpoint: u64, ctx: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        self.state.snapshot(state, 0);
        ctx.snapshot_timers(state);
        Ok(())
    }

    /// The state and timers of the keys this subtask owns, from every old subtask's part.
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        self.state.restore(states, ctx.subtask())?;
        ctx.restore_timers(states)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::harness::OperatorHarness;

    /// Sums values per key and emits `[key, sum]` when the key's event-time timer (the row's
    /// timestamp + 10) or processing-time timer (now + 100) fires; then forgets the key.
    #[derive(Clone, Copy)]
    struct SumUntilTimer;

    impl KeyedProcessFunction for SumUntilTimer {
        type State = i64;

        fn process(
            &mut self,
            key: &[Value],
            _kind: RowKind,
            row: &[Value],
            state: &mut Option<i64>,
            ctx: &mut OperatorContext,
            _out: &mut Chunk,
        ) -> Result<()> {
            if state.is_none() {
                ctx.register_event_time_timer(row[1].as_i64().unwrap_or(0) + 10, key.to_vec());
                ctx.register_processing_time_timer(ctx.processing_time() + 100, key.to_vec());
            }
            *state = Some(state.unwrap_or(0) + row[2].as_i64().unwrap_or(0));
            Ok(())
        }

        fn on_timer(
            &mut self,
            timer: &Timer,
            state: &mut Option<i64>,
            _ctx: &mut OperatorContext,
            out: &mut Chunk,
        ) -> Result<()> {
            if let Some(sum) = state.take() {
                out.push(RowKind::Insert, &[timer.key[0].clone(), Value::BigInt(sum)]);
            }
            Ok(())
        }
    }

    fn harness() -> OperatorHarness {
        OperatorHarness::new(KeyedProcessOperator::new("SumUntilTimer", vec![0], 2, SumUntilTimer))
    }

    #[test]
    fn event_time_timers_fire_with_their_key_state_before_the_watermark() {
        let mut h = harness();
        h.push("op | k STRING | ts BIGINT | v BIGINT\n+I | a | 0 | 1\n+I | b | 5 | 10\n+I | a | 7 | 2").unwrap();
        h.watermark(12).unwrap();
        assert_eq!(h.take_lines(), ["+I[a, 3]", "watermark 12"]);
        h.watermark(15).unwrap();
        assert_eq!(h.take_lines(), ["+I[b, 10]", "watermark 15"]);
    }

    #[test]
    fn processing_time_timers_fire_on_the_harness_clock_and_clear_state() {
        let mut h = harness();
        h.push("op | k STRING | ts BIGINT | v BIGINT\n+I | a | 0 | 4").unwrap();
        h.advance_processing_time(99).unwrap();
        assert!(h.take_lines().is_empty());
        h.advance_processing_time(1).unwrap();
        assert_eq!(h.take_lines(), ["+I[a, 4]"]);
        // The state was cleared: the event-time timer finds nothing to emit.
        h.watermark(100).unwrap();
        assert_eq!(h.take_lines(), ["watermark 100"]);
    }

    /// Each key's state and its timers are checkpointed: restored into three subtasks from one,
    /// each key's sum goes on where it was and its timer fires once, in the subtask that owns it.
    #[test]
    fn state_and_timers_restore_by_key_at_another_parallelism() {
        let build = |index, parallelism| {
            let op = KeyedProcessOperator::new("SumUntilTimer", vec![0], 2, SumUntilTimer);
            OperatorHarness::with_subtask(Box::new(op), index, parallelism)
        };
        let keys = ["a", "b", "c", "d", "e", "f", "g", "h"];
        let rows = |v: i64| {
            let lines: Vec<String> = keys.iter().map(|k| format!("+I | {k} | 0 | {v}")).collect();
            format!("op | k STRING | ts BIGINT | v BIGINT\n{}", lines.join("\n"))
        };
        let mut parts = vec![build(0, 1)];
        parts[0].push(&rows(1)).unwrap();
        let mut lines = Vec::new();
        OperatorHarness::rescale(&mut parts, 1, 3, build, &mut lines).unwrap();
        assert!(lines.is_empty(), "{lines:?}");
        for (index, part) in parts.iter_mut().enumerate() {
            // Each subtask is sent the rows of the keys it owns (the HASH edge's job).
            let info = weir_runtime::SubtaskInfo::new("SumUntilTimer", index, 3);
            let owned: Vec<&str> =
                keys.iter().copied().filter(|k| weir_runtime::state::owns_key(&[Value::string(k)], &info)).collect();
            let text: Vec<String> = owned.iter().map(|k| format!("+I | {k} | 0 | 2")).collect();
            if !text.is_empty() {
                part.push(&format!("op | k STRING | ts BIGINT | v BIGINT\n{}", text.join("\n"))).unwrap();
            }
            part.watermark(10).unwrap();
            lines.extend(part.take_lines().into_iter().filter(|l| !l.starts_with("watermark")));
        }
        lines.sort();
        let expected: Vec<String> = keys.iter().map(|k| format!("+I[{k}, 3]")).collect();
        assert_eq!(lines, expected);
    }
}
