//! `FinalRows` (batch mode): the input's changelog folded into its final rows, emitted as
//! inserts when the input ends — printed as Flink's batch `Sort` when it sorts insert-only rows.

use weir_operators::FinalRowsSpec;

use super::prelude::*;
use crate::attributes::order_text;
use crate::physical::state::passed_on;

/// The final rows of its input.
#[derive(Debug, Clone)]
pub struct FinalRows(pub FinalRowsSpec);

impl PhysicalOp for FinalRows {
    fn name(&self) -> &'static str {
        "FinalRows"
    }

    /// Flink's batch `Sort(orderBy=[…])` over rows that only insert; else `FinalRows`, with the
    /// key the rows fold by and the order they leave in.
    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (spec, column) = (&self.0, input.column);
        let sorts_inserts = node.inputs.first().is_some_and(|i| i.changelog.is_insert_only());
        if sorts_inserts && !spec.order.is_empty() {
            return format!("Sort(orderBy=[{}])", order_text(&spec.order, column));
        }
        let mut attributes = Vec::new();
        if let Some(key) = &spec.key {
            attributes.push(format!("key=[{}]", key.iter().map(|&k| column(k)).collect::<Vec<_>>().join(", ")));
        }
        if !spec.order.is_empty() {
            attributes.push(format!("orderBy=[{}]", order_text(&spec.order, column)));
        }
        match attributes.is_empty() {
            true => "FinalRows".to_string(),
            false => format!("FinalRows({})", attributes.join(", ")),
        }
    }

    fn upsert_key(&self, _node: &PhysicalNode) -> Option<Vec<usize>> {
        self.0.key.clone()
    }

    fn runs(&self) -> Runs {
        Runs::ChainedToInput
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        // Batch jobs take no checkpoints.
        State { size: Some(StateSize::Medium), checkpointed: None }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        Traced::Output(passed_on(node, inputs))
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, "FinalRows", self.0.factory())
    }
}
