//! The checkpointing options, with Flink's keys and defaults, declared where they are read.

use std::path::PathBuf;
use std::sync::Arc;

use super::completed::CompletedCheckpoint;
use std::time::Duration;

use crate::element::CheckpointingMode;
use crate::settings::{Setting, Settings, Spec};

/// `execution.checkpointing.interval`
pub static INTERVAL: Setting<Duration> = Setting::duration(
    "execution.checkpointing.interval",
    Duration::ZERO,
    "none",
    "how often a checkpoint is triggered; unset (or 0), jobs take no checkpoints",
)
.shown_as("none");
/// `execution.checkpointing.mode`
pub static MODE: Setting<&'static str> = Setting::choice(
    "execution.checkpointing.mode",
    &["EXACTLY_ONCE", "AT_LEAST_ONCE"],
    "EXACTLY_ONCE",
    "EXACTLY_ONCE aligns the barriers at every input; AT_LEAST_ONCE lets inputs run ahead",
);
/// `execution.checkpointing.timeout`
pub static TIMEOUT: Setting<Duration> = Setting::duration(
    "execution.checkpointing.timeout",
    Duration::from_secs(600),
    "10 min",
    "a checkpoint not complete after this long is aborted",
);
/// `execution.checkpointing.min-pause`
pub static MIN_PAUSE: Setting<Duration> = Setting::duration(
    "execution.checkpointing.min-pause",
    Duration::ZERO,
    "0 ms",
    "the least time between the end of one checkpoint and the start of the next",
);
/// `execution.checkpointing.max-concurrent-checkpoints`
pub static MAX_CONCURRENT: Setting<i64> = Setting::int(
    "execution.checkpointing.max-concurrent-checkpoints",
    1,
    "1",
    |n| (1..=1024).contains(&n),
    "a positive integer up to 1024",
    "checkpoints that may be in progress at once",
);
/// `execution.checkpointing.num-retained`
pub static NUM_RETAINED: Setting<i64> = Setting::int(
    "execution.checkpointing.num-retained",
    1,
    "1",
    |n| (1..=1_000_000).contains(&n),
    "a positive integer",
    "completed checkpoints kept on disk; older ones are deleted",
);
/// `execution.checkpointing.dir`
pub static DIR: Setting<String> = Setting::local_path(
    "execution.checkpointing.dir",
    "weir-checkpoints",
    "where completed checkpoints are written (weir's default: weir-checkpoints in the working directory)",
);
/// `execution.checkpointing.externalized-checkpoint-retention`
pub static RETENTION: Setting<&'static str> = Setting::choice(
    "execution.checkpointing.externalized-checkpoint-retention",
    &["RETAIN_ON_CANCELLATION", "DELETE_ON_CANCELLATION", "NO_EXTERNALIZED_CHECKPOINTS"],
    "RETAIN_ON_CANCELLATION",
    "whether a cancelled or failed job keeps its checkpoints (weir's default keeps them, for --resume); a finished job keeps its final one",
);

/// What happens to a job's checkpoints when it ends
/// (`execution.checkpointing.externalized-checkpoint-retention`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retention {
    /// Kept when the job is cancelled or fails; deleted when it finishes.
    RetainOnCancellation,
    /// Kept when the job fails; deleted when it finishes or is cancelled.
    DeleteOnCancellation,
    /// Deleted whenever the job ends.
    NoExternalizedCheckpoints,
}

/// How a job takes checkpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointConfig {
    /// `execution.checkpointing.interval`: `None` takes none (a library caller may still
    /// trigger them).
    pub interval: Option<Duration>,
    /// `execution.checkpointing.mode`
    pub mode: CheckpointingMode,
    /// `execution.checkpointing.timeout`
    pub timeout: Duration,
    /// `execution.checkpointing.min-pause`
    pub min_pause: Duration,
    /// `execution.checkpointing.max-concurrent-checkpoints`
    pub max_concurrent: usize,
    /// `execution.checkpointing.num-retained`
    pub num_retained: usize,
    /// Where this job's completed checkpoints are written, as `chk-N` directories; `None`
    /// keeps them in memory only (a library job that sets no directory).
    pub dir: Option<PathBuf>,
    /// `execution.checkpointing.externalized-checkpoint-retention`
    pub retention: Retention,
    /// The checkpoint the job starts from (`execution.state-recovery.path`), if any.
    pub restore: Option<Restore>,
    /// What the job's planner wrote about it (the SQL planner: its stateful operators, for the
    /// state compatibility check), kept in every checkpoint as it is.
    pub plan: Option<Arc<String>>,
}

/// A checkpoint to start a job from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restore {
    /// The checkpoint, read with [`super::storage::read_checkpoint`].
    pub checkpoint: Arc<CompletedCheckpoint>,
    /// `execution.state-recovery.ignore-unclaimed-state`: state of a chain the job no longer
    /// has is dropped instead of failing the job.
    pub ignore_unclaimed_state: bool,
}

impl Default for CheckpointConfig {
    fn default() -> Self {
        CheckpointConfig {
            interval: None,
            mode: CheckpointingMode::ExactlyOnce,
            timeout: Duration::from_secs(600),
            min_pause: Duration::ZERO,
            max_concurrent: 1,
            num_retained: 1,
            dir: None,
            retention: Retention::RetainOnCancellation,
            restore: None,
            plan: None,
        }
    }
}

impl CheckpointConfig {
    /// The settings read here.
    pub const SETTINGS: [&'static Spec; 8] = [
        &INTERVAL.spec,
        &MODE.spec,
        &TIMEOUT.spec,
        &MIN_PAUSE.spec,
        &MAX_CONCURRENT.spec,
        &NUM_RETAINED.spec,
        &DIR.spec,
        &RETENTION.spec,
    ];

    /// This configuration with the checkpointing keys of `settings` that were set.
    pub fn configured(&self, settings: &Settings) -> CheckpointConfig {
        let mut c = self.clone();
        if let Some(interval) = settings.get_set(&INTERVAL) {
            c.interval = (!interval.is_zero()).then_some(interval);
        }
        if let Some(mode) = settings.get_set(&MODE) {
            c.mode =
                if mode == "AT_LEAST_ONCE" { CheckpointingMode::AtLeastOnce } else { CheckpointingMode::ExactlyOnce };
        }
        c.timeout = settings.get_set(&TIMEOUT).unwrap_or(c.timeout);
        c.min_pause = settings.get_set(&MIN_PAUSE).unwrap_or(c.min_pause);
        c.max_concurrent = settings.get_set(&MAX_CONCURRENT).map_or(c.max_concurrent, |n| n as usize);
        c.num_retained = settings.get_set(&NUM_RETAINED).map_or(c.num_retained, |n| n as usize);
        if let Some(dir) = settings.get_set(&DIR) {
            c.dir = Some(PathBuf::from(dir));
        }
        if let Some(retention) = settings.get_set(&RETENTION) {
            c.retention = match retention {
                "DELETE_ON_CANCELLATION" => Retention::DeleteOnCancellation,
                "NO_EXTERNALIZED_CHECKPOINTS" => Retention::NoExternalizedCheckpoints,
                _ => Retention::RetainOnCancellation,
            };
        }
        c
    }

    /// The value of checkpointing key `key`, as `SET;` prints it.
    pub fn value_text(&self, key: &str) -> Option<String> {
        Some(match key {
            "execution.checkpointing.interval" => match self.interval {
                Some(i) => format!("{} ms", i.as_millis()),
                None => "none".to_string(),
            },
            "execution.checkpointing.mode" => self.mode.flink_name().to_string(),
            "execution.checkpointing.timeout" => format!("{} ms", self.timeout.as_millis()),
            "execution.checkpointing.min-pause" => format!("{} ms", self.min_pause.as_millis()),
            "execution.checkpointing.max-concurrent-checkpoints" => self.max_concurrent.to_string(),
            "execution.checkpointing.num-retained" => self.num_retained.to_string(),
            "execution.checkpointing.dir" => match &self.dir {
                Some(dir) => dir.display().to_string(),
                None => DIR.spec.default_text.to_string(),
            },
            "execution.checkpointing.externalized-checkpoint-retention" => match self.retention {
                Retention::RetainOnCancellation => "RETAIN_ON_CANCELLATION",
                Retention::DeleteOnCancellation => "DELETE_ON_CANCELLATION",
                Retention::NoExternalizedCheckpoints => "NO_EXTERNALIZED_CHECKPOINTS",
            }
            .to_string(),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_read_as_flink_writes_them() {
        static TABLE: [&Spec; 8] = CheckpointConfig::SETTINGS;
        let mut settings = Settings::new(&TABLE);
        settings.set("execution.checkpointing.interval", "200 ms").unwrap();
        settings.set("execution.checkpointing.mode", "AT_LEAST_ONCE").unwrap();
        settings.set("execution.checkpointing.num-retained", "3").unwrap();
        let c = CheckpointConfig::default().configured(&settings);
        assert_eq!(c.interval, Some(Duration::from_millis(200)));
        assert_eq!(c.mode, CheckpointingMode::AtLeastOnce);
        assert_eq!(c.num_retained, 3);
        assert_eq!(c.value_text("execution.checkpointing.timeout").as_deref(), Some("600000 ms"));
        let error = settings.set("execution.checkpointing.mode", "SOMETIMES").unwrap_err().to_string();
        assert!(error.contains("EXACTLY_ONCE") && error.contains("AT_LEAST_ONCE"), "{error}");
    }
}
