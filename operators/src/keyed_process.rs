//! Keyed processing: a function with per-key state and timers.
//!
//! The runtime routes rows by key (a HASH edge on the key columns) so that one subtask sees
//! every row of a key; this operator keeps each key's state in a hash map and hands the
//! function the state of the row's key.

use hashbrown::HashMap;
use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result, RowKind, Timer, Value};

/// Per-key logic. `state` is `None` for a key seen for the first time (or whose state was
/// cleared); leaving it `None` after a call removes the key's state.
pub trait KeyedProcessFunction: Send {
    /// What is kept per key.
    type State: Send;

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

/// Runs a [`KeyedProcessFunction`] with state per key.
pub struct KeyedProcessOperator<F: KeyedProcessFunction> {
    name: String,
    keys: Vec<usize>,
    arity: usize,
    function: F,
    state: HashMap<Box<[Value]>, Option<F::State>>,
    key: Vec<Value>,
}

impl<F: KeyedProcessFunction> KeyedProcessOperator<F> {
    /// An operator named `name` keyed on columns `keys`, emitting rows of `arity` fields.
    pub fn new(name: impl Into<String>, keys: Vec<usize>, arity: usize, function: F) -> Self {
        KeyedProcessOperator { name: name.into(), keys, arity, function, state: HashMap::new(), key: Vec::new() }
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

    fn process_chunk(&mut self, _input: usize, chunk: Chunk, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        let mut emitted = Chunk::with_capacity(self.arity, chunk.len());
        for (kind, row) in chunk.rows() {
            self.key.clear();
            self.key.extend(self.keys.iter().map(|&k| row[k].clone()));
            let key = &self.key[..];
            // One hash lookup per row; the key is copied into the map only when it is new.
            let slot = self.state.entry_ref(key).or_insert(None);
            let result = self.function.process(key, kind, row, slot, ctx, &mut emitted);
            if slot.is_none() {
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
        let slot = self.state.entry_ref(key).or_insert(None);
        let result = self.function.on_timer(&timer, slot, ctx, &mut emitted);
        if slot.is_none() {
            self.state.remove(key);
        }
        result?;
        out.collect(emitted);
        Ok(())
    }
}
