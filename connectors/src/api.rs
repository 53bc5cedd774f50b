//! The connector contract: what a table is ([`TableDescriptor`]), what a connector offers for
//! it (abilities, providers, contexts) and the factory every connector implements
//! ([`ConnectorFactory`], resolving to the tables of [`ResolvedSource`], [`ResolvedSink`] and
//! [`ResolvedLookup`]). Connectors build on this module; the list of built-ins is
//! `ConnectorRegistry` (`registry.rs`), above them.

use std::collections::BTreeMap;
use std::sync::Arc;

use weir_runtime::graph::{OperatorFactory, SourceFactory};
use weir_runtime::{LookupProvider, Schema, Value};

use crate::error::{Error, Result};
use crate::format::{Format, FormatFactory};
use crate::lookup_cache::LookupCacheOptions;
use crate::options::TableOptions;
pub use weir_store::ScanChanges;

/// The catalog every session starts in.
pub const DEFAULT_CATALOG: &str = "default_catalog";
/// The database of [`DEFAULT_CATALOG`] every session starts in.
pub const DEFAULT_DATABASE: &str = "default_database";

/// The catalog, database and table a table's name stands for. A table of the default catalog
/// and database is named by its last part alone (`orders`); a table of another is named by all
/// three (`mem.sales.orders`), as the planner's catalog keys them.
pub fn name_parts(name: &str) -> [&str; 3] {
    match name.splitn(3, '.').collect::<Vec<_>>()[..] {
        [catalog, database, table] => [catalog, database, table],
        _ => [DEFAULT_CATALOG, DEFAULT_DATABASE, name],
    }
}

/// The full name Flink prints for a table: `default_catalog.default_database.name`, or the three
/// parts of a table of another catalog or database ([`name_parts`]).
pub fn qualified_name(name: &str) -> String {
    name_parts(name).join(".")
}

/// A table as the user declared it: name, columns and `WITH` options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDescriptor {
    /// The table's name, used in operator names and errors.
    pub name: String,
    /// The columns a scan of the table produces (a sink takes): the physical ones and the
    /// metadata ones ([`Self::metadata`]), in the order declared.
    pub schema: Schema,
    /// The `WITH (…)` options, `connector` included.
    pub options: BTreeMap<String, String>,
    /// The columns of `PRIMARY KEY (…) NOT ENFORCED`, by index; empty without one.
    pub primary_key: Vec<usize>,
    /// The metadata columns (`name TYPE METADATA [FROM 'key'] [VIRTUAL]`), in schema order.
    pub metadata: Vec<MetadataColumn>,
    /// The columns of `PARTITIONED BY (…)`, by name, in order; empty for a table without
    /// partitions. Only a connector that says it writes partitions
    /// ([`ConnectorFactory::supports_partitioning`]) is given a sink of a partitioned table.
    pub partition_keys: Vec<String>,
}

/// A column whose value is the connector's metadata of a record (Kafka's `timestamp`,
/// `partition`, …), as Flink's `SupportsReadingMetadata` / `SupportsWritingMetadata` offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataColumn {
    /// The column's position in [`TableDescriptor::schema`].
    pub position: usize,
    /// The metadata key (`FROM 'key'`, else the column's name).
    pub key: String,
    /// `VIRTUAL`: read only; not a column of the table's sink.
    pub is_virtual: bool,
}

/// A metadata key a connector offers: its name and type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetadataKey {
    /// The key.
    pub key: &'static str,
    /// Its type, as Flink's DDL writes it (`TIMESTAMP_LTZ(3) NOT NULL`).
    pub data_type: &'static str,
}

impl TableDescriptor {
    /// The full name Flink prints for the table; see [`qualified_name`].
    pub fn qualified_name(&self) -> String {
        qualified_name(&self.name)
    }

    /// A descriptor from a name, a schema and `(key, value)` options.
    pub fn new(name: impl Into<String>, schema: Schema, options: &[(&str, &str)]) -> Self {
        TableDescriptor {
            name: name.into(),
            schema,
            options: options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            primary_key: Vec::new(),
            metadata: Vec::new(),
            partition_keys: Vec::new(),
        }
    }

    /// The physical columns: the schema without its metadata columns.
    pub fn physical_schema(&self) -> Schema {
        Schema {
            fields: (0..self.schema.fields.len())
                .filter(|i| !self.metadata.iter().any(|m| m.position == *i))
                .map(|i| self.schema.fields[i].clone())
                .collect(),
        }
    }

    /// The descriptor a sink writes: without the `VIRTUAL` metadata columns.
    pub fn for_writing(&self) -> TableDescriptor {
        let kept: Vec<usize> = (0..self.schema.fields.len())
            .filter(|i| !self.metadata.iter().any(|m| m.position == *i && m.is_virtual))
            .collect();
        let new_position = |old: usize| kept.iter().position(|&k| k == old);
        TableDescriptor {
            name: self.name.clone(),
            schema: Schema { fields: kept.iter().map(|&i| self.schema.fields[i].clone()).collect() },
            options: self.options.clone(),
            primary_key: self.primary_key.iter().filter_map(|&k| new_position(k)).collect(),
            metadata: self
                .metadata
                .iter()
                .filter_map(|m| Some(MetadataColumn { position: new_position(m.position)?, ..m.clone() }))
                .collect(),
            partition_keys: self.partition_keys.clone(),
        }
    }

    /// The descriptor with the primary key `columns` (names of its columns; unknown names are ignored).
    pub fn with_primary_key(mut self, columns: &[&str]) -> Self {
        self.primary_key =
            columns.iter().filter_map(|c| self.schema.fields.iter().position(|f| f.name == *c)).collect();
        self
    }
}

/// A source ready to be placed in a job graph.
#[derive(Clone)]
pub struct SourceProvider {
    /// The parallelism the connector asks for (`scan.parallelism`), if any.
    pub parallelism: Option<usize>,
    /// Whether the source ends by itself.
    pub bounded: bool,
    /// Builds the source of each subtask.
    pub factory: SourceFactory,
}

/// Which changes a sink takes, as Flink's `DynamicTableSink#getChangelogMode` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkChangelogMode {
    /// Only `+I` (e.g. `filesystem`).
    Append,
    /// `+I`, `+U` and `-D` without `-U` (e.g. `blackhole`).
    Upsert,
    /// Every row kind, `-U` included (e.g. `print`).
    Retract,
    /// What the input has, without `-U`: [`Self::Append`] for insert-only input, else
    /// [`Self::Upsert`] (e.g. managed tables, as Fluss's sink asks).
    UpsertUnlessAppend,
}

impl SinkChangelogMode {
    /// The mode the sink takes for input that is `insert_only` or not.
    pub fn for_input(self, insert_only: bool) -> SinkChangelogMode {
        match self {
            SinkChangelogMode::UpsertUnlessAppend if insert_only => SinkChangelogMode::Append,
            SinkChangelogMode::UpsertUnlessAppend => SinkChangelogMode::Upsert,
            other => other,
        }
    }
}

/// A sink ready to be placed in a job graph.
#[derive(Clone)]
pub struct SinkProvider {
    /// The parallelism the connector asks for (`sink.parallelism`), if any.
    pub parallelism: Option<usize>,
    /// The changes the sink takes.
    pub changelog_mode: SinkChangelogMode,
    /// Builds the sink operator of each subtask.
    pub factory: OperatorFactory,
}

/// A table that can be looked up, as its connector offers it.
#[derive(Clone)]
pub struct LookupSource {
    /// Builds lookup functions by key columns.
    pub provider: Arc<dyn LookupProvider>,
    /// Whether lookups may run concurrently (Flink's `AsyncLookupFunctionProvider`); when not,
    /// lookup joins on the table look up one row at a time.
    pub supports_async: bool,
    /// The table's `lookup.cache` options.
    pub cache: LookupCacheOptions,
}

/// What a table's scan offers, answered from its options before anything is built or read
/// (Flink's `ScanTableSource` abilities).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceAbilities {
    /// The parallelism the connector asks for (`scan.parallelism`), if any.
    pub parallelism: Option<usize>,
    /// Whether the scan ends by itself.
    pub bounded: bool,
    /// The changes the scan emits (`ScanTableSource#getChangelogMode`): a snapshot read emits
    /// inserts; a changelog (a CDC format, a table store's stream) emits its changes, bounded
    /// or not.
    pub changes: ScanChanges,
    /// Whether the scan can read only the row of one primary key ([`ScanContext::key`]): a
    /// filter that pins the whole key is pushed into it.
    pub point_reads: bool,
    /// Whether the scan takes the filter above it (Flink's `SupportsFilterPushDown`): it may
    /// skip what the filter rejects, and the filter still runs above it.
    pub accepts_filters: bool,
    /// Whether the scan reads only the columns a query uses (Flink's
    /// `SupportsProjectionPushDown`); without it the plan reads every column and projects them in
    /// a Calc above the scan, as Flink plans such a source.
    pub accepts_projection: bool,
}

impl SourceAbilities {
    /// A plain scan of `parallelism` that ends by itself or not: inserts only, no point reads,
    /// no filters taken, projections taken.
    pub fn plain(parallelism: Option<usize>, bounded: bool) -> Self {
        SourceAbilities {
            parallelism,
            bounded,
            changes: ScanChanges::InsertOnly,
            point_reads: false,
            accepts_filters: false,
            accepts_projection: true,
        }
    }
}

/// What a table's sink offers (Flink's `DynamicTableSink#getChangelogMode` and parallelism).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SinkAbilities {
    /// The parallelism the connector asks for (`sink.parallelism`), if any.
    pub parallelism: Option<usize>,
    /// The changes the sink takes.
    pub changelog_mode: SinkChangelogMode,
}

/// What a table offers for lookup joins (Flink's `LookupTableSource` runtime providers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookupAbilities {
    /// Whether lookups may run concurrently (an async lookup function).
    pub supports_async: bool,
}

/// One partition of a partitioned table, as listed when a query is planned (Flink's
/// `SupportsPartitionPushDown#listPartitions`).
#[derive(Debug, Clone, PartialEq)]
pub struct TablePartition {
    /// Its `key=value` pairs, in `PARTITIONED BY` order, as its directories name them
    /// (unescaped): `dt=2024-01-02`.
    pub spec: Vec<(String, String)>,
    /// The values of its partition columns, in `PARTITIONED BY` order, typed as the columns.
    pub values: Vec<Value>,
}

impl std::fmt::Display for TablePartition {
    /// As Flink prints a partition in EXPLAIN: `{dt=2024-01-02, hr=10}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.spec.iter().map(|(k, v)| format!("{k}={v}")).collect();
        write!(f, "{{{}}}", parts.join(", "))
    }
}

/// Which partitions of a partitioned table a scan reads (Flink's partition pruning): given the
/// values of a partition's columns, in `PARTITIONED BY` order, whether its rows can pass the
/// query's filter. A partition it says no to is not read at all.
#[derive(Clone)]
pub struct PartitionFilter(pub Arc<dyn Fn(&[Value]) -> bool + Send + Sync>);

impl std::fmt::Debug for PartitionFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PartitionFilter")
    }
}

/// What a scan is for, besides the table.
#[derive(Debug, Clone, Default)]
pub struct ScanContext {
    /// The job runs in batch mode (`'execution.runtime-mode' = 'batch'`): the scan reads what
    /// the table holds now and ends.
    pub batch: bool,
    /// The query pins the whole primary key to these values (in key order): a point query,
    /// read once.
    pub key: Option<Vec<Value>>,
    /// The job's `table.exec.source.idle-timeout`, when set: a split of the source (a Kafka
    /// partition) without records this long holds no watermark back.
    pub idle_timeout: Option<std::time::Duration>,
    /// The partitions to read, when the query's filter rules some out; `None`: all of them.
    pub partitions: Option<PartitionFilter>,
    /// The job is built to start now (not only planned, as for `weir compat`): a scan may
    /// check what it will read is there, so that a mistake is reported at the table's option
    /// before the job starts.
    pub job_starts: bool,
}

/// What a sink is for, besides the table.
#[derive(Debug, Clone, Default)]
pub struct SinkContext {
    /// Every source of the job ends by itself.
    pub bounded_input: bool,
    /// The columns of `INSERT INTO t (columns) …`, by index; `None` when not given.
    pub targets: Option<Vec<usize>>,
}

/// What a connector factory may use besides the table itself.
pub struct FactoryContext<'a> {
    /// The registry's formats, by identifier.
    pub formats: &'a BTreeMap<&'static str, Arc<dyn FormatFactory>>,
}

impl FactoryContext<'_> {
    /// The format named by the `format` option, validated with its `<format>.*` options.
    ///
    /// # Errors
    /// A missing `format` option, an unknown format or invalid format options.
    pub fn format(&self, schema: &Schema, options: &mut TableOptions) -> Result<Arc<dyn Format>> {
        let Some(identifier) = options.required("format").map(str::to_string) else {
            return Err(Error::MissingOptions { missing: vec!["format".into()] });
        };
        let factory = self.formats.get(identifier.as_str()).ok_or_else(|| Error::UnknownFormat {
            identifier: identifier.clone(),
            available: self.formats.keys().map(|k| k.to_string()).collect(),
        })?;
        factory.create(schema, options)
    }
}

impl FactoryContext<'_> {
    /// The format named by `<prefix>format` (`key.format`, `value.format`), validated with its
    /// `<prefix><format>.*` options; `None` when `<prefix>format` is not given.
    ///
    /// # Errors
    /// An unknown format or invalid format options.
    pub fn format_under(
        &self,
        prefix: &str,
        schema: &Schema,
        options: &mut TableOptions,
    ) -> Result<Option<Arc<dyn Format>>> {
        if options.optional(&format!("{prefix}format")).is_none() {
            return Ok(None);
        }
        options.nested(prefix, |inner| self.format(schema, inner)).map(Some)
    }
}

/// Resolves the tables of one kind of connector for their roles: reads and types their options,
/// and answers what they offer; builds nothing (see [`crate::resolved`]).
pub trait ConnectorFactory: Send + Sync {
    /// The value of `'connector'` that selects this factory.
    fn identifier(&self) -> &'static str;

    /// The metadata a scan of the connector's tables reads (Flink's `SupportsReadingMetadata`);
    /// the default: none, and a table declaring metadata columns is refused as a source.
    fn readable_metadata(&self) -> &'static [MetadataKey] {
        &[]
    }

    /// The metadata its sinks write (Flink's `SupportsWritingMetadata`); the default: none.
    fn writable_metadata(&self) -> &'static [MetadataKey] {
        &[]
    }

    /// Whether its sinks write a partitioned table (`PARTITIONED BY`) partition by partition
    /// (Flink's `SupportsPartitioning`); the default: no, and such a table is refused as a sink.
    fn supports_partitioning(&self) -> bool {
        false
    }

    /// Reads the options of `table` as a scan's source. The default refuses: a sink-only
    /// connector.
    ///
    /// # Errors
    /// Invalid options, named as Flink names them.
    fn resolve_source(
        &self,
        _table: &TableDescriptor,
        _options: &mut TableOptions,
        _ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSource>> {
        Err(Error::Validation(format!(
            "Connector '{}' can only be used as a sink. It cannot be used as a source.",
            self.identifier()
        )))
    }

    /// Reads the options of `table` as a sink. The default refuses: a source-only connector.
    ///
    /// # Errors
    /// Invalid options, named as Flink names them.
    fn resolve_sink(
        &self,
        _table: &TableDescriptor,
        _options: &mut TableOptions,
        _ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSink>> {
        Err(Error::Validation(format!(
            "Connector '{}' can only be used as a source. It cannot be used as a sink.",
            self.identifier()
        )))
    }

    /// Reads the options of `table` for lookup joins. The default refuses.
    ///
    /// # Errors
    /// A connector without lookups, or invalid options.
    fn resolve_lookup(
        &self,
        table: &TableDescriptor,
        _options: &mut TableOptions,
        _ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedLookup>> {
        Err(no_lookup(self.identifier(), table))
    }
}

/// A connector's lookup capability, for [`ConnectorFactory::resolve_lookup`]'s default.
pub(crate) fn no_lookup(identifier: &str, table: &TableDescriptor) -> Error {
    Error::Validation(format!(
        "Temporal table join requires a table that can be looked up, but connector '{identifier}' of table '{}' \
         offers no lookups (connectors that do: hologres, jdbc).",
        table.qualified_name()
    ))
}

/// Reads `sink.parallelism`: an integer, which must be positive (Flink's
/// `Invalid configured parallelism 0 for table '…'.` otherwise).
pub(crate) fn sink_parallelism(options: &mut TableOptions, table: &TableDescriptor) -> Result<Option<usize>> {
    match options.parse::<i64>("sink.parallelism", "an integer")? {
        Some(n) if n <= 0 => Err(Error::Validation(format!(
            "Invalid configured parallelism {n} for table '{}'.",
            table.qualified_name()
        ))),
        other => Ok(other.map(|n| n as usize)),
    }
}

/// A table's connector resolved as a scan's source.
pub trait ResolvedSource: Send + Sync {
    /// What a scan for `scan` offers, from the resolved options alone.
    fn abilities(&self, scan: &ScanContext) -> SourceAbilities;

    /// Builds the source for `scan`: prepares its subtasks' constructor; opens, connects to and
    /// reads nothing until the job runs.
    ///
    /// # Errors
    /// What only building can find (a table store that cannot keep the table).
    fn create(&self, scan: &ScanContext) -> Result<SourceProvider>;

    /// The partitions of a partitioned table, listed now, in a stable order; `None` for a table
    /// that is not partitioned, or whose connector does not list them (the default).
    ///
    /// # Errors
    /// A table whose files cannot be listed, or a partition directory whose value is not of
    /// its column's type.
    fn partitions(&self) -> Result<Option<Vec<TablePartition>>> {
        Ok(None)
    }
}

/// A table's connector resolved as a sink.
pub trait ResolvedSink: Send + Sync {
    /// What the sink offers for the writes `sink` describes.
    ///
    /// # Errors
    /// Target columns (`INSERT INTO t (columns)`) the table refuses.
    fn abilities(&self, sink: &SinkContext) -> Result<SinkAbilities>;

    /// Builds the sink for the writes `sink` describes (see [`ResolvedSource::create`]).
    ///
    /// # Errors
    /// What only building can find, and the target columns [`Self::abilities`] refuses.
    fn create(&self, sink: &SinkContext) -> Result<SinkProvider>;
}

/// A table's connector resolved for lookup joins.
pub trait ResolvedLookup: Send + Sync {
    /// What the table offers for lookups.
    fn abilities(&self) -> LookupAbilities;

    /// Offers the table for lookups (before any cache: see [`crate::resolved::LookupTable::create`]).
    ///
    /// # Errors
    /// What only building can find.
    fn create(&self) -> Result<LookupSource>;
}
