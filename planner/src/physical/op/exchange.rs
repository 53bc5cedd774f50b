//! `Exchange`: how rows are redistributed among the subtasks of the next operator — the
//! strategy of the edge into it, not an operator of its own at runtime.

use weir_runtime::ShipStrategy;

use super::prelude::*;
use crate::physical::state::passed_on;

/// Redistributes rows among subtasks.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// How.
    pub strategy: ShipStrategy,
}

impl PhysicalOp for Exchange {
    fn name(&self) -> &'static str {
        "Exchange"
    }

    fn explain(&self, _node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        match &self.strategy {
            ShipStrategy::Hash(keys) => {
                let keys: Vec<String> = keys.iter().map(|k| (input.column)(*k)).collect();
                format!("Exchange(distribution=[hash[{}]])", keys.join(", "))
            }
            ShipStrategy::Single => "Exchange(distribution=[single])".to_string(),
            ShipStrategy::Broadcast => "Exchange(distribution=[broadcast])".to_string(),
            ShipStrategy::Forward | ShipStrategy::Rebalance => "Exchange(distribution=[any])".to_string(),
        }
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

    /// The input's vertex, its consumer's edge taking this strategy.
    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        let mut input = translator.translate(&node.inputs[0])?;
        input.exchange = Some(self.strategy.clone());
        Ok(input)
    }

    fn hashed_on(&self, _node: &PhysicalNode, keys: &[usize]) -> bool {
        matches!(&self.strategy, ShipStrategy::Hash(hash) if hash == keys)
    }
}
