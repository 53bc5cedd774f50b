//! `OverAggregate`: aggregates over a frame of the preceding rows of each partition, ordered by
//! a time attribute.

use weir_operators::OverAggregateSpec;

use super::prelude::*;
use crate::physical::state::Builder;
use crate::plan_text::phase_text;

/// Aggregates over a frame of preceding rows.
#[derive(Debug, Clone)]
pub struct OverAggregate(pub OverAggregateSpec);

impl PhysicalOp for OverAggregate {
    fn name(&self) -> &'static str {
        "OverAggregate"
    }

    /// `OverAggregate(partitionBy=[user_id], orderBy=[ts ASC], window=[ ROWS BETWEEN 2 PRECEDING
    /// AND CURRENT ROW], select=[id, …, COUNT(amount) AS w0$o0])` (no `partitionBy` without
    /// partition).
    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (spec, column) = (&self.0, input.column);
        let mut select: Vec<String> = (0..spec.input_arity).map(column).collect();
        for (call, field) in spec.calls.iter().zip(&node.fields[spec.input_arity..]) {
            select.push(format!("{} AS {}", phase_text(call, None, column), field.name));
        }
        let partition = if spec.partition.is_empty() {
            String::new()
        } else {
            format!("partitionBy=[{}], ", crate::attributes::columns(&spec.partition, column))
        };
        format!(
            "OverAggregate({partition}orderBy=[{} ASC], window=[{}], select=[{}])",
            column(spec.time_col),
            spec.frame.explain(),
            select.join(", ")
        )
    }

    fn runs(&self) -> Runs {
        Runs::Keyed { keys: self.0.partition.len() }
    }

    fn mini_batch(&self, _node: &PhysicalNode) -> MiniBatchNeed {
        MiniBatchNeed::watermarks_if(self.0.rowtime)
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Medium), checkpointed: Some(&self.0) }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let (spec, input) = (&self.0, &inputs[0]);
        let over = format!(
            "PARTITION BY {} ORDER BY {} {}",
            input.texts(&spec.partition).join(", "),
            input.text(spec.time_col),
            spec.frame.explain()
        );
        let out: Vec<String> = spec.calls.iter().map(|c| format!("{} OVER ({over})", input.call(c).text)).collect();
        let builder = Builder::new(node, inputs, "over aggregate")
            .key(&spec.partition, false)
            .define("order", format!("{} ASC", input.text(spec.time_col)))
            .define("frame", spec.frame.explain())
            .rows(RowRule::Lineage)
            .aggregates(input, &spec.calls);
        builder.finish(out, true)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, "OverAggregate", self.0.factory())
    }
}
