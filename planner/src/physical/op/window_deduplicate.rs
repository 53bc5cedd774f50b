//! `WindowDeduplicate`: the first or last row of each window per key, over rows that carry
//! their window.

use weir_operators::WindowDeduplicateSpec;

use super::prelude::*;
use crate::attributes::{attached, columns};
use crate::physical::state::Builder;

/// Window deduplication.
#[derive(Debug, Clone)]
pub struct WindowDeduplicate(pub WindowDeduplicateSpec);

impl PhysicalOp for WindowDeduplicate {
    fn name(&self) -> &'static str {
        "WindowDeduplicate"
    }

    fn explain(&self, _node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (spec, column) = (&self.0, input.column);
        format!(
            "WindowDeduplicate(window=[{}], keep=[{}], partitionKeys=[{}], orderKey=[{}], order=[ROWTIME])",
            attached(&spec.window, column),
            if spec.keep_last { "LastRow" } else { "FirstRow" },
            columns(&spec.partition, column),
            column(spec.time_col)
        )
    }

    fn runs(&self) -> Runs {
        Runs::Keyed { keys: self.0.partition.len() }
    }

    fn mini_batch(&self, _node: &PhysicalNode) -> MiniBatchNeed {
        // Window deduplication runs on event time only.
        MiniBatchNeed::Watermarks
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Low), checkpointed: Some(&self.0) }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let spec = &self.0;
        let order = format!("{} {}", inputs[0].text(spec.time_col), if spec.keep_last { "DESC" } else { "ASC" });
        let builder = Builder::new(node, inputs, "window deduplicate")
            .key(&spec.partition, false)
            .define("window", format!("{:?}", spec.window.spec))
            .define("order", order)
            .rows(RowRule::Lineage);
        builder.finish(Vec::new(), true)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, "WindowDeduplicate", self.0.factory())
    }
}
