//! Lookup functions: how a lookup join asks a dimension table for the rows matching a key.
//!
//! A [`LookupFunction`] answers with a future, so one subtask can have many lookups in flight;
//! the lookup join operators decide how many, in which order results are emitted, and how long
//! a lookup may take. Connectors (PostgreSQL, in-memory tables) and caches implement it.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::error::Result;
use crate::value::Value;

/// The rows a lookup found: the dimension table's physical columns, in declaration order.
pub type LookupRows = Vec<Vec<Value>>;

/// A pending lookup.
pub type LookupFuture = BoxFuture<'static, Result<LookupRows>>;

/// Finds the rows of a table whose lookup-key columns equal a key.
///
/// Implementations are shared by the subtasks of a job and may be called concurrently; each
/// call is independent. The future must not block the thread that polls it.
pub trait LookupFunction: Send + Sync {
    /// The rows whose lookup-key columns (in the order the function was built for) equal
    /// `key`. An empty result is a miss, not an error.
    fn lookup(&self, key: Vec<Value>) -> LookupFuture;
}

/// Builds the lookup function of a table for a set of lookup-key columns.
pub trait LookupProvider: Send + Sync {
    /// A function looking rows up by the physical columns `keys` (indices into the table's
    /// columns, in the order keys will be passed).
    ///
    /// # Errors
    /// A table that cannot be looked up by these columns.
    fn lookup_function(&self, keys: &[usize]) -> Result<Arc<dyn LookupFunction>>;

    /// Every row of the table, for a cache that holds all of it (`'lookup.cache' = 'FULL'`);
    /// `None` when the table cannot be read whole.
    fn load_all(&self) -> Option<LookupFuture> {
        None
    }
}
