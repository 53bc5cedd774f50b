//! `Sink`: writes into a table — the constraint enforcer, the materializer and the key-by
//! before the connector's writer, as Flink translates a sink ([`SinkStep`]).

use std::sync::Arc;

use weir_connectors::{SinkContext, SinkTable};
use weir_operators::signature::{StateSignature, StatefulSpec};
use weir_operators::{
    ConstraintEnforcerOperator, SinkUpsertMaterializerOperator, WatermarkCompactingMaterializerOperator,
    WatermarkTimestampAssignerOperator,
};
use weir_runtime::graph::OperatorFactory;
use weir_runtime::Operator as _;
use weir_runtime::{DataType, ShipStrategy};

use super::prelude::*;
use super::Placed;
use crate::attributes::names;
use crate::catalog::Catalog;
use crate::options::SinkKeyedShuffle;
use crate::parser::ConflictStrategy;
use crate::physical::state::input_types;
use crate::physical::state::passed_on;

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

    fn runs(&self) -> Runs {
        Runs::AsItsConnectorOffers
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        let size = match self.materializer {
            Some(_) => StateSize::High,
            None => StateSize::Low,
        };
        // The connector keeps its own; the materializer is described apart (its own vertex).
        State { size: Some(size), checkpointed: None }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        Traced::Output(passed_on(node, inputs))
    }

    fn table(&self) -> Option<&weir_connectors::TableDescriptor> {
        Some(self.table.descriptor())
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
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
                    translator.place(Placed::Materializer(node), output.vertex);
                    output
                }
                SinkStep::Writer => {
                    let context = SinkContext { bounded_input: self.bounded_input, targets: self.targets.clone() };
                    let provider = self.table.create(&context)?;
                    let name = format!("Sink: {}", self.table.name);
                    let output = translator.operator(&name, &input, node.parallelism, provider.factory);
                    translator.place(Placed::Writer(node), output.vertex);
                    output
                }
            };
        }
        Ok(input)
    }
}

/// One transformation a sink runs as, in order from its input (Flink's sink translation): the
/// job graph builds them, EXPLAIN's JSON plan lists them, both from [`Sink::steps`].
#[derive(Debug)]
pub enum SinkStep<'a> {
    /// The ConstraintEnforcer, at its input's parallelism (chained to it, as in Flink).
    Enforcer(&'a ConstraintEnforcerOperator),
    /// A WatermarkTimestampAssigner before a compacting materializer, at its input's parallelism.
    TimestampAssigner,
    /// Rows are hashed on the primary key into the sink's subtasks (Flink's key-by partition).
    KeyBy(&'a ShipStrategy),
    /// The SinkMaterializer, at the sink's parallelism.
    Materializer(&'a SinkMaterializer),
    /// The connector's writer, at the sink's parallelism.
    Writer,
}

/// The materializer before an upsert sink.
#[derive(Debug, Clone)]
pub enum SinkMaterializer {
    /// Without `ON CONFLICT` or with `DO DEDUPLICATE`: the newest row wins, rolling back when it
    /// is retracted.
    Deduplicate(SinkUpsertMaterializerOperator),
    /// `ON CONFLICT DO ERROR | DO NOTHING`: changes compacted per watermark, after a
    /// WatermarkTimestampAssigner before the key-by.
    Compacting(WatermarkCompactingMaterializerOperator),
}

impl SinkMaterializer {
    /// The operator's name.
    pub fn name(&self) -> String {
        match self {
            SinkMaterializer::Deduplicate(op) => op.name().to_string(),
            SinkMaterializer::Compacting(op) => op.name().to_string(),
        }
    }

    /// Whether rows need the watermark they passed at (a WatermarkTimestampAssigner upstream).
    pub fn needs_timestamps(&self) -> bool {
        matches!(self, SinkMaterializer::Compacting(_))
    }

    /// A factory of the operator, one instance per subtask.
    pub fn factory(&self) -> weir_runtime::graph::OperatorFactory {
        match self.clone() {
            SinkMaterializer::Deduplicate(op) => Arc::new(move |_| Box::new(op.clone())),
            SinkMaterializer::Compacting(op) => Arc::new(move |_| Box::new(op.clone())),
        }
    }
}

impl SinkMaterializer {
    /// What the materializer of `sink` (a `Sink` node) writes into checkpoints.
    pub fn state_signature(&self, sink: &PhysicalNode) -> StateSignature {
        let types = input_types(sink);
        let inputs: Vec<&[DataType]> = types.iter().map(Vec::as_slice).collect();
        match self {
            SinkMaterializer::Deduplicate(operator) => operator.state_signature(&inputs),
            SinkMaterializer::Compacting(operator) => operator.state_signature(&inputs),
        }
    }
}
