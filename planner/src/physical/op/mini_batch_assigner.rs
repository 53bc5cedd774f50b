//! `MiniBatchAssigner`: injects flush markers every interval (processing time) or at interval
//! boundaries of the watermark (event time), which the mini-batch operators above flush on.

use weir_operators::{MiniBatchAssignerSpec, MiniBatchMode};

use super::prelude::*;
use crate::physical::state::passed_on;

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
        translator.unary(node, "MiniBatchAssigner", self.0.factory())
    }
}
