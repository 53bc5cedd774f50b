//! Tables resolved for one role, as Flink's `DynamicTableFactory` turns a catalog table into a
//! `DynamicTableSource` or `DynamicTableSink`: the connector has read and typed every option
//! (refusing bad ones with Flink's messages) and answers what the table offers, but has built,
//! opened and read nothing. The planner resolves each table once per statement
//! ([`crate::ConnectorRegistry::resolve_source`] and its siblings), its plan nodes carry the
//! result, its rules ask it, and the job graph builds each source and sink from it exactly once.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use weir_runtime::Clock;

use crate::api::{
    LookupAbilities, LookupSource, ScanContext, SinkAbilities, SinkContext, SinkProvider, SourceAbilities,
    SourceProvider, TableDescriptor, TablePartition,
};
pub use crate::api::{ResolvedLookup, ResolvedSink, ResolvedSource};
use crate::error::{Error, Result};

/// Implements the parts a table resolved for `$role` shares: its descriptor as `Deref` target
/// (`table.name`, `table.schema`), `Debug` and equality as the descriptor's.
macro_rules! resolved_table {
    ($name:ident, $role:ident) => {
        impl Deref for $name {
            type Target = TableDescriptor;

            fn deref(&self) -> &TableDescriptor {
                &self.descriptor
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.descriptor.fmt(f)
            }
        }

        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                self.descriptor == other.descriptor
            }
        }

        impl $name {
            /// The table as it was declared.
            pub fn descriptor(&self) -> &TableDescriptor {
                &self.descriptor
            }

            /// The table `descriptor` resolved by its connector as `resolved`.
            pub fn new(descriptor: TableDescriptor, resolved: Arc<dyn $role>) -> Self {
                $name { descriptor, resolved }
            }

            fn in_table<T>(&self, answer: Result<T>) -> Result<T> {
                answer.map_err(|error| match error {
                    Error::InTable { .. } => error,
                    error => Error::InTable { table: self.descriptor.name.clone(), source: Box::new(error) },
                })
            }
        }
    };
}

/// A table resolved as a scan's source (the planner's scans carry one).
#[derive(Clone)]
pub struct SourceTable {
    descriptor: TableDescriptor,
    resolved: Arc<dyn ResolvedSource>,
}

resolved_table!(SourceTable, ResolvedSource);

impl SourceTable {
    /// What a scan for `scan` offers.
    pub fn abilities(&self, scan: &ScanContext) -> SourceAbilities {
        self.resolved.abilities(scan)
    }

    /// Builds the scan's source.
    ///
    /// # Errors
    /// What [`ResolvedSource::create`] reports, naming the table.
    pub fn create(&self, scan: &ScanContext) -> Result<SourceProvider> {
        self.in_table(self.resolved.create(scan))
    }

    /// The table's partitions, listed now ([`ResolvedSource::partitions`]).
    ///
    /// # Errors
    /// What listing reports, naming the table.
    pub fn partitions(&self) -> Result<Option<Vec<TablePartition>>> {
        self.in_table(self.resolved.partitions())
    }
}

/// A table resolved as a sink (the planner's sinks carry one).
#[derive(Clone)]
pub struct SinkTable {
    descriptor: TableDescriptor,
    resolved: Arc<dyn ResolvedSink>,
}

resolved_table!(SinkTable, ResolvedSink);

impl SinkTable {
    /// What the sink offers for the writes `sink` describes.
    ///
    /// # Errors
    /// What [`ResolvedSink::abilities`] reports, naming the table.
    pub fn abilities(&self, sink: &SinkContext) -> Result<SinkAbilities> {
        self.in_table(self.resolved.abilities(sink))
    }

    /// Builds the sink.
    ///
    /// # Errors
    /// What [`ResolvedSink::create`] reports, naming the table.
    pub fn create(&self, sink: &SinkContext) -> Result<SinkProvider> {
        self.in_table(self.resolved.create(sink))
    }
}

/// A table resolved for lookup joins (the planner's lookup joins carry one).
#[derive(Clone)]
pub struct LookupTable {
    descriptor: TableDescriptor,
    resolved: Arc<dyn ResolvedLookup>,
}

resolved_table!(LookupTable, ResolvedLookup);

impl LookupTable {
    /// What the table offers for lookups.
    pub fn abilities(&self) -> LookupAbilities {
        self.resolved.abilities()
    }

    /// Offers the table for lookups behind the cache its options ask for (shared by everything
    /// that looks up through the returned provider), with expiry read from `clock`.
    ///
    /// # Errors
    /// What [`ResolvedLookup::create`] reports, or a cache that cannot be built, naming the table.
    pub fn create(&self, clock: Arc<dyn Clock>) -> Result<LookupSource> {
        let created = self.resolved.create().and_then(|mut source| {
            source.provider = source.cache.wrap(source.provider, clock)?;
            Ok(source)
        });
        self.in_table(created)
    }
}
