//! The `parquet` format of the `filesystem` connector, with Flink's options and type mapping.
//!
//! Parquet is a bulk format: a file is written whole (row groups, then a footer that makes it
//! readable) and read by columns, so it is not a [`Format`](super::Format) of text records; the
//! filesystem connector reads and writes it through [`ParquetFormat`] instead.
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `parquet.compression` | `SNAPPY` | `UNCOMPRESSED`, `SNAPPY`, `GZIP`, `BROTLI`, `LZ4`, `LZ4_RAW` or `ZSTD` |
//! | `parquet.block.size` | `134217728` | bytes of a row group |
//! | `parquet.page.size` | `1048576` | bytes of a data page |
//! | `parquet.dictionary.page.size` | `1048576` | bytes of a dictionary page |
//! | `parquet.enable.dictionary` | `true` | dictionary encoding |
//! | `parquet.writer.version` | `PARQUET_1_0` | `PARQUET_1_0` or `PARQUET_2_0` |
//! | `parquet.utc-timezone` | `false` | TIMESTAMP values are stored as UTC instants; `false`: as instants of the machine's time zone, as Flink (and Hive 2) store them |
//!
//! Other `parquet.*` keys are accepted and ignored, as Flink hands them to Hadoop's writer.
//! Columns are written and read by name, in Flink's mapping ([`types`]).

mod types;

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::schema::types::SchemaDescriptor;
use weir_runtime::time_zone::TimeZone;
use weir_runtime::{Chunk, Schema};

use crate::error::{Error, Result};
use crate::options::{invalid, TableOptions};

/// The value of `'format'` that selects Parquet.
pub const IDENTIFIER: &str = "parquet";

/// The compression codecs `parquet.compression` takes, as Flink spells them.
const CODECS: &[&str] = &["UNCOMPRESSED", "SNAPPY", "GZIP", "BROTLI", "LZ4", "LZ4_RAW", "ZSTD"];

/// Parquet files of one schema: how they are written and read.
#[derive(Debug)]
pub struct ParquetFormat {
    /// The columns the files hold, in the table's order.
    schema: Schema,
    /// The Arrow schema of the arrays handed to the writer ([`types::file_type`]).
    file_schema: arrow_schema::SchemaRef,
    /// The Parquet schema written: Flink's mapping of the columns.
    parquet_schema: SchemaDescriptor,
    properties: WriterProperties,
    /// The zone TIMESTAMP values are stored in (`parquet.utc-timezone`).
    zone: TimeZone,
}

impl ParquetFormat {
    /// The format of files holding the columns of `schema`, with the `parquet.*` options.
    ///
    /// # Errors
    /// An invalid option value, or a column whose type Parquet cannot hold in Flink's mapping.
    pub fn create(schema: &Schema, options: &mut TableOptions) -> Result<ParquetFormat> {
        let utc = options.boolean("parquet.utc-timezone", false)?;
        let compression = match options.one_of("parquet.compression", CODECS, "SNAPPY")? {
            "UNCOMPRESSED" => Compression::UNCOMPRESSED,
            "SNAPPY" => Compression::SNAPPY,
            "GZIP" => Compression::GZIP(GzipLevel::default()),
            "BROTLI" => Compression::BROTLI(BrotliLevel::default()),
            "LZ4" => Compression::LZ4,
            "LZ4_RAW" => Compression::LZ4_RAW,
            _ => Compression::ZSTD(ZstdLevel::default()),
        };
        let version = match options.one_of("parquet.writer.version", &["PARQUET_1_0", "PARQUET_2_0"], "PARQUET_1_0")? {
            "PARQUET_2_0" => WriterVersion::PARQUET_2_0,
            _ => WriterVersion::PARQUET_1_0,
        };
        let properties = WriterProperties::builder()
            .set_compression(compression)
            .set_writer_version(version)
            .set_max_row_group_bytes(Some(bytes(options, "parquet.block.size", 128 << 20)?))
            .set_data_page_size_limit(bytes(options, "parquet.page.size", 1 << 20)?)
            .set_dictionary_page_size_limit(bytes(options, "parquet.dictionary.page.size", 1 << 20)?)
            .set_dictionary_enabled(options.boolean("parquet.enable.dictionary", true)?)
            .build();
        // The keys Flink passes on to Hadoop's Parquet writer: accepted, as there.
        options.prefixed("parquet.");
        let file_schema = Arc::new(types::file_schema(schema)?);
        let parquet_schema = types::parquet_schema(&file_schema)?;
        let zone = if utc { TimeZone::Utc } else { TimeZone::system() };
        Ok(ParquetFormat { schema: schema.clone(), file_schema, parquet_schema, properties, zone })
    }

    /// A writer of a new file into `file`.
    ///
    /// # Errors
    /// The writer could not start the file.
    pub fn writer(&self, file: File, path: &Path) -> Result<ParquetWriter> {
        let options = ArrowWriterOptions::new()
            .with_properties(self.properties.clone())
            .with_parquet_schema(self.parquet_schema.clone())
            .with_skip_arrow_metadata(true);
        let handle = file.try_clone().map_err(|source| Error::Io { path: path.display().to_string(), source })?;
        let writer = ArrowWriter::try_new_with_options(file, Arc::clone(&self.file_schema), options)
            .map_err(|e| failed(path, e))?;
        Ok(ParquetWriter {
            writer,
            file: handle,
            schema: self.schema.clone(),
            file_schema: Arc::clone(&self.file_schema),
            zone: self.zone,
            path: path.display().to_string(),
        })
    }

    /// A reader of the file at `path`, from its row `skip`, in batches of at most `batch` rows.
    ///
    /// # Errors
    /// A file that is not Parquet, or whose columns do not hold the table's types.
    pub fn reader(&self, path: &Path, skip: u64, batch: usize) -> Result<ParquetReader> {
        let file = File::open(path).map_err(|source| Error::Io { path: path.display().to_string(), source })?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| failed(path, e))?;
        let total = builder.metadata().file_metadata().num_rows().max(0) as u64;
        let file_columns = builder.schema().fields().clone();
        // The table's columns by name; those the file lacks read as NULL.
        let roots: Vec<usize> =
            self.schema.fields.iter().filter_map(|f| file_columns.iter().position(|c| c.name() == &f.name)).collect();
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        let reader = builder
            .with_projection(mask)
            .with_batch_size(batch.max(1))
            .with_offset(skip as usize)
            .build()
            .map_err(|e| failed(path, e))?;
        Ok(ParquetReader {
            reader,
            schema: self.schema.clone(),
            zone: self.zone,
            read: skip.min(total),
            total,
            path: path.display().to_string(),
        })
    }
}

/// A byte size option: a number of bytes, or a size such as `128mb`.
fn bytes(options: &mut TableOptions, key: &str, default: usize) -> Result<usize> {
    match options.optional(key) {
        None => Ok(default),
        Some(v) => weir_runtime::settings::memory_size(v)
            .map(|b| b as usize)
            .ok_or_else(|| invalid(key, v, "a number of bytes, such as '134217728' or '128mb'")),
    }
}

/// The error of a Parquet file that could not be read or written.
fn failed(path: &Path, error: impl std::fmt::Display) -> Error {
    Error::Parquet { file: path.display().to_string(), reason: error.to_string() }
}

/// Writes rows into one Parquet file: complete, with its footer, once [`finish`](Self::finish)ed.
pub struct ParquetWriter {
    writer: ArrowWriter<File>,
    /// The file the writer writes, to hand back once it is complete.
    file: File,
    schema: Schema,
    file_schema: arrow_schema::SchemaRef,
    zone: TimeZone,
    path: String,
}

impl ParquetWriter {
    /// Writes the rows of `chunk` (columns of the format's schema).
    ///
    /// # Errors
    /// The file could not be written.
    pub fn write(&mut self, chunk: &Chunk) -> Result<()> {
        let columns = chunk.columns();
        let arrays: Vec<ArrayRef> = (0..chunk.arity()).map(|i| columns.compacted(i)).collect();
        let arrays = types::to_file(&arrays, &self.schema, &self.file_schema, self.zone)
            .map_err(|reason| Error::Parquet { file: self.path.clone(), reason })?;
        let batch = RecordBatch::try_new(Arc::clone(&self.file_schema), arrays)
            .map_err(|e| Error::Parquet { file: self.path.clone(), reason: e.to_string() })?;
        self.writer.write(&batch).map_err(|e| Error::Parquet { file: self.path.clone(), reason: e.to_string() })
    }

    /// The bytes of the file so far, the row group being built included (for the rolling policy).
    pub fn bytes(&self) -> u64 {
        (self.writer.bytes_written() + self.writer.in_progress_size()) as u64
    }

    /// Writes what is buffered and the footer, and hands back the file.
    ///
    /// # Errors
    /// The file could not be written.
    pub fn finish(self) -> Result<File> {
        let path = self.path;
        self.writer.close().map_err(|e| Error::Parquet { file: path, reason: e.to_string() })?;
        Ok(self.file)
    }
}

/// Reads the rows of one Parquet file in batches, as columns of the table's types.
pub struct ParquetReader {
    reader: ParquetRecordBatchReader,
    schema: Schema,
    zone: TimeZone,
    /// Rows read so far, those skipped included.
    read: u64,
    total: u64,
    path: String,
}

impl ParquetReader {
    /// The next batch of rows as one array per column of the table (and its row count), or
    /// `None` at the end of the file.
    ///
    /// # Errors
    /// A damaged file, or a column whose values cannot be read as the table's type.
    pub fn next_batch(&mut self) -> Result<Option<(usize, Vec<ArrayRef>)>> {
        let Some(batch) = self.reader.next() else { return Ok(None) };
        let batch = batch.map_err(|e| Error::Parquet { file: self.path.clone(), reason: e.to_string() })?;
        self.read += batch.num_rows() as u64;
        let arrays = types::from_file(&batch, &self.schema, self.zone)
            .map_err(|reason| Error::Parquet { file: self.path.clone(), reason })?;
        Ok(Some((batch.num_rows(), arrays)))
    }

    /// Rows read so far, counted from the start of the file.
    pub fn rows_read(&self) -> u64 {
        self.read
    }

    /// The rows the file holds.
    pub fn rows_total(&self) -> u64 {
        self.total
    }
}
