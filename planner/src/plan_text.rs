//! How plans write their expressions, literals, types and aggregate calls, as Flink prints them
//! (`>(amount, 400)`, `_UTF-16LE'a'`, `VARCHAR(2147483647) ARRAY`, `COUNT(DISTINCT b)`): the
//! one renderer EXPLAIN and the state compatibility check's lineage share. The lineage it
//! writes is recorded in checkpoints; `tests/signatures/` pins it.

use weir_operators::aggregate::AggregateCall;
use weir_operators::expr::{Expr, Function};
use weir_runtime::print::value_to_string;
use weir_runtime::Value;

/// A literal as Flink prints it: strings as `_UTF-16LE'…'`, intervals with their unit.
pub(crate) fn literal(value: &Value) -> String {
    match value {
        Value::String(s) => format!("_UTF-16LE'{s}'"),
        Value::IntervalDayTime(ms) => format!("{ms}:INTERVAL SECOND"),
        Value::IntervalYearMonth(m) => format!("{m}:INTERVAL MONTH"),
        other => value_to_string(other),
    }
}

/// An expression as Flink prints it: `>(amount, 400)` (prefix) or `(amount > 400)` (infix),
/// columns by `column(i)`.
pub(crate) fn expression(expr: &Expr, column: &dyn Fn(usize) -> String, infix: bool) -> String {
    match expr {
        Expr::Column { index, .. } => column(*index),
        // Calcite types the literals of other than their default types: `1:BIGINT` (in the
        // physical plan), `null:DECIMAL(38, 2)` (in both).
        Expr::Literal { value: Value::Null, ty } => format!("null:{}", calcite_type(ty)),
        Expr::Literal { value: Value::BigInt(v), .. } if !infix => format!("{v}:BIGINT"),
        Expr::Literal { value, .. } => literal(value),
        Expr::Call { function, args, ty } => {
            let parts: Vec<String> = args.iter().map(|a| expression(a, column, infix)).collect();
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
