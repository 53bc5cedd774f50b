//! CAST between SQL types, as Flink casts: numbers round half up into DECIMAL (NULL when the
//! value does not fit), strings are trimmed and parsed, timestamps print with their precision.

use std::fmt::Write;
use std::sync::Arc;

use weir_runtime::parse::parse_value;
use weir_runtime::print::{civil_from_days, value_to_string};
use weir_runtime::{DataType, LogicalType, Timestamp, Value};

use crate::aggregate::numeric::{integer, rescale, unscaled_at};

/// Casts `v` to `ty`. `Err` carries Flink-like text for a value that cannot be cast (CAST
/// fails the job with it, TRY_CAST makes it NULL).
pub fn cast(v: &Value, ty: &DataType) -> Result<Value, String> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let fail = || format!("Cannot cast '{}' to {}.", value_to_string(v), ty.logical);
    Ok(match (&ty.logical, v) {
        (LogicalType::Char(n), _) => Value::String(Arc::from(fit_chars(to_text(v), *n, true))),
        (LogicalType::Varchar(n), _) => Value::String(Arc::from(fit_chars(to_text(v), *n, false))),
        (LogicalType::Binary(n), Value::Binary(b)) => Value::Binary(fit_bytes(b, *n, true)),
        (LogicalType::Varbinary(n), Value::Binary(b)) => Value::Binary(fit_bytes(b, *n, false)),
        (_, Value::String(s)) => parse_value(s.trim(), ty).map_err(|_| fail())?,
        (LogicalType::Boolean, _) => match v {
            Value::Boolean(b) => Value::Boolean(*b),
            _ => Value::Boolean(v.as_f64().ok_or_else(fail)? != 0.0),
        },
        (LogicalType::TinyInt | LogicalType::SmallInt | LogicalType::Int | LogicalType::BigInt, _) => {
            let n = match v {
                Value::Float(_) | Value::Double(_) => v.as_f64().ok_or_else(fail)? as i64,
                Value::Decimal { .. } => {
                    let d = v.as_decimal().ok_or_else(fail)?;
                    (d.unscaled / 10i128.pow(u32::from(d.scale))) as i64
                }
                Value::Boolean(b) => i64::from(*b),
                _ => v.as_i64().ok_or_else(fail)?,
            };
            integer(n, ty)
        }
        (LogicalType::Float, _) => Value::Float(v.as_f64().ok_or_else(fail)? as f32),
        (LogicalType::Double, _) => Value::Double(v.as_f64().ok_or_else(fail)?),
        (LogicalType::Decimal { precision, scale }, _) => {
            let unscaled = match v {
                Value::Float(_) | Value::Double(_) => {
                    let f = v.as_f64().ok_or_else(fail)? * 10f64.powi(i32::from(*scale));
                    if !f.is_finite() {
                        return Ok(Value::Null);
                    }
                    f.round() as i128
                }
                _ if v.as_i64().is_some() || v.as_decimal().is_some() => unscaled_at(v, *scale),
                _ => return Err(fail()),
            };
            if unscaled.unsigned_abs() >= 10u128.pow(u32::from(*precision)) {
                Value::Null
            } else {
                Value::decimal(unscaled, *scale)
            }
        }
        (LogicalType::Timestamp(_), Value::Timestamp(t) | Value::TimestampLtz(t)) => Value::Timestamp(*t),
        (LogicalType::TimestampLtz(_), Value::Timestamp(t) | Value::TimestampLtz(t)) => Value::TimestampLtz(*t),
        (LogicalType::Timestamp(_), Value::Date(d)) => {
            Value::Timestamp(Timestamp::from_millis(i64::from(*d) * 86_400_000))
        }
        (LogicalType::Date, Value::Timestamp(t) | Value::TimestampLtz(t)) => {
            Value::Date(t.millis.div_euclid(86_400_000) as i32)
        }
        (LogicalType::Time(_), Value::Timestamp(t)) => Value::Time(t.millis.rem_euclid(86_400_000) * 1_000_000),
        (LogicalType::Date, Value::Date(_))
        | (LogicalType::Time(_), Value::Time(_))
        | (LogicalType::IntervalYearMonth, Value::IntervalYearMonth(_))
        | (LogicalType::IntervalDayTime, Value::IntervalDayTime(_)) => v.clone(),
        // Nested values cast part by part (`ARRAY<INT>` into `ARRAY<BIGINT>`).
        (LogicalType::Array(element), Value::Array(items)) => {
            Value::Array(items.iter().map(|item| cast(item, element)).collect::<Result<Vec<_>, _>>()?.into())
        }
        (LogicalType::Map(key, value), Value::Map(entries)) => Value::Map(
            entries
                .iter()
                .map(|(k, x)| Ok((cast(k, key)?, cast(x, value)?)))
                .collect::<Result<Vec<_>, String>>()?
                .into(),
        ),
        (LogicalType::Multiset(element), Value::Map(entries)) => Value::Map(
            entries.iter().map(|(k, n)| Ok((cast(k, element)?, n.clone()))).collect::<Result<Vec<_>, String>>()?.into(),
        ),
        (LogicalType::Row(fields), Value::Row(values)) if fields.len() == values.len() => Value::Row(
            values.iter().zip(fields).map(|(x, f)| cast(x, &f.data_type)).collect::<Result<Vec<_>, _>>()?.into(),
        ),
        _ => return Err(fail()),
    })
}

/// `text` cut to `length` characters and, for CHAR (`pad`), filled up to it with spaces, as
/// Flink's CAST to CHAR(n) / VARCHAR(n) does.
fn fit_chars(text: String, length: u32, pad: bool) -> String {
    let length = length as usize;
    let count = text.chars().count();
    if count > length {
        text.chars().take(length).collect()
    } else if pad && count < length {
        let mut padded = text;
        padded.extend(std::iter::repeat_n(' ', length - count));
        padded
    } else {
        text
    }
}

/// `bytes` cut to `length` and, for BINARY (`pad`), filled up to it with zero bytes, as Flink's
/// CAST to BINARY(n) / VARBINARY(n) does.
fn fit_bytes(bytes: &Arc<[u8]>, length: u32, pad: bool) -> Arc<[u8]> {
    let length = length as usize;
    if bytes.len() > length || (pad && bytes.len() < length) {
        let mut fitted = bytes[..bytes.len().min(length)].to_vec();
        fitted.resize(if pad { length } else { fitted.len() }, 0);
        Arc::from(fitted)
    } else {
        Arc::clone(bytes)
    }
}

/// A value as text, the way `CAST(x AS STRING)` writes it: booleans as `TRUE`/`FALSE`,
/// timestamps as `2024-01-01 10:00:00.331`.
pub fn to_text(v: &Value) -> String {
    match v {
        Value::Boolean(b) => (if *b { "TRUE" } else { "FALSE" }).to_string(),
        Value::Timestamp(t) | Value::TimestampLtz(t) => timestamp_text(*t, 3),
        Value::Time(nanos) => {
            let secs = nanos / 1_000_000_000;
            format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
        }
        other => value_to_string(other),
    }
}

/// `yyyy-MM-dd HH:mm:ss` with `precision` digits of fraction.
pub fn timestamp_text(t: Timestamp, precision: u8) -> String {
    let days = t.millis.div_euclid(86_400_000);
    let ms = t.millis.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let mut s = format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60);
    if precision > 0 {
        let nanos = (ms % 1000) * 1_000_000 + i64::from(t.nanos_of_milli);
        let digits = format!("{nanos:09}");
        let _ = write!(s, ".{}", &digits[..usize::from(precision.min(9))]);
    }
    s
}

/// `unscaled` at `from` digits moved to `to` digits, half up (for ROUND and friends).
pub fn round_decimal(unscaled: i128, from: u8, to: u8) -> i128 {
    rescale(unscaled, from, to)
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::parse::parse_type;

    fn c(v: Value, t: &str) -> Result<String, String> {
        cast(&v, &parse_type(t).unwrap()).map(|v| value_to_string(&v))
    }

    #[test]
    fn casts_follow_flink() {
        assert_eq!(c(Value::Int(7), "STRING"), Ok("7".into()));
        assert_eq!(c(Value::decimal(41749, 2), "STRING"), Ok("417.49".into()));
        assert_eq!(c(Value::string(" 417.49 "), "DECIMAL(12, 4)"), Ok("417.4900".into()));
        assert_eq!(c(Value::string("abc"), "INT"), Err("Cannot cast 'abc' to INT.".into()));
        assert_eq!(c(Value::decimal(12345, 1), "DECIMAL(3, 1)"), Ok("null".into()));
        assert_eq!(c(Value::decimal(41749, 2), "INT"), Ok("417".into()));
        assert_eq!(c(Value::Int(5), "DOUBLE"), Ok("5.0".into()));
        assert_eq!(c(Value::Boolean(true), "STRING"), Ok("TRUE".into()));
        assert_eq!(c(Value::Double(2.5), "DECIMAL(5, 0)"), Ok("3".into()));
        let ts = Value::Timestamp(weir_runtime::parse::parse_timestamp("2024-01-01 10:00:00.5").unwrap());
        assert_eq!(c(ts, "STRING"), Ok("2024-01-01 10:00:00.500".into()));
    }
}
