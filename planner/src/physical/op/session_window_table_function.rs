//! The SESSION window function on its own (`WindowTableFunction` in EXPLAIN): each row with its
//! session's window columns, once the session has closed.

use weir_operators::{SessionTableFunctionSpec, WindowKind, WindowSpec};

use super::prelude::*;
use crate::physical::state::Builder;

/// The SESSION window table function.
#[derive(Debug, Clone)]
pub struct SessionWindowTableFunction(pub SessionTableFunctionSpec);

impl PhysicalOp for SessionWindowTableFunction {
    fn name(&self) -> &'static str {
        "WindowTableFunction"
    }

    fn explain(&self, _node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (spec, column) = (&self.0, input.column);
        let window = WindowSpec::new(WindowKind::Session { gap: spec.gap }, 0);
        let mut text = window.explain(&crate::attributes::time_col(column, spec.time_col));
        text.pop();
        if !spec.partition.is_empty() {
            let keys: Vec<String> = spec.partition.iter().map(|&p| column(p)).collect();
            text.push_str(&format!(", partition keys=[{}]", keys.join(", ")));
        }
        format!("WindowTableFunction(window=[{text})])")
    }

    fn runs(&self) -> Runs {
        Runs::Keyed { keys: self.0.partition.len() }
    }

    fn mini_batch(&self, node: &PhysicalNode) -> MiniBatchNeed {
        MiniBatchNeed::watermarks_if(super::rowtime_input(node, self.0.time_col))
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Low), checkpointed: Some(&self.0) }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let spec = &self.0;
        let window = format!("SESSION(gap={}, time={})", spec.gap, inputs[0].text(spec.time_col));
        let props = ["window_start", "window_end", "window_time"].map(|p| format!("{window}.{p}")).to_vec();
        let builder = Builder::new(node, inputs, "session window table function")
            .key(&spec.partition, false)
            .define("window", window)
            .rows(RowRule::Lineage);
        builder.finish(props, true)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, "WindowTableFunction", self.0.factory())
    }
}
