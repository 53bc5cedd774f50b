//! Windows that rows carry in their `window_end` column (Flink's window-attached windowing), as
//! window Top-N and window deduplication read them: per key (the partition columns) and window,
//! one buffer of what the window keeps so far, fired when the watermark reaches the window's
//! end - 1 and then forgotten. A row of a window that has fired is late: dropped and counted.
//! What a buffer keeps and emits is the operator's own ([`AttachedBuffer`]).

use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::{KeyedTimers, MapState, StateValue};
use weir_runtime::{Chunk, Error, Result, RowKind, SubtaskInfo, Value};

use super::table_function::millis_of;
use super::{AttachedWindow, Fired, Windows};

/// The name of the buffers' state (their section in checkpoints).
pub(crate) const BUFFERS: &str = "window-buffers";
/// The name of the window timers' state.
pub(crate) const TIMERS: &str = "window-timers";

/// What an operator over attached windows is built from.
pub trait AttachedSpec: std::fmt::Debug + Send {
    /// Flink's name of the operator.
    fn name(&self) -> &'static str;
    /// The partition columns (without the window's): the key of the buffers.
    fn partition(&self) -> &[usize];
    /// Where the rows carry their window.
    fn window(&self) -> &AttachedWindow;
    /// The number of columns of the input rows.
    fn input_arity(&self) -> usize;
    /// The number of columns of the emitted rows.
    fn arity(&self) -> usize;
}

/// What one key keeps of one window until it fires.
pub trait AttachedBuffer: StateValue + std::fmt::Debug + Send {
    /// The operator's parameters.
    type Spec: AttachedSpec;
    /// A buffer holding the window's first row.
    fn first(spec: &Self::Spec, row: &[Value]) -> Self;
    /// Takes one more row of the window.
    fn add(&mut self, spec: &Self::Spec, row: &[Value]);
    /// Emits the window's result, the window having fired.
    fn emit(self, spec: &Self::Spec, emitted: &mut Chunk);
    /// Whether every row the buffer holds has `arity` columns (a restored state may not).
    fn fits(&self, arity: usize) -> bool;
}

/// Buffers per key and window, fired by the watermark; see the module documentation.
#[derive(Debug)]
pub struct AttachedWindows<B: AttachedBuffer> {
    spec: B::Spec,
    buffers: MapState<i64, B>,
    timers: KeyedTimers,
    key: Vec<Value>,
}

impl<B: AttachedBuffer> AttachedWindows<B> {
    /// No windows yet.
    pub(crate) fn new(spec: B::Spec) -> Self {
        AttachedWindows {
            spec,
            buffers: MapState::new(BUFFERS, None),
            timers: KeyedTimers::new(TIMERS),
            key: Vec::new(),
        }
    }
}

impl<B: AttachedBuffer> Windows for AttachedWindows<B> {
    fn name(&self) -> &'static str {
        self.spec.name()
    }

    fn add(&mut self, kind: RowKind, row: &[Value], watermark: i64, _now: i64) -> Result<bool> {
        if kind != RowKind::Insert {
            return Err(Error::execution(format!(
                "{} takes only inserts, but received a '{kind}' row.",
                self.spec.name()
            )));
        }
        // A row without a window end belongs to no window.
        let Some(end) = millis_of(&row[self.spec.window().end]) else { return Ok(false) };
        if self.spec.window().spec.zone.fired(end, watermark) {
            return Ok(true);
        }
        self.key.clear();
        self.key.extend(self.spec.partition().iter().map(|&p| row[p].clone()));
        let Self { spec, buffers, timers, key } = self;
        let mut new = false;
        let buffer = buffers.get_mut_or_insert_with(key, end, 0, || {
            new = true;
            Some(B::first(spec, row))
        })?;
        if new {
            timers.register(key, end - 1);
        } else if let Some(buffer) = buffer {
            buffer.add(spec, row);
        }
        Ok(false)
    }

    fn fire(&mut self, watermark: i64, fired: &mut Fired<'_>) -> Result<()> {
        let zone = self.spec.window().spec.zone;
        while let Some((time, keys)) = self.timers.pop_due_by(|time| zone.fired(time + 1, watermark)) {
            for key in keys {
                if let Some(buffer) = self.buffers.remove(&key, &(time + 1)) {
                    buffer.emit(&self.spec, fired.chunk());
                }
            }
        }
        Ok(())
    }

    fn arity(&self) -> usize {
        self.spec.arity()
    }

    /// Every key's buffers and window timers.
    fn snapshot(&mut self, state: &mut StateWriter) {
        self.buffers.snapshot(state, 0);
        self.timers.snapshot(state);
    }

    fn restore(&mut self, states: &[StateReader], info: &SubtaskInfo) -> Result<()> {
        self.buffers.restore(states, info)?;
        self.timers.restore(states, info)?;
        let arity = self.spec.input_arity();
        let mut fits = true;
        self.buffers.for_each(|_, _, buffer| fits &= buffer.fits(arity));
        if !fits {
            return Err(Error::Restore(format!(
                "the state of {} holds rows of other than its {arity} input columns",
                self.spec.name()
            )));
        }
        Ok(())
    }
}
