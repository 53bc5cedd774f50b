//! The lineage of a node's output: each column named by the expression over source columns it
//! is computed from (`MyTable.b`, `SUBSTRING(MyTable.c, 1, 5)`, `SUM(MyTable.b)`), so that
//! renaming an alias or moving a projection changes nothing, and changing what a key or an
//! aggregate reads changes its text. Operators tell theirs ([`super::op::PhysicalOp::trace`]);
//! this walk follows the plan's structure between them.

use std::collections::BTreeSet;

use weir_operators::aggregate::AggregateCall;
use weir_operators::expr::Expr;
use weir_operators::ranking::SortKey;

use super::op::exchange::Exchange;
use super::op::mini_batch_assigner::MiniBatchAssigner;
use super::state::{Aggregate, Column, StateShape};
use super::PhysicalNode;
use crate::plan_text::{lineage_expression, phase_text};

/// What an operator tells of its output's lineage ([`crate::physical::op::PhysicalOp::trace`]).
pub enum Traced {
    /// A stateless operator: its output's lineage.
    Output(Lineage),
    /// An operator that keeps state: its shape and the lineage texts of its output columns
    /// (`None` when the plan around it is not the one it was planned in).
    State(Option<Box<(StateShape, Vec<String>)>>),
}

/// The columns of a node's output by lineage, the conditions its rows passed since the last
/// stateful operator, its source tables and how many stateful operators are above it.
#[derive(Debug, Clone, Default)]
pub struct Lineage {
    /// Each column's lineage and type.
    pub(crate) columns: Vec<Column>,
    /// The conditions rows passed since the last stateful operator.
    pub(crate) filters: Vec<String>,
    /// The source tables.
    pub(crate) sources: BTreeSet<String>,
    /// How many stateful operators are below.
    pub(crate) depth: usize,
}

impl Lineage {
    /// The lineage of column `i`.
    pub(crate) fn text(&self, i: usize) -> String {
        self.columns.get(i).map_or(format!("${i}"), |c| c.lineage.clone())
    }

    /// The lineage of each of `columns`.
    pub(crate) fn texts(&self, columns: &[usize]) -> Vec<String> {
        columns.iter().map(|&c| self.text(c)).collect()
    }

    /// An expression over the columns, by lineage.
    pub(crate) fn expr(&self, e: &Expr) -> String {
        lineage_expression(e, &|i| self.text(i))
    }

    /// An aggregate call over the columns, by lineage.
    pub(crate) fn call(&self, call: &AggregateCall) -> Aggregate {
        Aggregate { text: phase_text(call, None, &|i| self.text(i)), distinct: call.distinct }
    }

    /// Sort keys over the columns, by lineage (`t.a ASC, t.b DESC`).
    pub(crate) fn order(&self, keys: &[SortKey]) -> String {
        let keys: Vec<String> = keys
            .iter()
            .map(|k| format!("{} {}", self.text(k.column), if k.descending { "DESC" } else { "ASC" }))
            .collect();
        keys.join(", ")
    }

    /// The lineage of an aggregate's output: its `keys`, then each of `calls`.
    pub(crate) fn calls_out(&self, keys: &[usize], calls: &[AggregateCall]) -> Vec<String> {
        let mut texts = self.texts(keys);
        texts.extend(calls.iter().map(|c| self.call(c).text));
        texts
    }

    /// The output of a stateful operator over `inputs`: `columns`, no filters yet.
    pub(crate) fn after(inputs: &[&Lineage], columns: Vec<Column>) -> Lineage {
        Lineage {
            columns,
            filters: Vec::new(),
            sources: inputs.iter().flat_map(|i| i.sources.iter().cloned()).collect(),
            depth: inputs.iter().map(|i| i.depth).max().unwrap_or(0) + 1,
        }
    }
}

pub(crate) fn column(lineage: String, field: &weir_runtime::Field) -> Column {
    Column { lineage, ty: field.data_type.to_string() }
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
/// exchanges and mini-batch assigners).
pub(crate) fn local_phase(node: &PhysicalNode) -> &PhysicalNode {
    let mut local = &node.inputs[0];
    while local.is::<Exchange>() || local.is::<MiniBatchAssigner>() {
        local = &local.inputs[0];
    }
    local
}
