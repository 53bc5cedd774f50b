//! What a job keeps in state, described from its physical plan in terms that survive a rewrite
//! of the script: every column is named by its **lineage**, the expression over source columns
//! it is computed from (`MyTable.b`, `SUBSTRING(MyTable.c, 1, 5)`, `SUM(MyTable.b)`), so that
//! renaming an alias or moving a projection changes nothing, and changing what a key or an
//! aggregate reads changes its text.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use weir_runtime::graph::VertexId;

use super::StateOptions;
pub use crate::physical::lineage::{Aggregate, Column, RowRule, StateShape};
use crate::physical::op::sink::Sink;
use crate::physical::op::table_source_scan::TableSourceScan;
pub use crate::physical::state::describe;
use crate::physical::state::lineage;
use crate::physical::{PhysicalNode, SinkMaterializer};
use crate::translate::Placed;

/// A job as the check sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobShape {
    /// The weir that planned it.
    pub weir_version: String,
    /// `parallelism.default` of its session.
    pub parallelism: usize,
    /// The options that change how state is held (`table.exec.state.ttl`), when set.
    pub options: StateOptions,
    /// Its sources.
    pub sources: Vec<SourceShape>,
    /// Its sinks.
    pub sinks: Vec<SinkShape>,
    /// Its stateful operators.
    pub operators: Vec<StateShape>,
}

/// A source of a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceShape {
    /// The table.
    pub table: String,
    /// Its connector.
    pub connector: String,
    /// Its declaration: columns with their types, primary key and `WITH` options.
    #[serde(default)]
    pub definition: String,
    /// The source operator's stable id.
    pub id: String,
}

/// A sink of a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SinkShape {
    /// The table.
    pub table: String,
    /// Its connector.
    pub connector: String,
    /// Its `WITH` options.
    pub options: BTreeMap<String, String>,
    /// Its columns with their types.
    pub columns: Vec<String>,
    /// The sink operator's stable id.
    pub id: String,
}

/// What translating a job records about it: each stateful operator's, source's and sink's
/// shape with its vertex; [`ShapeCollector::finish`] names them by stable id.
#[derive(Debug, Default)]
pub struct ShapeCollector {
    operators: Vec<(VertexId, StateShape)>,
    sources: Vec<(VertexId, SourceShape)>,
    sinks: Vec<(VertexId, SinkShape)>,
}

impl ShapeCollector {
    /// Records what translation placed in `vertex`.
    pub fn place(&mut self, placed: Placed<'_>, vertex: VertexId) {
        match placed {
            Placed::Node(node) => {
                if let Some(scan) = node.op::<TableSourceScan>() {
                    self.source(&scan.table, vertex);
                }
                self.operator(node, vertex);
            }
            Placed::Materializer(sink) => {
                if let Some(Sink { materializer: Some(materializer), .. }) = sink.op::<Sink>() {
                    self.materializer(sink, materializer, vertex);
                }
            }
            Placed::Writer(sink) => {
                if let Some(writer) = sink.op::<Sink>() {
                    self.sink(&writer.table, vertex);
                }
            }
        }
    }

    /// Records the vertex of `node` when it keeps state.
    fn operator(&mut self, node: &PhysicalNode, vertex: VertexId) {
        if let Some(shape) = describe(node) {
            self.operators.push((vertex, shape));
        }
    }

    /// Records the vertex of a scan of `table`.
    fn source(&mut self, table: &weir_connectors::TableDescriptor, vertex: VertexId) {
        let connector = table.options.get("connector").cloned().unwrap_or_default();
        let columns: Vec<String> = table.schema.fields.iter().map(|f| format!("{} {}", f.name, f.data_type)).collect();
        let definition =
            format!("({}) PRIMARY KEY {:?} WITH {:?}", columns.join(", "), table.primary_key, table.options);
        let shape = SourceShape { table: table.name.clone(), connector, definition, id: String::new() };
        self.sources.push((vertex, shape));
    }

    /// Records the vertex of the materializer of `sink` (a `Sink` node).
    fn materializer(&mut self, sink: &PhysicalNode, materializer: &SinkMaterializer, vertex: VertexId) {
        let Some(Sink { table, primary_key, .. }) = sink.op::<Sink>() else { return };
        let input = lineage(&sink.inputs[0]);
        let mut definition = BTreeMap::new();
        definition.insert("sink".to_string(), table.name.clone());
        definition.insert("materializer".to_string(), materializer.name());
        let shape = StateShape {
            id: String::new(),
            operator: materializer.name(),
            class: "sink materializer".into(),
            sources: input.sources.iter().cloned().collect(),
            depth: input.depth,
            key: primary_key.iter().map(|&k| table.schema.fields[k].name.clone()).collect(),
            key_ordered: false,
            definition,
            rows: Some(input.columns.clone()),
            row_rule: RowRule::Lineage,
            aggregates: None,
            filters: input.filters,
            signature: Some(materializer.state_signature(sink)),
        };
        self.operators.push((vertex, shape));
    }

    /// Records the vertex writing into `table`.
    fn sink(&mut self, table: &weir_connectors::TableDescriptor, vertex: VertexId) {
        let connector = table.options.get("connector").cloned().unwrap_or_default();
        let columns = table.schema.fields.iter().map(|f| format!("{} {}", f.name, f.data_type)).collect();
        let options = table.options.clone();
        self.sinks
            .push((vertex, SinkShape { table: table.name.clone(), connector, options, columns, id: String::new() }));
    }

    /// The job's shape, each part named by its vertex's id in `ids` (`JobGraph::operator_ids`).
    pub fn finish(self, ids: &[String], parallelism: usize, options: StateOptions) -> JobShape {
        let id = |v: VertexId| ids.get(v.0).cloned().unwrap_or_default();
        JobShape {
            weir_version: env!("CARGO_PKG_VERSION").to_string(),
            parallelism,
            options,
            sources: self.sources.into_iter().map(|(v, s)| SourceShape { id: id(v), ..s }).collect(),
            sinks: self.sinks.into_iter().map(|(v, s)| SinkShape { id: id(v), ..s }).collect(),
            operators: self.operators.into_iter().map(|(v, s)| StateShape { id: id(v), ..s }).collect(),
        }
    }
}
