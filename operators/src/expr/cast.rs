//! CAST between SQL types, as Flink casts: numbers round half up into DECIMAL (NULL when the
//! value does not fit), strings are trimmed and parsed, timestamps print with their precision.

use std::sync::Arc;

use weir_runtime::parse::parse_value;
use weir_runtime::print::value_to_string;
use weir_runtime::{DataType, LogicalType, Timestamp, Value};

use super::text::{sql_text, TextStyle};
use crate::aggregate::numeric::{integer, rescale, unscaled_at};

/// Casts `v`, of type `from`, to `ty`. `Err` carries Flink-like text for a value that cannot
/// be cast (CAST fails the job with it, TRY_CAST makes it NULL). To a string, a value is
/// written as [`sql_text`] writes its type.
pub fn cast(v: &Value, from: &DataType, ty: &DataType) -> Result<Value, String> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let fail = || format!("Cannot cast '{}' to {}.", value_to_string(v), ty.logical);
    let text = || sql_text(v, from, TextStyle::Cast);
    Ok(match (&ty.logical, v) {
        (LogicalType::Char(n), _) => Value::String(Arc::from(fit_chars(text(), *n, true))),
        (LogicalType::Varchar(n), _) => Value::String(Arc::from(fit_chars(text(), *n, false))),
        (LogicalType::Binary(n), Value::Binary(b)) => Value::Binary(fit_bytes(b, *n, true)),
        (LogicalType::Varbinary(n), Value::Binary(b)) => Value::Binary(fit_bytes(b, *n, false)),
        // A string's UTF-8 bytes, cut or padded to the length as Flink's CAST does.
        (LogicalType::Binary(n), Value::String(s)) => Value::Binary(fit_bytes(&Arc::from(s.as_bytes()), *n, true)),
        (LogicalType::Varbinary(n), Value::String(s)) => Value::Binary(fit_bytes(&Arc::from(s.as_bytes()), *n, false)),
        (_, Value::String(s)) => match parse_value(s.trim(), ty) {
            Ok(v) => v,
            Err(_) => lenient_parse(s.trim(), ty).ok_or_else(fail)?,
        },
        (LogicalType::Boolean, _) => match v {
            Value::Boolean(b) => Value::Boolean(*b),
            _ => Value::Boolean(v.as_f64().ok_or_else(fail)? != 0.0),
        },
        (LogicalType::TinyInt | LogicalType::SmallInt | LogicalType::Int | LogicalType::BigInt, _) => {
            let n = match v {
                Value::Float(_) | Value::Double(_) => return Ok(float_to_integer(v.as_f64().ok_or_else(fail)?, ty)),
                Value::Decimal { .. } => {
                    let d = v.as_decimal().ok_or_else(fail)?;
                    (d.unscaled / 10i128.pow(u32::from(d.scale))) as i64
                }
                Value::Boolean(b) => i64::from(*b),
                _ => v.as_i64().ok_or_else(fail)?,
            };
            integer(n, ty)
        }
        (LogicalType::Float | LogicalType::Double | LogicalType::Decimal { .. }, Value::Boolean(b)) => {
            return cast(&Value::Int(i32::from(*b)), &DataType::int(), ty);
        }
        (LogicalType::Float, _) => Value::Float(v.as_f64().ok_or_else(fail)? as f32),
        (LogicalType::Double, _) => Value::Double(v.as_f64().ok_or_else(fail)?),
        (LogicalType::Decimal { precision, scale }, _) => {
            let unscaled = match v {
                Value::Float(_) | Value::Double(_) => {
                    let f = v.as_f64().ok_or_else(fail)?;
                    if !f.is_finite() {
                        return Ok(Value::Null);
                    }
                    let Some(unscaled) = unscaled_of_double(f, *scale) else { return Ok(Value::Null) };
                    unscaled
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
            let from = match &from.logical {
                LogicalType::Array(e) => e,
                _ => return Err(fail()),
            };
            Value::Array(items.iter().map(|item| cast(item, from, element)).collect::<Result<Vec<_>, _>>()?.into())
        }
        (LogicalType::Map(key, value), Value::Map(entries)) => {
            let LogicalType::Map(from_key, from_value) = &from.logical else { return Err(fail()) };
            Value::Map(
                entries
                    .iter()
                    .map(|(k, x)| Ok((cast(k, from_key, key)?, cast(x, from_value, value)?)))
                    .collect::<Result<Vec<_>, String>>()?
                    .into(),
            )
        }
        (LogicalType::Multiset(element), Value::Map(entries)) => {
            let LogicalType::Multiset(from) = &from.logical else { return Err(fail()) };
            Value::Map(
                entries
                    .iter()
                    .map(|(k, n)| Ok((cast(k, from, element)?, n.clone())))
                    .collect::<Result<Vec<_>, String>>()?
                    .into(),
            )
        }
        (LogicalType::Row(fields), Value::Row(values)) if fields.len() == values.len() => {
            let LogicalType::Row(from) = &from.logical else { return Err(fail()) };
            Value::Row(
                values
                    .iter()
                    .zip(from.iter().zip(fields))
                    .map(|(x, (s, f))| cast(x, &s.data_type, &f.data_type))
                    .collect::<Result<Vec<_>, _>>()?
                    .into(),
            )
        }
        _ => return Err(fail()),
    })
}

/// A floating-point number narrowed to an integer type as Java's `(int)`, `(short)`, `(byte)`
/// and `(long)` casts narrow it (Flink's generated code casts so): NaN is 0, a value out of
/// range saturates at INT's (or BIGINT's) bounds, and SMALLINT and TINYINT keep the low bits of
/// that INT.
fn float_to_integer(f: f64, ty: &DataType) -> Value {
    let int = f as i32;
    match ty.logical {
        LogicalType::TinyInt => Value::TinyInt(int as i8),
        LogicalType::SmallInt => Value::SmallInt(int as i16),
        LogicalType::Int => Value::Int(int),
        _ => Value::BigInt(f as i64),
    }
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

/// `unscaled` at `from` digits moved to `to` digits, half up (for ROUND and friends).
pub fn round_decimal(unscaled: i128, from: u8, to: u8) -> i128 {
    rescale(unscaled, from, to)
}

/// What Flink's CAST also reads from a string that is no literal of `ty`: a number with a
/// fraction into an integer type (cut toward zero), and a date that is only a year, a year and
/// month, or a date followed by a time.
fn lenient_parse(s: &str, ty: &DataType) -> Option<Value> {
    match ty.logical {
        LogicalType::TinyInt | LogicalType::SmallInt | LogicalType::Int | LogicalType::BigInt => {
            let number: f64 = s.parse().ok().filter(|f: &f64| f.is_finite())?;
            let whole = number.trunc();
            let (min, max) = match ty.logical {
                LogicalType::TinyInt => (f64::from(i8::MIN), f64::from(i8::MAX)),
                LogicalType::SmallInt => (f64::from(i16::MIN), f64::from(i16::MAX)),
                LogicalType::Int => (f64::from(i32::MIN), f64::from(i32::MAX)),
                _ => (i64::MIN as f64, i64::MAX as f64),
            };
            (min..=max).contains(&whole).then(|| integer(whole as i64, ty))
        }
        LogicalType::Date => {
            let date = s.split([' ', 'T']).next()?;
            let mut parts = date.splitn(3, '-');
            let year: i64 = parts.next()?.parse().ok()?;
            let month: u32 = parts.next().map_or(Some(1), |m| m.parse().ok())?;
            let day: u32 = parts.next().map_or(Some(1), |d| d.parse().ok())?;
            let text = format!("{year:04}-{month:02}-{day:02}");
            weir_runtime::parse::parse_date(&text).map(|d| Value::Date(d as i32))
        }
        _ => None,
    }
}

/// Flink's refusal of a CAST (and TRY_CAST) between types it cannot convert, at planning:
/// `None` when the cast is allowed.
pub fn refused_cast(from: &DataType, to: &DataType) -> Option<String> {
    use LogicalType as L;
    let numeric =
        |t: &L| matches!(t, L::TinyInt | L::SmallInt | L::Int | L::BigInt | L::Float | L::Double | L::Decimal { .. });
    let temporal = |t: &L| matches!(t, L::Date | L::Time(_));
    let timestamp = |t: &L| matches!(t, L::Timestamp(_) | L::TimestampLtz(_));
    let binary = |t: &L| matches!(t, L::Binary(_) | L::Varbinary(_));
    let (f, t) = (&from.logical, &to.logical);
    if numeric(f) && timestamp(t) {
        return Some(
            "The cast from NUMERIC type to TIMESTAMP type is not allowed. It's recommended to use \
             TO_TIMESTAMP(FROM_UNIXTIME(numeric_col)) instead, note the numeric is in seconds."
                .into(),
        );
    }
    let refused = ((numeric(f) || matches!(f, L::Boolean)) && (temporal(t) || binary(t)))
        || (matches!(f, L::Boolean) && timestamp(t));
    refused.then(|| {
        format!(
            "Cast function cannot convert value of type {} to type {}",
            super::types::calcite_name(f),
            super::types::calcite_name(t)
        )
    })
}

/// `f` as an unscaled DECIMAL at `scale`, as Flink casts a DOUBLE (and a FLOAT, widened) to a
/// DECIMAL: from the shortest decimal that reads back as `f` (Java's `BigDecimal.valueOf`, which
/// reads `Double.toString`), rounded half up to `scale`. `None` when it does not fit in 128 bits.
pub(crate) fn unscaled_of_double(f: f64, scale: u8) -> Option<i128> {
    let text = format!("{:e}", f.abs());
    let (mantissa, exponent) = text.split_once('e')?;
    let exponent: i32 = exponent.parse().ok()?;
    let digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).map(|b| b - b'0').collect();
    // The value is 0.d1d2… × 10^(exponent + 1); keep the digits down to 10^-scale.
    let kept = exponent + 1 + i32::from(scale);
    let mut unscaled: i128 = 0;
    for i in 0..kept.max(0) {
        let digit = digits.get(i as usize).copied().unwrap_or(0);
        unscaled = unscaled.checked_mul(10)?.checked_add(i128::from(digit))?;
    }
    let next = usize::try_from(kept).ok().and_then(|i| digits.get(i).copied()).unwrap_or(0);
    if kept >= 0 && next >= 5 {
        unscaled = unscaled.checked_add(1)?;
    }
    Some(if f < 0.0 { -unscaled } else { unscaled })
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::parse::parse_type;

    fn c(v: Value, from: &str, to: &str) -> Result<String, String> {
        cast(&v, &parse_type(from).unwrap(), &parse_type(to).unwrap()).map(|v| value_to_string(&v))
    }

    /// A DOUBLE becomes a DECIMAL through its shortest decimal (Java's `BigDecimal.valueOf`), not
    /// its binary value: `0.7071067811865476` at scale 18 is `0.707106781186547600`.
    #[test]
    fn a_double_casts_to_decimal_from_its_shortest_digits() {
        let d = |f: f64, to: &str| c(Value::Double(f), "DOUBLE", to).unwrap();
        assert_eq!(d(std::f64::consts::FRAC_1_SQRT_2, "DECIMAL(38, 18)"), "0.707106781186547600");
        assert_eq!(d(1.0416666666666667, "DECIMAL(38, 18)"), "1.041666666666666700");
        assert_eq!(d(2.5, "DECIMAL(3, 0)"), "3");
        assert_eq!(d(-2.5, "DECIMAL(3, 0)"), "-3");
        assert_eq!(d(0.125, "DECIMAL(5, 2)"), "0.13");
        assert_eq!(d(5e-19, "DECIMAL(38, 18)"), "1E-18");
        assert_eq!(d(4e-20, "DECIMAL(38, 18)"), "0E-18");
        assert_eq!(d(1.2345678901234567e19, "DECIMAL(38, 18)"), "12345678901234567000.000000000000000000");
        assert_eq!(d(1e30, "DECIMAL(38, 18)"), "null");
        assert_eq!(c(Value::Float(0.1), "FLOAT", "DECIMAL(20, 18)").unwrap(), "0.100000001490116120");
    }

    #[test]
    fn casts_follow_flink() {
        assert_eq!(c(Value::Int(7), "INT", "STRING"), Ok("7".into()));
        assert_eq!(c(Value::decimal(41749, 2), "DECIMAL(5, 2)", "STRING"), Ok("417.49".into()));
        assert_eq!(c(Value::string(" 417.49 "), "STRING", "DECIMAL(12, 4)"), Ok("417.4900".into()));
        assert_eq!(c(Value::string("abc"), "STRING", "INT"), Err("Cannot cast 'abc' to INT.".into()));
        assert_eq!(c(Value::decimal(12345, 1), "DECIMAL(5, 1)", "DECIMAL(3, 1)"), Ok("null".into()));
        assert_eq!(c(Value::decimal(41749, 2), "DECIMAL(5, 2)", "INT"), Ok("417".into()));
        assert_eq!(c(Value::Int(5), "INT", "DOUBLE"), Ok("5.0".into()));
        assert_eq!(c(Value::Boolean(true), "BOOLEAN", "STRING"), Ok("TRUE".into()));
        assert_eq!(c(Value::Double(2.5), "DOUBLE", "DECIMAL(5, 0)"), Ok("3".into()));
        let ts = Value::Timestamp(weir_runtime::parse::parse_timestamp("2024-01-01 10:00:00.5").unwrap());
        assert_eq!(c(ts.clone(), "TIMESTAMP(3)", "STRING"), Ok("2024-01-01 10:00:00.500".into()));
        assert_eq!(c(ts, "TIMESTAMP(1)", "STRING"), Ok("2024-01-01 10:00:00.5".into()));
        assert_eq!(c(Value::Binary(std::sync::Arc::from(&b"AB"[..])), "BYTES", "STRING"), Ok("AB".into()));
    }

    /// Java's narrowing: `(int) 3e9` is INT's maximum, `(short)` and `(byte)` keep that INT's
    /// low bits, NaN is 0.
    #[test]
    fn floats_narrow_to_integers_as_java_casts() {
        assert_eq!(c(Value::Double(3e9), "DOUBLE", "INT"), Ok("2147483647".into()));
        assert_eq!(c(Value::Double(-3e9), "DOUBLE", "INT"), Ok("-2147483648".into()));
        assert_eq!(c(Value::Double(3e9), "DOUBLE", "SMALLINT"), Ok("-1".into()));
        assert_eq!(c(Value::Double(70_000.7), "DOUBLE", "SMALLINT"), Ok("4464".into()));
        assert_eq!(c(Value::Double(300.0), "DOUBLE", "TINYINT"), Ok("44".into()));
        assert_eq!(c(Value::Double(1e30), "DOUBLE", "BIGINT"), Ok("9223372036854775807".into()));
        assert_eq!(c(Value::Double(f64::NAN), "DOUBLE", "INT"), Ok("0".into()));
        assert_eq!(c(Value::Float(-2.9), "FLOAT", "INT"), Ok("-2".into()));
    }

    #[test]
    fn strings_cast_to_binary_are_cut_or_padded() {
        let bytes =
            |s: &str, to: &str| match cast(&Value::string(s), &parse_type("STRING").unwrap(), &parse_type(to).unwrap())
            {
                Ok(Value::Binary(b)) => b.to_vec(),
                other => panic!("{other:?}"),
            };
        assert_eq!(bytes("abcdef", "BINARY(2)"), b"ab");
        assert_eq!(bytes("a", "BINARY(3)"), b"a\0\0");
        assert_eq!(bytes("abcdef", "VARBINARY(4)"), b"abcd");
        assert_eq!(bytes("ab", "VARBINARY(4)"), b"ab");
    }
}
