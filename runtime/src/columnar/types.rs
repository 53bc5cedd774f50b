//! How Flink's SQL types are laid out as Apache Arrow types.
//!
//! Every Flink value keeps its exact value in its Arrow column (the table is in
//! `docs/runtime.md`):
//!
//! | Flink | Arrow |
//! |---|---|
//! | BOOLEAN | Boolean |
//! | TINYINT, SMALLINT, INT, BIGINT | Int8, Int16, Int32, Int64 |
//! | FLOAT, DOUBLE | Float32, Float64 |
//! | DECIMAL(p, s) | Decimal128(p, s) |
//! | CHAR(n), VARCHAR(n), STRING | Utf8 (CHAR values are stored padded, as Flink produces them) |
//! | BINARY(n), VARBINARY(n), BYTES | Binary |
//! | DATE | Date32 (days since 1970-01-01) |
//! | TIME(p) | Time64(Nanosecond) |
//! | TIMESTAMP(p), p ≤ 6 | Timestamp(Microsecond) (±292 000 years: 0000–9999 fit) |
//! | TIMESTAMP_LTZ(p), p ≤ 6 | Timestamp(Microsecond, "UTC") |
//! | TIMESTAMP(p) / TIMESTAMP_LTZ(p), p 7–9 | Struct { epoch_millis: Int64, nanos_of_milli: Int32 }, marked by field metadata |
//! | INTERVAL YEAR TO MONTH | Interval(YearMonth) |
//! | INTERVAL DAY TO SECOND | Duration(Millisecond) |
//! | `ARRAY<t>` | `List<t>` |
//! | `MAP<k, v>` | `List<Struct<key, value>>`, marked by field metadata (entries in insertion order; Arrow's Map refuses the NULL keys Flink allows) |
//! | ROW<…> | Struct<…> |
//!
//! Nanosecond Arrow timestamps would not hold years before 1677 or after 2262, which Flink's
//! TIMESTAMP(9) holds; the two-field layout is Flink's own `TimestampData`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, Field as ArrowField, Fields, IntervalUnit, TimeUnit};

use crate::types::{DataType, LogicalType};

/// Field metadata key that marks the two-field layout of a nanosecond timestamp.
pub const LOGICAL_TYPE_KEY: &str = "weir.logical-type";

/// The time zone Arrow columns of TIMESTAMP_LTZ carry: instants, shown in the session's zone.
pub const LTZ_TIME_ZONE: &str = "UTC";

/// Name of the child field holding list elements, as Arrow's own builders name it.
const LIST_ITEM: &str = "item";

/// The Arrow type that holds values of `ty`.
pub fn arrow_type(ty: &DataType) -> ArrowType {
    match &ty.logical {
        LogicalType::Boolean => ArrowType::Boolean,
        LogicalType::TinyInt => ArrowType::Int8,
        LogicalType::SmallInt => ArrowType::Int16,
        LogicalType::Int => ArrowType::Int32,
        LogicalType::BigInt => ArrowType::Int64,
        LogicalType::Float => ArrowType::Float32,
        LogicalType::Double => ArrowType::Float64,
        LogicalType::Decimal { precision, scale } => ArrowType::Decimal128(*precision, *scale as i8),
        LogicalType::Char(_) | LogicalType::Varchar(_) => ArrowType::Utf8,
        LogicalType::Binary(_) | LogicalType::Varbinary(_) => ArrowType::Binary,
        LogicalType::Date => ArrowType::Date32,
        LogicalType::Time(_) => ArrowType::Time64(TimeUnit::Nanosecond),
        LogicalType::Timestamp(p) if *p <= 6 => ArrowType::Timestamp(TimeUnit::Microsecond, None),
        LogicalType::TimestampLtz(p) if *p <= 6 => {
            ArrowType::Timestamp(TimeUnit::Microsecond, Some(Arc::from(LTZ_TIME_ZONE)))
        }
        LogicalType::Timestamp(_) => nanos_timestamp_type(false),
        LogicalType::TimestampLtz(_) => nanos_timestamp_type(true),
        LogicalType::IntervalYearMonth => ArrowType::Interval(IntervalUnit::YearMonth),
        LogicalType::IntervalDayTime => ArrowType::Duration(TimeUnit::Millisecond),
        LogicalType::Array(element) => list_type(arrow_type(element)),
        LogicalType::Map(key, value) => map_type(arrow_type(key), arrow_type(value)),
        LogicalType::Multiset(element) => map_type(arrow_type(element), arrow_type(&DataType::int().not_null())),
        LogicalType::Row(fields) => {
            ArrowType::Struct(fields.iter().map(|f| ArrowField::new(&f.name, arrow_type(&f.data_type), true)).collect())
        }
    }
}

/// The two-field layout of TIMESTAMP(7..9) (`ltz` = false) and TIMESTAMP_LTZ(7..9).
pub fn nanos_timestamp_type(ltz: bool) -> ArrowType {
    let marker = if ltz { "TIMESTAMP_LTZ" } else { "TIMESTAMP" };
    let metadata = HashMap::from([(LOGICAL_TYPE_KEY.to_string(), marker.to_string())]);
    ArrowType::Struct(Fields::from(vec![
        ArrowField::new("epoch_millis", ArrowType::Int64, false).with_metadata(metadata),
        ArrowField::new("nanos_of_milli", ArrowType::Int32, false),
    ]))
}

/// Which nanosecond timestamp a struct type lays out: `Some(false)` TIMESTAMP, `Some(true)`
/// TIMESTAMP_LTZ, `None` for a struct that is a ROW.
pub fn nanos_timestamp_kind(fields: &Fields) -> Option<bool> {
    let marker = fields.first()?.metadata().get(LOGICAL_TYPE_KEY)?;
    match marker.as_str() {
        "TIMESTAMP" => Some(false),
        "TIMESTAMP_LTZ" => Some(true),
        _ => None,
    }
}

/// `List<element>`, elements nullable.
pub fn list_type(element: ArrowType) -> ArrowType {
    ArrowType::List(Arc::new(ArrowField::new(LIST_ITEM, element, true)))
}

/// The layout of `MAP<key, value>`: a list of `Struct<key, value>` entries in insertion order,
/// its item field marked as a map (Arrow's own Map type refuses NULL keys, which Flink allows).
pub fn map_type(key: ArrowType, value: ArrowType) -> ArrowType {
    ArrowType::List(Arc::new(map_entries_field(key, value)))
}

/// The item field of a map's list: `entries: Struct<key, value>`, marked as a map.
pub(crate) fn map_entries_field(key: ArrowType, value: ArrowType) -> ArrowField {
    let entries = Fields::from(vec![ArrowField::new("key", key, true), ArrowField::new("value", value, true)]);
    let metadata = HashMap::from([(LOGICAL_TYPE_KEY.to_string(), "MAP".to_string())]);
    ArrowField::new("entries", ArrowType::Struct(entries), false).with_metadata(metadata)
}

/// Whether a list's item field is a map's entries (see [`map_type`]).
pub fn is_map_entries(item: &ArrowField) -> bool {
    item.metadata().get(LOGICAL_TYPE_KEY).is_some_and(|m| m == "MAP")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microsecond_timestamps_up_to_precision_six() {
        assert_eq!(arrow_type(&DataType::timestamp(3)), ArrowType::Timestamp(TimeUnit::Microsecond, None));
        let nanos = arrow_type(&DataType::timestamp(9));
        let ArrowType::Struct(fields) = &nanos else { panic!("{nanos:?}") };
        assert_eq!(nanos_timestamp_kind(fields), Some(false));
        let ltz = arrow_type(&DataType::new(LogicalType::TimestampLtz(9)));
        let ArrowType::Struct(fields) = &ltz else { panic!("{ltz:?}") };
        assert_eq!(nanos_timestamp_kind(fields), Some(true));
    }

    #[test]
    fn a_row_is_not_mistaken_for_a_timestamp() {
        let row = arrow_type(&DataType::new(LogicalType::Row(vec![
            crate::types::Field::new("epoch_millis", DataType::bigint()),
            crate::types::Field::new("nanos_of_milli", DataType::int()),
        ])));
        let ArrowType::Struct(fields) = &row else { panic!("{row:?}") };
        assert_eq!(nanos_timestamp_kind(fields), None);
    }
}
