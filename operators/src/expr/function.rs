//! The scalar functions and operators: their names, type rules and evaluation.

use std::cmp::Ordering;
use std::sync::Arc;

use regex::Regex;
use smallvec::SmallVec;
use weir_runtime::{DataType, LogicalType, Value};

use super::cast::{cast, round_decimal};
use super::types::{is_integer, is_numeric, is_string, Arithmetic};
use super::{arithmetic_result, comparable, compare, string, time, Expr, ExprError};
use crate::aggregate::numeric::{integer, unscaled_at};

/// A unit of time for EXTRACT, TIMESTAMPADD and TIMESTAMPDIFF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    /// YEAR
    Year,
    /// QUARTER
    Quarter,
    /// MONTH
    Month,
    /// WEEK
    Week,
    /// DAY
    Day,
    /// HOUR
    Hour,
    /// MINUTE
    Minute,
    /// SECOND
    Second,
    /// MILLISECOND
    Millisecond,
}

/// Which ends TRIM cuts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimSide {
    /// BOTH
    Both,
    /// LEADING
    Leading,
    /// TRAILING
    Trailing,
}

/// A scalar function or operator.
#[derive(Debug, Clone)]
pub enum Function {
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Times,
    /// `/`
    Divide,
    /// `%`, `MOD`
    Modulo,
    /// unary `-`
    Negate,
    /// `=`
    Equals,
    /// `<>`
    NotEquals,
    /// `<`
    Less,
    /// `<=`
    LessOrEqual,
    /// `>`
    Greater,
    /// `>=`
    GreaterOrEqual,
    /// `AND`
    And,
    /// `OR`
    Or,
    /// `NOT`
    Not,
    /// `IS NULL`
    IsNull,
    /// `IS NOT NULL`
    IsNotNull,
    /// `CASE WHEN c1 THEN v1 … ELSE e END`: arguments `c1, v1, …, e`.
    Case,
    /// `CAST(x AS t)`: the target is the call's type.
    Cast,
    /// `TRY_CAST(x AS t)`: NULL instead of an error.
    TryCast,
    /// `x IN (a, b, …)`: arguments `x, a, b, …`.
    In,
    /// `x BETWEEN lo AND hi`
    Between,
    /// `x LIKE pattern`
    Like(Option<Regex>),
    /// `COALESCE(a, b, …)`
    Coalesce,
    /// `IF(condition, then, else)`
    If,
    /// `NULLIF(a, b)`
    NullIf,
    /// `UPPER(s)`
    Upper,
    /// `LOWER(s)`
    Lower,
    /// `SUBSTRING(s, start[, length])`
    Substring,
    /// `CONCAT(a, b, …)`: NULL if any argument is NULL.
    Concat,
    /// `CONCAT_WS(separator, a, b, …)`: skips NULL arguments.
    ConcatWs,
    /// `CHAR_LENGTH(s)`
    CharLength,
    /// `INITCAP(s)`
    InitCap,
    /// `POSITION(needle IN s)`
    Position,
    /// `LPAD(s, length, pad)`
    Lpad,
    /// `RPAD(s, length, pad)`
    Rpad,
    /// `REPLACE(s, search, replacement)`
    Replace,
    /// `REGEXP_EXTRACT(s, regex[, group])`, the regex compiled once when constant.
    RegexpExtract(Option<Regex>),
    /// `REGEXP_REPLACE(s, regex, replacement)`
    RegexpReplace(Option<Regex>),
    /// `SPLIT_INDEX(s, delimiter, index)`
    SplitIndex,
    /// `TRIM([BOTH|LEADING|TRAILING] [chars] FROM s)`: arguments `s, chars`.
    Trim(TrimSide),
    /// `ABS(x)`
    Abs,
    /// `ROUND(x, digits)`, the digits a constant.
    Round(i32),
    /// `FLOOR(x)`
    Floor,
    /// `CEIL(x)`
    Ceil,
    /// `POWER(x, y)`
    Power,
    /// `SQRT(x)`
    Sqrt,
    /// `LN(x)`
    Ln,
    /// `LOG10(x)`
    Log10,
    /// `EXTRACT(unit FROM t)`, `HOUR(t)`, `MINUTE(t)`, `SECOND(t)`, …
    Extract(TimeUnit),
    /// `DATE_FORMAT(t, pattern)`
    DateFormat,
    /// `PROCTIME()`: the current processing time.
    Proctime,
    /// `CURRENT_TIMESTAMP`, `NOW()`: the current instant (TIMESTAMP_LTZ(3)).
    CurrentTimestamp,
    /// `LOCALTIMESTAMP`: the current date-time in UTC (TIMESTAMP(3)).
    LocalTimestamp,
    /// `CURRENT_DATE`
    CurrentDate,
    /// `TO_TIMESTAMP(text[, pattern])`
    ToTimestamp,
    /// `TO_TIMESTAMP_LTZ(number, precision)`: epoch seconds (precision 0) or milliseconds (3).
    ToTimestampLtz,
    /// `UNIX_TIMESTAMP([text[, pattern]])`: epoch seconds.
    UnixTimestamp,
    /// `FROM_UNIXTIME(seconds[, pattern])`
    FromUnixtime,
    /// `HASH_CODE(x)`: Java's hash code of the value.
    HashCode,
    /// `RAND([seed])`
    Rand,
    /// `TIMESTAMPADD(unit, n, t)`: arguments `n, t`.
    TimestampAdd(TimeUnit),
    /// `TIMESTAMPDIFF(unit, t1, t2)`: arguments `t1, t2`.
    TimestampDiff(TimeUnit),
}

impl Function {
    /// Whether the function gives the same result for the same arguments every time (not the
    /// clock or a random number).
    pub fn is_deterministic(&self) -> bool {
        !matches!(
            self,
            Function::Proctime
                | Function::CurrentTimestamp
                | Function::LocalTimestamp
                | Function::CurrentDate
                | Function::UnixTimestamp
                | Function::Rand
        )
    }

    /// The function called `name` (any case) that takes ordinary arguments, if weir has it.
    pub fn by_name(name: &str) -> Option<Function> {
        Some(match name.to_ascii_uppercase().as_str() {
            "MOD" => Function::Modulo,
            "COALESCE" => Function::Coalesce,
            "IF" => Function::If,
            "NULLIF" => Function::NullIf,
            "UPPER" => Function::Upper,
            "LOWER" => Function::Lower,
            "SUBSTRING" | "SUBSTR" => Function::Substring,
            "CONCAT" => Function::Concat,
            "CONCAT_WS" => Function::ConcatWs,
            "CHAR_LENGTH" | "CHARACTER_LENGTH" => Function::CharLength,
            "INITCAP" => Function::InitCap,
            "LPAD" => Function::Lpad,
            "RPAD" => Function::Rpad,
            "REPLACE" => Function::Replace,
            "REGEXP_EXTRACT" => Function::RegexpExtract(None),
            "REGEXP_REPLACE" => Function::RegexpReplace(None),
            "SPLIT_INDEX" => Function::SplitIndex,
            "ABS" => Function::Abs,
            "FLOOR" => Function::Floor,
            "CEIL" | "CEILING" => Function::Ceil,
            "POWER" => Function::Power,
            "SQRT" => Function::Sqrt,
            "LN" => Function::Ln,
            "LOG10" => Function::Log10,
            "YEAR" => Function::Extract(TimeUnit::Year),
            "QUARTER" => Function::Extract(TimeUnit::Quarter),
            "MONTH" => Function::Extract(TimeUnit::Month),
            "WEEK" => Function::Extract(TimeUnit::Week),
            "DAYOFMONTH" => Function::Extract(TimeUnit::Day),
            "HOUR" => Function::Extract(TimeUnit::Hour),
            "MINUTE" => Function::Extract(TimeUnit::Minute),
            "SECOND" => Function::Extract(TimeUnit::Second),
            "DATE_FORMAT" => Function::DateFormat,
            "PROCTIME" => Function::Proctime,
            "CURRENT_TIMESTAMP" | "NOW" => Function::CurrentTimestamp,
            "LOCALTIMESTAMP" => Function::LocalTimestamp,
            "CURRENT_DATE" => Function::CurrentDate,
            "TO_TIMESTAMP" => Function::ToTimestamp,
            "TO_TIMESTAMP_LTZ" => Function::ToTimestampLtz,
            "UNIX_TIMESTAMP" => Function::UnixTimestamp,
            "FROM_UNIXTIME" => Function::FromUnixtime,
            "HASH_CODE" => Function::HashCode,
            "RAND" => Function::Rand,
            _ => return None,
        })
    }

    /// The SQL name, for messages.
    pub fn name(&self) -> String {
        let debug = format!("{self:?}");
        let base = debug.split('(').next().unwrap_or(&debug);
        let mut name = String::new();
        for (i, c) in base.chars().enumerate() {
            if c.is_uppercase() && i > 0 {
                name.push('_');
            }
            name.push(c.to_ascii_uppercase());
        }
        name
    }

    fn wrong_types(&self, types: &[&DataType], supported: &str) -> ExprError {
        let name = self.name();
        let args: Vec<String> = types.iter().map(|t| format!("<{}>", t.logical)).collect();
        ExprError(format!(
            "Cannot apply '{name}' to arguments of type '{name}({})'. Supported form(s): '{name}({supported})'",
            args.join(", ")
        ))
    }

    /// The result type for arguments of `types`.
    ///
    /// # Errors
    /// Argument types the function does not take, in Flink's words.
    pub fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        let any_nullable = types.iter().any(|t| t.nullable);
        let with_nullability = |mut t: DataType| {
            t.nullable = any_nullable;
            t
        };
        let expect = |ok: bool, supported: &str| if ok { Ok(()) } else { Err(self.wrong_types(types, supported)) };
        let arg = |i: usize| types.get(i).copied().cloned().unwrap_or_else(DataType::int);
        Ok(match self {
            Function::Plus | Function::Minus if is_datetime_interval(&arg(0), &arg(1)) => arg(0),
            Function::Plus if is_datetime_interval(&arg(1), &arg(0)) => arg(1),
            Function::Plus => arithmetic_result(Arithmetic::Plus, "+", &arg(0), &arg(1))?,
            Function::Minus => arithmetic_result(Arithmetic::Minus, "-", &arg(0), &arg(1))?,
            Function::Times => arithmetic_result(Arithmetic::Times, "*", &arg(0), &arg(1))?,
            Function::Divide => arithmetic_result(Arithmetic::Divide, "/", &arg(0), &arg(1))?,
            Function::Modulo => arithmetic_result(Arithmetic::Modulo, "MOD", &arg(0), &arg(1))?,
            Function::Negate | Function::Abs => {
                expect(is_numeric(&arg(0)), "<NUMERIC>")?;
                arg(0)
            }
            Function::Equals
            | Function::NotEquals
            | Function::Less
            | Function::LessOrEqual
            | Function::Greater
            | Function::GreaterOrEqual => {
                comparable(&self.name(), &arg(0), &arg(1))?;
                with_nullability(DataType::boolean())
            }
            Function::And | Function::Or | Function::Not => {
                expect(types.iter().all(|t| matches!(t.logical, LogicalType::Boolean)), "<BOOLEAN>")?;
                with_nullability(DataType::boolean())
            }
            Function::IsNull | Function::IsNotNull => DataType::boolean().not_null(),
            Function::In | Function::Between => {
                for t in &types[1..] {
                    comparable(&self.name(), &arg(0), t)?;
                }
                with_nullability(DataType::boolean())
            }
            Function::Like(_) => {
                expect(is_string(&arg(0)) && is_string(&arg(1)), "<CHARACTER>, <CHARACTER>")?;
                with_nullability(DataType::boolean())
            }
            Function::Case => {
                // Arguments alternate condition, value; a trailing odd one is the ELSE value.
                let values =
                    types.iter().enumerate().filter(|(i, _)| i % 2 == 1 || *i == types.len() - 1 && i % 2 == 0);
                let mut result: Option<DataType> = None;
                for (_, t) in values {
                    result = Some(match result {
                        None => (*t).clone(),
                        Some(r) => super::types::common_type(&r, t)
                            .ok_or_else(|| ExprError(format!("Illegal mixing of types in CASE: {r} and {t}")))?,
                    });
                }
                let mut r = result.unwrap_or_else(DataType::int);
                r.nullable = true;
                r
            }
            Function::Cast | Function::TryCast => arg(0),
            Function::Coalesce => {
                let mut r = arg(0);
                for t in &types[1..] {
                    r = super::types::common_type(&r, t)
                        .ok_or_else(|| ExprError(format!("Illegal mixing of types in COALESCE: {} and {}", r, t)))?;
                }
                r.nullable = types.iter().all(|t| t.nullable);
                r
            }
            Function::If => {
                expect(types.len() == 3 && matches!(arg(0).logical, LogicalType::Boolean), "<BOOLEAN>, <ANY>, <ANY>")?;
                super::types::common_type(&arg(1), &arg(2))
                    .ok_or_else(|| self.wrong_types(types, "<BOOLEAN>, <ANY>, <ANY>"))?
            }
            Function::NullIf => {
                let mut r = arg(0);
                r.nullable = true;
                r
            }
            Function::Upper | Function::Lower | Function::InitCap => {
                expect(types.len() == 1 && is_string(&arg(0)), "<CHARACTER>")?;
                with_nullability(DataType::string())
            }
            Function::Substring => {
                expect(
                    is_string(&arg(0)) && types[1..].iter().all(|t| is_integer(t)),
                    "<CHARACTER>, <INTEGER>[, <INTEGER>]",
                )?;
                with_nullability(DataType::string())
            }
            Function::Concat | Function::Replace | Function::Lpad | Function::Rpad | Function::SplitIndex => {
                with_nullability(DataType::string())
            }
            Function::ConcatWs => DataType::string().not_null(),
            Function::RegexpExtract(_) | Function::RegexpReplace(_) => DataType::string(),
            Function::Trim(_) => with_nullability(DataType::string()),
            Function::CharLength | Function::Position => {
                expect(types.iter().all(|t| is_string(t)), "<CHARACTER>")?;
                with_nullability(DataType::int())
            }
            Function::Round(digits) => {
                expect(is_numeric(&arg(0)), "<NUMERIC>, <INTEGER>")?;
                match arg(0).logical {
                    LogicalType::Decimal { precision, scale } => {
                        with_nullability(round_decimal_type(precision, scale, *digits))
                    }
                    _ => arg(0),
                }
            }
            Function::Floor | Function::Ceil => {
                expect(is_numeric(&arg(0)), "<NUMERIC>")?;
                match arg(0).logical {
                    LogicalType::Decimal { precision, scale } => {
                        let precision = (precision - scale + u8::from(scale > 0)).clamp(1, 38);
                        with_nullability(DataType::decimal(precision, 0))
                    }
                    _ => arg(0),
                }
            }
            Function::Power | Function::Sqrt | Function::Ln | Function::Log10 => {
                expect(types.iter().all(|t| is_numeric(t)), "<NUMERIC>")?;
                with_nullability(DataType::double())
            }
            Function::Extract(_) => {
                expect(
                    matches!(
                        arg(0).logical,
                        LogicalType::Timestamp(_)
                            | LogicalType::TimestampLtz(_)
                            | LogicalType::Date
                            | LogicalType::Time(_)
                    ),
                    "<DATETIME>",
                )?;
                with_nullability(DataType::bigint())
            }
            Function::DateFormat => with_nullability(DataType::string()),
            Function::CurrentTimestamp => DataType::new(LogicalType::TimestampLtz(3)).not_null(),
            Function::LocalTimestamp => DataType::timestamp(3).not_null(),
            Function::CurrentDate => DataType::new(LogicalType::Date).not_null(),
            Function::ToTimestamp => {
                expect(types.iter().all(|t| is_string(t)), "<CHARACTER>[, <CHARACTER>]")?;
                DataType::timestamp(3)
            }
            Function::ToTimestampLtz => {
                expect(types.first().is_some_and(|t| is_numeric(t)), "<NUMERIC>, <INTEGER>")?;
                with_nullability(DataType::new(LogicalType::TimestampLtz(3)))
            }
            Function::UnixTimestamp => with_nullability(DataType::bigint()),
            Function::FromUnixtime => with_nullability(DataType::string()),
            Function::HashCode => with_nullability(DataType::int()),
            Function::Rand => DataType::double().not_null(),
            Function::Proctime => DataType::new(LogicalType::TimestampLtz(3))
                .not_null()
                .with_time_attribute(weir_runtime::types::TimeAttribute::Proctime),
            Function::TimestampAdd(_) => arg(1),
            Function::TimestampDiff(_) => with_nullability(DataType::int()),
        })
    }
}

pub(super) fn boolean(b: Option<bool>) -> Value {
    b.map_or(Value::Null, Value::Boolean)
}

pub(super) fn truth(v: &Value) -> Option<bool> {
    v.as_bool()
}

fn text(v: &Value) -> Option<&str> {
    v.as_str()
}

fn string(s: String) -> Value {
    Value::String(Arc::from(s))
}

fn compiled(cached: &Option<Regex>, pattern: &str) -> Result<Regex, ExprError> {
    match cached {
        Some(r) => Ok(r.clone()),
        None => Regex::new(pattern).map_err(|e| ExprError(format!("Invalid regular expression '{pattern}': {e}"))),
    }
}

/// Evaluates `function` over `args` for one row.
pub(super) fn eval(function: &Function, args: &[Expr], ty: &DataType, row: &[Value]) -> Result<Value, ExprError> {
    // Functions that look at NULLs or evaluate lazily.
    match function {
        Function::And => {
            let mut result = Some(true);
            for a in args {
                match truth(&a.eval(row)?) {
                    Some(false) => return Ok(Value::Boolean(false)),
                    None => result = None,
                    Some(true) => {}
                }
            }
            return Ok(boolean(result));
        }
        Function::Or => {
            let mut result = Some(false);
            for a in args {
                match truth(&a.eval(row)?) {
                    Some(true) => return Ok(Value::Boolean(true)),
                    None => result = None,
                    Some(false) => {}
                }
            }
            return Ok(boolean(result));
        }
        Function::IsNull => return Ok(Value::Boolean(args[0].eval(row)?.is_null())),
        Function::IsNotNull => return Ok(Value::Boolean(!args[0].eval(row)?.is_null())),
        Function::Case => {
            let mut i = 0;
            while i + 1 < args.len() {
                if truth(&args[i].eval(row)?) == Some(true) {
                    return cast(&args[i + 1].eval(row)?, ty).map_err(ExprError);
                }
                i += 2;
            }
            return if i < args.len() { cast(&args[i].eval(row)?, ty).map_err(ExprError) } else { Ok(Value::Null) };
        }
        Function::Coalesce => {
            for a in args {
                let v = a.eval(row)?;
                if !v.is_null() {
                    return cast(&v, ty).map_err(ExprError);
                }
            }
            return Ok(Value::Null);
        }
        Function::If => {
            let branch = if truth(&args[0].eval(row)?) == Some(true) { &args[1] } else { &args[2] };
            return cast(&branch.eval(row)?, ty).map_err(ExprError);
        }
        Function::ConcatWs => {
            let values = eval_args(args, row)?;
            let Some(separator) = text(&values[0]) else { return Ok(Value::Null) };
            let parts: Vec<&str> = values[1..].iter().filter_map(text).collect();
            return Ok(string(parts.join(separator)));
        }
        Function::TryCast => return Ok(cast(&args[0].eval(row)?, ty).unwrap_or(Value::Null)),
        Function::Rand => {
            // Without a seed, the row's address adds entropy: evaluated per row.
            let seed = args.first().map(|a| a.eval(row)).transpose()?;
            if seed.as_ref().is_some_and(Value::is_null) {
                return Ok(Value::Null);
            }
            return Ok(Value::Double(random_double(seed.and_then(|s| s.as_i64()), row)));
        }
        Function::NullIf => {
            let (a, b) = (args[0].eval(row)?, args[1].eval(row)?);
            return Ok(if compare(&a, &b) == Some(Ordering::Equal) { Value::Null } else { a });
        }
        _ => {}
    }
    apply(function, &eval_args(args, row)?, ty)
}

/// Whether `function` looks at its arguments itself (NULLs, laziness) instead of taking them
/// evaluated through [`apply`].
pub(super) fn is_lazy(function: &Function) -> bool {
    matches!(
        function,
        Function::And
            | Function::Or
            | Function::IsNull
            | Function::IsNotNull
            | Function::Case
            | Function::Coalesce
            | Function::If
            | Function::ConcatWs
            | Function::TryCast
            | Function::NullIf
            | Function::Rand
    )
}

/// `function` of evaluated arguments `values` (any function but the [`is_lazy`] ones), with
/// result type `ty`: NULL in, NULL out, except where Flink says otherwise.
pub(super) fn apply(function: &Function, values: &[Value], ty: &DataType) -> Result<Value, ExprError> {
    if matches!(function, Function::In) {
        if values[0].is_null() {
            return Ok(Value::Null);
        }
        let mut saw_null = false;
        for v in &values[1..] {
            match compare(&values[0], v) {
                Some(Ordering::Equal) => return Ok(Value::Boolean(true)),
                None => saw_null = true,
                _ => {}
            }
        }
        return Ok(if saw_null { Value::Null } else { Value::Boolean(false) });
    }
    if values.iter().any(Value::is_null) && !matches!(function, Function::RegexpExtract(_)) {
        return Ok(Value::Null);
    }
    let v = |i: usize| &values[i];
    Ok(match function {
        Function::Plus | Function::Minus if is_interval(v(1)) || is_interval(v(0)) => {
            let sign = if matches!(function, Function::Minus) { -1 } else { 1 };
            let (point, interval) = if is_interval(v(1)) { (v(0), v(1)) } else { (v(1), v(0)) };
            shift(point, interval, sign)
        }
        Function::Plus => arithmetic(Arithmetic::Plus, v(0), v(1), ty)?,
        Function::Minus => arithmetic(Arithmetic::Minus, v(0), v(1), ty)?,
        Function::Times => arithmetic(Arithmetic::Times, v(0), v(1), ty)?,
        Function::Divide => arithmetic(Arithmetic::Divide, v(0), v(1), ty)?,
        Function::Modulo => arithmetic(Arithmetic::Modulo, v(0), v(1), ty)?,
        Function::Negate => arithmetic(Arithmetic::Minus, &crate::aggregate::numeric::zero(ty), v(0), ty)?,
        Function::Equals => boolean(compare(v(0), v(1)).map(|o| o == Ordering::Equal)),
        Function::NotEquals => boolean(compare(v(0), v(1)).map(|o| o != Ordering::Equal)),
        Function::Less => boolean(compare(v(0), v(1)).map(|o| o == Ordering::Less)),
        Function::LessOrEqual => boolean(compare(v(0), v(1)).map(|o| o != Ordering::Greater)),
        Function::Greater => boolean(compare(v(0), v(1)).map(|o| o == Ordering::Greater)),
        Function::GreaterOrEqual => boolean(compare(v(0), v(1)).map(|o| o != Ordering::Less)),
        Function::Not => boolean(truth(v(0)).map(|b| !b)),
        Function::Between => boolean(
            compare(v(0), v(1))
                .zip(compare(v(0), v(2)))
                .map(|(lo, hi)| lo != Ordering::Less && hi != Ordering::Greater),
        ),
        Function::Like(cached) => {
            let regex = match cached {
                Some(r) => r.clone(),
                None => string::like_regex(text(v(1)).unwrap_or_default())?,
            };
            Value::Boolean(regex.is_match(text(v(0)).unwrap_or_default()))
        }
        Function::Cast => cast(v(0), ty).map_err(ExprError)?,
        Function::Upper => change_case(text(v(0)).unwrap_or_default(), true),
        Function::Lower => change_case(text(v(0)).unwrap_or_default(), false),
        Function::InitCap => string(string::initcap(text(v(0)).unwrap_or_default())),
        Function::Substring => {
            let length = values.get(2).and_then(Value::as_i64);
            string(string::substring(text(v(0)).unwrap_or_default(), v(1).as_i64().unwrap_or(1), length))
        }
        Function::Concat => string(
            values
                .iter()
                .filter_map(|x| text(x).map(str::to_string).or_else(|| Some(super::cast::to_text(x))))
                .collect(),
        ),
        Function::CharLength => Value::Int(text(v(0)).unwrap_or_default().chars().count() as i32),
        Function::Position => {
            let (needle, haystack) = (text(v(0)).unwrap_or_default(), text(v(1)).unwrap_or_default());
            Value::Int(haystack.find(needle).map_or(0, |byte| haystack[..byte].chars().count() as i32 + 1))
        }
        Function::Lpad | Function::Rpad => {
            let left = matches!(function, Function::Lpad);
            match string::pad(
                text(v(0)).unwrap_or_default(),
                v(1).as_i64().unwrap_or(0),
                text(v(2)).unwrap_or_default(),
                left,
            ) {
                Some(s) => string(s),
                None => Value::Null,
            }
        }
        Function::Replace => string(
            text(v(0)).unwrap_or_default().replace(text(v(1)).unwrap_or_default(), text(v(2)).unwrap_or_default()),
        ),
        Function::RegexpExtract(cached) => {
            if values[..2].iter().any(Value::is_null) {
                return Ok(Value::Null);
            }
            let regex = compiled(cached, text(v(1)).unwrap_or_default())?;
            let group = values.get(2).and_then(Value::as_i64).unwrap_or(0) as usize;
            regex
                .captures(text(v(0)).unwrap_or_default())
                .and_then(|c| c.get(group))
                .map_or(Value::Null, |m| string(m.as_str().to_string()))
        }
        Function::RegexpReplace(cached) => {
            let regex = compiled(cached, text(v(1)).unwrap_or_default())?;
            let replacement = string::java_replacement(text(v(2)).unwrap_or_default());
            string(regex.replace_all(text(v(0)).unwrap_or_default(), replacement.as_str()).into_owned())
        }
        Function::SplitIndex => {
            let index = v(2).as_i64().unwrap_or(-1);
            let delimiter = text(v(1)).unwrap_or_default();
            match usize::try_from(index).ok().and_then(|i| text(v(0)).unwrap_or_default().split(delimiter).nth(i)) {
                Some(part) => string(part.to_string()),
                None => Value::Null,
            }
        }
        Function::Trim(side) => string(string::trim(text(v(0)).unwrap_or_default(), text(v(1)).unwrap_or(" "), *side)),
        Function::Abs => match v(0) {
            Value::Double(x) => Value::Double(x.abs()),
            Value::Float(x) => Value::Float(x.abs()),
            x if x.as_decimal().is_some() => {
                let d = x.as_decimal().unwrap_or(weir_runtime::Decimal { unscaled: 0, scale: 0 });
                Value::decimal(d.unscaled.abs(), d.scale)
            }
            x => integer(x.as_i64().unwrap_or(0).wrapping_abs(), ty),
        },
        Function::Round(digits) => round(v(0), i64::from(*digits), ty),
        Function::Floor | Function::Ceil => floor_ceil(v(0), matches!(function, Function::Ceil), ty),
        Function::Power => Value::Double(v(0).as_f64().unwrap_or(0.0).powf(v(1).as_f64().unwrap_or(0.0))),
        Function::Sqrt => Value::Double(v(0).as_f64().unwrap_or(0.0).sqrt()),
        Function::Ln => Value::Double(v(0).as_f64().unwrap_or(0.0).ln()),
        Function::Log10 => Value::Double(v(0).as_f64().unwrap_or(0.0).log10()),
        Function::Extract(unit) => time::extract(*unit, v(0)),
        Function::DateFormat => time::date_format(v(0), text(v(1)).unwrap_or_default()),
        Function::Proctime | Function::CurrentTimestamp => {
            Value::TimestampLtz(weir_runtime::Timestamp::from_millis(now()))
        }
        Function::LocalTimestamp => Value::Timestamp(weir_runtime::Timestamp::from_millis(now())),
        Function::CurrentDate => Value::Date(now().div_euclid(86_400_000) as i32),
        Function::ToTimestamp => {
            let pattern = values.get(1).and_then(text).unwrap_or(time::DEFAULT_PATTERN);
            time::parse_with_pattern(text(v(0)).unwrap_or_default(), pattern).map_or(Value::Null, Value::Timestamp)
        }
        Function::ToTimestampLtz => {
            let precision = values.get(1).and_then(Value::as_i64).unwrap_or(3);
            let n = v(0).as_f64().unwrap_or(0.0);
            let millis = if precision == 0 { (n * 1000.0) as i64 } else { n as i64 };
            Value::TimestampLtz(weir_runtime::Timestamp::from_millis(millis))
        }
        Function::UnixTimestamp => match values.first() {
            None => Value::BigInt(now().div_euclid(1000)),
            Some(t) => {
                let pattern = values.get(1).and_then(text).unwrap_or(time::DEFAULT_PATTERN);
                time::parse_with_pattern(text(t).unwrap_or_default(), pattern)
                    .map_or(Value::Null, |ts| Value::BigInt(ts.millis.div_euclid(1000)))
            }
        },
        Function::FromUnixtime => {
            let pattern = values.get(1).and_then(text).unwrap_or(time::DEFAULT_PATTERN);
            let ts = Value::Timestamp(weir_runtime::Timestamp::from_millis(v(0).as_i64().unwrap_or(0) * 1000));
            time::date_format(&ts, pattern)
        }
        Function::HashCode => Value::Int(java_hash(v(0))),
        Function::TimestampAdd(unit) => time::timestamp_add(*unit, v(0).as_i64().unwrap_or(0), v(1)),
        Function::TimestampDiff(unit) => time::timestamp_diff(*unit, v(0), v(1)),
        other => return Err(ExprError(format!("{} cannot be evaluated here", other.name()))),
    })
}

/// The values of `args` for `row`, on the stack for up to four arguments.
fn eval_args(args: &[Expr], row: &[Value]) -> Result<SmallVec<[Value; 4]>, ExprError> {
    let mut values = SmallVec::with_capacity(args.len());
    for a in args {
        values.push(a.eval(row)?);
    }
    Ok(values)
}

/// UPPER / LOWER; ASCII text is converted in a stack buffer so the result is allocated once.
fn change_case(s: &str, upper: bool) -> Value {
    let mut buffer = [0u8; 128];
    if s.is_ascii() && s.len() <= buffer.len() {
        let bytes = &mut buffer[..s.len()];
        bytes.copy_from_slice(s.as_bytes());
        if upper {
            bytes.make_ascii_uppercase();
        } else {
            bytes.make_ascii_lowercase();
        }
        return Value::String(Arc::from(std::str::from_utf8(bytes).unwrap_or_default()));
    }
    string(if upper { s.to_uppercase() } else { s.to_lowercase() })
}

/// Processing time in epoch milliseconds.
fn now() -> i64 {
    weir_runtime::Clock::now_millis(&weir_runtime::SystemClock)
}

/// Java's `hashCode` of a value: `String.hashCode`, `Integer`, `Long`, `Boolean`, `Double`.
fn java_hash(v: &Value) -> i32 {
    match v {
        Value::String(s) => s.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c))),
        Value::Boolean(b) => {
            if *b {
                1231
            } else {
                1237
            }
        }
        Value::BigInt(n) => (*n ^ ((*n as u64) >> 32) as i64) as i32,
        Value::Double(d) => {
            let bits = d.to_bits();
            (bits ^ (bits >> 32)) as i32
        }
        other => other.as_i64().map_or(0, |n| n as i32),
    }
}

/// A random number in [0, 1); with a seed, the same for the same seed and row.
fn random_double(seed: Option<i64>, row: &[Value]) -> f64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    match seed {
        Some(s) => s.hash(&mut hasher),
        None => (now(), std::thread::current().id(), row.as_ptr() as usize).hash(&mut hasher),
    }
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// Whether `a ± b` moves a date-time by an interval.
fn is_datetime_interval(a: &DataType, b: &DataType) -> bool {
    matches!(a.logical, LogicalType::Timestamp(_) | LogicalType::TimestampLtz(_) | LogicalType::Date)
        && matches!(b.logical, LogicalType::IntervalDayTime | LogicalType::IntervalYearMonth)
}

fn is_interval(v: &Value) -> bool {
    matches!(v, Value::IntervalDayTime(_) | Value::IntervalYearMonth(_))
}

/// A date-time moved by `sign` times an interval.
fn shift(point: &Value, interval: &Value, sign: i64) -> Value {
    match interval {
        Value::IntervalDayTime(ms) => time::timestamp_add(TimeUnit::Millisecond, sign * ms, point),
        Value::IntervalYearMonth(months) => time::timestamp_add(TimeUnit::Month, sign * i64::from(*months), point),
        _ => Value::Null,
    }
}

/// `a op b` in the result type `ty` (operands non-NULL).
fn arithmetic(op: Arithmetic, a: &Value, b: &Value, ty: &DataType) -> Result<Value, ExprError> {
    match ty.logical {
        LogicalType::Float | LogicalType::Double => {
            let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            let r = match op {
                Arithmetic::Plus => x + y,
                Arithmetic::Minus => x - y,
                Arithmetic::Times => x * y,
                Arithmetic::Divide => x / y,
                Arithmetic::Modulo => x % y,
            };
            Ok(if matches!(ty.logical, LogicalType::Float) { Value::Float(r as f32) } else { Value::Double(r) })
        }
        LogicalType::Decimal { precision, scale } => {
            let scale_of = |v: &Value| v.as_decimal().map_or(0, |d| d.scale);
            let (sa, sb) = (scale_of(a), scale_of(b));
            let (ua, ub) = (unscaled_at(a, sa), unscaled_at(b, sb));
            let result = match op {
                Arithmetic::Plus => unscaled_at(a, scale).checked_add(unscaled_at(b, scale)),
                Arithmetic::Minus => unscaled_at(a, scale).checked_sub(unscaled_at(b, scale)),
                Arithmetic::Times => ua.checked_mul(ub).map(|p| round_decimal(p, sa + sb, scale)),
                Arithmetic::Divide if ub == 0 => return Err(ExprError("Division by zero".into())),
                Arithmetic::Divide => {
                    // ua / 10^sa ÷ ub / 10^sb at scale + 1 digits, then rounded half up.
                    let shift = i32::from(scale) + 1 + i32::from(sb) - i32::from(sa);
                    let numerator = if shift >= 0 {
                        ua.checked_mul(10i128.pow(shift as u32))
                    } else {
                        Some(ua / 10i128.pow((-shift) as u32))
                    };
                    numerator.map(|n| round_decimal(n / ub, scale + 1, scale))
                }
                Arithmetic::Modulo if ub == 0 => return Err(ExprError("Division by zero".into())),
                Arithmetic::Modulo => Some(unscaled_at(a, scale) % unscaled_at(b, scale)),
            };
            Ok(match result.filter(|r| r.unsigned_abs() < 10u128.pow(u32::from(precision))) {
                Some(r) => Value::decimal(r, scale),
                None => Value::Null,
            })
        }
        _ => {
            let (x, y) = (a.as_i64().unwrap_or(0), b.as_i64().unwrap_or(0));
            let r = match op {
                Arithmetic::Plus => x.wrapping_add(y),
                Arithmetic::Minus => x.wrapping_sub(y),
                Arithmetic::Times => x.wrapping_mul(y),
                Arithmetic::Divide | Arithmetic::Modulo if y == 0 => return Err(ExprError("/ by zero".into())),
                Arithmetic::Divide => x.wrapping_div(y),
                Arithmetic::Modulo => x.wrapping_rem(y),
            };
            Ok(integer(r, ty))
        }
    }
}

fn round(x: &Value, digits: i64, ty: &DataType) -> Value {
    match (x, &ty.logical) {
        (Value::Double(_) | Value::Float(_), _) => {
            let rounded = round_double(x.as_f64().unwrap_or(0.0), digits);
            if matches!(x, Value::Float(_)) {
                Value::Float(rounded as f32)
            } else {
                Value::Double(rounded)
            }
        }
        (_, LogicalType::Decimal { scale, .. }) => {
            let d = x.as_decimal().unwrap_or(weir_runtime::Decimal { unscaled: 0, scale: 0 });
            let kept = digits.clamp(0, i64::from(d.scale)) as u8;
            let rounded = round_decimal(d.unscaled, d.scale, kept);
            Value::decimal(round_decimal(rounded, kept, *scale), *scale)
        }
        _ => {
            let n = x.as_i64().unwrap_or(0);
            if digits >= 0 {
                integer(n, ty)
            } else {
                let factor = 10i64.pow((-digits).min(18) as u32);
                let r = (n.abs() + factor / 2) / factor * factor;
                integer(r * n.signum(), ty)
            }
        }
    }
}

/// Flink's `findRoundDecimalType`: rounding may add a digit before the point.
pub fn round_decimal_type(precision: u8, scale: u8, digits: i32) -> DataType {
    if digits >= i32::from(scale) {
        DataType::decimal(precision, scale)
    } else if digits < 0 {
        DataType::decimal((1 + precision - scale).min(38), 0)
    } else {
        DataType::decimal(1 + precision - scale + digits as u8, digits as u8)
    }
}

/// ROUND on a DOUBLE as Flink does it: half up on the value's shortest decimal text
/// (`BigDecimal.valueOf(d).setScale(digits, HALF_UP)`).
fn round_double(f: f64, digits: i64) -> f64 {
    if !f.is_finite() || !(0..=17).contains(&digits) {
        let factor = 10f64.powi(digits.clamp(-300, 300) as i32);
        return (f * factor).round() / factor;
    }
    let text = format!("{}", f.abs());
    let (int_part, frac) = text.split_once('.').unwrap_or((&text, ""));
    let digits = digits as usize;
    if frac.len() <= digits {
        return f;
    }
    let kept = format!("{int_part}{}", &frac[..digits]);
    let Ok(mut n) = kept.parse::<i128>() else { return f };
    if frac.as_bytes()[digits] >= b'5' {
        n += 1;
    }
    let magnitude: f64 = format!("{}e-{digits}", n).parse().unwrap_or(f.abs());
    magnitude.copysign(f)
}

fn floor_ceil(x: &Value, ceil: bool, ty: &DataType) -> Value {
    match x {
        Value::Double(f) => Value::Double(if ceil { f.ceil() } else { f.floor() }),
        Value::Float(f) => Value::Float(if ceil { f.ceil() } else { f.floor() }),
        Value::Decimal { .. } => {
            let d = x.as_decimal().unwrap_or(weir_runtime::Decimal { unscaled: 0, scale: 0 });
            let factor = 10i128.pow(u32::from(d.scale));
            let q = d.unscaled.div_euclid(factor);
            let r = if ceil && d.unscaled.rem_euclid(factor) != 0 { q + 1 } else { q };
            let scale = match ty.logical {
                LogicalType::Decimal { scale, .. } => scale,
                _ => 0,
            };
            Value::decimal(r * 10i128.pow(u32::from(scale)), scale)
        }
        other => other.clone(),
    }
}
