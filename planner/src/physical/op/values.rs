//! `Values`: constant rows, read by one subtask.

use std::collections::BTreeSet;

use weir_connectors::{MemorySource, SourceStep};
use weir_runtime::{DataType, Row, Value};

use super::prelude::*;
use crate::attributes::names;
use crate::physical::state::columns_of;
use crate::plan_text::{calcite_type, literal};

/// Constant rows.
#[derive(Debug, Clone)]
pub struct Values {
    /// The rows.
    pub rows: Vec<Vec<Value>>,
}

impl PhysicalOp for Values {
    fn name(&self) -> &'static str {
        "Values"
    }

    /// An empty VALUES names its row type instead, in the physical plan.
    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        if self.rows.is_empty() && input.infix {
            return "Values(tuples=[[]])".to_string();
        }
        if self.rows.is_empty() {
            let row_type: Vec<String> = node
                .fields
                .iter()
                .map(|f| format!("{} {}", calcite_type(&DataType::new(f.data_type.logical.clone())), f.name))
                .collect();
            return format!("Values(type=[RecordType({})], tuples=[[]])", row_type.join(", "));
        }
        let tuples: Vec<String> = self
            .rows
            .iter()
            .map(|r| format!("{{ {} }}", r.iter().map(literal).collect::<Vec<_>>().join(", ")))
            .collect();
        format!("Values(tuples=[[{}]], values=[{}])", tuples.join(", "), names(&node.fields))
    }

    fn runs(&self) -> Runs {
        Runs::OnOneSubtask
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Low), checkpointed: None }
    }

    fn trace(&self, node: &PhysicalNode, _inputs: &[Lineage]) -> Traced {
        Traced::Output(Lineage {
            columns: columns_of(node, Vec::new(), &format!("VALUES{:?}", self.rows)),
            sources: BTreeSet::from(["VALUES".to_string()]),
            ..Default::default()
        })
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        let rows: Vec<Row> = self.rows.iter().map(|r| Row::insert(r.clone())).collect();
        let source = MemorySource::new("Values", node.fields.len(), vec![SourceStep::Rows(rows)]);
        let vertex = translator.graph().add_source("Values", 1, move |info| Box::new(source.for_subtask(info)));
        Ok(Output { vertex, parallelism: 1, exchange: None })
    }

    fn source_name(&self) -> Option<&str> {
        Some("Values")
    }
}
