//! The contract of a physical operator: everything the planner asks of one kind of node, in one
//! trait, so that a new operator is one file under `physical/op/` (its struct and its
//! `impl PhysicalOp`) beside its runtime operator. The required methods are the questions every
//! operator must answer — its name, its EXPLAIN line, its upsert key, where it runs, what it asks
//! of mini-batch, its state (class, signature and shape) and the vertex it becomes; the provided
//! ones have an answer that is right for almost every operator.
//!
//! Every node of a physical plan is one: the scans, VALUES, exchanges, unions and sinks that
//! give a plan its structure as much as the operators between them.

use std::any::Any;
use std::fmt::Debug;

use weir_operators::signature::StatefulSpec;
use weir_runtime::Field;

use super::PhysicalNode;
use crate::error::Result;
use crate::physical::lineage::Traced;
use crate::translate::{Output, Translator};

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

/// What EXPLAIN gives an operator to print its line with.
pub struct ExplainInput<'a> {
    /// The name of an input column (of the joined row, for an operator of two inputs).
    pub column: &'a dyn Fn(usize) -> String,
    /// The input's columns (both inputs', named unique, for an operator of two inputs).
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

/// A physical operator: a node of the plan that runs an operator of `weir_operators` over its
/// inputs. Implement it in a file of its own under `physical/op/`; the planner's phases ask
/// every operator through it and name no operator.
pub trait PhysicalOp: Debug + Send + Sync + AsAny + 'static {
    /// Flink's name of the node, as EXPLAIN prints it.
    fn name(&self) -> &'static str;

    /// The node's EXPLAIN line, `Name(attribute=[…], …)`, with Flink's attributes.
    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String;

    /// The columns whose values identify the row each change of `node` updates, when there are.
    fn upsert_key(&self, node: &PhysicalNode) -> Option<Vec<usize>>;

    /// Where its subtasks run.
    fn runs(&self) -> Runs;

    /// What it asks of the mini-batch assigners below it (`node` is the operator's node).
    fn mini_batch(&self, node: &PhysicalNode) -> MiniBatchNeed;

    /// How much state it keeps, as Confluent's EXPLAIN classes it (`None`: stateless).
    fn state_size(&self, node: &PhysicalNode) -> Option<StateSize>;

    /// The spec declaring what it writes into checkpoints; `None` when it keeps no state there
    /// (stateless, flushed before every barrier, or run only in batch jobs).
    fn state(&self) -> Option<&dyn StatefulSpec>;

    /// Its output columns by lineage, and for an operator that keeps state its shape, which the
    /// state compatibility check compares across versions of a job.
    fn trace(&self, node: &PhysicalNode, inputs: &[crate::physical::lineage::Lineage]) -> Traced;

    /// Adds its vertex (and its inputs') to the job graph.
    ///
    /// # Errors
    /// What translating its inputs reports, and what Flink refuses when it translates the
    /// operator.
    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut Translator<'p>) -> Result<Output>;

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
    pub(crate) use weir_operators::signature::StatefulSpec;
    pub(crate) use weir_operators::OperatorSpec;

    pub(crate) use super::{ExplainInput, MiniBatchNeed, PhysicalOp, Runs, StateSize};
    pub(crate) use crate::error::Result;
    pub(crate) use crate::physical::lineage::{Lineage, Traced};
    pub(crate) use crate::physical::state::{Builder, RowRule};
    pub(crate) use crate::physical::PhysicalNode;
    pub(crate) use crate::translate::{Output, Translator};
}

/// Whether column `time_col` of `node`'s first input is an event-time attribute.
pub(crate) fn rowtime_input(node: &PhysicalNode, time_col: usize) -> bool {
    node.inputs.first().and_then(|input| input.fields.get(time_col)).and_then(|f| f.data_type.time_attribute)
        == Some(weir_runtime::types::TimeAttribute::Rowtime)
}
