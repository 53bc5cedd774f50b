//! `MiniBatchAssigner`: injects flush markers every interval (processing time) or at interval
//! boundaries of the watermark (event time), which the mini-batch operators above flush on.

use weir_operators::{MiniBatchAssignerSpec, MiniBatchMode};

use super::prelude::*;
use super::watermark_assigner::passed_on;
use crate::physical::upsert_key;

/// Injects flush markers every interval; its mode is decided for the whole plan
/// (`physical::mini_batch`).
#[derive(Debug, Clone)]
pub struct MiniBatchAssigner(pub MiniBatchAssignerSpec);

impl PhysicalOp for MiniBatchAssigner {
    fn name(&self) -> &'static str {
        "MiniBatchAssigner"
    }

    fn explain(&self, _node: &PhysicalNode, _input: &ExplainInput<'_>) -> String {
        let MiniBatchAssignerSpec { interval_millis, mode } = &self.0;
        let mode = match mode {
            MiniBatchMode::ProcTime => "ProcTime",
            MiniBatchMode::RowTime => "RowTime",
        };
        format!("MiniBatchAssigner(interval=[{interval_millis}ms], mode=[{mode}])")
    }

    fn upsert_key(&self, node: &PhysicalNode) -> Option<Vec<usize>> {
        upsert_key(&node.inputs[0])
    }

    fn runs(&self) -> Runs {
        Runs::ChainedToInput
    }

    fn mini_batch(&self, _node: &PhysicalNode) -> MiniBatchNeed {
        MiniBatchNeed::Nothing
    }

    fn state_size(&self, _node: &PhysicalNode) -> Option<StateSize> {
        None
    }

    fn state(&self) -> Option<&dyn StatefulSpec> {
        None
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        Traced::Output(passed_on(node, inputs))
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut Translator<'p>) -> Result<Output> {
        translator.unary(node, "MiniBatchAssigner", self.0.factory())
    }
}
