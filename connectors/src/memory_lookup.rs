//! An in-memory table to look rows up in, with a latency per key and counters of the lookups
//! in flight: for the pipeline API, tests and benchmarks of lookup joins.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hashbrown::HashMap;
use parking_lot::Mutex;
use smallvec::SmallVec;
use weir_runtime::{LookupFunction, LookupFuture, LookupProvider, LookupRows, Result, Value};

/// How long the lookup of a key takes.
pub type LatencyFn = Arc<dyn Fn(&[Value]) -> Duration + Send + Sync>;

/// Counts of the lookups a [`MemoryLookupTable`] served.
#[derive(Debug, Default)]
pub struct LookupStats {
    lookups: AtomicU64,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    per_key: Mutex<HashMap<Vec<Value>, usize>>,
    max_per_key: AtomicUsize,
}

impl LookupStats {
    /// Lookups started so far.
    pub fn lookups(&self) -> u64 {
        self.lookups.load(Ordering::Relaxed)
    }

    /// The most lookups that were in flight at one time.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::Relaxed)
    }

    /// The most lookups of one key that were in flight at one time.
    pub fn max_in_flight_per_key(&self) -> usize {
        self.max_per_key.load(Ordering::Relaxed)
    }

    fn begin(self: &Arc<Self>, key: &[Value]) -> InFlight {
        self.lookups.fetch_add(1, Ordering::Relaxed);
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        let mut per_key = self.per_key.lock();
        let count = per_key.entry(key.to_vec()).or_default();
        *count += 1;
        self.max_per_key.fetch_max(*count, Ordering::SeqCst);
        InFlight { stats: Arc::clone(self), key: key.to_vec() }
    }
}

/// One lookup in flight; counted down when dropped.
struct InFlight {
    stats: Arc<LookupStats>,
    key: Vec<Value>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.stats.in_flight.fetch_sub(1, Ordering::SeqCst);
        let mut per_key = self.stats.per_key.lock();
        if let Some(count) = per_key.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                per_key.remove(&self.key);
            }
        }
    }
}

/// Rows held in memory, looked up by any set of columns. A lookup of a key whose latency is
/// zero completes at once; others after a timer of that latency.
#[derive(Clone)]
pub struct MemoryLookupTable {
    rows: Arc<Vec<Vec<Value>>>,
    latency: LatencyFn,
    stats: Arc<LookupStats>,
}

impl MemoryLookupTable {
    /// A table of `rows` answering every lookup at once.
    pub fn new(rows: Vec<Vec<Value>>) -> Self {
        MemoryLookupTable { rows: Arc::new(rows), latency: Arc::new(|_| Duration::ZERO), stats: Arc::default() }
    }

    /// The table, taking `latency(key)` to answer the lookup of `key`.
    pub fn with_latency(mut self, latency: impl Fn(&[Value]) -> Duration + Send + Sync + 'static) -> Self {
        self.latency = Arc::new(latency);
        self
    }

    /// The counters of the lookups served by this table's functions.
    pub fn stats(&self) -> Arc<LookupStats> {
        Arc::clone(&self.stats)
    }
}

/// A key of the index: most keys are one or two columns, held without an allocation of their own.
type IndexKey = SmallVec<[Value; 2]>;

/// The positions of a key's rows in the table: most keys have one.
type Positions = SmallVec<[usize; 1]>;

impl LookupProvider for MemoryLookupTable {
    fn lookup_function(&self, keys: &[usize]) -> Result<Arc<dyn LookupFunction>> {
        let mut index: HashMap<IndexKey, Positions> = HashMap::with_capacity(self.rows.len());
        for (position, row) in self.rows.iter().enumerate() {
            let key: IndexKey = keys.iter().map(|&k| row[k].clone()).collect();
            index.entry(key).or_default().push(position);
        }
        Ok(Arc::new(MemoryLookupFunction {
            rows: Arc::clone(&self.rows),
            index: Arc::new(index),
            latency: Arc::clone(&self.latency),
            stats: Arc::clone(&self.stats),
        }))
    }
}

struct MemoryLookupFunction {
    rows: Arc<Vec<Vec<Value>>>,
    index: Arc<HashMap<IndexKey, Positions>>,
    latency: LatencyFn,
    stats: Arc<LookupStats>,
}

impl LookupFunction for MemoryLookupFunction {
    fn lookup(&self, key: Vec<Value>) -> LookupFuture {
        let in_flight = self.stats.begin(&key);
        let latency = (self.latency)(&key);
        let rows: LookupRows = self
            .index
            .get(key.as_slice())
            .map_or_else(Vec::new, |positions| positions.iter().map(|&p| self.rows[p].clone()).collect());
        Box::pin(async move {
            if !latency.is_zero() {
                tokio::time::sleep(latency).await;
            }
            drop(in_flight);
            Ok(rows)
        })
    }
}
