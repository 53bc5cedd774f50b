//! `TemporalSort`: `ORDER BY` a time attribute (then other keys), on one subtask; rows leave in
//! time order as the watermark (or processing time) passes them.

use weir_operators::ranking::SortKey;
use weir_operators::TemporalSortSpec;

use super::prelude::*;
use crate::physical::state::Builder;

/// `ORDER BY` a time attribute, on one subtask.
#[derive(Debug, Clone)]
pub struct TemporalSort {
    /// The operator.
    pub spec: TemporalSortSpec,
    /// All the ORDER BY keys, the time attribute first, for EXPLAIN.
    pub order: Vec<SortKey>,
}

impl PhysicalOp for TemporalSort {
    fn name(&self) -> &'static str {
        "TemporalSort"
    }

    fn explain(&self, _node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        format!("TemporalSort(orderBy=[{}])", crate::attributes::order_text(&self.order, input.column))
    }

    fn runs(&self) -> Runs {
        Runs::OnOneSubtask
    }

    fn mini_batch(&self, _node: &PhysicalNode) -> MiniBatchNeed {
        // Flink's TemporalSort does not ask for watermarks: under mini-batch its rows wait for
        // the end of input (or a processing-time assigner's final watermark), as Flink's do.
        MiniBatchNeed::Nothing
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Low), checkpointed: Some(&self.spec) }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let builder = Builder::new(node, inputs, "temporal sort").define("order", inputs[0].order(&self.order));
        // On processing time the sort keeps no rows across a checkpoint (it lets them go before
        // the barrier).
        let builder = if self.spec.rowtime { builder.rows(RowRule::Lineage) } else { builder };
        builder.finish(Vec::new(), true)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, "TemporalSort", self.spec.factory())
    }
}
