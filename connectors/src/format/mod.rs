//! Formats: how rows become text and back, separate from where the text lives.
//!
//! A [`FormatFactory`] validates its `<format>.*` options and builds a [`Format`]; the format
//! makes a [`Decoder`] per file read and an [`Encoder`] per file written.

pub mod avro;
pub mod cdc;
pub mod csv;
pub mod json;
pub mod parquet;
pub mod raw;
pub mod text;

use std::io::BufRead;
use std::sync::Arc;

use weir_runtime::columnar::{for_each_record, Cell, ColumnsBuilder};
use weir_runtime::{Chunk, RowKind, Schema, Value};

use crate::error::Result;
use crate::options::TableOptions;

/// Builds a format from a table's schema and options.
pub trait FormatFactory: Send + Sync {
    /// The value of `'format'` that selects this factory.
    fn identifier(&self) -> &'static str;

    /// Validates the format's options (declaring each) and builds the format.
    ///
    /// # Errors
    /// Invalid options, or a column type the format cannot carry.
    fn create(&self, schema: &Schema, options: &mut TableOptions) -> Result<Arc<dyn Format>>;
}

/// A configured format for one schema.
pub trait Format: Send + Sync + std::fmt::Debug {
    /// A decoder for one input.
    fn decoder(&self) -> Box<dyn Decoder>;

    /// An encoder for one output.
    fn encoder(&self) -> Box<dyn Encoder>;

    /// Whether the format carries changes (inserts, updates before and after, deletes: the
    /// CDC formats) rather than rows (inserts only). The default: rows.
    fn carries_changes(&self) -> bool {
        false
    }
}

/// Where a record could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// 1-based line where the record starts.
    pub line: usize,
    /// 1-based field position, when one field is at fault.
    pub column: Option<usize>,
    /// The field's name, when one field is at fault.
    pub field: Option<String>,
    /// What is wrong.
    pub reason: String,
}

impl DecodeError {
    /// The error of a record of `file` that could not be read ([`crate::error::Error::Parse`]).
    pub fn in_file(self, file: &str) -> crate::error::Error {
        crate::error::Error::Parse {
            file: file.to_string(),
            line: self.line,
            column: self.column,
            field: self.field,
            reason: self.reason,
        }
    }
}

/// Reads records as text lines, counting them.
pub struct Lines {
    reader: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    number: usize,
    /// Bytes read so far (where the next line starts, counted from where reading began).
    offset: u64,
    /// The text is one message (a Kafka record's key or value), held in `buf`: its whole
    /// content is one record, line breaks and all.
    message: bool,
    /// In a message: whether its record is still to be read.
    pending: bool,
}

impl Lines {
    /// Lines of `reader`.
    pub fn new(reader: Box<dyn BufRead + Send>) -> Self {
        Lines { reader, buf: Vec::new(), number: 0, offset: 0, message: false, pending: false }
    }

    /// Lines of `reader`, which starts at byte `offset` of its text, after line `number`.
    pub fn resumed(reader: Box<dyn BufRead + Send>, offset: u64, number: usize) -> Self {
        Lines { reader, buf: Vec::new(), number, offset, message: false, pending: false }
    }

    /// One message's bytes (a Kafka record's key or value) as one record: its one "line" is
    /// the whole message, line breaks and all.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let mut lines = Self::new(Box::new(std::io::empty()));
        lines.set_message(bytes);
        lines
    }

    /// Makes these lines the one record of the message `bytes`, reusing their buffer (a
    /// source decodes every message of a partition through one `Lines`).
    pub fn set_message(&mut self, bytes: &[u8]) {
        self.buf.clear();
        self.buf.extend_from_slice(bytes);
        self.message = true;
        self.pending = true;
        self.number = 0;
        self.offset = 0;
    }

    /// Lines of an in-memory text.
    pub fn from_text(text: String) -> Self {
        Self::new(Box::new(std::io::Cursor::new(text.into_bytes())))
    }

    /// The next line without its line break, or `None` at the end.
    ///
    /// # Errors
    /// The reader's error; or a line that is not UTF-8 ([`NotUtf8`], see [`is_not_utf8`]): it
    /// is counted and passed over, so that a decoder ignoring parse errors reads on from the
    /// line after it.
    pub fn next_line(&mut self) -> std::io::Result<Option<&str>> {
        if self.next_bytes()?.is_none() {
            return Ok(None);
        }
        let line = std::str::from_utf8(&self.buf).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                NotUtf8 { line: self.number, byte: e.valid_up_to() + 1 },
            )
        })?;
        let trimmed = line.strip_suffix('\n').unwrap_or(line);
        Ok(Some(trimmed.strip_suffix('\r').unwrap_or(trimmed)))
    }

    /// The bytes of the next record as they are (a line with its line break, or a whole
    /// message, empty ones too), or `None` at the end; counted as a line.
    ///
    /// # Errors
    /// The reader's error.
    pub fn next_bytes(&mut self) -> std::io::Result<Option<&[u8]>> {
        if self.message {
            if !std::mem::take(&mut self.pending) {
                return Ok(None);
            }
            self.offset = self.buf.len() as u64;
            self.number = 1;
            return Ok(Some(&self.buf));
        }
        self.buf.clear();
        let read = self.reader.read_until(b'\n', &mut self.buf)?;
        if read == 0 {
            return Ok(None);
        }
        self.offset += read as u64;
        self.number += 1;
        Ok(Some(&self.buf))
    }

    /// Whether the text is one message ([`Lines::from_bytes`]), not lines of a file.
    pub fn is_message(&self) -> bool {
        self.message
    }

    /// 1-based number of the line last returned.
    pub fn number(&self) -> usize {
        self.number
    }

    /// Where the next line starts, in bytes from the start of the text.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

/// A line that is not UTF-8 ([`Lines::next_line`]).
#[derive(Debug, thiserror::Error)]
#[error("line {line} is not valid UTF-8 (at byte {byte} of the line)")]
pub struct NotUtf8 {
    /// The line's number.
    pub line: usize,
    /// The first byte, from 1, that is not UTF-8.
    pub byte: usize,
}

/// Whether `error`, from [`Lines::next_line`], is a line that is not UTF-8 (a parse error,
/// which `ignore-parse-errors` skips), rather than a failing reader (whose own `InvalidData`
/// errors, a broken compressed stream say, still fail the read).
pub fn is_not_utf8(error: &std::io::Error) -> bool {
    error.get_ref().is_some_and(|inner| inner.is::<NotUtf8>())
}

/// Turns text records into columns.
pub trait Decoder: Send {
    /// Reads the next record and pushes one cell into each of `out`'s columns (the schema's),
    /// then ends the record. Returns `false` at the end of the input. Records skipped under
    /// `ignore-parse-errors` are never pushed.
    ///
    /// # Errors
    /// A record that cannot be read, with its line and field; `out` then holds the records
    /// before it, none of this one.
    fn decode(&mut self, lines: &mut Lines, out: &mut ColumnsBuilder) -> Result<bool, DecodeError>;

    /// As [`Decoder::decode`], and pushes the kind of each row it pushed into `kinds` (a
    /// changelog format's record may be several rows: an update's before and after). The
    /// default: every row an insert.
    ///
    /// # Errors
    /// As [`Decoder::decode`].
    fn decode_changes(
        &mut self,
        lines: &mut Lines,
        out: &mut ColumnsBuilder,
        kinds: &mut Vec<RowKind>,
    ) -> Result<bool, DecodeError> {
        let before = out.rows();
        let more = self.decode(lines, out)?;
        kinds.extend(std::iter::repeat_n(RowKind::Insert, out.rows() - before));
        Ok(more)
    }
}

/// Decodes every record of `lines` into rows of the schema's columns: for tests and tools that
/// want values rather than columns.
///
/// # Errors
/// The first record that cannot be read.
pub fn decode_rows(
    decoder: &mut dyn Decoder,
    lines: &mut Lines,
    schema: &Schema,
) -> Result<Vec<Vec<Value>>, DecodeError> {
    let types: Vec<_> = schema.fields.iter().map(|f| f.data_type.clone()).collect();
    let mut columns = ColumnsBuilder::for_types(&types);
    while decoder.decode(lines, &mut columns)? {}
    let rows = columns.rows();
    let arrays = columns.finish().map_err(|e| DecodeError {
        line: lines.number(),
        column: None,
        field: None,
        reason: e.to_string(),
    })?;
    let chunk = Chunk::from_arrays(vec![weir_runtime::RowKind::Insert; rows], arrays);
    Ok(chunk.rows().map(|(_, row)| row.to_vec()).collect())
}

/// Turns rows into text records.
pub trait Encoder: Send {
    /// Appends the record of one row's `cells` (one per column), line break included.
    fn encode_record(&mut self, cells: &[Cell<'_>], out: &mut String);

    /// Appends the record of a change of `kind` to the row of `cells`. The default, for
    /// formats of rows: the row's record (such a format's sinks take inserts only).
    fn encode_change(&mut self, _kind: RowKind, cells: &[Cell<'_>], out: &mut String) {
        self.encode_record(cells, out);
    }

    /// The bytes of one message for a change of `kind` to the row of `cells` (a Kafka
    /// record's key or value), without a final line break. The default: the text of
    /// [`Encoder::encode_change`]; a binary format (`raw`) writes its bytes.
    fn encode_message(&mut self, kind: RowKind, cells: &[Cell<'_>], out: &mut Vec<u8>) {
        // The text is written into `out`'s own buffer (no allocation per message) when what it
        // holds is text, as it is for callers that clear it; else into a string of its own.
        let (mut text, prefix) = match String::from_utf8(std::mem::take(out)) {
            Ok(text) => (text, Vec::new()),
            Err(e) => (String::new(), e.into_bytes()),
        };
        let start = text.len();
        self.encode_change(kind, cells, &mut text);
        for end in ['\n', '\r'] {
            if text.len() > start && text.ends_with(end) {
                text.pop();
            }
        }
        *out = match prefix.is_empty() {
            true => text.into_bytes(),
            false => [prefix, text.into_bytes()].concat(),
        };
    }

    /// Appends the record of `row`.
    fn encode(&mut self, row: &[Value], out: &mut String) {
        let cells: Vec<Cell<'_>> = row.iter().map(Cell::of).collect();
        self.encode_record(&cells, out);
    }

    /// Appends the records of `chunk`'s rows in order (each as a change of its kind): from its
    /// arrays when it has them, else from its rows (the same text either way).
    fn encode_chunk(&mut self, chunk: &Chunk, out: &mut String) {
        if chunk.is_columnar() {
            for_each_record(chunk, |kind, cells| self.encode_change(kind, cells, out));
            return;
        }
        // One buffer of cells for every row.
        let mut cells = Vec::with_capacity(chunk.arity());
        for (kind, row) in chunk.rows() {
            cells.clear();
            cells.extend(row.iter().map(Cell::of));
            self.encode_change(kind, &cells, out);
        }
    }
}
