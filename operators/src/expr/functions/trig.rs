//! More numeric functions with Flink's semantics (Java's `Math`): EXP, LOG, LOG2, the
//! trigonometric and hyperbolic functions, DEGREES, RADIANS, SIGN, PI and E.

use weir_runtime::{DataType, Value};

use super::{nullable_if_any, Arity, Builtin, Entry, ScalarRef};
use crate::aggregate::numeric::integer;
use crate::expr::types::is_numeric;
use crate::expr::ExprError;

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry { names: &["EXP"], make: || ScalarRef::new(EXP) },
        Entry { names: &["LOG"], make: || ScalarRef::new(LOG) },
        Entry { names: &["LOG2"], make: || ScalarRef::new(LOG2) },
        Entry { names: &["SIN"], make: || ScalarRef::new(SIN) },
        Entry { names: &["COS"], make: || ScalarRef::new(COS) },
        Entry { names: &["TAN"], make: || ScalarRef::new(TAN) },
        Entry { names: &["COT"], make: || ScalarRef::new(COT) },
        Entry { names: &["ASIN"], make: || ScalarRef::new(ASIN) },
        Entry { names: &["ACOS"], make: || ScalarRef::new(ACOS) },
        Entry { names: &["ATAN"], make: || ScalarRef::new(ATAN) },
        Entry { names: &["ATAN2"], make: || ScalarRef::new(ATAN2) },
        Entry { names: &["SINH"], make: || ScalarRef::new(SINH) },
        Entry { names: &["COSH"], make: || ScalarRef::new(COSH) },
        Entry { names: &["TANH"], make: || ScalarRef::new(TANH) },
        Entry { names: &["DEGREES"], make: || ScalarRef::new(DEGREES) },
        Entry { names: &["RADIANS"], make: || ScalarRef::new(RADIANS) },
        Entry { names: &["SIGN"], make: || ScalarRef::new(SIGN) },
        Entry { names: &["PI"], make: || ScalarRef::new(PI) },
        Entry { names: &["E"], make: || ScalarRef::new(E) },
    ]
}

fn double_of_numbers(f: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    let forms = vec!["<NUMERIC>"; types.len()].join(", ");
    f.expect(types.iter().all(|t| is_numeric(t)), types, &forms)?;
    Ok(nullable_if_any(DataType::double(), types))
}

fn float(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

macro_rules! unary_double {
    ($(#[$doc:meta])* $name:ident, $sql:literal, $f:expr) => {
        $(#[$doc])*
        pub const $name: Builtin = Builtin::new($sql, Arity::exactly(1), double_of_numbers, |args, _| {
            let f: fn(f64) -> f64 = $f;
            Ok(Value::Double(f(float(&args[0]))))
        });
    };
}

unary_double!(/// `EXP(x)`
    EXP, "EXP", f64::exp);
unary_double!(/// `LOG2(x)`
    LOG2, "LOG2", |x| x.ln() / 2f64.ln());
unary_double!(/// `SIN(x)`
    SIN, "SIN", f64::sin);
unary_double!(/// `COS(x)`
    COS, "COS", f64::cos);
unary_double!(/// `TAN(x)`
    TAN, "TAN", f64::tan);
unary_double!(/// `COT(x)`: `1 / TAN(x)`.
    COT, "COT", |x| 1.0 / x.tan());
unary_double!(/// `ASIN(x)`
    ASIN, "ASIN", f64::asin);
unary_double!(/// `ACOS(x)`
    ACOS, "ACOS", f64::acos);
unary_double!(/// `ATAN(x)`
    ATAN, "ATAN", f64::atan);
unary_double!(/// `SINH(x)`
    SINH, "SINH", f64::sinh);
unary_double!(/// `COSH(x)`
    COSH, "COSH", f64::cosh);
unary_double!(/// `TANH(x)`
    TANH, "TANH", f64::tanh);
unary_double!(/// `DEGREES(x)`: radians in degrees, as Java's `Math.toDegrees`.
    DEGREES, "DEGREES", |x| x * (180.0 / std::f64::consts::PI));
unary_double!(/// `RADIANS(x)`: degrees in radians, as Java's `Math.toRadians`.
    RADIANS, "RADIANS", |x| x * (std::f64::consts::PI / 180.0));

/// `LOG(x)`: the natural logarithm; `LOG(base, x)`: the logarithm of `x` to `base`.
pub const LOG: Builtin = Builtin::new("LOG", Arity::between(1, 2), double_of_numbers, |args, _| {
    Ok(Value::Double(match args {
        [x] => float(x).ln(),
        [base, x] => float(x).ln() / float(base).ln(),
        _ => unreachable!("LOG takes one or two arguments"),
    }))
});

/// `ATAN2(y, x)`
pub const ATAN2: Builtin = Builtin::new("ATAN2", Arity::exactly(2), double_of_numbers, |args, _| {
    Ok(Value::Double(float(&args[0]).atan2(float(&args[1]))))
});

/// `SIGN(x)`: -1, 0 or 1 in the type of `x`.
pub const SIGN: Builtin = Builtin::new(
    "SIGN",
    Arity::exactly(1),
    |f, types| {
        f.expect(is_numeric(types[0]), types, "<NUMERIC>")?;
        Ok(types[0].clone())
    },
    |args, ty| {
        Ok(match &args[0] {
            Value::Double(x) => Value::Double(if *x == 0.0 { 0.0 } else { x.signum() }),
            Value::Float(x) => Value::Float(if *x == 0.0 { 0.0 } else { x.signum() }),
            x if x.as_decimal().is_some() => {
                let d = x.as_decimal().unwrap_or(weir_runtime::Decimal { unscaled: 0, scale: 0 });
                Value::decimal(d.unscaled.signum() * 10i128.pow(u32::from(d.scale)), d.scale)
            }
            x => integer(x.as_i64().unwrap_or(0).signum(), ty),
        })
    },
);

fn constant_type(_: &Builtin, _: &[&DataType]) -> Result<DataType, ExprError> {
    Ok(DataType::double().not_null())
}

/// `PI()`
pub const PI: Builtin =
    Builtin::new("PI", Arity::exactly(0), constant_type, |_, _| Ok(Value::Double(std::f64::consts::PI)));

/// `E()`
pub const E: Builtin =
    Builtin::new("E", Arity::exactly(0), constant_type, |_, _| Ok(Value::Double(std::f64::consts::E)));
