//! Translation of logical plans into runtime job graphs.
//!
//! Each node becomes a vertex: scans and VALUES are sources, Calc runs at its input's
//! parallelism behind a FORWARD edge (and is chained to it), a group aggregate runs at the
//! default parallelism behind a HASH edge on its keys (a global aggregate at parallelism 1
//! behind a SINGLE edge), UNION ALL is a union vertex, and the sink runs at `sink.parallelism`
//! or its input's parallelism; a sink with a primary key whose parallelism differs from its
//! input's gets its rows hashed on the key (`table.exec.sink.keyed-shuffle` = AUTO).

use std::sync::Arc;

use weir_connectors::{ConnectorRegistry, MemorySource, SinkProvider, SourceStep};
use weir_operators::{CalcOperator, GroupAggregateOperator, UnionOperator, WatermarkAssignerOperator};
use weir_runtime::graph::{JobGraph, VertexId, VertexKind};
use weir_runtime::{DataType, Row, ShipStrategy};

use crate::error::Result;
use crate::plan::{Node, Plan};

/// Builds job graphs from plans.
pub struct Translator<'a> {
    /// Builds sources and sinks.
    pub registry: &'a ConnectorRegistry,
    /// `parallelism.default`
    pub parallelism: usize,
    /// The graph being built.
    pub graph: JobGraph,
    /// Set once a source that never ends has been added.
    pub unbounded: bool,
}

/// A vertex and its parallelism.
#[derive(Debug, Clone, Copy)]
pub struct Output {
    /// The vertex producing the plan's rows.
    pub vertex: VertexId,
    /// Its parallelism.
    pub parallelism: usize,
}

fn edge(from: usize, to: usize) -> ShipStrategy {
    if from == to {
        ShipStrategy::Forward
    } else {
        ShipStrategy::Rebalance
    }
}

impl Translator<'_> {
    /// Adds the vertices of `plan`.
    ///
    /// # Errors
    /// A table whose connector refuses its options.
    pub fn translate(&mut self, plan: &Plan) -> Result<Output> {
        match &plan.node {
            Node::Scan { table } => {
                let provider = self.registry.create_source(table)?;
                self.unbounded |= !provider.bounded;
                let parallelism = provider.parallelism.unwrap_or(self.parallelism);
                let factory = provider.factory;
                let vertex = self.graph.add_vertex(weir_runtime::graph::Vertex {
                    name: table.name.clone(),
                    parallelism,
                    kind: VertexKind::Source(factory),
                });
                Ok(Output { vertex, parallelism })
            }
            Node::Values { rows } => {
                let rows: Vec<Row> = rows.iter().map(|r| Row::insert(r.clone())).collect();
                let source = MemorySource::new("Values", plan.fields.len(), vec![SourceStep::Rows(rows)]);
                let vertex = self.graph.add_source("Values", 1, move |info| Box::new(source.for_subtask(info)));
                Ok(Output { vertex, parallelism: 1 })
            }
            Node::Calc { input, projections, condition } => {
                let input = self.translate(input)?;
                let operator = CalcOperator::new(projections.clone(), condition.clone());
                let vertex = self.graph.add_operator("Calc", input.parallelism, move |_| Box::new(operator.clone()));
                self.graph.connect(input.vertex, vertex, ShipStrategy::Forward);
                Ok(Output { vertex, parallelism: input.parallelism })
            }
            Node::WatermarkAssigner { input, watermark, .. } => {
                let input = self.translate(input)?;
                let operator = WatermarkAssignerOperator::new(watermark.clone());
                let vertex = self
                    .graph
                    .add_operator("WatermarkAssigner", input.parallelism, move |_| Box::new(operator.clone()));
                self.graph.connect(input.vertex, vertex, ShipStrategy::Forward);
                Ok(Output { vertex, parallelism: input.parallelism })
            }
            Node::Aggregate { input: child, keys, calls } => {
                let input = self.translate(child)?;
                let types: Vec<DataType> = child.fields.iter().map(|f| f.data_type.clone()).collect();
                let (keys, calls) = (keys.clone(), calls.clone());
                let retracting = !child.is_insert_only();
                let (parallelism, strategy) = if keys.is_empty() {
                    (1, ShipStrategy::Single)
                } else {
                    (self.parallelism, ShipStrategy::Hash(keys.clone()))
                };
                let vertex = self.graph.add_operator("GroupAggregate", parallelism, move |_| {
                    Box::new(
                        GroupAggregateOperator::new(keys.clone(), calls.clone(), &types)
                            .with_retracting_input(retracting),
                    )
                });
                self.graph.connect(input.vertex, vertex, strategy);
                Ok(Output { vertex, parallelism })
            }
            Node::Union { inputs } => {
                let outputs = inputs.iter().map(|i| self.translate(i)).collect::<Result<Vec<_>>>()?;
                let parallelism = self.parallelism;
                let vertex = self.graph.add_operator("Union", parallelism, |_| Box::new(UnionOperator));
                for o in outputs {
                    self.graph.connect(o.vertex, vertex, edge(o.parallelism, parallelism));
                }
                Ok(Output { vertex, parallelism })
            }
        }
    }

    /// Adds a sink for `input`, hashing on `primary_key` columns when the parallelism changes.
    pub fn sink(&mut self, name: &str, input: Output, provider: SinkProvider, primary_key: &[usize]) -> VertexId {
        let parallelism = provider.parallelism.unwrap_or(input.parallelism);
        let strategy = if !primary_key.is_empty() && parallelism != input.parallelism && parallelism != 1 {
            ShipStrategy::Hash(primary_key.to_vec())
        } else {
            edge(input.parallelism, parallelism)
        };
        let factory = Arc::clone(&provider.factory);
        let vertex = self.graph.add_vertex(weir_runtime::graph::Vertex {
            name: format!("Sink: {name}"),
            parallelism,
            kind: VertexKind::Operator(factory),
        });
        self.graph.connect(input.vertex, vertex, strategy);
        vertex
    }
}
