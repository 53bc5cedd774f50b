//! Query results as a table with an `op` column, like Flink's SQL client in tableau mode.
//!
//! ```text
//! +----+-------------+
//! | op |           n |
//! +----+-------------+
//! | +I |           1 |
//! +----+-------------+
//! Received a total of 1 row
//! ```
//!
//! Column widths follow the column types (wide enough for the type's values, at least the
//! header); longer values are cut with `...`; NULL prints as `<NULL>`; values are right-aligned.

use std::fmt::Write;

use weir_runtime::print::value_to_string;
use weir_runtime::{Field, LogicalType, Row, Value};

/// The widest a column gets.
const MAX_COLUMN_WIDTH: usize = 30;

fn type_width(field: &Field) -> usize {
    let by_type = match &field.data_type.logical {
        LogicalType::Boolean => 7,
        LogicalType::TinyInt => 4,
        LogicalType::SmallInt => 6,
        LogicalType::Int => 11,
        LogicalType::BigInt => 20,
        LogicalType::Float | LogicalType::Double => 20,
        LogicalType::Decimal { precision, scale } => usize::from(*precision) + 2 + usize::from(*scale > 0),
        LogicalType::Date => 10,
        LogicalType::Time(_) => 12,
        LogicalType::Timestamp(p) | LogicalType::TimestampLtz(p) => 20 + usize::from(*p),
        LogicalType::Char(n) | LogicalType::Varchar(n) => (*n as usize).min(MAX_COLUMN_WIDTH),
        _ => MAX_COLUMN_WIDTH,
    };
    by_type.max(field.name.chars().count()).clamp(6, MAX_COLUMN_WIDTH)
}

fn cell(value: &Value) -> String {
    match value {
        Value::Null => "<NULL>".to_string(),
        other => value_to_string(other),
    }
}

fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let kept: String = text.chars().take(width.saturating_sub(3)).collect();
    format!("{kept}...")
}

/// The table of `rows` (with their kinds) under a header of `fields`.
pub fn tableau(fields: &[Field], rows: &[Row]) -> String {
    let widths: Vec<usize> = fields.iter().map(type_width).collect();
    let mut border = String::from("+----+");
    for w in &widths {
        border.push_str(&"-".repeat(w + 2));
        border.push('+');
    }
    let mut out = String::new();
    let line = |out: &mut String, op: &str, cells: Vec<String>| {
        let _ = write!(out, "| {op} |");
        for (c, w) in cells.iter().zip(&widths) {
            let _ = write!(out, " {:>w$} |", fit(c, *w), w = *w);
        }
        out.push('\n');
    };
    let _ = writeln!(out, "{border}");
    line(&mut out, "op", fields.iter().map(|f| f.name.clone()).collect());
    let _ = writeln!(out, "{border}");
    for row in rows {
        line(&mut out, row.kind.short_string(), row.values.iter().map(cell).collect());
    }
    let _ = writeln!(out, "{border}");
    let plural = if rows.len() == 1 { "" } else { "s" };
    let _ = writeln!(out, "Received a total of {} row{plural}", rows.len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::{DataType, RowKind};

    #[test]
    fn prints_an_op_column_and_aligned_values() {
        let fields = vec![Field::new("product", DataType::string()), Field::new("cnt", DataType::bigint())];
        let rows = vec![
            Row::new(RowKind::Insert, vec![Value::string("apple"), Value::BigInt(1)]),
            Row::new(RowKind::UpdateBefore, vec![Value::Null, Value::BigInt(1)]),
        ];
        let text = tableau(&fields, &rows);
        let expected = "\
+----+--------------------------------+----------------------+
| op |                        product |                  cnt |
+----+--------------------------------+----------------------+
| +I |                          apple |                    1 |
| -U |                         <NULL> |                    1 |
+----+--------------------------------+----------------------+
Received a total of 2 rows
";
        assert_eq!(text, expected);
        assert_eq!(fit("abcdefghij", 6), "abc...");
    }
}
