//! The pipeline API: build a dataflow in Rust, then run it to completion or start it and
//! cancel it.
//!
//! ```
//! use weir::prelude::*;
//!
//! let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(2));
//! let words = pipeline.from_rows(
//!     "words",
//!     Schema::new(vec![Field::new("word", DataType::string())]),
//!     ["a", "b", "a"].iter().map(|w| Row::insert(vec![Value::string(w)])).collect(),
//! );
//! let counts = words
//!     .key_by(&[0])
//!     .process("CountByKey", counts_schema(), CountByKey)
//!     .collect();
//! pipeline.run().unwrap();
//! assert!(counts.lines().contains(&"+U[a, 2]".to_string()));
//!
//! fn counts_schema() -> Schema {
//!     Schema::new(vec![Field::new("word", DataType::string()), Field::new("n", DataType::bigint())])
//! }
//! ```
//!
//! Operators run at `parallelism.default` unless [`Stream::set_parallelism`] says otherwise;
//! fixed-row sources run at parallelism 1. Edges follow Flink's defaults: a stream feeds the next operator FORWARD when both have the
//! same parallelism (and the two are then chained into one actor) and REBALANCE otherwise;
//! `key_by` makes the next edge HASH on the key columns.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use weir_connectors::{
    BatchCollectHandle, BatchSource, BlackholeSink, CollectHandle, ConnectorRegistry, GeneratorSource, MemorySource,
    TableDescriptor,
};
use weir_operators::{FilterOperator, KeyedProcessFunction, KeyedProcessOperator, MapOperator, UnionOperator};
use weir_runtime::columnar::RecordBatch;
use weir_runtime::graph::{OperatorFactory, Vertex, VertexKind};
use weir_runtime::job::{self, JobHandle, JobStatus};
use weir_runtime::{
    JobGraph, Operator, Result, Row, RuntimeConfig, Schema, ShipStrategy, Source, SubtaskInfo, Value, VertexId,
};

struct PendingEdge {
    from: usize,
    to: usize,
    input: usize,
    /// `None`: FORWARD if both sides end up with the same parallelism, else REBALANCE.
    strategy: Option<ShipStrategy>,
}

struct Builder {
    config: RuntimeConfig,
    registry: ConnectorRegistry,
    vertices: Vec<Vertex>,
    edges: Vec<PendingEdge>,
}

/// A dataflow under construction. Cheap to clone: clones share the same dataflow.
#[derive(Clone)]
pub struct Pipeline {
    builder: Rc<RefCell<Builder>>,
}

/// The output of one operator of a [`Pipeline`], with the schema of its rows.
#[derive(Clone)]
pub struct Stream {
    builder: Rc<RefCell<Builder>>,
    vertex: usize,
    schema: Schema,
    /// Strategy of the edge to the next operator, when one was asked for.
    strategy: Option<ShipStrategy>,
}

/// A stream partitioned by key columns: the next operator sees every row of a key in one subtask.
#[derive(Clone)]
pub struct KeyedStream {
    stream: Stream,
    keys: Vec<usize>,
}

impl Pipeline {
    /// An empty pipeline that will run with `config`.
    pub fn new(config: RuntimeConfig) -> Self {
        Self::with_registry(config, ConnectorRegistry::default())
    }

    /// An empty pipeline whose tables are built by `registry`.
    pub fn with_registry(config: RuntimeConfig, registry: ConnectorRegistry) -> Self {
        let builder = Builder { config, registry, vertices: Vec::new(), edges: Vec::new() };
        Pipeline { builder: Rc::new(RefCell::new(builder)) }
    }

    /// A source reading the table `table` through its connector (`'connector' = '…'`), at
    /// the connector's parallelism (`scan.parallelism`) or the default one.
    ///
    /// # Errors
    /// An unknown connector or format, or invalid options, worded as Flink words them.
    pub fn from_table(&self, table: &TableDescriptor) -> weir_connectors::Result<Stream> {
        let provider = self.builder.borrow().registry.create_source(table)?;
        let parallelism = provider.parallelism.unwrap_or_else(|| self.default_parallelism());
        Ok(self.add(&table.name, parallelism, VertexKind::Source(provider.factory), table.schema.clone()))
    }

    fn add(&self, name: &str, parallelism: usize, kind: VertexKind, schema: Schema) -> Stream {
        let mut b = self.builder.borrow_mut();
        b.vertices.push(Vertex { name: name.to_string(), parallelism, kind });
        Stream { builder: Rc::clone(&self.builder), vertex: b.vertices.len() - 1, schema, strategy: None }
    }

    fn default_parallelism(&self) -> usize {
        self.builder.borrow().config.default_parallelism
    }

    /// A source of fixed rows, read by one subtask (as Flink's `fromElements`).
    pub fn from_rows(&self, name: &str, schema: Schema, rows: Vec<Row>) -> Stream {
        let source = MemorySource::from_rows(name, schema.arity(), rows);
        self.source(name, schema, 1, move |info| Box::new(source.for_subtask(info)))
    }

    /// A source of Arrow record batches, read by one subtask: each batch's rows as `+I`, in
    /// chunks that share the batch's arrays.
    ///
    /// # Errors
    /// A batch whose columns do not have the Arrow types of `schema`'s fields (see
    /// `weir::runtime::columnar`), named.
    pub fn from_batches(
        &self,
        name: &str,
        schema: Schema,
        batches: Vec<RecordBatch>,
    ) -> weir_connectors::Result<Stream> {
        let source = BatchSource::new(name, &schema, batches)?;
        Ok(self.source(name, schema, 1, move |_| Box::new(source.clone())))
    }

    /// A source of `count` rows computed from their sequence number by `generate`, split
    /// over the default parallelism.
    pub fn generate(
        &self,
        name: &str,
        schema: Schema,
        count: u64,
        generate: impl Fn(u64, &mut Vec<Value>) + Send + Sync + 'static,
    ) -> Stream {
        let source = GeneratorSource::new(name, schema.arity(), count, Arc::new(generate));
        self.source(name, schema, self.default_parallelism(), move |info| Box::new(source.for_subtask(info)))
    }

    /// A source built per subtask by `factory`.
    pub fn source(
        &self,
        name: &str,
        schema: Schema,
        parallelism: usize,
        factory: impl Fn(&SubtaskInfo) -> Box<dyn Source> + Send + Sync + 'static,
    ) -> Stream {
        self.add(name, parallelism, VertexKind::Source(Arc::new(factory)), schema)
    }

    /// The job graph as it stands, with default edges resolved.
    pub fn job_graph(&self) -> JobGraph {
        let b = self.builder.borrow();
        let mut graph = JobGraph::new();
        for v in &b.vertices {
            graph.add_vertex(v.clone());
        }
        for e in &b.edges {
            let strategy = e.strategy.clone().unwrap_or_else(|| {
                if b.vertices[e.from].parallelism == b.vertices[e.to].parallelism {
                    ShipStrategy::Forward
                } else {
                    ShipStrategy::Rebalance
                }
            });
            graph.connect_input(VertexId(e.from), VertexId(e.to), e.input, strategy);
        }
        graph
    }

    /// Runs the pipeline until every source has finished and every row has reached its sink.
    ///
    /// # Errors
    /// An invalid pipeline, or the first operator failure (naming the operator and subtask).
    pub fn run(&self) -> Result<JobStatus> {
        self.start()?.wait()
    }

    /// Starts the pipeline and returns a handle to cancel it, read its metrics and wait for it.
    ///
    /// # Errors
    /// An invalid pipeline, or threads that cannot start.
    pub fn start(&self) -> Result<JobHandle> {
        let config = self.builder.borrow().config.clone();
        job::start(self.job_graph(), config)
    }
}

impl Stream {
    /// The schema of this stream's rows.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// This stream, with the next edge using `strategy`.
    pub(crate) fn partition(&self, strategy: ShipStrategy) -> Stream {
        Stream { strategy: Some(strategy), ..self.clone() }
    }

    /// Adds an operator fed by this stream, at the default parallelism (as Flink does).
    pub(crate) fn then(&self, name: &str, schema: Schema, operator: OperatorFactory) -> Stream {
        let pipeline = Pipeline { builder: Rc::clone(&self.builder) };
        let parallelism = pipeline.default_parallelism();
        let next = pipeline.add(name, parallelism, VertexKind::Operator(operator), schema);
        self.builder.borrow_mut().edges.push(PendingEdge {
            from: self.vertex,
            to: next.vertex,
            input: 0,
            strategy: self.strategy.clone(),
        });
        next
    }

    /// Sets the number of subtasks of the operator that produces this stream.
    pub fn set_parallelism(self, parallelism: usize) -> Self {
        self.builder.borrow_mut().vertices[self.vertex].parallelism = parallelism.max(1);
        self
    }

    /// One output row per input row: `f(row, out)` pushes the fields of the output row,
    /// which has `schema`. Each subtask gets its own clone of `f`.
    pub fn map<F>(&self, name: &str, schema: Schema, f: F) -> Stream
    where
        F: FnMut(&[Value], &mut Vec<Value>) + Clone + Send + Sync + 'static,
    {
        let (name_owned, arity) = (name.to_string(), schema.arity());
        self.then(name, schema, Arc::new(move |_| Box::new(MapOperator::new(name_owned.clone(), arity, f.clone()))))
    }

    /// Keeps the rows for which `predicate` is true.
    pub fn filter<F>(&self, name: &str, predicate: F) -> Stream
    where
        F: FnMut(&[Value]) -> bool + Clone + Send + Sync + 'static,
    {
        let name_owned = name.to_string();
        let schema = self.schema.clone();
        self.then(name, schema, Arc::new(move |_| Box::new(FilterOperator::new(name_owned.clone(), predicate.clone()))))
    }

    /// Partitions by the columns `keys` (HASH on key groups).
    pub fn key_by(&self, keys: &[usize]) -> KeyedStream {
        let stream = Stream { strategy: Some(ShipStrategy::Hash(keys.to_vec())), ..self.clone() };
        KeyedStream { stream, keys: keys.to_vec() }
    }

    /// Spreads rows round-robin over the next operator's subtasks.
    pub fn rebalance(&self) -> Stream {
        Stream { strategy: Some(ShipStrategy::Rebalance), ..self.clone() }
    }

    /// Sends every row to every subtask of the next operator.
    pub fn broadcast(&self) -> Stream {
        Stream { strategy: Some(ShipStrategy::Broadcast), ..self.clone() }
    }

    /// Merges this stream with `others` (same schema) into one.
    pub fn union(&self, others: &[Stream]) -> Stream {
        let pipeline = Pipeline { builder: Rc::clone(&self.builder) };
        let parallelism = pipeline.default_parallelism();
        let union = pipeline.add(
            "Union",
            parallelism,
            VertexKind::Operator(Arc::new(|_| Box::new(UnionOperator))),
            self.schema.clone(),
        );
        let mut b = self.builder.borrow_mut();
        for input in std::iter::once(self).chain(others) {
            b.edges.push(PendingEdge {
                from: input.vertex,
                to: union.vertex,
                input: 0,
                strategy: input.strategy.clone(),
            });
        }
        drop(b);
        union
    }

    /// Adds the operator built per subtask by `factory`; its output rows have `schema`.
    pub fn transform(
        &self,
        name: &str,
        schema: Schema,
        factory: impl Fn(&SubtaskInfo) -> Box<dyn Operator> + Send + Sync + 'static,
    ) -> Stream {
        self.then(name, schema, Arc::new(factory))
    }

    /// Ends the stream in an operator built per subtask by `factory`.
    pub fn sink(&self, name: &str, factory: impl Fn(&SubtaskInfo) -> Box<dyn Operator> + Send + Sync + 'static) {
        self.transform(name, Schema::default(), factory);
    }

    /// Ends the stream in the table `table` through its connector, at the connector's
    /// parallelism (`sink.parallelism`) or the default one.
    ///
    /// # Errors
    /// An unknown connector or format, or invalid options, worded as Flink words them.
    pub fn to_table(&self, table: &TableDescriptor) -> weir_connectors::Result<()> {
        let provider = self.builder.borrow().registry.create_sink(table)?;
        let sink = self.then(&format!("Sink: {}", table.name), Schema::default(), provider.factory);
        if let Some(parallelism) = provider.parallelism {
            sink.set_parallelism(parallelism);
        }
        Ok(())
    }

    /// Ends the stream in memory; read the rows from the handle after (or while) the job runs.
    pub fn collect(&self) -> CollectHandle {
        let handle = CollectHandle::new();
        let sink = handle.clone();
        self.sink("Sink: Collect", move |info| Box::new(sink.sink(info)));
        handle
    }

    /// Ends the stream in memory as Arrow record batches, columns named as the stream's
    /// schema names them; read them from the handle after the job ran.
    pub fn collect_batches(&self) -> BatchCollectHandle {
        let names = self.schema.fields.iter().map(|f| f.name.clone()).collect();
        let handle = BatchCollectHandle::new(names);
        let sink = handle.clone();
        self.sink("Sink: CollectBatches", move |_| Box::new(sink.sink()));
        handle
    }

    /// Ends the stream by discarding rows; the counter tells how many arrived.
    pub fn discard(&self) -> Arc<AtomicU64> {
        let rows = Arc::new(AtomicU64::new(0));
        let sink = BlackholeSink::counting(Arc::clone(&rows));
        self.sink("Sink: Discard", move |_| Box::new(sink.clone()));
        rows
    }
}

impl KeyedStream {
    /// Ends the stream in the table `table`, each key in one sink subtask (see [`Stream::to_table`]).
    ///
    /// # Errors
    /// An unknown connector or format, or invalid options.
    pub fn to_table(&self, table: &TableDescriptor) -> weir_connectors::Result<()> {
        self.stream.to_table(table)
    }

    /// Ends the stream in memory, each key in one sink subtask.
    pub fn collect(&self) -> CollectHandle {
        self.stream.collect()
    }

    /// Runs `function` with state per key; its output rows have `schema`. Each subtask gets
    /// its own clone of `function`.
    pub fn process<F>(&self, name: &str, schema: Schema, function: F) -> Stream
    where
        F: KeyedProcessFunction + Clone + Sync + 'static,
    {
        let (name_owned, keys, arity) = (name.to_string(), self.keys.clone(), schema.arity());
        self.stream.then(
            name,
            schema,
            Arc::new(move |_| {
                Box::new(KeyedProcessOperator::new(name_owned.clone(), keys.clone(), arity, function.clone()))
            }),
        )
    }
}
