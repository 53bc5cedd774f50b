//! The `blackhole` connector: a sink that discards every row at no cost.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result as RuntimeResult};

use crate::api::ResolvedSink;
use crate::api::{
    ConnectorFactory, FactoryContext, SinkAbilities, SinkChangelogMode, SinkContext, SinkProvider, TableDescriptor,
};
use crate::error::Result;
use crate::options::TableOptions;

/// Discards rows; optionally counts them (one atomic add per chunk).
#[derive(Debug, Clone, Default)]
pub struct BlackholeSink {
    rows: Option<Arc<AtomicU64>>,
}

impl BlackholeSink {
    /// A sink that discards without counting.
    pub fn new() -> Self {
        BlackholeSink { rows: None }
    }

    /// A sink that adds the number of rows it discards to `rows`.
    pub fn counting(rows: Arc<AtomicU64>) -> Self {
        BlackholeSink { rows: Some(rows) }
    }
}

impl Operator for BlackholeSink {
    fn name(&self) -> &str {
        "Sink: Blackhole"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> RuntimeResult<()> {
        if let Some(rows) = &self.rows {
            rows.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        }
        Ok(())
    }

    fn process_watermark(
        &mut self,
        _watermark: i64,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> RuntimeResult<()> {
        Ok(())
    }
}

/// Creates `blackhole` sinks; the connector takes no options besides `connector`.
#[derive(Debug, Clone, Copy, Default)]
pub struct BlackholeFactory;

impl ConnectorFactory for BlackholeFactory {
    fn identifier(&self) -> &'static str {
        "blackhole"
    }

    /// A partitioned table's rows are dropped as any others, as Flink's blackhole sink does.
    fn supports_partitioning(&self) -> bool {
        true
    }

    fn resolve_sink(
        &self,
        _table: &TableDescriptor,
        _options: &mut TableOptions,
        _ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSink>> {
        Ok(Arc::new(BlackholeTable))
    }
}

/// A `blackhole` table resolved as a sink.
struct BlackholeTable;

impl ResolvedSink for BlackholeTable {
    fn abilities(&self, _sink: &SinkContext) -> Result<SinkAbilities> {
        Ok(SinkAbilities { parallelism: None, changelog_mode: SinkChangelogMode::Upsert })
    }

    fn create(&self, _sink: &SinkContext) -> Result<SinkProvider> {
        Ok(SinkProvider {
            parallelism: None,
            changelog_mode: SinkChangelogMode::Upsert,
            factory: Arc::new(|_| Box::new(BlackholeSink::new())),
        })
    }
}
