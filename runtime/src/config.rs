//! Execution options, with Flink's keys where Flink has one: each is a
//! [`crate::settings::Setting`] declared below ([`RuntimeConfig::SETTINGS`]), with its
//! default, description and accepted values; [`RuntimeConfig::configured`] applies a session's.

use std::sync::Arc;
use std::time::Duration;

use crate::checkpoint::CheckpointConfig;
use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Result};
pub use crate::settings::parse_duration;
use crate::settings::{Setting, Settings, Spec};
use crate::state::backend::{self, BackendConfig};

/// How a job runs. Build it with [`RuntimeConfig::default`] and the setters, or [`RuntimeConfig::set`].
#[derive(Clone)]
pub struct RuntimeConfig {
    /// `parallelism.default`
    pub default_parallelism: usize,
    /// `pipeline.max-parallelism`: the number of key groups keyed state and HASH exchanges
    /// use, and the highest parallelism a vertex may have; `None` takes Flink's default for
    /// each vertex's parallelism ([`crate::partition::default_max_parallelism`]).
    pub max_parallelism: Option<usize>,
    /// `execution.worker-threads`: the fixed pool every subtask actor runs on.
    pub worker_threads: usize,
    /// `execution.mailbox-capacity`: elements queued per subtask before its senders wait.
    pub mailbox_capacity: usize,
    /// `execution.chunk-size`: rows per chunk made by sources and exchanges.
    pub chunk_size: usize,
    /// `table.exec.source.idle-timeout`: zero disables idleness detection.
    pub idle_timeout: Duration,
    /// `taskmanager.memory.process.size`: the memory a job may use; `None` takes the
    /// system's limit, if any ([`crate::memory::MemoryLimit::detected`]).
    pub memory_limit: Option<u64>,
    /// Processing time for timers, idleness and mini-batch intervals.
    pub clock: Arc<dyn Clock>,
    /// `execution.checkpointing.*`: when and how the job takes checkpoints, and the
    /// checkpoint it starts from ([`RuntimeConfig::with_checkpointing`]).
    pub checkpointing: CheckpointConfig,
    /// `state.backend.*`: where keyed state lives and the memory the on-disk backend may use.
    pub state_backend: BackendConfig,
    /// The job's id, when the caller chose it (the SQL session names the job's checkpoint
    /// directory after it); `None`: a new one when the job starts.
    pub job_id: Option<crate::ids::JobId>,
}

impl std::fmt::Debug for RuntimeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeConfig")
            .field("default_parallelism", &self.default_parallelism)
            .field("max_parallelism", &self.max_parallelism)
            .field("worker_threads", &self.worker_threads)
            .field("mailbox_capacity", &self.mailbox_capacity)
            .field("chunk_size", &self.chunk_size)
            .field("idle_timeout", &self.idle_timeout)
            .field("memory_limit", &self.memory_limit)
            .field("checkpointing", &self.checkpointing)
            .field("state_backend", &self.state_backend)
            .field("job_id", &self.job_id)
            .finish_non_exhaustive()
    }
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            default_parallelism: 1,
            max_parallelism: None,
            worker_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            mailbox_capacity: 16,
            chunk_size: 1024,
            idle_timeout: Duration::ZERO,
            memory_limit: None,
            clock: Arc::new(SystemClock),
            checkpointing: CheckpointConfig::default(),
            state_backend: BackendConfig::default(),
            job_id: None,
        }
    }
}

/// `parallelism.default`
pub static PARALLELISM: Setting<i64> = Setting::int(
    "parallelism.default",
    1,
    "1",
    |n| (1..=MAX_PARALLELISM).contains(&n),
    "a positive integer up to 32768",
    "parallelism of operators that do not set their own (the weir command starts at the number of cores)",
);
/// `pipeline.max-parallelism`
pub static MAX_PARALLELISM_SETTING: Setting<i64> = Setting::int(
    "pipeline.max-parallelism",
    -1,
    "-1",
    |n| n == -1 || (1..=MAX_PARALLELISM).contains(&n),
    "-1 or a positive integer up to 32768",
    "the number of key groups of keyed state and HASH exchanges, and the highest parallelism an \
     operator may have; -1 takes Flink's default for each operator's parallelism (at least 128)",
);
/// `execution.worker-threads`
pub static WORKER_THREADS: Setting<i64> = Setting::int(
    "execution.worker-threads",
    1,
    "number of cores",
    |n| (1..=MAX_THREADS).contains(&n),
    "a positive integer up to 1024",
    "threads running all subtasks of a job",
)
.weir_only();
/// `execution.mailbox-capacity`
pub static MAILBOX_CAPACITY: Setting<i64> = Setting::int(
    "execution.mailbox-capacity",
    16,
    "16",
    |n| (1..=MAX_QUEUE).contains(&n),
    "a positive integer up to 1048576",
    "elements queued per subtask before senders wait",
)
.weir_only();
/// `execution.chunk-size`
pub static CHUNK_SIZE: Setting<i64> = Setting::int(
    "execution.chunk-size",
    1024,
    "1024",
    |n| (1..=MAX_QUEUE).contains(&n),
    "a positive integer up to 1048576",
    "rows per chunk made by sources and exchanges",
)
.weir_only();
/// `table.exec.source.idle-timeout`
pub static IDLE_TIMEOUT: Setting<Duration> = Setting::duration(
    "table.exec.source.idle-timeout",
    Duration::ZERO,
    "0 ms",
    "a source with no data for this long is idle; 0 turns idleness off",
);

/// `pipeline.auto-watermark-interval`
pub static AUTO_WATERMARK_INTERVAL: Setting<Duration> = Setting::duration(
    "pipeline.auto-watermark-interval",
    Duration::from_millis(200),
    "200 ms",
    "a WatermarkAssigner sends its watermark on after a row that moved it on by more than this \
     (in event time), and every this long (in processing time) otherwise; 0 sends every advance at once",
);

/// `taskmanager.memory.process.size`
pub static PROCESS_MEMORY: Setting<u64> = Setting::memory_size(
    "taskmanager.memory.process.size",
    0,
    "none",
    "memory a job may use: a job whose data outgrows it fails with an error naming the operator; \
     unset, the limit of the process's cgroup or ulimit applies",
)
.shown_as("none");

const MAX_PARALLELISM: i64 = 32_768;
const MAX_THREADS: i64 = 1024;
const MAX_QUEUE: i64 = 1 << 20;

impl RuntimeConfig {
    /// The settings the runtime reads, declared once each (the checkpointing keys in
    /// [`CheckpointConfig::SETTINGS`]).
    pub const SETTINGS: [&'static Spec; 22] = [
        &PARALLELISM.spec,
        &MAX_PARALLELISM_SETTING.spec,
        &WORKER_THREADS.spec,
        &MAILBOX_CAPACITY.spec,
        &CHUNK_SIZE.spec,
        &IDLE_TIMEOUT.spec,
        &AUTO_WATERMARK_INTERVAL.spec,
        &PROCESS_MEMORY.spec,
        CheckpointConfig::SETTINGS[0],
        CheckpointConfig::SETTINGS[1],
        CheckpointConfig::SETTINGS[2],
        CheckpointConfig::SETTINGS[3],
        CheckpointConfig::SETTINGS[4],
        CheckpointConfig::SETTINGS[5],
        CheckpointConfig::SETTINGS[6],
        CheckpointConfig::SETTINGS[7],
        backend::SETTINGS[0],
        backend::SETTINGS[1],
        backend::SETTINGS[2],
        backend::SETTINGS[3],
        backend::SETTINGS[4],
        backend::SETTINGS[5],
    ];

    /// This configuration with the runtime keys `settings` set (the others keep their values).
    pub fn configured(&self, settings: &Settings) -> RuntimeConfig {
        let mut config = self.clone();
        let count = |s: &Setting<i64>, current: usize| settings.get_set(s).map_or(current, |n| n as usize);
        config.default_parallelism = count(&PARALLELISM, self.default_parallelism);
        if let Some(n) = settings.get_set(&MAX_PARALLELISM_SETTING) {
            config.max_parallelism = usize::try_from(n).ok();
        }
        config.worker_threads = count(&WORKER_THREADS, self.worker_threads);
        config.mailbox_capacity = count(&MAILBOX_CAPACITY, self.mailbox_capacity);
        config.chunk_size = count(&CHUNK_SIZE, self.chunk_size);
        config.idle_timeout = settings.get_set(&IDLE_TIMEOUT).unwrap_or(self.idle_timeout);
        config.memory_limit = settings.get_set(&PROCESS_MEMORY).or(self.memory_limit);
        config.checkpointing = self.checkpointing.configured(settings);
        config.state_backend = self.state_backend.configured(settings);
        config
    }

    /// The value of runtime key `key` in this configuration, as `SET;` prints it.
    pub fn value_text(&self, key: &str) -> Option<String> {
        Some(match key {
            "parallelism.default" => self.default_parallelism.to_string(),
            "pipeline.max-parallelism" => self.max_parallelism.map_or("-1".to_string(), |n| n.to_string()),
            "execution.worker-threads" => self.worker_threads.to_string(),
            "execution.mailbox-capacity" => self.mailbox_capacity.to_string(),
            "execution.chunk-size" => self.chunk_size.to_string(),
            "table.exec.source.idle-timeout" => format!("{} ms", self.idle_timeout.as_millis()),
            "taskmanager.memory.process.size" => match self.memory_limit {
                Some(bytes) => crate::memory::Bytes(bytes).to_string(),
                None => "none".to_string(),
            },
            _ => return self.checkpointing.value_text(key).or_else(|| self.state_backend.value_text(key)),
        })
    }

    /// Sets an option from its textual key and value, validating the value.
    ///
    /// # Errors
    /// [`Error::UnknownOption`] for a key not in [`RuntimeConfig::SETTINGS`];
    /// [`Error::InvalidOption`] naming the key and the accepted values for a malformed value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        static TABLE: [&Spec; 22] = RuntimeConfig::SETTINGS;
        let mut settings = Settings::new(&TABLE);
        if settings.spec(key).is_none() {
            return Err(Error::UnknownOption(key.to_string()));
        }
        settings.set(key, value)?;
        *self = self.configured(&settings);
        Ok(())
    }

    /// Sets `execution.worker-threads`.
    pub fn with_worker_threads(mut self, threads: usize) -> Self {
        self.worker_threads = threads.max(1);
        self
    }

    /// Sets `parallelism.default`.
    pub fn with_parallelism(mut self, parallelism: usize) -> Self {
        self.default_parallelism = parallelism.max(1);
        self
    }

    /// Sets `execution.mailbox-capacity`.
    pub fn with_mailbox_capacity(mut self, capacity: usize) -> Self {
        self.mailbox_capacity = capacity.max(1);
        self
    }

    /// Sets `execution.chunk-size`.
    pub fn with_chunk_size(mut self, rows: usize) -> Self {
        self.chunk_size = rows.max(1);
        self
    }

    /// Sets `table.exec.source.idle-timeout`.
    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Sets `taskmanager.memory.process.size`, in bytes.
    pub fn with_memory_limit(mut self, bytes: u64) -> Self {
        self.memory_limit = Some(bytes);
        self
    }

    /// The memory limit a job runs under: the configured one, else the system's.
    pub fn effective_memory_limit(&self) -> Option<crate::memory::MemoryLimit> {
        match self.memory_limit {
            Some(bytes) => Some(crate::memory::MemoryLimit::configured(bytes)),
            None => crate::memory::MemoryLimit::detected(),
        }
    }

    /// Replaces how the job takes checkpoints.
    pub fn with_checkpointing(mut self, checkpointing: CheckpointConfig) -> Self {
        self.checkpointing = checkpointing;
        self
    }

    /// Replaces the processing-time clock.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_as_flink_writes_them() {
        let k = "table.exec.source.idle-timeout";
        assert_eq!(parse_duration(k, "500").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration(k, "10 s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration(k, "2min").unwrap(), Duration::from_secs(120));
        let err = parse_duration(k, "soon").unwrap_err().to_string();
        assert!(err.contains("table.exec.source.idle-timeout") && err.contains("'10 s'"), "{err}");
    }

    #[test]
    fn set_validates_keys_and_values() {
        let mut c = RuntimeConfig::default();
        c.set("execution.worker-threads", "2").unwrap();
        assert_eq!(c.worker_threads, 2);
        let err = c.set("execution.worker-threads", "0").unwrap_err().to_string();
        assert_eq!(err, "Invalid value '0' for option 'execution.worker-threads': a positive integer up to 1024");
        assert!(c.set("execution.mailbox-capacity", "4611686018427387904").is_err());
        assert!(matches!(c.set("execution.nope", "1"), Err(Error::UnknownOption(_))));
    }
}
