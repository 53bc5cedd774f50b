//! The bounded scan of a PostgreSQL table: one `SELECT` of the declared columns, read on the
//! pool's I/O thread, emitted in chunks. Runs at parallelism 1.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use tokio::task::JoinHandle;
use weir_runtime::{Chunk, DataType, Error as RuntimeError, OperatorContext, Output, RowKind, Source, SourceStatus};

use super::client::{PgPool, TextRows};
use super::types::{from_text, quote_identifier, quote_table};
use crate::Result;

/// Reads every row of a table once.
pub struct PgScanSource {
    pub(super) name: String,
    pub(super) pool: Arc<PgPool>,
    pub(super) table: String,
    pub(super) columns: Vec<(String, DataType)>,
    pub(super) query: Option<JoinHandle<Result<TextRows>>>,
    pub(super) rows: Option<std::vec::IntoIter<Vec<Option<String>>>>,
}

impl Source for PgScanSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn poll_next(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> weir_runtime::Result<SourceStatus> {
        if self.rows.is_none() {
            let query = match &mut self.query {
                Some(query) => query,
                None => {
                    let columns: Vec<String> =
                        self.columns.iter().map(|(n, _)| format!("{}::text", quote_identifier(n))).collect();
                    let sql = format!("SELECT {} FROM {}", columns.join(", "), quote_table(&self.table));
                    let spawned =
                        self.pool.spawn_query(sql, Vec::new()).map_err(|e| RuntimeError::execution(e.to_string()));
                    self.query.insert(spawned?)
                }
            };
            let Some(done) = query.now_or_never() else {
                return Ok(SourceStatus::Wait(Duration::from_millis(1)));
            };
            let rows = done
                .map_err(|e| RuntimeError::execution(format!("the scan of '{}' failed: {e}", self.table)))?
                .map_err(|e| RuntimeError::execution(format!("the scan of '{}' failed: {e}", self.table)))?;
            self.rows = Some(rows.into_iter());
        }
        let Some(rows) = self.rows.as_mut() else { return Ok(SourceStatus::Finished) };
        let mut chunk = Chunk::with_capacity(self.columns.len(), ctx.chunk_size());
        for row in rows.by_ref().take(ctx.chunk_size()) {
            let values = row
                .iter()
                .zip(&self.columns)
                .map(|(text, (name, ty))| from_text(text.as_deref(), ty, name))
                .collect::<Result<Vec<_>>>()
                .map_err(|e| RuntimeError::execution(e.to_string()))?;
            chunk.push(RowKind::Insert, &values);
        }
        let finished = chunk.is_empty();
        out.collect(chunk);
        Ok(if finished { SourceStatus::Finished } else { SourceStatus::Ready })
    }
}
