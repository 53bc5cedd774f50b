//! `LocalWindowAggregate`: the first phase of a two-phase window aggregate, partial
//! accumulators per key and slice, flushed before every checkpoint barrier.

use weir_operators::LocalWindowAggregateSpec;

use super::prelude::*;
use crate::attributes::time_col;
use crate::attributes::{group_by, local_select};

/// The local phase of a window aggregate.
#[derive(Debug, Clone)]
pub struct LocalWindowAggregate(pub LocalWindowAggregateSpec);

impl PhysicalOp for LocalWindowAggregate {
    fn name(&self) -> &'static str {
        "LocalWindowAggregate"
    }

    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (spec, column) = (&self.0, input.column);
        let mut select = local_select(&spec.keys, &spec.calls, &node.fields, column);
        select.push("slice_end('w$) AS $slice_end".to_string());
        format!(
            "LocalWindowAggregate({}window=[{}], select=[{}])",
            group_by(&spec.keys, column),
            spec.window.explain(&time_col(column, spec.time_col)),
            select.join(", ")
        )
    }

    fn runs(&self) -> Runs {
        Runs::ChainedToInput
    }

    fn mini_batch(&self, node: &PhysicalNode) -> MiniBatchNeed {
        MiniBatchNeed::watermarks_if(super::rowtime_input(node, self.0.time_col))
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
        translator.unary(node, "LocalWindowAggregate", self.0.factory())
    }
}
