//! `WindowTableFunction`: each row with the window columns of every TUMBLE, HOP or CUMULATE
//! window it falls in (once per window); stateless.

use weir_operators::WindowTableFunctionSpec;

use super::prelude::*;
use crate::physical::state::columns_of;

/// Appends the window columns to each row, once per window.
#[derive(Debug, Clone)]
pub struct WindowTableFunction(pub WindowTableFunctionSpec);

impl PhysicalOp for WindowTableFunction {
    fn name(&self) -> &'static str {
        "WindowTableFunction"
    }

    fn explain(&self, _node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let time = crate::attributes::time_col(input.column, self.0.time_col);
        format!("WindowTableFunction(window=[{}])", self.0.window.explain(&time))
    }

    fn runs(&self) -> Runs {
        Runs::ChainedToInput
    }

    fn mini_batch(&self, node: &PhysicalNode) -> MiniBatchNeed {
        MiniBatchNeed::watermarks_if(super::rowtime_input(node, self.0.time_col))
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Low), checkpointed: None }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let input = inputs.first().cloned().unwrap_or_default();
        let texts = input.texts(&(0..input.columns.len()).collect::<Vec<_>>());
        let window = format!("{:?}({})", self.0.window, input.text(self.0.time_col));
        Traced::Output(Lineage { columns: columns_of(node, texts, &window), ..input })
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, "WindowTableFunction", self.0.factory())
    }
}
