//! Per-subtask metrics, readable while a job runs and after it ends.
//!
//! Counters are atomics updated by the subtask's actor; readers take a [`SubtaskSnapshot`]
//! at any time without stopping the job. Latency is measured from the moment a chunk's data
//! left its source to the moment it reached a sink subtask (a subtask with no outputs).

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hdrhistogram::Histogram;
use parking_lot::Mutex;

use crate::element::NO_WATERMARK;
use crate::state::{StateBackend, StateStats, StateSummary};

/// What one operator of a subtask counts: the mini-batch bundles it flushed (how many, and the
/// rows and distinct keys they held), recorded through [`crate::OperatorContext::record_bundle`],
/// and the late rows it dropped (Flink's `numLateRecordsDropped`), through
/// [`crate::OperatorContext::record_late_dropped`].
#[derive(Debug, Default)]
pub struct OperatorMetrics {
    bundles: AtomicU64,
    rows: AtomicU64,
    keys: AtomicU64,
    late_dropped: AtomicU64,
}

/// A point-in-time copy of [`OperatorMetrics`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OperatorCounts {
    /// Bundles flushed.
    pub bundles: u64,
    /// Rows buffered in those bundles.
    pub rows: u64,
    /// Distinct keys of those bundles (a key counts once per bundle).
    pub keys: u64,
    /// Rows dropped for arriving after the watermark passed their window (`numLateRecordsDropped`).
    pub late_records_dropped: u64,
}

impl OperatorCounts {
    /// Adds another subtask's counts to these.
    pub fn add(&mut self, other: &OperatorCounts) {
        self.bundles += other.bundles;
        self.rows += other.rows;
        self.keys += other.keys;
        self.late_records_dropped += other.late_records_dropped;
    }

    /// Whether the operator counted anything.
    pub fn is_empty(&self) -> bool {
        self.bundles == 0 && self.late_records_dropped == 0
    }

    /// Mean rows per bundle (0 before the first).
    pub fn rows_per_bundle(&self) -> f64 {
        if self.bundles == 0 {
            0.0
        } else {
            self.rows as f64 / self.bundles as f64
        }
    }

    /// Mean distinct keys per bundle (0 before the first).
    pub fn keys_per_bundle(&self) -> f64 {
        if self.bundles == 0 {
            0.0
        } else {
            self.keys as f64 / self.bundles as f64
        }
    }
}

impl OperatorMetrics {
    /// Counts one flushed bundle of `rows` rows over `keys` distinct keys.
    pub fn record(&self, rows: usize, keys: usize) {
        self.bundles.fetch_add(1, Ordering::Relaxed);
        self.rows.fetch_add(rows as u64, Ordering::Relaxed);
        self.keys.fetch_add(keys as u64, Ordering::Relaxed);
    }

    /// Counts `rows` late rows dropped.
    pub fn record_late_dropped(&self, rows: u64) {
        self.late_dropped.fetch_add(rows, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> OperatorCounts {
        OperatorCounts {
            bundles: self.bundles.load(Ordering::Relaxed),
            rows: self.rows.load(Ordering::Relaxed),
            keys: self.keys.load(Ordering::Relaxed),
            late_records_dropped: self.late_dropped.load(Ordering::Relaxed),
        }
    }
}

/// Live counters of one subtask.
#[derive(Debug)]
pub struct SubtaskMetrics {
    /// The chain's name, operators joined by ` -> `.
    pub name: String,
    /// 0-based subtask index.
    pub index: usize,
    /// Parallelism of the vertex.
    pub parallelism: usize,
    /// Whether the chain starts with a source.
    pub is_source: bool,
    /// Whether the chain ends in a sink (sends nothing on).
    pub is_sink: bool,
    records_read: AtomicU64,
    records_in: AtomicU64,
    records_out: AtomicU64,
    records_into_last: AtomicU64,
    bytes_read: AtomicU64,
    bytes_total: AtomicU64,
    watermark: AtomicI64,
    busy_nanos: AtomicU64,
    backpressured_nanos: AtomicU64,
    /// Source-to-sink latency in microseconds, recorded by sink subtasks.
    latency_micros: Mutex<Histogram<u64>>,
    /// Mini-batch bundles flushed by each operator of the chain, by operator name.
    bundles: Mutex<Vec<(String, Arc<OperatorMetrics>)>>,
}

/// A point-in-time copy of one subtask's metrics.
#[derive(Debug, Clone)]
pub struct SubtaskSnapshot {
    /// The chain's name.
    pub name: String,
    /// 0-based subtask index.
    pub index: usize,
    /// Parallelism of the vertex.
    pub parallelism: usize,
    /// Its counters: rows read, in, out and into the last operator, watermark, time busy and
    /// back-pressured.
    pub counters: SubtaskCounters,
    /// Source-to-sink latency in microseconds (empty except at sinks).
    pub latency_micros: Histogram<u64>,
    /// Mini-batch bundles of each operator of the chain that flushed any, by operator name.
    pub bundles: Vec<(String, OperatorCounts)>,
}

/// The counters of one subtask now, without its latency histogram and bundles: what a watcher
/// polling a running job reads (atomic loads only, no lock).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SubtaskCounters {
    /// Whether the chain starts with a source.
    pub is_source: bool,
    /// Whether the chain ends in a sink.
    pub is_sink: bool,
    /// Rows the chain's source produced.
    pub records_read: u64,
    /// Rows received on input channels.
    pub records_in: u64,
    /// Rows sent to downstream subtasks (counted once per receiver for BROADCAST).
    pub records_out: u64,
    /// Rows handed to the chain's last operator (at a sink: the rows written).
    pub records_into_last: u64,
    /// Bytes the chain's source has read, when it tells ([`crate::Source::progress`]).
    pub bytes_read: u64,
    /// Bytes the chain's source reads in all, when it tells (0 when it does not).
    pub bytes_total: u64,
    /// The last watermark the subtask's input delivered ([`NO_WATERMARK`] before any).
    pub watermark: i64,
    /// Time spent running operators.
    pub busy: Duration,
    /// Time spent waiting for room in downstream mailboxes.
    pub backpressured: Duration,
}

impl SubtaskCounters {
    /// Records into the subtask as a task's `numRecordsIn` counts them: received from other
    /// subtasks, and read by its source.
    pub fn task_records_in(&self) -> u64 {
        self.records_in + self.records_read
    }

    /// Records out of the subtask as a task's `numRecordsOut` counts them: sent to other
    /// subtasks, or written by its sink.
    pub fn task_records_out(&self) -> u64 {
        if self.is_sink {
            self.records_into_last
        } else {
            self.records_out
        }
    }
}

fn new_histogram() -> Histogram<u64> {
    // Three significant digits, auto-resizing: never fails for these arguments.
    Histogram::new(3).unwrap_or_else(|_| unreachable!("3 significant digits is a valid precision"))
}

impl SubtaskMetrics {
    /// Zeroed metrics for subtask `index` of `name`.
    pub fn new(name: String, index: usize, parallelism: usize) -> Self {
        SubtaskMetrics {
            name,
            index,
            parallelism,
            is_source: false,
            is_sink: false,
            records_read: AtomicU64::new(0),
            records_in: AtomicU64::new(0),
            records_out: AtomicU64::new(0),
            records_into_last: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            bytes_total: AtomicU64::new(0),
            watermark: AtomicI64::new(NO_WATERMARK),
            busy_nanos: AtomicU64::new(0),
            backpressured_nanos: AtomicU64::new(0),
            latency_micros: Mutex::new(new_histogram()),
            bundles: Mutex::new(Vec::new()),
        }
    }

    /// The metrics of a chain that starts with a source (`is_source`) or ends in a sink (`is_sink`).
    pub fn with_role(mut self, is_source: bool, is_sink: bool) -> Self {
        self.is_source = is_source;
        self.is_sink = is_sink;
        self
    }

    pub(crate) fn set_records_read(&self, n: u64) {
        self.records_read.store(n, Ordering::Relaxed);
    }

    /// The bundle counters of the chain's operator `operator`, created on first use.
    pub(crate) fn bundle_metrics(&self, operator: &str) -> Arc<OperatorMetrics> {
        let mut all = self.bundles.lock();
        if let Some((_, m)) = all.iter().find(|(name, _)| name == operator) {
            return Arc::clone(m);
        }
        let m = Arc::new(OperatorMetrics::default());
        all.push((operator.to_string(), Arc::clone(&m)));
        m
    }

    pub(crate) fn set_source_progress(&self, progress: crate::subtask::SourceProgress) {
        self.bytes_read.store(progress.bytes_read, Ordering::Relaxed);
        self.bytes_total.store(progress.bytes_total, Ordering::Relaxed);
    }

    pub(crate) fn add_records_in(&self, n: usize) {
        self.records_in.fetch_add(n as u64, Ordering::Relaxed);
    }

    pub(crate) fn add_records_out(&self, n: usize) {
        self.records_out.fetch_add(n as u64, Ordering::Relaxed);
    }

    pub(crate) fn set_records_into_last(&self, n: u64) {
        self.records_into_last.store(n, Ordering::Relaxed);
    }

    pub(crate) fn set_watermark(&self, watermark: i64) {
        self.watermark.store(watermark, Ordering::Relaxed);
    }

    pub(crate) fn add_busy(&self, d: Duration) {
        self.busy_nanos.fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }

    pub(crate) fn add_backpressured(&self, d: Duration) {
        self.backpressured_nanos.fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }

    pub(crate) fn record_latency(&self, nanos: u64, rows: usize) {
        let _ = self.latency_micros.lock().record_n((nanos / 1000).max(1), rows as u64);
    }

    /// The counters now (each read atomically, not all at one instant).
    pub fn counters(&self) -> SubtaskCounters {
        SubtaskCounters {
            is_source: self.is_source,
            is_sink: self.is_sink,
            records_read: self.records_read.load(Ordering::Relaxed),
            records_in: self.records_in.load(Ordering::Relaxed),
            records_out: self.records_out.load(Ordering::Relaxed),
            records_into_last: self.records_into_last.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            bytes_total: self.bytes_total.load(Ordering::Relaxed),
            watermark: self.watermark.load(Ordering::Relaxed),
            busy: Duration::from_nanos(self.busy_nanos.load(Ordering::Relaxed)),
            backpressured: Duration::from_nanos(self.backpressured_nanos.load(Ordering::Relaxed)),
        }
    }

    /// The counters of each operator of the chain that counted anything, by operator name.
    pub fn operator_counts(&self) -> Vec<(String, OperatorCounts)> {
        self.bundles
            .lock()
            .iter()
            .map(|(name, m)| (name.clone(), m.snapshot()))
            .filter(|(_, b)| !b.is_empty())
            .collect()
    }

    /// A consistent-enough copy of the counters (each read atomically, not all at one instant).
    pub fn snapshot(&self) -> SubtaskSnapshot {
        SubtaskSnapshot {
            name: self.name.clone(),
            index: self.index,
            parallelism: self.parallelism,
            counters: self.counters(),
            latency_micros: self.latency_micros.lock().clone(),
            bundles: self.operator_counts(),
        }
    }
}

/// The metrics of every subtask of a job.
#[derive(Debug, Clone, Default)]
pub struct JobMetrics {
    subtasks: Vec<Arc<SubtaskMetrics>>,
    /// What the job's on-disk states hold and did (none with state on the heap).
    state: Option<Arc<StateStats>>,
}

impl JobMetrics {
    /// The metrics of a job whose states live in `backend`.
    pub(crate) fn with_state(mut self, backend: &StateBackend) -> Self {
        self.state = backend.stats();
        self
    }

    /// Flink's name of the job's state backend (`HashMapStateBackend` or
    /// `EmbeddedRocksDBStateBackend`).
    pub fn state_backend(&self) -> &'static str {
        crate::state::backend::flink_name(self.state.is_some())
    }

    /// What the job's on-disk states hold and did so far (`None` with state on the heap).
    pub fn state(&self) -> Option<StateSummary> {
        self.state.as_ref().map(|s| s.summary())
    }

    pub(crate) fn push(&mut self, m: Arc<SubtaskMetrics>) {
        self.subtasks.push(m);
    }

    /// A snapshot of every subtask, in deployment order.
    pub fn snapshot(&self) -> Vec<SubtaskSnapshot> {
        self.subtasks.iter().map(|m| m.snapshot()).collect()
    }

    /// Source-to-sink latency over all sink subtasks, in microseconds.
    pub fn latency_micros(&self) -> Histogram<u64> {
        let mut all = new_histogram();
        for m in &self.subtasks {
            let _ = all.add(&*m.latency_micros.lock());
        }
        all
    }
}
