//! The aggregation merge engine's field functions (`'fields.price.agg' = 'max'`), as Apache
//! Fluss defines them: names (case-insensitive, `-` for `_`, `string_agg` for `listagg`), the
//! types each accepts, and how a stored value and an incoming one merge. Every function but
//! `last_value` ignores a NULL on either side; integer `sum` and `product` wrap on overflow; a
//! DECIMAL result beyond its precision becomes NULL (for `sum`, only above 18 digits, as Fluss
//! adds compact decimals unchecked); `first_value` replaces a stored NULL with the next non-NULL
//! value (Fluss's code, which its documentation contradicts).

use weir_runtime::{DataType, LogicalType, Value};

use crate::error::{Error, Result};

/// One field's function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AggFunction {
    /// `sum`
    Sum,
    /// `product`
    Product,
    /// `max`
    Max,
    /// `min`
    Min,
    /// `last_value`: the incoming value, NULL included (primary-key columns use it).
    LastValue,
    /// `last_value_ignore_nulls`: the default of non-key columns.
    LastValueIgnoreNulls,
    /// `first_value`
    FirstValue,
    /// `first_value_ignore_nulls`
    FirstValueIgnoreNulls,
    /// `listagg` / `string_agg`: values joined by `delimiter` (default `,`).
    ListAgg {
        /// The name it was given (`listagg` or `string_agg`), for its parameter keys.
        name: &'static str,
        /// Between two values.
        delimiter: String,
    },
    /// `bool_and`
    BoolAnd,
    /// `bool_or`
    BoolOr,
    /// `rbm32`: union of 32-bit RoaringBitmaps.
    Rbm32,
    /// `rbm64`: union of 64-bit RoaringBitmaps.
    Rbm64,
}

/// Names Fluss accepts, sorted as its message lists them.
const NAMES: [&str; 14] = [
    "bool_and",
    "bool_or",
    "first_value",
    "first_value_ignore_nulls",
    "last_value",
    "last_value_ignore_nulls",
    "listagg",
    "max",
    "min",
    "product",
    "rbm32",
    "rbm64",
    "string_agg",
    "sum",
];

const NUMERIC: &[&str] = &["TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL"];
const COMPARABLE: &[&str] = &[
    "CHAR",
    "STRING",
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "FLOAT",
    "DOUBLE",
    "DECIMAL",
    "DATE",
    "TIME_WITHOUT_TIME_ZONE",
    "TIMESTAMP_WITHOUT_TIME_ZONE",
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE",
];

/// Fluss's name of a type's root.
fn root(ty: &DataType) -> &'static str {
    match ty.logical {
        LogicalType::Boolean => "BOOLEAN",
        LogicalType::TinyInt => "TINYINT",
        LogicalType::SmallInt => "SMALLINT",
        LogicalType::Int => "INTEGER",
        LogicalType::BigInt => "BIGINT",
        LogicalType::Float => "FLOAT",
        LogicalType::Double => "DOUBLE",
        LogicalType::Decimal { .. } => "DECIMAL",
        LogicalType::Char(_) => "CHAR",
        LogicalType::Varchar(_) => "STRING",
        LogicalType::Binary(_) => "BINARY",
        LogicalType::Varbinary(_) => "BYTES",
        LogicalType::Date => "DATE",
        LogicalType::Time(_) => "TIME_WITHOUT_TIME_ZONE",
        LogicalType::Timestamp(_) => "TIMESTAMP_WITHOUT_TIME_ZONE",
        LogicalType::TimestampLtz(_) => "TIMESTAMP_WITH_LOCAL_TIME_ZONE",
        _ => "OTHER",
    }
}

impl AggFunction {
    /// The function `name` configured for `column` (`'fields.<column>.agg' = '<name>'`).
    ///
    /// # Errors
    /// An empty or unknown name, with Fluss's messages.
    pub fn parse(column: &str, name: &str) -> Result<Self> {
        let invalid = |why: String| {
            Error::Validation(format!("Invalid aggregation function configuration for column '{column}': {why}"))
        };
        let normalized = name.trim().to_ascii_lowercase().replace('-', "_");
        Ok(match normalized.as_str() {
            "" => return Err(invalid(format!("Empty aggregation function name for column '{column}'"))),
            "sum" => AggFunction::Sum,
            "product" => AggFunction::Product,
            "max" => AggFunction::Max,
            "min" => AggFunction::Min,
            "last_value" => AggFunction::LastValue,
            "last_value_ignore_nulls" => AggFunction::LastValueIgnoreNulls,
            "first_value" => AggFunction::FirstValue,
            "first_value_ignore_nulls" => AggFunction::FirstValueIgnoreNulls,
            "listagg" => AggFunction::ListAgg { name: "listagg", delimiter: ",".into() },
            "string_agg" => AggFunction::ListAgg { name: "string_agg", delimiter: ",".into() },
            "bool_and" => AggFunction::BoolAnd,
            "bool_or" => AggFunction::BoolOr,
            "rbm32" => AggFunction::Rbm32,
            "rbm64" => AggFunction::Rbm64,
            _ => {
                return Err(invalid(format!(
                    "Unknown aggregation function for column '{column}': {name}\nSupported functions: {}",
                    NAMES.join(", ")
                )));
            }
        })
    }

    /// The function's name as Fluss prints it.
    pub fn name(&self) -> &'static str {
        match self {
            AggFunction::Sum => "sum",
            AggFunction::Product => "product",
            AggFunction::Max => "max",
            AggFunction::Min => "min",
            AggFunction::LastValue => "last_value",
            AggFunction::LastValueIgnoreNulls => "last_value_ignore_nulls",
            AggFunction::FirstValue => "first_value",
            AggFunction::FirstValueIgnoreNulls => "first_value_ignore_nulls",
            AggFunction::ListAgg { name, .. } => name,
            AggFunction::BoolAnd => "bool_and",
            AggFunction::BoolOr => "bool_or",
            AggFunction::Rbm32 => "rbm32",
            AggFunction::Rbm64 => "rbm64",
        }
    }

    /// The function with `'fields.<column>.<name>.<parameter>' = '<value>'` applied: only
    /// `delimiter`, of `listagg` and `string_agg`.
    ///
    /// # Errors
    /// Another parameter, or an empty delimiter, with Fluss's messages.
    pub fn with_parameter(self, parameter: &str, value: &str) -> Result<Self> {
        match (self, parameter) {
            (AggFunction::ListAgg { name, .. }, "delimiter") if value.is_empty() => Err(Error::Validation(format!(
                "Parameter 'delimiter' for aggregation function '{name}' must be a non-empty string"
            ))),
            (AggFunction::ListAgg { name, .. }, "delimiter") => {
                Ok(AggFunction::ListAgg { name, delimiter: value.to_string() })
            }
            (f, _) => {
                let supported = if matches!(f, AggFunction::ListAgg { .. }) { "delimiter" } else { "none" };
                Err(Error::Validation(format!(
                    "Parameter '{parameter}' is not supported for aggregation function '{}'. Supported parameters: {supported}",
                    f.name()
                )))
            }
        }
    }

    /// Checks that `column` of type `ty` can take this function.
    ///
    /// # Errors
    /// Fluss's message listing the accepted types.
    pub fn check_type(&self, column: &str, ty: &DataType) -> Result<()> {
        let accepted: &[&str] = match self {
            AggFunction::Sum | AggFunction::Product => NUMERIC,
            AggFunction::Max | AggFunction::Min => COMPARABLE,
            AggFunction::ListAgg { .. } => &["STRING", "CHAR"],
            AggFunction::BoolAnd | AggFunction::BoolOr => &["BOOLEAN"],
            AggFunction::Rbm32 | AggFunction::Rbm64 => &["BYTES"],
            _ => return Ok(()),
        };
        if accepted.contains(&root(ty)) {
            return Ok(());
        }
        Err(Error::Validation(format!(
            "Invalid aggregation function for column '{column}': Data type for {} column must be part of [{}] but was '{ty}'.",
            self.name(),
            accepted.join(", ")
        )))
    }

    /// The stored value `acc` merged with the incoming `input`, for a column of type `ty`.
    ///
    /// # Errors
    /// Bitmap bytes that cannot be read, and a compact DECIMAL sum that overflows 64 bits.
    pub fn merge(&self, acc: &Value, input: &Value, ty: &DataType) -> Result<Value> {
        Ok(match self {
            AggFunction::LastValue => input.clone(),
            AggFunction::LastValueIgnoreNulls => if input.is_null() { acc } else { input }.clone(),
            AggFunction::FirstValue | AggFunction::FirstValueIgnoreNulls => {
                if acc.is_null() { input } else { acc }.clone()
            }
            // Every other function skips a NULL on either side.
            _ if acc.is_null() => input.clone(),
            _ if input.is_null() => acc.clone(),
            AggFunction::Sum => arithmetic(acc, input, ty, false)?,
            AggFunction::Product => arithmetic(acc, input, ty, true)?,
            AggFunction::Max => if acc < input { input } else { acc }.clone(),
            AggFunction::Min => if acc < input { acc } else { input }.clone(),
            AggFunction::ListAgg { delimiter, .. } => match (acc, input) {
                (Value::String(a), Value::String(b)) => Value::string(&format!("{a}{delimiter}{b}")),
                _ => return Err(Error::Merge(format!("{} takes strings, got {acc:?} and {input:?}", self.name()))),
            },
            AggFunction::BoolAnd | AggFunction::BoolOr => match (acc, input) {
                (Value::Boolean(a), Value::Boolean(b)) => {
                    Value::Boolean(if *self == AggFunction::BoolAnd { *a && *b } else { *a || *b })
                }
                _ => return Err(Error::Merge(format!("{} takes booleans", self.name()))),
            },
            AggFunction::Rbm32 | AggFunction::Rbm64 => match (acc, input) {
                (Value::Binary(a), Value::Binary(b)) => {
                    let merged = if *self == AggFunction::Rbm32 {
                        crate::bitmap32::union(a, b)?
                    } else {
                        crate::bitmap64::union(a, b)?
                    };
                    Value::Binary(merged.into())
                }
                _ => return Err(Error::Merge(format!("{} takes bytes", self.name()))),
            },
        })
    }
}

/// `sum` (or `product`) of two non-NULL values of type `ty`.
fn arithmetic(a: &Value, b: &Value, ty: &DataType, product: bool) -> Result<Value> {
    let int = |x: i64, y: i64| if product { x.wrapping_mul(y) } else { x.wrapping_add(y) };
    Ok(match (a, b) {
        (Value::TinyInt(x), Value::TinyInt(y)) => Value::TinyInt(int(i64::from(*x), i64::from(*y)) as i8),
        (Value::SmallInt(x), Value::SmallInt(y)) => Value::SmallInt(int(i64::from(*x), i64::from(*y)) as i16),
        (Value::Int(x), Value::Int(y)) => Value::Int(int(i64::from(*x), i64::from(*y)) as i32),
        (Value::BigInt(x), Value::BigInt(y)) => Value::BigInt(int(*x, *y)),
        (Value::Float(x), Value::Float(y)) => Value::Float(if product { x * y } else { x + y }),
        (Value::Double(x), Value::Double(y)) => Value::Double(if product { x * y } else { x + y }),
        (Value::Decimal { .. }, Value::Decimal { .. }) => {
            let LogicalType::Decimal { precision, scale } = ty.logical else {
                return Err(Error::Merge(format!("a DECIMAL value in a column of type {ty}")));
            };
            let (x, y) = (rescale(a, scale), rescale(b, scale));
            let limit = 10i128.checked_pow(u32::from(precision)).unwrap_or(i128::MAX);
            if product {
                // The exact product has 2 × scale digits after the point; round half up to scale.
                let exact = x.checked_mul(y);
                let divisor = 10i128.pow(u32::from(scale));
                let rounded = exact.map(|p| {
                    let (q, r) = (p / divisor, p % divisor);
                    if r.abs() * 2 >= divisor {
                        q + p.signum()
                    } else {
                        q
                    }
                });
                match rounded.filter(|r| r.abs() < limit) {
                    Some(r) => Value::decimal(r, scale),
                    None => Value::Null,
                }
            } else if precision <= 18 {
                // Compact decimals add as 64-bit longs, unchecked against the precision.
                let sum = i64::try_from(x)
                    .ok()
                    .zip(i64::try_from(y).ok())
                    .and_then(|(x, y)| x.checked_add(y))
                    .ok_or_else(|| Error::Merge("long overflow".into()))?;
                Value::decimal(i128::from(sum), scale)
            } else {
                match x.checked_add(y).filter(|s| s.abs() < limit) {
                    Some(s) => Value::decimal(s, scale),
                    None => Value::Null,
                }
            }
        }
        _ => return Err(Error::Merge(format!("cannot add {a:?} and {b:?} as {ty}"))),
    })
}

/// The unscaled value of a DECIMAL at `scale`.
fn rescale(v: &Value, scale: u8) -> i128 {
    let d = v.as_decimal().unwrap_or(weir_runtime::Decimal { unscaled: 0, scale });
    match scale.cmp(&d.scale) {
        std::cmp::Ordering::Equal => d.unscaled,
        std::cmp::Ordering::Greater => d.unscaled * 10i128.pow(u32::from(scale - d.scale)),
        std::cmp::Ordering::Less => d.unscaled / 10i128.pow(u32::from(d.scale - scale)),
    }
}
