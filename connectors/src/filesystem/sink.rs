//! Writing files: one part file per subtask, visible once the input has ended.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use weir_runtime::{Chunk, Error as RuntimeError, Operator, OperatorContext, Output, Result as RuntimeResult, RowKind};

use crate::error::Error;
use crate::format::Encoder;

/// Appends rows to `part-<id>-<subtask>-0` in a directory, through a hidden in-progress file
/// that is renamed when the input ends. Accepts only `+I` rows: the filesystem is append-only.
pub struct FileSink {
    table: String,
    dir: PathBuf,
    encoder: Box<dyn Encoder>,
    in_progress: PathBuf,
    finished: PathBuf,
    file: Option<BufWriter<File>>,
    text: String,
}

impl std::fmt::Debug for FileSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileSink").field("finished", &self.finished).finish_non_exhaustive()
    }
}

impl FileSink {
    /// The sink of subtask `subtask` of the table `table`, writing into `dir`.
    pub fn new(table: String, dir: PathBuf, encoder: Box<dyn Encoder>, id: &str, subtask: usize) -> Self {
        let name = format!("part-{id}-{subtask}-0");
        FileSink {
            table,
            in_progress: dir.join(format!(".{name}.inprogress")),
            finished: dir.join(name),
            dir,
            encoder,
            file: None,
            text: String::new(),
        }
    }

    fn io(&self, path: &std::path::Path, source: std::io::Error) -> RuntimeError {
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
            std::fs::create_dir_all(&self.dir).map_err(|e| self.io(&self.dir, e))?;
            let file = File::create(&self.in_progress).map_err(|e| self.io(&self.in_progress, e))?;
            self.file = Some(BufWriter::with_capacity(1 << 16, file));
        }
        Ok(self.file.as_mut().unwrap_or_else(|| unreachable!("the file was just opened")))
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
        result.map_err(|e| self.io(&self.in_progress, e))
    }

    fn process_watermark(
        &mut self,
        _watermark: i64,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> RuntimeResult<()> {
        Ok(())
    }

    fn end_of_input(&mut self, _ctx: &mut OperatorContext, _out: &mut Output) -> RuntimeResult<()> {
        if let Some(mut file) = self.file.take() {
            file.flush().map_err(|e| self.io(&self.in_progress, e))?;
            drop(file);
            std::fs::rename(&self.in_progress, &self.finished).map_err(|e| self.io(&self.finished, e))?;
        }
        Ok(())
    }
}
