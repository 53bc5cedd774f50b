//! Arrow arrays back into values: the row view of a columnar chunk.
//!
//! [`value_at`] reads one cell; [`scatter_column`] writes a whole column into a row-major
//! buffer with one typed loop (the type is matched once per column, not once per cell).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, DurationMillisecondType, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, IntervalYearMonthType, Time64NanosecondType, TimestampMicrosecondType,
};
use arrow_array::{Array, ArrowPrimitiveType};
use arrow_schema::{DataType as ArrowType, IntervalUnit, TimeUnit};

use super::types::{is_map_entries, nanos_timestamp_kind};
use crate::value::{Timestamp, Value};

/// The value at row `i` of `array` (`Value::Null` where the row is null). Arrays of types no
/// Flink type maps to read as `Value::Null`.
pub fn value_at(array: &dyn Array, i: usize) -> Value {
    if array.is_null(i) {
        return Value::Null;
    }
    match array.data_type() {
        ArrowType::Boolean => Value::Boolean(array.as_boolean().value(i)),
        ArrowType::Int8 => Value::TinyInt(array.as_primitive::<Int8Type>().value(i)),
        ArrowType::Int16 => Value::SmallInt(array.as_primitive::<Int16Type>().value(i)),
        ArrowType::Int32 => Value::Int(array.as_primitive::<Int32Type>().value(i)),
        ArrowType::Int64 => Value::BigInt(array.as_primitive::<Int64Type>().value(i)),
        ArrowType::Float32 => Value::Float(array.as_primitive::<Float32Type>().value(i)),
        ArrowType::Float64 => Value::Double(array.as_primitive::<Float64Type>().value(i)),
        ArrowType::Decimal128(_, scale) => {
            Value::decimal(array.as_primitive::<Decimal128Type>().value(i), (*scale).max(0) as u8)
        }
        ArrowType::Utf8 => Value::string(array.as_string::<i32>().value(i)),
        ArrowType::Binary => Value::Binary(Arc::from(array.as_binary::<i32>().value(i))),
        ArrowType::Date32 => Value::Date(array.as_primitive::<Date32Type>().value(i)),
        ArrowType::Time64(TimeUnit::Nanosecond) => Value::Time(array.as_primitive::<Time64NanosecondType>().value(i)),
        ArrowType::Timestamp(TimeUnit::Microsecond, zone) => {
            let t = timestamp_of_micros(array.as_primitive::<TimestampMicrosecondType>().value(i));
            if zone.is_some() {
                Value::TimestampLtz(t)
            } else {
                Value::Timestamp(t)
            }
        }
        ArrowType::Interval(IntervalUnit::YearMonth) => {
            Value::IntervalYearMonth(array.as_primitive::<IntervalYearMonthType>().value(i))
        }
        ArrowType::Duration(TimeUnit::Millisecond) => {
            Value::IntervalDayTime(array.as_primitive::<DurationMillisecondType>().value(i))
        }
        ArrowType::Struct(fields) => {
            let s = array.as_struct();
            match nanos_timestamp_kind(fields) {
                Some(ltz) => {
                    let t = Timestamp {
                        millis: s.column(0).as_primitive::<Int64Type>().value(i),
                        nanos_of_milli: s.column(1).as_primitive::<Int32Type>().value(i) as u32,
                    };
                    if ltz {
                        Value::TimestampLtz(t)
                    } else {
                        Value::Timestamp(t)
                    }
                }
                None => Value::Row(s.columns().iter().map(|c| value_at(c.as_ref(), i)).collect()),
            }
        }
        ArrowType::List(item) if is_map_entries(item) => {
            let entries = array.as_list::<i32>().value(i);
            let entries = entries.as_struct();
            let (keys, values) = (entries.column(0), entries.column(1));
            Value::Map((0..entries.len()).map(|j| (value_at(keys.as_ref(), j), value_at(values.as_ref(), j))).collect())
        }
        ArrowType::List(_) => {
            let items = array.as_list::<i32>().value(i);
            Value::Array((0..items.len()).map(|j| value_at(items.as_ref(), j)).collect())
        }
        _ => Value::Null,
    }
}

/// The timestamp `micros` microseconds after the epoch.
pub fn timestamp_of_micros(micros: i64) -> Timestamp {
    Timestamp { millis: micros.div_euclid(1000), nanos_of_milli: (micros.rem_euclid(1000) * 1000) as u32 }
}

/// Writes the cells of `array` at `rows` (all rows when `None`) into `out[k * stride]` for the
/// k-th row written. `out` must hold `(rows - 1) * stride + 1` values at least.
pub fn scatter_column(array: &dyn Array, rows: Option<&[u32]>, out: &mut [Value], stride: usize) {
    macro_rules! typed {
        ($t:ty, $make:expr) => {{
            let a = array.as_primitive::<$t>();
            scatter_primitive(a, rows, out, stride, $make)
        }};
    }
    match array.data_type() {
        ArrowType::Int8 => typed!(Int8Type, Value::TinyInt),
        ArrowType::Int16 => typed!(Int16Type, Value::SmallInt),
        ArrowType::Int32 => typed!(Int32Type, Value::Int),
        ArrowType::Int64 => typed!(Int64Type, Value::BigInt),
        ArrowType::Float32 => typed!(Float32Type, Value::Float),
        ArrowType::Float64 => typed!(Float64Type, Value::Double),
        ArrowType::Date32 => typed!(Date32Type, Value::Date),
        ArrowType::Timestamp(TimeUnit::Microsecond, None) => {
            typed!(TimestampMicrosecondType, |v| Value::Timestamp(timestamp_of_micros(v)))
        }
        ArrowType::Utf8 => {
            let a = array.as_string::<i32>();
            let mut recent = RecentStrings::default();
            for_rows(array.len(), rows, |k, i| {
                out[k * stride] = if a.is_null(i) { Value::Null } else { Value::String(recent.get(a.value(i))) };
            });
        }
        _ => for_rows(array.len(), rows, |k, i| out[k * stride] = value_at(array, i)),
    }
}

/// The last few strings a column's rows turned into values: a string equal to one of them
/// shares its allocation. Grouping keys, dates formatted per row and codes repeat from row to row,
/// and each `Value::String` of its own would be one allocation (and one free) per row.
#[derive(Default)]
struct RecentStrings {
    strings: [Option<Arc<str>>; 4],
    next: usize,
}

impl RecentStrings {
    /// `text` as a shared string: a recent one when equal, else a new one, remembered.
    #[inline]
    fn get(&mut self, text: &str) -> Arc<str> {
        for s in self.strings.iter().flatten() {
            if s.len() == text.len() && s.as_bytes() == text.as_bytes() {
                return Arc::clone(s);
            }
        }
        let s: Arc<str> = Arc::from(text);
        self.strings[self.next] = Some(Arc::clone(&s));
        self.next = (self.next + 1) % self.strings.len();
        s
    }
}

fn scatter_primitive<T: ArrowPrimitiveType>(
    a: &arrow_array::PrimitiveArray<T>,
    rows: Option<&[u32]>,
    out: &mut [Value],
    stride: usize,
    make: impl Fn(T::Native) -> Value,
) {
    let values = a.values();
    match a.nulls() {
        None => for_rows(a.len(), rows, |k, i| out[k * stride] = make(values[i])),
        Some(nulls) => for_rows(a.len(), rows, |k, i| {
            out[k * stride] = if nulls.is_valid(i) { make(values[i]) } else { Value::Null };
        }),
    }
}

/// Calls `f(k, row)` for the k-th of `rows` (or of `0..len`).
#[inline]
fn for_rows(len: usize, rows: Option<&[u32]>, mut f: impl FnMut(usize, usize)) {
    match rows {
        None => (0..len).for_each(|i| f(i, i)),
        Some(rows) => rows.iter().enumerate().for_each(|(k, &i)| f(k, i as usize)),
    }
}
