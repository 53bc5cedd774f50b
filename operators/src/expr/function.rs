//! The operators and special forms of SQL expressions (arithmetic, comparisons, boolean logic,
//! CASE, CAST, IN, BETWEEN, LIKE, COALESCE, IF, NULLIF): their names, type rules and evaluation.
//! Named functions live in the registry ([`functions`](super::functions)).

use std::cmp::Ordering;
use std::sync::Arc;

use regex::Regex;
use smallvec::SmallVec;
use weir_runtime::{DataType, LogicalType, Value};

use super::cast::{cast, round_decimal};
use super::functions::{self, Arity, Nulls, ScalarRef};
use super::types::{is_numeric, is_string, Arithmetic};
use super::{arithmetic_result, comparable, compare, compare_op, string, time, Expr, ExprError};
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

impl TimeUnit {
    /// Whether the unit is shorter than a day (HOUR, MINUTE, SECOND, MILLISECOND).
    pub fn is_sub_day(self) -> bool {
        matches!(self, TimeUnit::Hour | TimeUnit::Minute | TimeUnit::Second | TimeUnit::Millisecond)
    }

    /// Every unit, in order of size.
    pub const ALL: [TimeUnit; 9] = [
        TimeUnit::Year,
        TimeUnit::Quarter,
        TimeUnit::Month,
        TimeUnit::Week,
        TimeUnit::Day,
        TimeUnit::Hour,
        TimeUnit::Minute,
        TimeUnit::Second,
        TimeUnit::Millisecond,
    ];

    /// The unit's SQL keyword (`YEAR`, …).
    pub fn sql_name(self) -> &'static str {
        match self {
            TimeUnit::Year => "YEAR",
            TimeUnit::Quarter => "QUARTER",
            TimeUnit::Month => "MONTH",
            TimeUnit::Week => "WEEK",
            TimeUnit::Day => "DAY",
            TimeUnit::Hour => "HOUR",
            TimeUnit::Minute => "MINUTE",
            TimeUnit::Second => "SECOND",
            TimeUnit::Millisecond => "MILLISECOND",
        }
    }

    /// The unit whose keyword is `name` (any case).
    pub fn named(name: &str) -> Option<TimeUnit> {
        TimeUnit::ALL.into_iter().find(|u| u.sql_name().eq_ignore_ascii_case(name))
    }
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
    /// A named function from the registry ([`functions`](super::functions)).
    Scalar(ScalarRef),
}

impl Function {
    /// Whether `self` and `other` are the same function: the same operator, or the same
    /// registry function with the same bound state. A registry function may carry state its
    /// arguments do not show (a ROW field's index, an EXTRACT's unit, a compiled pattern), so
    /// two are the same only when every field of their `Debug` text agrees.
    pub fn same_as(&self, other: &Function) -> bool {
        use std::mem::discriminant;
        match self {
            Function::Like(pattern) => {
                matches!(other, Function::Like(p) if p.as_ref().map(Regex::as_str) == pattern.as_ref().map(Regex::as_str))
            }
            Function::Scalar(f) => {
                matches!(other, Function::Scalar(g) if Arc::ptr_eq(&f.0, &g.0) || format!("{f:?}") == format!("{g:?}"))
            }
            Function::Plus
            | Function::Minus
            | Function::Times
            | Function::Divide
            | Function::Modulo
            | Function::Negate
            | Function::Equals
            | Function::NotEquals
            | Function::Less
            | Function::LessOrEqual
            | Function::Greater
            | Function::GreaterOrEqual
            | Function::And
            | Function::Or
            | Function::Not
            | Function::IsNull
            | Function::IsNotNull
            | Function::Case
            | Function::Cast
            | Function::TryCast
            | Function::In
            | Function::Between
            | Function::Coalesce
            | Function::If
            | Function::NullIf => discriminant(self) == discriminant(other),
        }
    }

    /// Whether the function gives the same result for the same arguments every time (not the
    /// clock or a random number).
    pub fn is_deterministic(&self) -> bool {
        match self {
            Function::Scalar(f) => f.is_deterministic(),
            _ => true,
        }
    }

    /// The function called `name` (any case) that takes ordinary arguments, if weir has it:
    /// `MOD`, `COALESCE`, `IF`, `NULLIF` or a function of the registry.
    pub fn by_name(name: &str) -> Option<Function> {
        Some(match name.to_ascii_uppercase().as_str() {
            "MOD" => Function::Modulo,
            "COALESCE" => Function::Coalesce,
            "IF" => Function::If,
            "NULLIF" => Function::NullIf,
            other => Function::Scalar(functions::lookup(other)?),
        })
    }

    /// The registry function called `name`.
    ///
    /// # Panics
    /// When weir has no function of that name: for names the code itself spells.
    pub fn named(name: &str) -> Function {
        match functions::lookup(name) {
            Some(f) => Function::Scalar(f),
            None => panic!("no built-in function {name}"),
        }
    }

    /// The symbol of a binary operator, as EXPLAIN writes it between or before its operands
    /// (`+`, `MOD`, `<=`, `AND`); `None` for other functions.
    pub fn operator_symbol(&self) -> Option<&'static str> {
        let binary = matches!(
            self,
            Function::Plus
                | Function::Minus
                | Function::Times
                | Function::Divide
                | Function::Modulo
                | Function::Equals
                | Function::NotEquals
                | Function::Less
                | Function::LessOrEqual
                | Function::Greater
                | Function::GreaterOrEqual
                | Function::And
                | Function::Or
        );
        binary.then(|| self.sql_name())
    }

    /// The SQL name, for messages and EXPLAIN.
    pub fn name(&self) -> String {
        match self {
            Function::Scalar(f) => f.name().to_string(),
            operator => operator.sql_name().to_string(),
        }
    }

    /// The SQL name of an operator or special form (a registry function's is its own).
    fn sql_name(&self) -> &'static str {
        match self {
            Function::Plus => "+",
            Function::Minus | Function::Negate => "-",
            Function::Times => "*",
            Function::Divide => "/",
            Function::Modulo => "MOD",
            Function::Equals => "=",
            Function::NotEquals => "<>",
            Function::Less => "<",
            Function::LessOrEqual => "<=",
            Function::Greater => ">",
            Function::GreaterOrEqual => ">=",
            Function::And => "AND",
            Function::Or => "OR",
            Function::Not => "NOT",
            Function::IsNull => "IS NULL",
            Function::IsNotNull => "IS NOT NULL",
            Function::Case => "CASE",
            Function::Cast => "CAST",
            Function::TryCast => "TRY_CAST",
            Function::In => "IN",
            Function::Between => "BETWEEN",
            Function::Like(_) => "LIKE",
            Function::Coalesce => "COALESCE",
            Function::If => "IF",
            Function::NullIf => "NULLIF",
            Function::Scalar(_) => "",
        }
    }

    fn wrong_types(&self, types: &[&DataType], supported: &str) -> ExprError {
        functions::wrong_types(&self.name(), types, supported)
    }

    /// The result type for arguments of `types`.
    ///
    /// # Errors
    /// A number or types of arguments the function does not take, in Flink's words.
    pub fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        if let Function::Scalar(f) = self {
            return functions::call_type(&**f, types);
        }
        let operands = match self {
            Function::Negate | Function::Not | Function::IsNull | Function::IsNotNull => Arity::exactly(1),
            Function::Cast | Function::TryCast => Arity::exactly(1),
            Function::Between | Function::If => Arity::exactly(3),
            Function::In | Function::Coalesce => Arity::at_least(1),
            Function::Case => Arity::at_least(1),
            Function::And | Function::Or => Arity::at_least(2),
            _ => Arity::exactly(2),
        };
        if !operands.admits(types.len()) {
            let expected = operands.max.filter(|max| *max == operands.min).unwrap_or(operands.min);
            return Err(functions::invalid_count(&self.name(), expected));
        }
        let any_nullable = types.iter().any(|t| t.nullable);
        let with_nullability = |mut t: DataType| {
            t.nullable = any_nullable;
            t
        };
        let expect = |ok: bool, supported: &str| if ok { Ok(()) } else { Err(self.wrong_types(types, supported)) };
        let arg = |i: usize| types[i].clone();
        Ok(match self {
            Function::Plus | Function::Minus if is_datetime_interval(&arg(0), &arg(1)) => arg(0),
            Function::Plus if is_datetime_interval(&arg(1), &arg(0)) => arg(1),
            Function::Plus => arithmetic_result(Arithmetic::Plus, "+", &arg(0), &arg(1))?,
            Function::Minus => arithmetic_result(Arithmetic::Minus, "-", &arg(0), &arg(1))?,
            Function::Times => arithmetic_result(Arithmetic::Times, "*", &arg(0), &arg(1))?,
            Function::Divide => arithmetic_result(Arithmetic::Divide, "/", &arg(0), &arg(1))?,
            Function::Modulo => arithmetic_result(Arithmetic::Modulo, "MOD", &arg(0), &arg(1))?,
            Function::Negate => {
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
                let mut values_nullable = false;
                for (_, t) in values {
                    values_nullable |= t.nullable;
                    result = Some(match result {
                        None => (*t).clone(),
                        Some(r) => super::types::common_type(&r, t)
                            .ok_or_else(|| ExprError(format!("Illegal mixing of types in CASE: {r} and {t}")))?,
                    });
                }
                // NULL when a value is, or when no condition holds and there is no ELSE.
                let has_else = types.len() % 2 == 1;
                let mut r = result.unwrap_or_else(DataType::int);
                r.nullable = !has_else || values_nullable;
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
                expect(matches!(arg(0).logical, LogicalType::Boolean), "<BOOLEAN>, <ANY>, <ANY>")?;
                super::types::common_type(&arg(1), &arg(2))
                    .ok_or_else(|| self.wrong_types(types, "<BOOLEAN>, <ANY>, <ANY>"))?
            }
            Function::NullIf => {
                let mut r = arg(0);
                r.nullable = true;
                r
            }
            Function::Scalar(f) => functions::call_type(&**f, types)?,
        })
    }
}

pub(super) fn boolean(b: Option<bool>) -> Value {
    b.map_or(Value::Null, Value::Boolean)
}

pub(super) fn truth(v: &Value) -> Option<bool> {
    v.as_bool()
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
                    return cast(&args[i + 1].eval(row)?, args[i + 1].ty(), ty).map_err(ExprError);
                }
                i += 2;
            }
            return if i < args.len() {
                cast(&args[i].eval(row)?, args[i].ty(), ty).map_err(ExprError)
            } else {
                Ok(Value::Null)
            };
        }
        Function::Coalesce => {
            for a in args {
                let v = a.eval(row)?;
                if !v.is_null() {
                    return cast(&v, a.ty(), ty).map_err(ExprError);
                }
            }
            return Ok(Value::Null);
        }
        Function::If => {
            let branch = if truth(&args[0].eval(row)?) == Some(true) { &args[1] } else { &args[2] };
            return cast(&branch.eval(row)?, branch.ty(), ty).map_err(ExprError);
        }
        Function::TryCast => return Ok(cast(&args[0].eval(row)?, args[0].ty(), ty).unwrap_or(Value::Null)),
        Function::Cast => return cast(&args[0].eval(row)?, args[0].ty(), ty).map_err(ExprError),
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
            | Function::TryCast
            | Function::NullIf
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
            match compare_op(Cmp::Eq, &values[0], v) {
                Some(true) => return Ok(Value::Boolean(true)),
                None => saw_null = true,
                Some(false) => {}
            }
        }
        return Ok(if saw_null { Value::Null } else { Value::Boolean(false) });
    }
    if let Function::Scalar(f) = function {
        if f.nulls() == Nulls::Strict && values.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        return f.eval(values, ty);
    }
    if values.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let v = |i: usize| &values[i];
    Ok(match function {
        Function::Plus | Function::Minus if is_interval(v(1)) || is_interval(v(0)) => {
            let sign = if matches!(function, Function::Minus) { -1 } else { 1 };
            let (point, interval) = if is_interval(v(1)) { (v(0), v(1)) } else { (v(1), v(0)) };
            shift(point, interval, sign).ok_or_else(|| {
                let (at, by) =
                    (weir_runtime::print::value_to_string(point), weir_runtime::print::value_to_string(interval));
                time::out_of_range(format_args!("{at} {} {by}", if sign < 0 { '-' } else { '+' }))
            })?
        }
        Function::Plus => arithmetic(Arithmetic::Plus, v(0), v(1), ty)?,
        Function::Minus => arithmetic(Arithmetic::Minus, v(0), v(1), ty)?,
        Function::Times => arithmetic(Arithmetic::Times, v(0), v(1), ty)?,
        Function::Divide => arithmetic(Arithmetic::Divide, v(0), v(1), ty)?,
        Function::Modulo => arithmetic(Arithmetic::Modulo, v(0), v(1), ty)?,
        Function::Negate => arithmetic(Arithmetic::Minus, &crate::aggregate::numeric::zero(ty), v(0), ty)?,
        Function::Equals => boolean(compare_op(Cmp::Eq, v(0), v(1))),
        Function::NotEquals => boolean(compare_op(Cmp::NotEq, v(0), v(1))),
        Function::Less => boolean(compare_op(Cmp::Lt, v(0), v(1))),
        Function::LessOrEqual => boolean(compare_op(Cmp::LtEq, v(0), v(1))),
        Function::Greater => boolean(compare_op(Cmp::Gt, v(0), v(1))),
        Function::GreaterOrEqual => boolean(compare_op(Cmp::GtEq, v(0), v(1))),
        Function::Not => boolean(truth(v(0)).map(|b| !b)),
        Function::Between => {
            boolean(compare_op(Cmp::GtEq, v(0), v(1)).zip(compare_op(Cmp::LtEq, v(0), v(2))).map(|(lo, hi)| lo && hi))
        }
        Function::Like(cached) => {
            let regex = match cached {
                Some(r) => r.clone(),
                None => string::like_regex(functions::text(v(1)))?,
            };
            Value::Boolean(regex.is_match(functions::text(v(0))))
        }
        other => return Err(ExprError(format!("{} cannot be evaluated here", other.name()))),
    })
}

/// `a % b` of two DECIMALs given as (unscaled, scale), exact as Java's `BigDecimal.remainder`
/// (the sign of `a`), at the larger scale — without overflowing where a side scaled to it would
/// not fit 128 bits (`MOD(-7, 0.123…)` at scale 38): the scaling is done modulo `b`.
fn decimal_remainder((ua, sa): (i128, u8), (ub, sb): (i128, u8)) -> i128 {
    let m = ub.unsigned_abs();
    let mut r = ua.unsigned_abs();
    if sa >= sb {
        // `b` at `a`'s scale; when it does not fit, it is larger than `a`, which is the remainder.
        if let Some(b) = m.checked_mul(10u128.pow(u32::from(sa - sb))) {
            r %= b;
        }
    } else {
        // `a` at `b`'s scale, reduced modulo `b` digit by digit (doubling keeps below 2·b).
        r %= m;
        for _ in 0..(sb - sa) {
            let double = |x: u128| (x * 2) % m;
            let (two, eight) = (double(r), double(double(double(r))));
            r = (two + eight) % m;
        }
    }
    let r = r as i128;
    if ua < 0 {
        -r
    } else {
        r
    }
}

/// The values of `args` for `row`, on the stack for up to four arguments.
fn eval_args(args: &[Expr], row: &[Value]) -> Result<SmallVec<[Value; 4]>, ExprError> {
    let mut values = SmallVec::with_capacity(args.len());
    for a in args {
        values.push(a.eval(row)?);
    }
    Ok(values)
}

/// Whether `a ± b` moves a date-time by an interval.
fn is_datetime_interval(a: &DataType, b: &DataType) -> bool {
    matches!(a.logical, LogicalType::Timestamp(_) | LogicalType::TimestampLtz(_) | LogicalType::Date)
        && matches!(b.logical, LogicalType::IntervalDayTime | LogicalType::IntervalYearMonth)
}

fn is_interval(v: &Value) -> bool {
    matches!(v, Value::IntervalDayTime(_) | Value::IntervalYearMonth(_))
}

/// A date-time moved by `sign` times an interval; `None` past the years 0000 to 9999.
fn shift(point: &Value, interval: &Value, sign: i64) -> Option<Value> {
    match interval {
        Value::IntervalDayTime(ms) => time::timestamp_add(TimeUnit::Millisecond, sign * ms, point),
        Value::IntervalYearMonth(months) => time::timestamp_add(TimeUnit::Month, sign * i64::from(*months), point),
        _ => Some(Value::Null),
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
                Arithmetic::Modulo => Some(decimal_remainder((ua, sa), (ub, sb))),
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

/// A comparison function, decided on the order of its two operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
}

impl Cmp {
    /// The comparison `function` is, or `None` for any other function.
    pub(crate) fn of(function: &Function) -> Option<Cmp> {
        Some(match function {
            Function::Equals => Cmp::Eq,
            Function::NotEquals => Cmp::NotEq,
            Function::Less => Cmp::Lt,
            Function::LessOrEqual => Cmp::LtEq,
            Function::Greater => Cmp::Gt,
            Function::GreaterOrEqual => Cmp::GtEq,
            _ => return None,
        })
    }

    /// Whether `ordering` of the operands satisfies the comparison.
    pub(crate) fn holds(self, ordering: Ordering) -> bool {
        match self {
            Cmp::Eq => ordering == Ordering::Equal,
            Cmp::NotEq => ordering != Ordering::Equal,
            Cmp::Lt => ordering == Ordering::Less,
            Cmp::LtEq => ordering != Ordering::Greater,
            Cmp::Gt => ordering == Ordering::Greater,
            Cmp::GtEq => ordering != Ordering::Less,
        }
    }

    /// Whether operands `ordering` relates (`None`: unordered, a NaN on either side) satisfy
    /// the comparison, as Flink's generated code compares doubles: a NaN makes every
    /// comparison false but `<>`, which it makes true.
    pub(crate) fn holds_partial(self, ordering: Option<Ordering>) -> bool {
        match ordering {
            Some(ordering) => self.holds(ordering),
            None => self == Cmp::NotEq,
        }
    }
}
