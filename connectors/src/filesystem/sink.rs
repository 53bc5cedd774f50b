//! Writing files: part files per subtask, hidden while in progress and made visible when
//! they are committed, as Flink's file sink does.
//!
//! Rows go into `.part-<id>-<subtask>-<n>.inprogress` (in the directory of their partition,
//! `k1=v1/k2=v2/`, for a partitioned table: see [`super::partition`]). A file is closed when
//! the rolling policy says so ([`super::commit`]: size, age, inactivity) or a checkpoint's
//! barrier arrives; the next rows go into file `n + 1`. A closed file is pending until a
//! checkpoint holding it completes, then renamed to `part-<id>-<subtask>-<n>`; so a reader sees
//! exactly the rows of completed checkpoints. Without checkpoints a closed file is renamed at
//! once, and the last ones when the input ends. A restored sink commits the pending files of the
//! checkpoint it is restored from (again, harmlessly, when they were committed before) and
//! deletes the in-progress files the failed run wrote after it, whose rows the restored sources
//! send again. At the end of input the open files are closed and, with checkpoints, wait for
//! the job's final checkpoint (or the next one), so that a job killed while it ends restores to
//! commit them rather than to write their rows twice.
//!
//! Each completed checkpoint (and the end of input) is reported to the sink's
//! [`PartitionCommitter`] with the partitions written before it, which commits partitions.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use weir_runtime::checkpoint::codec::DecodeError;
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::operator::owned_parts;
use weir_runtime::{
    Chunk, Error as RuntimeError, Operator, OperatorContext, Output, Result as RuntimeResult, RowKind, TimeDomain,
    Timer, Value,
};

use super::commit::{PartitionCommitter, RollingPolicy};
use super::partition::Partitioning;
use crate::error::Error;
use crate::format::parquet::{ParquetFormat, ParquetWriter};
use crate::format::Encoder;

/// How a sink turns rows into part files.
pub enum PartFormat {
    /// Records of a row format, appended to the file as text.
    Records(Box<dyn Encoder>),
    /// Parquet files, each written whole and readable once closed.
    Parquet(Arc<ParquetFormat>),
}

impl From<Box<dyn Encoder>> for PartFormat {
    fn from(encoder: Box<dyn Encoder>) -> Self {
        PartFormat::Records(encoder)
    }
}

/// What a part file being written is written through.
enum PartWriter {
    Records(BufWriter<File>),
    Parquet(Box<ParquetWriter>),
}

/// A closed part file waiting for a checkpoint to complete: the next checkpoint's until one
/// takes it (`checkpoint` `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pending {
    checkpoint: Option<u64>,
    in_progress: PathBuf,
    finished: PathBuf,
}

/// A part file being written.
struct OpenFile {
    writer: PartWriter,
    /// Its number (`part-…-<n>`).
    number: u64,
    bytes: u64,
    /// Processing time it was opened and last written to.
    opened: i64,
    written: i64,
}

/// The partitions a sink writes and the committer it reports them to.
pub(crate) struct PartitionSink {
    partitioning: Partitioning,
    /// Shared by the sink's subtasks; `None` without a commit policy.
    committer: Option<Arc<Mutex<PartitionCommitter>>>,
}

impl PartitionSink {
    pub(crate) fn new(partitioning: Partitioning, committer: Option<Arc<Mutex<PartitionCommitter>>>) -> Self {
        PartitionSink { partitioning, committer }
    }
}

/// The partitions a subtask wrote, by when, until the committer has been told.
#[derive(Debug, Default)]
struct WrittenPartitions {
    /// Since the last checkpoint.
    current: BTreeSet<String>,
    /// Before each checkpoint not yet complete.
    by_checkpoint: BTreeMap<u64, BTreeSet<String>>,
    /// Reported to the committer and maybe not committed yet (kept in checkpoints, reported
    /// again after a restore).
    reported: BTreeSet<String>,
}

/// Appends rows to part files in a directory, one file per partition being written (see the
/// module docs). Accepts only `+I` rows: the filesystem is append-only.
pub struct FileSink {
    table: String,
    dir: PathBuf,
    format: PartFormat,
    /// `part-<id>-<subtask>-`: the start of every part file's name.
    prefix: String,
    /// The number of the next part file.
    counter: u64,
    /// The open files, by partition directory (`""` without partitions).
    open: BTreeMap<String, OpenFile>,
    pending: Vec<Pending>,
    rolling: RollingPolicy,
    partitions: Option<PartitionSink>,
    written: WrittenPartitions,
    /// The watermark at each checkpoint not yet complete.
    watermarks: BTreeMap<u64, i64>,
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
const PARTITIONS: &str = "partitions";

impl FileSink {
    /// The sink of subtask `subtask` of the table `table`, writing into `dir` in `format` with
    /// Flink's default rolling policy and no partitions.
    pub fn new(table: String, dir: PathBuf, format: impl Into<PartFormat>, id: &str, subtask: usize) -> Self {
        FileSink {
            table,
            dir,
            format: format.into(),
            prefix: format!("part-{id}-{subtask}-"),
            counter: 0,
            open: BTreeMap::new(),
            pending: Vec::new(),
            rolling: RollingPolicy::default(),
            partitions: None,
            written: WrittenPartitions::default(),
            watermarks: BTreeMap::new(),
            ended: false,
            text: String::new(),
        }
    }

    /// The sink closing its files by `rolling`.
    pub(crate) fn with_rolling(mut self, rolling: RollingPolicy) -> Self {
        self.rolling = rolling;
        self
    }

    /// The sink writing each row into the directory of its partition (the encoder then
    /// encodes the other columns only).
    pub(crate) fn with_partitions(mut self, partitions: PartitionSink) -> Self {
        self.partitions = Some(partitions);
        self
    }

    fn file_name(&self, partition: &str, n: u64, in_progress: bool) -> PathBuf {
        let name = if in_progress { format!(".{}{n}.inprogress", self.prefix) } else { format!("{}{n}", self.prefix) };
        if partition.is_empty() {
            self.dir.join(name)
        } else {
            self.dir.join(partition).join(name)
        }
    }

    fn io(path: &Path, source: std::io::Error) -> RuntimeError {
        Error::Io { path: path.display().to_string(), source }.into()
    }

    /// The open file of `partition`, opened now if there is none, after closing the one there
    /// was when it holds more than the rolling policy's size.
    fn file(&mut self, partition: &str, ctx: &OperatorContext) -> RuntimeResult<&mut OpenFile> {
        let now = ctx.processing_time();
        if self.open.get(partition).is_some_and(|f| f.bytes > self.rolling.file_size) {
            self.roll(partition, ctx)?;
        }
        if !self.open.contains_key(partition) {
            if self.dir.is_file() {
                return Err(RuntimeError::execution(format!(
                    "The path '{}' of the filesystem sink of table '{}' is a file; it must be a directory.",
                    self.dir.display(),
                    self.table
                )));
            }
            let path = self.file_name(partition, self.counter, true);
            let parent = path.parent().unwrap_or(&self.dir).to_path_buf();
            std::fs::create_dir_all(&parent).map_err(|e| Self::io(&parent, e))?;
            let file = File::create(&path).map_err(|e| Self::io(&path, e))?;
            let writer = match &self.format {
                PartFormat::Records(_) => PartWriter::Records(BufWriter::with_capacity(1 << 16, file)),
                PartFormat::Parquet(format) => PartWriter::Parquet(Box::new(format.writer(file, &path)?)),
            };
            self.open.insert(
                partition.to_string(),
                OpenFile { writer, number: self.counter, bytes: 0, opened: now, written: now },
            );
            self.counter += 1;
            if self.partitions.is_some() {
                self.written.current.insert(partition.to_string());
            }
        }
        let file = self.open.get_mut(partition).unwrap_or_else(|| unreachable!("the file was just opened"));
        file.written = now;
        Ok(file)
    }

    /// Writes the rows of `rows` (the columns the files hold) to the file of `partition`: as
    /// records of the row format, or into the Parquet file's row group.
    fn write(&mut self, partition: &str, rows: &Chunk, ctx: &OperatorContext) -> RuntimeResult<()> {
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        if let PartFormat::Records(encoder) = &mut self.format {
            encoder.encode_chunk(rows, &mut text);
        }
        let file = self.file(partition, ctx)?;
        let written = match &mut file.writer {
            PartWriter::Records(writer) => {
                file.bytes += text.len() as u64;
                writer.write_all(text.as_bytes()).map_err(|e| (file.number, e))
            }
            PartWriter::Parquet(writer) => {
                writer.write(rows)?;
                file.bytes = writer.bytes();
                Ok(())
            }
        };
        self.text = text;
        written.map_err(|(number, e)| Self::io(&self.file_name(partition, number, true), e))
    }

    /// Closes the file of `partition` (flushed and synced): pending for the next checkpoint,
    /// or committed at once in a job without checkpoints.
    fn roll(&mut self, partition: &str, ctx: &OperatorContext) -> RuntimeResult<()> {
        self.close(partition)?;
        if !ctx.checkpointing() && !self.ended {
            self.commit(None)?;
        }
        Ok(())
    }

    fn close(&mut self, partition: &str) -> RuntimeResult<()> {
        let Some(file) = self.open.remove(partition) else { return Ok(()) };
        let in_progress = self.file_name(partition, file.number, true);
        let handle = match file.writer {
            PartWriter::Records(writer) => writer.into_inner().map_err(|e| Self::io(&in_progress, e.into_error()))?,
            PartWriter::Parquet(writer) => writer.finish()?,
        };
        handle.sync_all().map_err(|e| Self::io(&in_progress, e))?;
        let finished = self.file_name(partition, file.number, false);
        self.pending.push(Pending { checkpoint: None, in_progress, finished });
        Ok(())
    }

    fn close_all(&mut self) -> RuntimeResult<()> {
        let partitions: Vec<String> = self.open.keys().cloned().collect();
        partitions.iter().try_for_each(|p| self.close(p))
    }

    /// Makes visible the pending files of checkpoints up to `upto` (`None`: every one).
    fn commit(&mut self, upto: Option<u64>) -> RuntimeResult<()> {
        let due = |p: &Pending| upto.is_none_or(|c| p.checkpoint.is_some_and(|k| k <= c));
        let (due, later): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut self.pending).into_iter().partition(due);
        self.pending = later;
        due.iter().try_for_each(commit_file)
    }

    /// Tells the committer that this subtask's files up to `checkpoint` are visible, with the
    /// partitions written before it.
    fn report(&mut self, checkpoint: u64, ctx: &OperatorContext) -> RuntimeResult<()> {
        let Some(committer) = self.partitions.as_ref().and_then(|p| p.committer.clone()) else { return Ok(()) };
        let mut partitions = BTreeSet::new();
        let later = self.written.by_checkpoint.split_off(&checkpoint.saturating_add(1));
        for (_, written) in std::mem::replace(&mut self.written.by_checkpoint, later) {
            partitions.extend(written);
        }
        if self.ended && checkpoint == u64::MAX {
            partitions.append(&mut self.written.current);
        }
        let later = self.watermarks.split_off(&checkpoint.saturating_add(1));
        let watermark = std::mem::replace(&mut self.watermarks, later).into_values().last();
        let watermark = if self.ended { i64::MAX } else { watermark.unwrap_or(ctx.current_watermark()) };
        self.written.reported.extend(partitions.iter().cloned());
        let now = ctx.processing_time();
        let subtask = ctx.subtask().index;
        let mut committer = committer.lock();
        committer.report(subtask, checkpoint, watermark, self.ended, partitions, now)?;
        self.written.reported.retain(|p| committer.is_pending(p));
        Ok(())
    }

    /// Groups the rows of `chunk` by partition: each partition's directory and the positions of
    /// its rows, in order of first appearance.
    fn split_by_partition(partitioning: &Partitioning, chunk: &Chunk) -> Vec<(String, Vec<u32>)> {
        let keys = chunk.project(&partitioning.key_columns());
        let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
        let mut by_directory: HashMap<String, usize> = HashMap::new();
        let mut last: Option<(&[Value], usize)> = None;
        for (i, (_, values)) in keys.rows().enumerate() {
            let group = match last {
                Some((previous, group)) if previous == values => group,
                _ => {
                    let dir = partitioning.directory(values);
                    *by_directory.entry(dir.clone()).or_insert_with(|| {
                        groups.push((dir, Vec::new()));
                        groups.len() - 1
                    })
                }
            };
            groups[group].1.push(i as u32);
            last = Some((values, group));
        }
        groups
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

    /// Starts checking the rolling policy's time limits.
    fn open(&mut self, ctx: &mut OperatorContext) -> RuntimeResult<()> {
        let next = ctx.processing_time().saturating_add(self.rolling.check_ms);
        ctx.register_processing_time_timer(next, Vec::new());
        Ok(())
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> RuntimeResult<()> {
        if let Some(kind) = chunk.kinds().iter().find(|k| **k != RowKind::Insert) {
            return Err(RuntimeError::execution(format!(
                "The filesystem sink of table '{}' is append-only: it cannot write a '{kind}' row.",
                self.table
            )));
        }
        let Some(partitions) = &self.partitions else { return self.write("", &chunk, ctx) };
        let data = partitions.partitioning.data_columns().to_vec();
        Self::split_by_partition(&partitions.partitioning, &chunk).into_iter().try_for_each(|(dir, rows)| {
            let rows =
                if rows.len() == chunk.len() { chunk.project(&data) } else { chunk.selected(&rows).project(&data) };
            self.write(&dir, &rows, ctx)
        })
    }

    fn process_watermark(
        &mut self,
        _watermark: i64,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> RuntimeResult<()> {
        Ok(())
    }

    /// Closes the files open too long or unwritten too long, and checks again later.
    fn on_timer(&mut self, timer: Timer, ctx: &mut OperatorContext, _out: &mut Output) -> RuntimeResult<()> {
        if timer.domain != TimeDomain::ProcessingTime || self.ended {
            return Ok(());
        }
        let now = ctx.processing_time();
        let RollingPolicy { rollover_ms, inactivity_ms, check_ms, .. } = self.rolling;
        let due: Vec<String> = self
            .open
            .iter()
            .filter(|(_, f)| now - f.opened >= rollover_ms || now - f.written >= inactivity_ms)
            .map(|(p, _)| p.clone())
            .collect();
        for partition in due {
            self.roll(&partition, ctx)?;
        }
        ctx.register_processing_time_timer(now.saturating_add(check_ms), Vec::new());
        Ok(())
    }

    /// Every open file is closed and pending for this checkpoint; the state holds every
    /// pending file, which in-progress files come after them, and the partitions the
    /// committer has still to hear of or commit.
    fn snapshot_state(
        &mut self,
        checkpoint: u64,
        ctx: &mut OperatorContext,
        state: &mut StateWriter,
    ) -> RuntimeResult<()> {
        self.close_all()?;
        for p in self.pending.iter_mut().filter(|p| p.checkpoint.is_none()) {
            p.checkpoint = Some(checkpoint);
        }
        if self.partitions.is_some() {
            let current = std::mem::take(&mut self.written.current);
            self.written.by_checkpoint.entry(checkpoint).or_default().extend(current);
            self.watermarks.insert(checkpoint, ctx.current_watermark());
        }
        let out = state.section(PENDING);
        out.u32(self.pending.len() as u32);
        for p in &self.pending {
            out.u64(p.checkpoint.unwrap_or(checkpoint));
            out.str(&p.in_progress.to_string_lossy());
            out.str(&p.finished.to_string_lossy());
        }
        let writing = state.section(WRITING);
        writing.str(&self.dir.to_string_lossy());
        writing.str(&self.prefix);
        writing.u64(self.counter);
        if self.partitions.is_some() {
            let w = &self.written;
            let all: BTreeSet<&String> = w.reported.iter().chain(w.by_checkpoint.values().flatten()).collect();
            let out = state.section(PARTITIONS);
            out.u32(all.len() as u32);
            for partition in all {
                out.str(partition);
            }
        }
        Ok(())
    }

    /// What it has still to commit outlives its input.
    fn keeps_state_after_end(&self) -> bool {
        true
    }

    fn notify_checkpoint_complete(
        &mut self,
        checkpoint: u64,
        ctx: &mut OperatorContext,
        _: &mut Output,
    ) -> RuntimeResult<()> {
        self.commit(if self.ended { None } else { Some(checkpoint) })?;
        self.report(checkpoint, ctx)
    }

    /// Commits the pending files of the old subtasks this one takes over, deletes their
    /// in-progress files written after the checkpoint, and reports their partitions again.
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> RuntimeResult<()> {
        let malformed = |e: DecodeError| {
            RuntimeError::Restore(format!("the state of the filesystem sink of '{}' is malformed: {e}", self.table))
        };
        for state in owned_parts(states, ctx.subtask()) {
            if let Some(mut input) = state.section(PENDING) {
                for _ in 0..input.u32().map_err(malformed)? {
                    let checkpoint = Some(input.u64().map_err(malformed)?);
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
            if let Some(mut input) = state.section(PARTITIONS) {
                for _ in 0..input.u32().map_err(malformed)? {
                    self.written.current.insert(input.str().map_err(malformed)?.to_string());
                }
            }
        }
        Ok(())
    }

    fn end_of_input(&mut self, ctx: &mut OperatorContext, _out: &mut Output) -> RuntimeResult<()> {
        self.close_all()?;
        self.ended = true;
        if ctx.checkpointing() {
            Ok(())
        } else {
            self.commit(None)?;
            self.report(u64::MAX, ctx)
        }
    }
}

/// Deletes the in-progress files `<prefix><n>.inprogress` with `n >= from` in `dir` and the
/// partition directories below it: rows a failed run wrote after its last checkpoint.
fn discard_in_progress(dir: &Path, prefix: &str, from: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() && name.to_str().is_some_and(|n| n.contains('=')) {
            discard_in_progress(&path, prefix, from);
            continue;
        }
        let number = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|n| n.strip_suffix(".inprogress"))
            .and_then(|n| n.parse::<u64>().ok());
        if number.is_some_and(|n| n >= from) {
            if let Err(error) = std::fs::remove_file(&path) {
                tracing::warn!(path = %path.display(), %error, "cannot delete a file a failed run was writing");
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

    /// A partitioned sink killed after checkpoint 1 with rows written after it in two
    /// partitions: the restored sink commits checkpoint 1's files, drops the later ones in every
    /// partition directory, and reports the partitions again (their success files appear).
    #[test]
    fn a_restored_partitioned_sink_commits_its_checkpoint_in_every_partition() {
        use crate::api::TableDescriptor;
        use crate::filesystem::commit::{CommitPolicy, PartitionCommitter};
        use crate::options::TableOptions;
        let dir = tempfile::tempdir().unwrap();
        let schema = weir_runtime::parse::parse_schema(&[("id", "BIGINT"), ("p", "STRING")]).unwrap();
        let mut table = TableDescriptor::new("t", schema.clone(), &[]);
        table.partition_keys = vec!["p".into()];
        let policy = [("sink.partition-commit.policy.kind".to_string(), "success-file".to_string())];
        let mut options = TableOptions::new(policy.into_iter().collect());
        let partitioning = Partitioning::of(&table, &mut options).unwrap().unwrap();
        let policy = CommitPolicy::read(&mut options, true).unwrap().unwrap();
        let format = CsvFormat::new(&partitioning.data_schema(&schema), CsvOptions::default()).unwrap();
        let build = |id: &str| {
            let committer = PartitionCommitter::new(policy.clone(), dir.path().to_path_buf(), &partitioning, 1);
            let partitions = PartitionSink::new(partitioning.clone(), Some(Arc::new(Mutex::new(committer))));
            let sink = FileSink::new("t".into(), dir.path().to_path_buf(), format.encoder(), id, 0)
                .with_partitions(partitions);
            OperatorHarness::checkpointing(Box::new(sink), 0, 1)
        };
        let mut failed = build("a");
        failed.push("op | id BIGINT | p STRING\n+I | 1 | x\n+I | 2 | y/z\n").unwrap();
        let state = failed.snapshot(1).unwrap();
        failed.push("op | id BIGINT | p STRING\n+I | 3 | x\n+I | 4 | y/z\n").unwrap();
        drop(failed);
        let (x, yz) = (dir.path().join("p=x"), dir.path().join("p=y%2Fz"));
        assert_eq!(files(&x).1.len(), 2, "checkpoint 1's file and the one after it, both hidden");
        let mut restored = build("b");
        restored.restore(vec![state]).unwrap();
        assert_eq!(files(&x), (vec![("part-a-0-0".to_string(), "1\n".to_string())], vec![]));
        assert_eq!(files(&yz), (vec![("part-a-0-1".to_string(), "2\n".to_string())], vec![]));
        assert!(!x.join("_SUCCESS").exists(), "not committed before the restored job reports");
        restored.end_input().unwrap();
        restored.snapshot(2).unwrap();
        restored.notify_checkpoint_complete(2).unwrap();
        assert!(x.join("_SUCCESS").exists() && yz.join("_SUCCESS").exists());
    }
}
