//! Each table a statement uses, resolved by its connector once for each role it plays there
//! (a scan's source, a sink, a lookup join's table): the options are read and typed once, and
//! the plan's nodes carry the resolved table ([`SourceTable`], [`SinkTable`], [`LookupTable`]),
//! which rules, the distribution and EXPLAIN ask and the job graph builds from
//! (`weir_connectors::resolved`).

use std::cell::RefCell;
use std::collections::HashMap;

use weir_connectors::{ConnectorRegistry, LookupTable, SinkTable, SourceTable, TableDescriptor};

use crate::error::Result;

/// Resolves the tables of one statement, each once per role, by name.
pub struct Resolver<'a> {
    registry: &'a ConnectorRegistry,
    sources: RefCell<HashMap<String, SourceTable>>,
    sinks: RefCell<HashMap<String, SinkTable>>,
    lookups: RefCell<HashMap<String, LookupTable>>,
}

impl<'a> Resolver<'a> {
    /// A resolver of the tables of one statement through `registry`.
    pub fn new(registry: &'a ConnectorRegistry) -> Self {
        Resolver { registry, sources: RefCell::default(), sinks: RefCell::default(), lookups: RefCell::default() }
    }

    /// `table` as a scan's source.
    ///
    /// # Errors
    /// The connector's refusal of the table's options (or of the role).
    pub fn source(&self, table: &TableDescriptor) -> Result<SourceTable> {
        once(&self.sources, table, || self.registry.resolve_source(table))
    }

    /// `table` as a sink.
    ///
    /// # Errors
    /// The connector's refusal of the table's options (or of the role).
    pub fn sink(&self, table: &TableDescriptor) -> Result<SinkTable> {
        once(&self.sinks, table, || self.registry.resolve_sink(table))
    }

    /// `table` for lookup joins.
    ///
    /// # Errors
    /// The connector's refusal of the table's options, or a table without lookups.
    pub fn lookup(&self, table: &TableDescriptor) -> Result<LookupTable> {
        once(&self.lookups, table, || self.registry.resolve_lookup(table))
    }
}

/// The resolved `table` of `cache`, resolving it with `resolve` the first time.
fn once<T: Clone>(
    cache: &RefCell<HashMap<String, T>>,
    table: &TableDescriptor,
    resolve: impl FnOnce() -> weir_connectors::Result<T>,
) -> Result<T> {
    if let Some(resolved) = cache.borrow().get(&table.name) {
        return Ok(resolved.clone());
    }
    let resolved = resolve()?;
    cache.borrow_mut().insert(table.name.clone(), resolved.clone());
    Ok(resolved)
}
