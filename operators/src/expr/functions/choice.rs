//! Functions that pick, compare, describe or format values: GREATEST, LEAST, IFNULL,
//! `IS NOT DISTINCT FROM`, TYPEOF, CURRENT_DATABASE, TRUNCATE and PRINTF.

use std::cmp::Ordering;

use weir_runtime::{DataType, LogicalType, Value};

use super::{nullable_if_any, string, text, Arity, Builtin, Entry, Nulls, ScalarFunction, ScalarRef};
use crate::expr::cast::cast;
use crate::expr::types::{common_type, is_integer, is_numeric, is_string};
use crate::expr::{compare, Expr, ExprError};

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry { names: &["GREATEST"], make: || ScalarRef::new(Extreme { greatest: true, types: Vec::new() }) },
        Entry { names: &["LEAST"], make: || ScalarRef::new(Extreme { greatest: false, types: Vec::new() }) },
        Entry { names: &["IFNULL"], make: || ScalarRef::new(IfNull { types: Vec::new() }) },
        Entry { names: &[NOT_DISTINCT], make: || ScalarRef::new(NOT_DISTINCT_FROM) },
        Entry { names: &["TYPEOF"], make: || ScalarRef::new(TypeOf { described: None }) },
        Entry { names: &["CURRENT_DATABASE"], make: || ScalarRef::new(CurrentDatabase) },
        Entry { names: &["TRUNCATE"], make: || ScalarRef::new(Truncate { digits: None }) },
        Entry { names: &["PRINTF"], make: || ScalarRef::new(Printf) },
    ]
}

/// The common type of `types`, or Flink's message naming the call.
fn common_of(name: &str, types: &[&DataType]) -> Result<DataType, ExprError> {
    let mut common = types[0].clone();
    for t in &types[1..] {
        common = common_type(&common, t).ok_or_else(|| super::no_match(name, types))?;
    }
    Ok(common)
}

/// `v` (of type `from`) in the call's result type `ty`.
fn in_type(v: &Value, from: Option<&DataType>, ty: &DataType) -> Result<Value, ExprError> {
    match from {
        Some(from) if from.logical != ty.logical => cast(v, from, ty).map_err(ExprError),
        _ => Ok(v.clone()),
    }
}

/// `GREATEST(a, b, …)` / `LEAST(a, b, …)`: NULL when any argument is NULL.
#[derive(Debug, Clone)]
pub struct Extreme {
    greatest: bool,
    /// The arguments' types, once the call is built.
    types: Vec<DataType>,
}

impl ScalarFunction for Extreme {
    fn name(&self) -> &str {
        if self.greatest {
            "GREATEST"
        } else {
            "LEAST"
        }
    }

    fn arity(&self) -> Arity {
        Arity::at_least(1)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        common_of(self.name(), types)
    }

    fn bind(&self, args: &[Expr]) -> Result<Option<ScalarRef>, ExprError> {
        let types = args.iter().map(|a| a.ty().clone()).collect();
        Ok(Some(ScalarRef::new(Extreme { greatest: self.greatest, types })))
    }

    fn eval(&self, args: &[Value], ty: &DataType) -> Result<Value, ExprError> {
        let wanted = if self.greatest { Ordering::Greater } else { Ordering::Less };
        // Doubles compare as Java's `compareTo` orders them: a NaN above every number, so
        // GREATEST of a NaN is NaN and LEAST passes it over, in any order of the arguments.
        let ordered = |a: &Value, b: &Value| {
            let nan =
                |v: &Value| matches!(v, Value::Float(_) | Value::Double(_)) && v.as_f64().is_some_and(f64::is_nan);
            match (nan(a), nan(b)) {
                (true, true) => Some(Ordering::Equal),
                (true, false) if !b.is_null() => Some(Ordering::Greater),
                (false, true) if !a.is_null() => Some(Ordering::Less),
                _ => compare(a, b),
            }
        };
        let mut best = 0;
        for i in 1..args.len() {
            if ordered(&args[i], &args[best]) == Some(wanted) {
                best = i;
            }
        }
        in_type(&args[best], self.types.get(best), ty)
    }
}

/// `IFNULL(x, fallback)`: `x` unless it is NULL.
#[derive(Debug, Clone)]
pub struct IfNull {
    /// The arguments' types, once the call is built.
    types: Vec<DataType>,
}

impl ScalarFunction for IfNull {
    fn name(&self) -> &str {
        "IFNULL"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(2)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        let mut ty = common_of("IFNULL", types)?;
        ty.nullable = types.iter().all(|t| t.nullable);
        Ok(ty)
    }

    fn nulls(&self) -> Nulls {
        Nulls::Own
    }

    fn bind(&self, args: &[Expr]) -> Result<Option<ScalarRef>, ExprError> {
        Ok(Some(ScalarRef::new(IfNull { types: args.iter().map(|a| a.ty().clone()).collect() })))
    }

    fn eval(&self, args: &[Value], ty: &DataType) -> Result<Value, ExprError> {
        let pick = usize::from(args[0].is_null());
        if args[pick].is_null() {
            return Ok(Value::Null);
        }
        in_type(&args[pick], self.types.get(pick), ty)
    }
}

/// The registry name of `a IS NOT DISTINCT FROM b`.
pub const NOT_DISTINCT: &str = "IS NOT DISTINCT FROM";

/// `a IS NOT DISTINCT FROM b`: equal, or both NULL; never NULL.
pub const NOT_DISTINCT_FROM: Builtin = Builtin::new(
    NOT_DISTINCT,
    Arity::exactly(2),
    |f, types| {
        f.expect(common_type(types[0], types[1]).is_some(), types, "<COMPARABLE>, <COMPARABLE>")?;
        Ok(DataType::boolean().not_null())
    },
    |args, _| {
        Ok(Value::Boolean(match (&args[0], &args[1]) {
            (Value::Null, Value::Null) => true,
            (Value::Null, _) | (_, Value::Null) => false,
            (a, b) => compare(a, b) == Some(Ordering::Equal),
        }))
    },
)
.with_nulls(Nulls::Own);

/// `TYPEOF(x[, force_serializable])`: the type of `x` as Flink writes it (`INT NOT NULL`).
#[derive(Debug, Clone)]
pub struct TypeOf {
    /// The argument's type, once the call is built.
    described: Option<String>,
}

impl ScalarFunction for TypeOf {
    fn name(&self) -> &str {
        "TYPEOF"
    }

    fn arity(&self) -> Arity {
        Arity::between(1, 2)
    }

    fn return_type(&self, _: &[&DataType]) -> Result<DataType, ExprError> {
        Ok(DataType::string().not_null())
    }

    fn nulls(&self) -> Nulls {
        Nulls::Own
    }

    fn bind(&self, args: &[Expr]) -> Result<Option<ScalarRef>, ExprError> {
        let mut ty = args[0].ty().clone();
        ty.time_attribute = None;
        Ok(Some(ScalarRef::new(TypeOf { described: Some(ty.to_string()) })))
    }

    fn eval(&self, _: &[Value], _: &DataType) -> Result<Value, ExprError> {
        Ok(string(self.described.clone().unwrap_or_default()))
    }
}

/// `CURRENT_DATABASE()`: the session's database; weir has one, Flink's default name.
#[derive(Debug, Clone)]
pub struct CurrentDatabase;

impl ScalarFunction for CurrentDatabase {
    fn name(&self) -> &str {
        "CURRENT_DATABASE"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(0)
    }

    fn return_type(&self, _: &[&DataType]) -> Result<DataType, ExprError> {
        Ok(DataType::string().not_null())
    }

    fn eval(&self, _: &[Value], _: &DataType) -> Result<Value, ExprError> {
        Ok(string("default_database".into()))
    }
}

/// `TRUNCATE(x[, digits])`: `x` cut (toward zero) to `digits` places after the point (before
/// it for a negative count); a DECIMAL keeps at most `digits` places.
#[derive(Debug, Clone)]
pub struct Truncate {
    /// The places kept, when the call gives them as a constant.
    digits: Option<i64>,
}

impl ScalarFunction for Truncate {
    fn name(&self) -> &str {
        "TRUNCATE"
    }

    fn arity(&self) -> Arity {
        Arity::between(1, 2)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        let ok = is_numeric(types[0]) && types[1..].iter().all(|t| is_integer(t));
        super::expect(ok, self, types, "<NUMERIC>[, <INTEGER>]")?;
        Ok(match types[0].logical {
            LogicalType::Decimal { precision, scale } => {
                let kept = self.digits.unwrap_or(0).clamp(0, i64::from(scale)) as u8;
                nullable_if_any(DataType::decimal(precision - (scale - kept), kept), types)
            }
            _ => nullable_if_any(types[0].clone(), types),
        })
    }

    fn bind(&self, args: &[Expr]) -> Result<Option<ScalarRef>, ExprError> {
        let digits = match args.get(1) {
            None => 0,
            Some(e) => super::constant_integer(e)
                .ok_or_else(|| ExprError("The second argument of TRUNCATE must be an integer literal".into()))?,
        };
        Ok(Some(ScalarRef::new(Truncate { digits: Some(digits) })))
    }

    fn eval(&self, args: &[Value], ty: &DataType) -> Result<Value, ExprError> {
        let digits = self.digits.unwrap_or(0);
        Ok(match &args[0] {
            Value::Double(x) => Value::Double(truncate_float(*x, digits)?),
            Value::Float(x) => Value::Float(truncate_float(f64::from(*x), digits)? as f32),
            x @ Value::Decimal { .. } => {
                let d = x.as_decimal().unwrap_or(weir_runtime::Decimal { unscaled: 0, scale: 0 });
                let scale = i64::from(d.scale);
                let cut = scale - digits;
                let unscaled = if cut > 0 {
                    let factor = 10i128.pow(cut.min(38) as u32);
                    (d.unscaled / factor) * factor
                } else {
                    d.unscaled
                };
                let LogicalType::Decimal { scale: out, .. } = ty.logical else { return Ok(x.clone()) };
                Value::decimal(unscaled / 10i128.pow(u32::from(d.scale.saturating_sub(out))), out)
            }
            x => {
                let n = x.as_i64().unwrap_or(0);
                let truncated = if digits < 0 {
                    let factor = 10i64.checked_pow((-digits) as u32).unwrap_or(i64::MAX);
                    n / factor * factor
                } else {
                    n
                };
                crate::aggregate::numeric::integer(truncated, ty)
            }
        })
    }
}

/// `x` cut to `digits` places; a value the cut overflows fails, as Flink's BigDecimal does.
fn truncate_float(x: f64, digits: i64) -> Result<f64, ExprError> {
    let factor = 10f64.powi(digits as i32);
    let cut = (x * factor).trunc() / factor;
    if x.is_finite() && !cut.is_finite() {
        return Err(ExprError(format!("TRUNCATE({x}, {digits}) overflows")));
    }
    Ok(cut)
}

/// `PRINTF(format, args…)`: Java's `String.format` for the conversions `%s`, `%d`, `%f`
/// (with flags, width and precision), `%x`, `%%` and `%n`; NULL when an argument does not
/// fit its conversion.
#[derive(Debug, Clone)]
pub struct Printf;

impl ScalarFunction for Printf {
    fn name(&self) -> &str {
        "PRINTF"
    }

    fn arity(&self) -> Arity {
        Arity::at_least(1)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        super::expect(is_string(types[0]), self, types, "<CHARACTER>, <ANY>…")?;
        Ok(nullable_if_any(DataType::string(), &types[..1]))
    }

    fn nulls(&self) -> Nulls {
        Nulls::Own
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        if args[0].is_null() {
            return Ok(Value::Null);
        }
        Ok(printf(text(&args[0]), &args[1..]).map_or(Value::Null, string))
    }
}

/// Java's `String.format` over `args`, for the conversions [`Printf`] takes.
fn printf(format: &str, args: &[Value]) -> Option<String> {
    let mut out = String::new();
    let mut next = 0;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = String::new();
        while let Some(&d) = chars.peek().filter(|d| "-+ 0#,.".contains(**d) || d.is_ascii_digit()) {
            spec.push(d);
            chars.next();
        }
        let conversion = chars.next()?;
        let (flags, rest): (String, String) = {
            let split = spec.find(|c: char| c.is_ascii_digit() && c != '0').unwrap_or(spec.len());
            let split = spec[..split].find('.').map_or(split, |p| p.min(split));
            (spec[..split].to_string(), spec[split..].to_string())
        };
        let (width, precision) = match rest.split_once('.') {
            Some((w, p)) => (w.parse::<usize>().ok(), p.parse::<usize>().ok()),
            None => (rest.parse::<usize>().ok(), None),
        };
        let mut arg = || {
            next += 1;
            args.get(next - 1)
        };
        let body = match conversion {
            '%' => "%".to_string(),
            'n' => "\n".to_string(),
            's' | 'S' => {
                let v = arg()?;
                let s = if v.is_null() { "null".to_string() } else { weir_runtime::print::value_to_string(v) };
                let s = precision.map_or(s.clone(), |p| s.chars().take(p).collect());
                if conversion == 'S' {
                    s.to_uppercase()
                } else {
                    s
                }
            }
            'd' => {
                let v = arg()?;
                if matches!(v, Value::Double(_) | Value::Float(_) | Value::Decimal { .. }) {
                    return None;
                }
                let n = v.as_i64()?;
                if flags.contains('+') && n >= 0 {
                    format!("+{n}")
                } else {
                    n.to_string()
                }
            }
            'x' | 'X' => {
                let n = arg()?.as_i64().filter(|_| true)?;
                let s = format!("{n:x}");
                if conversion == 'X' {
                    s.to_uppercase()
                } else {
                    s
                }
            }
            'f' => {
                let v = arg()?;
                if v.as_i64().is_some() && !matches!(v, Value::Decimal { .. }) {
                    return None;
                }
                // Half up on the shortest decimal text, as Java's Formatter rounds.
                let places = precision.unwrap_or(6);
                let x = super::math::round_double(v.as_f64()?, places as i64);
                format!("{x:.places$}")
            }
            _ => return None,
        };
        let padded = match width {
            Some(w) if body.chars().count() < w => {
                let fill = w - body.chars().count();
                if flags.contains('-') {
                    format!("{body}{}", " ".repeat(fill))
                } else if flags.contains('0') && "dxXf".contains(conversion) {
                    let (sign, digits) = body.strip_prefix('-').map_or(("", body.as_str()), |d| ("-", d));
                    format!("{sign}{}{digits}", "0".repeat(fill))
                } else {
                    format!("{}{body}", " ".repeat(fill))
                }
            }
            _ => body,
        };
        out.push_str(&padded);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_follows_javas_format() {
        assert_eq!(printf("%s-%d", &[Value::string("a"), Value::Int(5)]).as_deref(), Some("a-5"));
        assert_eq!(printf("%05.2f", &[Value::Double(1.255)]).as_deref(), Some("01.26"));
        assert_eq!(printf("%x|%-4s|", &[Value::Int(255), Value::string("ab")]).as_deref(), Some("ff|ab  |"));
        assert_eq!(printf("%05.2f", &[Value::string("a")]), None);
        assert_eq!(printf("100%%", &[]).as_deref(), Some("100%"));
    }
}
