//! `WindowAggregate`: a window aggregate in one phase over TUMBLE, HOP or CUMULATE windows —
//! over rows, or (after a `LocalWindowAggregate`) as the global phase over partial accumulators
//! (`GlobalWindowAggregate`); a group window of the older syntax prints as Flink's
//! `GroupWindowAggregate`.

use weir_operators::{WindowAggregateInput, WindowAggregateSpec};
use weir_runtime::Field;

use super::local_window_aggregate::LocalWindowAggregate;
use super::prelude::*;
use crate::attributes::{aggregate_text, global_select, group_by};
use crate::attributes::{group_window_label, properties, time_col};
use crate::physical::state::{lineage, local_phase, Builder};

/// A window aggregate; `local_fields` when it is the global phase of a two-phase one.
#[derive(Debug, Clone)]
pub struct WindowAggregate {
    /// The operator.
    pub spec: WindowAggregateSpec,
    /// The local phase's columns, for EXPLAIN, when this is the global phase.
    pub local_fields: Option<Vec<Field>>,
}

impl PhysicalOp for WindowAggregate {
    fn name(&self) -> &'static str {
        match self.local_fields {
            Some(_) => "GlobalWindowAggregate",
            None => self.spec.name(),
        }
    }

    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (spec, fields, column) = (&self.spec, &node.fields, input.column);
        if let Some(local_fields) = &self.local_fields {
            let key_count = spec.keys.len();
            let mut select = global_select(key_count, &spec.calls, fields, local_fields, column);
            select.extend(properties(fields, key_count + spec.calls.len(), spec.window_time));
            return format!(
                "GlobalWindowAggregate({}window=[{}], select=[{}])",
                group_by(&spec.keys, column),
                spec.window.explain("slice_end=[$slice_end]"),
                select.join(", ")
            );
        }
        if let (true, WindowAggregateInput::Rows { time_col, processing_time }) = (spec.group_window, spec.input) {
            let window = (spec.window.kind, processing_time);
            return group_window_label(&spec.keys, &spec.calls, window, time_col, fields, column);
        }
        let mut select: Vec<String> = spec.keys.iter().map(|&k| column(k)).collect();
        for (c, f) in spec.calls.iter().zip(&fields[spec.keys.len()..]) {
            select.push(format!("{} AS {}", aggregate_text(c, column), f.name));
        }
        select.extend(properties(fields, spec.keys.len() + spec.calls.len(), spec.window_time));
        let time = match spec.input {
            WindowAggregateInput::Rows { time_col: t, .. } => time_col(column, t),
            WindowAggregateInput::Partials => "slice_end=[$slice_end]".to_string(),
        };
        format!(
            "WindowAggregate({}window=[{}], select=[{}])",
            group_by(&spec.keys, column),
            spec.window.explain(&time),
            select.join(", ")
        )
    }

    fn runs(&self) -> Runs {
        Runs::Keyed { keys: self.spec.keys.len() }
    }

    fn mini_batch(&self, _node: &PhysicalNode) -> MiniBatchNeed {
        if self.spec.group_window {
            return MiniBatchNeed::NoMiniBatch;
        }
        match self.spec.input {
            WindowAggregateInput::Rows { processing_time, .. } => MiniBatchNeed::watermarks_if(!processing_time),
            WindowAggregateInput::Partials => MiniBatchNeed::Watermarks,
        }
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        let size = match self.local_fields {
            Some(_) => StateSize::Medium,
            None => StateSize::Low,
        };
        State { size: Some(size), checkpointed: Some(&self.spec) }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let spec = &self.spec;
        if self.local_fields.is_some() {
            // The global phase is described by the rows its local phase aggregates.
            let local = local_phase(node);
            let Some(LocalWindowAggregate(local_spec)) = local.op::<LocalWindowAggregate>() else {
                return Traced::State(None);
            };
            let below = lineage(&local.inputs[0]);
            let window = format!("{:?}({})", local_spec.window, below.text(local_spec.time_col));
            let out = below.calls_out(&local_spec.keys, &local_spec.calls);
            let mut builder = Builder::new(node, std::slice::from_ref(&below), "window aggregate")
                .key(&local_spec.keys, true)
                .define("window", window)
                .aggregates(&below, &local_spec.calls);
            builder.shape.depth = below.depth;
            return builder.finish(out, false);
        }
        let input = &inputs[0];
        let time = match spec.input {
            WindowAggregateInput::Rows { time_col, .. } => input.text(time_col),
            WindowAggregateInput::Partials => String::new(),
        };
        let out = input.calls_out(&spec.keys, &spec.calls);
        let builder = Builder::new(node, inputs, "window aggregate")
            .key(&spec.keys, true)
            .define("window", format!("{:?}({time})", spec.window))
            .aggregates(input, &spec.calls);
        builder.finish(out, false)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, self.spec.name(), self.spec.factory())
    }
}
