//! `Sink`: writes into a table — the constraint enforcer, the materializer and the key-by
//! before the connector's writer, as Flink translates a sink ([`SinkStep`]).

use std::sync::Arc;

use weir_connectors::{SinkContext, SinkTable};
use weir_operators::{ConstraintEnforcerOperator, WatermarkTimestampAssignerOperator};
use weir_runtime::graph::OperatorFactory;
use weir_runtime::ShipStrategy;

use super::prelude::*;
use super::watermark_assigner::passed_on;
use crate::attributes::names;
use crate::catalog::Catalog;
use crate::options::SinkKeyedShuffle;
use crate::parser::ConflictStrategy;
use crate::physical::sink::{SinkMaterializer, SinkStep};
use crate::translate::Placed;

/// Writes into a table.
#[derive(Debug, Clone)]
pub struct Sink {
    /// The table.
    pub table: SinkTable,
    /// Primary key columns of the table.
    pub primary_key: Vec<usize>,
    /// `table.exec.sink.keyed-shuffle`
    pub keyed_shuffle: SinkKeyedShuffle,
    /// The checks run on rows before the sink, when any column needs one.
    pub enforcer: Option<Box<ConstraintEnforcerOperator>>,
    /// The SinkMaterializer before the sink, when `table.exec.sink.upsert-materialize` asks for one.
    pub materializer: Option<Box<SinkMaterializer>>,
    /// The INSERT's `ON CONFLICT` clause.
    pub on_conflict: Option<ConflictStrategy>,
    /// The INSERT's target columns, when it names them.
    pub targets: Option<Vec<usize>>,
    /// Whether every source of its input ends by itself (set by the distribution).
    pub bounded_input: bool,
    /// How rows reach the sink's subtasks when not FORWARD (set by the distribution).
    pub input_strategy: Option<ShipStrategy>,
}

impl Sink {
    /// The transformations the sink runs as, in order from its input: the job graph builds
    /// them, EXPLAIN's JSON plan lists them.
    pub fn steps(&self) -> Vec<SinkStep<'_>> {
        let mut steps = Vec::new();
        if let Some(enforcer) = &self.enforcer {
            steps.push(SinkStep::Enforcer(enforcer));
        }
        if self.materializer.as_ref().is_some_and(|m| m.needs_timestamps()) {
            steps.push(SinkStep::TimestampAssigner);
        }
        if let Some(strategy) = &self.input_strategy {
            steps.push(SinkStep::KeyBy(strategy));
        }
        if let Some(materializer) = &self.materializer {
            steps.push(SinkStep::Materializer(materializer));
        }
        steps.push(SinkStep::Writer);
        steps
    }
}

impl PhysicalOp for Sink {
    fn name(&self) -> &'static str {
        "Sink"
    }

    fn explain(&self, node: &PhysicalNode, _input: &ExplainInput<'_>) -> String {
        let materialize = if self.materializer.is_some() { ", upsertMaterialize=[true]" } else { "" };
        let conflict = self.on_conflict.map_or(String::new(), |c| format!(", conflictStrategy=[{}]", c.name()));
        let (table, fields) = (Catalog::qualified(&self.table.name), names(&node.fields));
        format!("Sink(table=[{table}], fields=[{fields}]{materialize}{conflict})")
    }

    fn upsert_key(&self, _node: &PhysicalNode) -> Option<Vec<usize>> {
        None
    }

    fn runs(&self) -> Runs {
        Runs::AsItsConnectorOffers
    }

    fn mini_batch(&self, _node: &PhysicalNode) -> MiniBatchNeed {
        MiniBatchNeed::Nothing
    }

    fn state_size(&self, _node: &PhysicalNode) -> Option<StateSize> {
        match self.materializer {
            Some(_) => Some(StateSize::High),
            None => Some(StateSize::Low),
        }
    }

    fn state(&self) -> Option<&dyn StatefulSpec> {
        // The connector keeps its own; the materializer is described apart (its own vertex).
        None
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        Traced::Output(passed_on(node, inputs))
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut Translator<'p>) -> Result<Output> {
        let mut input = translator.translate(&node.inputs[0])?;
        for step in self.steps() {
            input = match step {
                SinkStep::Enforcer(enforcer) => {
                    let operator = enforcer.clone();
                    let name = weir_runtime::Operator::name(&operator).to_string();
                    let factory: OperatorFactory = Arc::new(move |_| Box::new(operator.clone()));
                    translator.operator(&name, &input, input.parallelism, factory)
                }
                SinkStep::TimestampAssigner => {
                    let factory: OperatorFactory = Arc::new(|_| Box::new(WatermarkTimestampAssignerOperator));
                    translator.operator("WatermarkTimestampAssigner", &input, input.parallelism, factory)
                }
                SinkStep::KeyBy(strategy) => Output { exchange: Some(strategy.clone()), ..input },
                SinkStep::Materializer(m) => {
                    let output = translator.operator(&m.name(), &input, node.parallelism, m.factory());
                    translator.placed.push((Placed::Materializer(node), output.vertex));
                    output
                }
                SinkStep::Writer => {
                    let context = SinkContext { bounded_input: self.bounded_input, targets: self.targets.clone() };
                    let provider = self.table.create(&context)?;
                    let name = format!("Sink: {}", self.table.name);
                    let output = translator.operator(&name, &input, node.parallelism, provider.factory);
                    translator.placed.push((Placed::Writer(node), output.vertex));
                    output
                }
            };
        }
        Ok(input)
    }
}
