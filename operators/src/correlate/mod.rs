//! Correlate: each input row joined with the rows a table expression gives for it, as Flink's
//! `Correlate` joins them: `CROSS JOIN UNNEST(collection)` (the elements of an ARRAY or the
//! entries of a MAP, [`unnest`]) and `LATERAL TABLE(function(args))` (the rows a table function
//! emits, [`table_function`]), or their `LEFT JOIN … ON TRUE` forms.
//!
//! Each input row is followed by its generated rows: one output row per generated row, the
//! input's columns first, with the input row's kind. A row that generates nothing gives no row,
//! or with `left` one row whose generated columns are NULL.

pub mod table_function;
pub mod unnest;

use std::sync::Arc;

use weir_runtime::{Chunk, Error, Operator, OperatorContext, Output, Result, Value};

use crate::expr::Expr;
use crate::spec::OperatorSpec;
pub use table_function::{TableFunctionCall, TableUdf};
use unnest::Elements;

/// What a correlate joins each input row with.
#[derive(Debug, Clone)]
pub enum CorrelatedTable {
    /// `UNNEST(collection) [WITH ORDINALITY]`.
    Unnest {
        /// The collection, over the input row: an ARRAY or a MAP.
        collection: Expr,
        /// `WITH ORDINALITY`: a last column numbers the elements from 1 (NULL on a kept row
        /// without).
        ordinality: bool,
    },
    /// `LATERAL TABLE(function(args))`.
    Function(TableFunctionCall),
}

impl CorrelatedTable {
    /// How many columns each generated row adds.
    pub fn width(&self) -> usize {
        match self {
            CorrelatedTable::Unnest { collection, ordinality } => {
                Elements::of(collection.ty()).width() + usize::from(*ordinality)
            }
            CorrelatedTable::Function(call) => call.fields.len(),
        }
    }

    /// Marks the input columns the table reads.
    pub fn mark_columns(&self, used: &mut [bool]) {
        match self {
            CorrelatedTable::Unnest { collection, .. } => collection.mark_columns(used),
            CorrelatedTable::Function(call) => call.args.iter().for_each(|a| a.mark_columns(used)),
        }
    }

    /// The table over an input whose columns moved as `map` says.
    pub fn remap(self, map: &[Option<usize>]) -> CorrelatedTable {
        match self {
            CorrelatedTable::Unnest { collection, ordinality } => {
                CorrelatedTable::Unnest { collection: collection.remap(map), ordinality }
            }
            CorrelatedTable::Function(call) => CorrelatedTable::Function(call.remap(map)),
        }
    }
}

/// Everything a [`CorrelateOperator`] is built from.
#[derive(Debug, Clone)]
pub struct CorrelateSpec {
    /// What each input row is joined with.
    pub table: CorrelatedTable,
    /// Whether a row that generates nothing is kept, with NULL generated columns.
    pub left: bool,
}

impl OperatorSpec for CorrelateSpec {
    type Operator = CorrelateOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> CorrelateOperator {
        CorrelateOperator::new(self.clone())
    }

    fn factory(&self) -> weir_runtime::graph::OperatorFactory {
        let operator = CorrelateOperator::new(self.clone());
        Arc::new(move |_| Box::new(operator.clone()))
    }
}

/// Joins each row with the rows its table gives (see the module).
#[derive(Debug, Clone)]
pub struct CorrelateOperator {
    spec: CorrelateSpec,
    width: usize,
    /// Reused for every row: a function's arguments, an element's columns.
    scratch: Vec<Value>,
}

impl CorrelateOperator {
    /// The operator of `spec`.
    pub fn new(spec: CorrelateSpec) -> Self {
        CorrelateOperator { width: spec.table.width(), spec, scratch: Vec::new() }
    }

    /// Calls `emit` with the generated columns of each row the table gives for `row`.
    fn generate(&mut self, row: &[Value], emit: &mut dyn FnMut(&[Value])) -> Result<()> {
        let scratch = &mut self.scratch;
        match &self.spec.table {
            CorrelatedTable::Unnest { collection, ordinality } => {
                let elements = Elements::of(collection.ty());
                let value = collection.eval(row).map_err(|e| Error::execution(e.0))?;
                unnest::elements(&value, elements, *ordinality, scratch, emit)
            }
            CorrelatedTable::Function(call) => call.rows(row, scratch, emit),
        }
    }
}

impl Operator for CorrelateOperator {
    fn name(&self) -> &str {
        "Correlate"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let mut joined = Chunk::with_capacity(chunk.arity() + self.width, chunk.len());
        for (kind, row) in chunk.rows() {
            let mut count = 0;
            self.generate(row, &mut |generated| {
                count += 1;
                joined.push_with(kind, |values| {
                    values.extend_from_slice(row);
                    values.extend_from_slice(generated);
                });
            })?;
            if count == 0 && self.spec.left {
                joined.push_with(kind, |values| {
                    values.extend_from_slice(row);
                    values.extend(std::iter::repeat_n(Value::Null, self.width));
                });
            }
        }
        if !joined.is_empty() {
            joined.set_origin_nanos(chunk.origin_nanos());
            out.collect(joined);
        }
        Ok(())
    }
}
