//! Rows printed as Flink prints them, read straight from a chunk's arrays: the cells that have a
//! borrowed form ([`Cell`]) with the row printer's own formatting, every other type through its
//! value (`print::write_value`), so the text is the row view's to the byte.

use super::cells::{for_each_record, Cell};
use crate::chunk::Chunk;
use crate::print::{write_date, write_decimal, write_java_float, write_timestamp, write_value};
use crate::row::write_fields;

/// Appends `cell` as the row printer writes its value.
fn write_cell(out: &mut String, cell: &Cell<'_>) {
    match cell {
        Cell::Null => out.push_str("null"),
        Cell::Int(v) => out.push_str(itoa_buffer().format(*v)),
        Cell::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        Cell::Str(s) => out.push_str(s),
        Cell::Double(v) => write_java_float(out, *v, format!("{v:e}")),
        Cell::Decimal(d) => write_decimal(out, *d),
        Cell::Date(d) => write_date(out, *d),
        Cell::Timestamp(t) => write_timestamp(out, *t, false),
        Cell::TimestampLtz(t) => {
            write_timestamp(out, *t, true);
            out.push('Z');
        }
        Cell::Other(v) => write_value(out, v),
    }
}

/// A small decimal formatter for integers (no allocation per cell).
struct Digits {
    buffer: [u8; 20],
}

fn itoa_buffer() -> Digits {
    Digits { buffer: [0; 20] }
}

impl Digits {
    fn format(&mut self, v: impl Into<i64>) -> &str {
        let v: i64 = v.into();
        let mut n = v.unsigned_abs();
        let mut at = self.buffer.len();
        loop {
            at -= 1;
            self.buffer[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        if v < 0 {
            // `i64::MIN` has 19 digits: with its sign it still fits the 20 bytes.
            at -= 1;
            self.buffer[at] = b'-';
        }
        // ASCII digits and a sign.
        std::str::from_utf8(&self.buffer[at..]).unwrap_or_default()
    }
}

/// Appends each row of `chunk` as `prefix`, then the row as Flink prints it (`+I[1, apple]`),
/// then a line break: the same text as printing the row view.
pub fn write_lines(out: &mut String, prefix: &str, chunk: &Chunk) {
    for_each_record(chunk, |kind, cells| {
        out.push_str(prefix);
        write_fields(out, kind, cells, write_cell);
        out.push('\n');
    });
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::types::{DataType, LogicalType};
    use crate::value::{Timestamp, Value};
    use crate::RowKind;

    #[test]
    fn columns_print_as_their_rows() {
        let types = [
            DataType::new(LogicalType::TinyInt),
            DataType::new(LogicalType::SmallInt),
            DataType::int(),
            DataType::bigint(),
            DataType::boolean(),
            DataType::string(),
            DataType::double(),
            DataType::decimal(10, 2),
            DataType::timestamp(3),
            DataType::new(LogicalType::Array(Box::new(DataType::int()))),
            DataType::new(LogicalType::Date),
            DataType::new(LogicalType::TimestampLtz(6)),
        ];
        let mut chunk = Chunk::with_types(&types);
        let rows = [
            [
                Value::TinyInt(i8::MIN),
                Value::SmallInt(-1),
                Value::Int(i32::MIN),
                Value::BigInt(i64::MIN),
                Value::Boolean(true),
                Value::string("héllo, [x]"),
                Value::Double(1e7),
                Value::decimal(1050, 2),
                Value::Timestamp(Timestamp { millis: 1_704_103_202_500, nanos_of_milli: 0 }),
                Value::Array(Arc::from([Value::Int(1), Value::Null])),
                Value::Date(-719_528),
                Value::TimestampLtz(Timestamp { millis: -1, nanos_of_milli: 123_000 }),
            ],
            [
                Value::Null,
                Value::SmallInt(i16::MAX),
                Value::Int(0),
                Value::BigInt(i64::MAX),
                Value::Null,
                Value::string(""),
                Value::Double(-0.0),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Date(2_932_896),
                Value::Null,
            ],
        ];
        for (i, row) in rows.iter().enumerate() {
            let kind = [RowKind::Insert, RowKind::UpdateBefore][i];
            chunk.push(kind, row);
            chunk.push(RowKind::Delete, row);
        }
        let expected: String = chunk.to_lines().iter().map(|l| format!("p> {l}\n")).collect();
        let mut columnar = Chunk::from_arrays(chunk.kinds().to_vec(), chunk.columns().arrays().to_vec());
        let mut text = String::new();
        write_lines(&mut text, "p> ", &columnar);
        assert_eq!(text, expected);
        // Under a selection only the selected rows print.
        columnar.select(&[1, 2]);
        let expected: String = columnar.to_lines().iter().map(|l| format!("{l}\n")).collect();
        let mut text = String::new();
        write_lines(&mut text, "", &columnar);
        assert_eq!(text, expected);
    }
}
