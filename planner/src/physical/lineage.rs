//! The lineage of a node's output: each column named by the expression over source columns it
//! is computed from (`MyTable.b`, `SUBSTRING(MyTable.c, 1, 5)`, `SUM(MyTable.b)`), so that
//! renaming an alias or moving a projection changes nothing, and changing what a key or an
//! aggregate reads changes its text. Operators tell theirs ([`super::op::PhysicalOp::trace`]) in
//! these terms, and describe the state they keep as a [`StateShape`].

use std::collections::{BTreeMap, BTreeSet};

use weir_operators::aggregate::AggregateCall;
use weir_operators::expr::Expr;
use weir_operators::ranking::SortKey;

use serde::{Deserialize, Serialize};

use crate::plan_text::{lineage_expression, phase_text};

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

/// A column of kept rows by its lineage, of `field`'s type.
pub(crate) fn column(lineage: String, field: &weir_runtime::Field) -> Column {
    Column { lineage, ty: field.data_type.to_string() }
}
