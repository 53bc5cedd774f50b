//! Reading files: one subtask reads its files whole, in path order. A checkpoint holds the
//! files a subtask has still to read, the first from the byte where its next record starts.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use weir_runtime::checkpoint::codec::DecodeError;
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::columnar::ColumnsBuilder;
use weir_runtime::operator::owned_parts;
use weir_runtime::{
    Chunk, Error as RuntimeError, OperatorContext, Output, Result as RuntimeResult, RowKind, Source, SourceStatus,
    SubtaskInfo,
};

use crate::error::{Error, Result};
use crate::format::{Decoder, Format, Lines};

/// The file being read.
struct OpenFile {
    path: PathBuf,
    display: String,
    lines: Lines,
    decoder: Box<dyn Decoder>,
}

/// A file still to read: from byte `offset`, which follows line `line`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pending {
    path: PathBuf,
    offset: u64,
    line: usize,
}

/// Reads the files of a path with a format; subtask i of p reads files i, i + p, ….
pub struct FileSource {
    name: String,
    path: PathBuf,
    format: Arc<dyn Format>,
    subtask: usize,
    parallelism: usize,
    files: VecDeque<Pending>,
    current: Option<OpenFile>,
    /// The files a restore handed over; `None` lists the path's files at `open`.
    restored: Option<VecDeque<Pending>>,
    /// The columns of the chunk being read, in the table's Arrow types.
    columns: ColumnsBuilder,
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
        format: Arc<dyn Format>,
        types: &[weir_runtime::DataType],
        info: &SubtaskInfo,
    ) -> Self {
        FileSource {
            name,
            path,
            format,
            subtask: info.index,
            parallelism: info.parallelism.max(1),
            files: VecDeque::new(),
            current: None,
            restored: None,
            columns: ColumnsBuilder::for_types(types),
        }
    }

    /// This subtask's share of the path's files: every `parallelism`-th from its index.
    fn assigned_files(&self) -> Result<VecDeque<Pending>> {
        let files = list_files(&self.path)?;
        Ok(files
            .into_iter()
            .skip(self.subtask)
            .step_by(self.parallelism)
            .map(|path| Pending { path, offset: 0, line: 0 })
            .collect())
    }

    fn open_next(&mut self) -> Result<bool> {
        let Some(Pending { path, offset, line }) = self.files.pop_front() else { return Ok(false) };
        let display = path.display().to_string();
        let io = |source| Error::Io { path: display.clone(), source };
        let mut file = File::open(&path).map_err(io)?;
        if offset > 0 {
            file.seek(SeekFrom::Start(offset)).map_err(io)?;
        }
        let lines = Lines::resumed(Box::new(BufReader::with_capacity(1 << 16, file)), offset, line);
        self.current = Some(OpenFile { path, display, lines, decoder: self.format.decoder() });
        Ok(true)
    }

    /// The files still to read, the one being read first from where its next record starts.
    fn pending(&self) -> impl Iterator<Item = Pending> + '_ {
        let current = self.current.as_ref().map(|f| Pending {
            path: f.path.clone(),
            offset: f.lines.offset(),
            line: f.lines.number(),
        });
        current.into_iter().chain(self.files.iter().cloned())
    }

    /// Reads records into the columns until they hold `rows`; `false` once every file is read.
    fn fill(&mut self, rows: usize) -> Result<bool> {
        while self.columns.rows() < rows {
            let Some(file) = self.current.as_mut() else {
                if self.open_next()? {
                    continue;
                }
                return Ok(false);
            };
            match file.decoder.decode(&mut file.lines, &mut self.columns) {
                Ok(true) => {}
                Ok(false) => self.current = None,
                Err(e) => {
                    return Err(Error::Parse {
                        file: file.display.clone(),
                        line: e.line,
                        column: e.column,
                        field: e.field,
                        reason: e.reason,
                    })
                }
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
        if let Some(restored) = self.restored.take() {
            self.files = restored;
            return Ok(());
        }
        self.files = self.assigned_files()?;
        Ok(())
    }

    /// No file to read (restored with none left, or given none of the path's files).
    fn emits_nothing(&self) -> bool {
        match &self.restored {
            Some(restored) => restored.is_empty(),
            // A path that cannot be listed fails at `open`, saying why.
            None => self.assigned_files().is_ok_and(|files| files.is_empty()),
        }
    }

    /// The files still to read: each one's path, the byte its next record starts at and the
    /// line before it (for error messages). Taken between polls, so no record is half read.
    fn snapshot_state(&mut self, _: u64, _: &mut OperatorContext, state: &mut StateWriter) -> RuntimeResult<()> {
        let pending: Vec<Pending> = self.pending().collect();
        let out = state.section(FILES);
        out.u32(pending.len() as u32);
        for p in pending {
            out.str(&p.path.to_string_lossy());
            out.u64(p.offset);
            out.u64(p.line as u64);
        }
        Ok(())
    }

    /// Reads on the files of the old subtasks this one takes over ([`owned_parts`]).
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> RuntimeResult<()> {
        let malformed = |e: DecodeError| {
            RuntimeError::Restore(format!("the state of filesystem source '{}' is malformed: {e}", self.name))
        };
        let mut files = VecDeque::new();
        for state in owned_parts(states, ctx.subtask()) {
            let Some(mut input) = state.section(FILES) else { continue };
            for _ in 0..input.u32().map_err(malformed)? {
                let path = PathBuf::from(input.str().map_err(malformed)?);
                let offset = input.u64().map_err(malformed)?;
                let line = input.u64().map_err(malformed)? as usize;
                files.push_back(Pending { path, offset, line });
            }
        }
        self.restored = Some(files);
        Ok(())
    }

    fn poll_next(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> RuntimeResult<SourceStatus> {
        let more = self.fill(ctx.chunk_size())?;
        let rows = self.columns.rows();
        let arrays = self.columns.finish().map_err(|e| RuntimeError::execution(format!("{}: {e}", self.name)))?;
        out.collect(Chunk::from_arrays(vec![RowKind::Insert; rows], arrays));
        Ok(if more { SourceStatus::Ready } else { SourceStatus::Finished })
    }
}
