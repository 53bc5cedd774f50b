//! Jobs from start to end: end of input through a DAG, backpressure, failure, cancellation,
//! worker threads and metrics.

use crate::common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{collect, keyed_numbers, wait_until};
use parking_lot::Mutex;
use weir::connectors::{BlackholeSink, GeneratorSource};
use weir::operators::{MapOperator, UnionOperator};
use weir::runtime::graph::JobGraph;
use weir::runtime::{
    job, Chunk, Error, JobStatus, Operator, OperatorContext, Output, Result, RuntimeConfig, ShipStrategy, Value,
};

#[test]
fn end_of_input_flows_through_a_diamond() {
    // source → HASH → left (2) ─┐
    //        → REBALANCE → right (3) ─┴→ union (2) → sink (2)
    let mut g = JobGraph::new();
    let source = keyed_numbers(&mut g, 2, 5_000, 13);
    let left = g.add_operator("Left", 2, |_| Box::new(UnionOperator));
    let right = g.add_operator("Right", 3, |_| Box::new(UnionOperator));
    let join = g.add_operator("Join", 2, |_| Box::new(UnionOperator));
    let (sink, out) = collect(&mut g, 2);
    g.connect(source, left, ShipStrategy::Hash(vec![0]));
    g.connect(source, right, ShipStrategy::Rebalance);
    g.connect_input(left, join, 0, ShipStrategy::Hash(vec![1]));
    g.connect_input(right, join, 1, ShipStrategy::Hash(vec![1]));
    g.connect(join, sink, ShipStrategy::Forward);
    let config = RuntimeConfig::default().with_worker_threads(2).with_chunk_size(100);
    assert_eq!(job::run(g, config).unwrap(), JobStatus::Finished);
    let mut seen: Vec<i64> = out.rows().iter().map(|r| r.values[1].as_i64().unwrap()).collect();
    seen.sort_unstable();
    let expected: Vec<i64> = (0..5_000).flat_map(|n| [n, n]).collect();
    assert_eq!(seen, expected, "every row arrives once through each branch");
    assert_eq!(out.ended_subtasks(), 2);
}

/// Counts chunks leaving the source chain, so the sink can tell how many are in flight.
#[derive(Clone)]
struct InFlight {
    sent: Arc<AtomicI64>,
    received: Arc<AtomicI64>,
    max: Arc<AtomicI64>,
}

/// A sink that takes its time over every chunk and records how many chunks were in flight.
struct SlowSink {
    flight: InFlight,
    rows: Arc<AtomicU64>,
    sum: Arc<AtomicU64>,
}

impl Operator for SlowSink {
    fn name(&self) -> &str {
        "SlowSink"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> Result<()> {
        // Chunks that left the source but were not yet taken out of this mailbox.
        let taken = self.flight.received.fetch_add(1, Ordering::SeqCst) + 1;
        let in_flight = self.flight.sent.load(Ordering::SeqCst) - taken;
        self.flight.max.fetch_max(in_flight, Ordering::SeqCst);
        std::thread::sleep(Duration::from_micros(300));
        self.rows.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        let sum: i64 = chunk.rows().map(|(_, r)| r[1].as_i64().unwrap_or(0)).sum();
        self.sum.fetch_add(sum as u64, Ordering::Relaxed);
        Ok(())
    }
}

#[test]
fn a_slow_sink_holds_a_fast_source_to_the_mailbox_capacity_and_loses_nothing() {
    const CAPACITY: usize = 4;
    const ROWS: u64 = 40_000;
    let flight = InFlight {
        sent: Arc::new(AtomicI64::new(0)),
        received: Arc::new(AtomicI64::new(0)),
        max: Arc::new(AtomicI64::new(0)),
    };
    let (rows, sum) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let mut g = JobGraph::new();
    let source = keyed_numbers(&mut g, 1, ROWS, 10);
    let sent = Arc::clone(&flight.sent);
    // Chained to the source: counts each chunk as it leaves for the sink's mailbox.
    let count = g.add_operator("CountSent", 1, move |_| {
        let sent = Arc::clone(&sent);
        Box::new(CountChunks { sent })
    });
    let sink_flight = flight.clone();
    let (sink_rows, sink_sum) = (Arc::clone(&rows), Arc::clone(&sum));
    let sink = g.add_operator("SlowSink", 1, move |_| {
        Box::new(SlowSink { flight: sink_flight.clone(), rows: Arc::clone(&sink_rows), sum: Arc::clone(&sink_sum) })
    });
    g.connect(source, count, ShipStrategy::Forward);
    g.connect(count, sink, ShipStrategy::Rebalance);
    let config = RuntimeConfig::default().with_worker_threads(2).with_chunk_size(100).with_mailbox_capacity(CAPACITY);
    let handle = job::start(g, config).unwrap();
    let metrics = handle.metrics().clone();
    assert_eq!(handle.wait().unwrap(), JobStatus::Finished);
    assert_eq!(rows.load(Ordering::SeqCst), ROWS);
    assert_eq!(sum.load(Ordering::SeqCst), ROWS * (ROWS - 1) / 2);
    let max = flight.max.load(Ordering::SeqCst);
    // The mailbox holds CAPACITY elements; the sender may hold one more while it waits.
    assert!(max <= CAPACITY as i64 + 1, "{max} chunks were in flight, capacity is {CAPACITY}");
    assert!(max >= 1);
    let source_metrics = metrics.snapshot().into_iter().find(|m| m.name.starts_with("Numbers")).unwrap();
    assert_eq!(source_metrics.counters.records_out, ROWS);
    assert!(source_metrics.counters.backpressured > Duration::ZERO, "the source never waited for the sink");
}

struct CountChunks {
    sent: Arc<AtomicI64>,
}

impl Operator for CountChunks {
    fn name(&self) -> &str {
        "CountSent"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        self.sent.fetch_add(1, Ordering::SeqCst);
        out.collect(chunk);
        Ok(())
    }
}

/// Fails (or panics) when it sees the row numbered `at`.
struct Exploder {
    at: i64,
    panic: bool,
}

impl Operator for Exploder {
    fn name(&self) -> &str {
        "Exploder"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        if chunk.rows().any(|(_, r)| r[1].as_i64() == Some(self.at)) {
            if self.panic {
                panic!("row {} is cursed", self.at);
            }
            return Err(Error::execution(format!("cannot handle row {}", self.at)));
        }
        out.collect(chunk);
        Ok(())
    }
}

fn exploding_job(panic: bool) -> Result<JobStatus> {
    let mut g = JobGraph::new();
    // An endless source: the job can only end through the failure.
    let source = keyed_numbers(&mut g, 2, u64::MAX, 100);
    let exploder = g.add_operator("Exploder", 2, move |_| Box::new(Exploder { at: 5_000, panic }));
    let (sink, _) = collect(&mut g, 3);
    g.connect(source, exploder, ShipStrategy::Hash(vec![0]));
    g.connect(exploder, sink, ShipStrategy::Rebalance);
    job::run(g, RuntimeConfig::default().with_worker_threads(2))
}

#[test]
fn a_failing_operator_fails_the_job_with_its_name() {
    let err = exploding_job(false).unwrap_err().to_string();
    assert!(err.starts_with("Operator 'Exploder' (subtask "), "{err}");
    assert!(err.ends_with("/2) failed: cannot handle row 5000"), "{err}");
}

#[test]
fn a_panicking_operator_fails_the_job_with_its_name() {
    let err = exploding_job(true).unwrap_err().to_string();
    assert!(err.starts_with("Operator 'Exploder' (subtask "), "{err}");
    assert!(err.ends_with("/2) panicked: row 5000 is cursed"), "{err}");
}

#[test]
fn a_job_of_parallelism_8_runs_on_2_worker_threads() {
    let threads = Arc::new(Mutex::new(HashSet::new()));
    let mut g = JobGraph::new();
    let source = keyed_numbers(&mut g, 8, 80_000, 1000);
    let seen = Arc::clone(&threads);
    let map = g.add_operator("Map", 8, move |_| {
        let seen = Arc::clone(&seen);
        Box::new(MapOperator::new("Map", 2, move |r: &[Value], out: &mut Vec<Value>| {
            seen.lock().insert(std::thread::current().id());
            out.extend_from_slice(r);
        }))
    });
    let (sink, out) = collect(&mut g, 8);
    g.connect(source, map, ShipStrategy::Hash(vec![0]));
    g.connect(map, sink, ShipStrategy::Hash(vec![1]));
    let config = RuntimeConfig::default().with_worker_threads(2);
    job::run(g, config).unwrap();
    assert_eq!(out.rows().len(), 80_000);
    assert_eq!(threads.lock().len(), 2, "subtasks ran on {} threads", threads.lock().len());
}

#[test]
fn a_running_job_shows_metrics_and_can_be_cancelled() {
    let mut g = JobGraph::new();
    let generator = GeneratorSource::new(
        "Endless",
        1,
        u64::MAX,
        Arc::new(|n, out: &mut Vec<Value>| out.push(Value::BigInt(n as i64))),
    );
    let source = g.add_source("Endless", 2, move |info| Box::new(generator.for_subtask(info)));
    let rows = Arc::new(AtomicU64::new(0));
    let sink_rows = Arc::clone(&rows);
    let sink = g.add_operator("Sink: Discard", 1, move |_| Box::new(BlackholeSink::counting(Arc::clone(&sink_rows))));
    g.connect(source, sink, ShipStrategy::Rebalance);
    let handle = job::start(g, RuntimeConfig::default().with_worker_threads(2)).unwrap();
    wait_until("rows flow", || rows.load(Ordering::Relaxed) > 100_000);
    let snapshot = handle.metrics().snapshot();
    let sink_in: u64 = snapshot.iter().filter(|m| m.name == "Sink: Discard").map(|m| m.counters.records_in).sum();
    assert!(sink_in > 0);
    assert!(!handle.metrics().latency_micros().is_empty(), "the sink records source-to-sink latency");
    assert!(!handle.is_finished());
    handle.cancel();
    assert_eq!(handle.wait().unwrap(), JobStatus::Cancelled);
}

#[test]
fn an_invalid_graph_is_refused_before_it_runs() {
    let mut g = JobGraph::new();
    let source = keyed_numbers(&mut g, 2, 10, 1);
    let (sink, _) = collect(&mut g, 3);
    g.connect(source, sink, ShipStrategy::Forward);
    let err = job::run(g, RuntimeConfig::default()).unwrap_err().to_string();
    assert_eq!(
        err,
        "Invalid job graph: FORWARD edge from 'Numbers' (parallelism 2) to 'Sink: Collect' (parallelism 3) needs equal parallelism"
    );
}
