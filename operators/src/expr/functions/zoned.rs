//! Functions that read or write the wall clock of the session time zone
//! (`table.local-time-zone`), as Flink's do: a TIMESTAMP_LTZ is an instant, and DATE_FORMAT,
//! EXTRACT, HOUR, FLOOR … of one read it as the session zone's wall clock; UNIX_TIMESTAMP and
//! TO_TIMESTAMP_LTZ read a text as that wall clock; FROM_UNIXTIME writes epoch seconds as it;
//! LOCALTIMESTAMP is now on it; a CAST between TIMESTAMP_LTZ and TIMESTAMP, DATE, TIME or text
//! goes through it.
//!
//! The binder wraps such a call in [`InSessionZone`] (a CAST in [`ZonedCast`]) when the
//! session's zone is not UTC (in UTC a wall clock is its instant, and the functions compute
//! that themselves). Where the clocks
//! change, a wall-clock time read back as an instant is taken as `LocalDateTime.atZone` takes
//! it (a skipped time with the offset before the gap, a repeated one as its earlier instant).

use smallvec::SmallVec;
use weir_runtime::time_zone::TimeZone;
use weir_runtime::{Clock, DataType, LogicalType, Timestamp, Value};

use super::{Arity, Nulls, ScalarFunction, ScalarRef};
use crate::expr::ExprError;

/// How a function uses the session's wall clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Its TIMESTAMP_LTZ arguments are read as wall-clock times; a TIMESTAMP_LTZ result is the
    /// instant of the wall-clock time it computed.
    WallClock,
    /// `UNIX_TIMESTAMP(text[, pattern])`: the text is a wall-clock time.
    ParsedWallClock,
    /// `FLOOR` / `CEIL` of a TIMESTAMP_LTZ: as [`Reading::WallClock`], the result taken back
    /// with the offset of the argument's instant (Flink's: on the day the clocks change,
    /// `FLOOR(… TO DAY)` is an hour off midnight, and so is weir's).
    SameOffset,
    /// `FROM_UNIXTIME(seconds[, pattern])`: the instant is written as a wall-clock time.
    EpochSeconds,
    /// `LOCALTIMESTAMP`, `CURRENT_DATE`, `CURRENT_TIME`: now, on the wall clock.
    Now,
}

/// A call of `inner` that reads or writes the session zone's wall clock.
#[derive(Debug)]
pub struct InSessionZone {
    inner: ScalarRef,
    zone: TimeZone,
    reading: Reading,
}

impl InSessionZone {
    /// `function` called on arguments of `types`, in `zone`: the wrapped call when the function
    /// uses the wall clock of a zone other than UTC, else `None` (the call stays as it is).
    pub fn wrap(function: &ScalarRef, types: &[&DataType], zone: TimeZone) -> Option<ScalarRef> {
        if zone.is_utc() {
            return None;
        }
        let has_ltz = types.iter().any(|t| matches!(t.logical, LogicalType::TimestampLtz(_)));
        let text_first =
            types.first().is_some_and(|t| matches!(t.logical, LogicalType::Char(_) | LogicalType::Varchar(_)));
        let reading = match function.0.name() {
            "DATE_FORMAT" | "EXTRACT" | "YEAR" | "QUARTER" | "MONTH" | "WEEK" | "DAYOFMONTH" | "DAYOFWEEK"
            | "DAYOFYEAR" | "HOUR" | "MINUTE" | "SECOND"
                if has_ltz =>
            {
                Reading::WallClock
            }
            "FLOOR" | "CEIL" if has_ltz => Reading::SameOffset,
            "TO_TIMESTAMP_LTZ" if text_first => Reading::WallClock,
            "UNIX_TIMESTAMP" if !types.is_empty() => Reading::ParsedWallClock,
            "FROM_UNIXTIME" => Reading::EpochSeconds,
            "LOCALTIMESTAMP" | "CURRENT_DATE" | "CURRENT_TIME" => Reading::Now,
            _ => return None,
        };
        Some(ScalarRef::new(InSessionZone { inner: function.clone(), zone, reading }))
    }
}

/// Milliseconds in a day.
const DAY: i64 = 86_400_000;

/// A TIMESTAMP_LTZ value as the TIMESTAMP of its wall-clock time in `zone`; others as they are.
fn to_wall_clock(zone: TimeZone, v: &Value) -> Value {
    match v {
        Value::TimestampLtz(t) => Value::Timestamp(shift(*t, zone.to_local(t.millis))),
        other => other.clone(),
    }
}

/// The instant of a wall-clock time in `zone`, computed for a TIMESTAMP_LTZ result.
fn to_instant(zone: TimeZone, v: Value) -> Value {
    match v {
        Value::Timestamp(t) | Value::TimestampLtz(t) => Value::TimestampLtz(shift(t, zone.to_utc(t.millis))),
        other => other,
    }
}

/// `t` at `millis`, its nanoseconds kept.
fn shift(t: Timestamp, millis: i64) -> Timestamp {
    Timestamp { millis, nanos_of_milli: t.nanos_of_milli }
}

impl ScalarFunction for InSessionZone {
    fn name(&self) -> &str {
        self.inner.0.name()
    }

    fn arity(&self) -> Arity {
        self.inner.0.arity()
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        self.inner.0.return_type(types)
    }

    fn nulls(&self) -> Nulls {
        self.inner.0.nulls()
    }

    fn is_deterministic(&self) -> bool {
        self.inner.0.is_deterministic()
    }

    fn eval(&self, args: &[Value], ty: &DataType) -> Result<Value, ExprError> {
        let ltz_result = matches!(ty.logical, LogicalType::TimestampLtz(_));
        match self.reading {
            Reading::WallClock => {
                let args: SmallVec<[Value; 4]> = args.iter().map(|a| to_wall_clock(self.zone, a)).collect();
                let result = self.inner.0.eval(&args, ty)?;
                Ok(if ltz_result { to_instant(self.zone, result) } else { result })
            }
            Reading::SameOffset => {
                let Some(Value::TimestampLtz(at)) = args.first() else { return self.inner.0.eval(args, ty) };
                let offset = self.zone.offset_at(at.millis);
                let mut args = args.to_vec();
                args[0] = Value::Timestamp(shift(*at, at.millis + offset));
                Ok(match self.inner.0.eval(&args, ty)? {
                    Value::Timestamp(t) | Value::TimestampLtz(t) => Value::TimestampLtz(shift(t, t.millis - offset)),
                    other => other,
                })
            }
            Reading::ParsedWallClock => Ok(match self.inner.0.eval(args, ty)? {
                Value::BigInt(seconds) if seconds != i64::MIN => {
                    Value::BigInt(self.zone.to_utc(seconds.saturating_mul(1000)).div_euclid(1000))
                }
                other => other,
            }),
            Reading::EpochSeconds => {
                let mut args = args.to_vec();
                if let Some(seconds) = args.first().and_then(Value::as_i64) {
                    let local = self.zone.to_local(seconds.saturating_mul(1000)).div_euclid(1000);
                    args[0] = Value::BigInt(local);
                }
                self.inner.0.eval(&args, ty)
            }
            Reading::Now => Ok(match self.inner.0.eval(args, ty)? {
                Value::Timestamp(t) => Value::Timestamp(shift(t, self.zone.to_local(t.millis))),
                // A date or time of day does not hold the instant: it is taken again on the
                // zone's wall clock.
                Value::Date(_) => {
                    Value::Date(self.zone.to_local(weir_runtime::SystemClock.now_millis()).div_euclid(DAY) as i32)
                }
                Value::Time(_) => {
                    let local = self.zone.to_local(weir_runtime::SystemClock.now_millis()).rem_euclid(DAY);
                    Value::Time(local / 1000 * 1_000_000_000)
                }
                other => other,
            }),
        }
    }
}

/// `CAST(x AS to)` of `x` of type `from` through the session zone's wall clock: from a
/// TIMESTAMP_LTZ, its instant's wall-clock time cast as a TIMESTAMP of its precision; to one, the
/// value cast as a wall-clock TIMESTAMP, then its instant.
#[derive(Debug)]
pub struct ZonedCast {
    zone: TimeZone,
    from: DataType,
    to: DataType,
}

impl ZonedCast {
    /// `CAST(x AS to)` of `x` of type `from` through `zone`'s wall clock, when the cast is
    /// between TIMESTAMP_LTZ and a type of wall-clock time or text; else `None`.
    pub fn cast(from: &DataType, to: &DataType, zone: TimeZone) -> Option<ScalarRef> {
        use LogicalType::{Char, Date, Time, Timestamp, TimestampLtz, Varchar};
        let wall = |t: &LogicalType| matches!(t, Char(_) | Varchar(_) | Date | Time(_) | Timestamp(_));
        let zoned = match (&from.logical, &to.logical) {
            (TimestampLtz(_), other) | (other, TimestampLtz(_)) => wall(other),
            _ => false,
        };
        if zone.is_utc() || !zoned {
            return None;
        }
        Some(ScalarRef::new(ZonedCast { zone, from: from.clone(), to: to.clone() }))
    }
}

impl ScalarFunction for ZonedCast {
    fn name(&self) -> &str {
        "CAST"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(1)
    }

    fn return_type(&self, _: &[&DataType]) -> Result<DataType, ExprError> {
        Ok(self.to.clone())
    }

    fn nulls(&self) -> Nulls {
        Nulls::Strict
    }

    fn eval(&self, args: &[Value], ty: &DataType) -> Result<Value, ExprError> {
        let value = args.first().cloned().unwrap_or(Value::Null);
        let cast = |v: &Value, from: &DataType, to: &DataType| crate::expr::cast::cast(v, from, to).map_err(ExprError);
        match (&self.from.logical, &ty.logical) {
            (LogicalType::TimestampLtz(p), _) => {
                cast(&to_wall_clock(self.zone, &value), &DataType::new(LogicalType::Timestamp(*p)), ty)
            }
            (_, LogicalType::TimestampLtz(p)) => {
                let local = cast(&value, &self.from, &DataType::new(LogicalType::Timestamp(*p)))?;
                Ok(to_instant(self.zone, local))
            }
            _ => cast(&value, &self.from, ty),
        }
    }
}
