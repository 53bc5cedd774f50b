//! `Join`: a regular join of two streams, each side's rows kept in keyed state (until the
//! join's state TTL lets them go).

use weir_operators::join::RegularJoinSpec;

use super::prelude::*;
use crate::attributes::condition_text;
use crate::attributes::names;

/// A regular join of its two inputs (left, then right).
#[derive(Debug, Clone)]
pub struct Join(pub RegularJoinSpec);

impl PhysicalOp for Join {
    fn name(&self) -> &'static str {
        "Join"
    }

    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let spec = &self.0;
        format!(
            "Join(joinType=[{}], where=[{}], select=[{}], leftInputSpec=[{}], rightInputSpec=[{}])",
            spec.join_type.name(),
            condition_text(spec.condition.as_ref(), input.column, input.infix),
            names(&node.fields),
            spec.sides[0].name(),
            spec.sides[1].name()
        )
    }

    fn runs(&self) -> Runs {
        Runs::Keyed { keys: self.0.keys[0].len() }
    }

    fn state(&self, node: &PhysicalNode) -> State<'_> {
        // High when every input is append-only (Confluent's outputs; its docs say "at least one").
        let size = match node.inputs.iter().all(|i| i.changelog.is_insert_only()) {
            true => StateSize::High,
            false => StateSize::Medium,
        };
        State { size: Some(size), checkpointed: Some(&self.0) }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let spec = &self.0;
        let condition = spec.condition.as_ref();
        crate::physical::state::join(node, inputs, "regular join", &spec.join_type, &spec.keys, condition, Vec::new())
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.binary(node, self.0.factory())
    }
}
