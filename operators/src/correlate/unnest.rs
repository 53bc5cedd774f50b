//! `UNNEST(collection)`: the rows of an ARRAY (one per element; the fields of each ROW element,
//! for an ARRAY of ROWs) or of a MAP (one per entry: key and value), the rows Flink's
//! `$UNNEST_ROWS$1` gives.

use weir_runtime::{DataType, Error, LogicalType, Result, Value};

/// How the elements of the collection become columns, from its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Elements {
    /// An ARRAY of other values: one column.
    Values,
    /// An ARRAY of ROWs of this many fields: the fields.
    Rows(usize),
    /// A MAP: key and value.
    Entries,
}

impl Elements {
    /// How the elements of a collection of type `collection` become columns.
    pub(super) fn of(collection: &DataType) -> Elements {
        match &collection.logical {
            LogicalType::Array(element) => match &element.logical {
                LogicalType::Row(fields) => Elements::Rows(fields.len()),
                _ => Elements::Values,
            },
            _ => Elements::Entries,
        }
    }

    /// The columns each element adds.
    pub(super) fn width(self) -> usize {
        match self {
            Elements::Values => 1,
            Elements::Rows(n) => n,
            Elements::Entries => 2,
        }
    }
}

/// Calls `emit` with the columns of each element of `collection` (none for NULL), and with
/// `ordinality` its position from 1 after them (an entry's, in the map's order, for a MAP);
/// `columns` holds them (reused between calls).
///
/// # Errors
/// A value that is not a collection.
pub(super) fn elements(
    collection: &Value,
    elements: Elements,
    ordinality: bool,
    columns: &mut Vec<Value>,
    emit: &mut dyn FnMut(&[Value]),
) -> Result<()> {
    match collection {
        Value::Null => {}
        Value::Array(items) => {
            for (n, item) in items.iter().enumerate() {
                columns.clear();
                match (elements, item) {
                    (Elements::Rows(_), Value::Row(fields)) => columns.extend_from_slice(fields),
                    (Elements::Rows(width), _) => columns.extend(std::iter::repeat_n(Value::Null, width)),
                    (Elements::Values | Elements::Entries, other) => columns.push(other.clone()),
                }
                if ordinality {
                    columns.push(Value::Int(n as i32 + 1));
                }
                emit(columns);
            }
        }
        Value::Map(entries) => {
            for (n, (key, value)) in entries.iter().enumerate() {
                columns.clear();
                columns.extend([key.clone(), value.clone()]);
                if ordinality {
                    columns.push(Value::Int(n as i32 + 1));
                }
                emit(columns);
            }
        }
        other => return Err(Error::execution(format!("UNNEST of a value that is not a collection: {other:?}"))),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::correlate::{CorrelateOperator, CorrelateSpec, CorrelatedTable};
    use crate::expr::Expr;
    use crate::spec::OperatorSpec;
    use weir_runtime::harness::OperatorHarness;
    use weir_runtime::{Chunk, RowKind};

    fn unnest(collection: DataType, left: bool, ordinality: bool) -> CorrelateOperator {
        let table = CorrelatedTable::Unnest { collection: Expr::column(1, collection), ordinality };
        CorrelateSpec { table, left }.build(&weir_runtime::SubtaskInfo::new("Correlate", 0, 1))
    }

    fn operator(left: bool) -> CorrelateOperator {
        unnest(DataType::new(LogicalType::Array(Box::new(DataType::int()))), left, false)
    }

    fn rows(input: Vec<(RowKind, Vec<Value>)>, op: CorrelateOperator) -> Vec<String> {
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
