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

use crate::api::{
    ConnectorFactory, FactoryContext, LookupAbilities, LookupSource, ScanContext, SinkAbilities, SinkChangelogMode,
    SinkContext, SinkProvider, SourceAbilities, SourceProvider, TableDescriptor,
};
use crate::api::{ResolvedLookup, ResolvedSink, ResolvedSource};
use crate::error::Result;
use crate::lookup_cache::LookupCacheOptions;
use crate::options::TableOptions;

/// Where a table lives: its server and its name there.
struct PgTable {
    pool: Arc<PgPool>,
    table: String,
    columns: Vec<(String, DataType)>,
    supports_async: bool,
}

/// The options of the table's roles (lookups, sink), read whatever the table is used as, so
/// that a table declared once can serve as all three.
struct RoleOptions {
    max_retries: usize,
    cache: LookupCacheOptions,
    sink_max_rows: usize,
    sink_interval: Duration,
    sink_parallelism: Option<usize>,
}

impl RoleOptions {
    fn read(options: &mut TableOptions) -> Result<Self> {
        let max_retries = options.parse::<usize>("lookup.max-retries", "a non-negative number")?.unwrap_or(3);
        let cache = LookupCacheOptions::from_options(options)?;
        let sink_max_rows =
            options.parse::<usize>("sink.buffer-flush.max-rows", "a number of rows")?.unwrap_or(100).max(1);
        let sink_interval = options.duration("sink.buffer-flush.interval")?.unwrap_or(Duration::from_secs(1));
        options.optional("sink.max-retries");
        let sink_parallelism = options.parse::<usize>("sink.parallelism", "a positive integer")?;
        Ok(RoleOptions { max_retries, cache, sink_max_rows, sink_interval, sink_parallelism })
    }
}

/// The values of `keys`, all required: Flink's message naming every missing one otherwise.
fn required(options: &mut TableOptions, keys: &[&str]) -> Result<Vec<String>> {
    let values: Vec<Option<String>> = keys.iter().map(|k| options.required(k).map(str::to_string)).collect();
    let missing: Vec<String> =
        keys.iter().zip(&values).filter(|(_, v)| v.is_none()).map(|(k, _)| k.to_string()).collect();
    if !missing.is_empty() {
        return Err(crate::Error::MissingOptions { missing });
    }
    Ok(values.into_iter().flatten().collect())
}

/// Which connector's options a [`PgFactory`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgFlavor {
    /// `jdbc`: `url`, `table-name`, `username`, `password`, …
    Jdbc,
    /// `hologres`: `endpoint`, `dbname`, `tablename`, `username`, `password`, `async`, …
    Hologres,
}

/// The `jdbc` and `hologres` connectors: PostgreSQL tables.
pub struct PgFactory {
    flavor: PgFlavor,
}

impl PgFactory {
    /// The `jdbc` connector.
    pub fn jdbc() -> Self {
        PgFactory { flavor: PgFlavor::Jdbc }
    }

    /// The `hologres` connector.
    pub fn hologres() -> Self {
        PgFactory { flavor: PgFlavor::Hologres }
    }

    fn table(&self, table: &TableDescriptor, options: &mut TableOptions) -> Result<PgTable> {
        let columns = table.schema.fields.iter().map(|f| (f.name.clone(), f.data_type.clone())).collect();
        match self.flavor {
            PgFlavor::Jdbc => {
                let pool_size =
                    options.parse::<usize>("lookup.pool-size", "a positive number of connections")?.unwrap_or(4);
                let user = options.optional("username").map(str::to_string);
                let password = options.optional("password").map(str::to_string);
                options.optional("driver");
                options.optional("scan.fetch-size");
                let timeout = options.duration("connection.max-retry-timeout")?.unwrap_or(Duration::from_secs(60));
                let [url, name] = <[String; 2]>::try_from(required(options, &["url", "table-name"])?)
                    .map_err(|_| crate::Error::Validation("url and table-name".into()))?;
                let mut endpoint = PgEndpoint::from_url(&url, user.as_deref(), password.as_deref())?;
                endpoint.config.connect_timeout(timeout);
                Ok(PgTable { pool: PgPool::new(endpoint, pool_size), table: name, columns, supports_async: true })
            }
            PgFlavor::Hologres => {
                let supports_async = options.boolean("async", false)?;
                let pool_size =
                    options.parse::<usize>("connectionSize", "a positive number of connections")?.unwrap_or(3);
                let keys = ["endpoint", "dbname", "tablename", "username", "password"];
                let [endpoint, database, name, user, password] = <[String; 5]>::try_from(required(options, &keys)?)
                    .map_err(|_| crate::Error::Validation("hologres connection options".into()))?;
                let shown = format!("hologres://{endpoint}/{database}");
                let endpoint = PgEndpoint::from_parts(&endpoint, &database, Some(&user), Some(&password), &shown)?;
                Ok(PgTable { pool: PgPool::new(endpoint, pool_size), table: name, columns, supports_async })
            }
        }
    }
}

impl PgFactory {
    /// Reads every option of `table`, whatever role it is resolved for (see [`RoleOptions`]).
    fn resolve(&self, table: &TableDescriptor, options: &mut TableOptions) -> Result<Arc<PgResolved>> {
        let pg = self.table(table, options)?;
        let roles = RoleOptions::read(options)?;
        Ok(Arc::new(PgResolved { name: table.name.clone(), primary_key: table.primary_key.clone(), pg, roles }))
    }
}

impl ConnectorFactory for PgFactory {
    fn identifier(&self) -> &'static str {
        match self.flavor {
            PgFlavor::Jdbc => "jdbc",
            PgFlavor::Hologres => "hologres",
        }
    }

    fn resolve_source(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        _: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSource>> {
        Ok(self.resolve(table, options)?)
    }

    fn resolve_sink(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        _: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSink>> {
        Ok(self.resolve(table, options)?)
    }

    fn resolve_lookup(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        _: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedLookup>> {
        Ok(self.resolve(table, options)?)
    }
}

/// A PostgreSQL table resolved for any of its roles; its connection pool connects at the first
/// query of a running job.
struct PgResolved {
    name: String,
    primary_key: Vec<usize>,
    pg: PgTable,
    roles: RoleOptions,
}

impl PgResolved {
    fn sink_changelog_mode(&self) -> SinkChangelogMode {
        if self.primary_key.is_empty() {
            SinkChangelogMode::Append
        } else {
            SinkChangelogMode::Upsert
        }
    }
}

impl ResolvedSource for PgResolved {
    fn abilities(&self, _scan: &ScanContext) -> SourceAbilities {
        SourceAbilities::plain(Some(1), true)
    }

    fn create(&self, _scan: &ScanContext) -> Result<SourceProvider> {
        let (name, pool, table, columns) =
            (self.name.clone(), Arc::clone(&self.pg.pool), self.pg.table.clone(), self.pg.columns.clone());
        Ok(SourceProvider {
            parallelism: Some(1),
            bounded: true,
            factory: Arc::new(move |_: &SubtaskInfo| {
                Box::new(PgScanSource {
                    name: name.clone(),
                    pool: Arc::clone(&pool),
                    table: table.clone(),
                    columns: columns.clone(),
                    query: None,
                    rows: None,
                })
            }),
        })
    }
}

impl ResolvedSink for PgResolved {
    fn abilities(&self, _sink: &SinkContext) -> Result<SinkAbilities> {
        Ok(SinkAbilities { parallelism: self.roles.sink_parallelism, changelog_mode: self.sink_changelog_mode() })
    }

    fn create(&self, _sink: &SinkContext) -> Result<SinkProvider> {
        let spec = PgSinkSpec {
            name: format!("Sink: {}", self.name),
            pool: Arc::clone(&self.pg.pool),
            table: self.pg.table.clone(),
            columns: self.pg.columns.clone(),
            primary_key: self.primary_key.clone(),
            max_rows: self.roles.sink_max_rows,
            interval_millis: self.roles.sink_interval.as_millis() as i64,
        };
        Ok(SinkProvider {
            parallelism: self.roles.sink_parallelism,
            changelog_mode: self.sink_changelog_mode(),
            factory: Arc::new(move |_| Box::new(PgSink::new(spec.clone()))),
        })
    }
}

impl ResolvedLookup for PgResolved {
    fn abilities(&self) -> LookupAbilities {
        LookupAbilities { supports_async: self.pg.supports_async }
    }

    fn create(&self) -> Result<LookupSource> {
        let provider = PgLookupProvider {
            pool: Arc::clone(&self.pg.pool),
            table: self.pg.table.clone(),
            columns: self.pg.columns.clone(),
            max_retries: self.roles.max_retries,
        };
        Ok(LookupSource {
            provider: Arc::new(provider),
            supports_async: self.pg.supports_async,
            cache: self.roles.cache,
        })
    }
}
