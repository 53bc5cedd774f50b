//! The connector registry: `'connector' = '…'` to a factory that resolves the table's options
//! for a role ([`crate::resolved`]); `'format' = '…'` to a format factory.

use std::collections::BTreeMap;
use std::sync::Arc;

use weir_runtime::Clock;

use crate::api::{
    ConnectorFactory, FactoryContext, LookupSource, MetadataColumn, MetadataKey, ScanContext, SinkContext,
    SinkProvider, SourceProvider, TableDescriptor,
};
use crate::blackhole::BlackholeFactory;
use crate::datagen::DatagenFactory;
use crate::error::{Error, Result};
use crate::filesystem::FilesystemFactory;
use crate::format::avro::AvroFormatFactory;
use crate::format::cdc::{CdcFormatFactory, Flavor};
use crate::format::{csv::CsvFormatFactory, json::JsonFormatFactory, raw::RawFormatFactory, FormatFactory};
use crate::jdbc::PgFactory;
use crate::kafka::{Connector as KafkaConnector, KafkaFactory};
use crate::managed::{ManagedFactory, TableStore};
use crate::nexmark::NexmarkFactory;
use crate::options::TableOptions;
use crate::print::{PrintFactory, PrintTarget};
use crate::resolved::{LookupTable, SinkTable, SourceTable};

/// All connectors and formats weir knows, by identifier.
#[derive(Clone)]
pub struct ConnectorRegistry {
    connectors: BTreeMap<&'static str, Arc<dyn ConnectorFactory>>,
    formats: BTreeMap<&'static str, Arc<dyn FormatFactory>>,
    /// The table store that keeps tables declared without `'connector'`, once one is open.
    store: Option<Arc<TableStore>>,
}

impl Default for ConnectorRegistry {
    /// The built-in connectors (`datagen`, `print`, `blackhole`, `filesystem`) and formats
    /// (`csv`, `json`); `print` writes to the process's standard output or error.
    fn default() -> Self {
        Self::with_print_target(PrintTarget::Console)
    }
}

impl ConnectorRegistry {
    /// The built-ins, with `print` writing to `target` (tests capture it in a buffer).
    pub fn with_print_target(target: PrintTarget) -> Self {
        let mut registry = ConnectorRegistry { connectors: BTreeMap::new(), formats: BTreeMap::new(), store: None };
        registry.register(Arc::new(DatagenFactory));
        registry.register(Arc::new(NexmarkFactory));
        registry.register(Arc::new(PrintFactory { target }));
        registry.register(Arc::new(BlackholeFactory));
        registry.register(Arc::new(FilesystemFactory));
        registry.register(Arc::new(PgFactory::jdbc()));
        registry.register(Arc::new(PgFactory::hologres()));
        registry.register(Arc::new(KafkaFactory(KafkaConnector::Kafka)));
        registry.register(Arc::new(KafkaFactory(KafkaConnector::Upsert)));
        registry.register_format(Arc::new(CsvFormatFactory));
        registry.register_format(Arc::new(JsonFormatFactory));
        registry.register_format(Arc::new(RawFormatFactory));
        registry.register_format(Arc::new(AvroFormatFactory));
        registry.register_format(Arc::new(CdcFormatFactory(Flavor::Debezium)));
        registry.register_format(Arc::new(CdcFormatFactory(Flavor::Canal)));
        registry.register_format(Arc::new(CdcFormatFactory(Flavor::Maxwell)));
        registry
    }

    /// Adds (or replaces) a connector.
    pub fn register(&mut self, factory: Arc<dyn ConnectorFactory>) {
        self.connectors.insert(factory.identifier(), factory);
    }

    /// Adds (or replaces) a format.
    pub fn register_format(&mut self, factory: Arc<dyn FormatFactory>) {
        self.formats.insert(factory.identifier(), factory);
    }

    /// Keeps the tables declared without `'connector'` in `store` (none: such tables are an error).
    pub fn set_table_store(&mut self, store: Option<Arc<TableStore>>) {
        self.store = store;
    }

    /// The table store of managed tables, when one is open.
    pub fn table_store(&self) -> Option<&Arc<TableStore>> {
        self.store.as_ref()
    }

    fn factory(&self, options: &mut TableOptions) -> Result<(String, Arc<dyn ConnectorFactory>)> {
        let Some(identifier) = options.optional("connector").map(str::to_string) else {
            let store = self.store.as_ref().ok_or(Error::MissingConnector)?;
            let factory: Arc<dyn ConnectorFactory> = Arc::new(ManagedFactory::new(Arc::clone(store)));
            return Ok((crate::managed::IDENTIFIER.to_string(), factory));
        };
        let factory = self.connectors.get(identifier.as_str()).ok_or_else(|| Error::UnknownConnector {
            identifier: identifier.clone(),
            available: self.connectors.keys().map(|k| k.to_string()).collect(),
        })?;
        Ok((identifier, Arc::clone(factory)))
    }

    /// Resolves `table` as a scan's source (see [`crate::resolved`]).
    ///
    /// # Errors
    /// An unknown connector or format, or invalid options (unknown, missing, malformed).
    pub fn resolve_source(&self, table: &TableDescriptor) -> Result<SourceTable> {
        let resolved = self.ask(table, |f, o, c| {
            check_metadata(
                table,
                f.readable_metadata(),
                "DynamicTableSource",
                "SupportsReadingMetadata",
                "read from the given source",
                "reading",
            )?;
            f.resolve_source(table, o, c)
        })?;
        Ok(SourceTable::new(table.clone(), resolved))
    }

    /// Resolves `table` as a sink.
    ///
    /// # Errors
    /// An unknown connector or format, or invalid options (unknown, missing, malformed).
    pub fn resolve_sink(&self, table: &TableDescriptor) -> Result<SinkTable> {
        let resolved = self.ask(table, |f, o, c| {
            check_metadata(
                table,
                f.writable_metadata(),
                "DynamicTableSink",
                "SupportsWritingMetadata",
                "written to the given sink",
                "writing",
            )?;
            if !table.partition_keys.is_empty() && !f.supports_partitioning() {
                return Err(Error::Validation(format!(
                    "Table '{}' is a partitioned table, but the underlying DynamicTableSink doesn't implement the \
                     SupportsPartitioning interface.",
                    table.qualified_name()
                )));
            }
            f.resolve_sink(table, o, c)
        })?;
        Ok(SinkTable::new(table.clone(), resolved))
    }

    /// Resolves `table` for lookup joins.
    ///
    /// # Errors
    /// A connector without lookups, or invalid options.
    pub fn resolve_lookup(&self, table: &TableDescriptor) -> Result<LookupTable> {
        let resolved = self.ask(table, |f, o, c| {
            check_metadata(table, &[], "LookupTableSource", "SupportsReadingMetadata", "looked up", "lookups")?;
            f.resolve_lookup(table, o, c)
        })?;
        Ok(LookupTable::new(table.clone(), resolved))
    }

    /// Resolves `table` as a source and builds it for a plain scan (the library's pipelines).
    ///
    /// # Errors
    /// What [`Self::resolve_source`] and [`SourceTable::create`] report.
    pub fn create_source(&self, table: &TableDescriptor) -> Result<SourceProvider> {
        self.resolve_source(table)?.create(&ScanContext::default())
    }

    /// Resolves `table` as a sink and builds it for unbounded writes of every column.
    ///
    /// # Errors
    /// What [`Self::resolve_sink`] and [`SinkTable::create`] report.
    pub fn create_sink(&self, table: &TableDescriptor) -> Result<SinkProvider> {
        self.resolve_sink(table)?.create(&SinkContext::default())
    }

    /// Resolves `table` for lookups and offers it behind its cache, with expiry read from `clock`.
    ///
    /// # Errors
    /// What [`Self::resolve_lookup`] and [`LookupTable::create`] report.
    pub fn create_lookup(&self, table: &TableDescriptor, clock: Arc<dyn Clock>) -> Result<LookupSource> {
        self.resolve_lookup(table)?.create(clock)
    }

    /// Asks the factory of `table` with its options, then checks that no option went unread;
    /// an error names the table ([`Error::InTable`]).
    fn ask<T>(
        &self,
        table: &TableDescriptor,
        question: impl FnOnce(&dyn ConnectorFactory, &mut TableOptions, &FactoryContext<'_>) -> Result<T>,
    ) -> Result<T> {
        let asked = || {
            let mut options = TableOptions::new(crate::legacy::current_options(&table.options));
            let (identifier, factory) = self.factory(&mut options)?;
            let ctx = FactoryContext { formats: &self.formats };
            let answer = question(factory.as_ref(), &mut options, &ctx)?;
            options.finish(&identifier)?;
            Ok(answer)
        };
        asked().map_err(|error| match error {
            Error::InTable { .. } => error,
            error => Error::InTable { table: table.name.clone(), source: Box::new(error) },
        })
    }
}

/// Checks `table`'s metadata columns against what the connector offers for a role, with
/// Flink's messages: a connector without metadata refuses any; an unknown key lists the ones
/// offered; a column of another type than the key's names it.
fn check_metadata(
    table: &TableDescriptor,
    offered: &[MetadataKey],
    interface: &str,
    ability: &str,
    done: &str,
    role: &str,
) -> Result<()> {
    let columns: Vec<&MetadataColumn> = table.metadata.iter().filter(|m| role != "writing" || !m.is_virtual).collect();
    if columns.is_empty() {
        return Ok(());
    }
    if offered.is_empty() {
        return Err(Error::Validation(format!(
            "Table '{}' declares metadata columns, but the underlying {interface} doesn't implement the {ability} \
             interface. Therefore, metadata cannot be {done}.",
            table.qualified_name()
        )));
    }
    for m in columns {
        let field = &table.schema.fields[m.position];
        let Some(key) = offered.iter().find(|k| k.key == m.key) else {
            let keys: Vec<&str> = offered.iter().map(|k| k.key).collect();
            return Err(Error::Validation(format!(
                "Invalid metadata key '{}' in column '{}' of table '{}'. The {interface} class supports the \
                 following metadata keys for {role}:\n{}",
                m.key,
                field.name,
                table.qualified_name(),
                keys.join("\n")
            )));
        };
        let expected = weir_runtime::parse::parse_type(key.data_type.trim_end_matches(" NOT NULL"))
            .map_err(|e| Error::Validation(format!("metadata type '{}': {e}", key.data_type)))?;
        if field.data_type.logical != expected.logical {
            return Err(Error::Validation(format!(
                "Invalid data type for metadata column '{}' of table '{}'. The column cannot be declared as '{}' \
                 because the type must be castable from metadata type '{}'; weir reads it as '{}' only.",
                field.name,
                table.qualified_name(),
                field.data_type,
                key.data_type,
                key.data_type.trim_end_matches(" NOT NULL")
            )));
        }
    }
    Ok(())
}
