//! Per-field generators of the `datagen` connector and the options that configure them.
//!
//! Options are `fields.<name>.<option>`; nested types use `fields.<name>.element.*` (ARRAY),
//! `fields.<name>.key.*` / `value.*` (MAP) and `fields.<name>.<nested>.*` (ROW). Which options
//! a field accepts depends on its type and kind, exactly as in Flink; every one a field could
//! take is declared, so an unknown one is reported with the supported list.

use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::Rng;
use weir_runtime::value::MILLIS_PER_DAY;
use weir_runtime::{DataType, LogicalType, Timestamp, Value};

use crate::error::{Error, Result};
use crate::options::{invalid, TableOptions};

/// Default length of random strings and bytes.
const RANDOM_STRING_LENGTH: u32 = 100;
/// Default number of elements of random arrays and maps.
const RANDOM_COLLECTION_LENGTH: u32 = 3;

/// How one field's values are made.
#[derive(Debug, Clone)]
pub(crate) enum FieldGenerator {
    /// Random values, NULL with probability `null_rate`.
    Random { kind: RandomKind, null_rate: f32 },
    /// `start + n` for the n-th row (0-based, counted over all subtasks).
    Sequence { start: i64, end: i64, ty: DataType },
    /// The current date, time or timestamp (the types a sequence cannot count).
    Now(DataType),
}

/// The shape of a random field.
#[derive(Debug, Clone)]
pub(crate) enum RandomKind {
    Boolean,
    Integer { min: i64, max: i64, ty: DataType },
    Float { min: f32, max: f32 },
    Double { min: f64, max: f64 },
    Decimal { min: f64, max: f64, precision: u8, scale: u8 },
    String { length: u32, var_len: bool },
    Bytes { length: u32, var_len: bool },
    Timestamp { max_past_millis: i64, ltz: bool },
    Array { element: Box<FieldGenerator>, length: u32 },
    Map { key: Box<FieldGenerator>, value: Box<FieldGenerator>, length: u32 },
    Row(Vec<FieldGenerator>),
}

/// Reads the options of the field `name` of type `ty` and builds its generator.
pub(crate) fn field_generator(name: &str, ty: &DataType, options: &mut TableOptions) -> Result<FieldGenerator> {
    let kind_key = format!("fields.{name}.kind");
    match options.one_of(&kind_key, &["random", "sequence"], "random")? {
        "sequence" => sequence_generator(name, ty, options),
        _ => random_generator(name, ty, options),
    }
}

fn key(name: &str, option: &str) -> String {
    format!("fields.{name}.{option}")
}

fn null_rate(name: &str, options: &mut TableOptions) -> Result<f32> {
    let k = key(name, "null-rate");
    match options.parse::<f32>(&k, "a number between 0 and 1")? {
        None => Ok(0.0),
        Some(r) if (0.0..=1.0).contains(&r) => Ok(r),
        Some(r) => Err(invalid(&k, &r.to_string(), "a number between 0 and 1")),
    }
}

fn length(name: &str, default: u32, options: &mut TableOptions) -> Result<u32> {
    let k = key(name, "length");
    match options.parse::<u32>(&k, "a positive integer")? {
        None => Ok(default),
        Some(0) => Err(invalid(&k, "0", "a positive integer")),
        Some(n) => Ok(n),
    }
}

/// Reads `min` and `max` as `T`, defaulting to the type's range; min must not exceed max.
fn bounds<T>(name: &str, options: &mut TableOptions, default: (T, T), expected: &str) -> Result<(T, T)>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    let min = options.parse::<T>(&key(name, "min"), expected)?.unwrap_or(default.0);
    let max = options.parse::<T>(&key(name, "max"), expected)?.unwrap_or(default.1);
    if min > max {
        return Err(Error::Validation(format!(
            "The value of 'fields.{name}.min' ({min}) must not be greater than 'fields.{name}.max' ({max})."
        )));
    }
    Ok((min, max))
}

fn random_generator(name: &str, ty: &DataType, options: &mut TableOptions) -> Result<FieldGenerator> {
    let integer = |options: &mut TableOptions, lo: i64, hi: i64| -> Result<RandomKind> {
        let (min, max) = bounds(name, options, (lo, hi), &format!("an integer between {lo} and {hi}"))?;
        if min < lo || max > hi {
            let k = key(name, if min < lo { "min" } else { "max" });
            let v = if min < lo { min } else { max };
            return Err(invalid(&k, &v.to_string(), &format!("an integer between {lo} and {hi}")));
        }
        Ok(RandomKind::Integer { min, max, ty: ty.clone() })
    };
    let kind = match &ty.logical {
        LogicalType::Boolean => RandomKind::Boolean,
        LogicalType::TinyInt => integer(options, i8::MIN.into(), i8::MAX.into())?,
        LogicalType::SmallInt => integer(options, i16::MIN.into(), i16::MAX.into())?,
        LogicalType::Int => integer(options, i32::MIN.into(), i32::MAX.into())?,
        LogicalType::BigInt => integer(options, i64::MIN, i64::MAX)?,
        LogicalType::IntervalYearMonth => integer(options, 0, 120_000)?,
        LogicalType::IntervalDayTime => integer(options, i64::MIN, i64::MAX)?,
        LogicalType::Float => {
            let (min, max) = bounds(name, options, (f32::MIN_POSITIVE, f32::MAX), "a number")?;
            RandomKind::Float { min, max }
        }
        LogicalType::Double => {
            let (min, max) = bounds(name, options, (f64::MIN_POSITIVE, f64::MAX), "a number")?;
            RandomKind::Double { min, max }
        }
        LogicalType::Decimal { precision, scale } => {
            let (min, max) = bounds(name, options, (f64::MIN_POSITIVE, f64::MAX), "a number")?;
            RandomKind::Decimal { min, max, precision: *precision, scale: *scale }
        }
        LogicalType::Char(n) => RandomKind::String { length: *n, var_len: false },
        LogicalType::Varchar(n) => {
            let default = if *n == weir_runtime::types::MAX_LENGTH { RANDOM_STRING_LENGTH } else { *n };
            let length = length(name, default, options)?;
            let var_len = options.boolean(&key(name, "var-len"), false)?;
            RandomKind::String { length, var_len }
        }
        LogicalType::Binary(n) => {
            return Ok(FieldGenerator::Random {
                kind: RandomKind::Bytes { length: *n, var_len: false },
                null_rate: 0.0,
            })
        }
        LogicalType::Varbinary(n) => {
            let default = if *n == weir_runtime::types::MAX_LENGTH { RANDOM_STRING_LENGTH } else { *n };
            let length = length(name, default, options)?;
            let var_len = options.boolean(&key(name, "var-len"), false)?;
            return Ok(FieldGenerator::Random { kind: RandomKind::Bytes { length, var_len }, null_rate: 0.0 });
        }
        LogicalType::Timestamp(_) | LogicalType::TimestampLtz(_) => {
            let max_past = options.duration(&key(name, "max-past"))?.unwrap_or_default();
            let ltz = matches!(ty.logical, LogicalType::TimestampLtz(_));
            RandomKind::Timestamp { max_past_millis: max_past.as_millis() as i64, ltz }
        }
        LogicalType::Date | LogicalType::Time(_) => return Ok(FieldGenerator::Now(ty.clone())),
        LogicalType::Array(element) => {
            let element = random_generator(&format!("{name}.element"), element, options)?;
            let length = length(name, RANDOM_COLLECTION_LENGTH, options)?;
            RandomKind::Array { element: Box::new(element), length }
        }
        LogicalType::Map(k, v) => {
            let key_gen = random_generator(&format!("{name}.key"), k, options)?;
            let value_gen = random_generator(&format!("{name}.value"), v, options)?;
            let length = length(name, RANDOM_COLLECTION_LENGTH, options)?;
            RandomKind::Map { key: Box::new(key_gen), value: Box::new(value_gen), length }
        }
        // A bag is a map from each element to how often it occurs: Flink counts from 0 to 10.
        LogicalType::Multiset(element) => {
            let element = random_generator(&format!("{name}.element"), element, options)?;
            let count = RandomKind::Integer { min: 0, max: 10, ty: DataType::int().not_null() };
            let length = length(name, RANDOM_COLLECTION_LENGTH, options)?;
            let count = FieldGenerator::Random { kind: count, null_rate: 0.0 };
            RandomKind::Map { key: Box::new(element), value: Box::new(count), length }
        }
        LogicalType::Row(fields) => RandomKind::Row(
            fields
                .iter()
                .map(|f| random_generator(&format!("{name}.{}", f.name), &f.data_type, options))
                .collect::<Result<_>>()?,
        ),
    };
    let null_rate = null_rate(name, options)?;
    Ok(FieldGenerator::Random { kind, null_rate })
}

fn sequence_generator(name: &str, ty: &DataType, options: &mut TableOptions) -> Result<FieldGenerator> {
    match &ty.logical {
        LogicalType::Boolean => return Ok(FieldGenerator::Random { kind: RandomKind::Boolean, null_rate: 0.0 }),
        LogicalType::Date | LogicalType::Time(_) | LogicalType::Timestamp(_) | LogicalType::TimestampLtz(_) => {
            return Ok(FieldGenerator::Now(ty.clone()))
        }
        LogicalType::Array(_)
        | LogicalType::Map(..)
        | LogicalType::Multiset(_)
        | LogicalType::Row(_)
        | LogicalType::IntervalYearMonth
        | LogicalType::IntervalDayTime => return Err(Error::Validation(format!("Unsupported type: {ty}"))),
        _ => {}
    }
    let (start_key, end_key) = (key(name, "start"), key(name, "end"));
    for k in [&start_key, &end_key] {
        if !options.contains(k) {
            options.optional(k);
            return Err(Error::Validation(format!("Could not find required property '{k}' for sequence generator.")));
        }
    }
    let start = options.parse::<i64>(&start_key, "an integer")?.unwrap_or_default();
    let end = options.parse::<i64>(&end_key, "an integer")?.unwrap_or_default();
    if start > end {
        return Err(Error::Validation(format!(
            "The value of '{start_key}' ({start}) must not be greater than '{end_key}' ({end})."
        )));
    }
    let fits = |lo: i64, hi: i64| start >= lo && end <= hi;
    let in_range = match ty.logical {
        LogicalType::TinyInt => fits(i8::MIN.into(), i8::MAX.into()),
        LogicalType::SmallInt => fits(i16::MIN.into(), i16::MAX.into()),
        LogicalType::Int => fits(i32::MIN.into(), i32::MAX.into()),
        _ => true,
    };
    if !in_range {
        return Err(Error::Validation(format!(
            "The sequence of 'fields.{name}' ({start} to {end}) does not fit in {}.",
            ty.logical
        )));
    }
    Ok(FieldGenerator::Sequence { start, end, ty: ty.clone() })
}

impl FieldGenerator {
    /// How many values a sequence yields; `None` for endless generators.
    pub(crate) fn sequence_length(&self) -> Option<u64> {
        match self {
            FieldGenerator::Sequence { start, end, .. } => Some(end.abs_diff(*start) + 1),
            _ => None,
        }
    }

    /// The value of this field for row `n` (counted over all subtasks), at processing time `now`.
    pub(crate) fn generate(&self, rng: &mut SmallRng, n: u64, now: i64) -> Value {
        match self {
            FieldGenerator::Random { kind, null_rate } => {
                if *null_rate > 0.0 && rng.random::<f32>() < *null_rate {
                    return Value::Null;
                }
                kind.generate(rng, now)
            }
            FieldGenerator::Sequence { start, ty, .. } => sequence_value(start.wrapping_add(n as i64), ty),
            FieldGenerator::Now(ty) => now_value(ty, now),
        }
    }
}

fn sequence_value(v: i64, ty: &DataType) -> Value {
    match &ty.logical {
        LogicalType::TinyInt => Value::TinyInt(v as i8),
        LogicalType::SmallInt => Value::SmallInt(v as i16),
        LogicalType::Int => Value::Int(v as i32),
        LogicalType::Float => Value::Float(v as f32),
        LogicalType::Double => Value::Double(v as f64),
        LogicalType::Decimal { precision, scale } => {
            let unscaled = i128::from(v).checked_mul(10i128.pow(u32::from(*scale)));
            match unscaled.filter(|u| u.unsigned_abs() < 10u128.pow(u32::from(*precision))) {
                Some(u) => Value::decimal(u, *scale),
                None => Value::Null,
            }
        }
        LogicalType::Char(_) | LogicalType::Varchar(_) => Value::String(Arc::from(v.to_string())),
        LogicalType::Binary(_) | LogicalType::Varbinary(_) => Value::Binary(Arc::from(v.to_be_bytes().to_vec())),
        _ => Value::BigInt(v),
    }
}

fn now_value(ty: &DataType, now: i64) -> Value {
    match ty.logical {
        LogicalType::Date => Value::Date(now.div_euclid(MILLIS_PER_DAY) as i32),
        LogicalType::Time(_) => Value::Time(now.rem_euclid(MILLIS_PER_DAY) * 1_000_000),
        LogicalType::TimestampLtz(_) => Value::TimestampLtz(Timestamp::from_millis(now)),
        _ => Value::Timestamp(Timestamp::from_millis(now)),
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `len` random lowercase hex digits to `out`, sixteen from each 64 random bits.
pub(crate) fn push_random_hex(rng: &mut SmallRng, len: usize, out: &mut Vec<u8>) {
    let mut written = 0;
    while written < len {
        let bits: u64 = rng.random();
        let n = 16.min(len - written);
        out.extend((0..n).map(|i| HEX[((bits >> (i * 4)) & 0xf) as usize]));
        written += n;
    }
}

pub(crate) fn random_length(rng: &mut SmallRng, length: u32, var_len: bool) -> usize {
    if var_len && length > 1 {
        rng.random_range(1..length) as usize
    } else {
        length as usize
    }
}

impl RandomKind {
    fn generate(&self, rng: &mut SmallRng, now: i64) -> Value {
        match self {
            RandomKind::Boolean => Value::Boolean(rng.random()),
            RandomKind::Integer { min, max, ty } => {
                let v = rng.random_range(*min..=*max);
                match ty.logical {
                    LogicalType::TinyInt => Value::TinyInt(v as i8),
                    LogicalType::SmallInt => Value::SmallInt(v as i16),
                    LogicalType::Int => Value::Int(v as i32),
                    LogicalType::IntervalYearMonth => Value::IntervalYearMonth(v as i32),
                    LogicalType::IntervalDayTime => Value::IntervalDayTime(v),
                    _ => Value::BigInt(v),
                }
            }
            RandomKind::Float { min, max } => Value::Float(rng.random_range(*min..=*max)),
            RandomKind::Double { min, max } => Value::Double(rng.random_range(*min..=*max)),
            RandomKind::Decimal { min, max, precision, scale } => {
                let factor = 10f64.powi(i32::from(*scale));
                let bound = 10f64.powi(i32::from(*precision) - i32::from(*scale));
                let (lo, hi) = (min.max(-bound + 1.0 / factor), max.min(bound - 1.0 / factor));
                let v = if lo < hi { rng.random_range(lo..=hi) } else { lo };
                let limit = 10i128.pow(u32::from(*precision)) - 1;
                Value::decimal(((v * factor).round() as i128).clamp(-limit, limit), *scale)
            }
            RandomKind::String { length, var_len } => {
                let len = random_length(rng, *length, *var_len);
                let mut hex = Vec::with_capacity(len);
                push_random_hex(rng, len, &mut hex);
                // Hex digits are ASCII.
                Value::String(Arc::from(std::str::from_utf8(&hex).unwrap_or_default()))
            }
            RandomKind::Bytes { length, var_len } => {
                let mut bytes = vec![0u8; random_length(rng, *length, *var_len)];
                rng.fill(&mut bytes[..]);
                Value::Binary(Arc::from(bytes))
            }
            RandomKind::Timestamp { max_past_millis, ltz } => {
                let past = if *max_past_millis > 0 { rng.random_range(0..*max_past_millis) } else { 0 };
                let ts = Timestamp::from_millis(now - past);
                if *ltz {
                    Value::TimestampLtz(ts)
                } else {
                    Value::Timestamp(ts)
                }
            }
            RandomKind::Array { element, length } => {
                Value::Array((0..*length).map(|_| element.generate(rng, 0, now)).collect::<Vec<_>>().into())
            }
            RandomKind::Map { key, value, length } => {
                let mut entries: Vec<(Value, Value)> = Vec::with_capacity(*length as usize);
                for _ in 0..*length {
                    let (k, v) = (key.generate(rng, 0, now), value.generate(rng, 0, now));
                    // A repeated key keeps its latest value, as a Java map does.
                    match entries.iter_mut().find(|(existing, _)| *existing == k) {
                        Some(entry) => entry.1 = v,
                        None => entries.push((k, v)),
                    }
                }
                Value::Map(entries.into())
            }
            RandomKind::Row(fields) => {
                Value::Row(fields.iter().map(|f| f.generate(rng, 0, now)).collect::<Vec<_>>().into())
            }
        }
    }
}
