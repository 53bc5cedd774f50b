//! `Correlate`: each row joined with the rows of a table function of it — `CROSS JOIN
//! UNNEST(…)` or a user-defined table function (Flink's `PythonCorrelate` for a Python one).

use weir_operators::{CorrelateSpec, CorrelatedTable};

use super::prelude::*;
use crate::physical::state::columns_of;
use crate::plan_text::{calcite_type, expression};

/// A join with a table function of each row.
#[derive(Debug, Clone)]
pub struct Correlate(pub CorrelateSpec);

/// The correlates in `node`'s tree.
fn correlates_in(node: &PhysicalNode) -> usize {
    usize::from(node.is::<Correlate>()) + node.inputs.iter().map(correlates_in).sum::<usize>()
}

impl PhysicalOp for Correlate {
    fn name(&self) -> &'static str {
        "Correlate"
    }

    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (spec, column) = (&self.0, input.column);
        // Flink numbers the correlation variables from the innermost correlate out.
        let variable = correlates_in(&node.inputs[0]);
        let correlated = |i: usize| format!("$cor{variable}.{}", column(i));
        let invocation = match &spec.table {
            CorrelatedTable::Unnest { collection, ordinality } => {
                let function = if *ordinality { "$UNNEST_ROWS_WITH_ORDINALITY$1" } else { "$UNNEST_ROWS$1" };
                format!("{function}({})", expression(collection, &correlated, false))
            }
            CorrelatedTable::Function(call) if call.function.is_python() => {
                // Flink's PythonCorrelate reads its arguments by position.
                let args: Vec<String> = call.args.iter().map(|a| expression(a, &|i| format!("${i}"), false)).collect();
                format!("{}({})", call.function.name(), args.join(", "))
            }
            CorrelatedTable::Function(call) => {
                let args: Vec<String> = call.args.iter().map(|a| expression(a, &correlated, false)).collect();
                format!("{}({})", call.function.name(), args.join(", "))
            }
        };
        let (name, correlate) = match &spec.table {
            CorrelatedTable::Function(call) if call.function.is_python() => {
                let args: Vec<String> = call.args.iter().map(|a| expression(a, column, false)).collect();
                ("PythonCorrelate", format!("{}({})", call.function.name(), args.join(", ")))
            }
            CorrelatedTable::Function(_) | CorrelatedTable::Unnest { .. } => ("Correlate", invocation.clone()),
        };
        let select: Vec<&str> = node.fields.iter().map(|f| f.name.as_str()).collect();
        let row: Vec<String> =
            node.fields.iter().map(|f| format!("{} {}", calcite_type(&f.data_type), f.name)).collect();
        format!(
            "{name}(invocation=[{invocation}], correlate=[table({correlate})], select=[{}], rowType=[RecordType({})], joinType=[{}])",
            select.join(","),
            row.join(", "),
            if spec.left { "LEFT" } else { "INNER" }
        )
    }

    fn runs(&self) -> Runs {
        Runs::ChainedToInput
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State::NONE
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let input = inputs.first().cloned().unwrap_or_default();
        let mut texts = input.texts(&(0..input.columns.len()).collect::<Vec<_>>());
        let table = match &self.0.table {
            CorrelatedTable::Unnest { collection, .. } => format!("UNNEST({})", input.expr(collection)),
            CorrelatedTable::Function(call) => {
                let args: Vec<String> = call.args.iter().map(|a| input.expr(a)).collect();
                format!("{}({})", call.function.name(), args.join(", "))
            }
        };
        texts.extend(node.fields[input.columns.len()..].iter().map(|f| format!("{table}.{}", f.name)));
        Traced::Output(Lineage { columns: columns_of(node, texts, "Correlate"), ..input })
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, "Correlate", self.0.factory())
    }
}
