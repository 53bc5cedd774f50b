//! Field values as text, as Flink's text formats read and write them.
//!
//! Reading: numbers are trimmed; BOOLEAN is `true` in any case and `false` for anything else
//! (Java's `Boolean.parseBoolean`); a DECIMAL that does not fit its precision is NULL
//! (`DecimalData.fromBigDecimal`); bytes are Base64. Writing: numbers as Java prints them,
//! timestamps as `2024-01-01 10:00:00.331` (or with `T` in ISO-8601 mode), fractions without
//! trailing zeros.

use std::fmt::Write;
use std::sync::Arc;

use base64::Engine;
use weir_runtime::parse::{parse_value, ParseError};
use weir_runtime::print::{civil_from_days, write_value};
use weir_runtime::{DataType, LogicalType, Timestamp, Value};

/// How timestamps are written: `'SQL'` (`2024-01-01 10:00:00`) or `'ISO-8601'` (`2024-01-01T10:00:00`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimestampStandard {
    /// A space between date and time.
    Sql,
    /// A `T` between date and time.
    Iso8601,
}

/// Reads one scalar field. `text` is the field as it stands in the record.
///
/// # Errors
/// A message saying what could not be read as what.
pub fn parse_field(text: &str, ty: &DataType) -> Result<Value, String> {
    let trimmed = text.trim();
    match &ty.logical {
        LogicalType::Boolean => Ok(Value::Boolean(trimmed.eq_ignore_ascii_case("true"))),
        LogicalType::Char(_) | LogicalType::Varchar(_) => Ok(Value::String(Arc::from(text))),
        LogicalType::Binary(_) | LogicalType::Varbinary(_) => base64::engine::general_purpose::STANDARD
            .decode(trimmed)
            .map(|b| Value::Binary(Arc::from(b)))
            .map_err(|e| format!("cannot decode '{text}' as Base64: {e}")),
        LogicalType::Decimal { .. } => match parse_value(trimmed, ty) {
            Ok(v) => Ok(v),
            Err(ParseError(msg)) if msg.contains("does not fit") => Ok(Value::Null),
            Err(e) => Err(e.to_string()),
        },
        _ => parse_value(trimmed, ty).map_err(|e| e.to_string()),
    }
}

/// Appends `value` as text: strings and numbers as they are, bytes as Base64, dates and
/// times in ISO form, timestamps per `standard`.
pub fn write_field(out: &mut String, value: &Value, standard: TimestampStandard) {
    match value {
        Value::Binary(bytes) => out.push_str(&base64::engine::general_purpose::STANDARD.encode(bytes)),
        Value::Timestamp(ts) => write_timestamp(out, *ts, standard),
        Value::TimestampLtz(ts) => {
            write_timestamp(out, *ts, standard);
            out.push('Z');
        }
        Value::Time(nanos) => write_time(out, *nanos),
        other => write_value(out, other),
    }
}

fn write_time(out: &mut String, nanos_of_day: i64) {
    let secs = nanos_of_day / 1_000_000_000;
    let _ = write!(out, "{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    let fraction = nanos_of_day % 1_000_000_000;
    if fraction != 0 {
        let digits = format!("{fraction:09}");
        let _ = write!(out, ".{}", digits.trim_end_matches('0'));
    }
}

fn write_timestamp(out: &mut String, ts: Timestamp, standard: TimestampStandard) {
    let days = ts.millis.div_euclid(86_400_000);
    let millis_of_day = ts.millis.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let _ = write!(out, "{y:04}-{m:02}-{d:02}");
    out.push(match standard {
        TimestampStandard::Sql => ' ',
        TimestampStandard::Iso8601 => 'T',
    });
    write_time(out, millis_of_day * 1_000_000 + i64::from(ts.nanos_of_milli));
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::parse::parse_type;

    fn ty(t: &str) -> DataType {
        parse_type(t).unwrap()
    }

    #[test]
    fn fields_read_as_flink_reads_them() {
        assert_eq!(parse_field(" 42 ", &ty("INT")), Ok(Value::Int(42)));
        assert_eq!(parse_field("TRUE", &ty("BOOLEAN")), Ok(Value::Boolean(true)));
        assert_eq!(parse_field("yes", &ty("BOOLEAN")), Ok(Value::Boolean(false)));
        assert_eq!(parse_field("123456.7", &ty("DECIMAL(5, 2)")), Ok(Value::Null));
        assert_eq!(parse_field(" a ", &ty("STRING")), Ok(Value::string(" a ")));
        assert_eq!(parse_field("AQL/", &ty("BYTES")), Ok(Value::Binary(Arc::from(vec![1u8, 2, 255]))));
        assert_eq!(parse_field("", &ty("INT")), Err("cannot parse '' as INT".to_string()));
    }

    #[test]
    fn timestamps_write_in_both_standards() {
        let v = parse_field("2024-01-01 10:00:02.500", &ty("TIMESTAMP(3)")).unwrap();
        let mut s = String::new();
        write_field(&mut s, &v, TimestampStandard::Sql);
        s.push('|');
        write_field(&mut s, &v, TimestampStandard::Iso8601);
        assert_eq!(s, "2024-01-01 10:00:02.5|2024-01-01T10:00:02.5");
        let mut s = String::new();
        write_field(&mut s, &parse_field("2024-01-01 10:00:00", &ty("TIMESTAMP(3)")).unwrap(), TimestampStandard::Sql);
        assert_eq!(s, "2024-01-01 10:00:00");
    }
}
