//! `Expand`: each row once per grouping set, the set's id (`$e`) last (GROUPING SETS, CUBE,
//! ROLLUP).

use weir_operators::ExpandSpec;

use super::prelude::*;
use crate::attributes::expand_projects;
use crate::physical::state::columns_of;

/// Each row once per grouping set.
#[derive(Debug, Clone)]
pub struct Expand(pub ExpandSpec);

impl PhysicalOp for Expand {
    fn name(&self) -> &'static str {
        "Expand"
    }

    /// The sets as Flink prints them, `{a, null AS b, 1 AS $e}, …`.
    fn explain(&self, _node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let projects = expand_projects(&self.0.projects, input.input_fields.len(), input.column);
        format!("Expand(projects=[{projects}])")
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
        let sets: Vec<String> = self.0.projects.iter().map(|p| format!("{}{:?}", p.id, p.nulled)).collect();
        texts.push(format!("EXPAND[{}]", sets.join(", ")));
        Traced::Output(Lineage { columns: columns_of(node, texts, "Expand"), ..input })
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, "Expand", self.0.factory())
    }
}
