//! `WatermarkAssigner`: watermarks from an expression over each row's time attribute, chained
//! to its scan.

use weir_operators::WatermarkAssignerSpec;

use super::prelude::*;
use crate::physical::state::passed_on;
use crate::plan_text::expression;

/// Watermarks from an expression.
#[derive(Debug, Clone)]
pub struct WatermarkAssigner(pub WatermarkAssignerSpec);

impl PhysicalOp for WatermarkAssigner {
    fn name(&self) -> &'static str {
        "WatermarkAssigner"
    }

    fn explain(&self, _node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let WatermarkAssignerSpec { rowtime, watermark, .. } = &self.0;
        format!(
            "WatermarkAssigner(rowtime=[{}], watermark=[{}])",
            (input.column)(*rowtime),
            expression(watermark, input.column, input.infix)
        )
    }

    fn runs(&self) -> Runs {
        Runs::ChainedToInput
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State::NONE
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        Traced::Output(passed_on(node, inputs))
    }

    fn forwards_rows(&self) -> bool {
        true
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, "WatermarkAssigner", self.0.factory())
    }

    /// The same watermark assigner over the same scan, at the same parallelism: a statement
    /// set's plans share it, as Flink reuses the deepest common part of them.
    fn reuse_digest(&self, node: &PhysicalNode) -> Option<String> {
        let input = node.inputs.first()?.reuse_digest()?;
        let WatermarkAssignerSpec { rowtime, watermark, .. } = &self.0;
        Some(format!("WatermarkAssigner({rowtime}, {watermark:?})@{}<{input}", node.parallelism))
    }
}
