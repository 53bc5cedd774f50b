//! A managed table as the dimension side of lookup joins: a lookup by the primary key reads the
//! stored row of that key; a lookup by other columns reads the rows whose columns match.

use std::sync::Arc;

use weir_runtime::{LookupFunction, LookupFuture, LookupProvider, LookupRows, Result, Value};

use super::store::ManagedTable;

/// Looks rows of a managed table up; reads see every write committed before them.
pub struct ManagedLookup {
    table: Arc<ManagedTable>,
}

impl ManagedLookup {
    /// Lookups into `table`.
    pub fn new(table: Arc<ManagedTable>) -> Self {
        ManagedLookup { table }
    }
}

impl LookupProvider for ManagedLookup {
    fn lookup_function(&self, keys: &[usize]) -> Result<Arc<dyn LookupFunction>> {
        let primary_key = &self.table.descriptor().primary_key;
        // Where each primary key column is among the lookup keys, when they are exactly the key.
        let by_key: Option<Vec<usize>> = (keys.len() == primary_key.len())
            .then(|| primary_key.iter().map(|k| keys.iter().position(|c| c == k)).collect())
            .flatten();
        Ok(Arc::new(ManagedLookupFunction { table: Arc::clone(&self.table), keys: keys.to_vec(), by_key }))
    }

    fn load_all(&self) -> Option<LookupFuture> {
        let rows = self.table.scan().map_err(|e| weir_runtime::Error::execution(e.to_string()));
        Some(Box::pin(async move { rows }))
    }
}

struct ManagedLookupFunction {
    table: Arc<ManagedTable>,
    keys: Vec<usize>,
    by_key: Option<Vec<usize>>,
}

impl ManagedLookupFunction {
    fn rows(&self, key: &[Value]) -> crate::Result<LookupRows> {
        // A NULL key equals nothing.
        if key.iter().any(|v| matches!(v, Value::Null)) {
            return Ok(Vec::new());
        }
        match &self.by_key {
            Some(order) => {
                let primary: Vec<Value> = order.iter().map(|&i| key[i].clone()).collect();
                Ok(self.table.get(&primary)?.into_iter().collect())
            }
            None => Ok(self
                .table
                .scan()?
                .into_iter()
                .filter(|row| self.keys.iter().zip(key).all(|(&c, v)| row[c] == *v))
                .collect()),
        }
    }
}

impl LookupFunction for ManagedLookupFunction {
    fn lookup(&self, key: Vec<Value>) -> LookupFuture {
        let rows = self.rows(&key).map_err(|e| weir_runtime::Error::execution(e.to_string()));
        Box::pin(async move { rows })
    }
}
