//! Managed tables: a `CREATE TABLE` without `'connector'` is kept by weir's built-in table
//! store (`weir-store`) in the session's data directory (`table.store.path`), with Fluss's merge
//! engines.
//!
//! - Writes ([`sink`]) merge into the stored row of each primary key; over bounded input a
//!   statement is one atomic, durable batch.
//! - Scans ([`source`]) read the current rows and end (batch mode, or a query pinning the whole
//!   primary key), or read them and then follow every change as a changelog (`-U/+U` per
//!   merge, as Fluss emits them; `'scan.startup.mode'` `full` | `latest`).
//! - Lookups ([`lookup`]) read the stored row of a key.
//!
//! Options: `table.merge-engine`, `table.merge-engine.versioned.ver-column`,
//! `table.delete.behavior`, `fields.<column>.agg`, `fields.<column>.<function>.delimiter`,
//! `table.changelog.image` (`FULL` only), `scan.startup.mode`, `sink.ignore-delete` and the
//! `lookup.cache` options.

pub mod lookup;
pub mod sink;
pub mod source;
pub mod staged;
pub mod store;

use std::sync::Arc;

use weir_store::MergeEngine;

use crate::api::{
    qualified_name, ConnectorFactory, FactoryContext, LookupAbilities, LookupSource, ScanContext, SinkAbilities,
    SinkChangelogMode, SinkContext, SinkProvider, SourceAbilities, SourceProvider, TableDescriptor,
};
use crate::api::{ResolvedLookup, ResolvedSink, ResolvedSource};
use crate::error::{Error, Result};
use crate::lookup_cache::LookupCacheOptions;
use crate::options::TableOptions;

pub use store::{merger_of, ManagedTable, TableStore};

/// The name option errors give managed tables in place of a connector identifier.
pub const IDENTIFIER: &str = "managed table";

/// Whether `table` is a managed table (declared without `'connector'`).
pub fn is_managed(table: &TableDescriptor) -> bool {
    !table.options.contains_key("connector") && !crate::legacy::is_legacy(&table.options)
}

pub use weir_store::ScanChanges;

/// The changes a following scan of managed table `table` emits.
///
/// # Errors
/// Options the merge engines reject.
pub fn scan_changes(table: &TableDescriptor) -> Result<ScanChanges> {
    Ok(merger_of(table)?.scan_changes())
}

/// The options of a managed table that its scans, sinks and lookups read (the merge options are
/// the [`weir_store::RowMerger`]'s).
struct ManagedOptions {
    /// `'scan.startup.mode' = 'full'` (the default): a following scan starts with the current
    /// rows; `latest`: after them.
    full_scan: bool,
    /// `'sink.ignore-delete'`
    ignore_delete: bool,
    /// The `lookup.cache` options.
    cache: LookupCacheOptions,
}

/// Declares and reads every option of a managed table.
fn read_options(table: &TableDescriptor, options: &mut TableOptions) -> Result<ManagedOptions> {
    for key in ["table.merge-engine", "table.merge-engine.versioned.ver-column", "table.delete.behavior"] {
        options.optional(key);
    }
    for key in table.options.keys().filter(|k| k.starts_with("fields.")) {
        options.optional(key);
    }
    let ignore_delete = options.boolean("sink.ignore-delete", false)?;
    if options.one_of("table.changelog.image", &["FULL", "WAL"], "FULL")? == "WAL" {
        let aggregation =
            table.options.get("table.merge-engine").is_some_and(|e| e.trim().eq_ignore_ascii_case("aggregation"));
        return Err(Error::Validation(if aggregation {
            "Table with 'AGGREGATION' merge engine does not support 'WAL' changelog image mode. Aggregation merge \
             engine tables require FULL changelog image mode for correct UNDO recovery. Please set \
             'table.changelog.image' to 'FULL' or remove the setting."
                .to_string()
        } else {
            "weir's table store emits FULL changelog images only (-U before every +U); \
             'table.changelog.image' = 'WAL' is not supported yet."
                .to_string()
        }));
    }
    let full_scan = options.one_of("scan.startup.mode", &["full", "latest"], "full")? == "full";
    let cache = LookupCacheOptions::from_options(options)?;
    Ok(ManagedOptions { full_scan, ignore_delete, cache })
}

/// Checks every option of managed table `table`: unknown keys, malformed values and what the
/// merge engines reject.
///
/// # Errors
/// The first option that is wrong, with Flink's or Fluss's message.
pub fn validate(table: &TableDescriptor) -> Result<()> {
    use weir_runtime::LogicalType;
    if let Some(field) = table.schema.fields.iter().find(|f| {
        matches!(
            f.data_type.logical,
            LogicalType::Array(_) | LogicalType::Map(..) | LogicalType::Multiset(_) | LogicalType::Row(_)
        )
    }) {
        return Err(Error::Validation(format!(
            "Column '{}' of table '{}' has type {}: weir's table store holds scalar types only (no ARRAY, MAP or ROW).",
            field.name,
            qualified_name(&table.name),
            field.data_type
        )));
    }
    let mut options = TableOptions::new(table.options.clone());
    read_options(table, &mut options)?;
    options.finish(IDENTIFIER)?;
    merger_of(table).map(|_| ())
}

/// Builds the scans, sinks and lookups of the managed tables of one [`TableStore`].
pub struct ManagedFactory {
    store: Arc<TableStore>,
}

impl ManagedFactory {
    /// The factory of the tables in `store`.
    pub fn new(store: Arc<TableStore>) -> Self {
        ManagedFactory { store }
    }
}

impl ManagedFactory {
    /// Reads every option of `table` and its merge rules, whatever role it is resolved for.
    fn resolve(&self, table: &TableDescriptor, options: &mut TableOptions) -> Result<Arc<ManagedResolved>> {
        let options = read_options(table, options)?;
        let merger = merger_of(table)?;
        Ok(Arc::new(ManagedResolved { store: Arc::clone(&self.store), table: table.clone(), options, merger }))
    }
}

impl ConnectorFactory for ManagedFactory {
    fn identifier(&self) -> &'static str {
        IDENTIFIER
    }

    fn resolve_source(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        _ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSource>> {
        Ok(self.resolve(table, options)?)
    }

    fn resolve_sink(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        _ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSink>> {
        Ok(self.resolve(table, options)?)
    }

    fn resolve_lookup(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        _ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedLookup>> {
        Ok(self.resolve(table, options)?)
    }
}

/// A managed table resolved for any of its roles; the table store keeps it (creating it when
/// new) only once a scan, sink or lookup of it is built.
struct ManagedResolved {
    store: Arc<TableStore>,
    table: TableDescriptor,
    options: ManagedOptions,
    merger: weir_store::RowMerger,
}

impl ManagedResolved {
    /// The target columns of a partial write (fewer than all), checked against the merge engine.
    fn partial_targets(&self, sink: &SinkContext) -> Result<Option<Vec<usize>>> {
        let targets = sink.targets.clone().filter(|t| t.len() < self.table.schema.fields.len());
        if let Some(targets) = &targets {
            check_partial_write(&self.table.name, &self.merger, targets)?;
        }
        Ok(targets)
    }
}

impl ResolvedSource for ManagedResolved {
    fn abilities(&self, scan: &ScanContext) -> SourceAbilities {
        SourceAbilities {
            parallelism: Some(1),
            bounded: scan.batch || scan.key.is_some(),
            // A snapshot (batch mode, one key) reads current rows: inserts.
            changes: if scan.batch || scan.key.is_some() {
                ScanChanges::InsertOnly
            } else {
                self.merger.scan_changes()
            },
            point_reads: true,
            accepts_filters: false,
            accepts_projection: true,
        }
    }

    fn create(&self, scan: &ScanContext) -> Result<SourceProvider> {
        let managed = self.store.table(&self.table)?;
        let bounded = scan.batch || scan.key.is_some();
        // The scan runs at parallelism 1: its one subtask takes what it reads.
        let read = match &scan.key {
            Some(key) => source::ScanRead::Key(managed, key.clone()),
            None if bounded => source::ScanRead::Snapshot(managed),
            None => {
                // The current rows are taken even when the scan starts after them: a restored
                // scan compares them with what it had emitted.
                let (rows, changes) = managed.follow(true)?;
                source::ScanRead::Following { rows, emit_rows: self.options.full_scan, changes }
            }
        };
        let read = Arc::new(parking_lot::Mutex::new(Some(read)));
        let (name, arity) = (self.table.name.clone(), self.table.schema.fields.len());
        let key = self.table.primary_key.clone();
        Ok(SourceProvider {
            parallelism: Some(1),
            bounded,
            factory: Arc::new(move |_| {
                Box::new(source::ManagedScan::new(name.clone(), arity, read.lock().take()).with_key(key.clone()))
            }),
        })
    }
}

impl ResolvedSink for ManagedResolved {
    fn abilities(&self, sink: &SinkContext) -> Result<SinkAbilities> {
        self.partial_targets(sink)?;
        Ok(SinkAbilities { parallelism: Some(1), changelog_mode: SinkChangelogMode::UpsertUnlessAppend })
    }

    fn create(&self, sink: &SinkContext) -> Result<SinkProvider> {
        let targets = self.partial_targets(sink)?;
        let managed = self.store.table(&self.table)?;
        let name = format!("Sink: {}", self.table.name);
        let (bounded, ignore_delete) = (sink.bounded_input, self.options.ignore_delete);
        let targets: Option<Arc<[usize]>> = targets.map(Arc::from);
        Ok(SinkProvider {
            parallelism: Some(1),
            changelog_mode: SinkChangelogMode::UpsertUnlessAppend,
            factory: Arc::new(move |_| {
                let sink = sink::ManagedSink::new(name.clone(), Arc::clone(&managed), targets.clone(), bounded);
                Box::new(sink.ignoring_deletes(ignore_delete))
            }),
        })
    }
}

impl ResolvedLookup for ManagedResolved {
    fn abilities(&self) -> LookupAbilities {
        LookupAbilities { supports_async: true }
    }

    fn create(&self) -> Result<LookupSource> {
        let managed = self.store.table(&self.table)?;
        let cache = self.options.cache;
        Ok(LookupSource { provider: Arc::new(lookup::ManagedLookup::new(managed)), supports_async: true, cache })
    }
}

/// Checks the target columns of `INSERT INTO t (columns) …`, with the messages Fluss's Flink
/// sink gives.
fn check_partial_write(table: &str, merger: &weir_store::RowMerger, targets: &[usize]) -> Result<()> {
    let name = qualified_name(table);
    let engine = match merger.engine() {
        MergeEngine::FirstRow => Some("FIRST_ROW"),
        MergeEngine::Versioned(_) => Some("VERSIONED"),
        _ => None,
    };
    if let Some(engine) = engine {
        return Err(Error::Validation(format!(
            "Table {name} uses the '{engine}' merge engine which does not support partial updates. Please make sure \
             the number of specified columns in INSERT INTO matches columns of the table."
        )));
    }
    merger.check_targets(targets).map_err(|e| Error::Validation(e.to_string()))
}
