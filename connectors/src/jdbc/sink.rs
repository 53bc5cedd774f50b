//! The PostgreSQL sink: buffered rows written in one transaction per flush. With a primary
//! key it is an upsert sink (`INSERT … ON CONFLICT (key) DO UPDATE`, `DELETE` by key); without
//! one it appends. Flushes at `sink.buffer-flush.max-rows` rows, every
//! `sink.buffer-flush.interval`, and at the end of input; one flush is in flight at a time and
//! the sink takes no input while a full buffer waits for it.

use std::sync::Arc;

use weir_runtime::{
    AsyncState, Chunk, DataType, Error as RuntimeError, Operator, OperatorContext, Output, RowKind, Timer, Value,
};

use super::client::PgPool;
use super::types::{key_conditions, pg_type, quote_identifier, quote_table, to_text};
use crate::write_in_flight::WriteInFlight;

/// What a [`PgSink`] writes where.
#[derive(Clone)]
pub struct PgSinkSpec {
    pub(super) name: String,
    pub(super) pool: Arc<PgPool>,
    pub(super) table: String,
    pub(super) columns: Vec<(String, DataType)>,
    pub(super) primary_key: Vec<usize>,
    pub(super) max_rows: usize,
    pub(super) interval_millis: i64,
}

impl PgSinkSpec {
    fn upsert_sql(&self) -> String {
        let names: Vec<String> = self.columns.iter().map(|(n, _)| quote_identifier(n)).collect();
        let values: Vec<String> =
            self.columns.iter().enumerate().map(|(i, (_, t))| format!("CAST(${} AS {})", i + 1, pg_type(t))).collect();
        let mut sql =
            format!("INSERT INTO {} ({}) VALUES ({})", quote_table(&self.table), names.join(", "), values.join(", "));
        if !self.primary_key.is_empty() {
            let key: Vec<&str> = self.primary_key.iter().map(|&k| names[k].as_str()).collect();
            let updates: Vec<String> = (0..names.len())
                .filter(|i| !self.primary_key.contains(i))
                .map(|i| format!("{0} = EXCLUDED.{0}", names[i]))
                .collect();
            if updates.is_empty() {
                sql.push_str(&format!(" ON CONFLICT ({}) DO NOTHING", key.join(", ")));
            } else {
                sql.push_str(&format!(" ON CONFLICT ({}) DO UPDATE SET {}", key.join(", "), updates.join(", ")));
            }
        }
        sql
    }

    fn delete_sql(&self) -> String {
        format!("DELETE FROM {} WHERE {}", quote_table(&self.table), key_conditions(&self.columns, &self.primary_key))
    }
}

/// One sink subtask.
pub struct PgSink {
    spec: PgSinkSpec,
    upsert: String,
    delete: String,
    buffer: Vec<(RowKind, Vec<Value>)>,
    write: WriteInFlight,
    timer_armed: bool,
    ending: bool,
    /// A checkpoint's barrier waits: the buffer is written out, write after write, before it.
    draining: bool,
}

impl PgSink {
    /// A sink subtask writing as `spec` says.
    pub fn new(spec: PgSinkSpec) -> Self {
        let (upsert, delete) = (spec.upsert_sql(), spec.delete_sql());
        PgSink {
            spec,
            upsert,
            delete,
            buffer: Vec::new(),
            write: WriteInFlight::default(),
            timer_armed: false,
            ending: false,
            draining: false,
        }
    }

    /// Starts writing the buffer unless a write is under way.
    fn flush(&mut self, ctx: &mut OperatorContext) -> weir_runtime::Result<()> {
        if !self.write.is_idle() || self.buffer.is_empty() {
            return Ok(());
        }
        let statements: Vec<(String, Vec<Option<String>>)> = self
            .buffer
            .drain(..)
            .map(|(kind, row)| match kind {
                RowKind::Delete => {
                    (self.delete.clone(), self.spec.primary_key.iter().map(|&k| to_text(&row[k])).collect())
                }
                _ => (self.upsert.clone(), row.iter().map(to_text).collect()),
            })
            .collect();
        tracing::debug!(table = %self.spec.table, rows = statements.len(), "flushing to PostgreSQL");
        let pool = Arc::clone(&self.spec.pool);
        let write = async move { pool.execute_batch(statements).await.map_err(|e| e.to_string()) };
        let done = self.write.start(write, ctx).map_err(|e| self.failed(&e))?;
        if done {
            self.written(ctx)?;
        }
        Ok(())
    }

    /// Polls the write in flight; a finished write makes room for the next.
    fn poll_flush(&mut self, ctx: &mut OperatorContext) -> weir_runtime::Result<()> {
        if self.write.poll(ctx).map_err(|e| self.failed(&e))? {
            self.written(ctx)?;
        }
        Ok(())
    }

    /// After a write: the next one when the buffer is full, the input has ended or a barrier
    /// waits.
    fn written(&mut self, ctx: &mut OperatorContext) -> weir_runtime::Result<()> {
        if self.ending || self.draining || self.buffer.len() >= self.spec.max_rows {
            self.flush(ctx)?;
        }
        Ok(())
    }

    fn failed(&self, reason: &str) -> RuntimeError {
        RuntimeError::execution(format!("Writing to PostgreSQL table '{}' failed: {reason}", self.spec.table))
    }
}

impl Operator for PgSink {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> weir_runtime::Result<()> {
        let upsert = !self.spec.primary_key.is_empty();
        for (kind, row) in chunk.rows() {
            match kind {
                RowKind::UpdateBefore if upsert => {}
                RowKind::Delete if !upsert => {}
                _ => self.buffer.push((kind, row.to_vec())),
            }
        }
        if self.buffer.len() >= self.spec.max_rows {
            self.flush(ctx)?;
        } else if !self.buffer.is_empty() && !self.timer_armed && self.spec.interval_millis > 0 {
            self.timer_armed = true;
            let at = ctx.processing_time() + self.spec.interval_millis;
            ctx.register_processing_time_timer(at, Vec::new());
        }
        Ok(())
    }

    fn on_timer(&mut self, _timer: Timer, ctx: &mut OperatorContext, _out: &mut Output) -> weir_runtime::Result<()> {
        self.timer_armed = false;
        self.flush(ctx)
    }

    fn end_of_input(&mut self, ctx: &mut OperatorContext, _out: &mut Output) -> weir_runtime::Result<()> {
        self.ending = true;
        self.flush(ctx)
    }

    fn async_state(&self) -> AsyncState {
        self.write.async_state(self.buffer.len() >= self.spec.max_rows)
    }

    /// Every buffered row is written before the barrier (the runtime waits for the writes), so
    /// that a checkpoint never covers rows still in the buffer: at least once, and with a
    /// primary key, idempotent.
    fn prepare_snapshot_pre_barrier(
        &mut self,
        _checkpoint: u64,
        ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> weir_runtime::Result<()> {
        self.draining = true;
        self.flush(ctx)
    }

    fn snapshot_state(
        &mut self,
        _checkpoint: u64,
        _ctx: &mut OperatorContext,
        _state: &mut weir_runtime::checkpoint::StateWriter,
    ) -> weir_runtime::Result<()> {
        self.draining = false;
        Ok(())
    }

    fn poll_async(&mut self, ctx: &mut OperatorContext, _out: &mut Output) -> weir_runtime::Result<()> {
        self.poll_flush(ctx)
    }
}
