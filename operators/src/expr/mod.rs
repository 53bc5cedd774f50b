//! Scalar expressions: typed trees built by the planner, evaluated row by row.
//!
//! An [`Expr`] is a column reference, a literal or a call of a [`Function`] on argument
//! expressions. [`Expr::call`] checks the argument types and derives the result type with
//! Flink's rules (see [`types`]); [`Expr::eval`] computes the value with SQL's NULL semantics
//! (a NULL argument gives NULL unless the function says otherwise; AND, OR, CASE, COALESCE and
//! IS NULL look at NULLs themselves).

mod batch;
pub mod cast;
mod function;
pub mod functions;
mod string;
pub mod text;
mod time;
pub mod types;
mod vector;

/// Shorthands for building expressions in tests.
#[cfg(test)]
pub(crate) mod test_support {
    use weir_runtime::{DataType, Value};

    use super::{Expr, Function};

    /// Input column `i` of type `ty`.
    pub fn col(i: usize, ty: DataType) -> Expr {
        Expr::column(i, ty)
    }

    /// `f(args)`, whose argument types must fit.
    pub fn call(f: Function, args: Vec<Expr>) -> Expr {
        Expr::call(f, args).unwrap()
    }

    /// The INT literal `v`.
    pub fn int(v: i32) -> Expr {
        Expr::literal(Value::Int(v), DataType::int())
    }
}

use std::cmp::Ordering;

use weir_runtime::{DataType, LogicalType, Value};

pub(crate) use function::Cmp;
pub use function::{Function, TimeUnit, TrimSide};
pub use functions::{ScalarFunction, ScalarRef};
pub use string::{like_regex, like_regex_escaped};
use types::{arithmetic_type, common_type, is_numeric, Arithmetic};
pub use vector::{SharedValues, Sharing, VectorExpr};

/// Why an expression could not be built (wrong argument types) or evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ExprError(pub String);

/// A typed scalar expression.
#[derive(Debug, Clone)]
pub enum Expr {
    /// The input column at this position.
    Column {
        /// Position in the input row.
        index: usize,
        /// The column's type.
        ty: DataType,
    },
    /// A constant.
    Literal {
        /// The value.
        value: Value,
        /// Its type.
        ty: DataType,
    },
    /// A function or operator applied to arguments.
    Call {
        /// What is applied.
        function: Function,
        /// The arguments.
        args: Vec<Expr>,
        /// The result type.
        ty: DataType,
    },
}

impl Expr {
    /// The number of levels of the expression tree (a column or literal is 1), found without
    /// recursion.
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut pending = vec![(self, 1)];
        while let Some((expr, depth)) = pending.pop() {
            deepest = deepest.max(depth);
            if let Expr::Call { args, .. } = expr {
                pending.extend(args.iter().map(|a| (a, depth + 1)));
            }
        }
        deepest
    }

    /// A reference to input column `index` of type `ty`.
    pub fn column(index: usize, ty: DataType) -> Self {
        Expr::Column { index, ty }
    }

    /// A constant.
    pub fn literal(value: Value, ty: DataType) -> Self {
        Expr::Literal { value, ty }
    }

    /// The result type.
    pub fn ty(&self) -> &DataType {
        match self {
            Expr::Column { ty, .. } | Expr::Literal { ty, .. } | Expr::Call { ty, .. } => ty,
        }
    }

    /// Applies `function` to `args`, checking the argument count and types; a registry
    /// function is bound to its arguments first ([`ScalarFunction::bind`]).
    ///
    /// # Errors
    /// Arguments the function does not take, in Flink's words.
    pub fn call(function: Function, args: Vec<Expr>) -> Result<Expr, ExprError> {
        let function = match function {
            Function::Scalar(f) => Function::Scalar(f.bind(&args)?.unwrap_or(f)),
            other => other,
        };
        let types: Vec<&DataType> = args.iter().map(Expr::ty).collect();
        let ty = function.return_type(&types)?;
        Ok(Expr::Call { function, args, ty })
    }

    /// A cast of this expression to `ty` (no-op when only nullability differs).
    pub fn cast_to(self, ty: &DataType) -> Expr {
        if self.ty().logical == ty.logical {
            return self;
        }
        if same_string_family(&self.ty().logical, &ty.logical) {
            // Between character (or binary) strings an implicit conversion keeps the value: only
            // an explicit CAST cuts or pads to the length (an INSERT into VARCHAR(5) keeps its
            // text unless `table.exec.sink.type-length-enforcer` says otherwise, as in Flink).
            return self.retyped(ty);
        }
        Expr::Call { function: Function::Cast, args: vec![self], ty: ty.clone() }
    }

    /// This expression converted to `ty` by a CAST (nothing when it already has that type): a
    /// character or binary string is cut or padded to the length, as the cast into a sink's
    /// column does in Flink.
    pub fn cast_exactly_to(self, ty: &DataType) -> Expr {
        if self.ty().logical == ty.logical {
            return self;
        }
        Expr::Call { function: Function::Cast, args: vec![self], ty: ty.clone() }
    }

    /// This expression, declared as `ty` (its values unchanged).
    fn retyped(self, ty: &DataType) -> Expr {
        match self {
            Expr::Column { index, .. } => Expr::Column { index, ty: ty.clone() },
            Expr::Literal { value, .. } => Expr::Literal { value, ty: ty.clone() },
            Expr::Call { function, args, .. } => Expr::Call { function, args, ty: ty.clone() },
        }
    }

    /// This expression with every column reference replaced by `below[index]`: an expression
    /// over the rows `below` is computed from.
    pub fn substitute(self, below: &[Expr]) -> Expr {
        match self {
            Expr::Column { index, .. } => below[index].clone(),
            Expr::Call { function, args, ty } => {
                Expr::Call { function, args: args.into_iter().map(|a| a.substitute(below)).collect(), ty }
            }
            literal => literal,
        }
    }

    /// This expression with column `i` read from column `map[i]` (unchanged where `None`).
    pub fn remap(self, map: &[Option<usize>]) -> Expr {
        match self {
            Expr::Column { index, ty } => Expr::Column { index: map[index].unwrap_or(index), ty },
            Expr::Call { function, args, ty } => {
                Expr::Call { function, args: args.into_iter().map(|a| a.remap(map)).collect(), ty }
            }
            literal => literal,
        }
    }

    /// Whether `self` and `other` compute the same thing: the same column, an equal literal
    /// of the same type (a DECIMAL at the same scale), or the same function of such arguments
    /// with the same result type.
    pub fn same_as(&self, other: &Expr) -> bool {
        match (self, other) {
            (Expr::Column { index: a, ty: s }, Expr::Column { index: b, ty: t }) => a == b && s == t,
            (Expr::Literal { value: a, ty: s }, Expr::Literal { value: b, ty: t }) => {
                a == b && s == t && a.as_decimal().map(|d| d.scale) == b.as_decimal().map(|d| d.scale)
            }
            (Expr::Call { function: f, args: a, ty: s }, Expr::Call { function: g, args: b, ty: t }) => {
                s == t && f.same_as(g) && a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_as(y))
            }
            (Expr::Column { .. } | Expr::Literal { .. } | Expr::Call { .. }, _) => false,
        }
    }

    /// Whether the expression gives the same value for the same row every time: no function
    /// in it reads the clock or draws a random number.
    pub fn is_deterministic(&self) -> bool {
        match self {
            Expr::Column { .. } | Expr::Literal { .. } => true,
            Expr::Call { function, args, .. } => function.is_deterministic() && args.iter().all(Expr::is_deterministic),
        }
    }

    /// Marks the input columns this expression reads.
    pub fn mark_columns(&self, used: &mut [bool]) {
        match self {
            Expr::Column { index, .. } => used[*index] = true,
            Expr::Call { args, .. } => args.iter().for_each(|a| a.mark_columns(used)),
            Expr::Literal { .. } => {}
        }
    }

    /// Adds the columns the expression reads to `order`, each once, in the order they are first
    /// read (left to right), as Flink's `InputRefVisitor` lists them.
    pub fn columns_in_order(&self, order: &mut Vec<usize>) {
        match self {
            Expr::Column { index, .. } if !order.contains(index) => order.push(*index),
            Expr::Column { .. } | Expr::Literal { .. } => {}
            Expr::Call { args, .. } => args.iter().for_each(|a| a.columns_in_order(order)),
        }
    }

    /// Whether this is the literal NULL.
    pub fn is_null_literal(&self) -> bool {
        matches!(self, Expr::Literal { value: Value::Null, .. })
    }

    /// Evaluates the expression over `row`.
    ///
    /// # Errors
    /// Runtime failures Flink also fails on: integer division by zero, a CAST of text that is
    /// not a number, an invalid regular expression.
    pub fn eval(&self, row: &[Value]) -> Result<Value, ExprError> {
        match self {
            Expr::Column { index, .. } => Ok(row[*index].clone()),
            Expr::Literal { value, .. } => Ok(value.clone()),
            Expr::Call { function, args, ty } => function::eval(function, args, ty, row),
        }
    }
}

/// Compares two non-NULL values of comparable types (numbers across types by value).
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => None,
        _ if a.as_i64().is_some() && b.as_i64().is_some() => a.as_i64()?.partial_cmp(&b.as_i64()?),
        (Value::Decimal { .. }, _) | (_, Value::Decimal { .. })
            if (a.as_decimal().is_some() || a.as_i64().is_some())
                && (b.as_decimal().is_some() || b.as_i64().is_some()) =>
        {
            let scale = a.as_decimal().map_or(0, |d| d.scale).max(b.as_decimal().map_or(0, |d| d.scale));
            let (x, y) =
                (crate::aggregate::numeric::unscaled_at(a, scale), crate::aggregate::numeric::unscaled_at(b, scale));
            x.partial_cmp(&y)
        }
        _ if a.as_f64().is_some() && b.as_f64().is_some() => a.as_f64()?.partial_cmp(&b.as_f64()?),
        (Value::String(x), Value::String(y)) => x.partial_cmp(y),
        _ => Some(a.cmp(b)),
    }
}

/// The truth of `a op b`: `None` when they cannot be compared (a NULL among them); a NaN
/// makes every comparison false but `<>` (Flink compares doubles as Java's operators do).
pub(crate) fn compare_op(op: Cmp, a: &Value, b: &Value) -> Option<bool> {
    let is_nan = |v: &Value| matches!(v, Value::Float(_) | Value::Double(_)) && v.as_f64().is_some_and(f64::is_nan);
    match compare(a, b) {
        Some(ordering) => Some(op.holds(ordering)),
        None if !a.is_null() && !b.is_null() && (is_nan(a) || is_nan(b)) => Some(op.holds_partial(None)),
        None => None,
    }
}

/// The type of `a op b` for arithmetic, or Flink's error for operands that are not numbers.
pub(crate) fn arithmetic_result(
    op: Arithmetic,
    symbol: &str,
    a: &DataType,
    b: &DataType,
) -> Result<DataType, ExprError> {
    arithmetic_type(op, a, b).ok_or_else(|| {
        ExprError(format!(
            "Cannot apply '{symbol}' to arguments of type '<{}> {symbol} <{}>'. Supported form(s): '<NUMERIC> {symbol} <NUMERIC>'",
            types::calcite_name(&a.logical), types::calcite_name(&b.logical)
        ))
    })
}

/// The type operands of a comparison meet in, or Flink's error when they cannot be compared.
pub(crate) fn comparable(symbol: &str, a: &DataType, b: &DataType) -> Result<DataType, ExprError> {
    if matches!(a.logical, LogicalType::Boolean) && matches!(b.logical, LogicalType::Boolean) {
        return Ok(DataType::boolean());
    }
    common_type(a, b).or_else(|| (is_numeric(a) && is_numeric(b)).then(DataType::double)).ok_or_else(|| {
        ExprError(format!(
            "Cannot apply '{symbol}' to arguments of type '<{}> {symbol} <{}>'. Supported form(s): '<COMPARABLE_TYPE> {symbol} <COMPARABLE_TYPE>'",
            types::calcite_name(&a.logical), types::calcite_name(&b.logical)
        ))
    })
}

/// Whether `a` and `b` are both character strings or both binary strings.
fn same_string_family(a: &LogicalType, b: &LogicalType) -> bool {
    use LogicalType::{Binary, Char, Varbinary, Varchar};
    matches!(
        (a, b),
        (Char(_) | Varchar(_), Char(_) | Varchar(_)) | (Binary(_) | Varbinary(_), Binary(_) | Varbinary(_))
    )
}
