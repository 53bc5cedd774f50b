//! Reading values and types from text: `2024-01-01 10:00:00.331` as TIMESTAMP(3),
//! `410.82` as DECIMAL(10, 2), `INT NOT NULL` as a type.
//!
//! Used by text fixtures and by text formats. Errors say what could not be read as what.

use std::sync::Arc;

use crate::print::days_from_civil;
use crate::types::{DataType, LogicalType, MAX_LENGTH};
use crate::value::{Timestamp, Value, MILLIS_PER_DAY};

/// Why a text could not be read as a value or type; the message is for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

fn cannot(text: &str, what: impl std::fmt::Display) -> ParseError {
    ParseError(format!("cannot parse '{text}' as {what}"))
}

/// Reads `text` as a value of type `ty` (scalar types only; `NULL` is the caller's business).
///
/// # Errors
/// [`ParseError`] naming the text and the type when the text is not such a value.
pub fn parse_value(text: &str, ty: &DataType) -> Result<Value, ParseError> {
    let t = text.trim();
    let err = || cannot(text, &ty.logical);
    Ok(match &ty.logical {
        LogicalType::Boolean => match t.to_ascii_lowercase().as_str() {
            "true" => Value::Boolean(true),
            "false" => Value::Boolean(false),
            _ => return Err(err()),
        },
        LogicalType::TinyInt => Value::TinyInt(t.parse().map_err(|_| err())?),
        LogicalType::SmallInt => Value::SmallInt(t.parse().map_err(|_| err())?),
        LogicalType::Int => Value::Int(t.parse().map_err(|_| err())?),
        LogicalType::BigInt => Value::BigInt(t.parse().map_err(|_| err())?),
        LogicalType::Float => Value::Float(t.parse().map_err(|_| err())?),
        LogicalType::Double => Value::Double(t.parse().map_err(|_| err())?),
        LogicalType::Decimal { precision, scale } => {
            let unscaled = parse_decimal(t, *scale).ok_or_else(err)?;
            if unscaled.unsigned_abs() >= 10u128.pow(u32::from(*precision)) {
                return Err(ParseError(format!("'{text}' does not fit in {}", ty.logical)));
            }
            Value::decimal(unscaled, *scale)
        }
        LogicalType::Char(_) | LogicalType::Varchar(_) => Value::String(Arc::from(text)),
        LogicalType::Binary(_) | LogicalType::Varbinary(_) => Value::Binary(Arc::from(text.as_bytes())),
        LogicalType::Date => Value::Date(parse_date(t).ok_or_else(err)? as i32),
        LogicalType::Time(_) => Value::Time(parse_time(t).ok_or_else(err)?),
        LogicalType::Timestamp(_) => Value::Timestamp(parse_timestamp(t).ok_or_else(err)?),
        LogicalType::TimestampLtz(_) => Value::TimestampLtz(parse_timestamp(t.trim_end_matches('Z')).ok_or_else(err)?),
        LogicalType::IntervalYearMonth => Value::IntervalYearMonth(t.parse().map_err(|_| err())?),
        LogicalType::IntervalDayTime => Value::IntervalDayTime(t.parse().map_err(|_| err())?),
        LogicalType::Array(_) | LogicalType::Map(..) | LogicalType::Multiset(_) | LogicalType::Row(_) => {
            return Err(ParseError(format!("cannot read {} values from text", ty.logical)))
        }
    })
}

/// Reads a decimal number as an unscaled integer at `scale`, rounding half up as Flink does.
fn parse_decimal(text: &str, scale: u8) -> Option<i128> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    if (int_part.is_empty() && frac_part.is_empty())
        || !int_part.bytes().chain(frac_part.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let scale = usize::from(scale);
    let mut unscaled: i128 = 0;
    for b in int_part.bytes().chain(frac_part.bytes().chain(std::iter::repeat(b'0')).take(scale)) {
        unscaled = unscaled.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
    }
    if frac_part.as_bytes().get(scale).is_some_and(|d| *d >= b'5') {
        unscaled = unscaled.checked_add(1)?;
    }
    Some(if negative { -unscaled } else { unscaled })
}

/// Days since the epoch of `YYYY-MM-DD`.
pub fn parse_date(text: &str) -> Option<i64> {
    let mut parts = text.splitn(3, '-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: u32 = parts.next()?.parse().ok()?;
    let day: u32 = parts.next()?.parse().ok()?;
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => return None,
    };
    (1..=days_in_month).contains(&day).then(|| days_from_civil(year, month, day))
}

/// Nanoseconds since midnight of `HH:mm[:ss[.fraction]]`.
pub fn parse_time(text: &str) -> Option<i64> {
    let mut parts = text.splitn(3, ':');
    let hour: i64 = parts.next()?.parse().ok()?;
    let minute: i64 = parts.next()?.parse().ok()?;
    let (second, nanos) = match parts.next() {
        None => (0, 0),
        Some(s) => {
            let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
            if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let digits = frac.bytes().fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
            let nanos = digits * 10i64.pow(9 - frac.len() as u32);
            (whole.parse::<i64>().ok()?, nanos)
        }
    };
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    Some(((hour * 60 + minute) * 60 + second) * 1_000_000_000 + nanos)
}

/// A timestamp from `YYYY-MM-DD[( |T)HH:mm[:ss[.fraction]]]`.
pub fn parse_timestamp(text: &str) -> Option<Timestamp> {
    let (date, time) = match text.split_once([' ', 'T']) {
        Some((d, t)) => (d, Some(t.trim())),
        None => (text, None),
    };
    let days = parse_date(date)?;
    let nanos = time.map_or(Some(0), parse_time)?;
    Some(Timestamp { millis: days * MILLIS_PER_DAY + nanos / 1_000_000, nanos_of_milli: (nanos % 1_000_000) as u32 })
}

/// Why a text does not read as a type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeError {
    /// It is not a type weir knows.
    NotAType,
    /// A type whose parameters Flink refuses, with Flink's message
    /// (`Decimal scale must be between 0 and the precision 5 (both inclusive).`).
    InvalidParameters(String),
}

/// Reads a type as Flink writes it (see [`read_type`]).
///
/// # Errors
/// [`ParseError`] naming the text when it is not such a type, or Flink's message for parameters
/// it refuses.
pub fn parse_type(text: &str) -> Result<DataType, ParseError> {
    read_type(text).map_err(|e| match e {
        TypeError::NotAType => cannot(text, "a type"),
        TypeError::InvalidParameters(message) => ParseError(message),
    })
}

/// Reads a type as Flink writes it: `INT`, `BIGINT NOT NULL`, `DECIMAL(10, 2)`, `STRING`,
/// `VARCHAR(20)`, `TIMESTAMP(3)`, `TIMESTAMP_LTZ(3)`, `DATE`, `TIME`, `BYTES`, `BOOLEAN`, …
/// `ARRAY<t>`, `MAP<k, v>` (not ROW). A DECIMAL precision above 38 reads as 38 and a time
/// precision above 9 as 9, as Flink's parser reads them.
///
/// # Errors
/// [`TypeError::NotAType`], or [`TypeError::InvalidParameters`] for parameters Flink refuses.
pub fn read_type(text: &str) -> Result<DataType, TypeError> {
    let upper = text.trim().to_ascii_uppercase();
    let (body, nullable) = match upper.strip_suffix("NOT NULL") {
        Some(rest) => (rest.trim_end().to_string(), false),
        None => (upper.clone(), true),
    };
    let body = body.trim();
    if let Some(inner) = body.strip_prefix("ARRAY<").and_then(|r| r.strip_suffix('>')) {
        let element = read_type(inner)?;
        return Ok(DataType { logical: LogicalType::Array(Box::new(element)), nullable, time_attribute: None });
    }
    if let Some(inner) = body.strip_prefix("MULTISET<").and_then(|r| r.strip_suffix('>')) {
        let element = read_type(inner)?;
        return Ok(DataType { logical: LogicalType::Multiset(Box::new(element)), nullable, time_attribute: None });
    }
    if let Some(inner) = body.strip_prefix("MAP<").and_then(|r| r.strip_suffix('>')) {
        let comma = top_level_comma(inner).ok_or(TypeError::NotAType)?;
        let (key, value) = (read_type(&inner[..comma])?, read_type(&inner[comma + 1..])?);
        return Ok(DataType {
            logical: LogicalType::Map(Box::new(key), Box::new(value)),
            nullable,
            time_attribute: None,
        });
    }
    let (name, args) = match body.split_once('(') {
        Some((n, rest)) => {
            let inner = rest.strip_suffix(')').ok_or(TypeError::NotAType)?;
            let args: Result<Vec<u32>, _> = inner.split(',').map(|a| a.trim().parse::<u32>()).collect();
            (n.trim().to_string(), args.map_err(|_| TypeError::NotAType)?)
        }
        None => (body.trim().to_string(), Vec::new()),
    };
    // A length is a Java int in Flink's parser.
    if let Some(too_long) = args.iter().find(|&&a| a > i32::MAX as u32) {
        return Err(TypeError::InvalidParameters(format!(
            "Literal '{too_long}' can not be parsed to type 'java.lang.Integer'"
        )));
    }
    let arg = |i: usize, default: u32| args.get(i).copied().unwrap_or(default);
    let precision = |default: u32| arg(0, default).min(9) as u8;
    let logical = match name.as_str() {
        "BOOLEAN" => LogicalType::Boolean,
        "TINYINT" => LogicalType::TinyInt,
        "SMALLINT" => LogicalType::SmallInt,
        "INT" | "INTEGER" => LogicalType::Int,
        "BIGINT" => LogicalType::BigInt,
        "FLOAT" => LogicalType::Float,
        "DOUBLE" | "DOUBLE PRECISION" => LogicalType::Double,
        "DECIMAL" | "DEC" | "NUMERIC" => {
            let precision = arg(0, 10).clamp(1, 38);
            let scale = arg(1, 0);
            if scale > precision {
                return Err(TypeError::InvalidParameters(format!(
                    "Decimal scale must be between 0 and the precision {precision} (both inclusive)."
                )));
            }
            LogicalType::Decimal { precision: precision as u8, scale: scale as u8 }
        }
        "CHAR" => LogicalType::Char(arg(0, 1)),
        // SQL's `VARCHAR` without a length is `STRING` in Flink's DDL and CASTs (Calcite's
        // parser), unlike `CHAR`, whose length defaults to 1.
        "VARCHAR" => LogicalType::Varchar(arg(0, MAX_LENGTH)),
        "STRING" => LogicalType::Varchar(MAX_LENGTH),
        "BINARY" => LogicalType::Binary(arg(0, 1)),
        "VARBINARY" => LogicalType::Varbinary(arg(0, 1)),
        "BYTES" => LogicalType::Varbinary(MAX_LENGTH),
        "DATE" => LogicalType::Date,
        "TIME" => LogicalType::Time(precision(0)),
        "TIMESTAMP" => LogicalType::Timestamp(precision(6)),
        "TIMESTAMP_LTZ" => LogicalType::TimestampLtz(precision(6)),
        _ => return Err(TypeError::NotAType),
    };
    Ok(DataType { logical, nullable, time_attribute: None })
}

/// A schema from `(name, type)` pairs, types written as Flink writes them.
///
/// # Errors
/// [`ParseError`] for a type that cannot be read.
pub fn parse_schema(columns: &[(&str, &str)]) -> Result<crate::types::Schema, ParseError> {
    let fields = columns
        .iter()
        .map(|(name, ty)| parse_type(ty).map(|t| crate::types::Field::new(*name, t)))
        .collect::<Result<_, _>>()?;
    Ok(crate::types::Schema::new(fields))
}

/// Position of the first comma not inside `<…>` or `(…)`.
fn top_level_comma(text: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::print::value_to_string;

    fn round_trip(text: &str, ty: &str) -> String {
        value_to_string(&parse_value(text, &parse_type(ty).unwrap()).unwrap())
    }

    #[test]
    fn values_read_back_as_they_print() {
        assert_eq!(round_trip("2024-01-01 10:00:00.331", "TIMESTAMP(3)"), "2024-01-01T10:00:00.331");
        assert_eq!(round_trip("2024-01-01 10:00:00", "TIMESTAMP(3)"), "2024-01-01T10:00");
        assert_eq!(round_trip("410.82", "DECIMAL(10, 2)"), "410.82");
        assert_eq!(round_trip("10", "DECIMAL(10, 2)"), "10.00");
        assert_eq!(round_trip("-1.005", "DECIMAL(10, 2)"), "-1.01");
        assert_eq!(round_trip("2024-02-29", "DATE"), "2024-02-29");
        assert_eq!(round_trip("TRUE", "BOOLEAN"), "true");
        assert_eq!(round_trip("1e7", "DOUBLE"), "1.0E7");
    }

    #[test]
    fn errors_name_the_text_and_the_type() {
        let e = parse_value("abc", &parse_type("INT").unwrap()).unwrap_err();
        assert_eq!(e.to_string(), "cannot parse 'abc' as INT");
        assert!(parse_value("2024-02-30", &parse_type("DATE").unwrap()).is_err());
        assert!(parse_value("123456", &parse_type("DECIMAL(5, 2)").unwrap()).is_err());
        assert!(parse_type("WHATEVER").is_err());
    }

    #[test]
    fn types_read_as_flink_writes_them() {
        assert_eq!(parse_type("bigint not null").unwrap().to_string(), "BIGINT NOT NULL");
        assert_eq!(parse_type("DECIMAL(10, 2)").unwrap().to_string(), "DECIMAL(10, 2)");
        assert_eq!(parse_type("STRING").unwrap().to_string(), "STRING");
        assert_eq!(parse_type("TIMESTAMP(3)").unwrap().to_string(), "TIMESTAMP(3)");
        assert_eq!(parse_type("ARRAY<INT NOT NULL>").unwrap().to_string(), "ARRAY<INT NOT NULL>");
        assert_eq!(parse_type("MAP<STRING, DECIMAL(10, 2)>").unwrap().to_string(), "MAP<STRING, DECIMAL(10, 2)>");
    }
}
