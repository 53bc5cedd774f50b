//! Arithmetic on values of one SQL type, as Flink's aggregate functions do it: integers wrap
//! around on overflow (Java arithmetic), DECIMALs add exactly at their scale.

use weir_runtime::{DataType, LogicalType, Value};

/// The zero of a numeric type.
pub(crate) fn zero(ty: &DataType) -> Value {
    match ty.logical {
        LogicalType::TinyInt => Value::TinyInt(0),
        LogicalType::SmallInt => Value::SmallInt(0),
        LogicalType::Int => Value::Int(0),
        LogicalType::Float => Value::Float(0.0),
        LogicalType::Double => Value::Double(0.0),
        LogicalType::Decimal { scale, .. } => Value::decimal(0, scale),
        _ => Value::BigInt(0),
    }
}

/// The unscaled value of a number at `scale`, rounding half up when the scale shrinks.
pub(crate) fn unscaled_at(v: &Value, scale: u8) -> i128 {
    match v.as_decimal() {
        Some(d) => rescale(d.unscaled, d.scale, scale),
        None => i128::from(v.as_i64().unwrap_or(0)).saturating_mul(10i128.pow(u32::from(scale))),
    }
}

/// `unscaled` at `from` digits after the point, moved to `to` digits (half up).
pub(crate) fn rescale(unscaled: i128, from: u8, to: u8) -> i128 {
    if to >= from {
        unscaled.saturating_mul(10i128.pow(u32::from(to - from)))
    } else {
        let divisor = 10i128.pow(u32::from(from - to));
        let (q, r) = (unscaled / divisor, unscaled % divisor);
        if r.abs() * 2 >= divisor {
            q + unscaled.signum()
        } else {
            q
        }
    }
}

/// `sum + sign * x` in the type `ty` (x is non-NULL).
pub(crate) fn add(sum: &Value, x: &Value, sign: i64, ty: &DataType) -> Value {
    match ty.logical {
        LogicalType::Float => {
            Value::Float(sum.as_f64().unwrap_or(0.0) as f32 + sign as f32 * x.as_f64().unwrap_or(0.0) as f32)
        }
        LogicalType::Double => Value::Double(sum.as_f64().unwrap_or(0.0) + sign as f64 * x.as_f64().unwrap_or(0.0)),
        LogicalType::Decimal { scale, .. } => {
            Value::decimal(unscaled_at(sum, scale).wrapping_add(i128::from(sign) * unscaled_at(x, scale)), scale)
        }
        _ => {
            let total = sum.as_i64().unwrap_or(0).wrapping_add(sign.wrapping_mul(x.as_i64().unwrap_or(0)));
            integer(total, ty)
        }
    }
}

/// An i64 narrowed (wrapping) to an integer type.
pub(crate) fn integer(v: i64, ty: &DataType) -> Value {
    match ty.logical {
        LogicalType::TinyInt => Value::TinyInt(v as i8),
        LogicalType::SmallInt => Value::SmallInt(v as i16),
        LogicalType::Int => Value::Int(v as i32),
        _ => Value::BigInt(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_wrap_and_decimals_stay_exact() {
        let int = DataType::int();
        assert_eq!(add(&Value::Int(i32::MAX), &Value::Int(1), 1, &int), Value::Int(i32::MIN));
        let dec = DataType::decimal(38, 2);
        assert_eq!(add(&zero(&dec), &Value::decimal(41082, 2), 1, &dec).as_decimal().unwrap().unscaled, 41082);
        assert_eq!(rescale(12345, 3, 1), 123);
        assert_eq!(rescale(-12355, 3, 1), -124);
        assert_eq!(rescale(5, 0, 2), 500);
    }
}
