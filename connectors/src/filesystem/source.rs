//! Reading files: one subtask reads its files whole, in path order.

use std::collections::VecDeque;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use weir_runtime::columnar::ColumnsBuilder;
use weir_runtime::{
    Chunk, Error as RuntimeError, OperatorContext, Output, Result as RuntimeResult, RowKind, Source, SourceStatus,
    SubtaskInfo,
};

use crate::error::{Error, Result};
use crate::format::{Decoder, Format, Lines};

/// The file being read.
struct OpenFile {
    display: String,
    lines: Lines,
    decoder: Box<dyn Decoder>,
}

/// Reads the files of a path with a format; subtask i of p reads files i, i + p, ….
pub struct FileSource {
    name: String,
    path: PathBuf,
    format: Arc<dyn Format>,
    subtask: usize,
    parallelism: usize,
    files: VecDeque<PathBuf>,
    current: Option<OpenFile>,
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
            columns: ColumnsBuilder::for_types(types),
        }
    }

    fn open_next(&mut self) -> Result<bool> {
        let Some(path) = self.files.pop_front() else { return Ok(false) };
        let display = path.display().to_string();
        let file = File::open(&path).map_err(|source| Error::Io { path: display.clone(), source })?;
        let lines = Lines::new(Box::new(BufReader::with_capacity(1 << 16, file)));
        self.current = Some(OpenFile { display, lines, decoder: self.format.decoder() });
        Ok(true)
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
        let files = list_files(&self.path)?;
        self.files = files.into_iter().skip(self.subtask).step_by(self.parallelism).collect();
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
