//! JSON text of values, as Flink's `JSON_ARRAYAGG` and `JSON_OBJECTAGG` write them: numbers and
//! booleans bare (numbers as Java prints them), strings quoted with JSON's escapes, NULL as
//! `null`, arrays as arrays, maps and rows as objects and arrays; every other value as the
//! string Flink prints for it.

use std::fmt::Write;

use weir_runtime::print::write_value;
use weir_runtime::Value;

/// Appends `value` to `out` as JSON.
pub(crate) fn write_json(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Boolean(_)
        | Value::TinyInt(_)
        | Value::SmallInt(_)
        | Value::Int(_)
        | Value::BigInt(_)
        | Value::Decimal { .. } => write_value(out, value),
        Value::Float(v) if v.is_finite() => write_value(out, value),
        Value::Double(v) if v.is_finite() => write_value(out, value),
        Value::String(s) => write_string(out, s),
        Value::Array(items) | Value::Row(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, item);
            }
            out.push(']');
        }
        Value::Map(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_key(out, k);
                write_json(out, v);
            }
            out.push('}');
        }
        Value::Float(_)
        | Value::Double(_)
        | Value::Binary(_)
        | Value::Date(_)
        | Value::Time(_)
        | Value::Timestamp(_)
        | Value::TimestampLtz(_)
        | Value::IntervalYearMonth(_)
        | Value::IntervalDayTime(_) => {
            let mut text = String::new();
            write_value(&mut text, value);
            write_string(out, &text);
        }
    }
}

/// Appends `"key":` for an object's entry.
pub(crate) fn write_key(out: &mut String, key: &Value) {
    match key {
        Value::String(s) => write_string(out, s),
        other => {
            let mut text = String::new();
            write_value(&mut text, other);
            write_string(out, &text);
        }
    }
    out.push(':');
}

/// Appends `text` as a JSON string.
fn write_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_as_flinks_json_functions_write_them() {
        let json = |v: &Value| {
            let mut out = String::new();
            write_json(&mut out, v);
            out
        };
        assert_eq!(json(&Value::Int(3)), "3");
        assert_eq!(json(&Value::Null), "null");
        assert_eq!(json(&Value::Boolean(true)), "true");
        assert_eq!(json(&Value::string("a\"b\\\n")), r#""a\"b\\\n""#);
        assert_eq!(json(&Value::Double(1.5)), "1.5");
        assert_eq!(json(&Value::Array(vec![Value::Int(1), Value::Null].into())), "[1,null]");
    }
}
