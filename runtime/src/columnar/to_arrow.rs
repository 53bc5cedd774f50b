//! Values into Arrow arrays: the one place where cells become columns.
//!
//! [`array_from_values`] builds a column of a given Arrow type, taking any value that holds
//! the type's values exactly (an INT into a BIGINT column, a DECIMAL of a smaller scale into a
//! larger one); [`infer_type`] picks the type when a column was built without one.

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, BooleanBuilder, Decimal128Builder, PrimitiveBuilder, StringBuilder};
use arrow_array::types::{
    Date32Type, DurationMillisecondType, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    IntervalYearMonthType, Time64NanosecondType, TimestampMicrosecondType,
};
use arrow_array::{new_null_array, ArrayRef, ArrowPrimitiveType, Int32Array, Int64Array, ListArray, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType as ArrowType, Field as ArrowField, Fields, TimeUnit};

use super::types::{is_map_entries, list_type, map_type, nanos_timestamp_kind, nanos_timestamp_type};
use crate::value::{Timestamp, Value};

/// Why values could not be put in a column of the asked type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value} does not fit a column of type {arrow_type}")]
pub struct ConversionError {
    /// The value, printed.
    pub value: String,
    /// The column's Arrow type, printed.
    pub arrow_type: String,
}

pub(super) fn misfit(value: &Value, ty: &ArrowType) -> ConversionError {
    ConversionError { value: crate::print::value_to_string(value), arrow_type: ty.to_string() }
}

/// A column of type `ty` holding `values` in order (`Value::Null` as null).
///
/// # Errors
/// A value that the type cannot hold exactly.
pub fn array_from_values(ty: &ArrowType, values: &[&Value]) -> Result<ArrayRef, ConversionError> {
    Ok(match ty {
        ArrowType::Null => {
            if let Some(v) = values.iter().find(|v| !v.is_null()) {
                return Err(misfit(v, ty));
            }
            new_null_array(ty, values.len())
        }
        ArrowType::Boolean => {
            let mut b = BooleanBuilder::with_capacity(values.len());
            for v in values {
                match v {
                    Value::Null => b.append_null(),
                    Value::Boolean(x) => b.append_value(*x),
                    other => return Err(misfit(other, ty)),
                }
            }
            Arc::new(b.finish())
        }
        ArrowType::Int8 => primitive::<Int8Type>(ty, values, int_of)?,
        ArrowType::Int16 => primitive::<Int16Type>(ty, values, int_of)?,
        ArrowType::Int32 => primitive::<Int32Type>(ty, values, int_of)?,
        ArrowType::Int64 => primitive::<Int64Type>(ty, values, int_of)?,
        ArrowType::Float64 => primitive::<Float64Type>(ty, values, float64_of)?,
        ArrowType::Float32 => primitive::<Float32Type>(ty, values, |v| match v {
            Value::Float(x) => Some(*x),
            _ => None,
        })?,
        ArrowType::Decimal128(precision, scale) => {
            let mut b = Decimal128Builder::with_capacity(values.len());
            for v in values {
                match v {
                    Value::Null => b.append_null(),
                    other => b.append_value(rescaled(other, *scale).ok_or_else(|| misfit(other, ty))?),
                }
            }
            Arc::new(b.finish().with_precision_and_scale(*precision, *scale).map_err(|_| misfit(&Value::Null, ty))?)
        }
        ArrowType::Utf8 => {
            let bytes = values.iter().map(|v| v.as_str().map_or(0, str::len)).sum();
            let mut b = StringBuilder::with_capacity(values.len(), bytes);
            for v in values {
                match v {
                    Value::Null => b.append_null(),
                    Value::String(s) => b.append_value(s),
                    other => return Err(misfit(other, ty)),
                }
            }
            Arc::new(b.finish())
        }
        ArrowType::Binary => {
            let mut b = BinaryBuilder::with_capacity(values.len(), 0);
            for v in values {
                match v {
                    Value::Null => b.append_null(),
                    Value::Binary(x) => b.append_value(x),
                    other => return Err(misfit(other, ty)),
                }
            }
            Arc::new(b.finish())
        }
        ArrowType::Date32 => primitive::<Date32Type>(ty, values, date_of)?,
        ArrowType::Time64(TimeUnit::Nanosecond) => primitive::<Time64NanosecondType>(ty, values, |v| match v {
            Value::Time(t) => Some(*t),
            _ => None,
        })?,
        ArrowType::Timestamp(TimeUnit::Microsecond, zone) => {
            let ltz = zone.is_some();
            let array = primitive_array::<TimestampMicrosecondType>(ty, values, |v| timestamp_micros_of(v, ltz))?;
            Arc::new(array.with_timezone_opt(zone.clone()))
        }
        ArrowType::Interval(arrow_schema::IntervalUnit::YearMonth) => {
            primitive::<IntervalYearMonthType>(ty, values, |v| match v {
                Value::IntervalYearMonth(m) => Some(*m),
                _ => None,
            })?
        }
        ArrowType::Duration(TimeUnit::Millisecond) => primitive::<DurationMillisecondType>(ty, values, |v| match v {
            Value::IntervalDayTime(ms) => Some(*ms),
            _ => None,
        })?,
        ArrowType::Struct(fields) => match nanos_timestamp_kind(fields) {
            Some(ltz) => nanos_timestamps(ty, fields, ltz, values)?,
            None => rows(ty, fields, values)?,
        },
        ArrowType::List(entries) if is_map_entries(entries) => map(ty, entries, values)?,
        ArrowType::List(element) => list(ty, element, values)?,
        other => return Err(ConversionError { value: String::new(), arrow_type: other.to_string() }),
    })
}

/// The Arrow type for a column of `values` built without a declared type: the type of the
/// first non-null value (DECIMAL at precision 38, timestamps in their nanosecond layout, ROW
/// fields named `f0`, `f1`, …); Null when every value is NULL.
pub fn infer_type(values: &[&Value]) -> ArrowType {
    let Some(first) = values.iter().find(|v| !v.is_null()) else { return ArrowType::Null };
    if let Some(numeric) = numeric_type(values) {
        return numeric;
    }
    match first {
        Value::Null => ArrowType::Null,
        Value::Boolean(_) => ArrowType::Boolean,
        Value::TinyInt(_) => ArrowType::Int8,
        Value::SmallInt(_) => ArrowType::Int16,
        Value::Int(_) => ArrowType::Int32,
        Value::BigInt(_) => ArrowType::Int64,
        Value::Float(_) => ArrowType::Float32,
        Value::Double(_) => ArrowType::Float64,
        Value::Decimal { scale, .. } => {
            let scale = values.iter().filter_map(|v| v.as_decimal()).map(|d| d.scale).max().unwrap_or(*scale);
            ArrowType::Decimal128(38, scale as i8)
        }
        Value::String(_) => ArrowType::Utf8,
        Value::Binary(_) => ArrowType::Binary,
        Value::Date(_) => ArrowType::Date32,
        Value::Time(_) => ArrowType::Time64(TimeUnit::Nanosecond),
        Value::Timestamp(_) => nanos_timestamp_type(false),
        Value::TimestampLtz(_) => nanos_timestamp_type(true),
        Value::IntervalYearMonth(_) => ArrowType::Interval(arrow_schema::IntervalUnit::YearMonth),
        Value::IntervalDayTime(_) => ArrowType::Duration(TimeUnit::Millisecond),
        Value::Array(_) => {
            let elements: Vec<&Value> = values
                .iter()
                .filter_map(|v| if let Value::Array(a) = v { Some(a.iter()) } else { None })
                .flatten()
                .collect();
            list_type(infer_type(&elements))
        }
        Value::Map(_) => {
            let entries: Vec<&(Value, Value)> = values
                .iter()
                .filter_map(|v| if let Value::Map(m) = v { Some(m.iter()) } else { None })
                .flatten()
                .collect();
            let keys: Vec<&Value> = entries.iter().map(|(k, _)| k).collect();
            let vals: Vec<&Value> = entries.iter().map(|(_, v)| v).collect();
            map_type(infer_type(&keys), infer_type(&vals))
        }
        Value::Row(first_row) => {
            let fields: Fields = (0..first_row.len())
                .map(|i| {
                    let column: Vec<&Value> =
                        values.iter().filter_map(|v| if let Value::Row(r) = v { r.get(i) } else { None }).collect();
                    ArrowField::new(format!("f{i}"), infer_type(&column), true)
                })
                .collect();
            ArrowType::Struct(fields)
        }
    }
}

/// The one type that holds a column of numbers of several types exactly where it can: the
/// widest integer for integers, DECIMAL for integers and decimals, DOUBLE once a float is among
/// them (FLOAT when all are). `None` when the column holds one type only, or something else.
fn numeric_type(values: &[&Value]) -> Option<ArrowType> {
    let (mut widest, mut floats, mut doubles, mut decimals, mut kinds) = (0u8, false, false, false, 0u8);
    let mut seen = [false; 6];
    for v in values.iter().filter(|v| !v.is_null()) {
        let kind = match v {
            Value::TinyInt(_) => 0,
            Value::SmallInt(_) => 1,
            Value::Int(_) => 2,
            Value::BigInt(_) => 3,
            Value::Float(_) => 4,
            Value::Double(_) => 5,
            Value::Decimal { .. } => {
                decimals = true;
                continue;
            }
            _ => return None,
        };
        if !seen[kind] {
            seen[kind] = true;
            kinds += 1;
        }
        match kind {
            4 => floats = true,
            5 => doubles = true,
            k => widest = widest.max(k as u8),
        }
    }
    let mixed = kinds + u8::from(decimals) > 1;
    if !mixed {
        return None;
    }
    Some(if doubles || (floats && (kinds > 1 || decimals)) {
        ArrowType::Float64
    } else if floats {
        ArrowType::Float32
    } else if decimals {
        let scale = values.iter().filter_map(|v| v.as_decimal()).map(|d| d.scale).max().unwrap_or(0);
        ArrowType::Decimal128(38, scale as i8)
    } else {
        [ArrowType::Int8, ArrowType::Int16, ArrowType::Int32, ArrowType::Int64][widest as usize].clone()
    })
}

fn primitive<T: ArrowPrimitiveType>(
    ty: &ArrowType,
    values: &[&Value],
    read: impl Fn(&Value) -> Option<T::Native>,
) -> Result<ArrayRef, ConversionError> {
    Ok(Arc::new(primitive_array::<T>(ty, values, read)?))
}

fn primitive_array<T: ArrowPrimitiveType>(
    ty: &ArrowType,
    values: &[&Value],
    read: impl Fn(&Value) -> Option<T::Native>,
) -> Result<arrow_array::PrimitiveArray<T>, ConversionError> {
    let mut b = PrimitiveBuilder::<T>::with_capacity(values.len());
    for v in values {
        if v.is_null() {
            b.append_null();
        } else {
            b.append_value(read(v).ok_or_else(|| misfit(v, ty))?);
        }
    }
    Ok(b.finish())
}

/// A DECIMAL (or integer) value's unscaled integer at `scale`, when exact.
pub(super) fn rescaled(v: &Value, scale: i8) -> Option<i128> {
    let (unscaled, from) = match v.as_decimal() {
        Some(d) => (d.unscaled, d.scale as i8),
        None => (i128::from(v.as_i64()?), 0),
    };
    match scale - from {
        0 => Some(unscaled),
        up if up > 0 => unscaled.checked_mul(10i128.checked_pow(up as u32)?),
        down => {
            let factor = 10i128.checked_pow(down.unsigned_abs() as u32)?;
            (unscaled % factor == 0).then(|| unscaled / factor)
        }
    }
}

/// An integer value in a column of native type `T`, when it fits.
pub(super) fn int_of<T: TryFrom<i64>>(v: &Value) -> Option<T> {
    v.as_i64().and_then(|x| T::try_from(x).ok())
}

/// A number in a DOUBLE column.
pub(super) fn float64_of(v: &Value) -> Option<f64> {
    match v {
        Value::Double(x) => Some(*x),
        Value::Float(x) => Some(f64::from(*x)),
        Value::Decimal { .. } => v.as_f64(),
        _ => v.as_i64().map(|x| x as f64),
    }
}

/// A DATE in a Date32 column.
pub(super) fn date_of(v: &Value) -> Option<i32> {
    match v {
        Value::Date(d) => Some(*d),
        _ => None,
    }
}

/// A TIMESTAMP (or, `ltz`, a TIMESTAMP_LTZ) in a microsecond column.
pub(super) fn timestamp_micros_of(v: &Value, ltz: bool) -> Option<i64> {
    match (v, ltz) {
        (Value::Timestamp(t), false) | (Value::TimestampLtz(t), true) => micros_of(*t),
        _ => None,
    }
}

/// A timestamp in microseconds, when it has no digits below the microsecond and fits.
fn micros_of(t: Timestamp) -> Option<i64> {
    (t.nanos_of_milli % 1000 == 0).then_some(())?;
    t.millis.checked_mul(1000)?.checked_add(i64::from(t.nanos_of_milli / 1000))
}

fn nulls_of(values: &[&Value]) -> Option<NullBuffer> {
    values.iter().any(|v| v.is_null()).then(|| NullBuffer::from_iter(values.iter().map(|v| !v.is_null())))
}

fn nanos_timestamps(
    ty: &ArrowType,
    fields: &Fields,
    ltz: bool,
    values: &[&Value],
) -> Result<ArrayRef, ConversionError> {
    let mut millis = Vec::with_capacity(values.len());
    let mut nanos = Vec::with_capacity(values.len());
    for v in values {
        let t = match (v, ltz) {
            (Value::Null, _) => Timestamp::default(),
            (Value::Timestamp(t), false) | (Value::TimestampLtz(t), true) => *t,
            (other, _) => return Err(misfit(other, ty)),
        };
        millis.push(t.millis);
        nanos.push(t.nanos_of_milli as i32);
    }
    let columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(millis)), Arc::new(Int32Array::from(nanos))];
    Ok(Arc::new(StructArray::new(fields.clone(), columns, nulls_of(values))))
}

fn rows(ty: &ArrowType, fields: &Fields, values: &[&Value]) -> Result<ArrayRef, ConversionError> {
    let mut columns = Vec::with_capacity(fields.len());
    for (i, field) in fields.iter().enumerate() {
        let mut column = Vec::with_capacity(values.len());
        for v in values {
            column.push(match v {
                Value::Null => &Value::Null,
                Value::Row(r) if r.len() == fields.len() => &r[i],
                other => return Err(misfit(other, ty)),
            });
        }
        columns.push(array_from_values(field.data_type(), &column)?);
    }
    if fields.is_empty() {
        return Ok(Arc::new(StructArray::new_empty_fields(values.len(), nulls_of(values))));
    }
    Ok(Arc::new(StructArray::new(fields.clone(), columns, nulls_of(values))))
}

fn list(ty: &ArrowType, element: &Arc<ArrowField>, values: &[&Value]) -> Result<ArrayRef, ConversionError> {
    let mut lengths = Vec::with_capacity(values.len());
    let mut elements = Vec::new();
    for v in values {
        match v {
            Value::Null => lengths.push(0),
            Value::Array(a) => {
                lengths.push(a.len());
                elements.extend(a.iter());
            }
            other => return Err(misfit(other, ty)),
        }
    }
    let child = array_from_values(element.data_type(), &elements)?;
    Ok(Arc::new(ListArray::new(Arc::clone(element), OffsetBuffer::from_lengths(lengths), child, nulls_of(values))))
}

fn map(ty: &ArrowType, entries: &Arc<ArrowField>, values: &[&Value]) -> Result<ArrayRef, ConversionError> {
    let ArrowType::Struct(kv) = entries.data_type() else { return Err(misfit(&Value::Null, ty)) };
    let mut lengths = Vec::with_capacity(values.len());
    let (mut keys, mut vals) = (Vec::new(), Vec::new());
    for v in values {
        match v {
            Value::Null => lengths.push(0),
            Value::Map(m) => {
                lengths.push(m.len());
                for (k, x) in m.iter() {
                    keys.push(k);
                    vals.push(x);
                }
            }
            other => return Err(misfit(other, ty)),
        }
    }
    let key_array = array_from_values(kv[0].data_type(), &keys)?;
    let value_array = array_from_values(kv[1].data_type(), &vals)?;
    let entries_array = StructArray::new(kv.clone(), vec![key_array, value_array], None);
    let offsets = OffsetBuffer::from_lengths(lengths);
    Ok(Arc::new(ListArray::new(Arc::clone(entries), offsets, Arc::new(entries_array), nulls_of(values))))
}
