//! How plans write their expressions, literals, types and aggregate calls, as Flink prints them
//! (`>(amount, 400)`, `_UTF-16LE'a'`, `VARCHAR(2147483647) ARRAY`, `COUNT(DISTINCT b)`): the
//! one renderer EXPLAIN and the state compatibility check's lineage share. The lineage it
//! writes is recorded in checkpoints; `tests/signatures/` pins it.

use weir_operators::aggregate::AggregateCall;
use weir_operators::expr::{Expr, Function};
use weir_runtime::print::value_to_string;
use weir_runtime::{DataType, LogicalType, Value};

/// How an expression is written: Flink's logical plan (prefix), its physical plan (prefix, with
/// what its optimizer adds), its execution plan (infix), or the lineage a checkpoint records
/// (infix, with literals as weir first wrote them there: a recorded lineage must read the same
/// in later versions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Notation {
    Logical,
    Physical,
    Infix,
    Lineage,
}

impl Notation {
    fn is_prefix(self) -> bool {
        matches!(self, Notation::Logical | Notation::Physical)
    }
}

/// A literal as Flink prints it in a physical plan: strings as `_UTF-16LE'…'` (quotes doubled),
/// times as Calcite writes them (`2024-01-01 00:00:00.1`), intervals with their unit.
pub(crate) fn literal(value: &Value) -> String {
    literal_in(value, Notation::Physical)
}

fn literal_in(value: &Value, notation: Notation) -> String {
    match (value, notation) {
        (Value::String(s), Notation::Logical | Notation::Physical) => format!("_UTF-16LE'{}'", s.replace('\'', "''")),
        (Value::String(s), Notation::Infix) => format!("'{s}'"),
        (Value::String(s), Notation::Lineage) => format!("_UTF-16LE'{s}'"),
        (Value::Time(_) | Value::Timestamp(_), Notation::Logical | Notation::Physical | Notation::Infix) => {
            calcite_time(&value_to_string(value))
        }
        (Value::IntervalDayTime(ms), _) => format!("{ms}:INTERVAL SECOND"),
        (Value::IntervalYearMonth(m), _) => format!("{m}:INTERVAL MONTH"),
        (other, _) => value_to_string(other),
    }
}

/// A CASE's string literals as Calcite writes them once coerced to the CASE's type (weir's
/// values keep theirs): `_UTF-16LE'a':VARCHAR(2) CHARACTER SET "UTF-16LE"` among `'a'` and
/// `'bc'`. The values are the odd arguments and a trailing ELSE.
fn coerce_case_literals(args: &[Expr], ty: &DataType, parts: &mut [String]) {
    if !matches!(ty.logical, LogicalType::Char(_) | LogicalType::Varchar(_)) {
        return;
    }
    for (i, arg) in args.iter().enumerate() {
        let is_value = i % 2 == 1 || i + 1 == args.len();
        if let (true, Expr::Literal { value: Value::String(_), ty: own }) = (is_value, arg) {
            if own.logical != ty.logical {
                parts[i] = typed_string(&parts[i], &ty.logical);
            }
        }
    }
}

/// A string literal's text with the type Calcite gives it: `_UTF-16LE'a':VARCHAR(2) CHARACTER
/// SET "UTF-16LE"`.
fn typed_string(text: &str, ty: &LogicalType) -> String {
    format!("{text}:{} CHARACTER SET \"UTF-16LE\"", calcite_type(&DataType::new(ty.clone())))
}

/// `=` and `<>` between a character string and a CHAR literal as Flink's optimizer leaves them
/// in the physical plan: the literal as a VARCHAR of the other side's length
/// (`=(name, _UTF-16LE'a':VARCHAR(2147483647) CHARACTER SET "UTF-16LE")`); of a CHAR column of
/// another length, both as a VARCHAR of the longer.
fn widen_compared_literals(args: &[Expr], parts: &mut [String]) {
    let [a, b] = args else { return };
    for (literal, other, at) in [(b, a, 1), (a, b, 0)] {
        let Expr::Literal { value: Value::String(text), ty } = literal else { continue };
        if !is_natural_char(text, ty) {
            continue;
        }
        let own = text.chars().count() as u32;
        let length = match other.ty().logical {
            LogicalType::Varchar(n) => n,
            LogicalType::Char(n) if n != own => {
                let longer = n.max(own);
                parts[1 - at] = format!("CAST({} AS VARCHAR({longer}) CHARACTER SET \"UTF-16LE\")", parts[1 - at]);
                longer
            }
            _ => continue,
        };
        parts[at] = typed_string(&parts[at], &LogicalType::Varchar(length));
        return;
    }
}

/// Whether `ty` is the type of a literal `text` as written: `CHAR(n)` of its `n` characters.
fn is_natural_char(text: &str, ty: &DataType) -> bool {
    matches!(ty.logical, LogicalType::Char(n) if n as usize == text.chars().count())
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
    render(expr, column, if infix { Notation::Infix } else { Notation::Physical })
}

/// An expression as Flink's logical plan (its abstract syntax tree) prints it.
pub(crate) fn logical_expression(expr: &Expr, column: &dyn Fn(usize) -> String) -> String {
    render(expr, column, Notation::Logical)
}

/// An expression as a checkpoint's lineage records it (see [`Notation`]).
pub(crate) fn lineage_expression(expr: &Expr, column: &dyn Fn(usize) -> String) -> String {
    render(expr, column, Notation::Lineage)
}

fn render(expr: &Expr, column: &dyn Fn(usize) -> String, notation: Notation) -> String {
    let infix = !notation.is_prefix();
    match expr {
        Expr::Column { index, .. } => column(*index),
        // Calcite types the literals of other than their default types: `1:BIGINT` (in the
        // physical plan), `null:DECIMAL(38, 2)` (in both).
        Expr::Literal { value: Value::Null, ty } => format!("null:{}", calcite_type(ty)),
        Expr::Literal { value: Value::BigInt(v), .. } if !infix => format!("{v}:BIGINT"),
        Expr::Literal { value, ty } if !infix && typed_in_physical_plan(ty) => {
            format!("{}:{}", literal_in(value, notation), calcite_type(&DataType::new(ty.logical.clone())))
        }
        // A string literal of another type than the CHAR of its length (coerced to a CASE's
        // VARCHAR, say), as Calcite writes it.
        Expr::Literal { value: value @ Value::String(s), ty } if notation.is_prefix() && !is_natural_char(s, ty) => {
            typed_string(&literal_in(value, notation), &ty.logical)
        }
        Expr::Literal { value, .. } => literal_in(value, notation),
        Expr::Call { function, args, ty } => {
            let mut parts: Vec<String> = args.iter().map(|a| render(a, column, notation)).collect();
            if matches!(function, Function::Case) && notation.is_prefix() {
                coerce_case_literals(args, ty, &mut parts);
            }
            if matches!(function, Function::Equals | Function::NotEquals) && notation == Notation::Physical {
                widen_compared_literals(args, &mut parts);
            }
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
