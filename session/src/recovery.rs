//! Where each job of a session keeps its checkpoints and which checkpoint it starts from.
//!
//! A job that checkpoints (`execution.checkpointing.interval` set) writes them under
//! `execution.checkpointing.dir` (weir's default: `weir-checkpoints` in the working directory),
//! in a directory named after the job — `pipeline.name` when set, else Flink's default job name
//! (`insert-into_default_catalog.default_database.t`, the sinks joined by `,`) — and in it a
//! directory of the run's own, named after its job id (as Flink writes `<dir>/<job id>/chk-N`):
//! two runs of one name never share checkpoints, and a fresh run numbers its checkpoints from 1
//! (a restored one from the restored checkpoint's id on). A job
//! starts from `execution.state-recovery.path` (Flink 2's key; `execution.savepoint.path`, the
//! older one, is read too) when set; in a session that resumes (`weir run --resume`), from the
//! newest checkpoint of the run of its name that checkpointed last, if there is one. A newest checkpoint that does not read
//! stops the job from starting, naming the file: an older one is taken only when named.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use weir_runtime::checkpoint::options::DIR;
use weir_runtime::checkpoint::storage::{directory_name, latest_checkpoint_of_runs, read_checkpoint};
use weir_runtime::checkpoint::Restore;
use weir_runtime::jobs::JobId;
use weir_runtime::settings::Setting;
use weir_runtime::RuntimeConfig;

use super::Session;
use weir_planner::catalog::Catalog;
use weir_planner::error::Result;

/// `pipeline.name`
pub static PIPELINE_NAME: Setting<String> = Setting::text(
    "pipeline.name",
    "",
    "the job's name: its checkpoints go into a directory of this name (unset: Flink's default job name)",
)
.shown_as("none");
/// `execution.state-recovery.path`
pub static RECOVERY_PATH: Setting<String> = Setting::local_path(
    "execution.state-recovery.path",
    "",
    "the checkpoint (a chk-N directory, its _metadata, or a job's checkpoint directory for its newest) \
     the next jobs start from",
)
.shown_as("none");
/// `execution.savepoint.path`: the key before Flink 2, read when the newer one is unset.
pub static SAVEPOINT_PATH: Setting<String> =
    Setting::local_path("execution.savepoint.path", "", "Flink 1's name of execution.state-recovery.path")
        .shown_as("none");
/// `execution.checkpointing.savepoint-dir`
pub static SAVEPOINT_DIR: Setting<String> = Setting::local_path(
    "execution.checkpointing.savepoint-dir",
    "",
    "where STOP JOB … WITH SAVEPOINT writes a job's savepoint, and where weir run's jobs that checkpoint take one when it is stopped (Ctrl-C, SIGTERM)",
)
.shown_as("none");
/// `execution.state-recovery.ignore-unclaimed-state`
pub static IGNORE_UNCLAIMED: Setting<bool> = Setting::boolean(
    "execution.state-recovery.ignore-unclaimed-state",
    false,
    "a restore drops the state of operators the new job does not have instead of failing",
);

/// Where a job takes its savepoint when it is stopped.
#[derive(Debug, Clone)]
pub struct SavepointTarget {
    /// `execution.checkpointing.savepoint-dir`
    pub dir: PathBuf,
    /// The job's name, as its directory is named.
    pub name: String,
    /// How long the savepoint may take (`execution.checkpointing.timeout`).
    pub timeout: std::time::Duration,
}

/// Stops `job`, with a savepoint into `target` when there is one; the line to print about it.
pub(super) fn stop(job: &weir_runtime::job::JobCanceller, target: Option<&SavepointTarget>) -> Option<String> {
    let Some(target) = target else {
        job.cancel();
        return None;
    };
    match job.stop_with_savepoint(&target.dir, &target.name, target.timeout) {
        Ok(Some(path)) => Some(format!("Savepoint completed. Path: {}", path.display())),
        Ok(None) => None,
        // Stopped all the same: a refused savepoint leaves nothing running.
        Err(e) => {
            job.cancel();
            Some(e.to_string())
        }
    }
}

impl Session {
    /// Makes every job that checkpoints start from the newest complete checkpoint in its
    /// directory (`weir run --resume`); one without a checkpoint there starts afresh.
    pub fn resume_from_checkpoints(&mut self, resume: bool) {
        self.resume = resume;
    }

    /// Flink's default name of the job writing into `tables`.
    pub(super) fn job_name(&self, tables: &[&str]) -> String {
        let name = self.settings.get(&PIPELINE_NAME);
        if !name.is_empty() {
            return name;
        }
        let sinks: Vec<String> = tables.iter().map(|t| Catalog::qualified(t)).collect();
        format!("insert-into_{}", sinks.join(","))
    }

    /// Where job `name`, started with `runtime`, takes its savepoint when stopped: only a job
    /// that checkpoints periodically (never one in batch mode), whose sinks commit on
    /// checkpoints, has one.
    pub(super) fn savepoint_target(&self, name: &str, runtime: &RuntimeConfig) -> Option<SavepointTarget> {
        let dir = self.settings.get(&SAVEPOINT_DIR);
        if dir.is_empty() || runtime.checkpointing.interval.is_none() {
            return None;
        }
        let timeout = runtime.checkpointing.timeout;
        Some(SavepointTarget { dir: PathBuf::from(dir), name: directory_name(name), timeout })
    }

    /// The runtime configuration of job `name`: its checkpoint directory and the checkpoint
    /// it starts from.
    ///
    /// # Errors
    /// A checkpoint to start from that cannot be read, saying why.
    pub(super) fn job_runtime(&self, name: &str, batch: bool) -> Result<RuntimeConfig> {
        let mut runtime = self.runtime.clone();
        // As in Flink, a job in batch mode takes no checkpoints.
        if batch {
            runtime.checkpointing.interval = None;
        }
        let id = JobId::random();
        let checkpointing = &mut runtime.checkpointing;
        let runs = checkpointing.interval.is_some().then(|| {
            let base = checkpointing.dir.clone().unwrap_or_else(|| PathBuf::from(DIR.spec.default_text));
            base.join(directory_name(name))
        });
        let named = [&RECOVERY_PATH, &SAVEPOINT_PATH].into_iter().map(|s| self.settings.get(s)).find(|p| !p.is_empty());
        let from = match (&named, &runs) {
            (Some(path), _) => Some(checkpoint_path(Path::new(path))?),
            (None, Some(runs)) if self.resume => latest_checkpoint_of_runs(runs)
                .map_err(|e| weir_runtime::Error::Restore(format!("job '{name}' does not resume: {e}")))?,
            _ => None,
        };
        // A resumed job tidies the runs of its name no live job holds: the state files of
        // checkpoints a killed run never completed, the directories of runs killed before their
        // first checkpoint.
        if let (true, Some(runs)) = (self.resume, &runs) {
            let removed = weir_runtime::checkpoint::storage::tidy_runs(runs);
            tracing::debug!(job = name, removed, "tidied the runs of the job's earlier runs");
        }
        // This run's checkpoints go into a directory of its own, named after its id.
        let dir = runs.map(|runs| runs.join(id.as_str()));
        runtime.job_id = Some(id);
        let checkpointing = &mut runtime.checkpointing;
        if let Some(path) = from {
            let checkpoint = read_checkpoint(&path).map_err(|e| {
                weir_runtime::Error::Restore(format!("job '{name}' does not start from '{}': {e}", path.display()))
            })?;
            tracing::info!(job = name, checkpoint = checkpoint.id, path = %path.display(), "restoring");
            let ignore_unclaimed_state = self.settings.get(&IGNORE_UNCLAIMED);
            checkpointing.restore = Some(Restore { checkpoint: Arc::new(checkpoint), ignore_unclaimed_state });
        }
        checkpointing.dir = dir;
        Ok(runtime)
    }
}

/// The checkpoint `path` names: a `chk-N` directory or its `_metadata` as they are, a run's
/// directory of checkpoints its newest complete one, a job's directory (of runs) the newest of
/// the run that wrote last.
fn checkpoint_path(path: &Path) -> Result<PathBuf> {
    let is_checkpoint = path.is_file() || path.join(weir_runtime::checkpoint::storage::METADATA).exists();
    if is_checkpoint || !path.is_dir() {
        return Ok(path.to_path_buf());
    }
    let latest = latest_checkpoint_of_runs(path).map_err(|e| weir_runtime::Error::Restore(e.to_string()))?;
    latest.ok_or_else(|| {
        weir_runtime::Error::Restore(format!(
            "'{}' holds no complete checkpoint (a chk-N directory with a _metadata file)",
            path.display()
        ))
        .into()
    })
}
