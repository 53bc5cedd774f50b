//! The `filesystem` connector: a bounded source reading a file or a directory, and an
//! append-only sink writing a directory, in any format.
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

mod sink;
mod source;

use std::path::PathBuf;
use std::sync::Arc;

pub use sink::FileSink;
pub use source::FileSource;

use crate::error::{Error, Result};
use crate::options::TableOptions;
use crate::print::sink_parallelism;
use crate::registry::{
    ConnectorFactory, FactoryContext, SinkChangelogMode, SinkProvider, SourceAbilities, SourceProvider, TableDescriptor,
};

/// Creates `filesystem` sources and sinks.
#[derive(Debug, Clone, Copy, Default)]
pub struct FilesystemFactory;

/// Declares and reads the options both sides share: the path and `sink.parallelism`.
fn common_options(options: &mut TableOptions, table: &TableDescriptor) -> Result<(PathBuf, Option<usize>)> {
    let path = options.required("path").map(PathBuf::from);
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

    fn create_source(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        ctx: &FactoryContext<'_>,
    ) -> Result<SourceProvider> {
        let (path, _) = common_options(options, table)?;
        let format = ctx.format(&table.schema, options)?;
        let name = table.name.clone();
        let types: Vec<weir_runtime::DataType> = table.schema.fields.iter().map(|f| f.data_type.clone()).collect();
        Ok(SourceProvider {
            parallelism: None,
            bounded: true,
            factory: Arc::new(move |info| {
                Box::new(FileSource::new(name.clone(), path.clone(), Arc::clone(&format), &types, info))
            }),
        })
    }

    /// A scan takes the filter above it and keeps all of it as remaining, as Flink's
    /// filesystem source does (it shows in EXPLAIN; every row is still read and filtered).
    fn source_abilities(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        ctx: &FactoryContext<'_>,
    ) -> Result<SourceAbilities> {
        let built = SourceAbilities::of(&self.create_source(table, options, ctx)?);
        Ok(SourceAbilities { accepts_filters: true, ..built })
    }

    fn create_sink(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        ctx: &FactoryContext<'_>,
    ) -> Result<SinkProvider> {
        let (path, parallelism) = common_options(options, table)?;
        let format = ctx.format(&table.schema, options)?;
        let id = format!("{:016x}", rand::random::<u64>());
        let table_name = table.name.clone();
        Ok(SinkProvider {
            parallelism,
            changelog_mode: SinkChangelogMode::Append,
            factory: Arc::new(move |info| {
                Box::new(FileSink::new(table_name.clone(), path.clone(), format.encoder(), &id, info.index))
            }),
        })
    }
}
