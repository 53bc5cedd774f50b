//! What a stateful operator writes into checkpoints, declared beside its spec
//! ([`StatefulSpec::state_signature`]): the states it keeps (each a checkpoint section), their
//! kind, what they are keyed by and what each entry holds, and a format version the operator's
//! file bumps whenever the bytes it writes change. `weir compat` and every restore compare the
//! signature a checkpoint was written with against the new job's; golden files in
//! `tests/signatures/` pin the signature of every stateful operator, so that a change to one
//! shows up in review.

use serde::{Deserialize, Serialize};
use weir_runtime::DataType;

use crate::aggregate::AggregateCall;

/// How a state holds its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StateKind {
    /// One value per key.
    Value,
    /// A list of values per key.
    List,
    /// A map per key.
    Map,
    /// Timers per key and time.
    Timers,
    /// The operator's own encoding (typed group state, progress marks).
    Raw,
}

/// One state of an operator: a section of its checkpoints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateDeclaration {
    /// The section's name.
    pub name: String,
    /// How it holds its entries.
    pub kind: StateKind,
    /// The types of what it is keyed by (empty: one entry per subtask).
    pub key: Vec<String>,
    /// What each entry holds, in order.
    pub value: Vec<String>,
}

/// What an operator writes into checkpoints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateSignature {
    /// The operator, as Flink names it.
    pub operator: String,
    /// The version of the layout its state is written in.
    pub version: u32,
    /// Its states, in the order it writes them.
    pub states: Vec<StateDeclaration>,
}

impl StateSignature {
    /// The signature of `operator` at layout `version`, without states yet.
    pub fn new(operator: impl Into<String>, version: u32) -> Self {
        StateSignature { operator: operator.into(), version, states: Vec::new() }
    }

    /// The signature with one more state.
    pub fn state(mut self, name: &str, kind: StateKind, key: Vec<String>, value: Vec<String>) -> Self {
        self.states.push(StateDeclaration { name: name.to_string(), kind, key, value });
        self
    }

    /// Why a checkpoint written with `self` cannot be read by an operator of signature `new`:
    /// its state is in another layout version; `None` when it can. (Which states an operator
    /// writes may change within a version, as a group aggregate's typed or value groups do:
    /// the operator reads each.)
    pub fn incompatibility(&self, new: &StateSignature) -> Option<String> {
        (self.version != new.version).then(|| {
            format!(
                "its state was written in layout version {} of {}, and this weir reads version {}",
                self.version, self.operator, new.version
            )
        })
    }
}

/// A stateful operator's spec.
pub trait StatefulSpec {
    /// What the operator writes into checkpoints, over inputs whose columns have the types of
    /// `inputs` (one slice per input, left first).
    fn state_signature(&self, inputs: &[&[DataType]]) -> StateSignature;
}

/// The types of `columns` of a row of `types`.
pub fn column_types(types: &[DataType], columns: &[usize]) -> Vec<String> {
    columns.iter().map(|&c| types.get(c).map_or_else(|| format!("${c}"), DataType::to_string)).collect()
}

/// The types of every column of a row of `types`.
pub fn row_types(types: &[DataType]) -> Vec<String> {
    types.iter().map(DataType::to_string).collect()
}

/// What the accumulators of `calls` hold (over arguments of `arg_types`), one text per call:
/// `SUM(INT): sum INT, count BIGINT`, as the registry lays them out.
pub fn accumulator_layout(calls: &[AggregateCall], arg_types: &[Option<DataType>]) -> Vec<String> {
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let function = call.kind.function();
            let arg = arg_types.get(i).cloned().flatten().map_or_else(|| "*".to_string(), |t| t.to_string());
            let result = call.result_type.to_string();
            let fields: Vec<String> =
                function.accumulator.iter().map(|f| f.replace("RESULT", &result).replace("ARG", &arg)).collect();
            let distinct = if call.distinct { "DISTINCT " } else { "" };
            format!("{}({distinct}{arg}): {}", function.name, fields.join(", "))
        })
        .collect()
}
