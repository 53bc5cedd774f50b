//! `GroupAggregate`: a streaming group aggregate in one phase, per record or in mini-batches
//! (when its spec has a trigger), its accumulators in keyed state.

use weir_operators::GroupAggregateSpec;

use super::prelude::*;
use crate::attributes::{aggregate_text, group_by};
use crate::physical::state::Builder;

/// A group aggregate in one phase.
#[derive(Debug, Clone)]
pub struct GroupAggregate(pub GroupAggregateSpec);

impl PhysicalOp for GroupAggregate {
    fn name(&self) -> &'static str {
        "GroupAggregate"
    }

    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (GroupAggregateSpec { keys, calls, .. }, column) = (&self.0, input.column);
        let mut select: Vec<String> = keys.iter().map(|k| column(*k)).collect();
        for (c, f) in calls.iter().zip(&node.fields[keys.len()..]) {
            select.push(format!("{} AS {}", aggregate_text(c, column), f.name));
        }
        format!("GroupAggregate({}select=[{}])", group_by(keys, column), select.join(", "))
    }

    fn upsert_key(&self, _node: &PhysicalNode) -> Option<Vec<usize>> {
        (!self.0.keys.is_empty()).then(|| (0..self.0.keys.len()).collect())
    }

    fn runs(&self) -> Runs {
        Runs::Keyed { keys: self.0.keys.len() }
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Medium), checkpointed: Some(&self.0) }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let (spec, input) = (&self.0, &inputs[0]);
        let out = input.calls_out(&spec.keys, &spec.calls);
        let builder =
            Builder::new(node, inputs, "group aggregate").key(&spec.keys, true).aggregates(input, &spec.calls);
        builder.finish(out, false)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, self.0.name(), self.0.factory())
    }

    /// Its rows leave hashed on its group keys, its first columns.
    fn hashed_on(&self, _node: &PhysicalNode, keys: &[usize]) -> bool {
        !self.0.keys.is_empty() && keys.iter().copied().eq(0..self.0.keys.len())
    }
}
