//! A window aggregate over SESSION windows, in one phase (`WindowAggregate`, or Flink's
//! `GroupWindowAggregate` for a group window of the older syntax).

use weir_operators::{SessionWindowAggregateSpec, WindowKind, WindowSpec};

use super::prelude::*;
use crate::attributes::{aggregate_text, group_by};
use crate::attributes::{group_window_label, properties, time_col};
use crate::physical::state::Builder;

/// A SESSION window aggregate.
#[derive(Debug, Clone)]
pub struct SessionWindowAggregate(pub SessionWindowAggregateSpec);

impl PhysicalOp for SessionWindowAggregate {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (spec, fields, column) = (&self.0, &node.fields, input.column);
        if spec.group_window {
            let window = (WindowKind::Session { gap: spec.gap }, false);
            return group_window_label(&spec.keys, &spec.calls, window, spec.time_col, fields, column);
        }
        let mut select: Vec<String> = spec.keys.iter().map(|&k| column(k)).collect();
        for (c, f) in spec.calls.iter().zip(&fields[spec.keys.len()..]) {
            select.push(format!("{} AS {}", aggregate_text(c, column), f.name));
        }
        select.extend(properties(fields, spec.keys.len() + spec.calls.len(), spec.window_time));
        let window = WindowSpec::new(WindowKind::Session { gap: spec.gap }, 0);
        format!(
            "WindowAggregate({}window=[{}], select=[{}])",
            group_by(&spec.keys, column),
            window.explain(&time_col(column, spec.time_col)),
            select.join(", ")
        )
    }

    fn runs(&self) -> Runs {
        Runs::Keyed { keys: self.0.keys.len() }
    }

    fn mini_batch(&self, node: &PhysicalNode) -> MiniBatchNeed {
        if self.0.group_window {
            return MiniBatchNeed::NoMiniBatch;
        }
        MiniBatchNeed::watermarks_if(super::rowtime_input(node, self.0.time_col))
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Low), checkpointed: Some(&self.0) }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let (spec, input) = (&self.0, &inputs[0]);
        let window = format!("SESSION(gap={}, time={})", spec.gap, input.text(spec.time_col));
        let out = input.calls_out(&spec.keys, &spec.calls);
        let builder = Builder::new(node, inputs, "window aggregate")
            .key(&spec.keys, true)
            .define("window", window)
            .aggregates(input, &spec.calls);
        builder.finish(out, false)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, self.0.name(), self.0.factory())
    }
}
