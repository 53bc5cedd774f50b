//! The runs an incremental checkpoint of the on-disk backend names: a state's `name@runs`
//! section holds the number of key groups its keys are laid out by, the directory the runs
//! are shared in, and the manifest ([`weir_statestore::Manifest`]). The checkpoint storage reads
//! them to delete runs no kept checkpoint names and to copy them into a savepoint.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use weir_statestore::Manifest;

use crate::checkpoint::codec::{DecodeError, Decoder, Encoder};
use crate::checkpoint::{CompletedCheckpoint, StateReader, StateWriter};

/// The suffix of the section holding an incremental checkpoint's manifest.
pub(crate) const RUNS_SECTION: &str = "@runs";

/// One state's section naming its checkpointed runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunsSection {
    /// Key groups of the job that wrote it.
    pub(crate) max_parallelism: usize,
    /// Where the runs are.
    pub(crate) shared: PathBuf,
    /// Which runs.
    pub(crate) manifest: Manifest,
}

impl RunsSection {
    /// Writes the section.
    pub(crate) fn encode(&self, out: &mut Encoder) {
        out.u32(self.max_parallelism as u32);
        out.str(&self.shared.display().to_string());
        out.bytes(&self.manifest.encode());
    }

    /// Reads what [`RunsSection::encode`] wrote.
    pub(crate) fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let max_parallelism = input.u32()? as usize;
        let shared = PathBuf::from(input.str()?);
        let bytes = input.bytes()?;
        let manifest = Manifest::decode(bytes).or_else(|e| input.fail(&format!("a manifest ({e})")))?;
        Ok(RunsSection { max_parallelism, shared, manifest })
    }
}

impl RunsSection {
    /// Writes this section as the runs of state `name` in `state`.
    pub(crate) fn write(&self, name: &str, state: &mut StateWriter) {
        self.encode(state.section(&format!("{name}{RUNS_SECTION}")));
    }

    /// The runs sections of state `name` in every old subtask's state.
    pub(crate) fn read_all(name: &str, states: &[StateReader]) -> Result<Vec<RunsSection>, DecodeError> {
        let section = format!("{name}{RUNS_SECTION}");
        states
            .iter()
            .filter_map(|state| state.section(&section))
            .map(|mut input| RunsSection::decode(&mut input))
            .collect()
    }

    /// Whether `runs` can become a store as they are at `max_parallelism` key groups: their keys
    /// are laid out by as many key groups and they share one directory.
    pub(crate) fn same_layout(runs: &[RunsSection], max_parallelism: usize) -> bool {
        runs.iter().all(|r| r.max_parallelism == max_parallelism && runs.first().is_some_and(|f| r.shared == f.shared))
    }
}

/// The runs sections of `state`, by section name (those that do not decode are left out: a
/// restore reports them).
fn runs_sections(state: &StateReader) -> Vec<(String, RunsSection)> {
    state
        .section_names()
        .filter(|name| name.ends_with(RUNS_SECTION))
        .filter_map(|name| {
            let section = RunsSection::decode(&mut state.section(name)?).ok()?;
            Some((name.to_string(), section))
        })
        .collect()
}

/// Whether any state of `checkpoint` names checkpointed runs.
pub fn names_runs(checkpoint: &CompletedCheckpoint) -> bool {
    checkpoint
        .subtasks
        .iter()
        .flat_map(|s| &s.operators)
        .any(|o| o.state.section_names().any(|n| n.ends_with(RUNS_SECTION)))
}

/// The manifests `checkpoints` hold, by the directory their runs are in.
fn manifests_by_dir(checkpoints: &[CompletedCheckpoint]) -> HashMap<PathBuf, Vec<Manifest>> {
    let mut by_dir: HashMap<PathBuf, Vec<Manifest>> = HashMap::new();
    for checkpoint in checkpoints {
        for operator in checkpoint.subtasks.iter().flat_map(|s| &s.operators) {
            for (_, section) in runs_sections(&operator.state) {
                by_dir.entry(section.shared).or_default().push(section.manifest);
            }
        }
    }
    by_dir
}

/// The files of the runs `checkpoints` name.
pub fn run_files(checkpoints: &[CompletedCheckpoint]) -> HashSet<PathBuf> {
    run_sizes(checkpoints).into_keys().collect()
}

/// The runs `checkpoints` name, by file, with their sizes in bytes.
pub fn run_sizes(checkpoints: &[CompletedCheckpoint]) -> HashMap<PathBuf, u64> {
    manifests_by_dir(checkpoints)
        .into_iter()
        .flat_map(|(dir, manifests)| {
            manifests.into_iter().flat_map(|m| m.runs).map(move |run| (dir.join(run.name), run.bytes))
        })
        .collect()
}

/// Deletes the runs in `shared` that no checkpoint of `kept` names: the files only retired
/// checkpoints used. Returns how many were deleted.
pub fn retire_runs(shared: &Path, kept: &[CompletedCheckpoint]) -> usize {
    let manifests = manifests_by_dir(kept).remove(shared).unwrap_or_default();
    match weir_statestore::remove_unreferenced(shared, &manifests) {
        Ok(removed) => {
            if removed > 0 {
                tracing::debug!(dir = %shared.display(), removed, "retired state runs deleted");
            }
            removed
        }
        Err(error) => {
            tracing::warn!(dir = %shared.display(), %error, "cannot delete retired state runs");
            0
        }
    }
}

/// `state` with the runs its sections name linked (or copied) into `shared` and its sections
/// naming that directory: a savepoint owns its files, whatever happens to the checkpoints.
///
/// # Errors
/// A run cannot be linked or copied.
pub fn relocate_runs(state: &StateReader, shared: &Path) -> std::io::Result<StateReader> {
    let mut relocated = state.clone();
    for (name, mut section) in runs_sections(state) {
        std::fs::create_dir_all(shared)?;
        for run in &section.manifest.runs {
            let (from, to) = (section.shared.join(&run.name), shared.join(&run.name));
            if !to.exists() && std::fs::hard_link(&from, &to).is_err() {
                std::fs::copy(&from, &to)?;
            }
        }
        section.shared = shared.to_path_buf();
        let mut out = Encoder::new();
        section.encode(&mut out);
        relocated = relocated.with_section(&name, out.into_bytes());
    }
    Ok(relocated)
}
