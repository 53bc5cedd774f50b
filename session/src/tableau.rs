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
//! A streaming query's columns are as wide as their types need (Flink's widths: 11 for INT, the
//! precision and 2 for DECIMAL, 30 for strings and nested types, at least `<NULL>` and the
//! column's name), since its rows are printed as they come; a batch query's rows are printed at
//! the end, each column as wide as its widest text, at most 30. Longer values are cut with
//! `...`; NULL prints as `<NULL>`; values are right-aligned and written as Flink's SQL client
//! writes them ([`TextStyle::Printing`]).

use std::fmt::Write;

use weir_operators::expr::text::{sql_text, TextStyle};
use weir_runtime::{DataType, Field, LogicalType, Row, Value};

/// The widest a column gets (`sql-client.display.max-column-width`).
const MAX_COLUMN_WIDTH: usize = 30;
/// How NULL prints.
const NULL: &str = "<NULL>";

/// A streaming column's width, as Flink's `columnWidthsByType` gives it.
fn type_width(field: &Field) -> usize {
    let by_type = match &field.data_type.logical {
        LogicalType::TinyInt => 4,
        LogicalType::SmallInt => 6,
        LogicalType::Int => 11,
        LogicalType::BigInt => 20,
        LogicalType::Decimal { precision, .. } => usize::from(*precision) + 2,
        LogicalType::Boolean => 5,
        LogicalType::Date => 10,
        LogicalType::Time(p) => {
            if *p == 0 {
                8
            } else {
                usize::from(*p) + 9
            }
        }
        LogicalType::Timestamp(p) | LogicalType::TimestampLtz(p) => match p {
            0 => 19,
            1..=3 => 23,
            4..=6 => 26,
            _ => 29,
        },
        _ => MAX_COLUMN_WIDTH,
    };
    by_type.max(NULL.len()).max(field.name.chars().count())
}

/// A value as Flink's SQL client prints it in a table: `<NULL>`, then the value as its cast
/// to a string writes it, bytes in hexadecimal (`x'0a1b'`).
fn cell(value: &Value, ty: &DataType) -> String {
    match value {
        Value::Null => NULL.to_string(),
        other => sql_text(other, ty, TextStyle::Printing),
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
    print_all(fields, rows, false)
}

/// The table of a batch query's `rows`, without an `op` column, as Flink's SQL client prints
/// it in batch mode (`1 row in set`, `Empty set`).
pub fn batch_tableau(fields: &[Field], rows: &[Row]) -> String {
    print_all(fields, rows, true)
}

fn print_all(fields: &[Field], rows: &[Row], batch: bool) -> String {
    let mut printer = TableauPrinter::new(fields, batch);
    let mut text: String = rows.iter().map(|r| printer.row(r)).collect();
    text.push_str(&printer.finish());
    text
}

/// Key and value pairs as a two-column table as wide as its longest texts, as Flink's SQL
/// client prints the result of `SET;`.
pub fn key_value_table(pairs: &[(String, String)]) -> String {
    let rows: Vec<Vec<String>> = pairs.iter().map(|(k, v)| vec![k.clone(), v.clone()]).collect();
    text_table(&["key", "value"], &rows)
}

/// Rows of text under `header`, each column as wide as its longest text and every cell
/// right-aligned, then `N rows in set` (`Empty set` without rows): how Flink's SQL client prints `SET;`, `SHOW TABLES`
/// and `DESCRIBE`.
pub fn text_table(header: &[&str], rows: &[Vec<String>]) -> String {
    if rows.is_empty() {
        // As Flink's SQL client prints a listing without rows.
        return "Empty set\n".to_string();
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).chain([header[c].len()]).max().unwrap_or(0))
        .collect();
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    let mut out = draw(&header, &widths, false, rows.iter().map(|r| ("", r.clone())));
    let plural = if rows.len() == 1 { "" } else { "s" };
    let _ = writeln!(out, "{} row{plural} in set", rows.len());
    out
}

/// The bordered table of `header` and `lines` (each with its kind when `with_op`), every cell
/// right-aligned in its column's width.
fn draw<'a>(
    header: &[String],
    widths: &[usize],
    with_op: bool,
    lines: impl Iterator<Item = (&'a str, Vec<String>)>,
) -> String {
    let border = border(widths, with_op);
    let mut out = format!("{border}\n{}\n{border}\n", line(widths, with_op, "op", header));
    for (op, cells) in lines {
        let _ = writeln!(out, "{}", line(widths, with_op, op, &cells));
    }
    let _ = writeln!(out, "{border}");
    out
}

/// `+----+----…+`: the border of columns `widths` (and the `op` column when `with_op`).
fn border(widths: &[usize], with_op: bool) -> String {
    let mut border = String::from(if with_op { "+----+" } else { "+" });
    for w in widths {
        border.push_str(&"-".repeat(w + 2));
        border.push('+');
    }
    border
}

/// One line of a table: `op` (when `with_op`) and `cells`, each right-aligned in its width.
fn line(widths: &[usize], with_op: bool, op: &str, cells: &[String]) -> String {
    let mut out = String::new();
    if with_op {
        let _ = write!(out, "| {op} |");
    } else {
        out.push('|');
    }
    for (c, w) in cells.iter().zip(widths) {
        let _ = write!(out, " {c:>w$} |", w = *w);
    }
    out
}

/// Prints a query's result as it arrives, line by line ([`tableau`] and [`batch_tableau`] print
/// it whole with it): the header before the first row, each row as it comes, the border and the
/// count at the end (a streaming table without rows still prints its header). A batch query's
/// rows are kept and printed by [`TableauPrinter::finish`], as wide as their texts, or
/// `Empty set`.
pub struct TableauPrinter {
    fields: Vec<Field>,
    widths: Vec<usize>,
    with_op: bool,
    rows: usize,
    /// A batch query's cells, printed at the end.
    kept: Vec<Vec<String>>,
}

impl TableauPrinter {
    /// A printer of rows of `fields`; `batch` for a batch query's final rows (no `op` column).
    pub fn new(fields: &[Field], batch: bool) -> Self {
        TableauPrinter {
            fields: fields.to_vec(),
            widths: fields.iter().map(type_width).collect(),
            with_op: !batch,
            rows: 0,
            kept: Vec::new(),
        }
    }

    fn border(&self) -> String {
        border(&self.widths, self.with_op)
    }

    fn line(&self, op: &str, cells: &[String]) -> String {
        line(&self.widths, self.with_op, op, cells)
    }

    fn header(&self) -> String {
        let names: Vec<String> = self.fields.iter().map(|f| f.name.clone()).collect();
        let border = self.border();
        format!("{border}\n{}\n{border}\n", self.line("op", &names))
    }

    /// The text for `row`: the header first when it is the first row. A batch query's row is
    /// kept for [`TableauPrinter::finish`], and nothing is printed yet.
    pub fn row(&mut self, row: &Row) -> String {
        let cells = row.values.iter().zip(&self.fields).map(|(v, f)| cell(v, &f.data_type));
        self.rows += 1;
        if !self.with_op {
            self.kept.push(cells.collect());
            return String::new();
        }
        let cells: Vec<String> = cells.zip(&self.widths).map(|(c, w)| fit(&c, *w)).collect();
        let mut text = if self.rows == 1 { self.header() } else { String::new() };
        text.push_str(&self.line(row.kind.short_string(), &cells));
        text.push('\n');
        text
    }

    /// The text that ends a query cancelled while it ran (Ctrl-C), as Flink's client prints it.
    pub fn terminated(&self) -> String {
        let plural = if self.rows == 1 { "" } else { "s" };
        format!("Query terminated, received a total of {} row{plural}\n", self.rows)
    }

    /// The text that ends the table: for a batch query, the whole table.
    pub fn finish(&mut self) -> String {
        let plural = if self.rows == 1 { "" } else { "s" };
        match (self.with_op, self.rows) {
            (false, 0) => "Empty set\n".to_string(),
            (false, n) => {
                self.widths = self
                    .fields
                    .iter()
                    .enumerate()
                    .map(|(c, f)| {
                        let widest = self.kept.iter().map(|r| r[c].chars().count()).max().unwrap_or(0);
                        widest.max(f.name.chars().count()).min(MAX_COLUMN_WIDTH)
                    })
                    .collect();
                let mut text = self.header();
                for cells in std::mem::take(&mut self.kept) {
                    let cells: Vec<String> = cells.iter().zip(&self.widths).map(|(c, w)| fit(c, *w)).collect();
                    text.push_str(&self.line("", &cells));
                    text.push('\n');
                }
                let _ = write!(text, "{}\n{n} row{plural} in set\n", self.border());
                text
            }
            (true, 0) => format!("{}{}\nReceived a total of 0 rows\n", self.header(), self.border()),
            (true, n) => format!("{}\nReceived a total of {n} row{plural}\n", self.border()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::RowKind;

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

    #[test]
    fn batch_results_have_no_op_column() {
        let fields = vec![Field::new("id", DataType::bigint())];
        let rows = vec![Row::new(RowKind::Insert, vec![Value::BigInt(1)])];
        // As wide as the widest text, at most 30: Flink's client infers a batch table's widths
        // from its rows.
        let expected = "\
+----+
| id |
+----+
|  1 |
+----+
1 row in set
";
        assert_eq!(batch_tableau(&fields, &rows), expected);
        let long = vec![Field::new("s", DataType::string()), Field::new("n", DataType::int())];
        let text = "this string is longer than thirty characters";
        let rows = vec![Row::new(RowKind::Insert, vec![Value::string(text), Value::Null])];
        let expected = "\
+--------------------------------+--------+
|                              s |      n |
+--------------------------------+--------+
| this string is longer than ... | <NULL> |
+--------------------------------+--------+
1 row in set
";
        assert_eq!(batch_tableau(&long, &rows), expected);
        assert_eq!(batch_tableau(&fields, &[]), "Empty set\n");
    }

    #[test]
    fn the_printer_prints_the_header_with_the_first_row_and_the_count_at_the_end() {
        let fields = vec![Field::new("id", DataType::bigint())];
        let one = Row::new(RowKind::Insert, vec![Value::BigInt(1)]);
        let mut printer = TableauPrinter::new(&fields, false);
        let first = printer.row(&one);
        assert_eq!(
            first,
            "+----+----------------------+\n| op |                   id |\n+----+----------------------+\n\
             | +I |                    1 |\n"
        );
        assert_eq!(printer.row(&one), "| +I |                    1 |\n", "the header comes once");
        assert_eq!(printer.finish(), "+----+----------------------+\nReceived a total of 2 rows\n");
        let empty = TableauPrinter::new(&fields, false).finish();
        assert_eq!(
            empty,
            "+----+----------------------+\n| op |                   id |\n+----+----------------------+\n\
             +----+----------------------+\nReceived a total of 0 rows\n"
        );
        assert_eq!(TableauPrinter::new(&fields, true).finish(), "Empty set\n");
    }

    /// The widths and texts Flink 2.3's client printed for `SELECT TRUE AS b, 1E10 AS d,
    /// CAST(1.5 AS DECIMAL(5,2)) AS de, TIME '10:00:01' AS ti, CAST('ab' AS CHAR(4)) AS c, …`.
    #[test]
    fn streaming_columns_are_as_wide_as_flink_makes_their_types() {
        let field = |name: &str, ty: LogicalType| Field::new(name, DataType::new(ty));
        let fields = [
            field("b", LogicalType::Boolean),
            field("d", LogicalType::Double),
            field("de", LogicalType::Decimal { precision: 5, scale: 2 }),
            field("ti", LogicalType::Time(0)),
            field("c", LogicalType::Char(4)),
            field("ts0", LogicalType::Timestamp(0)),
            field("a_column_name_that_is_longer_than_thirty", LogicalType::Int),
        ];
        let widths: Vec<usize> = fields.iter().map(type_width).collect();
        assert_eq!(widths, vec![6, 30, 7, 8, 30, 19, 40]);
        let row = Value::Row(vec![Value::Int(1), Value::Null, Value::Boolean(true)].into());
        let row_type = DataType::new(LogicalType::Row(vec![
            Field::new("x", DataType::int()),
            Field::new("y", DataType::string()),
            Field::new("z", DataType::boolean()),
        ]));
        assert_eq!(cell(&row, &row_type), "(1, NULL, TRUE)");
        assert_eq!(cell(&Value::Boolean(true), &DataType::boolean()), "TRUE");
        assert_eq!(
            cell(&Value::IntervalDayTime(172_800_000), &DataType::new(LogicalType::IntervalDayTime)),
            "+2 00:00:00.000"
        );
    }

    #[test]
    fn key_value_tables_are_as_wide_as_their_texts() {
        let pairs = vec![("parallelism.default".to_string(), "2".to_string())];
        let expected = "\
+---------------------+-------+
|                 key | value |
+---------------------+-------+
| parallelism.default |     2 |
+---------------------+-------+
1 row in set
";
        assert_eq!(key_value_table(&pairs), expected);
    }

    #[test]
    fn timestamps_and_bytes_print_as_the_sql_client_prints_them() {
        let at = |millis: i64, nanos_of_milli: u32| weir_runtime::Timestamp { millis, nanos_of_milli };
        // 2024-01-01T11:00 is 1 704 106 800 000 ms after the epoch.
        let eleven = 1_704_106_800_000;
        let ts = |ty: LogicalType, v: Value| cell(&v, &DataType::new(ty));
        assert_eq!(ts(LogicalType::Timestamp(3), Value::Timestamp(at(eleven, 0))), "2024-01-01 11:00:00.000");
        assert_eq!(ts(LogicalType::Timestamp(3), Value::Timestamp(at(eleven + 2_500, 0))), "2024-01-01 11:00:02.500");
        assert_eq!(ts(LogicalType::Timestamp(0), Value::Timestamp(at(eleven + 2_123, 456_000))), "2024-01-01 11:00:02");
        let ten = eleven - 3_600_000;
        assert_eq!(ts(LogicalType::TimestampLtz(3), Value::TimestampLtz(at(ten, 0))), "2024-01-01 10:00:00.000");
        assert_eq!(ts(LogicalType::Timestamp(9), Value::Timestamp(at(ten, 1))), "2024-01-01 10:00:00.000000001");
        let bytes = Value::Binary(vec![0x3a, 0x30].into());
        assert_eq!(cell(&bytes, &DataType::new(LogicalType::Varbinary(10))), "x'3a30'");
    }
}
