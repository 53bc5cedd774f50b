//! PostgreSQL tables: the `jdbc` connector with Flink's options, and the `hologres` connector
//! (Hologres speaks the PostgreSQL protocol) with the options of Alibaba Cloud's connector.
//!
//! Both offer async lookups over a pooled connection (`hologres` only with `'async' = 'true'`;
//! otherwise lookups are sync), caches per [`crate::lookup_cache`], a bounded scan source and a
//! sink that upserts on the primary key.
//!
//! `jdbc` options: `url` (`jdbc:postgresql://host:port/database`), `table-name`, `username`,
//! `password`, `driver` (accepted, unused), `connection.max-retry-timeout` (`60 s`),
//! `lookup.max-retries` (`3`), `lookup.cache` and its `lookup.partial-cache.*` /
//! `lookup.full-cache.*` options, `lookup.pool-size` (`4`, weir's), `sink.buffer-flush.max-rows`
//! (`100`), `sink.buffer-flush.interval` (`1 s`), `sink.max-retries` (accepted),
//! `sink.parallelism`, `scan.fetch-size` (accepted).
//!
//! `hologres` options: `endpoint` (`host:port`), `dbname`, `tablename`, `username`, `password`,
//! `async` (`false`), `connectionSize` (`3`), and the `lookup.*` options above.

mod client;
mod lookup;
mod scan;
mod sink;
pub mod types;

use std::sync::Arc;
use std::time::Duration;

use weir_runtime::{DataType, SubtaskInfo};

pub use client::{PgEndpoint, PgPool};
use lookup::PgLookupProvider;
use scan::PgScanSource;
use sink::{PgSink, PgSinkSpec};

use crate::error::Result;
use crate::lookup_cache::LookupCacheOptions;
use crate::options::TableOptions;
use crate::registry::{
    ConnectorFactory, FactoryContext, LookupSource, SinkChangelogMode, SinkProvider, SourceProvider, TableDescriptor,
};

/// Where a table lives: its server and its name there.
#[derive(Clone)]
struct PgTable {
    pool: Arc<PgPool>,
    table: String,
    columns: Vec<(String, DataType)>,
    supports_async: bool,
}

impl PgTable {
    /// A copy for reading (and declaring) the options of the table's other roles.
    fn clone_for_options(&self) -> PgTable {
        self.clone()
    }
}

fn columns(table: &TableDescriptor) -> Vec<(String, DataType)> {
    table.schema.fields.iter().map(|f| (f.name.clone(), f.data_type.clone())).collect()
}

/// The `jdbc` connector (PostgreSQL).
pub struct JdbcFactory;

impl JdbcFactory {
    fn table(&self, table: &TableDescriptor, options: &mut TableOptions) -> Result<PgTable> {
        let pool_size = options.parse::<usize>("lookup.pool-size", "a positive number of connections")?.unwrap_or(4);
        let url = options.required("url").map(str::to_string);
        let name = options.required("table-name").map(str::to_string);
        let user = options.optional("username").map(str::to_string);
        let password = options.optional("password").map(str::to_string);
        options.optional("driver");
        options.optional("scan.fetch-size");
        let timeout = options.duration("connection.max-retry-timeout")?.unwrap_or(Duration::from_secs(60));
        let (Some(url), Some(name)) = (url, name) else {
            // Missing required options are reported by `finish`.
            return Ok(PgTable {
                pool: PgPool::new(PgEndpoint::from_parts("unset", "unset", None, None, "unset")?, 1),
                table: String::new(),
                columns: Vec::new(),
                supports_async: true,
            });
        };
        let mut endpoint = PgEndpoint::from_url(&url, user.as_deref(), password.as_deref())?;
        endpoint.config.connect_timeout(timeout);
        Ok(PgTable {
            pool: PgPool::new(endpoint, pool_size),
            table: name,
            columns: columns(table),
            supports_async: true,
        })
    }
}

/// The `hologres` connector, served by a PostgreSQL client.
pub struct HologresFactory;

impl HologresFactory {
    fn table(&self, table: &TableDescriptor, options: &mut TableOptions) -> Result<PgTable> {
        let endpoint = options.required("endpoint").map(str::to_string);
        let database = options.required("dbname").map(str::to_string);
        let name = options.required("tablename").map(str::to_string);
        let user = options.required("username").map(str::to_string);
        let password = options.required("password").map(str::to_string);
        let supports_async = options.boolean("async", false)?;
        let pool_size = options.parse::<usize>("connectionSize", "a positive number of connections")?.unwrap_or(3);
        let (Some(endpoint), Some(database), Some(name)) = (endpoint, database, name) else {
            return Ok(PgTable {
                pool: PgPool::new(PgEndpoint::from_parts("unset", "unset", None, None, "unset")?, 1),
                table: String::new(),
                columns: Vec::new(),
                supports_async,
            });
        };
        let shown = format!("hologres://{endpoint}/{database}");
        let endpoint = PgEndpoint::from_parts(&endpoint, &database, user.as_deref(), password.as_deref(), &shown)?;
        Ok(PgTable { pool: PgPool::new(endpoint, pool_size), table: name, columns: columns(table), supports_async })
    }
}

fn lookup_source(t: PgTable, options: &mut TableOptions) -> Result<LookupSource> {
    let max_retries = options.parse::<usize>("lookup.max-retries", "a non-negative number")?.unwrap_or(3);
    let cache = LookupCacheOptions::from_options(options)?;
    let provider = PgLookupProvider { pool: t.pool, table: t.table, columns: t.columns, max_retries };
    Ok(LookupSource { provider: Arc::new(provider), supports_async: t.supports_async, cache })
}

fn scan_source(t: PgTable, table: &TableDescriptor) -> SourceProvider {
    let name = table.name.clone();
    SourceProvider {
        parallelism: Some(1),
        bounded: true,
        factory: Arc::new(move |_: &SubtaskInfo| {
            Box::new(PgScanSource {
                name: name.clone(),
                pool: Arc::clone(&t.pool),
                table: t.table.clone(),
                columns: t.columns.clone(),
                query: None,
                rows: None,
            })
        }),
    }
}

fn sink(t: PgTable, table: &TableDescriptor, options: &mut TableOptions) -> Result<SinkProvider> {
    let max_rows = options.parse::<usize>("sink.buffer-flush.max-rows", "a number of rows")?.unwrap_or(100).max(1);
    let interval = options.duration("sink.buffer-flush.interval")?.unwrap_or(Duration::from_secs(1));
    options.optional("sink.max-retries");
    let parallelism = options.parse::<usize>("sink.parallelism", "a positive integer")?;
    let primary_key: Vec<usize> = table.primary_key.clone();
    let spec = PgSinkSpec {
        name: format!("Sink: {}", table.name),
        pool: t.pool,
        table: t.table,
        columns: t.columns,
        primary_key: primary_key.clone(),
        max_rows,
        interval_millis: interval.as_millis() as i64,
    };
    let changelog_mode = if primary_key.is_empty() { SinkChangelogMode::Append } else { SinkChangelogMode::Upsert };
    Ok(SinkProvider { parallelism, changelog_mode, factory: Arc::new(move |_| Box::new(PgSink::new(spec.clone()))) })
}

impl ConnectorFactory for JdbcFactory {
    fn identifier(&self) -> &'static str {
        "jdbc"
    }

    fn create_source(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        _: &FactoryContext<'_>,
    ) -> Result<SourceProvider> {
        let t = self.table(table, options)?;
        lookup_source(t.clone_for_options(), options)?;
        sink(t.clone_for_options(), table, options)?;
        Ok(scan_source(t, table))
    }

    fn create_sink(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        _: &FactoryContext<'_>,
    ) -> Result<SinkProvider> {
        let t = self.table(table, options)?;
        lookup_source(t.clone_for_options(), options)?;
        sink(t, table, options)
    }

    fn create_lookup(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        _: &FactoryContext<'_>,
    ) -> Result<LookupSource> {
        let t = self.table(table, options)?;
        sink(t.clone_for_options(), table, options)?;
        lookup_source(t, options)
    }
}

impl ConnectorFactory for HologresFactory {
    fn identifier(&self) -> &'static str {
        "hologres"
    }

    fn create_source(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        _: &FactoryContext<'_>,
    ) -> Result<SourceProvider> {
        let t = self.table(table, options)?;
        lookup_source(t.clone_for_options(), options)?;
        sink(t.clone_for_options(), table, options)?;
        Ok(scan_source(t, table))
    }

    fn create_sink(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        _: &FactoryContext<'_>,
    ) -> Result<SinkProvider> {
        let t = self.table(table, options)?;
        lookup_source(t.clone_for_options(), options)?;
        sink(t, table, options)
    }

    fn create_lookup(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        _: &FactoryContext<'_>,
    ) -> Result<LookupSource> {
        let t = self.table(table, options)?;
        sink(t.clone_for_options(), table, options)?;
        lookup_source(t, options)
    }
}
