//! Calendar functions with Flink's semantics: the EXTRACT fields beyond the time units
//! (`DOY`, `DOW`, `ISODOW`, `ISOYEAR`, `EPOCH`, `CENTURY`, `DECADE`, `MILLENNIUM`) and their
//! shorthands DAYOFYEAR and DAYOFWEEK, TO_DATE, CONVERT_TZ, and `FLOOR` / `CEIL` of a date-time
//! to a unit.

use weir_runtime::print::{civil_from_days, days_from_civil};
use weir_runtime::{DataType, LogicalType, Timestamp, Value};

use super::{expect, nullable_if_any, text, Arity, Entry, ScalarFunction, ScalarRef};
use crate::expr::types::is_string;
use crate::expr::{time, ExprError, TimeUnit};

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry { names: &["DAYOFYEAR"], make: || ScalarRef::new(ExtractField { field: DateField::DayOfYear }) },
        Entry { names: &["DAYOFWEEK"], make: || ScalarRef::new(ExtractField { field: DateField::DayOfWeek }) },
        Entry { names: &["TO_DATE"], make: || ScalarRef::new(ToDate) },
        Entry { names: &["CONVERT_TZ"], make: || ScalarRef::new(ConvertTz) },
    ]
}

const DAY: i64 = 86_400_000;

/// A field EXTRACT reads that is no [`TimeUnit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateField {
    /// `DOY`: the day of the year, from 1.
    DayOfYear,
    /// `DOW`: the day of the week, Sunday 1 to Saturday 7.
    DayOfWeek,
    /// `ISODOW`: the ISO day of the week, Monday 1 to Sunday 7.
    IsoDayOfWeek,
    /// `ISOYEAR`: the year of the ISO week.
    IsoYear,
    /// `EPOCH`: seconds since 1970-01-01 00:00:00.
    Epoch,
    /// `DECADE`: the year divided by 10.
    Decade,
    /// `CENTURY`: the century, the 21st from 2001.
    Century,
    /// `MILLENNIUM`: the millennium, the 3rd from 2001.
    Millennium,
}

impl DateField {
    /// The field EXTRACT names `name` (upper case), if it is one of these.
    pub fn named(name: &str) -> Option<DateField> {
        Some(match name {
            "DOY" => DateField::DayOfYear,
            "DOW" => DateField::DayOfWeek,
            "ISODOW" => DateField::IsoDayOfWeek,
            "ISOYEAR" => DateField::IsoYear,
            "EPOCH" => DateField::Epoch,
            "DECADE" => DateField::Decade,
            "CENTURY" => DateField::Century,
            "MILLENNIUM" => DateField::Millennium,
            _ => return None,
        })
    }

    fn sql_name(self) -> &'static str {
        match self {
            DateField::DayOfYear => "DOY",
            DateField::DayOfWeek => "DOW",
            DateField::IsoDayOfWeek => "ISODOW",
            DateField::IsoYear => "ISOYEAR",
            DateField::Epoch => "EPOCH",
            DateField::Decade => "DECADE",
            DateField::Century => "CENTURY",
            DateField::Millennium => "MILLENNIUM",
        }
    }
}

/// The epoch milliseconds of a DATE, TIMESTAMP or TIMESTAMP_LTZ value.
fn millis_of(v: &Value) -> Option<i64> {
    match v {
        Value::Timestamp(t) | Value::TimestampLtz(t) => Some(t.millis),
        Value::Date(d) => Some(i64::from(*d) * DAY),
        _ => None,
    }
}

/// `EXTRACT(field FROM t)` for a [`DateField`], and DAYOFYEAR / DAYOFWEEK: a BIGINT.
#[derive(Debug, Clone, Copy)]
pub struct ExtractField {
    /// The field.
    pub field: DateField,
}

impl ExtractField {
    /// `EXTRACT(field FROM t)`.
    pub fn of(field: DateField) -> ScalarRef {
        ScalarRef::new(ExtractField { field })
    }
}

impl ScalarFunction for ExtractField {
    fn name(&self) -> &str {
        "EXTRACT"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(1)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        let ok =
            matches!(types[0].logical, LogicalType::Date | LogicalType::Timestamp(_) | LogicalType::TimestampLtz(_));
        expect(ok, self, types, "<DATETIME>")?;
        Ok(nullable_if_any(DataType::bigint(), types))
    }

    fn explain(&self, args: &[String], infix: bool) -> String {
        let field = self.field.sql_name();
        let field = if infix { field.to_string() } else { format!("FLAG({field})") };
        format!("EXTRACT({field}, {})", args.join(", "))
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let Some(ms) = millis_of(&args[0]) else { return Ok(Value::Null) };
        let days = ms.div_euclid(DAY);
        let (y, _, _) = civil_from_days(days);
        let monday_based = (days + 3).rem_euclid(7);
        Ok(Value::BigInt(match self.field {
            DateField::DayOfYear => days - days_from_civil(y, 1, 1) + 1,
            DateField::DayOfWeek => (monday_based + 1) % 7 + 1,
            DateField::IsoDayOfWeek => monday_based + 1,
            DateField::IsoYear => civil_from_days(days - monday_based + 3).0,
            DateField::Epoch => ms.div_euclid(1000),
            DateField::Decade => y.div_euclid(10),
            DateField::Century => {
                if y > 0 {
                    (y + 99) / 100
                } else {
                    (y - 99) / 100
                }
            }
            DateField::Millennium => {
                if y > 0 {
                    (y + 999) / 1000
                } else {
                    (y - 999) / 1000
                }
            }
        }))
    }
}

/// `TO_DATE(s[, pattern])`: the date `s` writes (`yyyy-MM-dd` by default); NULL when it writes none.
#[derive(Debug, Clone, Copy)]
pub struct ToDate;

impl ScalarFunction for ToDate {
    fn name(&self) -> &str {
        "TO_DATE"
    }

    fn arity(&self) -> Arity {
        Arity::between(1, 2)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        expect(types.iter().all(|t| is_string(t)), self, types, "<CHARACTER>[, <CHARACTER>]")?;
        let mut ty = DataType::new(LogicalType::Date);
        ty.nullable = true;
        Ok(ty)
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let pattern = args.get(1).map_or("yyyy-MM-dd", text);
        Ok(time::parse_with_pattern(text(&args[0]), pattern)
            .map_or(Value::Null, |t| Value::Date(t.millis.div_euclid(DAY) as i32)))
    }
}

/// `CONVERT_TZ(s, from_zone, to_zone)`: the date-time text `s` (`yyyy-MM-dd HH:mm:ss`) read in
/// one zone and written in another; a zone Java does not know is GMT, as Java's `TimeZone`
/// takes it; NULL for text that is no date-time.
#[derive(Debug, Clone, Copy)]
pub struct ConvertTz;

/// The offset in milliseconds of zone `name` at UTC instant `utc_ms` (GMT for an unknown zone).
fn offset_at(name: &str, utc_ms: i64) -> i64 {
    use chrono::{Offset, TimeZone};
    if let Ok(zone) = name.parse::<chrono_tz::Tz>() {
        let Some(at) = chrono::DateTime::from_timestamp_millis(utc_ms) else { return 0 };
        return i64::from(zone.offset_from_utc_datetime(&at.naive_utc()).fix().local_minus_utc()) * 1000;
    }
    // `GMT+05:30`, `UTC-8`, `+02:00`
    let rest = name.strip_prefix("GMT").or_else(|| name.strip_prefix("UTC")).unwrap_or(name);
    let sign = match rest.chars().next() {
        Some('+') => 1,
        Some('-') => -1,
        _ => return 0,
    };
    let (h, m) = rest[1..].split_once(':').unwrap_or((&rest[1..], "0"));
    match (h.parse::<i64>(), m.parse::<i64>()) {
        (Ok(h), Ok(m)) if h <= 18 && m < 60 => sign * (h * 60 + m) * 60_000,
        _ => 0,
    }
}

impl ScalarFunction for ConvertTz {
    fn name(&self) -> &str {
        "CONVERT_TZ"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(3)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        expect(types.iter().all(|t| is_string(t)), self, types, "<CHARACTER>, <CHARACTER>, <CHARACTER>")?;
        let mut ty = DataType::string();
        ty.nullable = true;
        Ok(ty)
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let Some(local) = time::parse_with_pattern(text(&args[0]), time::DEFAULT_PATTERN) else {
            return Ok(Value::Null);
        };
        // The local time in `from`: its offset taken at the local time read as UTC, then
        // checked again at the instant found (the zone may change offset in between).
        let from = text(&args[1]);
        let guess = local.millis - offset_at(from, local.millis);
        let utc = local.millis - offset_at(from, guess);
        let converted = utc + offset_at(text(&args[2]), utc);
        time::date_format(&Value::Timestamp(Timestamp::from_millis(converted)), time::DEFAULT_PATTERN)
    }
}

/// `FLOOR(t TO unit)` / `CEIL(t TO unit)`: a DATE or TIMESTAMP rounded down (up) to a whole unit.
#[derive(Debug, Clone, Copy)]
pub struct TimeFloor {
    /// The unit.
    pub unit: TimeUnit,
    /// CEIL rather than FLOOR.
    pub ceil: bool,
}

impl TimeFloor {
    /// `FLOOR(t TO unit)` or (`ceil`) `CEIL(t TO unit)`.
    pub fn of(unit: TimeUnit, ceil: bool) -> ScalarRef {
        ScalarRef::new(TimeFloor { unit, ceil })
    }
}

impl ScalarFunction for TimeFloor {
    fn name(&self) -> &str {
        if self.ceil {
            "CEIL"
        } else {
            "FLOOR"
        }
    }

    fn arity(&self) -> Arity {
        Arity::exactly(1)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        let ok =
            matches!(types[0].logical, LogicalType::Date | LogicalType::Timestamp(_) | LogicalType::TimestampLtz(_));
        expect(ok, self, types, "<DATETIME> TO <TIME UNIT>")?;
        Ok(types[0].clone())
    }

    fn explain(&self, args: &[String], _infix: bool) -> String {
        format!("{}({}, FLAG({}))", self.name(), args.join(", "), self.unit.sql_name())
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let Some(ms) = millis_of(&args[0]) else { return Ok(Value::Null) };
        let days = ms.div_euclid(DAY);
        let (y, m, _) = civil_from_days(days);
        let floor = match self.unit {
            TimeUnit::Year => days_from_civil(y, 1, 1) * DAY,
            TimeUnit::Quarter => days_from_civil(y, (m - 1) / 3 * 3 + 1, 1) * DAY,
            TimeUnit::Month => days_from_civil(y, m, 1) * DAY,
            TimeUnit::Week => (days - (days + 4).rem_euclid(7)) * DAY,
            TimeUnit::Day => days * DAY,
            TimeUnit::Hour => ms - ms.rem_euclid(3_600_000),
            TimeUnit::Minute => ms - ms.rem_euclid(60_000),
            TimeUnit::Second => ms - ms.rem_euclid(1000),
            TimeUnit::Millisecond => ms,
        };
        // To a month, quarter or year Flink looks at the date alone (Calcite's `julianDateFloor`):
        // on the first day of one, CEIL is that day's midnight whatever the time of day.
        let by_date = matches!(self.unit, TimeUnit::Year | TimeUnit::Quarter | TimeUnit::Month);
        let exact = if by_date {
            floor == days * DAY
        } else {
            floor == ms && !matches!(&args[0], Value::Timestamp(t) | Value::TimestampLtz(t) if t.nanos_of_milli > 0)
        };
        let rounded = if self.ceil && !exact {
            match self.unit {
                TimeUnit::Year => days_from_civil(y + 1, 1, 1) * DAY,
                TimeUnit::Quarter => {
                    let next = (m - 1) / 3 * 3 + 4;
                    if next > 12 {
                        days_from_civil(y + 1, 1, 1) * DAY
                    } else {
                        days_from_civil(y, next, 1) * DAY
                    }
                }
                TimeUnit::Month => {
                    if m == 12 {
                        days_from_civil(y + 1, 1, 1) * DAY
                    } else {
                        days_from_civil(y, m + 1, 1) * DAY
                    }
                }
                TimeUnit::Week => floor + 7 * DAY,
                TimeUnit::Day => floor + DAY,
                TimeUnit::Hour => floor + 3_600_000,
                TimeUnit::Minute => floor + 60_000,
                TimeUnit::Second => floor + 1000,
                TimeUnit::Millisecond => floor + 1,
            }
        } else {
            floor
        };
        Ok(match &args[0] {
            Value::Date(_) => Value::Date(rounded.div_euclid(DAY) as i32),
            Value::TimestampLtz(_) => Value::TimestampLtz(Timestamp::from_millis(rounded)),
            _ => Value::Timestamp(Timestamp::from_millis(rounded)),
        })
    }
}
