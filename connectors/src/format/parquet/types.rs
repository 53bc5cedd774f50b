//! Flink's mapping between SQL types and Parquet's, and the conversion of weir's columns to
//! the arrays the Parquet writer takes and back.
//!
//! | SQL type | Parquet type |
//! |---|---|
//! | CHAR, VARCHAR | BINARY (UTF8) |
//! | BOOLEAN | BOOLEAN |
//! | BINARY, VARBINARY | BINARY |
//! | DECIMAL(p, s) | FIXED_LEN_BYTE_ARRAY (DECIMAL(p, s)), of the fewest bytes that hold p digits |
//! | TINYINT, SMALLINT | INT32 (INT_8, INT_16) |
//! | INT, BIGINT | INT32, INT64 |
//! | FLOAT, DOUBLE | FLOAT, DOUBLE |
//! | DATE | INT32 (DATE) |
//! | TIME | INT32 (TIME_MILLIS) |
//! | TIMESTAMP(p), TIMESTAMP_LTZ(p) | INT64 (TIMESTAMP, MICROS up to p = 6, NANOS above; adjusted to UTC for LTZ) |
//! | ARRAY | LIST of `element` |
//! | MAP, MULTISET | MAP of `key_value` (a MULTISET's values are INT counts) |
//! | ROW | a group of its fields |
//!
//! Flink writes TIMESTAMP as INT96 unless `parquet.write.int64.timestamp` is set; INT96 is
//! deprecated by Parquet and the `parquet` crate does not write it, so weir writes Flink's INT64
//! layout. Both read back: an INT96 column reads as a TIMESTAMP. INTERVAL types have no Parquet
//! type, as in Flink.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int32Type, Int64Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{
    new_null_array, Array, ArrayRef, Int32Array, Int64Array, ListArray, MapArray, RecordBatch, StructArray,
    TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray,
};
use arrow_cast::cast::{cast_with_options, CastOptions};
use arrow_schema::{DataType as ArrowType, Field as ArrowField, Fields, TimeUnit};
use parquet::basic::{LogicalType as ParquetLogical, Type as PhysicalType};
use parquet::schema::types::{SchemaDescriptor, Type, TypePtr};
use weir_runtime::columnar::arrow_type;
use weir_runtime::columnar::types::{map_type, nanos_timestamp_type};
use weir_runtime::time_zone::TimeZone;
use weir_runtime::{DataType, LogicalType, Schema};

use crate::error::{Error, Result};

/// The conversion result of one array: what is wrong, in words, on failure.
type Converted = std::result::Result<ArrayRef, String>;

/// The Arrow schema of the arrays handed to the Parquet writer for `schema`'s columns.
///
/// # Errors
/// A column whose type Parquet cannot hold (INTERVAL), with Flink's message.
pub(super) fn file_schema(schema: &Schema) -> Result<arrow_schema::Schema> {
    let fields: Result<Vec<ArrowField>> =
        schema.fields.iter().map(|f| Ok(ArrowField::new(&f.name, file_type(&f.data_type)?, true))).collect();
    Ok(arrow_schema::Schema::new(fields?))
}

/// The Arrow type whose Parquet form is Flink's for `ty`.
fn file_type(ty: &DataType) -> Result<ArrowType> {
    Ok(match &ty.logical {
        LogicalType::Boolean
        | LogicalType::TinyInt
        | LogicalType::SmallInt
        | LogicalType::Int
        | LogicalType::BigInt
        | LogicalType::Float
        | LogicalType::Double
        | LogicalType::Decimal { .. }
        | LogicalType::Char(_)
        | LogicalType::Varchar(_)
        | LogicalType::Binary(_)
        | LogicalType::Varbinary(_)
        | LogicalType::Date => arrow_type(ty),
        LogicalType::Time(_) => ArrowType::Time32(TimeUnit::Millisecond),
        LogicalType::Timestamp(p) => ArrowType::Timestamp(unit(*p), None),
        LogicalType::TimestampLtz(p) => ArrowType::Timestamp(unit(*p), Some(Arc::from("UTC"))),
        LogicalType::IntervalYearMonth | LogicalType::IntervalDayTime => {
            return Err(Error::Validation(format!("Unsupported type: {ty}")))
        }
        LogicalType::Array(element) => ArrowType::List(Arc::new(ArrowField::new("element", file_type(element)?, true))),
        LogicalType::Map(key, value) => map_file_type(file_type(key)?, file_type(value)?),
        LogicalType::Multiset(element) => map_file_type(file_type(element)?, ArrowType::Int32),
        LogicalType::Row(fields) => ArrowType::Struct(
            fields
                .iter()
                .map(|f| Ok(ArrowField::new(&f.name, file_type(&f.data_type)?, true)))
                .collect::<Result<Fields>>()?,
        ),
    })
}

/// The unit a TIMESTAMP(p) is written in: microseconds, nanoseconds above p = 6.
fn unit(precision: u8) -> TimeUnit {
    if precision <= 6 {
        TimeUnit::Microsecond
    } else {
        TimeUnit::Nanosecond
    }
}

/// Parquet's MAP: `key_value` entries of a required key and an optional value.
fn map_file_type(key: ArrowType, value: ArrowType) -> ArrowType {
    let entries = Fields::from(vec![ArrowField::new("key", key, false), ArrowField::new("value", value, true)]);
    ArrowType::Map(Arc::new(ArrowField::new("key_value", ArrowType::Struct(entries), false)), false)
}

/// The Parquet schema Flink writes for `file_schema` (root `flink_schema`): the Arrow
/// converter's, with every DECIMAL a FIXED_LEN_BYTE_ARRAY, as Flink writes them.
///
/// # Errors
/// A type the converter refuses.
pub(super) fn parquet_schema(file_schema: &arrow_schema::Schema) -> Result<SchemaDescriptor> {
    let converted = parquet::arrow::ArrowSchemaConverter::new()
        .schema_root("flink_schema")
        .convert(file_schema)
        .map_err(|e| Error::Validation(e.to_string()))?;
    let root = with_fixed_decimals(converted.root_schema_ptr()).map_err(|e| Error::Validation(e.to_string()))?;
    Ok(SchemaDescriptor::new(root))
}

/// `ty` with its DECIMAL leaves stored as FIXED_LEN_BYTE_ARRAY.
fn with_fixed_decimals(ty: TypePtr) -> parquet::errors::Result<TypePtr> {
    let info = ty.get_basic_info();
    match ty.as_ref() {
        Type::GroupType { fields, .. } => {
            let fields =
                fields.iter().map(|f| with_fixed_decimals(Arc::clone(f))).collect::<parquet::errors::Result<_>>()?;
            let mut group = Type::group_type_builder(info.name())
                .with_fields(fields)
                .with_logical_type(info.logical_type_ref().cloned())
                .with_converted_type(info.converted_type());
            if info.has_repetition() {
                group = group.with_repetition(info.repetition());
            }
            Ok(Arc::new(group.build()?))
        }
        Type::PrimitiveType { physical_type: PhysicalType::INT32 | PhysicalType::INT64, precision, scale, .. }
            if matches!(info.logical_type_ref(), Some(ParquetLogical::Decimal { .. })) =>
        {
            let fixed = Type::primitive_type_builder(info.name(), PhysicalType::FIXED_LEN_BYTE_ARRAY)
                .with_repetition(info.repetition())
                .with_length(decimal_bytes(*precision))
                .with_logical_type(info.logical_type_ref().cloned())
                .with_precision(*precision)
                .with_scale(*scale)
                .build()?;
            Ok(Arc::new(fixed))
        }
        Type::PrimitiveType { .. } => Ok(ty),
    }
}

/// The fewest bytes whose two's complement holds every number of `precision` digits.
fn decimal_bytes(precision: i32) -> i32 {
    let mut bytes = 1;
    while 2f64.powi(8 * bytes - 1) < 10f64.powi(precision) {
        bytes += 1;
    }
    bytes
}

/// The cast options of every conversion: a value that does not fit fails, never turns NULL.
const STRICT: CastOptions<'static> =
    CastOptions { safe: false, format_options: arrow_cast::display::FormatOptions::new() };

fn cast(array: &ArrayRef, to: &ArrowType) -> Converted {
    if array.data_type() == to {
        return Ok(Arc::clone(array));
    }
    cast_with_options(array, to, &STRICT).map_err(|e| e.to_string())
}

/// `columns` (of `schema`'s types) as the arrays of `file_schema` the writer takes.
pub(super) fn to_file(
    columns: &[ArrayRef],
    schema: &Schema,
    file_schema: &arrow_schema::Schema,
    zone: TimeZone,
) -> std::result::Result<Vec<ArrayRef>, String> {
    columns
        .iter()
        .zip(&schema.fields)
        .zip(file_schema.fields())
        .map(|((array, field), file_field)| {
            to_file_array(array, &field.data_type, file_field.data_type(), zone)
                .map_err(|e| format!("column '{}': {e}", field.name))
        })
        .collect()
}

fn to_file_array(array: &ArrayRef, ty: &DataType, to: &ArrowType, zone: TimeZone) -> Converted {
    if let LogicalType::Timestamp(_) | LogicalType::TimestampLtz(_) = &ty.logical {
        // Milliseconds and nanoseconds of the millisecond (TIMESTAMP(7..9), or any timestamp
        // of a column built row by row from values with nanoseconds), or an Arrow timestamp.
        let mut instants = match array.data_type() {
            ArrowType::Struct(_) => nanos_of(array)?,
            _ => retime(array, TimeUnit::Nanosecond, None)?,
        };
        if matches!(ty.logical, LogicalType::Timestamp(_)) && !zone.is_utc() {
            instants = shift(&instants, zone, true)?;
        }
        let ArrowType::Timestamp(unit, tz) = to else { return Err(format!("{to} is not a timestamp")) };
        return retime(&instants, *unit, tz.clone());
    }
    // A column built row by row may hold arrays of another type (all NULL: Arrow's Null).
    let array = &cast(array, &arrow_type(ty))?;
    match (&ty.logical, to) {
        (LogicalType::Array(element), ArrowType::List(item)) => {
            let list = array.as_list::<i32>();
            let values = to_file_array(list.values(), element, item.data_type(), zone)?;
            let list = ListArray::try_new(Arc::clone(item), list.offsets().clone(), values, list.nulls().cloned());
            Ok(Arc::new(list.map_err(|e| e.to_string())?))
        }
        (LogicalType::Map(key, value), ArrowType::Map(entries, _)) => map_to_file(array, key, value, entries, zone),
        (LogicalType::Multiset(element), ArrowType::Map(entries, _)) => {
            map_to_file(array, element, &DataType::int().not_null(), entries, zone)
        }
        (LogicalType::Row(fields), ArrowType::Struct(file_fields)) => {
            let row = array.as_struct();
            let children = fields
                .iter()
                .zip(file_fields)
                .enumerate()
                .map(|(i, (f, file))| to_file_array(row.column(i), &f.data_type, file.data_type(), zone))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            let row = StructArray::try_new(file_fields.clone(), children, row.nulls().cloned());
            Ok(Arc::new(row.map_err(|e| e.to_string())?))
        }
        _ => cast(array, to),
    }
}

/// A MAP's entries (a list of key and value structs) as Parquet's MAP.
fn map_to_file(
    array: &ArrayRef,
    key: &DataType,
    value: &DataType,
    entries: &Arc<ArrowField>,
    zone: TimeZone,
) -> Converted {
    let list = array.as_list::<i32>();
    let pairs = list.values().as_struct();
    let ArrowType::Struct(fields) = entries.data_type() else { return Err("a map's entries are not a struct".into()) };
    let keys = to_file_array(pairs.column(0), key, fields[0].data_type(), zone)?;
    if keys.null_count() > 0 {
        return Err("a MAP key is NULL, which Parquet cannot hold".into());
    }
    let values = to_file_array(pairs.column(1), value, fields[1].data_type(), zone)?;
    let pairs = StructArray::try_new(fields.clone(), vec![keys, values], None).map_err(|e| e.to_string())?;
    let map = MapArray::try_new(Arc::clone(entries), list.offsets().clone(), pairs, list.nulls().cloned(), false);
    Ok(Arc::new(map.map_err(|e| e.to_string())?))
}

/// A TIMESTAMP(7..9) column (milliseconds and nanoseconds of the millisecond) as nanoseconds.
fn nanos_of(array: &ArrayRef) -> Converted {
    let parts = array.as_struct();
    let millis = parts.column(0).as_primitive::<Int64Type>();
    let nanos = parts.column(1).as_primitive::<Int32Type>();
    let values: Int64Array = millis
        .iter()
        .zip(nanos.iter())
        .zip(0..parts.len())
        .map(|((m, n), i)| match (parts.is_valid(i), m, n) {
            (true, Some(m), Some(n)) => m.checked_mul(1_000_000).and_then(|v| v.checked_add(n.into())),
            _ => None,
        })
        .collect();
    Ok(Arc::new(TimestampNanosecondArray::new(values.values().clone(), values.nulls().cloned())))
}

/// Timestamps of any unit and zone as `unit` labelled `zone`: the same instants (or wall-clock
/// times), truncated towards the past when `unit` is coarser. Converts the values themselves,
/// never parsing a zone.
fn retime(array: &ArrayRef, unit: TimeUnit, zone: Option<Arc<str>>) -> Converted {
    let ArrowType::Timestamp(from, _) = array.data_type() else {
        return Err(format!("{} is not a timestamp", array.data_type()));
    };
    let per_second = |u: &TimeUnit| match u {
        TimeUnit::Second => 1i64,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    };
    let (source, target) = (per_second(from), per_second(&unit));
    let raw: Int64Array = match from {
        TimeUnit::Second => array.as_primitive::<TimestampSecondType>().reinterpret_cast::<Int64Type>(),
        TimeUnit::Millisecond => array.as_primitive::<TimestampMillisecondType>().reinterpret_cast::<Int64Type>(),
        TimeUnit::Microsecond => array.as_primitive::<TimestampMicrosecondType>().reinterpret_cast::<Int64Type>(),
        TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().reinterpret_cast::<Int64Type>(),
    };
    let scaled: Int64Array = raw
        .try_unary(|v| {
            if target >= source {
                v.checked_mul(target / source)
                    .ok_or(arrow_schema::ArrowError::ComputeError(format!("the timestamp {v} is out of range")))
            } else {
                Ok(v.div_euclid(source / target))
            }
        })
        .map_err(|e| e.to_string())?;
    let (values, nulls) = (scaled.values().clone(), scaled.nulls().cloned());
    Ok(match unit {
        TimeUnit::Second => Arc::new(TimestampSecondArray::new(values, nulls).with_timezone_opt(zone)),
        TimeUnit::Millisecond => Arc::new(TimestampMillisecondArray::new(values, nulls).with_timezone_opt(zone)),
        TimeUnit::Microsecond => Arc::new(TimestampMicrosecondArray::new(values, nulls).with_timezone_opt(zone)),
        TimeUnit::Nanosecond => Arc::new(TimestampNanosecondArray::new(values, nulls).with_timezone_opt(zone)),
    })
}

/// Nanoseconds as weir's TIMESTAMP(7..9) columns hold them (`ltz` for TIMESTAMP_LTZ).
fn nanos_struct(array: &ArrayRef, ltz: bool) -> Converted {
    let nanos = retime(array, TimeUnit::Nanosecond, None)?;
    let nanos = nanos.as_primitive::<TimestampNanosecondType>();
    // The parts are never NULL themselves: a NULL timestamp is NULL in the struct.
    let millis: Int64Array = nanos.values().iter().map(|v| v.div_euclid(1_000_000)).collect();
    let of_milli: Int32Array = nanos.values().iter().map(|v| v.rem_euclid(1_000_000) as i32).collect();
    let ArrowType::Struct(fields) = nanos_timestamp_type(ltz) else {
        return Err("a timestamp layout is not a struct".into());
    };
    let parts = StructArray::try_new(fields, vec![Arc::new(millis), Arc::new(of_milli)], nanos.nulls().cloned());
    Ok(Arc::new(parts.map_err(|e| e.to_string())?))
}

/// Nanosecond timestamps (without a zone, as [`retime`] makes them) moved between a wall-clock
/// time of `zone` and the instant it is there: to the instant when `to_instant`, else back.
fn shift(array: &ArrayRef, zone: TimeZone, to_instant: bool) -> Converted {
    let ArrowType::Timestamp(TimeUnit::Nanosecond, None) = array.data_type() else {
        return Err(format!("{} is not a timestamp in nanoseconds", array.data_type()));
    };
    let shifted = array.as_primitive::<TimestampNanosecondType>().unary::<_, TimestampNanosecondType>(|v| {
        let millis = v.div_euclid(1_000_000);
        let moved = if to_instant { zone.to_utc(millis) } else { zone.to_local(millis) };
        v + (moved - millis) * 1_000_000
    });
    Ok(Arc::new(shifted))
}

/// The columns of `schema` from a batch of a file: each by name, NULL where the file lacks it.
pub(super) fn from_file(
    batch: &RecordBatch,
    schema: &Schema,
    zone: TimeZone,
) -> std::result::Result<Vec<ArrayRef>, String> {
    schema
        .fields
        .iter()
        .map(|field| match batch.column_by_name(&field.name) {
            Some(array) => from_file_array(array, &field.data_type, zone)
                .map_err(|e| format!("column '{}' cannot be read as {}: {e}", field.name, field.data_type)),
            None if field.data_type.nullable => Ok(new_null_array(&arrow_type(&field.data_type), batch.num_rows())),
            None => Err(format!("the file has no column '{}', which is NOT NULL", field.name)),
        })
        .collect()
}

fn from_file_array(array: &ArrayRef, ty: &DataType, zone: TimeZone) -> Converted {
    let array = match array.data_type() {
        ArrowType::Dictionary(_, value) => &cast(array, value)?,
        ArrowType::LargeList(item) | ArrowType::ListView(item) | ArrowType::FixedSizeList(item, _) => {
            &cast(array, &ArrowType::List(Arc::clone(item)))?
        }
        _ => array,
    };
    match (&ty.logical, array.data_type()) {
        (LogicalType::Array(element), ArrowType::List(_)) => {
            let list = array.as_list::<i32>();
            let values = from_file_array(list.values(), element, zone)?;
            let ArrowType::List(item) = arrow_type(ty) else { return Err("an ARRAY is not a list".into()) };
            let list = ListArray::try_new(item, list.offsets().clone(), values, list.nulls().cloned());
            Ok(Arc::new(list.map_err(|e| e.to_string())?))
        }
        (LogicalType::Map(key, value), ArrowType::Map(..)) => map_from_file(array, key, value, zone),
        (LogicalType::Multiset(element), ArrowType::Map(..)) => {
            map_from_file(array, element, &DataType::int().not_null(), zone)
        }
        (LogicalType::Row(fields), ArrowType::Struct(_)) => {
            let row = array.as_struct();
            let children = fields
                .iter()
                .map(|f| match row.column_by_name(&f.name) {
                    Some(child) => from_file_array(child, &f.data_type, zone),
                    None => Ok(new_null_array(&arrow_type(&f.data_type), row.len())),
                })
                .collect::<std::result::Result<Vec<_>, _>>()?;
            let ArrowType::Struct(ours) = arrow_type(ty) else { return Err("a ROW is not a struct".into()) };
            let row = StructArray::try_new(ours, children, row.nulls().cloned());
            Ok(Arc::new(row.map_err(|e| e.to_string())?))
        }
        (LogicalType::Timestamp(p) | LogicalType::TimestampLtz(p), ArrowType::Timestamp(..)) => {
            let ltz = matches!(ty.logical, LogicalType::TimestampLtz(_));
            let mut instants = retime(array, TimeUnit::Nanosecond, None)?;
            if !ltz && !zone.is_utc() {
                instants = shift(&instants, zone, false)?;
            }
            if *p > 6 {
                return nanos_struct(&instants, ltz);
            }
            let ArrowType::Timestamp(unit, zone) = arrow_type(ty) else {
                return Err("a TIMESTAMP is not a timestamp".into());
            };
            retime(&instants, unit, zone)
        }
        (logical, file) if readable_as(file, logical) => cast(array, &arrow_type(ty)),
        (_, file) => Err(format!(
            "the file holds {}, which Flink's Parquet format does not read as {ty} (Flink: Unexpected type)",
            file_type_name(file)
        )),
    }
}

/// Whether a file column of Arrow type `file` holds values of `ty` as Flink's Parquet reader
/// takes them: of the physical type Flink reads for it (INT32 for TINYINT to INT, INT64 for
/// BIGINT, the same floating type, BINARY for text and bytes, INT32 dates, INT32/INT64 times),
/// a DECIMAL of the same scale and no more digits; never a conversion that loses or invents
/// (a DOUBLE read as INT, a BOOLEAN as INT, an INT64 as a TIMESTAMP, a DECIMAL of another scale).
fn readable_as(file: &ArrowType, ty: &LogicalType) -> bool {
    use ArrowType as A;
    match ty {
        LogicalType::Boolean => matches!(file, A::Boolean),
        LogicalType::TinyInt => matches!(file, A::Int8 | A::Int32),
        LogicalType::SmallInt => matches!(file, A::Int8 | A::Int16 | A::Int32),
        LogicalType::Int => matches!(file, A::Int8 | A::Int16 | A::Int32),
        LogicalType::BigInt => matches!(file, A::Int64),
        LogicalType::Float => matches!(file, A::Float32),
        LogicalType::Double => matches!(file, A::Float64),
        LogicalType::Decimal { precision, scale } => match file {
            A::Decimal128(p, s) | A::Decimal256(p, s) => i16::from(*scale) == i16::from(*s) && *p <= *precision,
            _ => false,
        },
        LogicalType::Char(_) | LogicalType::Varchar(_) | LogicalType::Binary(_) | LogicalType::Varbinary(_) => {
            matches!(
                file,
                A::Utf8
                    | A::LargeUtf8
                    | A::Utf8View
                    | A::Binary
                    | A::LargeBinary
                    | A::BinaryView
                    | A::FixedSizeBinary(_)
            )
        }
        LogicalType::Date => matches!(file, A::Date32 | A::Date64),
        LogicalType::Time(_) => matches!(file, A::Time32(_) | A::Time64(_)),
        // TIMESTAMPs, collections and ROWs are read by their own arms when the file's column is
        // of their kind; of another kind they are not read.
        LogicalType::Timestamp(_)
        | LogicalType::TimestampLtz(_)
        | LogicalType::Array(_)
        | LogicalType::Map(..)
        | LogicalType::Multiset(_)
        | LogicalType::Row(_)
        | LogicalType::IntervalYearMonth
        | LogicalType::IntervalDayTime => false,
    }
}

/// A file column's type as Parquet readers name it.
fn file_type_name(file: &ArrowType) -> String {
    use ArrowType as A;
    match file {
        A::Boolean => "BOOLEAN values".into(),
        A::Int8 | A::Int16 | A::Int32 => "INT32 values".into(),
        A::Int64 => "INT64 values without a timestamp annotation".into(),
        A::Float32 => "FLOAT values".into(),
        A::Float64 => "DOUBLE values".into(),
        A::Decimal128(p, s) | A::Decimal256(p, s) => format!("DECIMAL({p}, {s}) values"),
        A::Utf8 | A::LargeUtf8 | A::Utf8View => "UTF-8 text (BINARY)".into(),
        A::Binary | A::LargeBinary | A::BinaryView | A::FixedSizeBinary(_) => "BINARY values".into(),
        A::Date32 | A::Date64 => "DATE values".into(),
        A::Timestamp(..) => "timestamps".into(),
        A::List(_) | A::LargeList(_) => "lists".into(),
        A::Map(..) => "maps".into(),
        A::Struct(_) => "groups (ROWs)".into(),
        other => format!("{other} values"),
    }
}

/// Parquet's MAP as weir's map layout (a list of key and value structs).
fn map_from_file(array: &ArrayRef, key: &DataType, value: &DataType, zone: TimeZone) -> Converted {
    let map = array.as_map();
    let keys = from_file_array(map.keys(), key, zone)?;
    let values = from_file_array(map.values(), value, zone)?;
    let ArrowType::List(entries) = map_type(arrow_type(key), arrow_type(value)) else {
        return Err("a MAP is not a list".into());
    };
    let ArrowType::Struct(fields) = entries.data_type() else { return Err("a map's entries are not a struct".into()) };
    let pairs = StructArray::try_new(fields.clone(), vec![keys, values], None).map_err(|e| e.to_string())?;
    let list = ListArray::try_new(entries, map.offsets().clone(), Arc::new(pairs), map.nulls().cloned());
    Ok(Arc::new(list.map_err(|e| e.to_string())?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::Field;

    /// TIMESTAMP(3) micros of 2024-01-02 03:04:05.678 wall-clock time.
    const LOCAL: i64 = 1_704_164_645_678_000;

    #[test]
    fn timestamps_are_stored_as_instants_of_the_zone_and_read_back_as_its_wall_clock() {
        let schema = Schema::new(vec![Field::new("ts", DataType::timestamp(3))]);
        let file_schema = file_schema(&schema).unwrap();
        let column: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![Some(LOCAL), None]));
        for (zone, offset_hours) in [("UTC", 0), ("America/New_York", 5), ("Asia/Shanghai", -8)] {
            let zone = TimeZone::parse(zone).unwrap();
            let stored = to_file(std::slice::from_ref(&column), &schema, &file_schema, zone).unwrap();
            let instants = stored[0].as_primitive::<TimestampMicrosecondType>();
            assert_eq!(instants.value(0), LOCAL + offset_hours * 3_600_000_000, "{zone:?}");
            assert!(instants.is_null(1));
            let batch = RecordBatch::try_new(Arc::new(file_schema.clone()), stored).unwrap();
            let read = from_file(&batch, &schema, zone).unwrap();
            assert_eq!(read[0].as_ref(), column.as_ref(), "{zone:?}");
        }
    }

    #[test]
    fn decimals_take_the_fewest_bytes_that_hold_their_digits_as_flink_writes_them() {
        assert_eq!([1, 2, 9, 10, 18, 30, 38].map(decimal_bytes), [1, 1, 4, 5, 8, 13, 16]);
    }
}
