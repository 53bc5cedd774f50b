//! Numeric functions with Flink's semantics: ABS, ROUND, FLOOR, CEIL, POWER, SQRT, LN, LOG10.

use weir_runtime::{DataType, Decimal, LogicalType, Value};

use super::{expect, nullable_if_any, Arity, Builtin, Entry, ScalarFunction, ScalarRef};
use crate::aggregate::numeric::integer;
use crate::expr::cast::round_decimal;
use crate::expr::types::{is_integer, is_numeric};
use crate::expr::{Expr, ExprError};

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry { names: &["ABS"], make: || ScalarRef::new(ABS) },
        Entry { names: &["ROUND"], make: || ScalarRef::new(Round { digits: None }) },
        Entry { names: &["FLOOR"], make: || ScalarRef::new(FLOOR) },
        Entry { names: &["CEIL", "CEILING"], make: || ScalarRef::new(CEIL) },
        Entry { names: &["POWER"], make: || ScalarRef::new(POWER) },
        Entry { names: &["SQRT"], make: || ScalarRef::new(SQRT) },
        Entry { names: &["LN"], make: || ScalarRef::new(LN) },
        Entry { names: &["LOG10"], make: || ScalarRef::new(LOG10) },
    ]
}

/// The type rule of a function of one number that keeps its type.
fn same_number(f: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    f.expect(is_numeric(types[0]), types, "<NUMERIC>")?;
    Ok(types[0].clone())
}

/// The type rule of DOUBLE functions of numbers.
fn double_of_numbers(f: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    let supported = if types.len() == 2 { "<NUMERIC>, <NUMERIC>" } else { "<NUMERIC>" };
    f.expect(types.iter().all(|t| is_numeric(t)), types, supported)?;
    Ok(nullable_if_any(DataType::double(), types))
}

fn float(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn decimal(v: &Value) -> Decimal {
    v.as_decimal().unwrap_or(Decimal { unscaled: 0, scale: 0 })
}

/// `ABS(x)`; integers wrap at their minimum as in Java.
pub const ABS: Builtin = Builtin::new("ABS", Arity::exactly(1), same_number, |args, ty| {
    Ok(match &args[0] {
        Value::Double(x) => Value::Double(x.abs()),
        Value::Float(x) => Value::Float(x.abs()),
        x if x.as_decimal().is_some() => {
            let d = decimal(x);
            Value::decimal(d.unscaled.abs(), d.scale)
        }
        x => integer(x.as_i64().unwrap_or(0).wrapping_abs(), ty),
    })
});

/// `FLOOR(x)`: DECIMAL(p, s) becomes DECIMAL(p - s + 1, 0).
pub const FLOOR: Builtin =
    Builtin::new("FLOOR", Arity::exactly(1), floor_ceil_type, |args, ty| Ok(floor_ceil(&args[0], false, ty)));

/// `CEIL(x)`, `CEILING(x)`
pub const CEIL: Builtin =
    Builtin::new("CEIL", Arity::exactly(1), floor_ceil_type, |args, ty| Ok(floor_ceil(&args[0], true, ty)));

/// `POWER(x, y)`
pub const POWER: Builtin = Builtin::new("POWER", Arity::exactly(2), double_of_numbers, |args, _| {
    Ok(Value::Double(float(&args[0]).powf(float(&args[1]))))
});

/// `SQRT(x)`
pub const SQRT: Builtin =
    Builtin::new("SQRT", Arity::exactly(1), double_of_numbers, |args, _| Ok(Value::Double(float(&args[0]).sqrt())));

/// `LN(x)`
pub const LN: Builtin =
    Builtin::new("LN", Arity::exactly(1), double_of_numbers, |args, _| Ok(Value::Double(float(&args[0]).ln())));

/// `LOG10(x)`
pub const LOG10: Builtin =
    Builtin::new("LOG10", Arity::exactly(1), double_of_numbers, |args, _| Ok(Value::Double(float(&args[0]).log10())));

fn floor_ceil_type(f: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    f.expect(is_numeric(types[0]), types, "<NUMERIC>")?;
    Ok(match types[0].logical {
        LogicalType::Decimal { precision, scale } => {
            let precision = (precision - scale + u8::from(scale > 0)).clamp(1, 38);
            nullable_if_any(DataType::decimal(precision, 0), types)
        }
        _ => types[0].clone(),
    })
}

fn floor_ceil(x: &Value, ceil: bool, ty: &DataType) -> Value {
    match x {
        Value::Double(f) => Value::Double(if ceil { f.ceil() } else { f.floor() }),
        Value::Float(f) => Value::Float(if ceil { f.ceil() } else { f.floor() }),
        Value::Decimal { .. } => {
            let d = decimal(x);
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

/// `ROUND(x[, digits])`, half up; the digits must be a constant (0 when left out).
#[derive(Debug, Clone, Copy)]
pub struct Round {
    /// The digits once bound.
    digits: Option<i32>,
}

impl Round {
    fn digits(&self) -> i32 {
        self.digits.unwrap_or(0)
    }
}

impl ScalarFunction for Round {
    fn name(&self) -> &str {
        "ROUND"
    }

    fn arity(&self) -> Arity {
        Arity::between(1, 2)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        let ok = is_numeric(types[0]) && types[1..].iter().all(|t| is_integer(t));
        expect(ok, self, types, "<NUMERIC>, <INTEGER>")?;
        Ok(match types[0].logical {
            LogicalType::Decimal { precision, scale } => {
                nullable_if_any(round_decimal_type(precision, scale, self.digits()), &types[..1])
            }
            _ => types[0].clone(),
        })
    }

    fn bind(&self, args: &[Expr]) -> Result<Option<ScalarRef>, ExprError> {
        let digits = match args.get(1) {
            None => 0,
            Some(e) => match super::constant_integer(e) {
                Some(d) => d as i32,
                None => return Err(ExprError("The second argument of ROUND must be an integer literal".into())),
            },
        };
        Ok(Some(ScalarRef::new(Round { digits: Some(digits) })))
    }

    fn eval(&self, args: &[Value], ty: &DataType) -> Result<Value, ExprError> {
        Ok(round(&args[0], i64::from(self.digits()), ty))
    }
}

fn round(x: &Value, digits: i64, ty: &DataType) -> Value {
    match (x, &ty.logical) {
        (Value::Double(_) | Value::Float(_), _) => {
            let rounded = round_double(float(x), digits);
            if matches!(x, Value::Float(_)) {
                Value::Float(rounded as f32)
            } else {
                Value::Double(rounded)
            }
        }
        (_, LogicalType::Decimal { scale, .. }) => {
            let d = decimal(x);
            if digits < 0 {
                // Places before the point: half up, once, on every digit dropped (rounding to
                // the whole number first would round twice: -46349.76 to -46350, then -46400).
                let dropped = u32::from(d.scale) + (-digits).min(40) as u32;
                let whole = match (10i128.checked_pow(dropped), 10i128.checked_pow((-digits).min(40) as u32)) {
                    (Some(f), Some(unit)) => (d.unscaled.abs() + f / 2) / f * unit * d.unscaled.signum(),
                    _ => 0,
                };
                return Value::decimal(round_decimal(whole, 0, *scale), *scale);
            }
            let kept = digits.clamp(0, i64::from(d.scale)) as u8;
            let rounded = round_decimal(d.unscaled, d.scale, kept);
            Value::decimal(round_decimal(rounded, kept, *scale), *scale)
        }
        _ => {
            let n = x.as_i64().unwrap_or(0);
            if digits >= 0 {
                integer(n, ty)
            } else {
                // In 128 bits, as Flink rounds through a BigDecimal, then its low 64 bits
                // (`longValue`): no overflow near the ends of BIGINT.
                let factor = 10i128.pow((-digits).min(19) as u32);
                let n = i128::from(n);
                let r = (n.abs() + factor / 2) / factor * factor;
                integer((r * n.signum()) as i64, ty)
            }
        }
    }
}

/// Flink's `findRoundDecimalType`: rounding may add a digit before the point.
fn round_decimal_type(precision: u8, scale: u8, digits: i32) -> DataType {
    if digits >= i32::from(scale) {
        DataType::decimal(precision, scale)
    } else if digits < 0 {
        DataType::decimal((1 + precision - scale).min(38), 0)
    } else {
        DataType::decimal(1 + precision - scale + digits as u8, digits as u8)
    }
}

/// ROUND on a DOUBLE as Flink does it: half up on the value's shortest decimal text
/// (`BigDecimal.valueOf(d).setScale(digits, HALF_UP)`). A result of zero is `0.0`, never
/// `-0.0`: a BigDecimal has no negative zero.
pub(super) fn round_double(f: f64, digits: i64) -> f64 {
    let rounded = round_double_signed(f, digits);
    if rounded == 0.0 {
        0.0
    } else {
        rounded
    }
}

fn round_double_signed(f: f64, digits: i64) -> f64 {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_is_half_up_on_the_shortest_text_and_widens_decimals() {
        assert_eq!(round_double(2.675, 2), 2.68);
        assert_eq!(round_double(-1.5, 0), -2.0);
        assert!(round_double(-0.004, 2).is_sign_positive(), "no negative zero");
        assert!(round_double(-0.0, 0).is_sign_positive());
        assert!(round_double(-0.2, 0).is_sign_positive());
        assert_eq!(round_decimal_type(10, 2, 1), DataType::decimal(10, 1));
        let bound = Round { digits: None }
            .bind(&[Expr::column(0, DataType::double()), Expr::literal(Value::Int(1), DataType::int())])
            .unwrap()
            .unwrap();
        assert_eq!(bound.eval(&[Value::Double(1.25), Value::Int(1)], &DataType::double()).unwrap(), Value::Double(1.3));
        let refused = Round { digits: None }
            .bind(&[Expr::column(0, DataType::double()), Expr::column(1, DataType::int())])
            .unwrap_err();
        assert_eq!(refused.0, "The second argument of ROUND must be an integer literal");
    }

    #[test]
    fn floor_and_ceil_of_decimals_drop_the_fraction() {
        let ty = DataType::decimal(3, 0);
        assert_eq!(FLOOR.eval(&[Value::decimal(-125, 2)], &ty).unwrap(), Value::decimal(-2, 0));
        assert_eq!(CEIL.eval(&[Value::decimal(-125, 2)], &ty).unwrap(), Value::decimal(-1, 0));
        assert_eq!(ABS.eval(&[Value::Int(i32::MIN)], &DataType::int()).unwrap(), Value::Int(i32::MIN));
    }
}
