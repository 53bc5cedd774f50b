//! The columnar layout of weir's data: Flink's types as Apache Arrow arrays.
//!
//! [`types`] maps every Flink type onto an Arrow type; [`array_from_values`] and
//! [`value_at`] / [`scatter_column`] convert between cells ([`Value`](crate::Value)) and
//! columns. Every conversion between the two lives here, so that a Flink value survives the
//! trip the same way wherever it is made.

mod builder;
mod cells;
mod from_arrow;
mod ints;
pub mod print;
mod to_arrow;
pub mod types;

pub use arrow_array::{Array, ArrayRef, RecordBatch};
pub use arrow_schema::DataType as ArrowType;
pub use builder::{ColumnBuilder, ColumnsBuilder};
pub use cells::{for_each_record, Cell, CellReader};
pub use from_arrow::{scatter_column, timestamp_of_micros, value_at};
pub use ints::{wrap_to_bits, IntColumn};
pub use to_arrow::{array_from_values, infer_type, ConversionError};
pub use types::arrow_type;
/// The Arrow crates weir's columns are built with, for building batches of the same version.
pub use {arrow_array, arrow_schema};

use std::sync::Arc;

/// `array` as a column of Arrow type `ty`: itself when it has that type, a column of NULLs
/// when all its rows are NULL, else its values rebuilt in `ty` (a column built from rows without
/// declared types holds its values in the types they suggest, a TIMESTAMP(3) in the nanosecond
/// layout, say). `None` when a value does not fit `ty`.
pub fn conform(array: &ArrayRef, ty: &ArrowType) -> Option<ArrayRef> {
    if array.data_type() == ty {
        return Some(Arc::clone(array));
    }
    if array.null_count() == array.len() {
        return Some(arrow_array::new_null_array(ty, array.len()));
    }
    let values: Vec<crate::Value> = (0..array.len()).map(|i| value_at(array.as_ref(), i)).collect();
    let refs: Vec<&crate::Value> = values.iter().collect();
    array_from_values(ty, &refs).ok()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::types::{DataType, Field, LogicalType};
    use crate::value::{Timestamp, Value};

    fn round_trip(ty: &DataType, values: &[Value]) {
        let refs: Vec<&Value> = values.iter().collect();
        let array = array_from_values(&arrow_type(ty), &refs).unwrap_or_else(|e| panic!("{ty}: {e}"));
        assert_eq!(array.data_type(), &arrow_type(ty));
        let back: Vec<Value> = (0..array.len()).map(|i| value_at(array.as_ref(), i)).collect();
        assert_eq!(back, values, "{ty}");
        let mut scattered = vec![Value::Null; values.len() * 2];
        scatter_column(array.as_ref(), None, &mut scattered, 2);
        let every_other: Vec<Value> = scattered.iter().step_by(2).cloned().collect();
        assert_eq!(every_other, values, "{ty} scattered");
        // Built without a type, the column still gives the same values back.
        let inferred = array_from_values(&infer_type(&refs), &refs).unwrap();
        let back: Vec<Value> = (0..inferred.len()).map(|i| value_at(inferred.as_ref(), i)).collect();
        assert_eq!(back, values, "{ty} inferred");
    }

    /// Strings that repeat (within the last four distinct ones, and beyond) come back equal,
    /// through a selection of rows too, and the repeats share their allocation.
    #[test]
    fn scattered_strings_equal_their_column_and_repeats_share() {
        let words = ["Google", "Apple", "", "Baidu", "Facebook", "channel-1", "Googlf", "Googl"];
        let values: Vec<Value> = (0..200)
            .map(|i: usize| match (i * 7 + i / 3) % 11 {
                10 => Value::Null,
                n => Value::string(words[n % words.len()]),
            })
            .collect();
        round_trip(&DataType::string(), &values);
        let refs: Vec<&Value> = values.iter().collect();
        let array = array_from_values(&arrow_type(&DataType::string()), &refs).unwrap();
        let selection: Vec<u32> = (0..200).rev().step_by(3).collect();
        let mut scattered = vec![Value::Null; selection.len()];
        from_arrow::scatter_column(array.as_ref(), Some(&selection), &mut scattered, 1);
        let expected: Vec<Value> = selection.iter().map(|&i| values[i as usize].clone()).collect();
        assert_eq!(scattered, expected);
        let mut scattered = vec![Value::Null; 3];
        let google = Value::string(words[0]);
        let same = array_from_values(&arrow_type(&DataType::string()), &[&google, &google, &google]).unwrap();
        scatter_column(same.as_ref(), None, &mut scattered, 1);
        let (Value::String(a), Value::String(b)) = (&scattered[0], &scattered[2]) else { panic!("{scattered:?}") };
        assert!(Arc::ptr_eq(a, b));
    }

    fn ts(millis: i64, nanos_of_milli: u32) -> Timestamp {
        Timestamp { millis, nanos_of_milli }
    }

    /// 0000-01-01T00:00 and 9999-12-31T23:59:59.999999999, Flink's whole TIMESTAMP range.
    const YEAR_0: i64 = -62_167_219_200_000;
    const YEAR_9999_END: i64 = 253_402_300_799_999;

    #[test]
    fn every_flink_value_survives_its_column() {
        round_trip(&DataType::boolean(), &[Value::Boolean(true), Value::Null, Value::Boolean(false)]);
        round_trip(&DataType::new(LogicalType::TinyInt), &[Value::TinyInt(i8::MIN), Value::Null, Value::TinyInt(7)]);
        round_trip(&DataType::new(LogicalType::SmallInt), &[Value::SmallInt(i16::MAX), Value::SmallInt(-1)]);
        round_trip(&DataType::int(), &[Value::Int(i32::MIN), Value::Null, Value::Int(i32::MAX)]);
        round_trip(&DataType::bigint(), &[Value::BigInt(i64::MIN), Value::BigInt(i64::MAX), Value::Null]);
        round_trip(&DataType::new(LogicalType::Float), &[Value::Float(1.5), Value::Float(f32::NAN), Value::Null]);
        round_trip(&DataType::double(), &[Value::Double(-0.0), Value::Double(f64::INFINITY), Value::Null]);
        let max38 = 10i128.pow(38) - 1;
        round_trip(&DataType::decimal(38, 10), &[Value::decimal(max38, 10), Value::decimal(-max38, 10), Value::Null]);
        round_trip(&DataType::decimal(10, 2), &[Value::decimal(12345, 2), Value::Null]);
        round_trip(&DataType::string(), &[Value::string("héllo"), Value::string(""), Value::Null]);
        round_trip(&DataType::new(LogicalType::Char(3)), &[Value::string("a  "), Value::Null]);
        round_trip(
            &DataType::new(LogicalType::Varbinary(10)),
            &[Value::Binary(Arc::from(&b"\x00\xff"[..])), Value::Null],
        );
        round_trip(&DataType::new(LogicalType::Date), &[Value::Date(-719_528), Value::Date(2_932_896), Value::Null]);
        round_trip(
            &DataType::new(LogicalType::Time(9)),
            &[Value::Time(86_399_999_999_999), Value::Time(0), Value::Null],
        );
        for p in [0, 3, 6] {
            round_trip(
                &DataType::timestamp(p),
                &[Value::Timestamp(ts(YEAR_0, 0)), Value::Timestamp(ts(YEAR_9999_END, 999_000)), Value::Null],
            );
            round_trip(&DataType::new(LogicalType::TimestampLtz(p)), &[Value::TimestampLtz(ts(-1, 1000)), Value::Null]);
        }
        for p in [7, 9] {
            round_trip(
                &DataType::timestamp(p),
                &[Value::Timestamp(ts(YEAR_0, 1)), Value::Timestamp(ts(YEAR_9999_END, 999_999)), Value::Null],
            );
            round_trip(&DataType::new(LogicalType::TimestampLtz(p)), &[Value::TimestampLtz(ts(5, 7)), Value::Null]);
        }
        round_trip(&DataType::new(LogicalType::IntervalYearMonth), &[Value::IntervalYearMonth(-14), Value::Null]);
        round_trip(&DataType::new(LogicalType::IntervalDayTime), &[Value::IntervalDayTime(86_400_000), Value::Null]);
    }

    #[test]
    fn nested_values_survive_their_columns() {
        let array_type = DataType::new(LogicalType::Array(Box::new(DataType::int())));
        round_trip(
            &array_type,
            &[Value::Array(Arc::from([Value::Int(1), Value::Null])), Value::Null, Value::Array(Arc::from([]))],
        );
        let map_type = DataType::new(LogicalType::Map(Box::new(DataType::string()), Box::new(DataType::bigint())));
        round_trip(
            &map_type,
            &[
                Value::Map(Arc::from([(Value::string("b"), Value::BigInt(2)), (Value::string("a"), Value::Null)])),
                Value::Null,
            ],
        );
        let row_type = DataType::new(LogicalType::Row(vec![
            Field::new("f0", DataType::int()),
            Field::new("f1", DataType::string()),
        ]));
        round_trip(&row_type, &[Value::Row(Arc::from([Value::Int(1), Value::string("x")])), Value::Null]);
    }

    #[test]
    fn a_column_of_numbers_of_several_types_is_built_in_one_that_holds_them() {
        let cases: [(&[Value], ArrowType); 4] = [
            (&[Value::Int(1), Value::BigInt(5_000_000_000), Value::Null], ArrowType::Int64),
            (&[Value::TinyInt(1), Value::SmallInt(300)], ArrowType::Int16),
            (&[Value::Int(2), Value::decimal(150, 2)], ArrowType::Decimal128(38, 2)),
            (&[Value::Int(2), Value::Double(0.5)], ArrowType::Float64),
        ];
        for (values, expected) in cases {
            let refs: Vec<&Value> = values.iter().collect();
            assert_eq!(infer_type(&refs), expected, "{values:?}");
            assert!(array_from_values(&expected, &refs).is_ok(), "{values:?}");
        }
    }

    #[test]
    fn a_column_conforms_to_the_declared_type() {
        let values = [Value::Timestamp(ts(1_500, 0)), Value::Null];
        let refs: Vec<&Value> = values.iter().collect();
        let inferred = array_from_values(&infer_type(&refs), &refs).unwrap();
        let declared = arrow_type(&DataType::timestamp(3));
        assert_ne!(inferred.data_type(), &declared);
        let conformed = conform(&inferred, &declared).unwrap();
        assert_eq!(conformed.data_type(), &declared);
        assert_eq!(value_at(conformed.as_ref(), 0), values[0]);
        assert!(conformed.is_null(1));
        let text = array_from_values(&ArrowType::Utf8, &[&Value::string("x")]).unwrap();
        assert!(conform(&text, &ArrowType::Int64).is_none());
    }

    #[test]
    fn integers_widen_into_a_declared_column_and_misfits_are_refused() {
        let values = [Value::Int(3), Value::TinyInt(-1)];
        let refs: Vec<&Value> = values.iter().collect();
        let array = array_from_values(&arrow_type(&DataType::bigint()), &refs).unwrap();
        assert_eq!(value_at(array.as_ref(), 0), Value::BigInt(3));
        let strings = [Value::string("x")];
        let err = array_from_values(&arrow_type(&DataType::int()), &[&strings[0]]).unwrap_err();
        assert!(err.to_string().contains("does not fit a column of type Int32"), "{err}");
    }
}
