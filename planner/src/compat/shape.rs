//! What a job keeps in state, described from its physical plan in terms that survive a rewrite
//! of the script: every column is named by its **lineage**, the expression over source columns
//! it is computed from (`MyTable.b`, `SUBSTRING(MyTable.c, 1, 5)`, `SUM(MyTable.b)`), so that
//! renaming an alias or moving a projection changes nothing, and changing what a key or an
//! aggregate reads changes its text.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use weir_operators::aggregate::AggregateCall;
use weir_operators::expr::Expr;
use weir_operators::ranking::SortKey;
use weir_runtime::graph::VertexId;

use super::StateOptions;
use crate::physical::{PhysicalKind, PhysicalNode, RankShape, SinkMaterializer};
use crate::plan_text::{lineage_expression, phase_text};
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

/// How the rows a stateful operator keeps are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RowRule {
    /// The same columns, computed the same way (Top-N, OVER, joins, temporal sort).
    Lineage,
    /// The same column types: a column computed another way fits (deduplication).
    Types,
    /// The rows are only marks that a key was seen: any row fits (first row on processing time).
    Any,
}

/// A column of kept rows: its lineage and type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    /// What it is computed from.
    pub lineage: String,
    /// Its SQL type.
    pub ty: String,
}

/// An aggregate call, by lineage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Aggregate {
    /// `SUM(MyTable.b)`, `COUNT(DISTINCT MyTable.c) FILTER …`.
    pub text: String,
    /// Whether it is DISTINCT.
    pub distinct: bool,
}

/// A stateful operator: what its state is keyed by and what it keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateShape {
    /// Its stable operator id in the job graph.
    pub id: String,
    /// Its name in EXPLAIN (`GroupAggregate`, `GlobalGroupAggregate`, `Rank`, …).
    pub operator: String,
    /// The operators whose state can go to one another (`group aggregate` for one or two
    /// phases: the rules then tell one phase from two).
    pub class: String,
    /// The source tables it reads from, sorted.
    pub sources: Vec<String>,
    /// How many stateful operators are above it, at most, on a path from a source.
    pub depth: usize,
    /// The key of its state, by lineage.
    pub key: Vec<String>,
    /// Whether the key's order matters (group keys) or only its columns (partition keys).
    pub key_ordered: bool,
    /// What must stay as it is: the window, the ORDER BY, N, the join type and condition, …
    pub definition: BTreeMap<String, String>,
    /// The rows it keeps, when it keeps rows.
    pub rows: Option<Vec<Column>>,
    /// How its rows are compared.
    pub row_rule: RowRule,
    /// Its aggregate calls, for the operators that aggregate.
    pub aggregates: Option<Vec<Aggregate>>,
    /// The conditions rows pass on their way from the stateful operators or sources before it.
    pub filters: Vec<String>,
    /// What it writes into checkpoints, as its spec declares it (absent in checkpoints of weir
    /// before signatures: layout version 1 of every operator).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<weir_operators::signature::StateSignature>,
}

impl StateShape {
    /// How the report names it: `GroupAggregate(groupBy=[MyTable.a])`.
    pub fn label(&self) -> String {
        match self.definition.get("order") {
            _ if !self.key.is_empty() => format!("{}(key=[{}])", self.operator, self.key.join(", ")),
            Some(order) => format!("{}(orderBy=[{order}])", self.operator),
            None => self.operator.clone(),
        }
    }
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
                if let PhysicalKind::TableSourceScan { table, .. } = &node.kind {
                    self.source(table, vertex);
                }
                self.operator(node, vertex);
            }
            Placed::Materializer(sink) => {
                if let PhysicalKind::Sink { materializer: Some(materializer), .. } = &sink.kind {
                    self.materializer(sink, materializer, vertex);
                }
            }
            Placed::Writer(sink) => {
                if let PhysicalKind::Sink { table, .. } = &sink.kind {
                    self.sink(table, vertex);
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
        let PhysicalKind::Sink { table, primary_key, .. } = &sink.kind else { return };
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
            signature: Some(super::signature::materializer_signature(sink, materializer)),
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

/// The columns of a node's output by lineage, the conditions its rows passed since the last
/// stateful operator, its source tables and how many stateful operators are above it.
#[derive(Debug, Clone, Default)]
struct Lineage {
    columns: Vec<Column>,
    filters: Vec<String>,
    sources: BTreeSet<String>,
    depth: usize,
}

impl Lineage {
    fn text(&self, i: usize) -> String {
        self.columns.get(i).map_or(format!("${i}"), |c| c.lineage.clone())
    }

    fn texts(&self, columns: &[usize]) -> Vec<String> {
        columns.iter().map(|&c| self.text(c)).collect()
    }

    fn expr(&self, e: &Expr) -> String {
        lineage_expression(e, &|i| self.text(i))
    }

    fn call(&self, call: &AggregateCall) -> Aggregate {
        Aggregate { text: phase_text(call, None, &|i| self.text(i)), distinct: call.distinct }
    }

    fn order(&self, keys: &[SortKey]) -> String {
        let keys: Vec<String> = keys
            .iter()
            .map(|k| format!("{} {}", self.text(k.column), if k.descending { "DESC" } else { "ASC" }))
            .collect();
        keys.join(", ")
    }

    /// The output of a stateful operator over `inputs`: `columns`, no filters yet.
    fn after(inputs: &[&Lineage], columns: Vec<Column>) -> Lineage {
        Lineage {
            columns,
            filters: Vec::new(),
            sources: inputs.iter().flat_map(|i| i.sources.iter().cloned()).collect(),
            depth: inputs.iter().map(|i| i.depth).max().unwrap_or(0) + 1,
        }
    }
}

fn column(lineage: String, field: &weir_runtime::Field) -> Column {
    Column { lineage, ty: field.data_type.to_string() }
}

/// `columns` of `node`'s fields by the texts given, the fields past them as `what.name`.
fn columns_of(node: &PhysicalNode, texts: Vec<String>, what: &str) -> Vec<Column> {
    node.fields
        .iter()
        .enumerate()
        .map(|(i, f)| column(texts.get(i).cloned().unwrap_or_else(|| format!("{what}.{}", f.name)), f))
        .collect()
}

/// What each output column of `node` is computed from, as text over source columns.
pub(crate) fn lineage_texts(node: &PhysicalNode) -> Vec<String> {
    lineage(node).columns.into_iter().map(|c| c.lineage).collect()
}

/// The lineage of `node`'s output.
fn lineage(node: &PhysicalNode) -> Lineage {
    let inputs: Vec<Lineage> = node.inputs.iter().map(lineage).collect();
    let first = || inputs.first().cloned().unwrap_or_default();
    match &node.kind {
        PhysicalKind::TableSourceScan { table, projection, filter, key, .. } => {
            let name = |i: usize| format!("{}.{}", table.name, table.schema.fields[i].name);
            let mut filters: Vec<String> = filter.conjuncts.iter().map(|e| lineage_expression(e, &name)).collect();
            if let Some(key) = key {
                filters.push(format!("{:?} = {key:?}", table.primary_key.iter().map(|&k| name(k)).collect::<Vec<_>>()));
            }
            Lineage {
                columns: projection.iter().zip(&node.fields).map(|(&p, f)| column(name(p), f)).collect(),
                filters,
                sources: BTreeSet::from([table.name.clone()]),
                depth: 0,
            }
        }
        PhysicalKind::Values { rows } => Lineage {
            columns: columns_of(node, Vec::new(), &format!("VALUES{rows:?}")),
            sources: BTreeSet::from(["VALUES".to_string()]),
            ..Default::default()
        },
        PhysicalKind::Calc(spec) => {
            let mut l = first();
            if let Some(c) = &spec.condition {
                l.filters.push(l.expr(c));
            }
            let texts = spec.projections.iter().map(|p| l.expr(p)).collect();
            l.columns = columns_of(node, texts, "Calc");
            l
        }
        PhysicalKind::Union => {
            let mut columns = Vec::new();
            for (i, f) in node.fields.iter().enumerate() {
                let mut texts: Vec<String> = inputs.iter().map(|l| l.text(i)).collect();
                texts.sort();
                columns.push(column(texts.join(" UNION ALL "), f));
            }
            let mut filters: Vec<String> = inputs.iter().flat_map(|l| l.filters.iter().cloned()).collect();
            filters.sort();
            Lineage {
                columns,
                filters,
                sources: inputs.iter().flat_map(|l| l.sources.iter().cloned()).collect(),
                depth: inputs.iter().map(|l| l.depth).max().unwrap_or(0),
            }
        }
        PhysicalKind::Correlate(spec) => {
            let l = first();
            let mut texts = l.texts(&(0..l.columns.len()).collect::<Vec<_>>());
            let table = match &spec.table {
                weir_operators::CorrelatedTable::Unnest { collection, .. } => format!("UNNEST({})", l.expr(collection)),
                weir_operators::CorrelatedTable::Function(call) => {
                    let args: Vec<String> = call.args.iter().map(|a| l.expr(a)).collect();
                    format!("{}({})", call.function.name(), args.join(", "))
                }
            };
            texts.extend(node.fields[l.columns.len()..].iter().map(|f| format!("{table}.{}", f.name)));
            Lineage { columns: columns_of(node, texts, "Correlate"), ..l }
        }
        PhysicalKind::Expand(spec) => {
            let l = first();
            let mut texts = l.texts(&(0..l.columns.len()).collect::<Vec<_>>());
            let sets: Vec<String> = spec.projects.iter().map(|p| format!("{}{:?}", p.id, p.nulled)).collect();
            texts.push(format!("EXPAND[{}]", sets.join(", ")));
            Lineage { columns: columns_of(node, texts, "Expand"), ..l }
        }
        PhysicalKind::LookupJoin { table, dim_keys, .. } => {
            let l = first();
            let mut texts = l.texts(&(0..l.columns.len()).collect::<Vec<_>>());
            let keys: Vec<String> =
                dim_keys.iter().map(|&k| format!("{}.{}", table.name, table.schema.fields[k].name)).collect();
            let looked_up = node.fields[l.columns.len()..].iter();
            texts.extend(looked_up.map(|f| format!("LOOKUP {}.{} BY {}", table.name, f.name, keys.join(", "))));
            Lineage { columns: columns_of(node, texts, "LookupJoin"), ..l }
        }
        PhysicalKind::WatermarkAssigner(_)
        | PhysicalKind::Exchange { .. }
        | PhysicalKind::MiniBatchAssigner(_)
        | PhysicalKind::FinalRows(_)
        | PhysicalKind::Sink { .. }
        | PhysicalKind::WindowTableFunction(_) => {
            let l = first();
            let texts = l.texts(&(0..l.columns.len()).collect::<Vec<_>>());
            let window = window_text(node, &l);
            Lineage { columns: columns_of(node, texts, &window), ..l }
        }
        PhysicalKind::GroupAggregate(_)
        | PhysicalKind::LocalGroupAggregate(_)
        | PhysicalKind::GlobalGroupAggregate { .. }
        | PhysicalKind::SessionWindowTableFunction(_)
        | PhysicalKind::LocalWindowAggregate(_)
        | PhysicalKind::GlobalWindowAggregate { .. }
        | PhysicalKind::WindowAggregate(_)
        | PhysicalKind::SessionWindowAggregate(_)
        | PhysicalKind::WindowRank { .. }
        | PhysicalKind::WindowDeduplicate(_)
        | PhysicalKind::Rank { .. }
        | PhysicalKind::Deduplicate { .. }
        | PhysicalKind::ChangelogNormalize(_)
        | PhysicalKind::TemporalSort { .. }
        | PhysicalKind::OverAggregate(_)
        | PhysicalKind::Join(_)
        | PhysicalKind::IntervalJoin(_)
        | PhysicalKind::WindowJoin(_)
        | PhysicalKind::TemporalJoin(_) => {
            let refs: Vec<&Lineage> = inputs.iter().collect();
            let texts = describe_with(node, &inputs).map(|(_, out)| out).unwrap_or_default();
            Lineage::after(&refs, columns_of(node, texts, node.name()))
        }
    }
}

/// The window a window table function assigns, by lineage (`TUMBLE(MyTable.ts, 60000)`).
fn window_text(node: &PhysicalNode, input: &Lineage) -> String {
    if let PhysicalKind::WindowTableFunction(spec) = &node.kind {
        format!("{:?}({})", spec.window, input.text(spec.time_col))
    } else {
        node.name().to_string()
    }
}

/// The shape of `node` when it keeps state.
pub fn describe(node: &PhysicalNode) -> Option<StateShape> {
    let inputs: Vec<Lineage> = node.inputs.iter().map(lineage).collect();
    describe_with(node, &inputs).map(|(shape, _)| shape)
}

/// A shape under construction.
struct Builder<'a> {
    inputs: &'a [Lineage],
    shape: StateShape,
}

impl<'a> Builder<'a> {
    fn new(node: &'a PhysicalNode, inputs: &'a [Lineage], class: &str) -> Self {
        let shape = StateShape {
            id: String::new(),
            operator: node.name().to_string(),
            class: class.to_string(),
            sources: inputs
                .iter()
                .flat_map(|i| i.sources.iter().cloned())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
            depth: inputs.iter().map(|i| i.depth).max().unwrap_or(0),
            key: Vec::new(),
            key_ordered: false,
            definition: BTreeMap::new(),
            rows: None,
            row_rule: RowRule::Lineage,
            aggregates: None,
            filters: inputs.iter().flat_map(|i| i.filters.iter().cloned()).collect(),
            signature: super::signature::state_signature(node),
        };
        Builder { inputs, shape }
    }

    fn input(&self) -> &'a Lineage {
        &self.inputs[0]
    }

    fn key(mut self, columns: &[usize], ordered: bool) -> Self {
        self.shape.key = self.input().texts(columns);
        self.shape.key_ordered = ordered;
        self
    }

    fn define(mut self, what: &str, value: String) -> Self {
        self.shape.definition.insert(what.to_string(), value);
        self
    }

    fn rows(mut self, rule: RowRule) -> Self {
        self.shape.rows = Some(self.inputs.iter().flat_map(|i| i.columns.iter().cloned()).collect());
        self.shape.row_rule = rule;
        self
    }

    fn aggregates(mut self, input: &Lineage, calls: &[AggregateCall]) -> Self {
        self.shape.aggregates = Some(calls.iter().map(|c| input.call(c)).collect());
        self
    }

    /// The shape, and the lineage of the node's output: `texts`, then the input's columns when
    /// `pass_through`.
    fn finish(self, mut texts: Vec<String>, pass_through: bool) -> (StateShape, Vec<String>) {
        if pass_through {
            let mut all: Vec<String> =
                self.inputs.iter().flat_map(|i| i.columns.iter().map(|c| c.lineage.clone())).collect();
            all.append(&mut texts);
            texts = all;
        }
        (self.shape, texts)
    }
}

/// The node below `node` that computes the partial aggregates of a global phase (through
/// exchanges and mini-batch assigners).
fn local_phase(node: &PhysicalNode) -> &PhysicalNode {
    let mut local = &node.inputs[0];
    while matches!(local.kind, PhysicalKind::Exchange { .. } | PhysicalKind::MiniBatchAssigner(_)) {
        local = &local.inputs[0];
    }
    local
}

/// The shape of `node` and the lineage of its output, when it keeps state.
fn describe_with(node: &PhysicalNode, inputs: &[Lineage]) -> Option<(StateShape, Vec<String>)> {
    let b = |class: &str| Builder::new(node, inputs, class);
    let calls_out = |input: &Lineage, keys: &[usize], calls: &[AggregateCall]| -> Vec<String> {
        let mut texts = input.texts(keys);
        texts.extend(calls.iter().map(|c| input.call(c).text));
        texts
    };
    Some(match &node.kind {
        PhysicalKind::GroupAggregate(spec) => {
            let out = calls_out(&inputs[0], &spec.keys, &spec.calls);
            b("group aggregate").key(&spec.keys, true).aggregates(&inputs[0], &spec.calls).finish(out, false)
        }
        PhysicalKind::GlobalGroupAggregate { spec, .. } => {
            let local = local_phase(node);
            let PhysicalKind::LocalGroupAggregate(local_spec) = &local.kind else { return None };
            let below = lineage(&local.inputs[0]);
            let keys = &local_spec.keys[..spec.key_count.min(local_spec.keys.len())];
            let out = calls_out(&below, keys, &local_spec.calls);
            let mut builder = Builder::new(node, std::slice::from_ref(&below), "group aggregate");
            builder = builder.key(keys, true).aggregates(&below, &local_spec.calls);
            builder.shape.depth = below.depth;
            builder.finish(out, false)
        }
        PhysicalKind::WindowAggregate(spec) => {
            let input = &inputs[0];
            let time = match spec.input {
                weir_operators::WindowAggregateInput::Rows { time_col, .. } => input.text(time_col),
                weir_operators::WindowAggregateInput::Partials => String::new(),
            };
            let out = calls_out(input, &spec.keys, &spec.calls);
            b("window aggregate")
                .key(&spec.keys, true)
                .define("window", format!("{:?}({time})", spec.window))
                .aggregates(input, &spec.calls)
                .finish(out, false)
        }
        PhysicalKind::GlobalWindowAggregate { .. } => {
            let local = local_phase(node);
            let PhysicalKind::LocalWindowAggregate(local_spec) = &local.kind else { return None };
            let below = lineage(&local.inputs[0]);
            let window = format!("{:?}({})", local_spec.window, below.text(local_spec.time_col));
            let out = calls_out(&below, &local_spec.keys, &local_spec.calls);
            let mut builder = Builder::new(node, std::slice::from_ref(&below), "window aggregate")
                .key(&local_spec.keys, true)
                .define("window", window)
                .aggregates(&below, &local_spec.calls);
            builder.shape.depth = below.depth;
            builder.finish(out, false)
        }
        PhysicalKind::SessionWindowAggregate(spec) => {
            let input = &inputs[0];
            let window = format!("SESSION(gap={}, time={})", spec.gap, input.text(spec.time_col));
            let out = calls_out(input, &spec.keys, &spec.calls);
            b("window aggregate")
                .key(&spec.keys, true)
                .define("window", window)
                .aggregates(input, &spec.calls)
                .finish(out, false)
        }
        PhysicalKind::SessionWindowTableFunction(spec) => {
            let input = &inputs[0];
            let window = format!("SESSION(gap={}, time={})", spec.gap, input.text(spec.time_col));
            let props = ["window_start", "window_end", "window_time"].map(|p| format!("{window}.{p}")).to_vec();
            b("session window table function")
                .key(&spec.partition, false)
                .define("window", window)
                .rows(RowRule::Lineage)
                .finish(props, true)
        }
        PhysicalKind::WindowRank { spec, .. } => {
            let input = &inputs[0];
            b("window rank")
                .key(&spec.partition, false)
                .define("window", format!("{:?}", spec.window.spec))
                .define("order", input.order(&spec.order))
                .define("range", format!("{:?}", spec.range))
                .rows(RowRule::Lineage)
                .finish(vec!["ROW_NUMBER".into()], true)
        }
        PhysicalKind::WindowDeduplicate(spec) => {
            let input = &inputs[0];
            let order = format!("{} {}", input.text(spec.time_col), if spec.keep_last { "DESC" } else { "ASC" });
            b("window deduplicate")
                .key(&spec.partition, false)
                .define("window", format!("{:?}", spec.window.spec))
                .define("order", order)
                .rows(RowRule::Lineage)
                .finish(Vec::new(), true)
        }
        PhysicalKind::Rank { spec, shape } => {
            let input = &inputs[0];
            let (class, range) = match shape {
                RankShape::Rank => ("rank", format!("{:?}", spec.range)),
                RankShape::SortLimit { .. } | RankShape::Limit { .. } => ("limit", format!("{:?}", spec.range)),
            };
            let strategy = if spec.append_only { "AppendFastStrategy" } else { "RetractStrategy" };
            b(class)
                .key(&spec.partition, false)
                .define("order", input.order(&spec.order))
                .define("rank range", range)
                .define("strategy", strategy.into())
                .rows(RowRule::Lineage)
                .finish(vec!["ROW_NUMBER".into()], true)
        }
        PhysicalKind::ChangelogNormalize(spec) => {
            b("changelog normalize").key(&spec.key, false).rows(RowRule::Types).finish(Vec::new(), true)
        }
        PhysicalKind::Deduplicate { spec, time_col } => {
            let input = &inputs[0];
            let time = input.text(*time_col);
            let order = format!("{time} {}", if spec.keep_last { "DESC" } else { "ASC" });
            // The first row on processing time is kept only as a mark that its key was seen
            // (with insert-only input: it never goes out again).
            let rule = match (spec.keep_last, spec.rowtime) {
                (false, None) if spec.output_insert_only => RowRule::Any,
                _ => RowRule::Types,
            };
            let mode = if spec.rowtime.is_some() { "rowtime" } else { "proctime" };
            b("deduplicate")
                .key(&spec.key, false)
                .define("order", order)
                .define("time", mode.into())
                .rows(rule)
                .finish(Vec::new(), true)
        }
        PhysicalKind::TemporalSort { spec, order } => {
            let input = &inputs[0];
            let builder = b("temporal sort").define("order", input.order(order));
            // On processing time the sort keeps no rows across a checkpoint (it lets them go
            // before the barrier).
            let builder = if spec.rowtime { builder.rows(RowRule::Lineage) } else { builder };
            builder.finish(Vec::new(), true)
        }
        PhysicalKind::OverAggregate(spec) => {
            let input = &inputs[0];
            let over = format!(
                "PARTITION BY {} ORDER BY {} {}",
                input.texts(&spec.partition).join(", "),
                input.text(spec.time_col),
                spec.frame.explain()
            );
            let out: Vec<String> = spec.calls.iter().map(|c| format!("{} OVER ({over})", input.call(c).text)).collect();
            b("over aggregate")
                .key(&spec.partition, false)
                .define("order", format!("{} ASC", input.text(spec.time_col)))
                .define("frame", spec.frame.explain())
                .rows(RowRule::Lineage)
                .aggregates(input, &spec.calls)
                .finish(out, true)
        }
        PhysicalKind::Join(spec) => {
            join(node, inputs, "regular join", &spec.join_type, &spec.keys, spec.condition.as_ref(), Vec::new())
        }
        PhysicalKind::IntervalJoin(spec) => {
            let interval = format!(
                "[{}, {}] ms between {} and {}",
                spec.lower,
                spec.upper,
                inputs[0].text(spec.times[0]),
                inputs[1].text(spec.times[1])
            );
            join(
                node,
                inputs,
                "interval join",
                &spec.join_type,
                &spec.keys,
                spec.condition.as_ref(),
                vec![("interval", interval)],
            )
        }
        PhysicalKind::WindowJoin(spec) => {
            let windows = format!("{:?} / {:?}", spec.windows[0].spec, spec.windows[1].spec);
            join(
                node,
                inputs,
                "window join",
                &spec.join_type,
                &spec.keys,
                spec.condition.as_ref(),
                vec![("window", windows)],
            )
        }
        PhysicalKind::TemporalJoin(spec) => {
            let times = format!("{} AS OF {}", inputs[1].text(spec.times[1]), inputs[0].text(spec.times[0]));
            join(
                node,
                inputs,
                "temporal join",
                &spec.join_type,
                &spec.keys,
                spec.condition.as_ref(),
                vec![("version", times)],
            )
        }
        PhysicalKind::TableSourceScan { .. }
        | PhysicalKind::Values { .. }
        | PhysicalKind::Calc(_)
        | PhysicalKind::WatermarkAssigner(_)
        | PhysicalKind::Exchange { .. }
        | PhysicalKind::MiniBatchAssigner(_)
        | PhysicalKind::LocalGroupAggregate(_)
        | PhysicalKind::WindowTableFunction(_)
        | PhysicalKind::LocalWindowAggregate(_)
        | PhysicalKind::Union
        | PhysicalKind::FinalRows(_)
        | PhysicalKind::LookupJoin { .. }
        | PhysicalKind::Correlate(_)
        | PhysicalKind::Expand(_)
        | PhysicalKind::Sink { .. } => return None,
    })
}

fn join(
    node: &PhysicalNode,
    inputs: &[Lineage],
    class: &str,
    join_type: &impl std::fmt::Debug,
    keys: &[Vec<usize>; 2],
    condition: Option<&Expr>,
    more: Vec<(&str, String)>,
) -> (StateShape, Vec<String>) {
    let left = &inputs[0];
    let right = &inputs[1];
    let joined =
        Lineage { columns: left.columns.iter().chain(&right.columns).cloned().collect(), ..Default::default() };
    let pairs: Vec<String> =
        keys[0].iter().zip(&keys[1]).map(|(&l, &r)| format!("{} = {}", left.text(l), right.text(r))).collect();
    let mut builder = Builder::new(node, inputs, class)
        .define("join type", format!("{join_type:?}"))
        .define("keys", pairs.join(" AND "))
        .define("condition", condition.map(|c| joined.expr(c)).unwrap_or_default())
        .rows(RowRule::Lineage);
    builder.shape.key = keys[0].iter().map(|&k| left.text(k)).collect();
    // A condition pushed into one input is that input's filter: tell the sides apart.
    builder.shape.filters = inputs
        .iter()
        .zip(["left", "right"])
        .flat_map(|(i, side)| i.filters.iter().map(move |f| format!("{side}: {f}")))
        .collect();
    for (what, value) in more {
        builder = builder.define(what, value);
    }
    builder.finish(Vec::new(), true)
}
