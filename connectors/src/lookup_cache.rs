//! Lookup caches (Flink's FLIP-221 options), shared by the subtasks of a job:
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `lookup.cache` | `NONE` | `NONE`, `PARTIAL` (rows of keys looked up) or `FULL` (the whole table) |
//! | `lookup.partial-cache.expire-after-access` | none | drop an entry not read for this long |
//! | `lookup.partial-cache.expire-after-write` | none | drop an entry this long after it was loaded |
//! | `lookup.partial-cache.max-rows` | none | most keys kept; the least recently used goes first |
//! | `lookup.partial-cache.cache-missing-key` | `true` | also remember keys that found nothing |
//! | `lookup.full-cache.reload-strategy` | `PERIODIC` | only `PERIODIC` |
//! | `lookup.full-cache.periodic-reload.interval` | none | reload the whole table this often |
//!
//! A PARTIAL cache needs at least one of its bounds. Expiry reads the job's clock. A FULL cache
//! loads the table at the first lookup (lookups wait for it), then serves every lookup from
//! memory; when the interval has passed, the next lookup starts a reload and lookups keep
//! reading the previous copy until the new one is complete (lookups drive the reload: a job
//! that looks nothing up does not reload).

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::future::{FutureExt, Shared};
use hashbrown::HashMap;
use lru::LruCache;
use parking_lot::Mutex;
use weir_runtime::{Clock, Error as RuntimeError, LookupFunction, LookupFuture, LookupProvider, LookupRows, Value};

use crate::error::{Error, Result};
use crate::options::TableOptions;

/// Bounds of a PARTIAL cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartialCacheOptions {
    /// `lookup.partial-cache.expire-after-access`
    pub expire_after_access: Option<Duration>,
    /// `lookup.partial-cache.expire-after-write`
    pub expire_after_write: Option<Duration>,
    /// `lookup.partial-cache.max-rows`
    pub max_rows: Option<usize>,
    /// `lookup.partial-cache.cache-missing-key`
    pub cache_missing_key: bool,
}

/// `lookup.cache` and its settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LookupCacheOptions {
    /// Every lookup asks the table.
    #[default]
    None,
    /// Rows of looked-up keys are kept within bounds.
    Partial(PartialCacheOptions),
    /// The whole table is kept, reloaded every interval (never, without one).
    Full {
        /// `lookup.full-cache.periodic-reload.interval`
        reload_interval: Option<Duration>,
    },
}

impl LookupCacheOptions {
    /// Reads (and declares) the `lookup.cache` options of a table.
    ///
    /// # Errors
    /// Malformed values, a PARTIAL cache without bounds, a reload strategy weir does not run.
    pub fn from_options(options: &mut TableOptions) -> Result<Self> {
        let kind = options.one_of("lookup.cache", &["NONE", "PARTIAL", "FULL"], "NONE")?;
        let expire_after_access = options.duration("lookup.partial-cache.expire-after-access")?;
        let expire_after_write = options.duration("lookup.partial-cache.expire-after-write")?;
        let max_rows = options.parse::<usize>("lookup.partial-cache.max-rows", "a positive number of rows")?;
        let cache_missing_key = options.boolean("lookup.partial-cache.cache-missing-key", true)?;
        let strategy = options.one_of("lookup.full-cache.reload-strategy", &["PERIODIC", "TIMED"], "PERIODIC")?;
        let reload_interval = options.duration("lookup.full-cache.periodic-reload.interval")?;
        options.optional("lookup.full-cache.periodic-reload.schedule-mode");
        Ok(match kind {
            "PARTIAL" => {
                if expire_after_access.is_none() && expire_after_write.is_none() && max_rows.is_none() {
                    return Err(Error::Validation(
                        "Missing 'lookup.partial-cache.expire-after-access', 'lookup.partial-cache.expire-after-write' \
                         or 'lookup.partial-cache.max-rows' in the table config. The cache will not have evictions \
                         under this configuration and could lead to potential memory issues as the cache size may \
                         grow indefinitely."
                            .into(),
                    ));
                }
                if max_rows == Some(0) {
                    return Err(crate::options::invalid(
                        "lookup.partial-cache.max-rows",
                        "0",
                        "a positive number of rows",
                    ));
                }
                LookupCacheOptions::Partial(PartialCacheOptions {
                    expire_after_access,
                    expire_after_write,
                    max_rows,
                    cache_missing_key,
                })
            }
            "FULL" if strategy == "TIMED" => {
                return Err(Error::Validation(
                    "'lookup.full-cache.reload-strategy' = 'TIMED' is not supported by weir; use 'PERIODIC' with \
                     'lookup.full-cache.periodic-reload.interval'"
                        .into(),
                ))
            }
            "FULL" => LookupCacheOptions::Full { reload_interval },
            _ => LookupCacheOptions::None,
        })
    }

    /// `provider` behind this cache, reading time from `clock`.
    ///
    /// # Errors
    /// A FULL cache over a table that cannot be read whole.
    pub fn wrap(self, provider: Arc<dyn LookupProvider>, clock: Arc<dyn Clock>) -> Result<Arc<dyn LookupProvider>> {
        Ok(match self {
            LookupCacheOptions::None => provider,
            LookupCacheOptions::Partial(options) => Arc::new(PartialCacheProvider { provider, options, clock }),
            LookupCacheOptions::Full { reload_interval } => {
                if provider.load_all().is_none() {
                    return Err(Error::Validation(
                        "'lookup.cache' = 'FULL' needs a table that can be read whole".into(),
                    ));
                }
                Arc::new(FullCacheProvider { provider, reload_interval, clock })
            }
        })
    }
}

struct PartialCacheProvider {
    provider: Arc<dyn LookupProvider>,
    options: PartialCacheOptions,
    clock: Arc<dyn Clock>,
}

impl LookupProvider for PartialCacheProvider {
    fn lookup_function(&self, keys: &[usize]) -> weir_runtime::Result<Arc<dyn LookupFunction>> {
        let capacity = self.options.max_rows.and_then(NonZeroUsize::new);
        let entries = match capacity {
            Some(n) => LruCache::new(n),
            None => LruCache::unbounded(),
        };
        Ok(Arc::new(PartialCache {
            inner: self.provider.lookup_function(keys)?,
            options: self.options,
            clock: Arc::clone(&self.clock),
            entries: Arc::new(Mutex::new(entries)),
        }))
    }
}

struct Entry {
    rows: LookupRows,
    written: i64,
    accessed: i64,
}

/// Rows of looked-up keys, least recently used evicted first, expired entries dropped when read.
struct PartialCache {
    inner: Arc<dyn LookupFunction>,
    options: PartialCacheOptions,
    clock: Arc<dyn Clock>,
    entries: Arc<Mutex<LruCache<Vec<Value>, Entry>>>,
}

fn older_than(since: i64, now: i64, limit: Option<Duration>) -> bool {
    limit.is_some_and(|d| now - since >= d.as_millis() as i64)
}

impl LookupFunction for PartialCache {
    fn lookup(&self, key: Vec<Value>) -> LookupFuture {
        let now = self.clock.now_millis();
        {
            let mut entries = self.entries.lock();
            if let Some(entry) = entries.get_mut(&key) {
                let expired = older_than(entry.written, now, self.options.expire_after_write)
                    || older_than(entry.accessed, now, self.options.expire_after_access);
                if !expired {
                    entry.accessed = now;
                    tracing::trace!(hit = true, "lookup cache");
                    return Box::pin(futures::future::ready(Ok(entry.rows.clone())));
                }
                entries.pop(&key);
            }
        }
        let pending = self.inner.lookup(key.clone());
        let (entries, clock, keep_missing) =
            (Arc::clone(&self.entries), Arc::clone(&self.clock), self.options.cache_missing_key);
        Box::pin(async move {
            let rows = pending.await?;
            if !rows.is_empty() || keep_missing {
                let now = clock.now_millis();
                entries.lock().put(key, Entry { rows: rows.clone(), written: now, accessed: now });
            }
            Ok(rows)
        })
    }
}

struct FullCacheProvider {
    provider: Arc<dyn LookupProvider>,
    reload_interval: Option<Duration>,
    clock: Arc<dyn Clock>,
}

impl LookupProvider for FullCacheProvider {
    fn lookup_function(&self, keys: &[usize]) -> weir_runtime::Result<Arc<dyn LookupFunction>> {
        Ok(Arc::new(FullCache {
            provider: Arc::clone(&self.provider),
            keys: keys.to_vec(),
            reload_interval: self.reload_interval,
            clock: Arc::clone(&self.clock),
            state: Arc::new(Mutex::new(FullState::default())),
        }))
    }
}

type Index = HashMap<Vec<Value>, LookupRows>;
type Loading = Shared<BoxFuture<'static, std::result::Result<Arc<Index>, String>>>;

#[derive(Default)]
struct FullState {
    index: Option<Arc<Index>>,
    loaded_at: i64,
    loading: Option<Loading>,
}

/// The whole table in memory, indexed by the lookup key.
struct FullCache {
    provider: Arc<dyn LookupProvider>,
    keys: Vec<usize>,
    reload_interval: Option<Duration>,
    clock: Arc<dyn Clock>,
    state: Arc<Mutex<FullState>>,
}

impl FullCache {
    /// Starts loading the table unless a load is under way; the load installs its result.
    fn load(&self, state: &mut FullState) -> Loading {
        if let Some(loading) = &state.loading {
            return loading.clone();
        }
        let rows = self.provider.load_all().unwrap_or_else(|| Box::pin(futures::future::ready(Ok(Vec::new()))));
        let (keys, shared_state, clock) = (self.keys.clone(), Arc::clone(&self.state), Arc::clone(&self.clock));
        let loading: Loading = async move {
            let result = rows.await.map(|rows| {
                let mut index = Index::new();
                for row in rows {
                    let key: Vec<Value> = keys.iter().map(|&k| row[k].clone()).collect();
                    index.entry(key).or_default().push(row);
                }
                Arc::new(index)
            });
            let mut state = shared_state.lock();
            state.loading = None;
            match result {
                Ok(index) => {
                    tracing::debug!(keys = index.len(), "lookup cache loaded the whole table");
                    state.index = Some(Arc::clone(&index));
                    state.loaded_at = clock.now_millis();
                    Ok(index)
                }
                Err(e) => Err(e.to_string()),
            }
        }
        .boxed()
        .shared();
        state.loading = Some(loading.clone());
        loading
    }
}

impl LookupFunction for FullCache {
    fn lookup(&self, key: Vec<Value>) -> LookupFuture {
        // Lookups drive a reload under way; it installs the new copy when it completes.
        let reloading = self.state.lock().loading.clone();
        if let Some(reload) = reloading {
            if let Some(Err(e)) = reload.now_or_never() {
                tracing::warn!(error = %e, "lookup cache reload failed; keeping the previous copy");
            }
        }
        let mut state = self.state.lock();
        let now = self.clock.now_millis();
        if let Some(index) = state.index.clone() {
            if older_than(state.loaded_at, now, self.reload_interval) && state.loading.is_none() {
                // Reload in the background; this lookup reads the current copy.
                let reload = self.load(&mut state);
                drop(state);
                let _ = reload.now_or_never();
            }
            let rows = index.get(&key).cloned().unwrap_or_default();
            return Box::pin(futures::future::ready(Ok(rows)));
        }
        let loading = self.load(&mut state);
        drop(state);
        Box::pin(async move {
            let index =
                loading.await.map_err(|e| RuntimeError::execution(format!("loading the lookup cache failed: {e}")))?;
            Ok(index.get(&key).cloned().unwrap_or_default())
        })
    }
}
