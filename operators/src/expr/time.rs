//! Date and time functions: EXTRACT, DATE_FORMAT, TIMESTAMPADD, TIMESTAMPDIFF.

use std::sync::Arc;

use smallvec::SmallVec;

use weir_runtime::print::{civil_from_days, days_from_civil};
use weir_runtime::{Timestamp, Value};

use super::TimeUnit;

const DAY: i64 = 86_400_000;

/// The instant of a date-time value in epoch milliseconds (DATE at midnight).
fn millis(v: &Value) -> Option<(i64, u32)> {
    match v {
        Value::Timestamp(t) | Value::TimestampLtz(t) => Some((t.millis, t.nanos_of_milli)),
        Value::Date(d) => Some((i64::from(*d) * DAY, 0)),
        Value::Time(nanos) => Some((nanos / 1_000_000, (nanos % 1_000_000) as u32)),
        _ => None,
    }
}

/// EXTRACT(unit FROM v) as a BIGINT.
pub(super) fn extract(unit: TimeUnit, v: &Value) -> Value {
    let Some((ms, _)) = millis(v) else { return Value::Null };
    let (y, m, d) = civil_from_days(ms.div_euclid(DAY));
    let of_day = ms.rem_euclid(DAY);
    Value::BigInt(match unit {
        TimeUnit::Year => y,
        TimeUnit::Quarter => i64::from((m - 1) / 3 + 1),
        TimeUnit::Month => i64::from(m),
        TimeUnit::Week => {
            // ISO week of the year.
            let days = ms.div_euclid(DAY);
            let weekday = (days + 3).rem_euclid(7); // Monday = 0
            let thursday = days - weekday + 3;
            let (ty, _, _) = civil_from_days(thursday);
            (thursday - days_from_civil(ty, 1, 1)) / 7 + 1
        }
        TimeUnit::Day => i64::from(d),
        TimeUnit::Hour => of_day / 3_600_000,
        TimeUnit::Minute => of_day / 60_000 % 60,
        TimeUnit::Second => of_day / 1000 % 60,
        TimeUnit::Millisecond => of_day % 1000,
    })
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

/// The day of the week of epoch day `days`, Monday 0.
fn weekday(days: i64) -> i64 {
    (days + 3).rem_euclid(7)
}

/// The week-based year and week of epoch day `days` as Java's US locale counts them: weeks
/// start on Sunday, and week 1 is the week holding January 1.
fn us_week(days: i64) -> (i64, i64) {
    let (y, _, _) = civil_from_days(days);
    let sunday_start = |day: i64| day - (weekday(day) + 1) % 7;
    let next_week_one = sunday_start(days_from_civil(y + 1, 1, 1));
    if days >= next_week_one {
        return (y + 1, 1);
    }
    (y, (days - sunday_start(days_from_civil(y, 1, 1))) / 7 + 1)
}

/// DATE_FORMAT with the pattern letters of Java's `DateTimeFormatter` (US locale) for dates
/// and times without a zone: `G y u Y Q q M L D d w W F E e a h K k H m s S n`, `'…'` quoting
/// literal text; other characters are written as they are. A zone letter (`z Z X x O V`)
/// fails, as it does in Flink. Written into a buffer on the stack: one allocation per value.
pub(super) fn date_format(v: &Value, pattern: &str) -> Result<Value, super::ExprError> {
    let Some((ms, nanos_of_milli)) = millis(v) else { return Ok(Value::Null) };
    let days = ms.div_euclid(DAY);
    let (y, m, d) = civil_from_days(days);
    let of_day = ms.rem_euclid(DAY);
    let hour = of_day / 3_600_000;
    let nanos_of_second = of_day % 1000 * 1_000_000 + i64::from(nanos_of_milli);
    let mut out = SmallVec::<[u8; 32]>::new();
    let mut rest = pattern;
    while let Some(c) = rest.chars().next() {
        if c == '\'' {
            let quoted = &rest[1..];
            let end = quoted.find('\'').unwrap_or(quoted.len());
            out.extend_from_slice(&quoted.as_bytes()[..end]);
            rest = quoted.get(end + 1..).unwrap_or("");
            continue;
        }
        let run = rest.chars().take_while(|x| *x == c).count();
        let text = |out: &mut SmallVec<[u8; 32]>, full: &str| {
            let t = if run >= 4 { full } else { &full[..3] };
            out.extend_from_slice(t.as_bytes());
        };
        match c {
            'y' | 'u' if run == 2 => push_padded(&mut out, y.rem_euclid(100), 2),
            'y' | 'u' => push_padded(&mut out, y, run),
            'Y' if run == 2 => push_padded(&mut out, us_week(days).0.rem_euclid(100), 2),
            'Y' => push_padded(&mut out, us_week(days).0, run),
            'G' => out.extend_from_slice(if y > 0 { b"AD" } else { b"BC" }),
            'Q' | 'q' if run <= 2 => push_padded(&mut out, i64::from((m - 1) / 3 + 1), run),
            'Q' | 'q' => {
                let quarter = ((m - 1) / 3) as usize;
                let names = if run == 3 {
                    ["Q1", "Q2", "Q3", "Q4"]
                } else {
                    ["1st quarter", "2nd quarter", "3rd quarter", "4th quarter"]
                };
                out.extend_from_slice(names[quarter].as_bytes());
            }
            'M' | 'L' if run <= 2 => push_padded(&mut out, i64::from(m), run),
            'M' | 'L' => text(&mut out, MONTHS[m as usize - 1]),
            'D' => push_padded(&mut out, days - days_from_civil(y, 1, 1) + 1, run),
            'd' => push_padded(&mut out, i64::from(d), run),
            'w' => push_padded(&mut out, us_week(days).1, run),
            'W' => {
                let first = days - i64::from(d) + 1;
                push_padded(&mut out, (i64::from(d) - 1 + (weekday(first) + 1) % 7) / 7 + 1, run);
            }
            'F' => push_padded(&mut out, (i64::from(d) - 1) % 7 + 1, run),
            'E' => text(&mut out, WEEKDAYS[weekday(days) as usize]),
            'e' | 'c' if run <= 2 => push_padded(&mut out, (weekday(days) + 1) % 7 + 1, run),
            'e' | 'c' => text(&mut out, WEEKDAYS[weekday(days) as usize]),
            'a' => out.extend_from_slice(if hour < 12 { b"AM" } else { b"PM" }),
            'h' => push_padded(&mut out, if hour % 12 == 0 { 12 } else { hour % 12 }, run),
            'K' => push_padded(&mut out, hour % 12, run),
            'k' => push_padded(&mut out, if hour == 0 { 24 } else { hour }, run),
            'H' => push_padded(&mut out, hour, run),
            'm' => push_padded(&mut out, of_day / 60_000 % 60, run),
            's' => push_padded(&mut out, of_day / 1000 % 60, run),
            'S' => {
                let at = out.len();
                push_padded(&mut out, nanos_of_second, 9);
                out.truncate(at + run.min(9));
                out.extend(std::iter::repeat_n(b'0', run.saturating_sub(9)));
            }
            'n' => push_padded(&mut out, nanos_of_second, run),
            'z' | 'Z' | 'X' | 'x' | 'O' | 'V' | 'v' => {
                return Err(super::ExprError(format!(
                    "Unsupported field: the pattern letter '{c}' needs a time zone, which a TIMESTAMP has not"
                )));
            }
            other => {
                let mut utf8 = [0; 4];
                (0..run).for_each(|_| out.extend_from_slice(other.encode_utf8(&mut utf8).as_bytes()));
            }
        }
        rest = &rest[run * c.len_utf8()..];
    }
    // Only whole characters of `pattern`, ASCII digits and ASCII names were written.
    Ok(std::str::from_utf8(&out).map_or(Value::Null, |text| Value::String(Arc::from(text))))
}

/// Appends `n` in decimal, zero-padded to `width` digits (a negative year as `-` and digits,
/// as Java's formatter writes it).
fn push_padded(out: &mut SmallVec<[u8; 32]>, n: i64, width: usize) {
    if n < 0 {
        out.push(b'-');
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let written = digits.len() - at;
    out.extend(std::iter::repeat_n(b'0', width.saturating_sub(written + usize::from(n < 0))));
    out.extend_from_slice(&digits[at..]);
}

/// Epoch milliseconds of 0000-01-01 and of 10000-01-01: the range of Flink's TIMESTAMP and
/// TIMESTAMP_LTZ.
const FIRST_MILLIS: i64 = -62_167_219_200_000;
const END_MILLIS: i64 = 253_402_300_800_000;

/// Whether epoch milliseconds `ms` fall in the years 0000 to 9999.
pub(crate) fn in_timestamp_range(ms: i64) -> bool {
    (FIRST_MILLIS..END_MILLIS).contains(&ms)
}

/// The error of date-time arithmetic `call` whose result is past the years 0000 to 9999.
pub(crate) fn out_of_range(call: std::fmt::Arguments<'_>) -> super::ExprError {
    super::ExprError(format!("{call} overflows: the result is past the years 0000 to 9999"))
}

fn add_months(ms: i64, months: i64) -> Option<i64> {
    let (y, m, d) = civil_from_days(ms.div_euclid(DAY));
    // Past ten thousand years either way is out of range whatever the start.
    if months.unsigned_abs() > 12 * 10_000 {
        return None;
    }
    let total = y * 12 + i64::from(m) - 1 + months;
    let (ny, nm) = (total.div_euclid(12), (total.rem_euclid(12) + 1) as u32);
    let last_day =
        (28..=31).rev().find(|day| weir_runtime::parse::parse_date(&format!("{ny:04}-{nm:02}-{day:02}")).is_some());
    let nd = d.min(last_day.unwrap_or(28));
    Some(days_from_civil(ny, nm, nd) * DAY + ms.rem_euclid(DAY))
}

/// TIMESTAMPADD(unit, n, t); `None` when the result is past the years 0000 to 9999.
pub(super) fn timestamp_add(unit: TimeUnit, n: i64, v: &Value) -> Option<Value> {
    let Some((ms, nanos)) = millis(v) else { return Some(Value::Null) };
    let by = |unit_ms: i64| n.checked_mul(unit_ms).and_then(|d| ms.checked_add(d));
    let shifted = match unit {
        TimeUnit::Year => add_months(ms, n.checked_mul(12)?),
        TimeUnit::Quarter => add_months(ms, n.checked_mul(3)?),
        TimeUnit::Month => add_months(ms, n),
        TimeUnit::Week => by(7 * DAY),
        TimeUnit::Day => by(DAY),
        TimeUnit::Hour => by(3_600_000),
        TimeUnit::Minute => by(60_000),
        TimeUnit::Second => by(1000),
        TimeUnit::Millisecond => by(1),
    }
    .filter(|&shifted| in_timestamp_range(shifted))?;
    let ts = Timestamp { millis: shifted, nanos_of_milli: nanos };
    Some(match v {
        Value::TimestampLtz(_) => Value::TimestampLtz(ts),
        // A DATE moved by days or more stays a DATE; by hours or less it becomes a TIMESTAMP.
        Value::Date(_) if unit.is_sub_day() => Value::Timestamp(ts),
        Value::Date(_) => Value::Date(shifted.div_euclid(DAY) as i32),
        _ => Value::Timestamp(ts),
    })
}

/// The months from `from` to `to` as Flink counts them (Calcite's `subtractMonths`): by days,
/// the earlier day moved by whole months not past the later one; then one less when the days
/// meet but `to`'s time of day is before `from`'s — so one second back across the first of a
/// month is -1 month, as in Flink.
fn subtract_months(to: i64, from: i64) -> i64 {
    let (day_to, day_from) = (to.div_euclid(DAY), from.div_euclid(DAY));
    let mut months = subtract_month_days(day_to, day_from);
    if add_months(day_from * DAY, months) == Some(day_to * DAY) && to.rem_euclid(DAY) < from.rem_euclid(DAY) {
        months -= 1;
    }
    months
}

/// Whole months from day `from` to day `to` (days since the epoch): the most `m` with `from`
/// moved by `m` months not after `to` (negated when `to` is before `from`).
fn subtract_month_days(to: i64, from: i64) -> i64 {
    if to < from {
        return -subtract_month_days(from, to);
    }
    let day = |months: i64| add_months(from * DAY, months).map_or(i64::MAX, |ms| ms.div_euclid(DAY));
    // No month has more than 31 days: the estimate is at most the answer.
    let mut months = (to - from) / 31;
    loop {
        if day(months) >= to || day(months + 1) > to {
            return months;
        }
        months += 1;
    }
}

/// TIMESTAMPDIFF(unit, a, b): whole units from a to b, as an INT.
pub(super) fn timestamp_diff(unit: TimeUnit, a: &Value, b: &Value) -> Value {
    let (Some((x, _)), Some((y, _))) = (millis(a), millis(b)) else { return Value::Null };
    let whole_months = || subtract_months(y, x);
    let diff = y - x;
    Value::Int(match unit {
        TimeUnit::Year => whole_months() / 12,
        TimeUnit::Quarter => whole_months() / 3,
        TimeUnit::Month => whole_months(),
        TimeUnit::Week => diff / (7 * DAY),
        TimeUnit::Day => diff / DAY,
        TimeUnit::Hour => diff / 3_600_000,
        TimeUnit::Minute => diff / 60_000,
        TimeUnit::Second => diff / 1000,
        TimeUnit::Millisecond => diff,
    } as i32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::parse::parse_timestamp;
    use weir_runtime::print::value_to_string;

    fn ts(s: &str) -> Value {
        Value::Timestamp(parse_timestamp(s).unwrap())
    }

    /// DATE_FORMAT recomputed the plain way, with `format!` per field.
    fn formatted(ms: i64, pattern: &str) -> String {
        let (y, m, d) = civil_from_days(ms.div_euclid(DAY));
        let of_day = ms.rem_euclid(DAY);
        let (mut out, chars) = (String::new(), pattern.chars().collect::<Vec<char>>());
        let mut i = 0;
        while i < chars.len() {
            if chars[i] == '\'' {
                let end = chars[i + 1..].iter().position(|c| *c == '\'').map_or(chars.len(), |e| i + 1 + e);
                out.extend(&chars[i + 1..end]);
                i = end + 1;
                continue;
            }
            let c = chars[i];
            let run = chars[i..].iter().take_while(|x| **x == c).count();
            let field = |n: i64, width: usize| format!("{n:0width$}");
            match c {
                'y' if run == 2 => out.push_str(&field(y.rem_euclid(100), 2)),
                'y' => out.push_str(&field(y, run)),
                'M' => out.push_str(&field(i64::from(m), run)),
                'd' => out.push_str(&field(i64::from(d), run)),
                'H' => out.push_str(&field(of_day / 3_600_000, run)),
                'm' => out.push_str(&field(of_day / 60_000 % 60, run)),
                's' => out.push_str(&field(of_day / 1000 % 60, run)),
                'S' => {
                    out.push_str(&format!("{:09}", of_day % 1000 * 1_000_000)[..run.min(9)]);
                    out.extend(std::iter::repeat_n('0', run.saturating_sub(9)));
                }
                other => out.extend(std::iter::repeat_n(other, run)),
            }
            i += run;
        }
        out
    }

    #[test]
    fn date_format_writes_what_format_writes_on_random_times() {
        use rand::{Rng, SeedableRng};
        let mut random = rand::rngs::SmallRng::seed_from_u64(3);
        let patterns = [
            "yyyy-MM-dd",
            "HH:mm",
            "yyyy-MM-dd HH:mm:ss.SSS",
            "yy/M/d H:m:s.S SS",
            "yyyyy 'at' HH 'o''clock' SSSS",
            "dd.MM.yyyy – HH时mm分 'é",
            "'unterminated",
            "",
        ];
        for _ in 0..20_000 {
            let ms = random.random_range(FIRST_MILLIS..END_MILLIS);
            let pattern = patterns[random.random_range(0..patterns.len())];
            let t = Value::Timestamp(Timestamp::from_millis(ms));
            assert_eq!(value_to_string(&date_format(&t, pattern).unwrap()), formatted(ms, pattern), "{ms} {pattern}");
        }
    }

    #[test]
    fn time_functions_follow_flink() {
        let t = ts("2024-01-01 10:02:14.891");
        assert_eq!(extract(TimeUnit::Hour, &t), Value::BigInt(10));
        assert_eq!(extract(TimeUnit::Minute, &t), Value::BigInt(2));
        assert_eq!(value_to_string(&date_format(&t, "yyyy-MM-dd").unwrap()), "2024-01-01");
        assert_eq!(value_to_string(&date_format(&t, "HH:mm:ss").unwrap()), "10:02:14");
        assert_eq!(
            value_to_string(&date_format(&t, "EEE, d MMM yyyy hh a D w W F u").unwrap()),
            "Mon, 1 Jan 2024 10 AM 1 1 1 1 2024"
        );
        assert_eq!(value_to_string(&timestamp_add(TimeUnit::Minute, 3, &t).unwrap()), "2024-01-01T10:05:14.891");
        assert_eq!(timestamp_add(TimeUnit::Year, 8_000, &t), None, "past 9999");
        assert_eq!((FIRST_MILLIS, END_MILLIS), (days_from_civil(0, 1, 1) * DAY, days_from_civil(10_000, 1, 1) * DAY));
        assert_eq!(timestamp_add(TimeUnit::Second, i64::MAX, &t), None, "overflows i64");
        assert_eq!(timestamp_diff(TimeUnit::Second, &ts("2024-01-01 10:00:00"), &t), Value::Int(134));
        assert_eq!(
            value_to_string(&timestamp_add(TimeUnit::Month, 1, &ts("2024-01-31 00:00:00")).unwrap()),
            "2024-02-29T00:00"
        );
        assert_eq!(
            timestamp_diff(TimeUnit::Month, &ts("2024-01-31 00:00:00"), &ts("2024-02-29 00:00:00")),
            Value::Int(1)
        );
    }
}

/// The pattern TO_TIMESTAMP, UNIX_TIMESTAMP and FROM_UNIXTIME use by default.
pub(super) const DEFAULT_PATTERN: &str = "yyyy-MM-dd HH:mm:ss";

/// Reads `yyyy-MM-dd HH:mm:ss[.fraction]` as Flink's `TO_TIMESTAMP` without a pattern does:
/// a day past the end of its month is the month's last day.
pub(super) fn parse_lenient(text: &str) -> Option<Timestamp> {
    let text = text.trim();
    let (date, time) = text.split_once(' ').unwrap_or((text, "00:00:00"));
    let mut parts = date.splitn(3, '-');
    let (y, m, d): (i64, u32, u32) =
        (parts.next()?.parse().ok()?, parts.next()?.parse().ok()?, parts.next()?.parse().ok()?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let last = (28..=31).rev().find(|&day| civil_from_days(days_from_civil(y, m, day)).1 == m).unwrap_or(28);
    let day = days_from_civil(y, m, d.min(last));
    let (clock, fraction) = time.split_once('.').unwrap_or((time, ""));
    let mut hms = clock.splitn(3, ':');
    let (h, mi, s): (i64, i64, i64) =
        (hms.next()?.parse().ok()?, hms.next()?.parse().ok()?, hms.next().unwrap_or("0").parse().ok()?);
    if h > 23 || mi > 59 || s > 59 || !fraction.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let millis: i64 = format!("{:0<3}", &fraction[..fraction.len().min(3)]).parse().unwrap_or(0);
    Some(Timestamp::from_millis(day * DAY + ((h * 60 + mi) * 60 + s) * 1000 + millis))
}

/// Reads `text` with a Java date pattern (`yyyy MM dd HH mm ss SSS`, other characters literal).
pub(super) fn parse_with_pattern(text: &str, pattern: &str) -> Option<Timestamp> {
    let (mut y, mut mo, mut d, mut h, mut mi, mut s, mut ms) = (1970i64, 1u32, 1u32, 0i64, 0i64, 0i64, 0i64);
    let chars: Vec<char> = pattern.chars().collect();
    let input: Vec<char> = text.trim().chars().collect();
    let (mut i, mut at) = (0, 0);
    while i < chars.len() {
        let c = chars[i];
        let run = chars[i..].iter().take_while(|x| **x == c).count();
        if c.is_ascii_alphabetic() {
            let digits: String = input
                .get(at..)?
                .iter()
                .take(run.max(if c == 'y' { 4 } else { run }))
                .take_while(|d| d.is_ascii_digit())
                .collect();
            if digits.is_empty() {
                return None;
            }
            at += digits.len();
            let n: i64 = digits.parse().ok()?;
            match c {
                'y' => y = n,
                'M' => mo = n as u32,
                'd' => d = n as u32,
                'H' => h = n,
                'm' => mi = n,
                's' => s = n,
                'S' => ms = n * 10i64.pow(3u32.saturating_sub(digits.len() as u32)),
                _ => return None,
            }
        } else {
            for _ in 0..run {
                if input.get(at) != Some(&c) {
                    return None;
                }
                at += 1;
            }
        }
        i += run;
    }
    if at != input.len() {
        return None;
    }
    let days = weir_runtime::parse::parse_date(&format!("{y:04}-{mo:02}-{d:02}"))?;
    Some(Timestamp::from_millis(days * DAY + ((h * 60 + mi) * 60 + s) * 1000 + ms))
}

#[cfg(test)]
mod pattern_tests {
    use super::*;
    use weir_runtime::print::value_to_string;

    #[test]
    fn patterns_read_what_date_format_writes() {
        let ts = parse_with_pattern("2024-01-01 10:02:14", DEFAULT_PATTERN).unwrap();
        assert_eq!(value_to_string(&Value::Timestamp(ts)), "2024-01-01T10:02:14");
        let ts = parse_with_pattern("01/02/2024 10:02:14.5", "dd/MM/yyyy HH:mm:ss.S").unwrap();
        assert_eq!(value_to_string(&Value::Timestamp(ts)), "2024-02-01T10:02:14.500");
        assert!(parse_with_pattern("2024-13-01 00:00:00", DEFAULT_PATTERN).is_none());
        assert!(parse_with_pattern("nope", DEFAULT_PATTERN).is_none());
    }
}
