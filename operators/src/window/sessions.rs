//! Session windows, for the SESSION window aggregate and the SESSION window table function: per
//! key, a row opens the window `[ts, ts + gap)`, and windows that overlap or touch merge into one
//! session, as Flink's merging window set does. A session fires once, when the watermark reaches
//! its end - 1. A row whose window, merged with the key's open sessions, would already have fired
//! is late: dropped and counted. What a session holds (accumulators, or the rows themselves) and
//! what it emits is its [`SessionContent`].
//!
//! Per key the state holds its open sessions (keyed value state) and a timer per session end
//! ([`KeyedTimers`]); both are checkpointed and restored by key ([`super::WindowOperator`] adds
//! the watermark).

use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::{KeyedTimers, StateValue, ValueState};
use weir_runtime::{Chunk, Result, RowKind, SubtaskInfo, Value};

use super::table_function::millis_of;
use super::{Fired, WindowZone, Windows};

pub(crate) const SESSIONS: &str = "sessions";
pub(crate) const TIMERS: &str = "session-timers";

/// What sessions are made of, whatever they hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionShape {
    /// Flink's name of the operator.
    pub name: &'static str,
    /// The key columns: sessions are per their values.
    pub keys: Vec<usize>,
    /// The time column.
    pub time_col: usize,
    /// The gap, in milliseconds.
    pub gap: i64,
    /// Where sessions meet instants (the session time zone over a TIMESTAMP_LTZ).
    pub zone: WindowZone,
}

/// What a session holds of its rows, and what it emits when it fires.
pub trait SessionContent: StateValue + Clone + std::fmt::Debug + Send {
    /// What the content is made and emitted with (an aggregate's calls).
    type Context: std::fmt::Debug + Send;

    /// The content of one row's own window.
    ///
    /// # Errors
    /// A row the content cannot take (an update where only inserts go).
    fn of_row(context: &Self::Context, kind: RowKind, row: &[Value]) -> Result<Self>;

    /// Takes in what `other` holds (its session merges into this one).
    ///
    /// # Errors
    /// What an aggregate function refuses while merging.
    fn absorb(&mut self, context: &mut Self::Context, other: Self) -> Result<()>;

    /// Emits the session `[start, end)` of `key` into `emitted`, the session having fired.
    fn emit(self, context: &Self::Context, key: &[Value], window: (i64, i64), zone: WindowZone, emitted: &mut Chunk);

    /// The number of columns of the emitted rows.
    fn arity(context: &Self::Context) -> usize;

    /// Whether a restored content fits `context`.
    fn fits(&self, context: &Self::Context) -> bool;

    /// The content as an operator of other aggregate calls holds it after a restore (call `i`
    /// continues old call `restored[i]`, or starts empty); `false` when it holds no calls.
    fn remap_calls(&mut self, context: &Self::Context, restored: &[Option<usize>]) -> bool;
}

/// One open session: `[start, end)` and what it holds.
#[derive(Debug, Clone)]
struct Session<C> {
    start: i64,
    end: i64,
    content: C,
}

/// A key's open sessions, in no particular order.
#[derive(Debug, Clone)]
struct Sessions<C>(Vec<Session<C>>);

impl<C: SessionContent> StateValue for Sessions<C> {
    fn encode(&self, out: &mut Encoder) {
        out.u32(self.0.len() as u32);
        for s in &self.0 {
            out.i64(s.start);
            out.i64(s.end);
            s.content.encode(out);
        }
    }

    fn decode(input: &mut Decoder<'_>) -> std::result::Result<Self, DecodeError> {
        (0..input.u32()?)
            .map(|_| Ok(Session { start: input.i64()?, end: input.i64()?, content: C::decode(input)? }))
            .collect::<std::result::Result<_, _>>()
            .map(Sessions)
    }
}

/// Per key, its open sessions; see the module documentation.
#[derive(Debug)]
pub struct SessionWindows<C: SessionContent> {
    shape: SessionShape,
    context: C::Context,
    sessions: ValueState<Sessions<C>>,
    timers: KeyedTimers,
    key: Vec<Value>,
}

impl<C: SessionContent> SessionWindows<C> {
    /// No sessions yet.
    pub(crate) fn new(shape: SessionShape, context: C::Context) -> Self {
        SessionWindows {
            shape,
            context,
            sessions: ValueState::new(SESSIONS, None),
            timers: KeyedTimers::new(TIMERS),
            key: Vec::new(),
        }
    }
}

impl<C: SessionContent> Windows for SessionWindows<C> {
    fn name(&self) -> &'static str {
        self.shape.name
    }

    /// Adds one row to its key's sessions, merging the ones its window overlaps or touches.
    fn add(&mut self, kind: RowKind, row: &[Value], watermark: i64, _now: i64) -> Result<bool> {
        let Some(time) = millis_of(&row[self.shape.time_col]) else { return Ok(false) };
        let (zone, time) = (self.shape.zone, self.shape.zone.local(time));
        self.key.clear();
        self.key.extend(self.shape.keys.iter().map(|&k| row[k].clone()));
        let Self { sessions, context, timers, key, shape } = self;
        let (start, end) = (time, time.saturating_add(shape.gap));
        let Some(open) = sessions.get_mut_or_insert_with(key, 0, || Some(Sessions(Vec::new())))? else {
            return Ok(false);
        };
        let overlapping = |s: &Session<C>| s.start <= end && s.end >= start;
        let merged_start = open.0.iter().filter(|s| overlapping(s)).map(|s| s.start).fold(start, i64::min);
        let merged_end = open.0.iter().filter(|s| overlapping(s)).map(|s| s.end).fold(end, i64::max);
        if zone.fired(merged_end, watermark) {
            if open.0.is_empty() {
                sessions.remove(key);
            }
            return Ok(true);
        }
        let mut content = C::of_row(context, kind, row)?;
        let mut kept = Vec::with_capacity(open.0.len() + 1);
        for session in open.0.drain(..) {
            if overlapping(&session) {
                timers.remove(key, session.end - 1);
                content.absorb(context, session.content)?;
            } else {
                kept.push(session);
            }
        }
        kept.push(Session { start: merged_start, end: merged_end, content });
        open.0 = kept;
        timers.register(key, merged_end - 1);
        Ok(false)
    }

    /// Emits every session whose end the watermark reached, earliest first.
    fn fire(&mut self, watermark: i64, fired: &mut Fired<'_>) -> Result<()> {
        let zone = self.shape.zone;
        while let Some((time, keys)) = self.timers.pop_due_by(|time| zone.fired(time + 1, watermark)) {
            for key in keys {
                let Some(open) = self.sessions.get_mut(&key, 0) else { continue };
                let Some(at) = open.0.iter().position(|s| s.end - 1 == time) else { continue };
                let session = open.0.swap_remove(at);
                if open.0.is_empty() {
                    self.sessions.remove(&key);
                }
                session.content.emit(&self.context, &key, (session.start, session.end), zone, fired.chunk());
            }
        }
        Ok(())
    }

    fn arity(&self) -> usize {
        C::arity(&self.context)
    }

    /// Every key's open sessions and their timers.
    fn snapshot(&mut self, state: &mut StateWriter) {
        self.sessions.snapshot(state, 0);
        self.timers.snapshot(state);
    }

    fn restore(&mut self, states: &[StateReader], info: &SubtaskInfo) -> Result<()> {
        self.sessions.restore(states, info)?;
        self.timers.restore(states, info)?;
        let context = &self.context;
        let mut fits = true;
        // A restore into other calls than the checkpoint's maps each call to its old one.
        if let Some(restored) = crate::aggregate::restored_calls(states)? {
            self.sessions.retain(i64::MIN, |_, s| {
                s.0.iter_mut().for_each(|s| fits &= s.content.remap_calls(context, &restored));
                true
            });
        }
        self.sessions.retain(0, |_, s| {
            fits &= s.0.iter().all(|s| s.content.fits(context));
            true
        });
        if !fits {
            return Err(weir_runtime::Error::Restore(format!(
                "the state of {} holds sessions of another operator",
                self.shape.name
            )));
        }
        Ok(())
    }
}
