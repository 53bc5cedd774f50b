//! Unnest: `CROSS JOIN UNNEST(collection)` and `LEFT JOIN UNNEST(collection) ON TRUE`, the
//! correlate Flink plans for them (`$UNNEST_ROWS$1`).
//!
//! Each input row is followed by the elements of the ARRAY (the fields of each ROW element, for
//! an ARRAY of ROWs) or the entries of the MAP its collection expression gives: one output row
//! per element, the input's columns first, with the input row's kind. A NULL or empty collection
//! gives no row, or with `left` one row whose element columns are NULL.

use std::sync::Arc;

use weir_runtime::{Chunk, DataType, Error, LogicalType, Operator, OperatorContext, Output, Result, Value};

use crate::expr::Expr;
use crate::spec::OperatorSpec;

/// Everything an [`UnnestOperator`] is built from.
#[derive(Debug, Clone)]
pub struct UnnestSpec {
    /// The collection, over the input row: an ARRAY or a MAP.
    pub collection: Expr,
    /// Whether a row without elements is kept, with NULL element columns.
    pub left: bool,
    /// `WITH ORDINALITY`: a last column numbers the elements from 1 (NULL on a kept row without).
    pub ordinality: bool,
}

impl OperatorSpec for UnnestSpec {
    type Operator = UnnestOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> UnnestOperator {
        UnnestOperator::new(self.clone())
    }

    fn factory(&self) -> weir_runtime::graph::OperatorFactory {
        let operator = UnnestOperator::new(self.clone());
        Arc::new(move |_| Box::new(operator.clone()))
    }
}

/// How the elements of the collection become columns, from its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elements {
    /// An ARRAY of other values: one column.
    Values,
    /// An ARRAY of ROWs of this many fields: the fields.
    Rows(usize),
    /// A MAP: key and value.
    Entries,
}

impl Elements {
    fn of(collection: &DataType) -> Elements {
        match &collection.logical {
            LogicalType::Array(element) => match &element.logical {
                LogicalType::Row(fields) => Elements::Rows(fields.len()),
                _ => Elements::Values,
            },
            _ => Elements::Entries,
        }
    }

    /// The columns each element adds.
    fn width(self) -> usize {
        match self {
            Elements::Values => 1,
            Elements::Rows(n) => n,
            Elements::Entries => 2,
        }
    }
}

/// Joins each row with the elements of its collection (see the module).
#[derive(Debug, Clone)]
pub struct UnnestOperator {
    spec: UnnestSpec,
    elements: Elements,
}

impl UnnestOperator {
    /// The operator of `spec`.
    pub fn new(spec: UnnestSpec) -> Self {
        UnnestOperator { elements: Elements::of(spec.collection.ty()), spec }
    }

    /// The columns of the element, into `values`.
    fn push_element(&self, element: &Value, values: &mut Vec<Value>) {
        match (self.elements, element) {
            (Elements::Rows(_), Value::Row(fields)) => values.extend_from_slice(fields),
            (Elements::Rows(n), _) => values.extend(std::iter::repeat_n(Value::Null, n)),
            (_, other) => values.push(other.clone()),
        }
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
        let added = self.elements.width() + usize::from(self.spec.ordinality);
        let mut joined = Chunk::with_capacity(chunk.arity() + added, chunk.len());
        for (kind, row) in chunk.rows() {
            let collection = self.spec.collection.eval(row).map_err(|e| Error::execution(e.0))?;
            let count = match &collection {
                Value::Null => 0,
                Value::Array(items) => {
                    for (n, item) in items.iter().enumerate() {
                        joined.push_with(kind, |values| {
                            values.extend_from_slice(row);
                            self.push_element(item, values);
                            if self.spec.ordinality {
                                values.push(Value::Int(n as i32 + 1));
                            }
                        });
                    }
                    items.len()
                }
                Value::Map(entries) => {
                    for (key, value) in entries.iter() {
                        joined.push_with(kind, |values| {
                            values.extend_from_slice(row);
                            values.extend([key.clone(), value.clone()]);
                        });
                    }
                    entries.len()
                }
                other => {
                    return Err(Error::execution(format!("UNNEST of a value that is not a collection: {other:?}")));
                }
            };
            if count == 0 && self.spec.left {
                joined.push_with(kind, |values| {
                    values.extend_from_slice(row);
                    values.extend(std::iter::repeat_n(Value::Null, added));
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
    use weir_runtime::RowKind;

    fn unnest(collection: DataType, left: bool, ordinality: bool) -> UnnestOperator {
        UnnestSpec { collection: Expr::column(1, collection), left, ordinality }.build(&weir_runtime::SubtaskInfo::new(
            "Correlate",
            0,
            1,
        ))
    }

    fn operator(left: bool) -> UnnestOperator {
        unnest(DataType::new(LogicalType::Array(Box::new(DataType::int()))), left, false)
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
            rows(input.clone(), operator(false)),
            ["+I[1, [10, 20], 10]", "+I[1, [10, 20], 20]", "-D[3, [30], 30]"]
        );
        assert_eq!(
            rows(input, operator(true)),
            ["+I[1, [10, 20], 10]", "+I[1, [10, 20], 20]", "+I[2, [], null]", "-D[3, [30], 30]", "+I[4, null, null]"]
        );
    }

    #[test]
    fn rows_give_their_fields_maps_their_entries_and_ordinality_counts_from_one() {
        let row = DataType::new(LogicalType::Row(vec![
            weir_runtime::Field::new("x", DataType::int()),
            weir_runtime::Field::new("y", DataType::string()),
        ]));
        let rows_of = |items: Vec<Value>| Value::Array(items.into());
        let input = vec![(
            RowKind::Insert,
            vec![Value::Int(1), rows_of(vec![Value::Row(vec![Value::Int(7), Value::string("a")].into()), Value::Null])],
        )];
        let op = unnest(DataType::new(LogicalType::Array(Box::new(row))), false, true);
        assert_eq!(rows(input, op), ["+I[1, [+I[7, a], null], 7, a, 1]", "+I[1, [+I[7, a], null], null, null, 2]"]);
        let map = DataType::new(LogicalType::Map(Box::new(DataType::string()), Box::new(DataType::int())));
        let entries = Value::Map(vec![(Value::string("k"), Value::Int(1))].into());
        let op = unnest(map, true, false);
        assert_eq!(
            rows(
                vec![
                    (RowKind::Insert, vec![Value::Int(1), entries]),
                    (RowKind::Insert, vec![Value::Int(2), Value::Null])
                ],
                op
            ),
            ["+I[1, {k=1}, k, 1]", "+I[2, null, null, null]"]
        );
    }
}
