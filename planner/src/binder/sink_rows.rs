//! How the rows of an INSERT's query become rows of its sink table: target columns, implicit
//! casts and Flink's type checks.

use weir_connectors::TableDescriptor;
use weir_operators::expr::types::{is_numeric, is_string};
use weir_operators::expr::Expr;
use weir_runtime::{DataType, Field, LogicalType};

use crate::catalog::{Catalog, CatalogTable};
use crate::error::{Error, Position, Result};
use crate::plan::{Node, Plan};

/// The columns `INSERT INTO t (columns)` names, by index into the table; `None` without a list.
pub(crate) fn target_columns(table: &TableDescriptor, columns: &[String]) -> Option<Vec<usize>> {
    (!columns.is_empty())
        .then(|| columns.iter().filter_map(|c| table.schema.fields.iter().position(|f| &f.name == c)).collect())
}

/// Whether `plan` only has constant rows (`INSERT … VALUES`).
fn from_values(plan: &Plan) -> bool {
    match &plan.node {
        Node::Values { .. } => true,
        Node::Calc { input, .. } => from_values(input),
        Node::Union { inputs } => inputs.iter().all(from_values),
        _ => false,
    }
}

/// Whether a value of `from` may be written into a column of `to`; with `values` (rows of
/// `INSERT … VALUES`) strings are also cast to DATE, TIME and TIMESTAMP, as Flink casts
/// literals.
/// Whether `a` and `b` are one nested type but for nullability and ROW field names, which an
/// INSERT does not check (a query's `ROW(1, 'a')` goes into a `ROW<x INT, y STRING>` column);
/// with `castable`, parts may also differ as an INSERT casts them (`ARRAY<INT>` into
/// `ARRAY<BIGINT>`).
fn same_shape(a: &DataType, b: &DataType, castable: bool) -> bool {
    match (&a.logical, &b.logical) {
        (LogicalType::Array(x), LogicalType::Array(y)) => same_shape(x, y, castable),
        (LogicalType::Map(k1, v1), LogicalType::Map(k2, v2)) => {
            same_shape(k1, k2, castable) && same_shape(v1, v2, castable)
        }
        (LogicalType::Multiset(x), LogicalType::Multiset(y)) => same_shape(x, y, castable),
        (LogicalType::Row(f1), LogicalType::Row(f2)) => {
            f1.len() == f2.len() && f1.iter().zip(f2).all(|(x, y)| same_shape(&x.data_type, &y.data_type, castable))
        }
        _ if is_nested(a) || is_nested(b) => false,
        (x, y) => x == y || is_string(a) && is_string(b) || castable && assignable(a, b, false),
    }
}

fn is_nested(ty: &DataType) -> bool {
    matches!(ty.logical, LogicalType::Array(_) | LogicalType::Map(..) | LogicalType::Multiset(_) | LogicalType::Row(_))
}

fn assignable(from: &DataType, to: &DataType, values: bool) -> bool {
    let temporal = matches!(
        to.logical,
        LogicalType::Date | LogicalType::Time(_) | LogicalType::Timestamp(_) | LogicalType::TimestampLtz(_)
    );
    values && is_string(from) && temporal
        || from.logical == to.logical
        || is_nested(from) && same_shape(from, to, true)
        || is_numeric(from) && is_numeric(to)
        || is_string(from) && is_string(to)
        || matches!(
            (&from.logical, &to.logical),
            (LogicalType::Binary(_) | LogicalType::Varbinary(_), LogicalType::Binary(_) | LogicalType::Varbinary(_))
        )
        || matches!(
            (&from.logical, &to.logical),
            (
                LogicalType::Timestamp(_) | LogicalType::TimestampLtz(_),
                LogicalType::Timestamp(_) | LogicalType::TimestampLtz(_)
            )
        )
}

fn schema_text(fields: &[Field]) -> String {
    let columns: Vec<String> = fields.iter().map(|f| format!("{}: {}", f.name, f.data_type)).collect();
    format!("[{}]", columns.join(", "))
}

/// The query's rows cast to the sink's column types, in the sink's column order.
pub fn conform_to_sink(plan: Plan, sink: &CatalogTable, columns: &[String], at: Position) -> Result<Plan> {
    let sink_fields = &sink.descriptor.schema.fields;
    let targets: Vec<usize> = if columns.is_empty() {
        (0..sink_fields.len()).collect()
    } else {
        columns
            .iter()
            .map(|c| {
                sink_fields
                    .iter()
                    .position(|f| &f.name == c)
                    .ok_or_else(|| Error::validation(at, format!("Unknown target column '{c}'")))
            })
            .collect::<Result<_>>()?
    };
    let mismatch = |cause: String| {
        Error::validation(
            at,
            format!(
                "Column types of query result and sink for '{}' do not match.\nCause: {cause}\n\nQuery schema: {}\nSink schema:  {}",
                Catalog::qualified(&sink.descriptor.name),
                schema_text(&plan.fields),
                schema_text(sink_fields)
            ),
        )
    };
    if targets.len() != plan.fields.len() {
        return Err(mismatch("Different number of columns.".into()));
    }
    let values = from_values(&plan);
    let mut projections = Vec::with_capacity(sink_fields.len());
    for (position, field) in sink_fields.iter().enumerate() {
        match targets.iter().position(|t| *t == position) {
            Some(q) => {
                let source = &plan.fields[q].data_type;
                if !assignable(source, &field.data_type, values) {
                    return Err(mismatch(format!(
                        "Incompatible types for sink column '{}' at position {position}.",
                        field.name
                    )));
                }
                if is_nested(source) && same_shape(source, &field.data_type, false) {
                    // The same values under the sink's field names and nullability.
                    projections.push(Expr::column(q, field.data_type.clone()));
                    continue;
                }
                // Flink casts into the sink's types: a longer string is cut to a VARCHAR(n) column.
                projections.push(Expr::column(q, source.clone()).cast_exactly_to(&field.data_type));
            }
            None => projections.push(Expr::literal(weir_runtime::Value::Null, field.data_type.clone())),
        }
    }
    let unchanged = projections.iter().enumerate().all(|(i, p)| matches!(p, Expr::Column { index, .. } if *index == i));
    if unchanged && projections.len() == plan.fields.len() {
        return Ok(plan);
    }
    Ok(Plan { fields: sink_fields.clone(), node: Node::Calc { input: Box::new(plan), projections, condition: None } })
}
