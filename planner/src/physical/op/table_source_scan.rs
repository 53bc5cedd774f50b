//! `TableSourceScan`: reads a table through its connector, with what planning pushed into it
//! (projection, filter, partitions, a point query's key).

use std::collections::BTreeSet;
use std::sync::Arc;

use weir_connectors::{PartitionFilter, ProjectingSource, ScanContext, SourceTable};
use weir_runtime::graph::{Vertex, VertexKind};
use weir_runtime::{Field, Value};

use super::prelude::*;
use crate::attributes::{names, partitions_attribute, table_path_prefix, table_path_with_metadata};
use crate::physical::lineage::column;
use crate::plan::ScanFilter;
use crate::plan_text::{expression, lineage_expression, literal};

/// Reads a table.
#[derive(Debug, Clone)]
pub struct TableSourceScan {
    /// The table.
    pub table: SourceTable,
    /// The physical columns read.
    pub projection: Vec<usize>,
    /// The primary key values of a point query.
    pub key: Option<Vec<Value>>,
    /// What the connector took of the filter above.
    pub filter: ScanFilter,
    /// Whether a projection was pushed into the scan (see `Node::Scan`).
    pub projected: bool,
}

impl TableSourceScan {
    /// The positions in the scan's output of the table's primary key, when it reads all of it.
    pub fn primary_key(&self) -> Option<Vec<usize>> {
        self.table.primary_key.iter().map(|k| self.projection.iter().position(|p| p == k)).collect()
    }
}

/// The partitions a scan reads, as planning listed and kept them ([`ScanFilter::partitions`]):
/// a partition is read when its values are those of a kept one; `None` reads them all.
fn partition_filter(filter: &ScanFilter) -> Option<PartitionFilter> {
    let kept: Vec<Vec<Value>> = filter.partitions.as_ref()?.kept.iter().map(|p| p.values.clone()).collect();
    Some(PartitionFilter(Arc::new(move |values: &[Value]| kept.iter().any(|k| k.as_slice() == values))))
}

impl PhysicalOp for TableSourceScan {
    fn name(&self) -> &'static str {
        "TableSourceScan"
    }

    fn explain(&self, node: &PhysicalNode, _input: &ExplainInput<'_>) -> String {
        let (table, projection) = (&self.table, &self.projection);
        // Sources that take projection push-down print it when one was pushed, as Flink's
        // filesystem source does (a scan of every column in order has none).
        let pushed = self.projected
            && (projection.len() < table.schema.fields.len()
                || table.options.get("connector").map(String::as_str) == Some("filesystem"));
        let metadata_of = |c: usize| table.metadata.iter().find(|m| m.position == c);
        let keys: Vec<String> = projection.iter().filter_map(|&c| metadata_of(c)).map(|m| m.key.clone()).collect();
        let physical: Vec<Field> = projection
            .iter()
            .zip(&node.fields)
            .filter(|(c, _)| metadata_of(**c).is_none())
            .map(|(_, f)| f.clone())
            .collect();
        let mut path = table_path_with_metadata(&table.name, pushed.then_some(&physical[..]), &keys);
        let mut pushed_down = partitions_attribute(&self.filter);
        let table_column = |i: usize| table.schema.fields[i].name.clone();
        let parts: Vec<String> = self.filter.remaining().map(|c| expression(c, &table_column, false)).collect();
        // Flink prints the pushed conjuncts in prefix form, joined by a lower-case `and` two at a
        // time, left to right: `and(and(a, b), c)`.
        if let Some(text) = parts.into_iter().reduce(|all, next| format!("and({all}, {next})")) {
            pushed_down.push_str(&format!(", filter=[{text}]"));
        }
        let after_name = table_path_prefix(&table.name).len();
        path.insert_str(after_name.min(path.len()), &pushed_down);
        if let Some(key) = &self.key {
            // A point query on the primary key: the filter pushed into the scan.
            let conditions: Vec<String> = table
                .primary_key
                .iter()
                .zip(key)
                .map(|(&c, v)| format!("=({}, {})", table.schema.fields[c].name, literal(v)))
                .collect();
            let filter = match conditions.as_slice() {
                [one] => one.clone(),
                many => format!("AND({})", many.join(", ")),
            };
            path.insert_str(path.len() - 1, &format!(", filter=[{filter}]"));
        }
        format!("TableSourceScan(table=[{path}], fields=[{}])", names(&node.fields))
    }

    /// An updating scan's primary key (a CDC topic's).
    fn upsert_key(&self, node: &PhysicalNode) -> Option<Vec<usize>> {
        if self.table.primary_key.is_empty() || node.changelog.is_insert_only() {
            return None;
        }
        self.primary_key()
    }

    fn runs(&self) -> Runs {
        Runs::AsItsConnectorOffers
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        // The connector keeps its own (offsets, splits).
        State { size: Some(StateSize::Low), checkpointed: None }
    }

    fn trace(&self, node: &PhysicalNode, _inputs: &[Lineage]) -> Traced {
        let table = &self.table;
        let name = |i: usize| format!("{}.{}", table.name, table.schema.fields[i].name);
        let mut filters: Vec<String> = self.filter.conjuncts.iter().map(|e| lineage_expression(e, &name)).collect();
        if let Some(key) = &self.key {
            filters.push(format!("{:?} = {key:?}", table.primary_key.iter().map(|&k| name(k)).collect::<Vec<_>>()));
        }
        Traced::Output(Lineage {
            columns: self.projection.iter().zip(&node.fields).map(|(&p, f)| column(name(p), f)).collect(),
            filters,
            sources: BTreeSet::from([table.name.clone()]),
            depth: 0,
        })
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        let (table, projection) = (&self.table, &self.projection);
        let scan = translator.scan_context(self.key.clone(), partition_filter(&self.filter));
        let provider = table.create(&scan)?;
        let factory = provider.factory;
        let source: weir_runtime::graph::SourceFactory =
            if projection.len() == table.schema.fields.len() && projection.iter().enumerate().all(|(i, p)| i == *p) {
                factory
            } else {
                let projection = projection.clone();
                Arc::new(move |info| Box::new(ProjectingSource::new(factory(info), projection.clone())))
            };
        let parallelism = node.parallelism;
        let vertex = translator.graph().add_vertex(Vertex {
            name: table.name.clone(),
            parallelism,
            kind: VertexKind::Source(source),
        });
        Ok(Output { vertex, parallelism, exchange: None })
    }

    /// Scans of the same columns with the same filter compute the same rows: a statement set
    /// reads the table once.
    fn reuse_digest(&self, _node: &PhysicalNode) -> Option<String> {
        Some(format!("{}{:?}{:?}{:?}", self.table.name, self.projection, self.key, self.filter))
    }

    fn source_name(&self) -> Option<&str> {
        Some(&self.table.name)
    }

    fn table(&self) -> Option<&weir_connectors::TableDescriptor> {
        Some(self.table.descriptor())
    }
}

/// What the distribution and the scan's translation ask the connector: how this job reads.
pub(crate) fn scan_context(batch: bool, key: Option<Vec<Value>>) -> ScanContext {
    ScanContext { batch, key, idle_timeout: None, partitions: None, job_starts: false }
}
