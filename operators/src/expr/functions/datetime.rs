//! Date and time functions: EXTRACT and its shorthands (YEAR, HOUR, …), DATE_FORMAT, the clock
//! (PROCTIME, CURRENT_TIMESTAMP, LOCALTIMESTAMP, CURRENT_DATE, UNIX_TIMESTAMP), conversions
//! (TO_TIMESTAMP, TO_TIMESTAMP_LTZ, FROM_UNIXTIME) and TIMESTAMPADD / TIMESTAMPDIFF.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMicrosecondType;
use arrow_array::{ArrayRef, Int64Array};
use weir_runtime::columnar::timestamp_of_micros;
use weir_runtime::types::TimeAttribute;
use weir_runtime::{Clock, DataType, LogicalType, SystemClock, Timestamp, Value};

use super::{expect, nullable_if_any, text, Arity, Builtin, Entry, ScalarFunction, ScalarRef};
use crate::expr::types::{is_integer, is_numeric, is_string};
use crate::expr::{time, ExprError, TimeUnit};

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry { names: &["YEAR"], make: || UnitFunction::extract(TimeUnit::Year) },
        Entry { names: &["QUARTER"], make: || UnitFunction::extract(TimeUnit::Quarter) },
        Entry { names: &["MONTH"], make: || UnitFunction::extract(TimeUnit::Month) },
        Entry { names: &["WEEK"], make: || UnitFunction::extract(TimeUnit::Week) },
        Entry { names: &["DAYOFMONTH"], make: || UnitFunction::extract(TimeUnit::Day) },
        Entry { names: &["HOUR"], make: || UnitFunction::extract(TimeUnit::Hour) },
        Entry { names: &["MINUTE"], make: || UnitFunction::extract(TimeUnit::Minute) },
        Entry { names: &["SECOND"], make: || UnitFunction::extract(TimeUnit::Second) },
        Entry { names: &["DATE_FORMAT"], make: || ScalarRef::new(DATE_FORMAT) },
        Entry { names: &["PROCTIME"], make: || ScalarRef::new(PROCTIME) },
        Entry { names: &["CURRENT_TIMESTAMP", "NOW"], make: || ScalarRef::new(CURRENT_TIMESTAMP) },
        Entry { names: &["LOCALTIMESTAMP"], make: || ScalarRef::new(LOCALTIMESTAMP) },
        Entry { names: &["CURRENT_DATE"], make: || ScalarRef::new(CURRENT_DATE) },
        Entry { names: &["CURRENT_TIME", "LOCALTIME"], make: || ScalarRef::new(CURRENT_TIME) },
        Entry { names: &["TO_TIMESTAMP"], make: || ScalarRef::new(TO_TIMESTAMP) },
        Entry { names: &["TO_TIMESTAMP_LTZ"], make: || ScalarRef::new(ToTimestampLtz { precision: None }) },
        Entry { names: &["UNIX_TIMESTAMP"], make: || ScalarRef::new(UNIX_TIMESTAMP) },
        Entry { names: &["FROM_UNIXTIME"], make: || ScalarRef::new(FROM_UNIXTIME) },
    ]
}

/// Processing time in epoch milliseconds.
fn now() -> i64 {
    SystemClock.now_millis()
}

fn is_datetime(ty: &DataType) -> bool {
    matches!(
        ty.logical,
        LogicalType::Timestamp(_) | LogicalType::TimestampLtz(_) | LogicalType::Date | LogicalType::Time(_)
    )
}

/// The optional pattern argument at `i`, or Flink's default `yyyy-MM-dd HH:mm:ss`.
fn pattern(args: &[Value], i: usize) -> &str {
    args.get(i).and_then(Value::as_str).unwrap_or(time::DEFAULT_PATTERN)
}

/// What a function of a time unit computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OfUnit {
    /// `EXTRACT(unit FROM t)` and the shorthands `YEAR(t)`, `HOUR(t)`, …: a BIGINT.
    Extract,
    /// `TIMESTAMPADD(unit, n, t)`: arguments `n, t`.
    TimestampAdd,
    /// `TIMESTAMPDIFF(unit, t1, t2)`: whole `unit`s from `t1` to `t2`, an INT.
    TimestampDiff,
}

/// EXTRACT, TIMESTAMPADD and TIMESTAMPDIFF, whose time unit is part of the call's syntax.
#[derive(Debug, Clone, Copy)]
pub struct UnitFunction {
    of: OfUnit,
    unit: TimeUnit,
}

impl UnitFunction {
    /// `EXTRACT(unit FROM t)`.
    pub fn extract(unit: TimeUnit) -> ScalarRef {
        ScalarRef::new(UnitFunction { of: OfUnit::Extract, unit })
    }

    /// `TIMESTAMPADD(unit, n, t)`.
    pub fn timestamp_add(unit: TimeUnit) -> ScalarRef {
        ScalarRef::new(UnitFunction { of: OfUnit::TimestampAdd, unit })
    }

    /// `TIMESTAMPDIFF(unit, t1, t2)`.
    pub fn timestamp_diff(unit: TimeUnit) -> ScalarRef {
        ScalarRef::new(UnitFunction { of: OfUnit::TimestampDiff, unit })
    }
}

impl ScalarFunction for UnitFunction {
    fn name(&self) -> &str {
        match self.of {
            OfUnit::Extract => "EXTRACT",
            OfUnit::TimestampAdd => "TIMESTAMPADD",
            OfUnit::TimestampDiff => "TIMESTAMPDIFF",
        }
    }

    fn arity(&self) -> Arity {
        Arity::exactly(if self.of == OfUnit::Extract { 1 } else { 2 })
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        let (ok, supported, ty) = match self.of {
            OfUnit::Extract => (is_datetime(types[0]), "<DATETIME>", DataType::bigint()),
            OfUnit::TimestampAdd => {
                let ty = match types[1].logical {
                    LogicalType::Date if self.unit.is_sub_day() => DataType::timestamp(6),
                    _ => types[1].clone(),
                };
                (is_integer(types[0]) && is_datetime(types[1]), "<INTEGER>, <DATETIME>", ty)
            }
            OfUnit::TimestampDiff => (types.iter().all(|t| is_datetime(t)), "<DATETIME>, <DATETIME>", DataType::int()),
        };
        expect(ok, self, types, supported)?;
        Ok(nullable_if_any(ty, types))
    }

    /// Flink's forms: `EXTRACT(FLAG(HOUR), ts)`, and `EXTRACT(HOUR, ts)` in the execution plan.
    fn explain(&self, args: &[String], infix: bool) -> String {
        let unit = self.unit.sql_name();
        let unit = if infix { unit.to_string() } else { format!("FLAG({unit})") };
        format!("{}({unit}, {})", self.name(), args.join(", "))
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        Ok(match self.of {
            OfUnit::Extract => time::extract(self.unit, &args[0]),
            OfUnit::TimestampAdd => {
                let n = args[0].as_i64().unwrap_or(0);
                time::timestamp_add(self.unit, n, &args[1]).ok_or_else(|| {
                    let at = weir_runtime::print::value_to_string(&args[1]);
                    time::out_of_range(format_args!("TIMESTAMPADD({}, {n}, {at})", self.unit.sql_name()))
                })?
            }
            OfUnit::TimestampDiff => time::timestamp_diff(self.unit, &args[0], &args[1]),
        })
    }

    /// EXTRACT of a TIMESTAMP (no time zone to apply) column.
    fn has_kernel(&self, args: &[&DataType]) -> bool {
        self.of == OfUnit::Extract && matches!(args[0].logical, LogicalType::Timestamp(p) if p <= 6)
    }

    fn eval_columns(&self, args: &[ArrayRef], _: &DataType) -> Option<ArrayRef> {
        let micros = args[0].as_primitive_opt::<TimestampMicrosecondType>()?;
        let extract = |m: i64| time::extract(self.unit, &Value::Timestamp(timestamp_of_micros(m))).as_i64();
        Some(Arc::new(micros.iter().map(|m| m.and_then(extract)).collect::<Int64Array>()))
    }
}

/// `DATE_FORMAT(t, pattern)` with Java's pattern letters.
pub const DATE_FORMAT: Builtin = Builtin::new(
    "DATE_FORMAT",
    Arity::exactly(2),
    |f, types| {
        let ok = (is_datetime(types[0]) || is_string(types[0])) && is_string(types[1]);
        f.expect(ok, types, "<TIMESTAMP>, <CHARACTER>")?;
        // NULL for a string that is no time, whatever the arguments, as Flink types it.
        Ok(DataType::string())
    },
    |args, _| match &args[0] {
        // A string is read as `yyyy-MM-dd HH:mm:ss` first, what follows the seconds left
        // unread (`SimpleDateFormat.parse` reads a prefix: `… 12:00:00.123` is read); NULL when
        // it is none.
        Value::String(s) => match time::parse_with_pattern(s, time::DEFAULT_PATTERN)
            .or_else(|| s.get(..19).and_then(|prefix| time::parse_with_pattern(prefix, time::DEFAULT_PATTERN)))
        {
            Some(t) => time::date_format(&Value::Timestamp(t), text(&args[1])),
            None => Ok(Value::Null),
        },
        other => time::date_format(other, text(&args[1])),
    },
);

/// `PROCTIME()`: the current processing time, a proctime attribute.
pub const PROCTIME: Builtin = Builtin::new(
    "PROCTIME",
    Arity::exactly(0),
    |_, _| {
        let ty = DataType::new(LogicalType::TimestampLtz(3)).not_null();
        Ok(ty.with_time_attribute(TimeAttribute::Proctime))
    },
    |_, _| Ok(Value::TimestampLtz(Timestamp::from_millis(now()))),
)
.nondeterministic();

/// `CURRENT_TIMESTAMP`, `NOW()`: the current instant, a TIMESTAMP_LTZ(3).
pub const CURRENT_TIMESTAMP: Builtin = Builtin::new(
    "CURRENT_TIMESTAMP",
    Arity::exactly(0),
    |_, _| Ok(DataType::new(LogicalType::TimestampLtz(3)).not_null()),
    |_, _| Ok(Value::TimestampLtz(Timestamp::from_millis(now()))),
)
.nondeterministic();

/// `LOCALTIMESTAMP`: the current date-time in UTC, a TIMESTAMP(3).
pub const LOCALTIMESTAMP: Builtin = Builtin::new(
    "LOCALTIMESTAMP",
    Arity::exactly(0),
    |_, _| Ok(DataType::timestamp(3).not_null()),
    |_, _| Ok(Value::Timestamp(Timestamp::from_millis(now()))),
)
.nondeterministic();

/// `CURRENT_DATE`: today in UTC.
pub const CURRENT_DATE: Builtin = Builtin::new(
    "CURRENT_DATE",
    Arity::exactly(0),
    |_, _| Ok(DataType::new(LogicalType::Date).not_null()),
    |_, _| Ok(Value::Date(now().div_euclid(86_400_000) as i32)),
)
.nondeterministic();

/// `CURRENT_TIME`, `LOCALTIME`: the current time of day in UTC, a TIME(0) (whole seconds).
pub const CURRENT_TIME: Builtin = Builtin::new(
    "CURRENT_TIME",
    Arity::exactly(0),
    |_, _| Ok(DataType::new(LogicalType::Time(0)).not_null()),
    |_, _| Ok(Value::Time(now().rem_euclid(86_400_000) / 1000 * 1_000_000_000)),
)
.nondeterministic();

/// `TO_TIMESTAMP(text[, pattern])`: NULL for text that does not match.
pub const TO_TIMESTAMP: Builtin = Builtin::new(
    "TO_TIMESTAMP",
    Arity::between(1, 2),
    |f, types| {
        f.expect(types.iter().all(|t| is_string(t)), types, "<CHARACTER>[, <CHARACTER>]")?;
        Ok(DataType::timestamp(3))
    },
    |args, _| {
        let parsed = match args.get(1) {
            Some(p) => time::parse_with_pattern(text(&args[0]), text(p)),
            // Without a pattern, any fraction of a second is read (and cut to milliseconds).
            None => time::parse_lenient(text(&args[0])),
        };
        Ok(parsed.map_or(Value::Null, |t| Value::Timestamp(Timestamp::from_millis(t.millis))))
    },
);

/// `TO_TIMESTAMP_LTZ(number[, precision])`: `number` in units of 10^-precision seconds
/// (precision 0 to 9; 3, milliseconds, by default), a TIMESTAMP_LTZ of at least millisecond
/// precision; NULL past the years 0000 to 9999.
#[derive(Debug, Clone)]
pub struct ToTimestampLtz {
    /// The precision when the call gives it as a constant.
    precision: Option<i64>,
}

impl ScalarFunction for ToTimestampLtz {
    fn name(&self) -> &str {
        "TO_TIMESTAMP_LTZ"
    }

    fn arity(&self) -> Arity {
        Arity::between(1, 2)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        if is_string(types[0]) {
            // `TO_TIMESTAMP_LTZ(text[, pattern])`: the text read in the session's zone (UTC).
            expect(types[1..].iter().all(|t| is_string(t)), self, types, "<CHARACTER>[, <CHARACTER>]")?;
            let mut ty = DataType::new(LogicalType::TimestampLtz(3));
            ty.nullable = true;
            return Ok(ty);
        }
        let ok = is_numeric(types[0]) && types[1..].iter().all(|t| is_integer(t));
        expect(ok, self, types, "<NUMERIC>, <INTEGER>")?;
        let precision = self.precision.unwrap_or(3).clamp(3, 9) as u8;
        let mut ty = DataType::new(LogicalType::TimestampLtz(precision));
        ty.nullable = true;
        Ok(ty)
    }

    fn bind(&self, args: &[crate::expr::Expr]) -> Result<Option<ScalarRef>, ExprError> {
        if args.first().is_some_and(|a| is_string(a.ty())) {
            return Ok(None);
        }
        let precision = match args.get(1) {
            None => Some(3),
            Some(e) => super::constant_integer(e),
        };
        if precision.is_some_and(|p| !(0..=9).contains(&p)) {
            return Err(ExprError("The precision of TO_TIMESTAMP_LTZ must be between 0 and 9".into()));
        }
        Ok(Some(ScalarRef::new(ToTimestampLtz { precision })))
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        if let Value::String(t) = &args[0] {
            let parsed = match args.get(1) {
                Some(p) => time::parse_with_pattern(t, text(p)),
                None => time::parse_lenient(t),
            };
            return Ok(parsed.map_or(Value::Null, Value::TimestampLtz));
        }
        let precision = args.get(1).and_then(Value::as_i64).unwrap_or(3).clamp(0, 9) as i32;
        let nanos = match &args[0] {
            Value::Double(_) | Value::Float(_) | Value::Decimal { .. } => {
                (args[0].as_f64().unwrap_or(0.0) * 10f64.powi(9 - precision)) as i128
            }
            n => i128::from(n.as_i64().unwrap_or(0)) * 10i128.pow((9 - precision) as u32),
        };
        let millis = nanos.div_euclid(1_000_000);
        if !i64::try_from(millis).is_ok_and(time::in_timestamp_range) {
            return Ok(Value::Null);
        }
        Ok(Value::TimestampLtz(Timestamp { millis: millis as i64, nanos_of_milli: nanos.rem_euclid(1_000_000) as u32 }))
    }
}

/// `UNIX_TIMESTAMP([text[, pattern]])`: epoch seconds, of now or of the text.
pub const UNIX_TIMESTAMP: Builtin = Builtin::new(
    "UNIX_TIMESTAMP",
    Arity::between(0, 2),
    |f, types| {
        f.expect(types.iter().all(|t| is_string(t)), types, "[<CHARACTER>[, <CHARACTER>]]")?;
        Ok(nullable_if_any(DataType::bigint(), types))
    },
    |args, _| {
        Ok(match args.first() {
            None => Value::BigInt(now().div_euclid(1000)),
            // Text that does not parse gives Long.MIN_VALUE, as in Flink.
            Some(t) => Value::BigInt(
                time::parse_with_pattern(text(t), pattern(args, 1)).map_or(i64::MIN, |ts| ts.millis.div_euclid(1000)),
            ),
        })
    },
)
.nondeterministic();

/// `FROM_UNIXTIME(seconds[, pattern])`: the UTC date-time as text.
pub const FROM_UNIXTIME: Builtin = Builtin::new(
    "FROM_UNIXTIME",
    Arity::between(1, 2),
    |f, types| {
        let ok = is_integer(types[0]) && types[1..].iter().all(|t| is_string(t));
        f.expect(ok, types, "<INTEGER>[, <CHARACTER>]")?;
        Ok(nullable_if_any(DataType::string(), types))
    },
    |args, _| {
        let seconds = args[0].as_i64().unwrap_or(0);
        time::date_format(&Value::Timestamp(Timestamp::from_millis(seconds * 1000)), pattern(args, 1))
    },
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extract_kernel_equals_the_row_path() {
        use arrow_array::Array;
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        let micros: Vec<Option<i64>> = (0..500)
            .map(|_| rng.random_bool(0.9).then(|| rng.random_range(-5_000_000_000_000_000..5_000_000_000_000_000)))
            .collect();
        let column: ArrayRef = Arc::new(arrow_array::TimestampMicrosecondArray::from(micros.clone()));
        for unit in TimeUnit::ALL {
            let f = UnitFunction::extract(unit);
            assert!(
                f.has_kernel(&[&DataType::timestamp(3)])
                    && !f.has_kernel(&[&DataType::new(LogicalType::TimestampLtz(3))])
            );
            let out = f.eval_columns(std::slice::from_ref(&column), &DataType::bigint()).unwrap();
            let out = out.as_primitive::<arrow_array::types::Int64Type>();
            for (i, m) in micros.iter().enumerate() {
                let expected = match m {
                    Some(m) => f.eval(&[Value::Timestamp(timestamp_of_micros(*m))], &DataType::bigint()).unwrap(),
                    None => Value::Null,
                };
                let got = if out.is_valid(i) { Value::BigInt(out.value(i)) } else { Value::Null };
                assert_eq!(got, expected, "{unit:?} of {m:?}");
            }
        }
    }

    #[test]
    fn conversions_round_trip_through_epoch_seconds() {
        let ts = TO_TIMESTAMP.eval(&[Value::string("2024-03-01 10:20:30")], &DataType::timestamp(3)).unwrap();
        let hour = UnitFunction::extract(TimeUnit::Hour).eval(std::slice::from_ref(&ts), &DataType::bigint()).unwrap();
        assert_eq!(hour, Value::BigInt(10));
        let seconds = UNIX_TIMESTAMP.eval(&[Value::string("2024-03-01 10:20:30")], &DataType::bigint()).unwrap();
        let text = FROM_UNIXTIME.eval(&[seconds], &DataType::string()).unwrap();
        assert_eq!(text, Value::string("2024-03-01 10:20:30"));
        assert!(!PROCTIME.is_deterministic() && DATE_FORMAT.is_deterministic());
    }
}
