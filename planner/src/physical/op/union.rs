//! `Union`: UNION ALL of its inputs.

use std::collections::BTreeSet;

use weir_operators::UnionOperator;

use super::edge_strategy;
use super::prelude::*;
use crate::attributes::names;
use crate::physical::lineage::column;

/// UNION ALL.
#[derive(Debug, Clone)]
pub struct Union;

impl PhysicalOp for Union {
    fn name(&self) -> &'static str {
        "Union"
    }

    fn explain(&self, node: &PhysicalNode, _input: &ExplainInput<'_>) -> String {
        format!("Union(all=[true], union=[{}])", names(&node.fields))
    }

    fn runs(&self) -> Runs {
        Runs::AtDefaultParallelism
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State::NONE
    }

    /// Each column is the union of its inputs' columns, in a stable order.
    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let mut columns = Vec::new();
        for (i, f) in node.fields.iter().enumerate() {
            let mut texts: Vec<String> = inputs.iter().map(|l| l.text(i)).collect();
            texts.sort();
            columns.push(column(texts.join(" UNION ALL "), f));
        }
        let mut filters: Vec<String> = inputs.iter().flat_map(|l| l.filters.iter().cloned()).collect();
        filters.sort();
        Traced::Output(Lineage {
            columns,
            filters,
            sources: inputs.iter().flat_map(|l| l.sources.iter().cloned()).collect::<BTreeSet<_>>(),
            depth: inputs.iter().map(|l| l.depth).max().unwrap_or(0),
        })
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        let outputs = node.inputs.iter().map(|i| translator.translate(i)).collect::<Result<Vec<_>>>()?;
        let parallelism = node.parallelism;
        let vertex = translator.graph().add_operator("Union", parallelism, |_| Box::new(UnionOperator));
        for o in &outputs {
            let strategy = edge_strategy(o.exchange.as_ref(), o.parallelism, parallelism);
            translator.graph().connect(o.vertex, vertex, strategy);
        }
        Ok(Output { vertex, parallelism, exchange: None })
    }
}
