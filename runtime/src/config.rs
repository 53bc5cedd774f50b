//! Execution options, with Flink's keys where Flink has one.
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `parallelism.default` | 1 | parallelism of vertices that do not set their own |
//! | `execution.worker-threads` | number of cores | threads that run all subtask actors of a job |
//! | `execution.mailbox-capacity` | 16 | elements a subtask's mailbox holds before senders wait |
//! | `execution.chunk-size` | 1024 | rows a source or exchange puts in one chunk |
//! | `table.exec.source.idle-timeout` | 0 ms (off) | a source with no data for this long is idle |

use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Result};

/// How a job runs. Build it with [`RuntimeConfig::default`] and the setters, or [`RuntimeConfig::set`].
#[derive(Clone)]
pub struct RuntimeConfig {
    /// `parallelism.default`
    pub default_parallelism: usize,
    /// `execution.worker-threads`: the fixed pool every subtask actor runs on.
    pub worker_threads: usize,
    /// `execution.mailbox-capacity`: elements queued per subtask before its senders wait.
    pub mailbox_capacity: usize,
    /// `execution.chunk-size`: rows per chunk made by sources and exchanges.
    pub chunk_size: usize,
    /// `table.exec.source.idle-timeout`: zero disables idleness detection.
    pub idle_timeout: Duration,
    /// Processing time for timers, idleness and mini-batch intervals.
    pub clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for RuntimeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeConfig")
            .field("default_parallelism", &self.default_parallelism)
            .field("worker_threads", &self.worker_threads)
            .field("mailbox_capacity", &self.mailbox_capacity)
            .field("chunk_size", &self.chunk_size)
            .field("idle_timeout", &self.idle_timeout)
            .finish_non_exhaustive()
    }
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            default_parallelism: 1,
            worker_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            mailbox_capacity: 16,
            chunk_size: 1024,
            idle_timeout: Duration::ZERO,
            clock: Arc::new(SystemClock),
        }
    }
}

impl RuntimeConfig {
    /// The option keys [`RuntimeConfig::set`] accepts.
    pub const KEYS: [&'static str; 5] = [
        "parallelism.default",
        "execution.worker-threads",
        "execution.mailbox-capacity",
        "execution.chunk-size",
        "table.exec.source.idle-timeout",
    ];

    /// Sets an option from its textual key and value, validating the value.
    ///
    /// # Errors
    /// [`Error::UnknownOption`] for a key not in [`RuntimeConfig::KEYS`];
    /// [`Error::InvalidOption`] naming the key and the accepted values for a malformed value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        match key {
            "parallelism.default" => self.default_parallelism = parse_positive(key, value)?,
            "execution.worker-threads" => self.worker_threads = parse_positive(key, value)?,
            "execution.mailbox-capacity" => self.mailbox_capacity = parse_positive(key, value)?,
            "execution.chunk-size" => self.chunk_size = parse_positive(key, value)?,
            "table.exec.source.idle-timeout" => self.idle_timeout = parse_duration(key, value)?,
            _ => return Err(Error::UnknownOption(key.to_string())),
        }
        Ok(())
    }

    /// Restores option `key` to its value in `initial` (the configuration a session started
    /// with), as `RESET 'key'` does; keys that are not runtime options are left to the caller.
    /// Returns whether `key` is a runtime option.
    pub fn reset(&mut self, key: &str, initial: &RuntimeConfig) -> bool {
        match key {
            "parallelism.default" => self.default_parallelism = initial.default_parallelism,
            "execution.worker-threads" => self.worker_threads = initial.worker_threads,
            "execution.mailbox-capacity" => self.mailbox_capacity = initial.mailbox_capacity,
            "execution.chunk-size" => self.chunk_size = initial.chunk_size,
            "table.exec.source.idle-timeout" => self.idle_timeout = initial.idle_timeout,
            _ => return false,
        }
        true
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

    /// Replaces the processing-time clock.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
}

fn parse_positive(key: &str, value: &str) -> Result<usize> {
    match value.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(Error::InvalidOption {
            key: key.to_string(),
            value: value.to_string(),
            expected: "a positive integer".to_string(),
        }),
    }
}

/// Parses a duration as Flink writes one: a number with an optional unit
/// (`ms`, `s`, `min`, `h`, `d` and their long forms); a bare number is milliseconds.
///
/// # Errors
/// [`Error::InvalidOption`] naming `key` when the text is not a duration.
pub fn parse_duration(key: &str, value: &str) -> Result<Duration> {
    let invalid = || Error::InvalidOption {
        key: key.to_string(),
        value: value.to_string(),
        expected: "a duration such as '500 ms', '10 s', '1 min', '2 h' or '1 d'".to_string(),
    };
    let text = value.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| invalid())?;
    let millis_per_unit = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => 1,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000,
        "min" | "m" | "minute" | "minutes" => 60_000,
        "h" | "hour" | "hours" => 3_600_000,
        "d" | "day" | "days" => 86_400_000,
        _ => return Err(invalid()),
    };
    number.checked_mul(millis_per_unit).map(Duration::from_millis).ok_or_else(invalid)
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
        assert_eq!(err, "Invalid value '0' for option 'execution.worker-threads': a positive integer");
        assert!(matches!(c.set("execution.nope", "1"), Err(Error::UnknownOption(_))));
    }
}
