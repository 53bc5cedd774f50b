//! Event time and processing time end to end: watermark alignment, idle inputs, timers.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{collect, row, scripted, wait_until};
use weir::connectors::SourceStep;
use weir::runtime::element::MAX_WATERMARK;
use weir::runtime::graph::JobGraph;
use weir::runtime::{
    job, Chunk, ManualClock, Operator, OperatorContext, Output, Result, RowKind, RuntimeConfig, ShipStrategy, Timer,
    Value,
};

/// Emits `[input, value]` for every row, so tests can tell the two inputs apart.
struct TagInput;

impl Operator for TagInput {
    fn name(&self) -> &str {
        "TagInput"
    }

    fn process_chunk(
        &mut self,
        input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let mut tagged = Chunk::new(2);
        for (kind, r) in chunk.rows() {
            tagged.push(kind, &[Value::BigInt(input as i64), r[0].clone()]);
        }
        out.collect(tagged);
        Ok(())
    }
}

fn manual_config(clock: &Arc<ManualClock>) -> RuntimeConfig {
    RuntimeConfig::default().with_worker_threads(2).with_clock(Arc::clone(clock) as _)
}

fn two_input_job(a: Vec<SourceStep>, b: Vec<SourceStep>) -> (JobGraph, weir::connectors::CollectHandle) {
    let mut g = JobGraph::new();
    let a = scripted(&mut g, "A", 1, a);
    let b = scripted(&mut g, "B", 1, b);
    let tag = g.add_operator("TagInput", 1, |_| Box::new(TagInput));
    let (sink, out) = collect(&mut g, 1);
    g.connect_input(a, tag, 0, ShipStrategy::Rebalance);
    g.connect_input(b, tag, 1, ShipStrategy::Rebalance);
    g.connect(tag, sink, ShipStrategy::Forward);
    (g, out)
}

fn watermarks(out: &weir::connectors::CollectHandle) -> Vec<i64> {
    out.watermarks().into_iter().map(|(_, w)| w).collect()
}

#[test]
fn a_two_input_operator_sees_the_minimum_watermark_of_its_inputs() {
    let clock = Arc::new(ManualClock::new(0));
    let (g, out) = two_input_job(
        vec![
            SourceStep::Watermark(100),
            SourceStep::Watermark(300),
            SourceStep::Rows(vec![row(1)]),
            SourceStep::WaitUntil(1),
        ],
        vec![SourceStep::Watermark(50), SourceStep::Rows(vec![row(2)]), SourceStep::WaitUntil(1)],
    );
    let handle = job::start(g, manual_config(&clock)).unwrap();
    // Each row follows its input's watermarks on the same channel: once both rows are in,
    // both inputs' watermarks have been seen.
    wait_until("both rows arrived", || out.rows().len() == 2);
    assert_eq!(watermarks(&out), [50]);
    let mut tags: Vec<String> = out.lines();
    tags.sort();
    assert_eq!(tags, ["+I[0, 1]", "+I[1, 2]"]);
    clock.set(1);
    handle.wait().unwrap();
    let all = watermarks(&out);
    assert_eq!(all.first(), Some(&50));
    assert_eq!(all.last(), Some(&MAX_WATERMARK));
    assert!(all.windows(2).all(|w| w[0] < w[1]), "watermarks went back: {all:?}");
}

#[test]
fn an_idle_input_stops_holding_the_watermark_back_after_the_idle_timeout() {
    let clock = Arc::new(ManualClock::new(0));
    let (g, out) = two_input_job(
        vec![SourceStep::Watermark(100), SourceStep::Rows(vec![row(1)]), SourceStep::WaitUntil(10_000)],
        // B sends a row but no watermark, then falls silent.
        vec![SourceStep::Rows(vec![row(2)]), SourceStep::WaitUntil(10_000)],
    );
    let config = manual_config(&clock).with_idle_timeout(Duration::from_millis(1_000));
    let handle = job::start(g, config).unwrap();
    // Both sources were active at processing time 0.
    wait_until("both rows arrived", || out.rows().len() == 2);
    // Input B has no watermark yet: it holds the watermark back.
    assert_eq!(watermarks(&out), Vec::<i64>::new());
    clock.set(2_000);
    wait_until("B went idle", || !out.watermarks().is_empty());
    assert_eq!(watermarks(&out), [100]);
    clock.set(10_000);
    handle.wait().unwrap();
    assert_eq!(watermarks(&out), [100, MAX_WATERMARK]);
}

/// Registers a processing-time timer at 5 000 on its first row and an event-time timer at
/// each row's value; emits `[time]` when a timer fires and `[-time]` when a watermark passes.
struct Timers {
    armed: bool,
}

impl Operator for Timers {
    fn name(&self) -> &str {
        "Timers"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> Result<()> {
        if !self.armed {
            self.armed = true;
            ctx.register_processing_time_timer(5_000, vec![]);
        }
        for (_, r) in chunk.rows() {
            ctx.register_event_time_timer(r[0].as_i64().unwrap_or(0), vec![r[0].clone()]);
        }
        Ok(())
    }

    fn on_timer(&mut self, timer: Timer, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        let mut c = Chunk::new(1);
        c.push(RowKind::Insert, &[Value::BigInt(timer.time)]);
        out.collect(c);
        Ok(())
    }

    fn process_watermark(&mut self, watermark: i64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        if watermark < MAX_WATERMARK {
            let mut c = Chunk::new(1);
            c.push(RowKind::Insert, &[Value::BigInt(-watermark)]);
            out.collect(c);
        }
        out.emit_watermark(watermark);
        Ok(())
    }
}

#[test]
fn timers_fire_on_watermarks_and_on_the_replaceable_clock() {
    let clock = Arc::new(ManualClock::new(0));
    let mut g = JobGraph::new();
    let source = scripted(
        &mut g,
        "Rows",
        1,
        vec![
            SourceStep::Rows(vec![row(30), row(10), row(20)]),
            SourceStep::Watermark(25),
            SourceStep::WaitUntil(10_000),
        ],
    );
    let timers = g.add_operator("Timers", 1, |_| Box::new(Timers { armed: false }));
    let (sink, out) = collect(&mut g, 1);
    g.connect(source, timers, ShipStrategy::Rebalance);
    g.connect(timers, sink, ShipStrategy::Forward);
    let handle = job::start(g, manual_config(&clock)).unwrap();
    wait_until("the watermark passed", || out.rows().len() == 3);
    // Event-time timers up to the watermark fire in time order, before the watermark.
    assert_eq!(out.lines(), ["+I[10]", "+I[20]", "+I[-25]"]);
    clock.set(6_000);
    wait_until("the processing-time timer fired", || out.rows().len() == 4);
    assert_eq!(out.lines()[3], "+I[5000]");
    clock.set(10_000);
    handle.wait().unwrap();
    // The final watermark fires the last event-time timer.
    assert_eq!(out.lines()[4..], ["+I[30]"]);
}
