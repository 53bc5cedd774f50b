//! Values as SQL text, as Flink's cast rules write them: what `CAST(x AS STRING)` gives and,
//! in [`TextStyle::Printing`], what Flink's SQL client shows in a table cell.
//!
//! The text depends on the value's type, not only on the value: a `TIMESTAMP(0)` has no
//! fraction and a `TIMESTAMP(6)` six digits, a `TIME(3)` three. Booleans are `TRUE` and
//! `FALSE`, intervals `+1-02` and `+2 03:04:05.678`, ARRAYs `[a, NULL]`, MAPs and MULTISETs
//! `{k=v}` (in the map's own order), ROWs `(1, a)`; a NULL inside any of them is `NULL`.

use std::fmt::Write;

use weir_runtime::print::{timestamp_to_sql_string, value_to_string, write_date, write_list, write_plain_decimal};
use weir_runtime::{DataType, LogicalType, Value};

/// Where the text goes: the two differ only in how bytes are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextStyle {
    /// `CAST(x AS STRING)`: bytes decoded as UTF-8.
    Cast,
    /// A cell of the SQL client's table: bytes in hexadecimal, `x'0a1b'`.
    Printing,
}

/// `value` of type `ty` as SQL text in `style`. NULL is `NULL` (callers that print NULL
/// otherwise at the top, as the SQL client's `<NULL>`, test for it first).
pub fn sql_text(value: &Value, ty: &DataType, style: TextStyle) -> String {
    let mut out = String::new();
    write_sql_text(&mut out, value, ty, style);
    out
}

/// A value as text when its type is not known (CONCAT of values of any type): as
/// [`sql_text`] with the type the value has, timestamps with milliseconds.
pub fn to_text(value: &Value) -> String {
    let ty = match value {
        Value::Timestamp(_) => DataType::timestamp(3),
        Value::TimestampLtz(_) => DataType::new(LogicalType::TimestampLtz(3)),
        Value::Time(_) => DataType::new(LogicalType::Time(0)),
        _ => return untyped_text(value),
    };
    sql_text(value, &ty, TextStyle::Cast)
}

fn untyped_text(value: &Value) -> String {
    match value {
        Value::Boolean(b) => (if *b { "TRUE" } else { "FALSE" }).to_string(),
        Value::Decimal { .. } => {
            let mut out = String::new();
            if let Some(d) = value.as_decimal() {
                write_plain_decimal(&mut out, d);
            }
            out
        }
        other => value_to_string(other),
    }
}

fn write_sql_text(out: &mut String, value: &Value, ty: &DataType, style: TextStyle) {
    match (value, &ty.logical) {
        (Value::Null, _) => out.push_str("NULL"),
        (Value::Boolean(b), _) => out.push_str(if *b { "TRUE" } else { "FALSE" }),
        (Value::Timestamp(t) | Value::TimestampLtz(t), LogicalType::Timestamp(p) | LogicalType::TimestampLtz(p)) => {
            out.push_str(&timestamp_to_sql_string(*t, *p))
        }
        (Value::Time(nanos), LogicalType::Time(p)) => write_time(out, *nanos, *p),
        (Value::Date(days), _) => write_date(out, *days),
        (Value::Decimal { .. }, _) => {
            if let Some(d) = value.as_decimal() {
                write_plain_decimal(out, d);
            }
        }
        (Value::Binary(bytes), _) => match style {
            TextStyle::Cast => out.push_str(&String::from_utf8_lossy(bytes)),
            TextStyle::Printing => {
                out.push_str("x'");
                for b in bytes.iter() {
                    let _ = write!(out, "{b:02x}");
                }
                out.push('\'');
            }
        },
        (Value::IntervalYearMonth(months), _) => {
            let sign = if *months < 0 { '-' } else { '+' };
            let m = months.unsigned_abs();
            let _ = write!(out, "{sign}{}-{:02}", m / 12, m % 12);
        }
        (Value::IntervalDayTime(millis), _) => {
            let sign = if *millis < 0 { '-' } else { '+' };
            let ms = millis.unsigned_abs();
            let (days, rest) = (ms / 86_400_000, ms % 86_400_000);
            let (h, m, s, f) = (rest / 3_600_000, rest / 60_000 % 60, rest / 1000 % 60, rest % 1000);
            let _ = write!(out, "{sign}{days} {h:02}:{m:02}:{s:02}.{f:03}");
        }
        (Value::Array(items), LogicalType::Array(element)) => {
            write_list(out, '[', ']', items.iter(), |out, item| write_sql_text(out, item, element, style))
        }
        (Value::Map(entries), LogicalType::Map(key, value)) => write_entries(out, entries, key, value, style),
        (Value::Map(entries), LogicalType::Multiset(element)) => {
            write_entries(out, entries, element, &DataType::int().not_null(), style)
        }
        (Value::Row(values), LogicalType::Row(fields)) if values.len() == fields.len() => {
            write_list(out, '(', ')', values.iter().zip(fields), |out, (v, f)| {
                write_sql_text(out, v, &f.data_type, style)
            })
        }
        (other, _) => out.push_str(&untyped_text(other)),
    }
}

fn write_entries(out: &mut String, entries: &[(Value, Value)], key: &DataType, value: &DataType, style: TextStyle) {
    write_list(out, '{', '}', entries.iter(), |out, (k, v)| {
        write_sql_text(out, k, key, style);
        out.push('=');
        write_sql_text(out, v, value, style);
    })
}

/// `HH:mm:ss` and `precision` digits of fraction.
fn write_time(out: &mut String, nanos: i64, precision: u8) {
    let secs = nanos / 1_000_000_000;
    let _ = write!(out, "{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if precision > 0 {
        let fraction = format!("{:09}", nanos % 1_000_000_000);
        let _ = write!(out, ".{}", &fraction[..usize::from(precision.min(9))]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use weir_runtime::parse::parse_type;
    use weir_runtime::Timestamp;

    fn text(v: Value, ty: &str) -> String {
        sql_text(&v, &parse_type(ty).unwrap(), TextStyle::Cast)
    }

    /// The texts Flink 2.3 gives for `CAST(… AS STRING)` of the same values.
    #[test]
    fn casts_write_what_flink_writes() {
        let ts = Timestamp::from_millis(1_704_103_200_500);
        assert_eq!(text(Value::Timestamp(ts), "TIMESTAMP(0)"), "2024-01-01 10:00:00");
        assert_eq!(text(Value::Timestamp(ts), "TIMESTAMP(1)"), "2024-01-01 10:00:00.5");
        assert_eq!(text(Value::Timestamp(ts), "TIMESTAMP(3)"), "2024-01-01 10:00:00.500");
        assert_eq!(text(Value::Time(36_001_123_000_000), "TIME(3)"), "10:00:01.123");
        assert_eq!(text(Value::Time(36_001_000_000_000), "TIME(0)"), "10:00:01");
        assert_eq!(text(Value::Binary(Arc::from(&b"AB"[..])), "BYTES"), "AB");
        let interval = |v: Value, ty: LogicalType| sql_text(&v, &DataType::new(ty), TextStyle::Cast);
        assert_eq!(interval(Value::IntervalYearMonth(14), LogicalType::IntervalYearMonth), "+1-02");
        assert_eq!(interval(Value::IntervalYearMonth(-3), LogicalType::IntervalYearMonth), "-0-03");
        assert_eq!(interval(Value::IntervalDayTime(183_845_678), LogicalType::IntervalDayTime), "+2 03:04:05.678");
        assert_eq!(interval(Value::IntervalDayTime(-7_200_000), LogicalType::IntervalDayTime), "-0 02:00:00.000");
        let row = Value::Row(Arc::from(vec![Value::Int(1), Value::Null, Value::Boolean(true)]));
        let fields = vec![
            weir_runtime::Field::new("a", DataType::int()),
            weir_runtime::Field::new("b", DataType::string()),
            weir_runtime::Field::new("c", DataType::boolean()),
        ];
        let row_type = DataType::new(LogicalType::Row(fields));
        assert_eq!(sql_text(&row, &row_type, TextStyle::Cast), "(1, NULL, TRUE)");
        let nested = Value::Array(Arc::from(vec![Value::Array(Arc::from(vec![Value::Int(1)])), Value::Null]));
        assert_eq!(text(nested, "ARRAY<ARRAY<INT>>"), "[[1], NULL]");
        let map = Value::Map(Arc::from(vec![(Value::string("k2"), Value::Int(1)), (Value::string("k1"), Value::Null)]));
        assert_eq!(text(map, "MAP<STRING, INT>"), "{k2=1, k1=NULL}");
        assert_eq!(text(Value::Double(1e10), "DOUBLE"), "1.0E10");
    }

    #[test]
    fn the_sql_client_writes_bytes_in_hexadecimal() {
        let bytes = Value::Array(Arc::from(vec![Value::Binary(Arc::from(&b"AB"[..]))]));
        assert_eq!(sql_text(&bytes, &parse_type("ARRAY<BYTES>").unwrap(), TextStyle::Printing), "[x'4142']");
    }
}
