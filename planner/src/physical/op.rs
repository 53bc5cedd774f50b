//! What a physical plan is made of: nodes ([`PhysicalNode`]), each running one operator, and the
//! contract of an operator ([`PhysicalOp`]) — everything the planner asks of one kind of node, in
//! one trait, so that a new operator is one file under `physical/op/` (its struct and its
//! `impl PhysicalOp`) beside its runtime operator. The required methods are the questions every
//! operator must answer — its name, its EXPLAIN line, where it runs, its state (class, signature
//! and shape) and the vertex it becomes; the provided ones (its upsert key, what it asks of
//! mini-batch, whether it can be shared, whether its rows are already hashed, whether it forwards
//! its rows, the source or table it is) have an answer that is right for most operators, and the
//! others override them.
//!
//! Every node of a physical plan is one: the scans, VALUES, exchanges, unions and sinks that
//! give a plan its structure as much as the operators between them. This file is the bottom of
//! physical planning: the operators, the planning of families of them, the distribution,
//! translation, EXPLAIN and the compatibility check stand on it.

use std::any::Any;
use std::fmt::Debug;
use std::sync::Arc;

use weir_connectors::{PartitionFilter, ScanContext, TableDescriptor};
use weir_operators::signature::StatefulSpec;
use weir_runtime::graph::{JobGraph, OperatorFactory, Vertex, VertexId, VertexKind};
use weir_runtime::{Clock, Field, ShipStrategy, Value};

use crate::error::Result;
use crate::physical::lineage::{Lineage, Traced};
pub use crate::plan::ChangelogMode;

pub mod calc;
pub mod changelog_normalize;
pub mod correlate;
pub mod deduplicate;
pub mod exchange;
pub mod expand;
pub mod final_rows;
pub mod global_group_aggregate;
pub mod group_aggregate;
pub mod interval_join;
pub mod join;
pub mod local_group_aggregate;
pub mod local_window_aggregate;
pub mod lookup_join;
pub mod mini_batch_assigner;
pub mod over_aggregate;
pub mod rank;
pub mod session_window_aggregate;
pub mod session_window_table_function;
pub mod sink;
pub mod table_source_scan;
pub mod temporal_join;
pub mod temporal_sort;
pub mod union;
pub mod values;
pub mod watermark_assigner;
pub mod window_aggregate;
pub mod window_deduplicate;
pub mod window_join;
pub mod window_rank;
pub mod window_table_function;

/// The operator of a physical node: every kind of node — scans, VALUES, exchanges, unions,
/// sinks and the operators between them — is a [`PhysicalOp`] in a file of its own under
/// `physical/op/`, and the planner asks it what it needs to know.
#[derive(Debug, Clone)]
pub struct Operator(Arc<dyn PhysicalOp>);

impl std::ops::Deref for Operator {
    type Target = dyn PhysicalOp;

    fn deref(&self) -> &Self::Target {
        self.0.as_ref()
    }
}

impl<T: PhysicalOp> From<T> for Operator {
    fn from(op: T) -> Self {
        Operator(Arc::new(op))
    }
}

/// A physical operator with its inputs.
#[derive(Debug, Clone)]
pub struct PhysicalNode {
    /// What it does.
    pub operator: Operator,
    /// Its inputs.
    pub inputs: Vec<PhysicalNode>,
    /// Its output columns.
    pub fields: Vec<Field>,
    /// The row kinds it emits.
    pub changelog: ChangelogMode,
    /// How many subtasks run it: decided for the whole plan by `physical::distribution::Distribution`
    /// ([`UNASSIGNED`] until then).
    pub parallelism: usize,
}

/// The parallelism of a node `physical::distribution::Distribution` has not seen yet.
pub const UNASSIGNED: usize = 0;

impl PhysicalNode {
    /// A node running `operator` over `inputs`, its parallelism not yet decided.
    pub fn new(
        operator: impl Into<Operator>,
        inputs: Vec<PhysicalNode>,
        fields: Vec<Field>,
        changelog: ChangelogMode,
    ) -> Self {
        PhysicalNode { operator: operator.into(), inputs, fields, changelog, parallelism: UNASSIGNED }
    }

    /// A text that is equal for nodes that compute the same rows, so that they run once: scans
    /// of the same columns, and the same watermark assigner over such a scan (as Flink reuses
    /// the deepest common part of the plans of a statement set).
    pub fn reuse_digest(&self) -> Option<String> {
        self.operator.reuse_digest(self)
    }

    /// The table a scan reads or a sink writes; `None` for every other node.
    pub fn table(&self) -> Option<&TableDescriptor> {
        self.operator.table()
    }

    /// The columns whose values identify the row each change of this node updates, when there
    /// are: an aggregate's group keys, an updating scan's primary key (a CDC topic's), carried
    /// through Calcs that keep them ([`PhysicalOp::upsert_key`]).
    pub fn upsert_key(&self) -> Option<Vec<usize>> {
        match self.operator.forwards_rows() {
            true => self.inputs[0].upsert_key(),
            false => self.operator.upsert_key(self),
        }
    }

    /// Whether the rows of this node are already hashed on its columns `keys` (in that order):
    /// true above an exchange or a group aggregate on exactly those columns, through Calcs that
    /// pass the columns on unchanged ([`PhysicalOp::hashed_on`]).
    pub fn hashed_on(&self, keys: &[usize]) -> bool {
        self.operator.hashed_on(self, keys)
    }

    /// Flink's name for the node.
    pub fn name(&self) -> &'static str {
        self.operator.name()
    }

    /// The operator of this node when it is a `T`.
    pub fn op<T: PhysicalOp>(&self) -> Option<&T> {
        self.operator.0.as_ref().as_any().downcast_ref()
    }

    /// Whether this node's operator is a `T`.
    pub fn is<T: PhysicalOp>(&self) -> bool {
        self.op::<T>().is_some()
    }
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

/// The strategy of the edge from a vertex of `from` subtasks into one of `to`: what an Exchange
/// (or a sink's key-by) asked for, else FORWARD between equal parallelisms (the two chain), else
/// REBALANCE. The job graph and EXPLAIN's JSON plan both take their edges from here.
pub fn edge_strategy(exchange: Option<&ShipStrategy>, from: usize, to: usize) -> ShipStrategy {
    match exchange {
        Some(strategy) => strategy.clone(),
        None if from == to => ShipStrategy::Forward,
        None => ShipStrategy::Rebalance,
    }
}

/// What an operator's translation does to the job graph being built (`crate::translate`'s
/// `Translator` does it): it translates the operator's inputs, adds vertices and edges, and
/// records what it placed where.
pub trait Wiring<'p> {
    /// The vertices of `node` and its inputs (a node shared by reuse, once), and the exchange
    /// the edge out of it takes.
    ///
    /// # Errors
    /// A table whose connector refuses its options; what an operator refuses.
    fn translate(&mut self, node: &'p PhysicalNode) -> Result<Output>;

    /// The graph being built.
    fn graph(&mut self) -> &mut JobGraph;

    /// Records that `placed` runs in `vertex` (what the state compatibility check describes).
    fn place(&mut self, placed: Placed<'p>, vertex: VertexId);

    /// What a scan of this job tells its connector: batch or streaming, the key of a point
    /// query, the idle timeout, the partitions to read, whether the job starts now.
    fn scan_context(&self, key: Option<Vec<Value>>, partitions: Option<PartitionFilter>) -> ScanContext;

    /// The clock lookup caches expire entries by (the job's).
    fn clock(&self) -> Arc<dyn Clock>;

    /// A vertex named `name` at `parallelism`, built by `factory`, behind `input`'s edge.
    fn operator(&mut self, name: &str, input: &Output, parallelism: usize, factory: OperatorFactory) -> Output {
        let kind = VertexKind::Operator(factory);
        let vertex = self.graph().add_vertex(Vertex { name: name.to_string(), parallelism, kind });
        let strategy = edge_strategy(input.exchange.as_ref(), input.parallelism, parallelism);
        self.graph().connect(input.vertex, vertex, strategy);
        Output { vertex, parallelism, exchange: None }
    }

    /// The vertex of a node with one input, named `name`, built by `factory`, at the node's
    /// parallelism behind its input's edge.
    ///
    /// # Errors
    /// What translating the input reports.
    fn unary(&mut self, node: &'p PhysicalNode, name: &str, factory: OperatorFactory) -> Result<Output> {
        let input = self.translate(&node.inputs[0])?;
        Ok(self.operator(name, &input, node.parallelism, factory))
    }

    /// A two-input operator (a join) in a vertex of its own, its left input on input 0 and its
    /// right input on input 1.
    ///
    /// # Errors
    /// What translating the inputs reports.
    fn binary(&mut self, node: &'p PhysicalNode, factory: OperatorFactory) -> Result<Output> {
        let (left, right) = (self.translate(&node.inputs[0])?, self.translate(&node.inputs[1])?);
        let (name, parallelism) = (node.name().to_string(), node.parallelism);
        let vertex = self.graph().add_vertex(Vertex { name, parallelism, kind: VertexKind::Operator(factory) });
        for (input, side) in [(left, 0), (right, 1)] {
            let strategy = edge_strategy(input.exchange.as_ref(), input.parallelism, parallelism);
            self.graph().connect_input(input.vertex, vertex, side, strategy);
        }
        Ok(Output { vertex, parallelism, exchange: None })
    }
}

/// What EXPLAIN gives an operator to print its line with.
pub struct ExplainInput<'a> {
    /// The name of an input column (of the joined row, for an operator of several inputs).
    pub column: &'a dyn Fn(usize) -> String,
    /// The input's columns (all inputs', named unique, for an operator of several inputs).
    pub input_fields: &'a [Field],
    /// Whether expressions are printed infix (`=(a, b)` otherwise), as Flink's execution plan does.
    pub infix: bool,
}

/// How much state an operator keeps, as Confluent's EXPLAIN classes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum StateSize {
    /// Little state, or state that is let go of as time passes.
    Low,
    /// State per key, kept as long as the key.
    Medium,
    /// State that grows with every row.
    High,
}

/// What state an operator keeps.
#[derive(Clone, Copy)]
pub struct State<'a> {
    /// How much, as Confluent's EXPLAIN classes it (`None`: stateless).
    pub size: Option<StateSize>,
    /// The spec declaring what it writes into checkpoints; `None` when it keeps nothing there
    /// (stateless, flushed before every barrier, run only in batch jobs, or kept by its
    /// connector).
    pub checkpointed: Option<&'a dyn StatefulSpec>,
}

impl State<'_> {
    /// A stateless operator's.
    pub const NONE: State<'static> = State { size: None, checkpointed: None };
}

/// Where the subtasks of an operator run, as the distribution decides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// Chained to its input: its input's parallelism.
    ChainedToInput,
    /// Keyed by `keys` columns: the default parallelism, or one subtask with no key.
    Keyed {
        /// How many key columns (0: every row goes to one subtask).
        keys: usize,
    },
    /// On one subtask.
    OnOneSubtask,
    /// At the default parallelism (`parallelism.default`).
    AtDefaultParallelism,
    /// As its connector offers (`scan.parallelism`, `sink.parallelism`), else the default (a
    /// scan) or its input's (a sink).
    AsItsConnectorOffers,
}

/// What an operator asks of the mini-batch assigners below it (Flink's
/// `MiniBatchIntervalInferRule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MiniBatchNeed {
    /// Nothing: processing-time batches do.
    Nothing,
    /// Watermarks (Flink's `requireWatermark`): an assigner below passes them on.
    Watermarks,
    /// No mini-batch below (Flink's `GroupWindowAggregate`).
    NoMiniBatch,
}

impl MiniBatchNeed {
    /// [`MiniBatchNeed::Watermarks`] when `yes`, else [`MiniBatchNeed::Nothing`].
    pub fn watermarks_if(yes: bool) -> Self {
        if yes {
            MiniBatchNeed::Watermarks
        } else {
            MiniBatchNeed::Nothing
        }
    }
}

/// A physical operator: what a node of the plan does — read a table, run an operator of
/// `weir_operators` over its inputs, redistribute rows, write a table. Implement it in a file of
/// its own under `physical/op/`; the planner's phases ask every node through it, and match over
/// no kinds (a question about one operator is a downcast, [`PhysicalNode::op`]).
pub trait PhysicalOp: Debug + Send + Sync + AsAny + 'static {
    /// Flink's name of the node (its vertex's, the JSON plan's; EXPLAIN's line may print another
    /// form of it, as Flink does: `PythonCalc`, `Rank` for a deduplication, batch `Sort`).
    fn name(&self) -> &'static str;

    /// The node's EXPLAIN line, `Name(attribute=[…], …)`, with Flink's attributes.
    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String;

    /// Where its subtasks run.
    fn runs(&self) -> Runs;

    /// What state it keeps (`node` is the operator's node).
    fn state(&self, node: &PhysicalNode) -> State<'_>;

    /// Its output columns by lineage, and for an operator that keeps state its shape, which the
    /// state compatibility check compares across versions of a job.
    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced;

    /// Adds its vertex (and its inputs') to the job graph.
    ///
    /// # Errors
    /// What translating its inputs reports, and what Flink refuses when it translates the
    /// operator.
    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output>;

    /// The columns whose values identify the row each change of `node` updates, when there are
    /// (Flink's upsert keys); `None`, the safe answer, when they are unknown: a sink with a
    /// primary key then materializes its rows. Not asked of an operator that forwards its rows,
    /// whose key is its input's ([`PhysicalNode::upsert_key`]).
    fn upsert_key(&self, _node: &PhysicalNode) -> Option<Vec<usize>> {
        None
    }

    /// What it asks of the mini-batch assigners below it (`node` is the operator's node):
    /// watermarks for an operator on event time, nothing for most.
    fn mini_batch(&self, _node: &PhysicalNode) -> MiniBatchNeed {
        MiniBatchNeed::Nothing
    }

    /// A text equal for nodes that compute the same rows, so that they run once (see
    /// [`PhysicalNode::reuse_digest`]); `None`: never shared.
    fn reuse_digest(&self, _node: &PhysicalNode) -> Option<String> {
        None
    }

    /// Whether the rows of `node` are already hashed on its columns `keys` (in that order), so
    /// that a keyed operator above needs no exchange.
    fn hashed_on(&self, _node: &PhysicalNode, _keys: &[usize]) -> bool {
        false
    }

    /// The name of the source it is (`Source: orders` in the execution plan), `None` for an
    /// operator that has inputs.
    fn source_name(&self) -> Option<&str> {
        None
    }

    /// The table it reads or writes (a scan's, a sink's).
    fn table(&self) -> Option<&TableDescriptor> {
        None
    }

    /// Whether its rows leave as they came, in the same columns (an exchange, an assigner of
    /// watermarks or mini-batch markers): what is true of its input's rows is true of its own.
    fn forwards_rows(&self) -> bool {
        false
    }
}

/// An operator as [`Any`], to ask a node whether it is one operator in particular
/// ([`PhysicalNode::op`]); every operator has it.
pub trait AsAny {
    /// `self` as [`Any`].
    fn as_any(&self) -> &dyn Any;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What every operator's file uses.
pub(crate) mod prelude {
    pub(crate) use weir_operators::OperatorSpec;

    pub(crate) use super::{
        ExplainInput, MiniBatchNeed, Output, PhysicalNode, PhysicalOp, Runs, State, StateSize, Wiring,
    };
    pub(crate) use crate::error::Result;
    pub(crate) use crate::physical::lineage::{Lineage, RowRule, Traced};
}

/// Whether column `time_col` of `node`'s first input is an event-time attribute.
pub(crate) fn rowtime_input(node: &PhysicalNode, time_col: usize) -> bool {
    node.inputs.first().and_then(|input| input.fields.get(time_col)).and_then(|f| f.data_type.time_attribute)
        == Some(weir_runtime::types::TimeAttribute::Rowtime)
}
