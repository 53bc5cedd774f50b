//! The `filesystem` connector: a bounded source reading a file or a directory, and an
//! append-only sink writing a directory, in any format; a table declared with Flink 1.x's
//! legacy options (`'connector.type' = 'filesystem'`, [`crate::legacy`]) can also be looked up
//! (read whole when the job starts).
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `path` | required | a file or directory to read; the directory to write |
//! | `format` | required | `csv` or `json`, with that format's options |
//! | `sink.parallelism` | the input's | number of sink subtasks |
//!
//! Reading a directory reads every file below it whose name does not start with `.` or `_`,
//! in path order; each file is read whole by one subtask. The sink writes
//! `part-<id>-<subtask>-0` files, hidden (`.part-…inprogress`) until its input ends.

mod lookup;
mod sink;
mod source;

use std::path::PathBuf;
use std::sync::Arc;

pub use sink::FileSink;
pub use source::FileSource;

use crate::error::{Error, Result};
use crate::format::Format;
use crate::options::TableOptions;
use crate::print::sink_parallelism;
use crate::registry::{
    ConnectorFactory, FactoryContext, ScanChanges, ScanContext, SinkAbilities, SinkChangelogMode, SinkContext,
    SinkProvider, SourceAbilities, SourceProvider, TableDescriptor,
};
use crate::resolved::{ResolvedLookup, ResolvedSink, ResolvedSource};
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

impl ConnectorFactory for FilesystemFactory {
    fn identifier(&self) -> &'static str {
        "filesystem"
    }

    fn resolve_source(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSource>> {
        let (path, _) = common_options(options, table)?;
        let format = ctx.format(&table.schema, options)?;
        let types = table.schema.fields.iter().map(|f| f.data_type.clone()).collect();
        Ok(Arc::new(FileTable { name: table.name.clone(), path, format, types }))
    }

    fn resolve_sink(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSink>> {
        let (path, parallelism) = common_options(options, table)?;
        let format = ctx.format(&table.schema, options)?;
        Ok(Arc::new(FileSinkTable { name: table.name.clone(), path, format, parallelism }))
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
            return Err(crate::registry::no_lookup(self.identifier(), table));
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
    format: Arc<dyn Format>,
    types: Vec<DataType>,
}

impl ResolvedSource for FileTable {
    /// A scan takes the filter above it and keeps all of it as remaining, as Flink's
    /// filesystem source does (it shows in EXPLAIN; every row is still read and filtered).
    fn abilities(&self, _scan: &ScanContext) -> SourceAbilities {
        let changes =
            if self.format.carries_changes() { ScanChanges::UpdatesAndDeletes } else { ScanChanges::InsertOnly };
        SourceAbilities { accepts_filters: true, changes, ..SourceAbilities::plain(None, true) }
    }

    fn create(&self, _scan: &ScanContext) -> Result<SourceProvider> {
        let (name, path, format, types) =
            (self.name.clone(), self.path.clone(), Arc::clone(&self.format), self.types.clone());
        Ok(SourceProvider {
            parallelism: None,
            bounded: true,
            factory: Arc::new(move |info| {
                Box::new(FileSource::new(name.clone(), path.clone(), Arc::clone(&format), &types, info))
            }),
        })
    }
}

/// A `filesystem` table resolved as a sink.
struct FileSinkTable {
    name: String,
    path: PathBuf,
    format: Arc<dyn Format>,
    parallelism: Option<usize>,
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

    /// Each sink built writes part files named by an id of its own.
    fn create(&self, _sink: &SinkContext) -> Result<SinkProvider> {
        let id = format!("{:016x}", rand::random::<u64>());
        let (name, path, format) = (self.name.clone(), self.path.clone(), Arc::clone(&self.format));
        Ok(SinkProvider {
            parallelism: self.parallelism,
            changelog_mode: self.changelog_mode(),
            factory: Arc::new(move |info| {
                Box::new(FileSink::new(name.clone(), path.clone(), format.encoder(), &id, info.index))
            }),
        })
    }
}
