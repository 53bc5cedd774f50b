//! Unnest: `CROSS JOIN UNNEST(collection)` and `LEFT JOIN UNNEST(collection) ON TRUE`, the
//! correlate Flink plans for them (`$UNNEST_ROWS$1`).
//!
//! Each input row is followed by the elements of the ARRAY (the fields of each ROW element, for
//! an ARRAY of ROWs) or the entries of the MAP its collection expression gives: one output row
//! per element, the input's columns first, with the input row's kind. A NULL or empty collection
//! gives no row, or with `left` one row whose element columns are NULL.

use std::sync::Arc;

use weir_runtime::{Chunk, Error, Operator, OperatorContext, Output, Result, Value};

use crate::expr::Expr;
use crate::spec::OperatorSpec;

/// Everything an [`UnnestOperator`] is built from.
#[derive(Debug, Clone)]
pub struct UnnestSpec {
    /// The collection, over the input row.
    pub collection: Expr,
    /// The columns each element adds (1 for an ARRAY of scalars, 2 for a MAP, a ROW's fields).
    pub element_arity: usize,
    /// Whether a row without elements is kept, with NULL element columns.
    pub left: bool,
    /// `WITH ORDINALITY`: a last column numbers the elements from 1 (NULL on a kept row without).
    pub ordinality: bool,
}

impl OperatorSpec for UnnestSpec {
    type Operator = UnnestOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> UnnestOperator {
        UnnestOperator { spec: self.clone() }
    }

    fn factory(&self) -> weir_runtime::graph::OperatorFactory {
        let spec = self.clone();
        Arc::new(move |_| Box::new(UnnestOperator { spec: spec.clone() }))
    }
}

/// Joins each row with the elements of its collection (see the module).
#[derive(Debug, Clone)]
pub struct UnnestOperator {
    spec: UnnestSpec,
}

impl UnnestOperator {
    /// The element columns of each element of `collection`.
    fn elements(&self, collection: Value) -> Result<Vec<Vec<Value>>> {
        let width = self.spec.element_arity;
        Ok(match collection {
            Value::Null => Vec::new(),
            Value::Array(items) => items
                .iter()
                .map(|item| match item {
                    // An ARRAY of ROWs: the ROW's fields are the element's columns.
                    Value::Row(fields) if fields.len() == width => fields.to_vec(),
                    Value::Null if width > 1 => vec![Value::Null; width],
                    other => vec![other.clone()],
                })
                .collect(),
            Value::Map(entries) => entries.iter().map(|(k, v)| vec![k.clone(), v.clone()]).collect(),
            other => return Err(Error::execution(format!("UNNEST of a value that is not a collection: {other:?}"))),
        })
    }
}

impl Operator for UnnestOperator {
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
        let arity = chunk.arity() + self.spec.element_arity + usize::from(self.spec.ordinality);
        let mut joined = Chunk::with_capacity(arity, chunk.len());
        for (kind, row) in chunk.rows() {
            let collection = self.spec.collection.eval(row).map_err(|e| Error::execution(e.0))?;
            let elements = self.elements(collection)?;
            if elements.is_empty() && self.spec.left {
                joined.push_with(kind, |values| {
                    values.extend_from_slice(row);
                    values.extend(std::iter::repeat_n(Value::Null, arity - row.len()));
                });
            }
            for (n, element) in elements.into_iter().enumerate() {
                joined.push_with(kind, |values| {
                    values.extend_from_slice(row);
                    values.extend(element);
                    if self.spec.ordinality {
                        values.push(Value::Int(n as i32 + 1));
                    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::harness::OperatorHarness;
    use weir_runtime::{DataType, LogicalType, RowKind};

    fn operator(element_arity: usize, left: bool) -> UnnestOperator {
        let ty = DataType::new(LogicalType::Array(Box::new(DataType::int())));
        UnnestSpec { collection: Expr::column(1, ty), element_arity, left, ordinality: false }
            .build(&weir_runtime::SubtaskInfo { vertex: "Correlate".into(), index: 0, parallelism: 1 })
    }

    fn rows(input: Vec<(RowKind, Vec<Value>)>, op: UnnestOperator) -> Vec<String> {
        let mut harness = OperatorHarness::new(op);
        let mut chunk = Chunk::new(2);
        input.iter().for_each(|(k, r)| chunk.push(*k, r));
        harness.push_chunk(0, chunk).unwrap();
        harness.take_lines()
    }

    fn array(items: &[i32]) -> Value {
        Value::Array(items.iter().map(|&i| Value::Int(i)).collect())
    }

    #[test]
    fn every_element_joins_its_row_with_the_rows_kind() {
        let input = vec![
            (RowKind::Insert, vec![Value::Int(1), array(&[10, 20])]),
            (RowKind::Insert, vec![Value::Int(2), array(&[])]),
            (RowKind::Delete, vec![Value::Int(3), array(&[30])]),
            (RowKind::Insert, vec![Value::Int(4), Value::Null]),
        ];
        assert_eq!(
            rows(input.clone(), operator(1, false)),
            ["+I[1, [10, 20], 10]", "+I[1, [10, 20], 20]", "-D[3, [30], 30]"]
        );
        assert_eq!(
            rows(input, operator(1, true)),
            ["+I[1, [10, 20], 10]", "+I[1, [10, 20], 20]", "+I[2, [], null]", "-D[3, [30], 30]", "+I[4, null, null]"]
        );
    }
}
