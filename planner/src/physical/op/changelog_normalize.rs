//! `ChangelogNormalize`: the full changelog of an upsert scan (`upsert-kafka`), the last row per
//! primary key kept to send each change's before-image.

use weir_operators::ChangelogNormalizeSpec;

use super::prelude::*;
use crate::physical::state::Builder;

/// The last row per key of an upsert scan.
#[derive(Debug, Clone)]
pub struct ChangelogNormalize(pub ChangelogNormalizeSpec);

impl PhysicalOp for ChangelogNormalize {
    fn name(&self) -> &'static str {
        "ChangelogNormalize"
    }

    fn explain(&self, _node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        format!("ChangelogNormalize(key=[{}])", crate::attributes::columns(&self.0.key, input.column))
    }

    fn upsert_key(&self, _node: &PhysicalNode) -> Option<Vec<usize>> {
        Some(self.0.key.clone())
    }

    fn runs(&self) -> Runs {
        Runs::Keyed { keys: self.0.key.len() }
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Medium), checkpointed: Some(&self.0) }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let builder = Builder::new(node, inputs, "changelog normalize").key(&self.0.key, false).rows(RowRule::Types);
        builder.finish(Vec::new(), true)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, "ChangelogNormalize", self.0.factory())
    }
}
