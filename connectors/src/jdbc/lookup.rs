//! Lookups in a PostgreSQL table: one prepared `SELECT … WHERE key = $1 …` per key set, sent
//! over the pool; a failed query is retried `lookup.max-retries` times (after 0 s, 1 s, 2 s, …,
//! reconnecting as needed) before the lookup fails with the cause.

use std::sync::Arc;
use std::time::Duration;

use weir_runtime::{DataType, Error as RuntimeError, LookupFunction, LookupFuture, LookupProvider, LookupRows};

use super::client::{PgPool, TextRows};
use super::types::{from_text, key_conditions, quote_identifier, quote_table, to_text};

/// A PostgreSQL table offered for lookups.
pub struct PgLookupProvider {
    pub(super) pool: Arc<PgPool>,
    /// The table as the options name it (`schema.table`).
    pub(super) table: String,
    /// The declared columns.
    pub(super) columns: Vec<(String, DataType)>,
    /// `lookup.max-retries`
    pub(super) max_retries: usize,
}

impl PgLookupProvider {
    fn select(&self) -> String {
        let columns: Vec<String> = self.columns.iter().map(|(n, _)| format!("{}::text", quote_identifier(n))).collect();
        format!("SELECT {} FROM {}", columns.join(", "), quote_table(&self.table))
    }

    fn function(&self, sql: String) -> PgLookup {
        PgLookup {
            pool: Arc::clone(&self.pool),
            sql: Arc::from(sql),
            table: Arc::from(self.table.as_str()),
            columns: Arc::from(self.columns.clone()),
            max_retries: self.max_retries,
        }
    }
}

impl LookupProvider for PgLookupProvider {
    fn lookup_function(&self, keys: &[usize]) -> weir_runtime::Result<Arc<dyn LookupFunction>> {
        let sql = format!("{} WHERE {}", self.select(), key_conditions(&self.columns, keys));
        Ok(Arc::new(self.function(sql)))
    }

    fn load_all(&self) -> Option<LookupFuture> {
        Some(self.function(self.select()).run(Vec::new()))
    }
}

/// One prepared lookup query.
struct PgLookup {
    pool: Arc<PgPool>,
    sql: Arc<str>,
    table: Arc<str>,
    columns: Arc<[(String, DataType)]>,
    max_retries: usize,
}

impl PgLookup {
    fn run(&self, params: Vec<Option<String>>) -> LookupFuture {
        let (pool, sql, table, columns, max_retries) = (
            Arc::clone(&self.pool),
            self.sql.to_string(),
            Arc::clone(&self.table),
            Arc::clone(&self.columns),
            self.max_retries,
        );
        Box::pin(async move {
            let mut attempt = 0;
            loop {
                match pool.query(sql.clone(), params.clone()).await {
                    Ok(rows) => return convert(rows, &columns),
                    Err(e) if attempt >= max_retries => {
                        return Err(RuntimeError::execution(format!(
                            "Execution of JDBC statement failed on table '{table}' after {} attempts \
                             ('lookup.max-retries' = {max_retries}): {e}",
                            attempt + 1
                        )))
                    }
                    Err(e) => {
                        tracing::warn!(table = %table, attempt, error = %e, "JDBC lookup failed; retrying");
                        tokio::time::sleep(Duration::from_secs(attempt as u64)).await;
                        attempt += 1;
                    }
                }
            }
        })
    }
}

fn convert(rows: TextRows, columns: &[(String, DataType)]) -> weir_runtime::Result<LookupRows> {
    rows.into_iter()
        .map(|row| {
            row.iter()
                .zip(columns)
                .map(|(text, (name, ty))| from_text(text.as_deref(), ty, name))
                .collect::<crate::Result<Vec<_>>>()
                .map_err(|e| RuntimeError::execution(e.to_string()))
        })
        .collect()
}

impl LookupFunction for PgLookup {
    fn lookup(&self, key: Vec<weir_runtime::Value>) -> LookupFuture {
        self.run(key.iter().map(to_text).collect())
    }
}
