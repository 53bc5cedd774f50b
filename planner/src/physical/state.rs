//! What a node keeps in state, as the state compatibility check compares it across versions
//! of a job: its [`StateShape`] (key, definition, rows and aggregates, each by lineage) and its
//! versioned signature, as its operator declares them ([`super::op::PhysicalOp::trace`],
//! [`super::op::PhysicalOp::state`]).

use std::collections::{BTreeMap, BTreeSet};

use weir_operators::aggregate::AggregateCall;
use weir_operators::expr::Expr;
use weir_operators::signature::StateSignature;
use weir_runtime::DataType;

use super::lineage::{column, Column, Lineage, RowRule, StateShape, Traced};
use super::op::PhysicalNode;

/// The shape of `node` when it keeps state.
pub fn describe(node: &PhysicalNode) -> Option<StateShape> {
    let inputs: Vec<Lineage> = node.inputs.iter().map(lineage).collect();
    describe_with(node, &inputs).map(|(shape, _)| shape)
}

/// A shape under construction.
pub(crate) struct Builder<'a> {
    inputs: &'a [Lineage],
    /// The shape so far.
    pub(crate) shape: StateShape,
}

impl<'a> Builder<'a> {
    pub(crate) fn new(node: &'a PhysicalNode, inputs: &'a [Lineage], class: &str) -> Self {
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
            signature: state_signature(node),
        };
        Builder { inputs, shape }
    }

    pub(crate) fn input(&self) -> &'a Lineage {
        &self.inputs[0]
    }

    pub(crate) fn key(mut self, columns: &[usize], ordered: bool) -> Self {
        self.shape.key = self.input().texts(columns);
        self.shape.key_ordered = ordered;
        self
    }

    pub(crate) fn define(mut self, what: &str, value: String) -> Self {
        self.shape.definition.insert(what.to_string(), value);
        self
    }

    pub(crate) fn rows(mut self, rule: RowRule) -> Self {
        self.shape.rows = Some(self.inputs.iter().flat_map(|i| i.columns.iter().cloned()).collect());
        self.shape.row_rule = rule;
        self
    }

    pub(crate) fn aggregates(mut self, input: &Lineage, calls: &[AggregateCall]) -> Self {
        self.shape.aggregates = Some(calls.iter().map(|c| input.call(c)).collect());
        self
    }

    /// What the operator tells: the shape, and the lineage of its output — `texts`, after the
    /// input's columns when `pass_through`.
    pub(crate) fn finish(self, mut texts: Vec<String>, pass_through: bool) -> Traced {
        if pass_through {
            let mut all: Vec<String> =
                self.inputs.iter().flat_map(|i| i.columns.iter().map(|c| c.lineage.clone())).collect();
            all.append(&mut texts);
            texts = all;
        }
        Traced::State(Some(Box::new((self.shape, texts))))
    }
}

/// The shape of `node` and the lineage of its output, when it keeps state.
pub(crate) fn describe_with(node: &PhysicalNode, inputs: &[Lineage]) -> Option<(StateShape, Vec<String>)> {
    match node.operator.trace(node, inputs) {
        Traced::State(described) => described.map(|d| *d),
        Traced::Output(_) => None,
    }
}

/// The shape of a join of two inputs (`class`: `regular join`, …), its keys and condition and
/// the definitions in `more`; the lineage of its output is its inputs' columns.
pub(crate) fn join(
    node: &PhysicalNode,
    inputs: &[Lineage],
    class: &str,
    join_type: &impl std::fmt::Debug,
    keys: &[Vec<usize>; 2],
    condition: Option<&Expr>,
    more: Vec<(&str, String)>,
) -> Traced {
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

/// The column types of each input of `node`.
pub(crate) fn input_types(node: &PhysicalNode) -> Vec<Vec<DataType>> {
    node.inputs.iter().map(|i| i.fields.iter().map(|f| f.data_type.clone()).collect()).collect()
}

/// What `node` writes into checkpoints; `None` for a node that keeps no state there (a sink's
/// materializer is described by [`super::op::sink::SinkMaterializer::state_signature`]).
pub fn state_signature(node: &PhysicalNode) -> Option<StateSignature> {
    let spec = node.operator.state(node).checkpointed?;
    let types = input_types(node);
    let inputs: Vec<&[DataType]> = types.iter().map(Vec::as_slice).collect();
    Some(spec.state_signature(&inputs))
}

/// `columns` of `node`'s fields by the texts given, the fields past them as `what.name`.
pub(crate) fn columns_of(node: &PhysicalNode, texts: Vec<String>, what: &str) -> Vec<Column> {
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
pub(crate) fn lineage(node: &PhysicalNode) -> Lineage {
    let inputs: Vec<Lineage> = node.inputs.iter().map(lineage).collect();
    match node.operator.trace(node, &inputs) {
        Traced::Output(lineage) => lineage,
        Traced::State(described) => {
            let refs: Vec<&Lineage> = inputs.iter().collect();
            let texts = described.map(|d| d.1).unwrap_or_default();
            Lineage::after(&refs, columns_of(node, texts, node.name()))
        }
    }
}

/// The node below `node` that computes the partial aggregates of a global phase (through
/// exchanges and mini-batch assigners, which forward rows).
pub(crate) fn local_phase(node: &PhysicalNode) -> &PhysicalNode {
    let mut local = &node.inputs[0];
    while local.operator.forwards_rows() {
        local = &local.inputs[0];
    }
    local
}

/// The lineage of a node that passes its input's rows on as they are.
pub(crate) fn passed_on(node: &PhysicalNode, inputs: &[Lineage]) -> Lineage {
    let input = inputs.first().cloned().unwrap_or_default();
    let texts = input.texts(&(0..input.columns.len()).collect::<Vec<_>>());
    Lineage { columns: columns_of(node, texts, node.name()), ..input }
}
