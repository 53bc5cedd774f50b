//! The `nexmark` source of one subtask: its splits of the event ids, generated a chunk at a
//! time.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use arrow_schema::Fields;
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::java_random::JavaRandom;
use weir_runtime::operator::owned_parts;
use weir_runtime::{Chunk, OperatorContext, Output, Result, RowKind, Source, SourceStatus, SubtaskInfo};

use super::columns::EventColumns;
use super::generator::{self, EventKind, GeneratorConfig, Texts};

/// A contiguous range of event ids generated on one timeline, as Flink's generator splits
/// them: event `n` of the split (counting from `first_number`) has id `first_id + n` and event
/// time `base + n × delay`, the delay being that of the split's `generators`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Split {
    pub first_id: i64,
    pub max_events: i64,
    pub emitted: i64,
    /// The number of splits the stream was cut into, which sets the split's event-time step.
    pub generators: u32,
}

/// The first event number of a split (Flink's table source starts at 1).
const FIRST_EVENT_NUMBER: i64 = 1;

/// Generates the events of this subtask's splits, one split after another.
#[derive(Debug, Clone)]
pub struct NexmarkSource {
    name: String,
    /// The stream's options; `inter_event_delay_us` is that of one generator.
    config: Arc<GeneratorConfig>,
    /// Events in all (Flink's `maxEvents`).
    max_events: i64,
    rate_limited: bool,
    fields: Arc<[Fields; 3]>,
    splits: VecDeque<Split>,
    /// Wall-clock time of the first poll (only for `rate.limited`).
    started_at: Option<i64>,
    texts: Texts,
}

impl NexmarkSource {
    pub(crate) fn new(
        name: String,
        config: GeneratorConfig,
        max_events: i64,
        rate_limited: bool,
        fields: [Fields; 3],
    ) -> Self {
        NexmarkSource {
            name,
            config: Arc::new(config),
            max_events,
            rate_limited,
            fields: Arc::new(fields),
            splits: VecDeque::new(),
            started_at: None,
            texts: Texts::default(),
        }
    }

    /// The instance for one subtask: split `index` of `parallelism`, as Flink's
    /// `GeneratorConfig.split` cuts them (equal shares, the last takes the remainder).
    pub fn for_subtask(&self, info: &SubtaskInfo) -> Self {
        let p = info.parallelism.max(1) as i64;
        let i = info.index as i64;
        let share = self.max_events / p;
        let max_events = if i == p - 1 { self.max_events - share * (p - 1) } else { share };
        let split = Split { first_id: 1 + i * share, max_events, emitted: 0, generators: p as u32 };
        NexmarkSource { splits: VecDeque::from([split]), ..self.clone() }
    }

    /// The event time step of a split of `generators`, in microseconds.
    fn delay_us(&self, generators: u32) -> f64 {
        self.config.inter_event_delay_us * f64::from(generators)
    }
}

impl Source for NexmarkSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn poll_next(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<SourceStatus> {
        while self.splits.front().is_some_and(|s| s.emitted >= s.max_events) {
            self.splits.pop_front();
        }
        let Some(split) = self.splits.front().copied() else { return Ok(SourceStatus::Finished) };
        let config =
            GeneratorConfig { inter_event_delay_us: self.delay_us(split.generators), ..(*self.config).clone() };
        let mut batch = (split.max_events - split.emitted).min(ctx.chunk_size() as i64);
        if self.rate_limited {
            // An event is due once as much wall-clock time has passed as event time since the
            // split's first event.
            let now = ctx.processing_time();
            let started = *self.started_at.get_or_insert(now);
            let first = config.timestamp_for_event(FIRST_EVENT_NUMBER);
            let due = (0..batch)
                .take_while(|k| {
                    config.timestamp_for_event(FIRST_EVENT_NUMBER + split.emitted + k) - first <= now - started
                })
                .count() as i64;
            if due == 0 {
                let next = config.timestamp_for_event(FIRST_EVENT_NUMBER + split.emitted) - first + started;
                return Ok(SourceStatus::Wait(Duration::from_millis((next - now).max(1) as u64)));
            }
            batch = due;
        }
        let channels = generator::channels();
        let mut columns = EventColumns::with_capacity(batch as usize);
        for k in 0..batch {
            let number = FIRST_EVENT_NUMBER + split.emitted + k;
            let id = split.first_id + number;
            let timestamp = config.timestamp_for_event(number);
            let mut random = JavaRandom::new(generator::event_seed(id));
            match config.kind(id) {
                EventKind::Person => {
                    let extra = columns.begin_person();
                    let person = generator::next_person(&config, id, &mut random, &mut self.texts, extra);
                    columns.end_person(&person, timestamp, &self.texts);
                }
                EventKind::Auction => {
                    let extra = columns.begin_auction();
                    let auction =
                        generator::next_auction(&config, number, id, timestamp, &mut random, &mut self.texts, extra);
                    columns.end_auction(&auction, timestamp, &self.texts);
                }
                EventKind::Bid => {
                    let extra = columns.begin_bid();
                    let bid = generator::next_bid(&config, id, &mut random, extra);
                    columns.end_bid(&bid, timestamp, &channels[bid.channel]);
                }
            }
        }
        let chunk = Chunk::from_arrays(vec![RowKind::Insert; batch as usize], columns.finish(&self.fields));
        if let Some(front) = self.splits.front_mut() {
            front.emitted += batch;
        }
        out.collect(chunk);
        let done = self.splits.iter().all(|s| s.emitted >= s.max_events);
        Ok(if done { SourceStatus::Finished } else { SourceStatus::Ready })
    }

    /// The splits still to generate and how far each got.
    fn snapshot_state(&mut self, _: u64, _: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        let section = state.section(SPLITS);
        section.u32(self.splits.len() as u32);
        for split in &self.splits {
            section.i64(split.first_id);
            section.i64(split.max_events);
            section.i64(split.emitted);
            section.u32(split.generators);
        }
        Ok(())
    }

    /// Goes on with the splits of the old subtasks this one takes over (its own at the same
    /// parallelism), each on its own timeline: the events are those the uninterrupted job
    /// would have generated, at any new parallelism.
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        let mut splits = VecDeque::new();
        for state in owned_parts(states, ctx.subtask()) {
            let Some(mut section) = state.section(SPLITS) else { continue };
            let malformed = |e: weir_runtime::checkpoint::codec::DecodeError| {
                weir_runtime::Error::Restore(format!("the state of nexmark source '{}' is malformed: {e}", self.name))
            };
            for _ in 0..section.u32().map_err(malformed)? {
                splits.push_back(Split {
                    first_id: section.i64().map_err(malformed)?,
                    max_events: section.i64().map_err(malformed)?,
                    emitted: section.i64().map_err(malformed)?,
                    generators: section.u32().map_err(malformed)?,
                });
            }
        }
        self.splits = splits;
        Ok(())
    }
}

/// The section of a nexmark source's state: its splits.
const SPLITS: &str = "splits";
