//! How plans write their expressions, literals, types and aggregate calls, as Flink prints them
//! (`>(amount, 400)`, `_UTF-16LE'a'`, `VARCHAR(2147483647) ARRAY`, `COUNT(DISTINCT b)`): the
//! one renderer EXPLAIN and the state compatibility check's lineage share. The lineage it
//! writes is recorded in checkpoints; `tests/signatures/` pins it.

use weir_operators::aggregate::AggregateCall;
use weir_operators::expr::{Expr, Function};
use weir_runtime::print::value_to_string;
use weir_runtime::{DataType, LogicalType, Value};

/// How an expression is written: Flink's physical plan (prefix), its execution plan (infix), or
/// the lineage a checkpoint records (infix, with literals as weir first wrote them there: a
/// recorded lineage must read the same in later versions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Notation {
    Prefix,
    Infix,
    Lineage,
}

/// A literal as Flink prints it in a physical plan: strings as `_UTF-16LE'…'` (quotes doubled),
/// times as Calcite writes them (`2024-01-01 00:00:00.1`), intervals with their unit.
pub(crate) fn literal(value: &Value) -> String {
    literal_in(value, Notation::Prefix)
}

fn literal_in(value: &Value, notation: Notation) -> String {
    match (value, notation) {
        (Value::String(s), Notation::Prefix) => format!("_UTF-16LE'{}'", s.replace('\'', "''")),
        (Value::String(s), Notation::Infix) => format!("'{s}'"),
        (Value::String(s), Notation::Lineage) => format!("_UTF-16LE'{s}'"),
        (Value::Time(_) | Value::Timestamp(_), Notation::Prefix | Notation::Infix) => {
            calcite_time(&value_to_string(value))
        }
        (Value::IntervalDayTime(ms), _) => format!("{ms}:INTERVAL SECOND"),
        (Value::IntervalYearMonth(m), _) => format!("{m}:INTERVAL MONTH"),
        (other, _) => value_to_string(other),
    }
}

/// Whether Calcite's physical plan names a literal's type after it: a DECIMAL with a fraction
/// (`1.5:DECIMAL(2, 1)`), a TIMESTAMP with one (`… 00:00:00.1:TIMESTAMP(1)`).
fn typed_in_physical_plan(ty: &DataType) -> bool {
    match ty.logical {
        LogicalType::Decimal { scale, .. } => scale > 0,
        LogicalType::Timestamp(precision) => precision > 0,
        _ => false,
    }
}

/// A time or timestamp as Calcite writes its literals: seconds always, the fraction without its
/// trailing zeros, a space before the time (`2024-01-01T10:00` is `2024-01-01 10:00:00`).
fn calcite_time(printed: &str) -> String {
    let (date, time) = match printed.split_once('T') {
        Some((date, time)) => (Some(date), time),
        None => (None, printed),
    };
    let (clock, fraction) = time.split_once('.').unwrap_or((time, ""));
    let clock = if clock.len() == 5 { format!("{clock}:00") } else { clock.to_string() };
    let fraction = fraction.trim_end_matches('0');
    let time = if fraction.is_empty() { clock } else { format!("{clock}.{fraction}") };
    date.map_or_else(|| time.clone(), |date| format!("{date} {time}"))
}

/// An expression as Flink prints it: `>(amount, 400)` (prefix) or `(amount > 400)` (infix),
/// columns by `column(i)`.
pub(crate) fn expression(expr: &Expr, column: &dyn Fn(usize) -> String, infix: bool) -> String {
    render(expr, column, if infix { Notation::Infix } else { Notation::Prefix })
}

/// An expression as a checkpoint's lineage records it (see [`Notation`]).
pub(crate) fn lineage_expression(expr: &Expr, column: &dyn Fn(usize) -> String) -> String {
    render(expr, column, Notation::Lineage)
}

fn render(expr: &Expr, column: &dyn Fn(usize) -> String, notation: Notation) -> String {
    let infix = notation != Notation::Prefix;
    match expr {
        Expr::Column { index, .. } => column(*index),
        // Calcite types the literals of other than their default types: `1:BIGINT` (in the
        // physical plan), `null:DECIMAL(38, 2)` (in both).
        Expr::Literal { value: Value::Null, ty } => format!("null:{}", calcite_type(ty)),
        Expr::Literal { value: Value::BigInt(v), .. } if !infix => format!("{v}:BIGINT"),
        Expr::Literal { value, ty } if !infix && typed_in_physical_plan(ty) => {
            format!("{}:{}", literal_in(value, notation), calcite_type(&DataType { nullable: true, ..ty.clone() }))
        }
        Expr::Literal { value, .. } => literal_in(value, notation),
        Expr::Call { function, args, ty } => {
            let parts: Vec<String> = args.iter().map(|a| render(a, column, notation)).collect();
            match (function, function.operator_symbol()) {
                (_, Some(symbol)) if infix && parts.len() >= 2 => format!("({})", parts.join(&format!(" {symbol} "))),
                (_, Some(symbol)) => format!("{symbol}({})", parts.join(", ")),
                (Function::Cast | Function::TryCast, _) => {
                    let name = if matches!(function, Function::Cast) { "CAST" } else { "TRY_CAST" };
                    format!("{name}({} AS {})", parts[0], ty)
                }
                // After their operand in the execution plan, as Flink prints them there.
                (Function::IsNull | Function::IsNotNull, _) if infix => {
                    format!("{} {}", parts.join(", "), function.name())
                }
                (Function::Scalar(f), _) => f.explain(&parts, infix),
                _ => format!("{}({})", function.name(), parts.join(", ")),
            }
        }
    }
}

/// A call as a local or global phase prints it: a DISTINCT call names the set of distinct values
/// it takes them from (`COUNT(distinct$0 b)`, Flink's `slot`) instead of `DISTINCT`.
pub(crate) fn phase_text(call: &AggregateCall, slot: Option<usize>, column: &dyn Fn(usize) -> String) -> String {
    let name = call.kind.name();
    let distinct = match slot {
        Some(slot) => format!("distinct${slot} "),
        None if call.distinct => "DISTINCT ".to_string(),
        None => String::new(),
    };
    let arg = call.arg.map_or("*".to_string(), column);
    let filter = call.filter.map_or(String::new(), |f| format!(" FILTER {}", column(f)));
    format!("{name}({distinct}{arg}){filter}")
}

/// A type as Calcite prints it in a row type: `INTEGER`, `VARCHAR(2147483647) ARRAY`,
/// `(VARCHAR(2147483647), INTEGER) MAP`, `RecordType:peek_no_expand(INTEGER a)`, with
/// ` NOT NULL` where it is.
pub(crate) fn calcite_type(ty: &weir_runtime::DataType) -> String {
    use weir_runtime::LogicalType;
    let text = match &ty.logical {
        LogicalType::Array(element) => format!("{} ARRAY", calcite_type(element)),
        LogicalType::Map(key, value) => format!("({}, {}) MAP", calcite_type(key), calcite_type(value)),
        LogicalType::Multiset(element) => format!("{} MULTISET", calcite_type(element)),
        LogicalType::Row(fields) => {
            let fields: Vec<String> =
                fields.iter().map(|f| format!("{} {}", calcite_type(&f.data_type), f.name)).collect();
            format!("RecordType:peek_no_expand({})", fields.join(", "))
        }
        other => weir_operators::expr::types::calcite_name(other),
    };
    if ty.nullable {
        text
    } else {
        format!("{text} NOT NULL")
    }
}

#[cfg(test)]
mod tests {
    use weir_operators::expr::Expr;
    use weir_runtime::{DataType, LogicalType, Value};

    use super::{expression, lineage_expression};

    #[test]
    fn a_lineage_writes_literals_as_before_and_explain_as_flink() {
        let column = |_: usize| "name".to_string();
        let quoted = Expr::literal(Value::string("it's"), DataType::new(LogicalType::Char(4)).not_null());
        assert_eq!(lineage_expression(&quoted, &column), "_UTF-16LE'it's'");
        assert_eq!(expression(&quoted, &column, false), "_UTF-16LE'it''s'");
        assert_eq!(expression(&quoted, &column, true), "'it's'");
        let at = Expr::literal(
            Value::Timestamp(weir_runtime::value::Timestamp::from_millis(1_704_067_200_100)),
            DataType::new(LogicalType::Timestamp(1)).not_null(),
        );
        assert_eq!(lineage_expression(&at, &column), "2024-01-01T00:00:00.100");
        assert_eq!(expression(&at, &column, false), "2024-01-01 00:00:00.1:TIMESTAMP(1)");
        assert_eq!(expression(&at, &column, true), "2024-01-01 00:00:00.1");
    }
}
