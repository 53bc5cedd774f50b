//! `GlobalGroupAggregate`: the second phase of a two-phase group aggregate, merging the local
//! phase's partial accumulators into keyed state.

use weir_operators::GlobalGroupAggregateSpec;
use weir_runtime::Field;

use super::local_group_aggregate::LocalGroupAggregate;
use super::prelude::*;
use crate::attributes::{global_select, group_by};
use crate::physical::state::{lineage, local_phase, Builder};

/// The global phase of a group aggregate.
#[derive(Debug, Clone)]
pub struct GlobalGroupAggregate {
    /// The operator.
    pub spec: GlobalGroupAggregateSpec,
    /// The names of the local aggregate's columns, for EXPLAIN.
    pub local_fields: Vec<Field>,
}

impl PhysicalOp for GlobalGroupAggregate {
    fn name(&self) -> &'static str {
        "GlobalGroupAggregate"
    }

    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (GlobalGroupAggregateSpec { key_count, calls, .. }, column) = (&self.spec, input.column);
        let keys: Vec<usize> = (0..*key_count).collect();
        let select = global_select(*key_count, calls, &node.fields, &self.local_fields, column);
        format!("GlobalGroupAggregate({}select=[{}])", group_by(&keys, column), select.join(", "))
    }

    fn upsert_key(&self, _node: &PhysicalNode) -> Option<Vec<usize>> {
        (self.spec.key_count > 0).then(|| (0..self.spec.key_count).collect())
    }

    fn runs(&self) -> Runs {
        Runs::Keyed { keys: self.spec.key_count }
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Medium), checkpointed: Some(&self.spec) }
    }

    /// Described by the rows its local phase aggregates.
    fn trace(&self, node: &PhysicalNode, _inputs: &[Lineage]) -> Traced {
        let local = local_phase(node);
        let Some(LocalGroupAggregate(local_spec)) = local.op::<LocalGroupAggregate>() else {
            return Traced::State(None);
        };
        let below = lineage(&local.inputs[0]);
        let keys = &local_spec.keys[..self.spec.key_count.min(local_spec.keys.len())];
        let out = below.calls_out(keys, &local_spec.calls);
        let mut builder = Builder::new(node, std::slice::from_ref(&below), "group aggregate")
            .key(keys, true)
            .aggregates(&below, &local_spec.calls);
        builder.shape.depth = below.depth;
        builder.finish(out, false)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, "GlobalGroupAggregate", self.spec.factory())
    }

    /// Its rows leave hashed on its group keys, its first columns.
    fn hashed_on(&self, _node: &PhysicalNode, keys: &[usize]) -> bool {
        self.spec.key_count > 0 && keys.iter().copied().eq(0..self.spec.key_count)
    }
}
