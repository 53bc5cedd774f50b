//! Rows printed as Flink prints them, read straight from a chunk's arrays: integers, booleans,
//! strings, DOUBLE, DECIMAL, DATE and microsecond timestamps from their columns with the row
//! printer's own formatting, every other type through its value (`print::write_value`), so the
//! text is the row view's to the byte.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, TimestampMicrosecondType,
};
use arrow_array::Array;
use arrow_schema::{DataType as ArrowType, TimeUnit};

use super::{timestamp_of_micros, value_at};
use crate::chunk::Chunk;
use crate::print::{write_date, write_decimal, write_java_float, write_timestamp, write_value};
use crate::value::Decimal;

/// How one column's cells are written.
enum Cells<'a> {
    Int8(&'a arrow_array::Int8Array),
    Int16(&'a arrow_array::Int16Array),
    Int32(&'a arrow_array::Int32Array),
    Int64(&'a arrow_array::Int64Array),
    Boolean(&'a arrow_array::BooleanArray),
    Utf8(&'a arrow_array::StringArray),
    Float64(&'a arrow_array::Float64Array),
    Decimal(&'a arrow_array::Decimal128Array, u8),
    Date(&'a arrow_array::Date32Array),
    /// TIMESTAMP (`false`) or TIMESTAMP_LTZ (`true`) in microseconds.
    Timestamp(&'a arrow_array::TimestampMicrosecondArray, bool),
    Values(&'a dyn Array),
}

impl Cells<'_> {
    fn write(&self, out: &mut String, i: usize) {
        let array: &dyn Array = match self {
            Cells::Int8(a) => *a,
            Cells::Int16(a) => *a,
            Cells::Int32(a) => *a,
            Cells::Int64(a) => *a,
            Cells::Boolean(a) => *a,
            Cells::Utf8(a) => *a,
            Cells::Float64(a) => *a,
            Cells::Decimal(a, _) => *a,
            Cells::Date(a) => *a,
            Cells::Timestamp(a, _) => *a,
            Cells::Values(a) => *a,
        };
        if array.is_null(i) {
            out.push_str("null");
            return;
        }
        let mut digits = itoa_buffer();
        match self {
            Cells::Int8(a) => out.push_str(digits.format(a.value(i))),
            Cells::Int16(a) => out.push_str(digits.format(a.value(i))),
            Cells::Int32(a) => out.push_str(digits.format(a.value(i))),
            Cells::Int64(a) => out.push_str(digits.format(a.value(i))),
            Cells::Boolean(a) => out.push_str(if a.value(i) { "true" } else { "false" }),
            Cells::Utf8(a) => out.push_str(a.value(i)),
            Cells::Float64(a) => {
                let v = a.value(i);
                write_java_float(out, v, format!("{v:e}"));
            }
            Cells::Decimal(a, scale) => write_decimal(out, Decimal { unscaled: a.value(i), scale: *scale }),
            Cells::Date(a) => write_date(out, a.value(i)),
            Cells::Timestamp(a, ltz) => {
                write_timestamp(out, timestamp_of_micros(a.value(i)), *ltz);
                if *ltz {
                    out.push('Z');
                }
            }
            Cells::Values(a) => write_value(out, &value_at(*a, i)),
        }
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
    let columns = chunk.columns();
    let cells: Vec<Cells<'_>> = columns
        .arrays()
        .iter()
        .map(|a| match a.data_type() {
            ArrowType::Int8 => Cells::Int8(a.as_primitive::<Int8Type>()),
            ArrowType::Int16 => Cells::Int16(a.as_primitive::<Int16Type>()),
            ArrowType::Int32 => Cells::Int32(a.as_primitive::<Int32Type>()),
            ArrowType::Int64 => Cells::Int64(a.as_primitive::<Int64Type>()),
            ArrowType::Boolean => Cells::Boolean(a.as_boolean()),
            ArrowType::Utf8 => Cells::Utf8(a.as_string::<i32>()),
            ArrowType::Float64 => Cells::Float64(a.as_primitive::<Float64Type>()),
            ArrowType::Decimal128(_, scale) => {
                Cells::Decimal(a.as_primitive::<Decimal128Type>(), (*scale).max(0) as u8)
            }
            ArrowType::Date32 => Cells::Date(a.as_primitive::<Date32Type>()),
            ArrowType::Timestamp(TimeUnit::Microsecond, zone) => {
                Cells::Timestamp(a.as_primitive::<TimestampMicrosecondType>(), zone.is_some())
            }
            _ => Cells::Values(a.as_ref()),
        })
        .collect();
    for (k, kind) in chunk.kinds().iter().enumerate() {
        let row = columns.selection().map_or(k, |s| s[k] as usize);
        out.push_str(prefix);
        out.push_str(kind.short_string());
        out.push('[');
        for (c, column) in cells.iter().enumerate() {
            if c > 0 {
                out.push_str(", ");
            }
            column.write(out, row);
        }
        out.push_str("]\n");
    }
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
