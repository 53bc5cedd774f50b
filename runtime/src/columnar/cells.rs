//! One cell of a column at a time, without building a [`Value`]: what the formats read from
//! arrays (print, CSV, JSON encoders) and write into builders (CSV, JSON decoders).
//!
//! A [`Cell`] borrows text from the array or record it comes from; [`CellReader`] reads the cells
//! of one array with one type test per column instead of one per cell. Types without a borrowed
//! form here arrive as [`Cell::Other`], a value built by [`value_at`].

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, TimestampMicrosecondType,
};
use arrow_array::{Array, BooleanArray, Date32Array, Decimal128Array, Float64Array, StringArray};
use arrow_array::{Int16Array, Int32Array, Int64Array, Int8Array, TimestampMicrosecondArray};
use arrow_schema::{DataType as ArrowType, TimeUnit};

use super::{timestamp_of_micros, value_at};
use crate::value::{Decimal, Timestamp, Value};

/// One cell: NULL, a borrowed scalar, or a value of a type without a borrowed form.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    /// NULL.
    Null,
    /// A BOOLEAN.
    Boolean(bool),
    /// A TINYINT, SMALLINT, INT or BIGINT, widened.
    Int(i64),
    /// A DOUBLE.
    Double(f64),
    /// A CHAR / VARCHAR / STRING.
    Str(&'a str),
    /// A DECIMAL.
    Decimal(Decimal),
    /// A DATE, days since 1970-01-01.
    Date(i32),
    /// A TIMESTAMP.
    Timestamp(Timestamp),
    /// A TIMESTAMP_LTZ.
    TimestampLtz(Timestamp),
    /// Any other value (FLOAT, TIME, BYTES, intervals, nested types, nanosecond timestamps).
    Other(Value),
}

impl<'a> Cell<'a> {
    /// The cell of `value`: text borrowed, other values as they are.
    pub fn of(value: &'a Value) -> Cell<'a> {
        match value {
            Value::String(s) => Cell::Str(s),
            other => Cell::from_value(other.clone()),
        }
    }

    /// The cell of an owned `value`: scalars in their borrowed-free forms, the rest as they are.
    #[inline]
    pub fn from_value(value: Value) -> Cell<'static> {
        match value {
            Value::Null => Cell::Null,
            Value::Boolean(b) => Cell::Boolean(b),
            Value::TinyInt(_) | Value::SmallInt(_) | Value::Int(_) | Value::BigInt(_) => {
                Cell::Int(value.as_i64().unwrap_or_default())
            }
            Value::Double(d) => Cell::Double(d),
            Value::Decimal { .. } => value.as_decimal().map_or(Cell::Other(value), Cell::Decimal),
            Value::Date(d) => Cell::Date(d),
            Value::Timestamp(t) => Cell::Timestamp(t),
            Value::TimestampLtz(t) => Cell::TimestampLtz(t),
            other => Cell::Other(other),
        }
    }

    /// The cell as a value; `Cell::Int` becomes a BIGINT (a column's builder narrows it).
    #[inline]
    pub fn into_value(self) -> Value {
        match self {
            Cell::Null => Value::Null,
            Cell::Boolean(b) => Value::Boolean(b),
            Cell::Int(i) => Value::BigInt(i),
            Cell::Double(d) => Value::Double(d),
            Cell::Str(s) => Value::string(s),
            Cell::Decimal(d) => Value::decimal(d.unscaled, d.scale),
            Cell::Date(d) => Value::Date(d),
            Cell::Timestamp(t) => Value::Timestamp(t),
            Cell::TimestampLtz(t) => Value::TimestampLtz(t),
            Cell::Other(v) => v,
        }
    }
}

/// How one array's cells are read.
enum Kind<'a> {
    Int8(&'a Int8Array),
    Int16(&'a Int16Array),
    Int32(&'a Int32Array),
    Int64(&'a Int64Array),
    Boolean(&'a BooleanArray),
    Utf8(&'a StringArray),
    Float64(&'a Float64Array),
    Decimal(&'a Decimal128Array, u8),
    Date(&'a Date32Array),
    /// TIMESTAMP (`false`) or TIMESTAMP_LTZ (`true`) in microseconds.
    Timestamp(&'a TimestampMicrosecondArray, bool),
    Values,
}

/// Calls `record` with the cells of each row of `chunk`, in order, and its row kind: the
/// selection applied, one reader per column.
pub fn for_each_record<'c>(chunk: &'c crate::chunk::Chunk, mut record: impl FnMut(crate::RowKind, &[Cell<'c>])) {
    let columns = chunk.columns();
    let readers: Vec<CellReader<'c>> = columns.arrays().iter().map(|a| CellReader::new(a.as_ref())).collect();
    let mut cells = Vec::with_capacity(readers.len());
    for (k, kind) in chunk.kinds().iter().enumerate() {
        let row = columns.selection().map_or(k, |s| s[k] as usize);
        cells.clear();
        cells.extend(readers.iter().map(|r| r.get(row)));
        record(*kind, &cells);
    }
}

/// Reads the cells of one array.
pub struct CellReader<'a> {
    array: &'a dyn Array,
    kind: Kind<'a>,
}

impl<'a> CellReader<'a> {
    /// A reader of `array`'s cells.
    pub fn new(array: &'a dyn Array) -> Self {
        let kind = match array.data_type() {
            ArrowType::Int8 => Kind::Int8(array.as_primitive::<Int8Type>()),
            ArrowType::Int16 => Kind::Int16(array.as_primitive::<Int16Type>()),
            ArrowType::Int32 => Kind::Int32(array.as_primitive::<Int32Type>()),
            ArrowType::Int64 => Kind::Int64(array.as_primitive::<Int64Type>()),
            ArrowType::Boolean => Kind::Boolean(array.as_boolean()),
            ArrowType::Utf8 => Kind::Utf8(array.as_string::<i32>()),
            ArrowType::Float64 => Kind::Float64(array.as_primitive::<Float64Type>()),
            ArrowType::Decimal128(_, scale) => {
                Kind::Decimal(array.as_primitive::<Decimal128Type>(), (*scale).max(0) as u8)
            }
            ArrowType::Date32 => Kind::Date(array.as_primitive::<Date32Type>()),
            ArrowType::Timestamp(TimeUnit::Microsecond, zone) => {
                Kind::Timestamp(array.as_primitive::<TimestampMicrosecondType>(), zone.is_some())
            }
            _ => Kind::Values,
        };
        CellReader { array, kind }
    }

    /// The cell of row `i` (a physical row of the array, not of a selection).
    pub fn get(&self, i: usize) -> Cell<'a> {
        if self.array.is_null(i) {
            return Cell::Null;
        }
        match &self.kind {
            Kind::Int8(a) => Cell::Int(i64::from(a.value(i))),
            Kind::Int16(a) => Cell::Int(i64::from(a.value(i))),
            Kind::Int32(a) => Cell::Int(i64::from(a.value(i))),
            Kind::Int64(a) => Cell::Int(a.value(i)),
            Kind::Boolean(a) => Cell::Boolean(a.value(i)),
            Kind::Utf8(a) => Cell::Str(a.value(i)),
            Kind::Float64(a) => Cell::Double(a.value(i)),
            Kind::Decimal(a, scale) => Cell::Decimal(Decimal { unscaled: a.value(i), scale: *scale }),
            Kind::Date(a) => Cell::Date(a.value(i)),
            Kind::Timestamp(a, false) => Cell::Timestamp(timestamp_of_micros(a.value(i))),
            Kind::Timestamp(a, true) => Cell::TimestampLtz(timestamp_of_micros(a.value(i))),
            Kind::Values => match value_at(self.array, i) {
                Value::Null => Cell::Null,
                v => Cell::Other(v),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::columnar::{array_from_values, arrow_type};
    use crate::types::{DataType, LogicalType};

    #[test]
    fn cells_are_the_values_of_their_rows() {
        let columns: Vec<(DataType, Vec<Value>)> = vec![
            (DataType::new(LogicalType::TinyInt), vec![Value::TinyInt(-3), Value::Null]),
            (DataType::int(), vec![Value::Int(7), Value::Int(i32::MIN)]),
            (DataType::string(), vec![Value::string("é"), Value::Null]),
            (DataType::decimal(5, 2), vec![Value::decimal(-105, 2), Value::Null]),
            (DataType::timestamp(3), vec![Value::Timestamp(Timestamp::from_millis(-1)), Value::Null]),
            (DataType::new(LogicalType::TimestampLtz(6)), vec![Value::TimestampLtz(Timestamp::from_millis(5))]),
            (DataType::new(LogicalType::Date), vec![Value::Date(-719_528)]),
            (DataType::new(LogicalType::Float), vec![Value::Float(0.5), Value::Null]),
            (DataType::timestamp(9), vec![Value::Timestamp(Timestamp { millis: 1, nanos_of_milli: 7 })]),
        ];
        for (ty, values) in columns {
            let refs: Vec<&Value> = values.iter().collect();
            let array = array_from_values(&arrow_type(&ty), &refs).unwrap();
            let reader = CellReader::new(array.as_ref());
            for (i, v) in values.iter().enumerate() {
                let cell = reader.get(i).into_value();
                // Integers widen to BIGINT; everything else is the value itself.
                let expected =
                    v.as_i64().filter(|_| matches!(reader.get(i), Cell::Int(_))).map_or(v.clone(), Value::BigInt);
                assert_eq!(cell, expected, "{ty} row {i}");
            }
        }
    }
}
