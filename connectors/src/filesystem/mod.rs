//! The `filesystem` connector: a bounded source reading a file or a directory, and an
//! append-only sink writing a directory, in any format, both with Flink's partitioned layout
//! for a table `PARTITIONED BY` columns ([`partition`]); a table declared with Flink 1.x's
//! legacy options (`'connector.type' = 'filesystem'`, [`crate::legacy`]) can also be looked up
//! (read whole when the job starts).
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `path` | required | a file or directory to read; the directory to write |
//! | `format` | required | a row format (`csv`, `json`, …) or `parquet`, with that format's options |
//! | `sink.parallelism` | the input's | number of sink subtasks |
//! | `partition.default-name` | `__DEFAULT_PARTITION__` | the directory of a NULL or empty partition value |
//! | `sink.rolling-policy.file-size` | `128MB` | a part file holding more is closed |
//! | `sink.rolling-policy.rollover-interval` | `30 min` | the longest a part file stays open |
//! | `sink.rolling-policy.inactivity-interval` | `30 min` | a part file unwritten this long is closed |
//! | `sink.rolling-policy.check-interval` | `1 min` | how often the two limits above are checked |
//! | `sink.partition-commit.trigger` | `process-time` | `process-time` or `partition-time` |
//! | `sink.partition-commit.delay` | `0 s` | how long after its time a partition is committed |
//! | `sink.partition-commit.watermark-time-zone` | `UTC` | the zone partition times are in |
//! | `sink.partition-commit.policy.kind` | none | `success-file` (no commit without one) |
//! | `sink.partition-commit.success-file.name` | `_SUCCESS` | the success file's name |
//! | `partition.time-extractor.timestamp-pattern` | first value | `$dt $hm:00`: a partition's time |
//! | `partition.time-extractor.timestamp-formatter` | `yyyy-MM-dd HH:mm:ss` | how that text reads |
//!
//! Reading a directory reads every file below it whose name does not start with `.` or `_`,
//! in path order (of a partitioned table, those of the partitions the query's filter can keep
//! rows of); each file is read whole by one subtask, with the values of its partition columns
//! taken from its directories. The sink writes `part-<id>-<subtask>-<n>` files, hidden
//! (`.part-…inprogress`) until committed ([`sink`], [`commit`]).

mod commit;
mod lookup;
mod partition;
mod sink;
mod source;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use sink::PartitionSink;
pub use sink::{FileSink, PartFormat};
pub use source::FileSource;

use crate::api::sink_parallelism;
use crate::api::{
    ConnectorFactory, FactoryContext, ScanChanges, ScanContext, SinkAbilities, SinkChangelogMode, SinkContext,
    SinkProvider, SourceAbilities, SourceProvider, TableDescriptor, TablePartition,
};
use crate::api::{ResolvedLookup, ResolvedSink, ResolvedSource};
use crate::error::{Error, Result};
use crate::format::parquet::{self, ParquetFormat};
use crate::format::Format;
use crate::options::TableOptions;
use commit::{CommitPolicy, PartitionCommitter, RollingPolicy};
use partition::Partitioning;
use weir_runtime::DataType;

/// Creates `filesystem` sources and sinks.
#[derive(Debug, Clone, Copy, Default)]
pub struct FilesystemFactory;

/// Declares and reads the options both sides share: the path and `sink.parallelism`.
fn common_options(options: &mut TableOptions, table: &TableDescriptor) -> Result<(PathBuf, Option<usize>)> {
    // A `file://` URI names a local path, as in Flink.
    let path = options.required("path").map(|p| PathBuf::from(p.strip_prefix("file://").unwrap_or(p)));
    let has_format = options.required("format").is_some();
    let parallelism = sink_parallelism(options, table)?;
    match path {
        Some(path) if has_format => Ok((path, parallelism)),
        _ => {
            let missing = ["format", "path"].iter().filter(|k| !options.contains(k)).map(|k| k.to_string()).collect();
            Err(Error::MissingOptions { missing })
        }
    }
}

/// How a table's files hold its rows.
#[derive(Debug, Clone)]
pub enum FileFormat {
    /// Records of a row format one after another (`csv`, `json`, …), read and written a record
    /// at a time.
    Records(Arc<dyn Format>),
    /// Parquet: files written whole and read by columns.
    Parquet(Arc<ParquetFormat>),
}

impl FileFormat {
    /// Whether the files hold changes rather than rows (a CDC row format).
    fn carries_changes(&self) -> bool {
        match self {
            FileFormat::Records(format) => format.carries_changes(),
            FileFormat::Parquet(_) => false,
        }
    }
}

/// The table's partitioning (`None` without `PARTITIONED BY`) and its format, which reads and
/// writes the columns other than the partition columns (the directories hold those).
fn partitioned_format(
    table: &TableDescriptor,
    options: &mut TableOptions,
    ctx: &FactoryContext<'_>,
) -> Result<(Option<Partitioning>, FileFormat)> {
    let partitioning = Partitioning::of(table, options)?;
    let data_schema = partitioning.as_ref().map_or_else(|| table.schema.clone(), |p| p.data_schema(&table.schema));
    let format = match options.optional("format") {
        Some(parquet::IDENTIFIER) => FileFormat::Parquet(Arc::new(ParquetFormat::create(&data_schema, options)?)),
        _ => FileFormat::Records(ctx.format(&data_schema, options)?),
    };
    Ok((partitioning, format))
}

impl ConnectorFactory for FilesystemFactory {
    fn identifier(&self) -> &'static str {
        "filesystem"
    }

    fn supports_partitioning(&self) -> bool {
        true
    }

    fn resolve_source(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSource>> {
        let (path, _) = common_options(options, table)?;
        let (partitioning, format) = partitioned_format(table, options, ctx)?;
        // One table is read and written: the sink's options are the table's too, as in Flink.
        RollingPolicy::read(options)?;
        CommitPolicy::read(options, partitioning.is_some())?;
        let types = table.schema.fields.iter().map(|f| f.data_type.clone()).collect();
        Ok(Arc::new(FileTable { name: table.name.clone(), path, format, types, partitioning }))
    }

    fn resolve_sink(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSink>> {
        let (path, parallelism) = common_options(options, table)?;
        let (partitioning, format) = partitioned_format(table, options, ctx)?;
        let rolling = RollingPolicy::read(options)?;
        let commit = CommitPolicy::read(options, partitioning.is_some())?;
        Ok(Arc::new(FileSinkTable {
            name: table.name.clone(),
            path,
            format,
            parallelism,
            rolling,
            partitioning,
            commit,
        }))
    }

    /// A table declared with the legacy descriptor (`'connector.type' = 'filesystem'`) is read
    /// whole for lookups, as Flink 1.x's `CsvTableSource` was; the current filesystem
    /// connector, as Flink 2's, offers none.
    fn resolve_lookup(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedLookup>> {
        if !crate::legacy::is_legacy(&table.options) {
            return Err(crate::api::no_lookup(self.identifier(), table));
        }
        let (path, _) = common_options(options, table)?;
        let format = ctx.format(&table.schema, options)?;
        let schema = table.schema.clone();
        Ok(Arc::new(lookup::FileLookupTable { name: table.name.clone(), path, format, schema }))
    }
}

/// A `filesystem` table resolved as a source.
struct FileTable {
    name: String,
    path: PathBuf,
    format: FileFormat,
    types: Vec<DataType>,
    partitioning: Option<Partitioning>,
}

impl ResolvedSource for FileTable {
    /// A scan takes the filter above it and keeps all of it as remaining, as Flink's
    /// filesystem source does (it shows in EXPLAIN; every row read is still filtered); its
    /// conjuncts over partition columns choose the partitions read ([`ScanContext::partitions`]).
    fn abilities(&self, _scan: &ScanContext) -> SourceAbilities {
        let changes =
            if self.format.carries_changes() { ScanChanges::UpdatesAndDeletes } else { ScanChanges::InsertOnly };
        SourceAbilities { accepts_filters: true, changes, ..SourceAbilities::plain(None, true) }
    }

    /// A partitioned table's scan reads only the partitions the query's filter can keep rows of
    /// (`scan.partitions`), as Flink prunes them.
    ///
    /// # Errors
    /// For a job about to start, a `path` of an unpartitioned table that does not exist (a
    /// partitioned table's path may come later: it reads what is there when it runs).
    fn create(&self, scan: &ScanContext) -> Result<SourceProvider> {
        if scan.job_starts && self.partitioning.is_none() {
            std::fs::metadata(&self.path)
                .map_err(|source| Error::Io { path: self.path.display().to_string(), source })?;
        }
        let (name, path, format, types) =
            (self.name.clone(), self.path.clone(), self.format.clone(), self.types.clone());
        let pruning = scan.partitions.clone();
        let partitioning = self.partitioning.clone();
        Ok(SourceProvider {
            parallelism: None,
            bounded: true,
            factory: Arc::new(move |info| {
                let source = FileSource::new(name.clone(), path.clone(), format.clone(), &types, info);
                Box::new(match &partitioning {
                    Some(p) => source.with_partitions(p.clone(), &types).pruned(pruning.clone()),
                    None => source,
                })
            }),
        })
    }

    /// The `key=value` directories holding files, sorted by their path (Flink lists them in the
    /// file system's order, which differs from one file system to another).
    ///
    /// A path that does not exist (yet) lists none: every partition is read.
    ///
    /// # Errors
    /// A path that cannot be listed.
    fn partitions(&self) -> Result<Option<Vec<TablePartition>>> {
        let Some(partitioning) = &self.partitioning else { return Ok(None) };
        // A path not written yet lists nothing now: the scan reads what is there when it runs.
        if !self.path.exists() {
            return Ok(None);
        }
        let mut listed: Vec<TablePartition> = Vec::new();
        for file in source::list_files(&self.path)? {
            let relative = file.strip_prefix(&self.path).unwrap_or(&file);
            let Some(directory) = relative.parent() else { continue };
            let spec = partition::partition_spec(directory);
            // The files are sorted: a partition's files follow one another.
            if listed.last().is_some_and(|p| p.spec == spec) {
                continue;
            }
            // A file outside a partition directory (or with a value not of its column's type)
            // is no partition: the scan reads it and fails, pruned or not.
            let Ok(values) = partitioning.values_of(relative) else { continue };
            listed.push(TablePartition { spec, values });
        }
        Ok(Some(listed))
    }
}

/// A `filesystem` table resolved as a sink.
struct FileSinkTable {
    name: String,
    path: PathBuf,
    format: FileFormat,
    parallelism: Option<usize>,
    rolling: RollingPolicy,
    partitioning: Option<Partitioning>,
    commit: Option<CommitPolicy>,
}

impl FileSinkTable {
    fn changelog_mode(&self) -> SinkChangelogMode {
        if self.format.carries_changes() {
            SinkChangelogMode::Retract
        } else {
            SinkChangelogMode::Append
        }
    }
}

impl ResolvedSink for FileSinkTable {
    /// Rows only, or every change with a changelog format (`debezium-json`, …).
    fn abilities(&self, _sink: &SinkContext) -> Result<SinkAbilities> {
        Ok(SinkAbilities { parallelism: self.parallelism, changelog_mode: self.changelog_mode() })
    }

    /// Each sink built writes part files named by an id of its own; its subtasks share one
    /// partition committer.
    fn create(&self, _sink: &SinkContext) -> Result<SinkProvider> {
        let id = format!("{:016x}", rand::random::<u64>());
        let (name, path, format) = (self.name.clone(), self.path.clone(), self.format.clone());
        let (rolling, partitioning, commit) = (self.rolling, self.partitioning.clone(), self.commit.clone());
        // Made by the first subtask built, which knows the sink's parallelism.
        let committer: Arc<OnceLock<Arc<Mutex<PartitionCommitter>>>> = Arc::default();
        Ok(SinkProvider {
            parallelism: self.parallelism,
            changelog_mode: self.changelog_mode(),
            factory: Arc::new(move |info| {
                let writer = match &format {
                    FileFormat::Records(format) => PartFormat::Records(format.encoder()),
                    FileFormat::Parquet(format) => PartFormat::Parquet(Arc::clone(format)),
                };
                let sink = FileSink::new(name.clone(), path.clone(), writer, &id, info.index).with_rolling(rolling);
                let Some(partitioning) = &partitioning else { return Box::new(sink) };
                let committer = commit.as_ref().map(|policy| {
                    let make = || PartitionCommitter::new(policy.clone(), path.clone(), partitioning, info.parallelism);
                    Arc::clone(committer.get_or_init(|| Arc::new(Mutex::new(make()))))
                });
                Box::new(sink.with_partitions(PartitionSink::new(partitioning.clone(), committer)))
            }),
        })
    }
}
