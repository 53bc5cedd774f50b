//! weir's connectors: where rows come from and where they go.
//!
//! - The [`registry`] maps `'connector' = '…'` to a factory that resolves a table for a role
//!   ([`resolved`]): it validates the options (unknown, missing and malformed options are errors
//!   worded as Flink words them) and answers what the table offers; the resolved table builds its
//!   source, sink or lookup table when the job is built. `'format' = '…'` selects a
//!   [`format`](mod@format).
//! - Connectors: [`datagen`], [`print`](mod@print), [`blackhole`], [`filesystem`] (with the `csv` and
//!   `json` formats), and [`jdbc`] (`jdbc` and `hologres`: PostgreSQL lookups, scan and upsert
//!   sink), with the lookup caches of [`lookup_cache`].
//! - [`managed`]: tables declared without `'connector'`, kept by weir's table store with
//!   Fluss's merge engines.
//! - For the pipeline API and tests: [`MemorySource`] (a scripted source), [`GeneratorSource`]
//!   (rows computed from their number), [`CollectSink`] (rows kept in memory) and
//!   [`MemoryLookupTable`] (rows to look up, with a latency per key).

pub mod api;
pub mod batch_source;
pub mod blackhole;
pub mod collect_sink;
pub mod datagen;
pub mod error;
pub mod filesystem;
pub mod format;
pub mod generator_source;
pub mod jdbc;
pub mod kafka;
pub mod legacy;
pub mod lookup_cache;
pub mod managed;
pub mod memory_lookup;
pub mod memory_source;
pub mod nexmark;
pub mod options;
pub mod print;
pub mod projecting_source;
pub mod registry;
pub mod resolved;
pub mod row_sink;
pub mod write_in_flight;

pub use api::{
    LookupAbilities, LookupSource, MetadataColumn, MetadataKey, PartitionFilter, ResolvedLookup, ResolvedSink,
    ResolvedSource, ScanChanges, ScanContext, SinkAbilities, SinkChangelogMode, SinkContext, SinkProvider,
    SourceAbilities, SourceProvider, TableDescriptor,
};
pub use batch_source::BatchSource;
pub use blackhole::BlackholeSink;
pub use collect_sink::{BatchCollectHandle, BatchCollectSink, ChangelogBatch, CollectHandle, CollectSink};
pub use error::{Error, Result};
pub use generator_source::{GeneratorSource, RowGenerator};
pub use memory_lookup::{LookupStats, MemoryLookupTable};
pub use memory_source::{MemorySource, SourceStep};
pub use print::PrintTarget;
pub use projecting_source::ProjectingSource;
pub use registry::ConnectorRegistry;
pub use resolved::{LookupTable, SinkTable, SourceTable};
pub use row_sink::{RowConsumer, RowSink};
