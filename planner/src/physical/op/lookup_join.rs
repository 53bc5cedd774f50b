//! `LookupJoin`: each row joined with the rows a lookup in a dimension table finds — sync or
//! async, in order or not, key-ordered per update key (each key looked up by one subtask, its
//! lookups one after another).

use std::sync::Arc;

use weir_connectors::LookupTable;
use weir_operators::expr::Expr;
use weir_operators::{lookup_join_factory, LookupJoinSpec};
use weir_runtime::ShipStrategy;

use super::prelude::*;
use crate::catalog::Catalog;
use crate::lookup_options::LookupExecution;
use crate::physical::state::columns_of;
use crate::plan_text::expression;

/// A lookup join.
#[derive(Debug, Clone)]
pub struct LookupJoin {
    /// The dimension table.
    pub table: Box<LookupTable>,
    /// The table's key columns looked up, in the order of `spec.keys`.
    pub dim_keys: Vec<usize>,
    /// The operator: join type, key expressions over the input row, conditions.
    pub spec: Arc<LookupJoinSpec>,
    /// Sync or async, ordering, timeout, capacity and retries.
    pub execution: LookupExecution,
}

/// Output names made unique as Calcite does: a repeated name gets `0`, `1`, … appended.
fn unique_names(fields: &[weir_runtime::Field]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for f in fields {
        let mut name = f.name.clone();
        let mut n = 0;
        while names.contains(&name) {
            name = format!("{}{n}", f.name);
            n += 1;
        }
        names.push(name);
    }
    names
}

impl PhysicalOp for LookupJoin {
    fn name(&self) -> &'static str {
        "LookupJoin"
    }

    /// As Flink's `CommonPhysicalLookupJoin.explainTerms` writes it: `LookupJoin(table=[…],
    /// joinType=[…], lookup=[id=a], where=[…], joinCondition=[…], select=[…], async=[ORDERED,
    /// KEY_ORDERED: false, 180000ms, 100], retry=[…])`.
    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (spec, infix) = (&self.spec, input.infix);
        let names = unique_names(&node.fields);
        let input_column = |i: usize| names.get(i).cloned().unwrap_or(format!("${i}"));
        let dim = &self.table.schema.fields;
        let input_width = input.input_fields.len();
        let dim_column = |i: usize| names.get(input_width + i).cloned().unwrap_or_else(|| dim[i].name.clone());
        let mut sorted: Vec<(usize, &Expr)> = self.dim_keys.iter().copied().zip(&spec.keys).collect();
        sorted.sort_by_key(|(d, _)| *d);
        let lookup: Vec<String> =
            sorted.iter().map(|(d, e)| format!("{}={}", dim[*d].name, expression(e, &input_column, infix))).collect();
        let mut text = format!(
            "LookupJoin(table=[{}], joinType=[{}], lookup=[{}]",
            Catalog::qualified(&self.table.name),
            spec.join_type.flink_name(),
            lookup.join(", ")
        );
        if let Some(filter) = &spec.dim_filter {
            text.push_str(&format!(", where=[{}]", expression(filter, &dim_column, infix)));
        }
        if let Some(condition) = &spec.join_condition {
            text.push_str(&format!(", joinCondition=[{}]", expression(condition, &input_column, infix)));
        }
        text.push_str(&format!(", select=[{}]", names.join(", ")));
        if let Some(options) = &self.execution.async_options {
            text.push_str(&format!(", async=[{options}]"));
        }
        if let Some(retry) = &self.execution.retry {
            text.push_str(&format!(
                ", retry=[lookup_miss, FIXED_DELAY, {}ms, {}]",
                retry.delay.as_millis(),
                retry.max_attempts
            ));
        }
        text.push(')');
        text
    }

    /// The input's: each input row's change is joined as it comes.
    fn upsert_key(&self, node: &PhysicalNode) -> Option<Vec<usize>> {
        node.inputs[0].upsert_key()
    }

    fn runs(&self) -> Runs {
        Runs::ChainedToInput
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Low), checkpointed: None }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let l = inputs.first().cloned().unwrap_or_default();
        let mut texts = l.texts(&(0..l.columns.len()).collect::<Vec<_>>());
        let table = &self.table;
        let keys: Vec<String> =
            self.dim_keys.iter().map(|&k| format!("{}.{}", table.name, table.schema.fields[k].name)).collect();
        let looked_up = node.fields[l.columns.len()..].iter();
        texts.extend(looked_up.map(|f| format!("LOOKUP {}.{} BY {}", table.name, f.name, keys.join(", "))));
        Traced::Output(Lineage { columns: columns_of(node, texts, "LookupJoin"), ..l })
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        let mut input = translator.translate(&node.inputs[0])?;
        // One lookup function (and cache) for all subtasks.
        let lookup = self.table.create(translator.clock())?;
        let function = lookup.provider.lookup_function(&self.dim_keys)?;
        let order_key = self.execution.order_key();
        if let Some(key) = &order_key {
            // Each update key is looked up by one subtask.
            input.exchange = Some(ShipStrategy::Hash(key.clone()));
        }
        let input_arity = node.inputs[0].fields.len();
        let factory =
            lookup_join_factory(Arc::clone(&self.spec), function, self.execution.options(), input_arity, order_key);
        Ok(translator.operator("LookupJoin", &input, node.parallelism, factory))
    }
}
