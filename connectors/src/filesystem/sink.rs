//! Writing files: part files per subtask, hidden while in progress and made visible when
//! they are committed, as Flink's file sink does.
//!
//! Rows go into `.part-<id>-<subtask>-<n>.inprogress`. Without checkpoints that file is renamed
//! to `part-<id>-<subtask>-<n>` when the input ends. With checkpoints, a checkpoint's barrier
//! closes the file (flushed to disk) and keeps it pending in the sink's state, and the next
//! rows go into file `n + 1`; when the checkpoint completes, its pending files are renamed
//! into place. So a reader sees exactly the rows of completed checkpoints. A restored sink
//! commits the pending files of the checkpoint it is restored from (again, harmlessly, when
//! they were committed before) and deletes the in-progress files the failed run wrote after
//! it, whose rows the restored sources send again. At the end of input the last file is
//! committed at once without checkpoints; with them it waits, pending, for the job's final
//! checkpoint (or the next one), so that a job killed while it ends restores to commit it
//! rather than to write its rows twice.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use weir_runtime::checkpoint::codec::DecodeError;
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::operator::owned_parts;
use weir_runtime::{Chunk, Error as RuntimeError, Operator, OperatorContext, Output, Result as RuntimeResult, RowKind};

use crate::error::Error;
use crate::format::Encoder;

/// A closed part file waiting for its checkpoint to complete.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pending {
    checkpoint: u64,
    in_progress: PathBuf,
    finished: PathBuf,
}

/// Appends rows to part files in a directory (see the module docs). Accepts only `+I` rows:
/// the filesystem is append-only.
pub struct FileSink {
    table: String,
    dir: PathBuf,
    encoder: Box<dyn Encoder>,
    /// `part-<id>-<subtask>-`: the start of every part file's name.
    prefix: String,
    /// The number of the part file being written.
    counter: u64,
    file: Option<BufWriter<File>>,
    pending: Vec<Pending>,
    /// The input has ended: every pending file is due at the next completed checkpoint.
    ended: bool,
    text: String,
}

impl std::fmt::Debug for FileSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileSink").field("dir", &self.dir).field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

/// The sections of a file sink's state.
const PENDING: &str = "pending";
const WRITING: &str = "writing";

impl FileSink {
    /// The sink of subtask `subtask` of the table `table`, writing into `dir`.
    pub fn new(table: String, dir: PathBuf, encoder: Box<dyn Encoder>, id: &str, subtask: usize) -> Self {
        FileSink {
            table,
            dir,
            encoder,
            prefix: format!("part-{id}-{subtask}-"),
            counter: 0,
            file: None,
            pending: Vec::new(),
            ended: false,
            text: String::new(),
        }
    }

    fn in_progress(&self, n: u64) -> PathBuf {
        self.dir.join(format!(".{}{n}.inprogress", self.prefix))
    }

    fn finished(&self, n: u64) -> PathBuf {
        self.dir.join(format!("{}{n}", self.prefix))
    }

    fn io(path: &Path, source: std::io::Error) -> RuntimeError {
        Error::Io { path: path.display().to_string(), source }.into()
    }

    fn writer(&mut self) -> RuntimeResult<&mut BufWriter<File>> {
        if self.file.is_none() {
            if self.dir.is_file() {
                return Err(RuntimeError::execution(format!(
                    "The path '{}' of the filesystem sink of table '{}' is a file; it must be a directory.",
                    self.dir.display(),
                    self.table
                )));
            }
            std::fs::create_dir_all(&self.dir).map_err(|e| Self::io(&self.dir, e))?;
            let path = self.in_progress(self.counter);
            let file = File::create(&path).map_err(|e| Self::io(&path, e))?;
            self.file = Some(BufWriter::with_capacity(1 << 16, file));
        }
        Ok(self.file.as_mut().unwrap_or_else(|| unreachable!("the file was just opened")))
    }

    /// Closes the file being written (flushed and synced) and keeps it pending for
    /// `checkpoint`; the next rows go into the next file.
    fn roll(&mut self, checkpoint: u64) -> RuntimeResult<()> {
        let Some(file) = self.file.take() else { return Ok(()) };
        let in_progress = self.in_progress(self.counter);
        let file = file.into_inner().map_err(|e| Self::io(&in_progress, e.into_error()))?;
        file.sync_all().map_err(|e| Self::io(&in_progress, e))?;
        self.pending.push(Pending { checkpoint, in_progress, finished: self.finished(self.counter) });
        self.counter += 1;
        Ok(())
    }

    /// Makes the pending files of checkpoints up to `checkpoint` visible.
    fn commit(&mut self, checkpoint: u64) -> RuntimeResult<()> {
        let (due, later): (Vec<Pending>, Vec<Pending>) =
            std::mem::take(&mut self.pending).into_iter().partition(|p| p.checkpoint <= checkpoint);
        self.pending = later;
        due.iter().try_for_each(commit_file)
    }
}

/// Renames a pending file into place; one already renamed (a commit repeated after a restore)
/// is left as it is.
fn commit_file(p: &Pending) -> RuntimeResult<()> {
    match std::fs::rename(&p.in_progress, &p.finished) {
        Ok(()) => Ok(()),
        Err(_) if p.finished.exists() && !p.in_progress.exists() => Ok(()),
        Err(e) => Err(FileSink::io(&p.finished, e)),
    }
}

impl Operator for FileSink {
    fn name(&self) -> &str {
        "Sink: Filesystem"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> RuntimeResult<()> {
        self.text.clear();
        if let Some(kind) = chunk.kinds().iter().find(|k| **k != RowKind::Insert) {
            return Err(RuntimeError::execution(format!(
                "The filesystem sink of table '{}' is append-only: it cannot write a '{kind}' row.",
                self.table
            )));
        }
        self.encoder.encode_chunk(&chunk, &mut self.text);
        let text = std::mem::take(&mut self.text);
        let result = self.writer()?.write_all(text.as_bytes());
        self.text = text;
        result.map_err(|e| Self::io(&self.in_progress(self.counter), e))
    }

    fn process_watermark(
        &mut self,
        _watermark: i64,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> RuntimeResult<()> {
        Ok(())
    }

    /// The file written so far becomes pending for this checkpoint; the state holds every
    /// pending file and which in-progress files come after them.
    fn snapshot_state(
        &mut self,
        checkpoint: u64,
        _: &mut OperatorContext,
        state: &mut StateWriter,
    ) -> RuntimeResult<()> {
        self.roll(checkpoint)?;
        let out = state.section(PENDING);
        out.u32(self.pending.len() as u32);
        for p in &self.pending {
            out.u64(p.checkpoint);
            out.str(&p.in_progress.to_string_lossy());
            out.str(&p.finished.to_string_lossy());
        }
        let writing = state.section(WRITING);
        writing.str(&self.dir.to_string_lossy());
        writing.str(&self.prefix);
        writing.u64(self.counter);
        Ok(())
    }

    /// What it has still to commit outlives its input.
    fn keeps_state_after_end(&self) -> bool {
        true
    }

    fn notify_checkpoint_complete(
        &mut self,
        checkpoint: u64,
        _: &mut OperatorContext,
        _: &mut Output,
    ) -> RuntimeResult<()> {
        self.commit(if self.ended { u64::MAX } else { checkpoint })
    }

    /// Commits the pending files of the old subtasks this one takes over and deletes their
    /// in-progress files written after the checkpoint.
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> RuntimeResult<()> {
        let malformed = |e: DecodeError| {
            RuntimeError::Restore(format!("the state of the filesystem sink of '{}' is malformed: {e}", self.table))
        };
        for state in owned_parts(states, ctx.subtask()) {
            if let Some(mut input) = state.section(PENDING) {
                for _ in 0..input.u32().map_err(malformed)? {
                    let checkpoint = input.u64().map_err(malformed)?;
                    let in_progress = PathBuf::from(input.str().map_err(malformed)?);
                    let finished = PathBuf::from(input.str().map_err(malformed)?);
                    commit_file(&Pending { checkpoint, in_progress, finished })?;
                }
            }
            if let Some(mut input) = state.section(WRITING) {
                let dir = PathBuf::from(input.str().map_err(malformed)?);
                let prefix = format!(".{}", input.str().map_err(malformed)?);
                let from = input.u64().map_err(malformed)?;
                discard_in_progress(&dir, &prefix, from);
            }
        }
        Ok(())
    }

    fn end_of_input(&mut self, ctx: &mut OperatorContext, _out: &mut Output) -> RuntimeResult<()> {
        self.roll(u64::MAX)?;
        self.ended = true;
        if ctx.checkpointing() {
            Ok(())
        } else {
            self.commit(u64::MAX)
        }
    }
}

/// Deletes the in-progress files `<prefix><n>.inprogress` with `n >= from` in `dir`: rows a
/// failed run wrote after its last checkpoint.
fn discard_in_progress(dir: &Path, prefix: &str, from: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let number = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|n| n.strip_suffix(".inprogress"))
            .and_then(|n| n.parse::<u64>().ok());
        if number.is_some_and(|n| n >= from) {
            if let Err(error) = std::fs::remove_file(entry.path()) {
                tracing::warn!(path = %entry.path().display(), %error, "cannot delete a file a failed run was writing");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::csv::{CsvFormat, CsvOptions};
    use crate::format::Format;
    use weir_runtime::harness::OperatorHarness;

    fn sink(dir: &Path, id: &str) -> OperatorHarness {
        let schema = weir_runtime::parse::parse_schema(&[("id", "BIGINT")]).unwrap();
        let format = CsvFormat::new(&schema, CsvOptions::default()).unwrap();
        OperatorHarness::new(FileSink::new("t".into(), dir.to_path_buf(), format.encoder(), id, 0))
    }

    fn rows(h: &mut OperatorHarness, from: i64, to: i64) {
        let fixture: String =
            std::iter::once("op | id BIGINT\n".to_string()).chain((from..to).map(|i| format!("+I | {i}\n"))).collect();
        h.push(&fixture).unwrap();
    }

    /// The visible files and their rows, and the hidden ones.
    fn files(dir: &Path) -> (Vec<(String, String)>, Vec<String>) {
        let mut visible = Vec::new();
        let mut hidden = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            if name.starts_with('.') {
                hidden.push(name);
            } else {
                visible.push((name, std::fs::read_to_string(entry.path()).unwrap()));
            }
        }
        visible.sort();
        hidden.sort();
        (visible, hidden)
    }

    #[test]
    fn rows_become_visible_when_their_checkpoint_completes() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = sink(dir.path(), "a");
        rows(&mut h, 0, 3);
        h.snapshot(1).unwrap();
        rows(&mut h, 3, 5);
        assert!(files(dir.path()).0.is_empty(), "nothing is visible before the checkpoint completes");
        h.notify_checkpoint_complete(1).unwrap();
        let (visible, hidden) = files(dir.path());
        assert_eq!(visible, vec![("part-a-0-0".to_string(), "0\n1\n2\n".to_string())]);
        assert_eq!(hidden, vec![".part-a-0-1.inprogress".to_string()]);
        h.end_input().unwrap();
        assert_eq!(files(dir.path()).0[1], ("part-a-0-1".to_string(), "3\n4\n".to_string()));
    }

    /// A run that fails after checkpoint 2 (its commit not done, rows written after it):
    /// the restored sink commits what checkpoint 2 holds and drops what came after.
    #[test]
    fn a_restored_sink_commits_its_checkpoint_and_drops_what_came_after() {
        let dir = tempfile::tempdir().unwrap();
        let mut failed = sink(dir.path(), "a");
        rows(&mut failed, 0, 2);
        failed.snapshot(1).unwrap();
        failed.notify_checkpoint_complete(1).unwrap();
        rows(&mut failed, 2, 4);
        let state = failed.snapshot(2).unwrap();
        rows(&mut failed, 4, 9);
        drop(failed);
        let mut restored = sink(dir.path(), "b");
        restored.restore(vec![state.clone()]).unwrap();
        let (visible, hidden) = files(dir.path());
        assert_eq!(
            visible,
            vec![("part-a-0-0".to_string(), "0\n1\n".to_string()), ("part-a-0-1".to_string(), "2\n3\n".to_string())]
        );
        assert!(hidden.is_empty(), "{hidden:?}");
        // Restoring the same checkpoint again (a second failure) changes nothing.
        sink(dir.path(), "c").restore(vec![state]).unwrap();
        assert_eq!(files(dir.path()).0, visible);
        rows(&mut restored, 4, 6);
        restored.end_input().unwrap();
        assert_eq!(files(dir.path()).0[2], ("part-b-0-0".to_string(), "4\n5\n".to_string()));
    }

    /// In a job that checkpoints, the last file waits for the final checkpoint; a sink killed
    /// before it commits the file when restored from the final state.
    #[test]
    fn with_checkpoints_the_last_file_waits_for_the_final_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let schema = weir_runtime::parse::parse_schema(&[("id", "BIGINT")]).unwrap();
        let format = CsvFormat::new(&schema, CsvOptions::default()).unwrap();
        let build = |id: &str| {
            let sink = FileSink::new("t".into(), dir.path().to_path_buf(), format.encoder(), id, 0);
            OperatorHarness::checkpointing(Box::new(sink), 0, 1)
        };
        let mut h = build("a");
        rows(&mut h, 0, 3);
        h.end_input().unwrap();
        assert!(files(dir.path()).0.is_empty(), "nothing is visible before the final checkpoint");
        let final_state = h.snapshot(0).unwrap();
        drop(h);
        build("b").restore(vec![final_state]).unwrap();
        assert_eq!(files(dir.path()).0, vec![("part-a-0-0".to_string(), "0\n1\n2\n".to_string())]);

        let mut h = build("c");
        rows(&mut h, 3, 5);
        h.end_input().unwrap();
        h.notify_checkpoint_complete(4).unwrap();
        assert_eq!(files(dir.path()).0[1], ("part-c-0-0".to_string(), "3\n4\n".to_string()));
    }
}
