//! Translation of physical plans into runtime job graphs: the last phase, which only wires.
//!
//! Each node becomes a vertex at the parallelism the distribution gave it
//! ([`crate::physical::distribution`]): scans and VALUES are sources, Calc and WatermarkAssigner
//! follow their input behind a FORWARD edge (and are chained to it), an Exchange becomes the
//! strategy of the next edge, UNION ALL is a union vertex, and a sink takes its rows as the
//! distribution decided. Sources, sinks and lookup functions are built here from their resolved
//! tables, once per job (a scan shared by a statement set once), and read or connect to nothing
//! before the job runs.

use std::sync::Arc;

use weir_connectors::{PartitionFilter, ScanContext};
use weir_runtime::graph::{JobGraph, Vertex, VertexId, VertexKind};
use weir_runtime::{ShipStrategy, Value};

use crate::error::Result;
use crate::physical::PhysicalNode;

/// Where the translator placed a node of the plan: what the state compatibility check
/// describes (`crate::compat::shape`), reading the plan; translation knows nothing of it.
#[derive(Debug, Clone, Copy)]
pub enum Placed<'p> {
    /// The vertex that runs this node (for a scan, its source).
    Node(&'p PhysicalNode),
    /// The vertex of this sink's materializer.
    Materializer(&'p PhysicalNode),
    /// The vertex that writes into this sink's table.
    Writer(&'p PhysicalNode),
}

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

/// A vertex, its parallelism, and the exchange its consumer must apply.
#[derive(Debug, Clone)]
pub struct Output {
    /// The vertex producing the rows.
    pub vertex: VertexId,
    /// Its parallelism.
    pub parallelism: usize,
    /// The ship strategy an Exchange asked for, if any.
    pub exchange: Option<ShipStrategy>,
}

/// The edge strategy from `input` into a vertex of `parallelism`.
fn edge(input: &Output, parallelism: usize) -> ShipStrategy {
    crate::physical::distribution::edge_strategy(input.exchange.as_ref(), input.parallelism, parallelism)
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

    /// The clock lookup caches expire entries by.
    pub(crate) fn clock(&self) -> Arc<dyn weir_runtime::Clock> {
        Arc::clone(&self.clock)
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

    pub(crate) fn operator(
        &mut self,
        name: &str,
        input: &Output,
        parallelism: usize,
        factory: weir_runtime::graph::OperatorFactory,
    ) -> Output {
        let vertex =
            self.graph.add_vertex(Vertex { name: name.to_string(), parallelism, kind: VertexKind::Operator(factory) });
        self.graph.connect(input.vertex, vertex, edge(input, parallelism));
        Output { vertex, parallelism, exchange: None }
    }

    /// The vertex of a node with one input, named `name`, built by `factory`, at the node's
    /// parallelism behind its input's edge.
    ///
    /// # Errors
    /// What translating the input reports.
    pub(crate) fn unary(
        &mut self,
        node: &'p PhysicalNode,
        name: &str,
        factory: weir_runtime::graph::OperatorFactory,
    ) -> Result<Output> {
        let input = self.translate(&node.inputs[0])?;
        Ok(self.operator(name, &input, node.parallelism, factory))
    }

    /// A two-input operator (a join) in a vertex of its own, its left input on input 0 and its
    /// right input on input 1.
    pub(crate) fn binary(
        &mut self,
        node: &'p PhysicalNode,
        factory: weir_runtime::graph::OperatorFactory,
    ) -> Result<Output> {
        let (left, right) = (self.translate(&node.inputs[0])?, self.translate(&node.inputs[1])?);
        let parallelism = node.parallelism;
        let name = node.name().to_string();
        let vertex = self.graph.add_vertex(Vertex { name, parallelism, kind: VertexKind::Operator(factory) });
        self.graph.connect_input(left.vertex, vertex, 0, edge(&left, parallelism));
        self.graph.connect_input(right.vertex, vertex, 1, edge(&right, parallelism));
        Ok(Output { vertex, parallelism, exchange: None })
    }

    /// Adds the vertices of `node` and its inputs.
    ///
    /// # Errors
    /// A table whose connector refuses its options.
    pub fn translate(&mut self, node: &'p PhysicalNode) -> Result<Output> {
        let digest = node.reuse_digest();
        if let Some(shared) = digest.as_ref().and_then(|d| self.scans.get(d)) {
            return Ok(shared.clone());
        }
        let output = self.translate_new(node)?;
        self.placed.push((Placed::Node(node), output.vertex));
        if let Some(d) = digest {
            self.scans.insert(d, output.clone());
        }
        Ok(output)
    }

    fn translate_new(&mut self, node: &'p PhysicalNode) -> Result<Output> {
        node.operator.translate(node, self)
    }

    /// What a scan of this job tells its connector: batch or streaming, the key of a point
    /// query, the idle timeout, the partitions to read, whether the job starts now.
    pub(crate) fn scan_context(&self, key: Option<Vec<Value>>, partitions: Option<PartitionFilter>) -> ScanContext {
        ScanContext { batch: self.batch, key, idle_timeout: self.idle_timeout, partitions, job_starts: self.job_starts }
    }
}
