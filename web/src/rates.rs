//! Per-second rates of the counters the runtime keeps as totals: records in and out per
//! second, and the milliseconds per second a subtask was busy, back-pressured and idle, as
//! Flink's `numRecordsInPerSecond` and `busyTimeMsPerSecond` report them.
//!
//! A sampler reads every running subtask's totals once a second and keeps the last
//! [`WINDOW`] samples; a rate is the change over that window divided by its length. Reading a
//! subtask's totals is a handful of atomic loads, so sampling never holds up the job.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use weir_runtime::jobs::JobRegistry;
use weir_runtime::metrics::SubtaskMetrics;

/// How many samples a rate spans (one a second).
pub const WINDOW: usize = 5;

/// The rates of one subtask over the last [`WINDOW`] seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SubtaskRates {
    /// Records received (read, for a source) per second.
    pub records_in: f64,
    /// Records sent (written, for a sink) per second.
    pub records_out: f64,
    /// Milliseconds per second spent running operators.
    pub busy_ms: f64,
    /// Milliseconds per second spent waiting for room downstream.
    pub backpressured_ms: f64,
}

impl SubtaskRates {
    /// Milliseconds per second neither busy nor back-pressured.
    pub fn idle_ms(&self) -> f64 {
        (1000.0 - self.busy_ms - self.backpressured_ms).max(0.0)
    }
}

#[derive(Debug, Clone, Copy)]
struct Sample {
    at: Instant,
    records_in: u64,
    records_out: u64,
    busy: Duration,
    backpressured: Duration,
}

impl Sample {
    fn of(metrics: &SubtaskMetrics, at: Instant) -> Self {
        let s = metrics.counters();
        Sample {
            at,
            records_in: s.task_records_in(),
            records_out: s.task_records_out(),
            busy: s.busy,
            backpressured: s.backpressured,
        }
    }
}

/// The recent samples of every subtask, keyed by the address of its metrics.
#[derive(Debug, Default)]
pub struct Rates {
    samples: Mutex<HashMap<usize, VecDeque<Sample>>>,
}

fn key(metrics: &Arc<SubtaskMetrics>) -> usize {
    Arc::as_ptr(metrics) as usize
}

impl Rates {
    /// Samples every subtask of every running job now; forgets subtasks of ended jobs.
    pub fn sample(&self, registry: &JobRegistry) {
        let now = Instant::now();
        let mut samples = self.samples.lock();
        let mut live = std::collections::HashSet::new();
        for job in registry.jobs().iter().filter(|j| !j.lifecycle().state().is_terminal()) {
            for subtask in job.topology.vertices.iter().flat_map(|v| &v.subtasks) {
                live.insert(key(subtask));
                let window = samples.entry(key(subtask)).or_default();
                window.push_back(Sample::of(subtask, now));
                if window.len() > WINDOW + 1 {
                    window.pop_front();
                }
            }
        }
        samples.retain(|k, _| live.contains(k));
    }

    /// The rates of `subtask` (zero before two samples, and after its job ended).
    pub fn of(&self, subtask: &Arc<SubtaskMetrics>) -> SubtaskRates {
        let samples = self.samples.lock();
        let Some(window) = samples.get(&key(subtask)) else { return SubtaskRates::default() };
        let (Some(first), Some(last)) = (window.front(), window.back()) else { return SubtaskRates::default() };
        let seconds = last.at.duration_since(first.at).as_secs_f64();
        if seconds <= 0.0 {
            return SubtaskRates::default();
        }
        let per_second = |a: u64, b: u64| b.saturating_sub(a) as f64 / seconds;
        let ms_per_second =
            |a: Duration, b: Duration| (b.saturating_sub(a).as_secs_f64() * 1000.0 / seconds).min(1000.0);
        SubtaskRates {
            records_in: per_second(first.records_in, last.records_in),
            records_out: per_second(first.records_out, last.records_out),
            busy_ms: ms_per_second(first.busy, last.busy),
            backpressured_ms: ms_per_second(first.backpressured, last.backpressured),
        }
    }
}
