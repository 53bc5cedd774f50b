//! The runs an incremental checkpoint of the on-disk backend names: a state's `name@runs`
//! section holds the number of key groups its keys are laid out by, the directory the runs
//! are shared in, and the manifest ([`weir_statestore::Manifest`]). The checkpoint storage reads
//! them to delete runs no kept checkpoint names and to copy them into a savepoint.
//!
//! On disk a section names its directory relative to the checkpoint's own (`../shared` beside
//! a `chk-N`, `shared` inside a savepoint), as Flink's relative paths do, so that a checkpoint
//! copied or moved with its runs reads its own files; in memory the path is absolute again.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

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

/// The bytes section `name` of a state is stored as in a checkpoint written into directory
/// `dir` (absolute): a runs section names its directory relative to `dir`. `None` for any
/// other section, and for a runs section no relative path reaches (it stays as it is).
pub(crate) fn stored_relative(name: &str, bytes: &[u8], dir: &Path) -> Option<Vec<u8>> {
    if !name.ends_with(RUNS_SECTION) {
        return None;
    }
    let mut section = RunsSection::decode(&mut Decoder::new(bytes)).ok()?;
    section.shared = relative_path(&section.shared, dir)?;
    let mut out = Encoder::new();
    section.encode(&mut out);
    Some(out.into_bytes())
}

/// `state` as read from a checkpoint in directory `dir` (absolute): each runs section names its
/// directory as an absolute path again. A section that names an absolute path (as checkpoints
/// written before relative paths did) keeps it.
pub(crate) fn resolve_runs(state: StateReader, dir: &Path) -> StateReader {
    let mut resolved = state.clone();
    for (name, mut section) in runs_sections(&state) {
        if section.shared.is_absolute() {
            continue;
        }
        section.shared = resolve(dir, &section.shared);
        let mut out = Encoder::new();
        section.encode(&mut out);
        resolved = resolved.with_section(&name, out.into_bytes());
    }
    resolved
}

/// `path` relative to `base` (both absolute): `..` for each component of `base` past their
/// common start, then the rest of `path`. `None` when they share no more than the root, or when
/// a component of `base` past it is not a plain name (`..` could not be undone by name).
fn relative_path(path: &Path, base: &Path) -> Option<PathBuf> {
    if !path.is_absolute() || !base.is_absolute() {
        return None;
    }
    let (path, base): (Vec<Component>, Vec<Component>) = (path.components().collect(), base.components().collect());
    let common = path.iter().zip(&base).take_while(|(a, b)| a == b).count();
    let only_root = path[..common].iter().all(|c| matches!(c, Component::RootDir | Component::Prefix(_)));
    if only_root || !base[common..].iter().all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    let mut relative: PathBuf = base[common..].iter().map(|_| Component::ParentDir).collect();
    relative.extend(&path[common..]);
    Some(relative)
}

/// `relative` taken from directory `base`: each `..` leaves the last component, each name is
/// added, so that a directory reached by two relative paths has one name.
fn resolve(base: &Path, relative: &Path) -> PathBuf {
    let mut resolved = base.to_path_buf();
    for component in relative.components() {
        match component {
            Component::ParentDir => {
                resolved.pop();
            }
            Component::CurDir => {}
            Component::Normal(name) => resolved.push(name),
            Component::RootDir | Component::Prefix(_) => resolved = PathBuf::from(component.as_os_str()),
        }
    }
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::storage::{read_checkpoint, write_checkpoint, write_savepoint};
    use crate::checkpoint::{OperatorState, SubtaskState};

    /// A checkpoint of one state whose runs section names `shared` and holds one run file.
    fn checkpoint_with_runs(shared: &Path) -> CompletedCheckpoint {
        std::fs::create_dir_all(shared).unwrap();
        std::fs::write(shared.join("run-1"), b"run").unwrap();
        let run = weir_statestore::RunRef {
            name: "run-1".into(),
            first_key: vec![1],
            last_key: vec![2],
            entries: 1,
            bytes: 3,
            kind: weir_statestore::RunKind::Base,
            merged: Default::default(),
        };
        let mut state = StateWriter::new();
        let section =
            RunsSection { max_parallelism: 128, shared: shared.to_path_buf(), manifest: Manifest { runs: vec![run] } };
        section.write("counts", &mut state);
        CompletedCheckpoint {
            id: 3,
            timestamp: 0,
            subtasks: vec![SubtaskState {
                vertex: "v".into(),
                subtask: 0,
                parallelism: 1,
                operators: vec![OperatorState { id: "op".into(), state: state.into_reader() }],
            }],
            plan: None,
        }
    }

    fn shared_of(checkpoint: &CompletedCheckpoint) -> PathBuf {
        RunsSection::read_all("counts", &[checkpoint.subtasks[0].operators[0].state.clone()]).unwrap()[0].shared.clone()
    }

    /// A checkpoint names its runs relative to itself: moved with its runs, it reads the moved
    /// files, and its metadata holds no absolute path. The path in memory is absolute and has
    /// one spelling, so that retiring runs compares it with the job's directory.
    #[test]
    fn a_moved_checkpoint_names_its_own_runs() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("job/run-a");
        let checkpoint = checkpoint_with_runs(&run.join("shared"));
        let chk = write_checkpoint(&run, &checkpoint).unwrap();
        let metadata = std::fs::read(chk.join("_metadata")).unwrap();
        let absolute = dir.path().display().to_string();
        assert!(!metadata.windows(absolute.len()).any(|w| w == absolute.as_bytes()), "an absolute path is stored");
        assert_eq!(shared_of(&read_checkpoint(&chk).unwrap()), run.join("shared"));

        let moved = dir.path().join("elsewhere");
        std::fs::rename(&run, &moved).unwrap();
        let read = read_checkpoint(&moved.join("chk-3")).unwrap();
        assert_eq!(shared_of(&read), moved.join("shared"));
        assert_eq!(run_files(&[read]), HashSet::from([moved.join("shared/run-1")]));
    }

    /// A savepoint names the runs it owns (`shared` inside it) relative to itself too.
    #[test]
    fn a_copied_savepoint_names_its_own_runs() {
        let dir = tempfile::tempdir().unwrap();
        let checkpoint = checkpoint_with_runs(&dir.path().join("run/shared"));
        let savepoint = write_savepoint(&dir.path().join("savepoints"), "job", &checkpoint).unwrap();
        let copy = dir.path().join("copy");
        std::fs::create_dir_all(copy.join("shared")).unwrap();
        std::fs::copy(savepoint.join("_metadata"), copy.join("_metadata")).unwrap();
        std::fs::copy(savepoint.join("shared/run-1"), copy.join("shared/run-1")).unwrap();
        assert_eq!(shared_of(&read_checkpoint(&copy).unwrap()), copy.join("shared"));
        assert_eq!(shared_of(&read_checkpoint(&savepoint.join("_metadata")).unwrap()), savepoint.join("shared"));
    }

    #[test]
    fn relative_paths_go_up_by_name_only() {
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(relative_path(&p("/a/b/shared"), &p("/a/b/chk-1")), Some(p("../shared")));
        assert_eq!(relative_path(&p("/a/b/sp/shared"), &p("/a/b/sp")), Some(p("shared")));
        assert_eq!(relative_path(&p("/x/shared"), &p("/y/chk-1")), None, "only the root in common");
        assert_eq!(relative_path(&p("/a/shared"), &p("/a/../b/chk")), None);
        assert_eq!(resolve(&p("/a/b/chk-1"), &p("../shared")), p("/a/b/shared"));
    }
}
