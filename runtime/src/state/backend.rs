//! Where keyed state lives (`state.backend.type`): on the heap (`hashmap`, the default) or in
//! weir's on-disk store (`rocksdb`, also accepted as `forst`, Flink's names for its on-disk
//! backends), and the memory the on-disk backend may use.
//!
//! With the on-disk backend each keyed state keeps a bounded set of entries on the heap (its
//! hot tier) and the rest in a [`weir_statestore::Store`] in the job's working directory. The
//! hot tiers of a job share one budget, the managed memory (`taskmanager.memory.managed.size`,
//! or `state.backend.rocksdb.memory.fixed-per-slot` per slot); the stores' write buffers and
//! block caches are taken from it first.
//!
//! States learn their backend from the subtask they run in: the runtime enters the subtask's
//! [`StateBackend`] around every operator callback ([`scoped`]), and a state binds to it the
//! first time it takes an entry. A store that fails (a full disk, a damaged file) cannot answer
//! through the state's reference-returning API; the state records the error ([`fail`]) and the
//! runtime fails the operator when the callback returns ([`take_failure`]), before anything the
//! callback emitted travels on.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicIsize, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use weir_statestore::{Options, Stats};

use super::stats::{StateStats, StateSummary};
use super::work_dir::WorkDir;

use crate::error::{Error, Result};
use crate::settings::{Setting, Settings, Spec};

/// `state.backend.type`
pub static BACKEND_TYPE: Setting<&'static str> = Setting::choice(
    "state.backend.type",
    &["hashmap", "rocksdb", "forst"],
    "hashmap",
    "where operators keep keyed state: hashmap keeps it in memory; rocksdb (or forst) keeps a bounded part in \
     memory and the rest on disk, with incremental checkpoints",
);
/// `state.backend.incremental`
pub static INCREMENTAL: Setting<bool> = Setting::boolean(
    "state.backend.incremental",
    false,
    "with the on-disk backend, a checkpoint writes only the state files written since the last one; off, it \
     writes the whole state",
);
/// `taskmanager.memory.managed.size`
pub static MANAGED_SIZE: Setting<u64> = Setting::memory_size(
    "taskmanager.memory.managed.size",
    DEFAULT_MANAGED_SIZE,
    "512 mb",
    "memory the on-disk state backend may use for a job: entries kept in memory, write buffers and block caches",
);
/// `state.backend.rocksdb.memory.managed`
pub static MEMORY_MANAGED: Setting<bool> = Setting::boolean(
    "state.backend.rocksdb.memory.managed",
    true,
    "the on-disk backend's memory is the managed memory, shared by the job's states; off, each state of each \
     subtask keeps up to 64 mb in memory",
);
/// `state.backend.rocksdb.memory.fixed-per-slot`
pub static FIXED_PER_SLOT: Setting<u64> = Setting::memory_size(
    "state.backend.rocksdb.memory.fixed-per-slot",
    0,
    "none",
    "memory of the on-disk backend per slot (per subtask index), instead of the managed memory",
)
.shown_as("none");
/// `state.backend.rocksdb.localdir`
pub static LOCAL_DIR: Setting<String> = Setting::text(
    "state.backend.rocksdb.localdir",
    "",
    "where the on-disk backend keeps its working files (a directory per job, removed when the job ends, or by the next job when its process was killed); \
     unset, the system's temporary directory",
);

/// The settings read here.
pub const SETTINGS: [&Spec; 6] = [
    &BACKEND_TYPE.spec,
    &INCREMENTAL.spec,
    &MANAGED_SIZE.spec,
    &MEMORY_MANAGED.spec,
    &FIXED_PER_SLOT.spec,
    &LOCAL_DIR.spec,
];

/// `taskmanager.memory.managed.size` unset.
const DEFAULT_MANAGED_SIZE: u64 = 512 << 20;

/// Hot-tier bytes per state and subtask when the memory is not managed.
const UNMANAGED_STATE_BYTES: usize = 64 << 20;

/// Which backend keeps keyed state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendKind {
    /// On the heap (`hashmap`).
    #[default]
    Heap,
    /// In weir's on-disk store (`rocksdb`, `forst`).
    Disk,
}

/// How a job keeps its keyed state: the settings above, read once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendConfig {
    /// `state.backend.type`
    pub kind: BackendKind,
    /// `state.backend.incremental`
    pub incremental: bool,
    /// `taskmanager.memory.managed.size` (`None`: the default)
    pub managed_size: Option<u64>,
    /// `state.backend.rocksdb.memory.managed`
    pub memory_managed: bool,
    /// `state.backend.rocksdb.memory.fixed-per-slot`
    pub fixed_per_slot: Option<u64>,
    /// `state.backend.rocksdb.localdir` (`None`: the system's temporary directory)
    pub local_dir: Option<PathBuf>,
}

impl Default for BackendConfig {
    /// Flink's defaults: state on the heap; the on-disk backend, when chosen, checkpoints in
    /// full and uses the managed memory.
    fn default() -> Self {
        BackendConfig {
            kind: BackendKind::Heap,
            incremental: false,
            managed_size: None,
            memory_managed: true,
            fixed_per_slot: None,
            local_dir: None,
        }
    }
}

impl BackendConfig {
    /// This configuration with the keys of `settings` that were set.
    pub fn configured(&self, settings: &Settings) -> BackendConfig {
        let mut c = self.clone();
        if let Some(kind) = settings.get_set(&BACKEND_TYPE) {
            c.kind = if kind == "hashmap" { BackendKind::Heap } else { BackendKind::Disk };
        }
        c.incremental = settings.get_set(&INCREMENTAL).unwrap_or(c.incremental);
        c.managed_size = settings.get_set(&MANAGED_SIZE).or(c.managed_size);
        c.memory_managed = settings.get_set(&MEMORY_MANAGED).unwrap_or(c.memory_managed);
        c.fixed_per_slot = settings.get_set(&FIXED_PER_SLOT).filter(|&n| n > 0).or(c.fixed_per_slot);
        if let Some(dir) = settings.get_set(&LOCAL_DIR).filter(|d| !d.is_empty()) {
            c.local_dir = Some(PathBuf::from(dir));
        }
        c
    }

    /// The value of key `key`, as `SET;` prints it.
    pub fn value_text(&self, key: &str) -> Option<String> {
        Some(match key {
            "state.backend.type" => match self.kind {
                BackendKind::Heap => "hashmap",
                BackendKind::Disk => "rocksdb",
            }
            .to_string(),
            "state.backend.incremental" => self.incremental.to_string(),
            "taskmanager.memory.managed.size" => {
                crate::memory::Bytes(self.managed_size.unwrap_or(DEFAULT_MANAGED_SIZE)).to_string()
            }
            "state.backend.rocksdb.memory.managed" => self.memory_managed.to_string(),
            "state.backend.rocksdb.memory.fixed-per-slot" => {
                self.fixed_per_slot.map_or("none".to_string(), |n| crate::memory::Bytes(n).to_string())
            }
            "state.backend.rocksdb.localdir" => {
                self.local_dir.as_ref().map_or(String::new(), |d| d.display().to_string())
            }
            _ => return None,
        })
    }

    /// The backend of one run of a job whose widest vertex has `slots` subtasks, keeping its
    /// working files in a new directory and, for incremental checkpoints, its checkpointed
    /// files in `shared`, beside the job's checkpoints. Without that directory (checkpoints
    /// kept in memory, whose files would go with the run) every checkpoint is full, as
    /// Flink's in-memory checkpoint storage holds whole states too.
    ///
    /// # Errors
    /// The working directory cannot be made.
    pub fn open(&self, slots: usize, shared: Option<PathBuf>) -> Result<StateBackend> {
        if self.kind == BackendKind::Heap {
            return Ok(StateBackend::heap());
        }
        let parent = self.local_dir.clone().unwrap_or_else(std::env::temp_dir);
        let work = WorkDir::create(&parent)?;
        let incremental = self.incremental && shared.is_some();
        let shared = shared.unwrap_or_else(|| work.path().join("shared"));
        let budget = match (self.fixed_per_slot, self.memory_managed) {
            (Some(per_slot), _) => Some(per_slot as usize * slots.max(1)),
            (None, true) => Some(self.managed_size.unwrap_or(DEFAULT_MANAGED_SIZE) as usize),
            (None, false) => None,
        };
        tracing::info!(dir = %work.path().display(), shared = %shared.display(), incremental, budget, "on-disk state backend");
        Ok(StateBackend {
            disk: Some(Arc::new(DiskBackend {
                work,
                shared,
                incremental,
                budget: Budget::new(budget),
                next_store: AtomicU64::new(0),
                stats: Arc::default(),
            })),
        })
    }
}

/// The keyed-state backend of a running job; cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct StateBackend {
    disk: Option<Arc<DiskBackend>>,
}

impl PartialEq for StateBackend {
    fn eq(&self, other: &Self) -> bool {
        match (&self.disk, &other.disk) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

impl Eq for StateBackend {}

impl StateBackend {
    /// State on the heap.
    pub fn heap() -> Self {
        StateBackend { disk: None }
    }

    /// The on-disk backend in a directory of its own under the system's temporary directory,
    /// with `budget` bytes of memory; checkpoints are incremental with their files in `shared`,
    /// full without (for tests and library callers that drive operators themselves).
    ///
    /// # Errors
    /// The directory cannot be made.
    pub fn disk(budget: usize, shared: Option<PathBuf>) -> Result<Self> {
        let config = BackendConfig {
            kind: BackendKind::Disk,
            incremental: shared.is_some(),
            managed_size: Some(budget as u64),
            memory_managed: true,
            ..BackendConfig::default()
        };
        config.open(1, shared)
    }

    /// The on-disk part, when state is on disk.
    pub(crate) fn disk_backend(&self) -> Option<&Arc<DiskBackend>> {
        self.disk.as_ref()
    }

    /// Entries the job's states wrote from the heap into their stores (zero for the heap
    /// backend).
    pub fn entries_written(&self) -> u64 {
        self.summary().map_or(0, |s| s.entries_written)
    }

    /// What the job's on-disk states hold and did (`None` for the heap backend).
    pub fn summary(&self) -> Option<StateSummary> {
        self.disk.as_ref().map(|d| d.stats.summary())
    }

    /// The figures of the job's on-disk states, to read after the job ended too (`None` for
    /// the heap backend).
    pub fn stats(&self) -> Option<Arc<StateStats>> {
        self.disk.as_ref().map(|d| Arc::clone(&d.stats))
    }
}

/// Flink's name of the on-disk backend, or of the heap backend (the web UI's and the REST
/// API's `state_backend`).
pub fn flink_name(on_disk: bool) -> &'static str {
    match on_disk {
        true => "EmbeddedRocksDBStateBackend",
        false => "HashMapStateBackend",
    }
}

/// The on-disk backend of one job run.
#[derive(Debug)]
pub(crate) struct DiskBackend {
    /// The working directory (removed when the job's last state lets go of it).
    work: WorkDir,
    /// Where incremental checkpoints keep their files.
    pub(crate) shared: PathBuf,
    /// `state.backend.incremental`
    pub(crate) incremental: bool,
    /// The memory the hot tiers share.
    pub(crate) budget: Budget,
    next_store: AtomicU64,
    /// What the stores hold and did.
    pub(crate) stats: Arc<StateStats>,
}

impl DiskBackend {
    /// A new directory for one state's store, and the store's number.
    pub(crate) fn new_store_dir(&self) -> (u64, PathBuf) {
        let n = self.next_store.fetch_add(1, Ordering::Relaxed);
        self.budget.stores.fetch_add(1, Ordering::Relaxed);
        (n, self.work.path().join(format!("state-{n}")))
    }

    /// The memory one store may use for its write buffer and block cache.
    pub(crate) fn store_options(&self) -> Options {
        match self.budget.total {
            Some(total) => Options {
                write_buffer_bytes: (total / 64).clamp(256 << 10, 16 << 20),
                block_cache_bytes: (total / 32).clamp(256 << 10, 32 << 20),
                ..Options::default()
            },
            None => Options::default(),
        }
    }

    /// Records what store `n` holds and did.
    pub(crate) fn report(&self, n: u64, stats: Stats) {
        self.stats.report(n, stats);
    }

    /// Store `n` is gone.
    pub(crate) fn forget(&self, n: u64) {
        self.stats.close(n);
        self.budget.stores.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The bytes the hot tiers of a job may hold, and hold.
#[derive(Debug)]
pub(crate) struct Budget {
    /// The whole budget (`None`: each tier has [`UNMANAGED_STATE_BYTES`]).
    total: Option<usize>,
    /// Bytes the tiers hold, by their estimate.
    used: AtomicIsize,
    /// Stores open, each with a write buffer and a block cache taken from the budget.
    stores: AtomicUsize,
    /// Hot tiers that share the budget.
    tiers: AtomicUsize,
}

/// What the hot tiers may hold and hold, seen from one tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Room {
    /// Bytes the hot tiers may hold once the stores have their share.
    pub(crate) left: usize,
    /// Bytes they hold.
    pub(crate) used: usize,
    /// A tier's even part of `left`: when the tiers hold too much, those holding more than
    /// this give some up (one holding less cannot bring the total down by much).
    pub(crate) share: usize,
}

impl Budget {
    fn new(total: Option<usize>) -> Self {
        Budget { total, used: AtomicIsize::new(0), stores: AtomicUsize::new(0), tiers: AtomicUsize::new(0) }
    }

    /// Adds `delta` bytes to what the tiers hold.
    pub(crate) fn charge(&self, delta: isize) {
        self.used.fetch_add(delta, Ordering::Relaxed);
    }

    /// A hot tier begins sharing the budget.
    pub(crate) fn tier_opened(&self) {
        self.tiers.fetch_add(1, Ordering::Relaxed);
    }

    /// A hot tier stops sharing the budget.
    pub(crate) fn tier_closed(&self) {
        self.tiers.fetch_sub(1, Ordering::Relaxed);
    }

    /// The room of a tier holding `own` bytes: with a budget, the job's tiers together; without
    /// one, the tier alone with [`UNMANAGED_STATE_BYTES`].
    pub(crate) fn room(&self, own: usize, store_options: &Options) -> Room {
        match self.total {
            Some(total) => {
                let per_store = store_options.write_buffer_bytes + store_options.block_cache_bytes;
                let stores = self.stores.load(Ordering::Relaxed).saturating_mul(per_store);
                let left = total.saturating_sub(stores).max(total / 4);
                let share = left / self.tiers.load(Ordering::Relaxed).max(1);
                Room { left, used: self.used.load(Ordering::Relaxed).max(0) as usize, share }
            }
            None => Room { left: UNMANAGED_STATE_BYTES, used: own, share: 0 },
        }
    }
}

/// The backend a state binds to: the one of the subtask whose callback is running, with its
/// number of key groups.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    pub(crate) backend: StateBackend,
    pub(crate) max_parallelism: usize,
}

thread_local! {
    static SCOPE: RefCell<Option<Scope>> = const { RefCell::new(None) };
    static FAILURE: RefCell<Option<Error>> = const { RefCell::new(None) };
}

/// Runs `f` with `backend` (of a subtask with `max_parallelism` key groups) as the backend the
/// states it touches bind to; then returns the first error a state recorded meanwhile, if any,
/// in place of what `f` returned.
///
/// # Errors
/// What `f` returns, or the error a state's store met.
pub fn scoped<T>(backend: &StateBackend, max_parallelism: usize, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let scope = Scope { backend: backend.clone(), max_parallelism };
    let previous = SCOPE.with(|s| s.replace(Some(scope)));
    let result = f();
    SCOPE.with(|s| *s.borrow_mut() = previous);
    match take_failure() {
        Some(error) => Err(error),
        None => result,
    }
}

/// The scope [`scoped`] entered on this thread, if any.
pub(crate) fn current() -> Option<Scope> {
    SCOPE.with(|s| s.borrow().clone())
}

/// Whether the states of the running callback's subtask are on disk: an operator with a
/// heap-only form of its state (the typed group aggregates) holds it as keyed state then.
pub fn on_disk() -> bool {
    current().is_some_and(|scope| scope.backend.disk_backend().is_some())
}

/// Records `error` of a state's store: the running callback fails when it returns.
pub(crate) fn fail(error: impl std::fmt::Display) {
    tracing::error!(%error, "keyed state store failed");
    FAILURE.with(|f| {
        let mut f = f.borrow_mut();
        if f.is_none() {
            *f = Some(Error::Execution(format!("keyed state could not be read or written: {error}")));
        }
    });
}

/// The error recorded on this thread since the last call, if any.
pub fn take_failure() -> Option<Error> {
    FAILURE.with(|f| f.borrow_mut().take())
}
