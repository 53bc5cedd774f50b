//! Printing values exactly as Flink's print connector prints them.
//!
//! Flink converts each field to its Java class and calls `toString`: numbers as Java prints
//! them (`1.0E7`, `1.0E-4`, `0.1`), DECIMAL as `BigDecimal` with its scale, timestamps as
//! `LocalDateTime` (`2024-01-01T10:00`, seconds left out when zero), `TIMESTAMP_LTZ` as
//! `Instant` (`2024-01-01T10:00:00Z`), bytes and arrays as `[…]`, maps as `{k=v}` in the order a
//! `java.util.HashMap` of them iterates ([`crate::java_hash`]), nested rows
//! as `+I[…]`, and `null`. Conformance output is compared as this text, byte for byte.

use std::fmt::Write;

use crate::java_hash::hash_map_order;
use crate::value::{Decimal, Timestamp, Value, MILLIS_PER_DAY};

/// Appends `value` to `out` as Flink prints it.
pub fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Boolean(v) => out.push_str(if *v { "true" } else { "false" }),
        Value::TinyInt(v) => write_display(out, v),
        Value::SmallInt(v) => write_display(out, v),
        Value::Int(v) => write_display(out, v),
        Value::BigInt(v) => write_display(out, v),
        Value::Float(v) => write_java_float(out, f64::from(*v), format!("{v:e}")),
        Value::Double(v) => write_java_float(out, *v, format!("{v:e}")),
        Value::Decimal { .. } => {
            if let Some(d) = value.as_decimal() {
                write_decimal(out, d);
            }
        }
        Value::String(s) => out.push_str(s),
        Value::Binary(bytes) => {
            write_list(out, '[', ']', bytes.iter(), |out, b| write_display(out, &(*b as i8)));
        }
        Value::Date(days) => write_date(out, *days),
        Value::Time(nanos) => write_time_of_day(out, *nanos, false),
        Value::Timestamp(ts) => write_timestamp(out, *ts, false),
        Value::TimestampLtz(ts) => {
            write_timestamp(out, *ts, true);
            out.push('Z');
        }
        Value::IntervalYearMonth(months) => write_period(out, *months),
        Value::IntervalDayTime(millis) => write_duration(out, *millis),
        Value::Array(items) => write_list(out, '[', ']', items.iter(), write_value),
        Value::Map(entries) => {
            // Flink prints a java.util.HashMap of the entries: in its bucket order.
            let order = hash_map_order(entries.iter().map(|(k, _)| k));
            let in_order: Box<dyn Iterator<Item = &(Value, Value)>> = match order {
                Some(order) => Box::new(order.into_iter().map(|i| &entries[i])),
                None => Box::new(entries.iter()),
            };
            write_list(out, '{', '}', in_order, |out, (k, v)| {
                write_value(out, k);
                out.push('=');
                write_value(out, v);
            })
        }
        Value::Row(fields) => {
            out.push_str("+I");
            write_list(out, '[', ']', fields.iter(), write_value);
        }
    }
}

/// `value` as Flink prints it.
///
/// ```
/// use weir_runtime::print::value_to_string;
/// use weir_runtime::{Timestamp, Value};
///
/// assert_eq!(value_to_string(&Value::Double(1.0e7)), "1.0E7");
/// assert_eq!(value_to_string(&Value::decimal(1000, 2)), "10.00");
/// assert_eq!(value_to_string(&Value::Timestamp(Timestamp::from_millis(1_704_103_202_500))), "2024-01-01T10:00:02.500");
/// ```
pub fn value_to_string(value: &Value) -> String {
    let mut s = String::new();
    write_value(&mut s, value);
    s
}

fn write_display(out: &mut String, v: &impl std::fmt::Display) {
    let _ = write!(out, "{v}");
}

/// Appends `items` between `open` and `close`, separated by `, `, each written by `each`: how
/// Java and Flink write lists, maps and rows.
pub fn write_list<T>(
    out: &mut String,
    open: char,
    close: char,
    items: impl Iterator<Item = T>,
    mut each: impl FnMut(&mut String, T),
) {
    out.push(open);
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        each(out, item);
    }
    out.push(close);
}

/// Java's `Double.toString` / `Float.toString`: the shortest digits that identify the value,
/// plain between 10^-3 and 10^7, computerized scientific notation outside.
/// `scientific` is Rust's shortest `{:e}` rendering of the same value at its own width.
pub(crate) fn write_java_float(out: &mut String, value: f64, scientific: String) {
    if value.is_nan() {
        return out.push_str("NaN");
    }
    if value.is_infinite() {
        return out.push_str(if value > 0.0 { "Infinity" } else { "-Infinity" });
    }
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if negative {
        out.push('-');
    }
    let magnitude = value.abs();
    if value == 0.0 || (1e-3..1e7).contains(&magnitude) {
        if exponent >= 0 {
            let int_len = exponent as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exponent - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        out.push('.');
        out.push_str(if digits.len() > 1 { &digits[1..] } else { "0" });
        let _ = write!(out, "E{exponent}");
    }
}

/// Java's `BigDecimal.toString`: plain with the scale's digits, scientific when the adjusted
/// exponent is below -6 (how Flink's print connector writes a DECIMAL).
pub(crate) fn write_decimal(out: &mut String, d: Decimal) {
    let digits = d.unscaled.unsigned_abs().to_string();
    let adjusted = digits.len() as i64 - 1 - i64::from(d.scale);
    if d.scale == 0 || adjusted >= -6 {
        return write_plain_decimal(out, d);
    }
    if d.unscaled < 0 {
        out.push('-');
    }
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    let _ = write!(out, "E{adjusted}");
}

/// Java's `BigDecimal.toPlainString`: every digit of the scale, never an exponent (how Flink
/// casts a DECIMAL to STRING: `0.00000000` where the print connector writes `0E-8`).
pub fn write_plain_decimal(out: &mut String, d: Decimal) {
    let digits = d.unscaled.unsigned_abs().to_string();
    if d.unscaled < 0 {
        out.push('-');
    }
    let scale = usize::from(d.scale);
    if scale == 0 {
        out.push_str(&digits);
    } else if digits.len() > scale {
        out.push_str(&digits[..digits.len() - scale]);
        out.push('.');
        out.push_str(&digits[digits.len() - scale..]);
    } else {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', scale - digits.len()));
        out.push_str(&digits);
    }
}

/// Year, month and day of a day number counted from 1970-01-01 (proleptic Gregorian).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Day number counted from 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let month = i64::from(month);
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Appends the date `days` after 1970-01-01 as `yyyy-MM-dd`.
pub fn write_date(out: &mut String, days: i32) {
    let (year, month, day) = civil_from_days(days.into());
    if year > 9999 {
        let _ = write!(out, "+{year}");
    } else if year < 0 {
        let _ = write!(out, "-{:04}", -year);
    } else {
        let _ = write!(out, "{year:04}");
    }
    let _ = write!(out, "-{month:02}-{day:02}");
}

/// `LocalTime.toString`: `HH:mm`, then `:ss` unless seconds and fraction are zero (always when
/// `always_seconds`), then the fraction in groups of three digits.
fn write_time_of_day(out: &mut String, nanos_of_day: i64, always_seconds: bool) {
    let secs = nanos_of_day.div_euclid(1_000_000_000);
    let nanos = nanos_of_day.rem_euclid(1_000_000_000);
    let _ = write!(out, "{:02}:{:02}", secs / 3600, secs / 60 % 60);
    if always_seconds || secs % 60 != 0 || nanos != 0 {
        let _ = write!(out, ":{:02}", secs % 60);
        if nanos != 0 {
            if nanos % 1_000_000 == 0 {
                let _ = write!(out, ".{:03}", nanos / 1_000_000);
            } else if nanos % 1000 == 0 {
                let _ = write!(out, ".{:06}", nanos / 1000);
            } else {
                let _ = write!(out, ".{nanos:09}");
            }
        }
    }
}

/// A timestamp as Flink's SQL client prints it in a table (`CAST(ts AS STRING)`):
/// `2024-01-01 11:00:00.000`, with `precision` fraction digits.
pub fn timestamp_to_sql_string(ts: Timestamp, precision: u8) -> String {
    let mut out = String::new();
    write_date(&mut out, ts.millis.div_euclid(MILLIS_PER_DAY) as i32);
    let nanos_of_day = ts.millis.rem_euclid(MILLIS_PER_DAY) * 1_000_000 + i64::from(ts.nanos_of_milli);
    let secs = nanos_of_day / 1_000_000_000;
    let _ = write!(out, " {:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if precision > 0 {
        let digits = usize::from(precision.min(9));
        let fraction = format!("{:09}", nanos_of_day % 1_000_000_000);
        let _ = write!(out, ".{}", &fraction[..digits]);
    }
    out
}

pub(crate) fn write_timestamp(out: &mut String, ts: Timestamp, always_seconds: bool) {
    let days = ts.millis.div_euclid(MILLIS_PER_DAY);
    let millis_of_day = ts.millis.rem_euclid(MILLIS_PER_DAY);
    write_date(out, days as i32);
    out.push('T');
    write_time_of_day(out, millis_of_day * 1_000_000 + i64::from(ts.nanos_of_milli), always_seconds);
}

/// `java.time.Period.toString` of a month count: `P1Y2M`, `P0D` for zero.
fn write_period(out: &mut String, months: i32) {
    if months == 0 {
        return out.push_str("P0D");
    }
    out.push('P');
    let (years, months) = (months / 12, months % 12);
    if years != 0 {
        let _ = write!(out, "{years}Y");
    }
    if months != 0 {
        let _ = write!(out, "{months}M");
    }
}

/// `java.time.Duration.toString` of a millisecond count: `PT8H6M12.345S`, `PT0S` for zero.
fn write_duration(out: &mut String, millis: i64) {
    if millis == 0 {
        return out.push_str("PT0S");
    }
    out.push_str("PT");
    let negative = millis < 0;
    let abs = millis.unsigned_abs();
    let (hours, minutes) = (abs / 3_600_000, abs / 60_000 % 60);
    let (secs, frac) = (abs / 1000 % 60, abs % 1000);
    let sign = if negative { "-" } else { "" };
    if hours != 0 {
        let _ = write!(out, "{sign}{hours}H");
    }
    if minutes != 0 {
        let _ = write!(out, "{sign}{minutes}M");
    }
    if secs != 0 || frac != 0 {
        let _ = write!(out, "{sign}{secs}");
        if frac != 0 {
            let text = format!("{frac:03}");
            let _ = write!(out, ".{}", text.trim_end_matches('0'));
        }
        out.push('S');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn p(v: Value) -> String {
        value_to_string(&v)
    }

    #[test]
    fn doubles_print_as_java_prints_them() {
        let cases = [
            (1.0e7, "1.0E7"),
            (1.0e-4, "1.0E-4"),
            (0.1, "0.1"),
            (1.0, "1.0"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (123.456, "123.456"),
            (9_999_999.0, "9999999.0"),
            (0.001, "0.001"),
            (1.2345e-5, "1.2345E-5"),
            (123_456_789.0, "1.23456789E8"),
            (-2.5, "-2.5"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (v, text) in cases {
            assert_eq!(p(Value::Double(v)), text, "{v}");
        }
        assert_eq!(p(Value::Float(0.1)), "0.1");
        assert_eq!(p(Value::Float(1.0e10)), "1.0E10");
        assert_eq!(p(Value::Float(3.3)), "3.3");
    }

    #[test]
    fn decimals_keep_their_scale() {
        assert_eq!(p(Value::decimal(41082, 2)), "410.82");
        assert_eq!(p(Value::decimal(1000, 2)), "10.00");
        assert_eq!(p(Value::decimal(-5, 2)), "-0.05");
        assert_eq!(p(Value::decimal(7, 0)), "7");
        assert_eq!(p(Value::decimal(1, 7)), "1E-7");
        assert_eq!(p(Value::decimal(123, 9)), "1.23E-7");
        assert_eq!(p(Value::decimal(1, 6)), "0.000001");
    }

    #[test]
    fn timestamps_drop_zero_seconds_and_group_fractions_by_three() {
        let base = days_from_civil(2024, 1, 1) * MILLIS_PER_DAY + 10 * 3_600_000;
        let ts = |millis, nanos| Value::Timestamp(Timestamp { millis, nanos_of_milli: nanos });
        assert_eq!(p(ts(base, 0)), "2024-01-01T10:00");
        assert_eq!(p(ts(base + 2_500, 0)), "2024-01-01T10:00:02.500");
        assert_eq!(p(ts(base + 331, 0)), "2024-01-01T10:00:00.331");
        assert_eq!(p(ts(base + 1_000, 0)), "2024-01-01T10:00:01");
        assert_eq!(p(ts(base, 1_000)), "2024-01-01T10:00:00.000001");
        assert_eq!(p(ts(base, 1)), "2024-01-01T10:00:00.000000001");
        assert_eq!(p(Value::TimestampLtz(Timestamp::from_millis(base))), "2024-01-01T10:00:00Z");
        assert_eq!(p(ts(-1, 0)), "1969-12-31T23:59:59.999");
    }

    #[test]
    fn dates_and_times() {
        assert_eq!(p(Value::Date(0)), "1970-01-01");
        assert_eq!(p(Value::Date(days_from_civil(2024, 2, 29) as i32)), "2024-02-29");
        assert_eq!(p(Value::Time(10 * 3_600_000_000_000)), "10:00");
        assert_eq!(p(Value::Time(10 * 3_600_000_000_000 + 5_000_000_000)), "10:00:05");
        for days in [-800_000i64, -1, 0, 1, 19_723, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn nested_values_and_null() {
        assert_eq!(p(Value::Null), "null");
        let arr = Value::Array(Arc::from(vec![Value::Int(1), Value::Null, Value::Int(3)]));
        assert_eq!(p(arr), "[1, null, 3]");
        let map = Value::Map(Arc::from(vec![(Value::string("a"), Value::BigInt(1))]));
        assert_eq!(p(map), "{a=1}");
        let row = Value::Row(Arc::from(vec![Value::Int(1), Value::string("x")]));
        assert_eq!(p(row), "+I[1, x]");
        assert_eq!(p(Value::Binary(Arc::from(vec![1u8, 255]))), "[1, -1]");
        assert_eq!(p(Value::IntervalYearMonth(14)), "P1Y2M");
        assert_eq!(p(Value::IntervalDayTime(29_172_345)), "PT8H6M12.345S");
    }
}
