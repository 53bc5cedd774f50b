//! Translation of physical plans into runtime job graphs: the last phase, which only wires.
//!
//! Each node's operator adds its vertex ([`crate::physical::op::PhysicalOp::translate`]) at the
//! parallelism the distribution gave it ([`crate::physical::distribution`]), through the
//! [`Wiring`] this translator implements: scans and VALUES are sources, Calc and
//! WatermarkAssigner follow their input behind a FORWARD edge (and are chained to it), an
//! Exchange becomes the strategy of the next edge, UNION ALL is a union vertex, and a sink takes
//! its rows as the distribution decided. Sources, sinks and lookup functions are built while
//! translating, from their resolved tables, once per job (a scan shared by a statement set
//! once), and read or connect to nothing before the job runs.

use std::sync::Arc;

use weir_connectors::{PartitionFilter, ScanContext};
use weir_runtime::graph::{JobGraph, VertexId};
use weir_runtime::Value;

use crate::error::Result;
use crate::physical::op::Wiring;
pub use crate::physical::op::{Output, Placed};
use crate::physical::PhysicalNode;

/// Builds job graphs from physical plans.
pub struct Translator<'p> {
    /// The graph being built.
    pub graph: JobGraph,
    /// The job runs in batch mode: scans read what their tables hold now.
    batch: bool,
    /// `table.exec.source.idle-timeout`, for sources with splits.
    idle_timeout: Option<std::time::Duration>,
    /// The graph is built to start now (see [`ScanContext::job_starts`]).
    job_starts: bool,
    /// Scans already added, by reuse digest: a shared scan runs once.
    scans: std::collections::HashMap<String, Output>,
    /// The clock lookup caches expire entries by.
    clock: Arc<dyn weir_runtime::Clock>,
    /// What was placed in which vertex, in the order of translation.
    pub placed: Vec<(Placed<'p>, VertexId)>,
}

impl Default for Translator<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'p> Translator<'p> {
    /// A translator building a new graph.
    pub fn new() -> Self {
        Translator {
            graph: JobGraph::new(),
            batch: false,
            idle_timeout: None,
            job_starts: false,
            scans: Default::default(),
            clock: Arc::new(weir_runtime::SystemClock),
            placed: Vec::new(),
        }
    }

    /// The translator, with lookup caches reading time from `clock` (the job's clock).
    pub fn with_clock(mut self, clock: Arc<dyn weir_runtime::Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The translator of a graph built to start now: scans may check that what they read is
    /// there (see [`ScanContext::job_starts`]).
    pub fn starting_job(mut self) -> Self {
        self.job_starts = true;
        self
    }

    /// The translator whose scans hold no watermark back for a split (a Kafka partition)
    /// without records for `idle_timeout` (`table.exec.source.idle-timeout`).
    pub fn with_idle_timeout(mut self, idle_timeout: Option<std::time::Duration>) -> Self {
        self.idle_timeout = idle_timeout;
        self
    }

    /// The translator for a job in batch mode (`'execution.runtime-mode' = 'batch'`) when
    /// `batch` is set: scans read what their tables hold now.
    pub fn with_batch(mut self, batch: bool) -> Self {
        self.batch = batch;
        self
    }

    /// Adds the vertices of `node` and its inputs (see [`Wiring::translate`]).
    ///
    /// # Errors
    /// A table whose connector refuses its options.
    pub fn translate(&mut self, node: &'p PhysicalNode) -> Result<Output> {
        Wiring::translate(self, node)
    }
}

impl<'p> Wiring<'p> for Translator<'p> {
    fn translate(&mut self, node: &'p PhysicalNode) -> Result<Output> {
        let digest = node.reuse_digest();
        if let Some(shared) = digest.as_ref().and_then(|d| self.scans.get(d)) {
            return Ok(shared.clone());
        }
        let output = node.operator.translate(node, self)?;
        self.placed.push((Placed::Node(node), output.vertex));
        if let Some(d) = digest {
            self.scans.insert(d, output.clone());
        }
        Ok(output)
    }

    fn graph(&mut self) -> &mut JobGraph {
        &mut self.graph
    }

    fn place(&mut self, placed: Placed<'p>, vertex: VertexId) {
        self.placed.push((placed, vertex));
    }

    fn scan_context(&self, key: Option<Vec<Value>>, partitions: Option<PartitionFilter>) -> ScanContext {
        ScanContext { batch: self.batch, key, idle_timeout: self.idle_timeout, partitions, job_starts: self.job_starts }
    }

    fn clock(&self) -> Arc<dyn weir_runtime::Clock> {
        Arc::clone(&self.clock)
    }
}
