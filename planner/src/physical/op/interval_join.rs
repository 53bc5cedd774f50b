//! `IntervalJoin`: a join of two streams whose times lie within bounds of each other; rows
//! leave state as time passes the bounds.

use weir_operators::join::IntervalJoinSpec;

use super::prelude::*;
use crate::attributes::condition_text;
use crate::attributes::names;

/// An interval join of its two inputs.
#[derive(Debug, Clone)]
pub struct IntervalJoin(pub IntervalJoinSpec);

impl PhysicalOp for IntervalJoin {
    fn name(&self) -> &'static str {
        "IntervalJoin"
    }

    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let spec = &self.0;
        format!(
            "IntervalJoin(joinType=[{}], windowBounds=[isRowTime={}, leftLowerBound={}, leftUpperBound={}, \
             leftTimeIndex={}, rightTimeIndex={}], where=[{}], select=[{}])",
            spec.join_type.name(),
            spec.rowtime,
            spec.lower,
            spec.upper,
            spec.times[0],
            spec.times[1],
            condition_text(spec.condition.as_ref(), input.column, input.infix),
            names(&node.fields)
        )
    }

    fn runs(&self) -> Runs {
        Runs::Keyed { keys: self.0.keys[0].len() }
    }

    fn mini_batch(&self, _node: &PhysicalNode) -> MiniBatchNeed {
        MiniBatchNeed::watermarks_if(self.0.rowtime)
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Low), checkpointed: Some(&self.0) }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let spec = &self.0;
        let interval = format!(
            "[{}, {}] ms between {} and {}",
            spec.lower,
            spec.upper,
            inputs[0].text(spec.times[0]),
            inputs[1].text(spec.times[1])
        );
        let condition = spec.condition.as_ref();
        let more = vec![("interval", interval)];
        crate::physical::state::join(node, inputs, "interval join", &spec.join_type, &spec.keys, condition, more)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.binary(node, self.0.factory())
    }
}
