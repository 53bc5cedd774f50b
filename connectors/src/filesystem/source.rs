//! Reading files: one subtask reads its files whole, in path order. A checkpoint holds the
//! files a subtask has still to read, the first from the byte where its next record starts.
//!
//! A subtask restored with what several subtasks of the checkpointed job had still to read (a
//! restore to fewer subtasks) reads those parts side by side, a chunk of each in turn, as
//! splits ([`Source::splits`]): a watermark assigner chained after it keeps one watermark per
//! split, so that the rows of one are not late for the progress of another, as they were not
//! when each had a subtask of its own. Its checkpoints keep the parts apart.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use weir_runtime::checkpoint::codec::DecodeError;
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::columnar::{array_from_values, arrow_type, ArrayRef, ColumnsBuilder};
use weir_runtime::operator::owned_parts;
use weir_runtime::{
    Chunk, Error as RuntimeError, OperatorContext, Output, Result as RuntimeResult, RowKind, Source, SourceStatus,
    Splits, SubtaskInfo, Value,
};

use crate::api::PartitionFilter;
use crate::error::{Error, Result};
use crate::format::parquet::ParquetReader;
use crate::format::{Decoder, Lines};

use super::partition::Partitioning;
use super::FileFormat;

/// The file being read.
struct OpenFile {
    path: PathBuf,
    display: String,
    reading: Reading,
    /// Where it started reading: a byte of a file of records, a row of a Parquet file.
    start: u64,
    /// Its size in bytes.
    size: u64,
    /// The values of the table's partition columns its directories name.
    partition: Vec<Value>,
}

/// How a file is read.
enum Reading {
    /// Record by record, from its lines.
    Records { lines: Lines, decoder: Box<dyn Decoder> },
    /// A batch of rows at a time, by columns.
    Parquet(ParquetReader),
}

impl OpenFile {
    /// Where its next record starts: a byte offset and the line before it, for a file of
    /// records; the number of rows read (and line 0), for a Parquet file.
    fn resume_point(&self) -> (u64, usize) {
        match &self.reading {
            Reading::Records { lines, .. } => (lines.offset(), lines.number()),
            Reading::Parquet(reader) => (reader.rows_read(), 0),
        }
    }

    /// Bytes of it read since it was opened (for a Parquet file, its share of the rows read).
    fn bytes_read(&self) -> u64 {
        match &self.reading {
            Reading::Records { lines, .. } => lines.offset().saturating_sub(self.start),
            Reading::Parquet(reader) => {
                let read = reader.rows_read().saturating_sub(self.start) as f64;
                let total = reader.rows_total().max(1) as f64;
                (self.size as f64 * read / total) as u64
            }
        }
    }
}

/// A file still to read: from byte `offset`, which follows line `line` (for a Parquet file:
/// from row `offset`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pending {
    path: PathBuf,
    offset: u64,
    line: usize,
}

/// Files read one after another, in order: a subtask's share of the path, or what one subtask
/// of a checkpointed job had still to read.
#[derive(Default)]
struct Reader {
    files: VecDeque<Pending>,
    current: Option<OpenFile>,
}

impl Reader {
    /// Whether a record may be left to read.
    fn is_open(&self) -> bool {
        self.current.is_some() || !self.files.is_empty()
    }

    /// The files still to read, the one being read first from where its next record starts.
    fn pending(&self) -> impl Iterator<Item = Pending> + '_ {
        let current = self.current.as_ref().map(|f| {
            let (offset, line) = f.resume_point();
            Pending { path: f.path.clone(), offset, line }
        });
        current.into_iter().chain(self.files.iter().cloned())
    }
}

/// Reads the files of a path with a format; subtask i of p reads files i, i + p, ….
pub struct FileSource {
    name: String,
    path: PathBuf,
    format: FileFormat,
    subtask: usize,
    parallelism: usize,
    /// One reader, or one per part a restore handed over (the splits, read in turn).
    readers: Vec<Reader>,
    /// The reader the last poll read from.
    turn: usize,
    /// The parts a restore handed over, each a list of files; `None` lists the path's files at
    /// `open`.
    restored: Option<Vec<VecDeque<Pending>>>,
    /// The columns of the chunk being read, in the table's Arrow types.
    columns: ColumnsBuilder,
    /// The kind of each row of the chunk being read (a changelog format's records are changes).
    kinds: Vec<RowKind>,
    /// Bytes of the files this subtask reads, from where it started in each (set at `open`).
    bytes_total: u64,
    /// Bytes of the files read to their end.
    bytes_done: u64,
    /// The table's partition columns, read from the directories rather than the files.
    partitions: Option<PartitionColumns>,
    /// The partitions the query's filter can keep rows of; the others' files are not read.
    pruning: Option<PartitionFilter>,
}

/// The partition columns of the chunk being read: which they are and, in runs, their values.
struct PartitionColumns {
    partitioning: Partitioning,
    /// The types of all the table's columns.
    types: Vec<weir_runtime::DataType>,
    /// Runs of rows with one partition's values, in order.
    runs: Vec<(usize, Vec<Value>)>,
}

impl PartitionColumns {
    /// Counts `rows` more rows of the partition `values`.
    fn extend(&mut self, rows: usize, values: &[Value]) {
        match self.runs.last_mut() {
            Some((n, last)) if last == values => *n += rows,
            _ if rows == 0 => {}
            _ => self.runs.push((rows, values.to_vec())),
        }
    }

    /// The table's columns from the files' `data` columns and the runs, in schema order.
    fn assemble(&mut self, data: Vec<ArrayRef>) -> std::result::Result<Vec<ArrayRef>, String> {
        let runs = std::mem::take(&mut self.runs);
        let mut columns: Vec<Option<ArrayRef>> = vec![None; self.types.len()];
        for (&position, array) in self.partitioning.data_columns().iter().zip(data) {
            columns[position] = Some(array);
        }
        for (k, position) in self.partitioning.key_columns().into_iter().enumerate() {
            let values: Vec<&Value> = runs.iter().flat_map(|(n, v)| std::iter::repeat_n(&v[k], *n)).collect();
            let array = array_from_values(&arrow_type(&self.types[position]), &values).map_err(|e| e.to_string())?;
            columns[position] = Some(array);
        }
        columns.into_iter().map(|c| c.ok_or_else(|| "a column of the table is missing".to_string())).collect()
    }
}

impl std::fmt::Debug for FileSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileSource").field("path", &self.path).field("subtask", &self.subtask).finish_non_exhaustive()
    }
}

impl FileSource {
    /// The source of subtask `info` of the table `name` with columns of `types`, reading `path`
    /// with `format`.
    pub fn new(
        name: String,
        path: PathBuf,
        format: FileFormat,
        types: &[weir_runtime::DataType],
        info: &SubtaskInfo,
    ) -> Self {
        FileSource {
            name,
            path,
            format,
            subtask: info.index,
            parallelism: info.parallelism.max(1),
            readers: Vec::new(),
            turn: 0,
            restored: None,
            columns: ColumnsBuilder::for_types(types),
            kinds: Vec::new(),
            bytes_total: 0,
            bytes_done: 0,
            partitions: None,
            pruning: None,
        }
    }

    /// The source of a partitioned table with columns of `types`: the format reads the columns
    /// other than `partitioning`'s, whose values come from each file's directories.
    pub(crate) fn with_partitions(mut self, partitioning: Partitioning, types: &[weir_runtime::DataType]) -> Self {
        let types = types.to_vec();
        let data: Vec<weir_runtime::DataType> = partitioning.data_columns().iter().map(|&i| types[i].clone()).collect();
        self.columns = ColumnsBuilder::for_types(&data);
        self.partitions = Some(PartitionColumns { partitioning, types, runs: Vec::new() });
        self
    }

    /// The source reading only the partitions `pruning` keeps (of a partitioned table).
    pub(crate) fn pruned(mut self, pruning: Option<PartitionFilter>) -> Self {
        self.pruning = pruning;
        self
    }

    /// Whether the file at `path` is in a partition the query's filter can keep rows of (a file
    /// whose directories do not name its partition is read, and fails as it does unpruned).
    fn in_kept_partition(&self, path: &Path) -> bool {
        let (Some(partitions), Some(pruning)) = (&self.partitions, &self.pruning) else { return true };
        let relative = path.strip_prefix(&self.path).unwrap_or(path);
        partitions.partitioning.values_of(relative).map_or(true, |values| (pruning.0)(&values))
    }

    /// This subtask's share of the path's files (those of the partitions the query can keep
    /// rows of): every `parallelism`-th from its index.
    fn assigned_files(&self) -> Result<VecDeque<Pending>> {
        let files = list_files(&self.path)?;
        Ok(files
            .into_iter()
            .filter(|path| self.in_kept_partition(path))
            .skip(self.subtask)
            .step_by(self.parallelism)
            .map(|path| Pending { path, offset: 0, line: 0 })
            .collect())
    }

    /// Opens reader `k`'s next file; `false` when it has none.
    fn open_next(&mut self, k: usize, batch: usize) -> Result<bool> {
        let Some(Pending { path, offset, line }) = self.readers[k].files.pop_front() else { return Ok(false) };
        let display = path.display().to_string();
        let io = |source| Error::Io { path: display.clone(), source };
        let reading = match &self.format {
            FileFormat::Records(format) => {
                let mut file = File::open(&path).map_err(io)?;
                if offset > 0 {
                    file.seek(SeekFrom::Start(offset)).map_err(io)?;
                }
                let lines = Lines::resumed(Box::new(BufReader::with_capacity(1 << 16, file)), offset, line);
                Reading::Records { lines, decoder: format.decoder() }
            }
            FileFormat::Parquet(format) => Reading::Parquet(format.reader(&path, offset, batch)?),
        };
        let size = std::fs::metadata(&path).map_or(0, |m| m.len());
        let partition = match &self.partitions {
            Some(p) => p.partitioning.values_of(path.strip_prefix(&self.path).unwrap_or(&path))?,
            None => Vec::new(),
        };
        self.readers[k].current = Some(OpenFile { path, display, reading, start: offset, size, partition });
        Ok(true)
    }

    /// Reads the next batch of rows of reader `k`'s Parquet files, whole, as one chunk; `None`
    /// once every file of the reader is read.
    fn next_batch(&mut self, k: usize, rows: usize) -> Result<Option<(usize, Vec<ArrayRef>)>> {
        loop {
            let Some(file) = self.readers[k].current.as_mut() else {
                if self.open_next(k, rows)? {
                    continue;
                }
                return Ok(None);
            };
            let Reading::Parquet(reader) = &mut file.reading else {
                unreachable!("only a Parquet table's source reads batches")
            };
            match reader.next_batch()? {
                Some((n, arrays)) => {
                    if let Some(partitions) = &mut self.partitions {
                        partitions.extend(n, &file.partition);
                    }
                    return Ok(Some((n, arrays)));
                }
                None => {
                    self.bytes_done += file.bytes_read();
                    self.readers[k].current = None;
                }
            }
        }
    }

    /// Reads records of reader `k` into the columns until they hold `rows`; `false` once every
    /// file of the reader is read.
    fn fill(&mut self, k: usize, rows: usize) -> Result<bool> {
        while self.columns.rows() < rows {
            let Some(file) = self.readers[k].current.as_mut() else {
                if self.open_next(k, rows)? {
                    continue;
                }
                return Ok(false);
            };
            let Reading::Records { lines, decoder } = &mut file.reading else {
                unreachable!("a Parquet table's source reads batches")
            };
            let before = self.columns.rows();
            let decoded = decoder.decode_changes(lines, &mut self.columns, &mut self.kinds);
            if let Some(partitions) = &mut self.partitions {
                partitions.extend(self.columns.rows() - before, &file.partition);
            }
            match decoded {
                Ok(true) => {}
                Ok(false) => {
                    self.bytes_done += file.bytes_read();
                    self.readers[k].current = None;
                }
                Err(e) => return Err(e.in_file(&file.display)),
            }
        }
        Ok(true)
    }
}

/// The section of a filesystem source's state: the files it has still to read.
const FILES: &str = "files";

/// Every file below `path` whose name does not start with `.` or `_`, sorted; `path` itself
/// when it is a file.
pub(crate) fn list_files(path: &Path) -> Result<Vec<PathBuf>> {
    let io = |source| Error::Io { path: path.display().to_string(), source };
    let metadata = std::fs::metadata(path).map_err(io)?;
    if metadata.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let mut dirs = vec![path.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).map_err(|source| Error::Io { path: dir.display().to_string(), source })? {
            let entry = entry.map_err(|source| Error::Io { path: dir.display().to_string(), source })?;
            let name = entry.file_name();
            if name.to_string_lossy().starts_with(['.', '_']) {
                continue;
            }
            let p = entry.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    Ok(files)
}

impl Source for FileSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn open(&mut self, _ctx: &mut OperatorContext) -> RuntimeResult<()> {
        let parts = match self.restored.take() {
            Some(restored) => restored,
            None => vec![self.assigned_files()?],
        };
        self.readers = parts.into_iter().map(|files| Reader { files, current: None }).collect();
        // What there is to read, for the progress of the job (a file gone since is read as empty).
        let size = |p: &Pending| std::fs::metadata(&p.path).map_or(0, |m| m.len()).saturating_sub(p.offset);
        self.bytes_total = self.readers.iter().flat_map(|r| &r.files).map(size).sum();
        Ok(())
    }

    fn progress(&self) -> Option<weir_runtime::SourceProgress> {
        let reading: u64 = self.readers.iter().filter_map(|r| r.current.as_ref()).map(OpenFile::bytes_read).sum();
        Some(weir_runtime::SourceProgress { bytes_read: self.bytes_done + reading, bytes_total: self.bytes_total })
    }

    /// No file to read (restored with none left, or given none of the path's files).
    fn emits_nothing(&self) -> bool {
        match &self.restored {
            Some(restored) => restored.iter().all(VecDeque::is_empty),
            // A path that cannot be listed fails at `open`, saying why.
            None => self.assigned_files().is_ok_and(|files| files.is_empty()),
        }
    }

    /// The files still to read: each one's path, the byte its next record starts at and the
    /// line before it (for error messages). Taken between polls, so no record is half read.
    /// Each reader's files are a section of their own (`files`, then `files.1`, …), so that a
    /// restore reads them side by side again.
    fn snapshot_state(&mut self, _: u64, _: &mut OperatorContext, state: &mut StateWriter) -> RuntimeResult<()> {
        let open: Vec<&Reader> = self.readers.iter().filter(|r| r.is_open()).collect();
        for k in 0..open.len().max(1) {
            let pending: Vec<Pending> = open.get(k).map(|r| r.pending().collect()).unwrap_or_default();
            let out = state.section(&part_section(k));
            out.u32(pending.len() as u32);
            for p in pending {
                out.str(&p.path.to_string_lossy());
                out.u64(p.offset);
                out.u64(p.line as u64);
            }
        }
        Ok(())
    }

    /// Reads on the files of the old subtasks this one takes over ([`owned_parts`]).
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> RuntimeResult<()> {
        let malformed = |e: DecodeError| {
            RuntimeError::Restore(format!("the state of filesystem source '{}' is malformed: {e}", self.name))
        };
        let mut parts = Vec::new();
        for state in owned_parts(states, ctx.subtask()) {
            for k in 0.. {
                let Some(mut input) = state.section(&part_section(k)) else { break };
                let mut files = VecDeque::new();
                for _ in 0..input.u32().map_err(malformed)? {
                    let path = PathBuf::from(input.str().map_err(malformed)?);
                    let offset = input.u64().map_err(malformed)?;
                    let line = input.u64().map_err(malformed)? as usize;
                    files.push_back(Pending { path, offset, line });
                }
                if !files.is_empty() {
                    parts.push(files);
                }
            }
        }
        self.restored = Some(parts);
        Ok(())
    }

    /// Reads a chunk of the next open reader after the last one read (one reader: always it).
    fn poll_next(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> RuntimeResult<SourceStatus> {
        let n = self.readers.len();
        let Some(k) = (1..=n).map(|i| (self.turn + i) % n).find(|&k| self.readers[k].is_open()) else {
            return Ok(SourceStatus::Finished);
        };
        self.turn = k;
        let mut arrays = match &self.format {
            FileFormat::Records(_) => {
                self.fill(k, ctx.chunk_size())?;
                self.columns.finish().map_err(|e| RuntimeError::execution(format!("{}: {e}", self.name)))?
            }
            FileFormat::Parquet(_) => match self.next_batch(k, ctx.chunk_size())? {
                Some((rows, arrays)) => {
                    self.kinds.resize(rows, RowKind::Insert);
                    arrays
                }
                None => self.columns.finish().map_err(|e| RuntimeError::execution(format!("{}: {e}", self.name)))?,
            },
        };
        if let Some(partitions) = &mut self.partitions {
            arrays = partitions.assemble(arrays).map_err(|e| RuntimeError::execution(format!("{}: {e}", self.name)))?;
        }
        out.collect(Chunk::from_arrays(std::mem::take(&mut self.kinds), arrays));
        let more = self.readers.iter().any(Reader::is_open);
        Ok(if more { SourceStatus::Ready } else { SourceStatus::Finished })
    }

    fn splits(&self) -> Option<Splits> {
        (self.readers.len() > 1)
            .then(|| Splits { current: self.turn, open: self.readers.iter().map(Reader::is_open).collect() })
    }
}

/// The state section of the `k`-th reader's files.
fn part_section(k: usize) -> String {
    match k {
        0 => FILES.to_string(),
        k => format!("{FILES}.{k}"),
    }
}
