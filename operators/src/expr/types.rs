//! Flink's type rules for scalar expressions: which type an arithmetic result has, and which
//! type two operands meet in.

use weir_runtime::{DataType, LogicalType};

/// The largest DECIMAL precision.
pub const MAX_PRECISION: u8 = 38;

/// Whether the type is a number (integer, approximate or DECIMAL).
pub fn is_numeric(ty: &DataType) -> bool {
    is_numeric_logical(&ty.logical)
}

fn is_numeric_logical(ty: &LogicalType) -> bool {
    matches!(
        ty,
        LogicalType::TinyInt
            | LogicalType::SmallInt
            | LogicalType::Int
            | LogicalType::BigInt
            | LogicalType::Float
            | LogicalType::Double
            | LogicalType::Decimal { .. }
    )
}

/// Whether the type is an exact integer.
pub fn is_integer(ty: &DataType) -> bool {
    matches!(ty.logical, LogicalType::TinyInt | LogicalType::SmallInt | LogicalType::Int | LogicalType::BigInt)
}

/// Whether the type is a character string.
pub fn is_string(ty: &DataType) -> bool {
    matches!(ty.logical, LogicalType::Char(_) | LogicalType::Varchar(_))
}

/// The length of a character string type (`CHAR(n)`, `VARCHAR(n)`; STRING is the longest).
pub fn string_length(ty: &LogicalType) -> Option<u32> {
    match ty {
        LogicalType::Char(n) | LogicalType::Varchar(n) => Some(*n),
        _ => None,
    }
}

/// The length of two strings of lengths `n` and `m` joined (`'ab' || 'c'`), at most STRING's.
pub fn joined_length(n: u32, m: u32) -> u32 {
    n.saturating_add(m).min(weir_runtime::types::MAX_LENGTH)
}

/// Precision and scale of an exact number as a DECIMAL (INT is DECIMAL(10, 0), …).
pub fn decimal_parts(ty: &DataType) -> Option<(u8, u8)> {
    match ty.logical {
        LogicalType::TinyInt => Some((3, 0)),
        LogicalType::SmallInt => Some((5, 0)),
        LogicalType::Int => Some((10, 0)),
        LogicalType::BigInt => Some((19, 0)),
        LogicalType::Decimal { precision, scale } => Some((precision, scale)),
        _ => None,
    }
}

/// Flink's `adjustPrecisionScale`: a precision above 38 gives up scale, down to 6 digits.
pub fn adjust_precision_scale(precision: u32, scale: u32) -> (u8, u8) {
    if precision <= u32::from(MAX_PRECISION) {
        return (precision as u8, scale as u8);
    }
    let integral = precision - scale;
    let min_scale = scale.min(6);
    let scale = (u32::from(MAX_PRECISION).saturating_sub(integral)).max(min_scale);
    (MAX_PRECISION, scale as u8)
}

fn nullable(a: &DataType, b: &DataType, logical: LogicalType) -> DataType {
    DataType { logical, nullable: a.nullable || b.nullable, time_attribute: None }
}

fn integer_rank(ty: &LogicalType) -> u8 {
    match ty {
        LogicalType::TinyInt => 1,
        LogicalType::SmallInt => 2,
        LogicalType::Int => 3,
        _ => 4,
    }
}

/// The arithmetic operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arithmetic {
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Times,
    /// `/`
    Divide,
    /// `%` and `MOD`
    Modulo,
}

/// The result type of `a op b`, or `None` when the operands are not both numbers.
pub fn arithmetic_type(op: Arithmetic, a: &DataType, b: &DataType) -> Option<DataType> {
    if !is_numeric(a) || !is_numeric(b) {
        return None;
    }
    let approximate = |t: &DataType| matches!(t.logical, LogicalType::Float | LogicalType::Double);
    if approximate(a) || approximate(b) {
        let double = |t: &DataType| matches!(t.logical, LogicalType::Double | LogicalType::Decimal { .. });
        let logical = if double(a) || double(b) { LogicalType::Double } else { LogicalType::Float };
        return Some(nullable(a, b, logical));
    }
    if is_integer(a) && is_integer(b) {
        let wider = if integer_rank(&a.logical) >= integer_rank(&b.logical) { &a.logical } else { &b.logical };
        let logical = if op == Arithmetic::Modulo { b.logical.clone() } else { wider.clone() };
        return Some(nullable(a, b, logical));
    }
    let ((p1, s1), (p2, s2)) = (decimal_parts(a)?, decimal_parts(b)?);
    let (p1, s1, p2, s2) = (u32::from(p1), u32::from(s1), u32::from(p2), u32::from(s2));
    let (precision, scale) = match op {
        Arithmetic::Plus | Arithmetic::Minus => {
            let scale = s1.max(s2);
            adjust_precision_scale((p1 - s1).max(p2 - s2) + scale + 1, scale)
        }
        Arithmetic::Times => adjust_precision_scale(p1 + p2, s1 + s2),
        Arithmetic::Divide => {
            let scale = 6.max(s1 + p2 + 1);
            adjust_precision_scale(p1 - s1 + s2 + scale, scale)
        }
        Arithmetic::Modulo => {
            let scale = s1.max(s2);
            adjust_precision_scale((p1 - s1).min(p2 - s2) + scale, scale)
        }
    };
    Some(nullable(a, b, LogicalType::Decimal { precision, scale }))
}

/// The type two values meet in for comparison, CASE, UNION and IN: numbers widen, strings
/// become STRING, equal types stay; `None` when they cannot meet.
pub fn common_type(a: &DataType, b: &DataType) -> Option<DataType> {
    if a.logical == b.logical {
        return Some(nullable(a, b, a.logical.clone()));
    }
    if is_numeric(a) && is_numeric(b) {
        if let (Some((p1, s1)), Some((p2, s2))) = (decimal_parts(a), decimal_parts(b)) {
            if is_integer(a) && is_integer(b) {
                return arithmetic_type(Arithmetic::Plus, a, b);
            }
            let scale = s1.max(s2);
            let (precision, scale) =
                adjust_precision_scale(u32::from((p1 - s1).max(p2 - s2) + scale), u32::from(scale));
            return Some(nullable(a, b, LogicalType::Decimal { precision, scale }));
        }
        return arithmetic_type(Arithmetic::Plus, a, b);
    }
    if let (Some(n), Some(m)) = (string_length(&a.logical), string_length(&b.logical)) {
        // Strings of different types or lengths meet in a VARCHAR as long as the longer (never
        // a padded CHAR), as in Flink.
        return Some(nullable(a, b, LogicalType::Varchar(n.max(m))));
    }
    match (&a.logical, &b.logical) {
        // Times of different precisions: the finer one.
        (LogicalType::Timestamp(p), LogicalType::Timestamp(q)) => {
            Some(nullable(a, b, LogicalType::Timestamp(*p.max(q))))
        }
        (LogicalType::TimestampLtz(p), LogicalType::TimestampLtz(q)) => {
            Some(nullable(a, b, LogicalType::TimestampLtz(*p.max(q))))
        }
        // A TIMESTAMP_LTZ meets a TIMESTAMP as the TIMESTAMP of its wall-clock time (the binder
        // casts it there in the session zone), as in Flink.
        (LogicalType::Timestamp(p), LogicalType::TimestampLtz(q))
        | (LogicalType::TimestampLtz(q), LogicalType::Timestamp(p)) => {
            Some(nullable(a, b, LogicalType::Timestamp(*p.max(q))))
        }
        (LogicalType::Time(p), LogicalType::Time(q)) => Some(nullable(a, b, LogicalType::Time(*p.max(q)))),
        // Byte strings of different lengths: a VARBINARY as long as the longer.
        (LogicalType::Binary(n) | LogicalType::Varbinary(n), LogicalType::Binary(m) | LogicalType::Varbinary(m)) => {
            Some(nullable(a, b, LogicalType::Varbinary(*n.max(m))))
        }
        // Collections meet element by element (`ARRAY['a']` and `ARRAY<STRING>`), as in Flink.
        (LogicalType::Array(x), LogicalType::Array(y)) => {
            Some(nullable(a, b, LogicalType::Array(Box::new(common_type(x, y)?))))
        }
        (LogicalType::Multiset(x), LogicalType::Multiset(y)) => {
            Some(nullable(a, b, LogicalType::Multiset(Box::new(common_type(x, y)?))))
        }
        (LogicalType::Map(k1, v1), LogicalType::Map(k2, v2)) => {
            Some(nullable(a, b, LogicalType::Map(Box::new(common_type(k1, k2)?), Box::new(common_type(v1, v2)?))))
        }
        _ => None,
    }
}

/// A type as Calcite names it in Flink's validation messages (`<INTEGER>`,
/// `<VARCHAR(2147483647)>` for STRING, `<TIMESTAMP_WITH_LOCAL_TIME_ZONE(3)>`), so that weir's
/// messages read as Flink's.
pub fn calcite_name(ty: &LogicalType) -> String {
    match ty {
        LogicalType::Int => "INTEGER".to_string(),
        LogicalType::Time(p) => format!("TIME({p})"),
        LogicalType::TimestampLtz(p) => format!("TIMESTAMP_WITH_LOCAL_TIME_ZONE({p})"),
        LogicalType::Char(n) => format!("CHAR({n})"),
        LogicalType::Varchar(n) => format!("VARCHAR({n})"),
        LogicalType::Binary(n) => format!("BINARY({n})"),
        LogicalType::Varbinary(n) => format!("VARBINARY({n})"),
        LogicalType::Array(element) => format!("{} ARRAY", calcite_name(&element.logical)),
        LogicalType::Multiset(element) => format!("{} MULTISET", calcite_name(&element.logical)),
        LogicalType::Map(key, value) => {
            format!("({}, {}) MAP", calcite_name(&key.logical), calcite_name(&value.logical))
        }
        other => other.to_string(),
    }
}

/// A type's family as Calcite names it in "No match found for function signature" messages
/// (`<NUMERIC>`, `<CHARACTER>`, …).
pub fn calcite_family(ty: &LogicalType) -> &'static str {
    match ty {
        LogicalType::Boolean => "BOOLEAN",
        numeric if is_numeric_logical(numeric) => "NUMERIC",
        LogicalType::Char(_) | LogicalType::Varchar(_) => "CHARACTER",
        LogicalType::Binary(_) | LogicalType::Varbinary(_) => "BINARY",
        LogicalType::Date => "DATE",
        LogicalType::Time(_) => "TIME",
        LogicalType::Timestamp(_) => "TIMESTAMP",
        LogicalType::TimestampLtz(_) => "TIMESTAMP_WITH_LOCAL_TIME_ZONE",
        LogicalType::IntervalYearMonth => "INTERVAL_YEAR_MONTH",
        LogicalType::IntervalDayTime => "INTERVAL_DAY_TIME",
        LogicalType::Array(_) => "ARRAY",
        LogicalType::Map(..) => "MAP",
        LogicalType::Multiset(_) => "MULTISET",
        _ => "ANY",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(p: u8, s: u8) -> DataType {
        DataType::decimal(p, s)
    }

    #[test]
    fn decimal_arithmetic_follows_flink() {
        let t = |op, a: &DataType, b: &DataType| arithmetic_type(op, a, b).unwrap().to_string();
        assert_eq!(t(Arithmetic::Times, &dec(10, 2), &DataType::int()), "DECIMAL(20, 2)");
        assert_eq!(t(Arithmetic::Divide, &dec(10, 2), &DataType::int()), "DECIMAL(21, 13)");
        assert_eq!(t(Arithmetic::Plus, &dec(10, 2), &dec(5, 4)), "DECIMAL(13, 4)");
        assert_eq!(t(Arithmetic::Times, &dec(38, 2), &dec(10, 2)), "DECIMAL(38, 4)");
        assert_eq!(t(Arithmetic::Plus, &DataType::int(), &DataType::bigint()), "BIGINT");
        assert_eq!(t(Arithmetic::Plus, &DataType::int(), &DataType::double()), "DOUBLE");
        assert_eq!(t(Arithmetic::Modulo, &DataType::bigint(), &DataType::int()), "INT");
    }
}
