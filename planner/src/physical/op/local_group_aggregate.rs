//! `LocalGroupAggregate`: the first phase of a two-phase group aggregate, partial accumulators
//! per mini-batch, flushed at every flush marker and checkpoint barrier.

use weir_operators::LocalGroupAggregateSpec;

use super::prelude::*;
use crate::attributes::{group_by, local_select};

/// The local phase of a group aggregate.
#[derive(Debug, Clone)]
pub struct LocalGroupAggregate(pub LocalGroupAggregateSpec);

impl PhysicalOp for LocalGroupAggregate {
    fn name(&self) -> &'static str {
        "LocalGroupAggregate"
    }

    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (LocalGroupAggregateSpec { keys, calls, .. }, column) = (&self.0, input.column);
        let select = local_select(keys, calls, &node.fields, column);
        format!("LocalGroupAggregate({}select=[{}])", group_by(keys, column), select.join(", "))
    }

    fn runs(&self) -> Runs {
        Runs::ChainedToInput
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        // Flushed before every checkpoint barrier.
        State { size: Some(StateSize::Medium), checkpointed: None }
    }

    fn trace(&self, _node: &PhysicalNode, _inputs: &[Lineage]) -> Traced {
        // Its global phase describes the state both keep.
        Traced::State(None)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, "LocalGroupAggregate", self.0.factory())
    }
}
