//! Vectorized evaluation: an [`Expr`] compiled once per plan into kernels over Arrow arrays,
//! then evaluated a whole column at a time per chunk.
//!
//! [`VectorExpr::compile`] takes the expressions whose every node has a kernel here: column
//! references, literals, integer arithmetic (wrapping, as Flink's), FLOAT and DOUBLE arithmetic,
//! comparisons of integers, of floats (NULL where NaN compares) and of strings, `AND` / `OR` /
//! `NOT` (three-valued, Arrow's Kleene kernels), `IS [NOT] NULL`, and the registry functions that have a column kernel
//! ([`ScalarFunction::eval_columns`](super::functions::ScalarFunction::eval_columns)). Anything else stays on the row path ([`Expr::eval_selected`]), which
//! gives the same results. A kernel that can fail (`/` and `%` by zero) is only compiled where
//! every row is evaluated anyway, never under the short-circuit of `AND` / `OR`, so an error
//! is reported for exactly the rows the row path reports it for.

use std::sync::Arc;

use arrow_arith::boolean::{and_kleene, is_not_null, is_null, not, or_kleene};
use arrow_array::cast::AsArray;
use arrow_array::{new_null_array, ArrayRef, BooleanArray};
use arrow_schema::DataType as ArrowType;
use weir_runtime::columnar::{array_from_values, arrow_type, conform};
use weir_runtime::{DataType, LogicalType, Value};

mod kernels;
mod shared;

pub use shared::{SharedValues, Sharing};

use kernels::{arithmetic, compare, decimal_compare, decimal_times, float_arithmetic};

use super::function::{Cmp, Function};
use super::functions::ScalarRef;
use super::types::{is_integer, is_string};
use super::{Expr, ExprError};

/// An expression compiled into column kernels.
#[derive(Debug, Clone)]
pub struct VectorExpr {
    node: Node,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arith {
    Plus,
    Minus,
    Times,
    Divide,
    Modulo,
}

#[derive(Debug, Clone)]
enum Node {
    Column {
        index: usize,
        ty: ArrowType,
    },
    Literal {
        value: Value,
        ty: ArrowType,
    },
    /// FLOAT (`single`) or DOUBLE arithmetic, computed in 64 bits as the row path does.
    FloatArith {
        op: Arith,
        single: bool,
        lhs: Box<Node>,
        rhs: Box<Node>,
    },
    /// DECIMAL (or integer) times DECIMAL whose product needs no rounding: the unscaled
    /// values multiplied in 128 bits, NULL where the product has more than `precision` digits.
    DecimalTimes {
        precision: u8,
        scale: u8,
        lhs: Box<Node>,
        rhs: Box<Node>,
    },
    /// A comparison of two DECIMALs, or of a DECIMAL and an integer, at `scales` (left,
    /// right): both moved to the larger one.
    DecimalCompare {
        op: Cmp,
        scales: (u8, u8),
        lhs: Box<Node>,
        rhs: Box<Node>,
    },
    /// Integer arithmetic in 64 bits, narrowed to `bits`.
    Arith {
        op: Arith,
        bits: u8,
        lhs: Box<Node>,
        rhs: Box<Node>,
    },
    /// A comparison of two integers (any widths), two numbers one of which is a float, or two strings.
    Compare {
        op: Cmp,
        lhs: Box<Node>,
        rhs: Box<Node>,
    },
    And(Vec<Node>),
    Or(Vec<Node>),
    Not(Box<Node>),
    IsNull {
        arg: Box<Node>,
        negated: bool,
    },
    /// `CASE WHEN c THEN v … [ELSE e] END`: each row takes the value of its first true
    /// condition (a NULL condition is not true), else the ELSE value or NULL.
    Case {
        /// Conditions and their values, in order.
        branches: Vec<(Node, Node)>,
        otherwise: Option<Box<Node>>,
        ty: ArrowType,
    },
    /// A registry function with a column kernel for its argument types.
    Scalar {
        function: ScalarRef,
        args: Vec<Node>,
        ty: DataType,
    },
    /// A call whose value is kept in its slot of the [`SharedValues`] for the chunk.
    Shared {
        slot: usize,
        node: Box<Node>,
    },
}

fn is_floating(ty: &DataType) -> bool {
    matches!(ty.logical, LogicalType::Float | LogicalType::Double)
}

/// Whether a float kernel reads values of `ty` as the row path does (`as_f64`): floats and
/// integers (not DECIMAL, which has kernels of its own on the row path).
fn is_float_operand(ty: &DataType) -> bool {
    is_floating(ty) || is_integer(ty)
}

impl VectorExpr {
    /// `expr` compiled into column kernels, or `None` when some part of it has none.
    pub fn compile(expr: &Expr) -> Option<VectorExpr> {
        VectorExpr::compile_shared(expr, &mut Sharing::default())
    }

    /// `expr` compiled as [`compile`](Self::compile) does, its calls given the slots of
    /// `sharing`: a call the expressions compiled with it have in common is evaluated once
    /// per [`SharedValues`].
    pub fn compile_shared(expr: &Expr, sharing: &mut Sharing) -> Option<VectorExpr> {
        compile(expr, false, sharing).map(|node| VectorExpr { node })
    }

    /// The expression's value for each row of `columns` (all of length `rows`).
    ///
    /// Returns `Ok(None)` when a column does not have the Arrow type the expression was
    /// compiled for (the caller then takes the row path).
    ///
    /// # Errors
    /// What the row path reports for one of the rows (`/ by zero`).
    pub fn eval(&self, columns: &[ArrayRef], rows: usize) -> Result<Option<ArrayRef>, ExprError> {
        self.eval_shared(columns, rows, &mut SharedValues::new())
    }

    /// The expression's value as [`eval`](Self::eval) computes it, reading and filling the
    /// values of shared calls in `shared` (which holds values over these `rows` only).
    ///
    /// # Errors
    /// What the row path reports for one of the rows (`/ by zero`).
    pub fn eval_shared(
        &self,
        columns: &[ArrayRef],
        rows: usize,
        shared: &mut SharedValues,
    ) -> Result<Option<ArrayRef>, ExprError> {
        Ok(eval(&self.node, columns, rows, shared)?.map(|d| d.into_array(rows)))
    }
}

fn compile(expr: &Expr, guarded: bool, sharing: &mut Sharing) -> Option<Node> {
    match expr {
        Expr::Column { index, ty } => Some(Node::Column { index: *index, ty: arrow_type(ty) }),
        Expr::Literal { value, ty } => {
            // A literal must fit its type's column (the kernels read it as one).
            let ty = arrow_type(ty);
            array_from_values(&ty, &[value]).ok()?;
            Some(Node::Literal { value: value.clone(), ty })
        }
        Expr::Call { function, args, ty } => {
            let node = compile_call(function, args, ty, guarded, sharing)?;
            Some(match sharing.slot(expr) {
                Some(slot) => Node::Shared { slot, node: Box::new(node) },
                None => node,
            })
        }
    }
}

/// The kernels of a call of `function` on `args`, whose result is of type `ty`.
fn compile_call(
    function: &Function,
    args: &[Expr],
    ty: &DataType,
    guarded: bool,
    sharing: &mut Sharing,
) -> Option<Node> {
    let mut arg = |i: usize, guarded| compile(&args[i], guarded, sharing).map(Box::new);
    let types: Vec<&DataType> = args.iter().map(Expr::ty).collect();
    let op = match function {
        Function::Plus => Some(Arith::Plus),
        Function::Minus => Some(Arith::Minus),
        Function::Times => Some(Arith::Times),
        Function::Divide => Some(Arith::Divide),
        Function::Modulo => Some(Arith::Modulo),
        _ => None,
    };
    if let Some(op) = op {
        if let (Arith::Times, LogicalType::Decimal { precision, scale }) = (op, &ty.logical) {
            // The row path multiplies the unscaled values, then rounds to the result's
            // scale: a kernel only where there is nothing to round.
            if decimal_scale(&args[0])? + decimal_scale(&args[1])? != *scale {
                return None;
            }
            let (precision, scale) = (*precision, *scale);
            return Some(Node::DecimalTimes { precision, scale, lhs: arg(0, guarded)?, rhs: arg(1, guarded)? });
        }
        if is_floating(ty) {
            if !(is_float_operand(types[0]) && is_float_operand(types[1])) {
                return None;
            }
            let single = ty.logical == LogicalType::Float;
            return Some(Node::FloatArith { op, single, lhs: arg(0, guarded)?, rhs: arg(1, guarded)? });
        }
        let bits = ty.integer_bits()?;
        if !(is_integer(types[0]) && is_integer(types[1])) {
            return None;
        }
        let fallible = matches!(op, Arith::Divide | Arith::Modulo)
            && !matches!(&args[1], Expr::Literal { value, .. } if value.as_i64().is_some_and(|d| d != 0));
        if fallible && guarded {
            return None;
        }
        return Some(Node::Arith { op, bits, lhs: arg(0, guarded)?, rhs: arg(1, guarded)? });
    }
    if let Some(op) = Cmp::of(function) {
        let is_decimal = |t: &DataType| matches!(t.logical, LogicalType::Decimal { .. });
        if is_decimal(types[0]) || is_decimal(types[1]) {
            // Compared at the larger of the two scales, as the row path compares them.
            let scales = (decimal_scale(&args[0])?, decimal_scale(&args[1])?);
            return Some(Node::DecimalCompare { op, scales, lhs: arg(0, guarded)?, rhs: arg(1, guarded)? });
        }
        let ints = is_integer(types[0]) && is_integer(types[1]);
        let strings = is_string(types[0]) && is_string(types[1]);
        let floats = is_float_operand(types[0]) && is_float_operand(types[1]);
        if !(ints || strings || floats) {
            return None;
        }
        return Some(Node::Compare { op, lhs: arg(0, guarded)?, rhs: arg(1, guarded)? });
    }
    match function {
        // `x IN (a, b, …)` is `x = a OR x = b OR …` in three-valued logic: true if one is
        // equal, else NULL if a comparison is NULL (x among them), else false.
        Function::In => {
            let equals = args[1..]
                .iter()
                .map(|v| {
                    let operands = vec![args[0].clone(), v.clone()];
                    compile(
                        &Expr::Call { function: Function::Equals, args: operands, ty: DataType::boolean() },
                        guarded,
                        sharing,
                    )
                })
                .collect::<Option<Vec<_>>>()?;
            Some(Node::Or(equals))
        }
        Function::And | Function::Or => {
            // Operands after the first run only where the earlier ones left the row open.
            let nodes = args
                .iter()
                .enumerate()
                .map(|(i, a)| compile(a, guarded || i > 0, sharing))
                .collect::<Option<Vec<_>>>()?;
            if args.iter().any(|a| a.ty().logical != LogicalType::Boolean) {
                return None;
            }
            Some(if matches!(function, Function::And) { Node::And(nodes) } else { Node::Or(nodes) })
        }
        Function::Not if types[0].logical == LogicalType::Boolean => Some(Node::Not(arg(0, guarded)?)),
        Function::IsNull | Function::IsNotNull => {
            Some(Node::IsNull { arg: arg(0, guarded)?, negated: matches!(function, Function::IsNotNull) })
        }
        Function::Case => {
            // Every branch is evaluated for every row, so none may fail where the row
            // path would not have evaluated it (compiled as guarded); the values must
            // already be of the result's type (no cast between them).
            let same_type = |a: &Expr| a.ty().logical == ty.logical;
            let conditions_boolean =
                args.chunks(2).filter(|c| c.len() == 2).all(|c| c[0].ty().logical == LogicalType::Boolean);
            let values_typed = args.chunks(2).all(|c| same_type(&c[c.len() - 1]));
            if !(conditions_boolean && values_typed) {
                return None;
            }
            let mut branches = Vec::new();
            let mut otherwise = None;
            for pair in args.chunks(2) {
                match pair {
                    [condition, value] => {
                        branches.push((compile(condition, true, sharing)?, compile(value, true, sharing)?))
                    }
                    [value] => otherwise = Some(Box::new(compile(value, true, sharing)?)),
                    _ => return None,
                }
            }
            Some(Node::Case { branches, otherwise, ty: arrow_type(ty) })
        }
        Function::Scalar(f) if f.has_kernel(&types) => Some(Node::Scalar {
            function: f.clone(),
            args: args.iter().map(|a| compile(a, guarded, sharing)).collect::<Option<_>>()?,
            ty: ty.clone(),
        }),
        _ => None,
    }
}

/// The scale the row path reads an operand's values at: a literal's own, a DECIMAL column's
/// type's, 0 for integers; `None` for other operands.
fn decimal_scale(arg: &Expr) -> Option<u8> {
    match (arg, &arg.ty().logical) {
        (Expr::Literal { value, .. }, _) if !value.is_null() => {
            value.as_decimal().map(|d| d.scale).or(value.as_i64().map(|_| 0))
        }
        (_, LogicalType::Decimal { scale, .. }) => Some(*scale),
        (_, _) if is_integer(arg.ty()) => Some(0),
        _ => None,
    }
}

/// An evaluated node: a column, or one value for every row.
#[derive(Clone)]
pub(super) enum Datum {
    Array(ArrayRef),
    Scalar(Value, ArrowType),
}

impl Datum {
    pub(super) fn into_array(self, rows: usize) -> ArrayRef {
        match self {
            Datum::Array(a) => a,
            // Literals were checked to fit their type when compiled: the one-row column is
            // repeated by a typed copy, not built a value at a time.
            Datum::Scalar(value, ty) => match array_from_values(&ty, &[&value]) {
                Ok(one) if !value.is_null() => {
                    let zeros = arrow_array::UInt32Array::from(vec![0; rows]);
                    arrow_select::take::take(one.as_ref(), &zeros, None).unwrap_or_else(|_| new_null_array(&ty, rows))
                }
                Ok(_) | Err(_) => new_null_array(&ty, rows),
            },
        }
    }
}

/// Evaluates `node`; `None` when an input column has an unexpected type.
fn eval(node: &Node, columns: &[ArrayRef], rows: usize, shared: &mut SharedValues) -> Result<Option<Datum>, ExprError> {
    macro_rules! sub {
        ($n:expr) => {
            match eval($n, columns, rows, shared)? {
                Some(d) => d,
                None => return Ok(None),
            }
        };
    }
    Ok(Some(match node {
        Node::Column { index, ty } => {
            // A column built from rows without declared types may hold its values in other types.
            match conform(&columns[*index], ty) {
                Some(array) => Datum::Array(array),
                None => return Ok(None),
            }
        }
        Node::Literal { value, ty } => Datum::Scalar(value.clone(), ty.clone()),
        Node::Arith { op, bits, lhs, rhs } => {
            let (a, b) = (sub!(lhs), sub!(rhs));
            Datum::Array(arithmetic(*op, *bits, &a, &b, rows)?)
        }
        Node::DecimalTimes { precision, scale, lhs, rhs } => {
            let (a, b) = (sub!(lhs), sub!(rhs));
            match decimal_times(*precision, *scale, &a, &b, rows) {
                Some(array) => Datum::Array(array),
                None => return Ok(None),
            }
        }
        Node::DecimalCompare { op, scales, lhs, rhs } => {
            let (a, b) = (sub!(lhs), sub!(rhs));
            match decimal_compare(*op, *scales, &a, &b, rows) {
                Some(array) => Datum::Array(Arc::new(array)),
                None => return Ok(None),
            }
        }
        Node::FloatArith { op, single, lhs, rhs } => {
            let (a, b) = (sub!(lhs), sub!(rhs));
            Datum::Array(float_arithmetic(*op, *single, &a, &b, rows))
        }
        Node::Compare { op, lhs, rhs } => {
            let (a, b) = (sub!(lhs), sub!(rhs));
            match compare(*op, &a, &b, rows) {
                Some(array) => Datum::Array(Arc::new(array)),
                None => return Ok(None),
            }
        }
        Node::And(args) | Node::Or(args) => {
            let and = matches!(node, Node::And(_));
            let mut result: Option<BooleanArray> = None;
            for arg in args {
                let value = sub!(arg).into_array(rows);
                let Some(value) = value.as_boolean_opt().cloned() else { return Ok(None) };
                result = Some(match result {
                    None => value,
                    Some(acc) if and => and_kleene(&acc, &value).map_err(arrow_error)?,
                    Some(acc) => or_kleene(&acc, &value).map_err(arrow_error)?,
                });
            }
            Datum::Array(Arc::new(result.unwrap_or_else(|| BooleanArray::from(vec![and; rows]))))
        }
        Node::Not(arg) => {
            let value = sub!(arg).into_array(rows);
            let Some(value) = value.as_boolean_opt() else { return Ok(None) };
            Datum::Array(Arc::new(not(value).map_err(arrow_error)?))
        }
        Node::IsNull { arg, negated } => match sub!(arg) {
            Datum::Scalar(v, _) => Datum::Scalar(Value::Boolean(v.is_null() != *negated), ArrowType::Boolean),
            Datum::Array(a) => {
                let result = if *negated { is_not_null(a.as_ref()) } else { is_null(a.as_ref()) };
                Datum::Array(Arc::new(result.map_err(arrow_error)?))
            }
        },
        Node::Case { branches, otherwise, ty } => {
            let mut result = match otherwise {
                Some(value) => sub!(value).into_array(rows),
                None => new_null_array(ty, rows),
            };
            // From the last branch to the first, so that the first true condition wins.
            for (condition, value) in branches.iter().rev() {
                let mask = sub!(condition).into_array(rows);
                let Some(mask) = mask.as_boolean_opt() else { return Ok(None) };
                let value = sub!(value).into_array(rows);
                if value.data_type() != ty || result.data_type() != ty {
                    return Ok(None);
                }
                result = arrow_select::zip::zip(mask, &value, &result).map_err(arrow_error)?;
            }
            Datum::Array(result)
        }
        Node::Scalar { function, args, ty } => {
            let mut values = Vec::with_capacity(args.len());
            for arg in args {
                values.push(sub!(arg).into_array(rows));
            }
            match function.eval_columns(&values, ty) {
                Some(array) => Datum::Array(array),
                None => return Ok(None),
            }
        }
        Node::Shared { slot, node } => match shared.get(*slot) {
            Some(value) => value,
            None => {
                let value = sub!(node);
                shared.put(*slot, &value);
                value
            }
        },
    }))
}

fn arrow_error(e: arrow_schema::ArrowError) -> ExprError {
    ExprError(e.to_string())
}

#[cfg(test)]
mod tests {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use weir_runtime::{Chunk, RowKind};

    use super::*;
    use crate::expr::test_support::{call, col, int as lit};

    /// Expressions over `[a INT, b BIGINT, c STRING, t TINYINT, d DOUBLE, f FLOAT,
    /// m DECIMAL(10, 2), w DECIMAL(38, 0)]` that compile into kernels.
    fn expressions() -> Vec<Expr> {
        let (a, b, c, t) = (
            col(0, DataType::int()),
            col(1, DataType::bigint()),
            col(2, DataType::string()),
            col(3, DataType::new(LogicalType::TinyInt)),
        );
        let (d, f) = (col(4, DataType::double()), col(5, DataType::new(LogicalType::Float)));
        let s = |v: &str| Expr::literal(Value::string(v), DataType::string());
        let (m, w) = (col(6, decimal(10, 2)), col(7, decimal(38, 0)));
        let rate = Expr::literal(Value::decimal(908, 3), decimal(4, 3));
        vec![
            call(Function::Times, vec![rate.clone(), b.clone()]),
            call(Function::Times, vec![m.clone(), a.clone()]),
            call(Function::Times, vec![m.clone(), m.clone()]),
            call(Function::Times, vec![w.clone(), w.clone()]),
            call(Function::Times, vec![t.clone(), rate.clone()]),
            call(Function::In, vec![c.clone(), s("s1"), s("S3"), s("")]),
            call(Function::In, vec![a.clone(), lit(0), lit(-1_000_000_000)]),
            call(Function::Greater, vec![call(Function::Times, vec![rate.clone(), b.clone()]), lit(10)]),
            call(Function::LessOrEqual, vec![m.clone(), rate.clone()]),
            call(Function::Equals, vec![m.clone(), m.clone()]),
            call(Function::NotEquals, vec![a.clone(), m.clone()]),
            call(Function::Less, vec![w.clone(), m.clone()]),
            call(Function::Plus, vec![call(Function::Times, vec![b.clone(), lit(2)]), a.clone()]),
            call(Function::Times, vec![a.clone(), lit(i32::MAX)]),
            call(Function::Plus, vec![t.clone(), t.clone()]),
            call(Function::Times, vec![d.clone(), call(Function::Plus, vec![a.clone(), d.clone()])]),
            call(Function::Divide, vec![d.clone(), Expr::literal(Value::Double(0.0), DataType::double())]),
            call(Function::Minus, vec![f.clone(), f.clone()]),
            call(Function::Greater, vec![d.clone(), Expr::literal(Value::Double(0.5), DataType::double())]),
            call(Function::LessOrEqual, vec![b.clone(), d.clone()]),
            call(Function::Equals, vec![f.clone(), f.clone()]),
            call(Function::Equals, vec![call(Function::Modulo, vec![a.clone(), lit(2)]), lit(0)]),
            call(Function::Divide, vec![b.clone(), lit(-3)]),
            call(Function::Modulo, vec![b.clone(), a.clone()]),
            call(Function::named("UPPER"), vec![c.clone()]),
            call(Function::named("LOWER"), vec![call(Function::named("UPPER"), vec![c.clone()])]),
            call(Function::Less, vec![c.clone(), s("s4")]),
            call(Function::Greater, vec![c.clone(), call(Function::named("LOWER"), vec![c.clone()])]),
            call(Function::LessOrEqual, vec![s("s3"), c.clone()]),
            call(Function::GreaterOrEqual, vec![b.clone(), a.clone()]),
            call(Function::IsNull, vec![c.clone()]),
            call(Function::Not, vec![call(Function::IsNotNull, vec![a.clone()])]),
            call(
                Function::And,
                vec![
                    call(Function::Greater, vec![a.clone(), lit(1)]),
                    call(Function::NotEquals, vec![c.clone(), s("s2")]),
                ],
            ),
            call(
                Function::Or,
                vec![
                    call(Function::IsNull, vec![b.clone()]),
                    call(Function::Less, vec![a.clone(), lit(3)]),
                    call(Function::Equals, vec![t.clone(), lit(1)]),
                ],
            ),
            call(
                Function::Case,
                vec![
                    call(Function::Greater, vec![a.clone(), lit(1)]),
                    b.clone(),
                    call(Function::Equals, vec![c.clone(), s("s2")]),
                    call(Function::Times, vec![b.clone(), lit(2)]),
                    b.clone(),
                ],
            ),
            call(Function::Case, vec![call(Function::IsNull, vec![c.clone()]), s("none"), c.clone()]),
            call(Function::Case, vec![call(Function::Less, vec![d.clone(), f.clone()]), a.clone()]),
        ]
    }

    fn decimal(precision: u8, scale: u8) -> DataType {
        DataType::new(LogicalType::Decimal { precision, scale })
    }

    fn random_chunk(rng: &mut SmallRng, rows: usize) -> Chunk {
        let mut chunk = Chunk::with_types(&[
            DataType::int(),
            DataType::bigint(),
            DataType::string(),
            DataType::new(LogicalType::TinyInt),
            DataType::double(),
            DataType::new(LogicalType::Float),
            decimal(10, 2),
            decimal(38, 0),
        ]);
        let words = ["s1", "s2", "S3", "s4", "Ünïcode", "ß", ""];
        for _ in 0..rows {
            let null = |rng: &mut SmallRng| rng.random_range(0..6) == 0;
            let a = if null(rng) {
                Value::Null
            } else {
                Value::Int(rng.random_range(-3i32..6).wrapping_mul(1_000_000_000))
            };
            let b = if null(rng) { Value::Null } else { Value::BigInt(rng.random_range(-50..50)) };
            let c = if null(rng) { Value::Null } else { Value::string(words[rng.random_range(0..words.len())]) };
            let t = if null(rng) { Value::Null } else { Value::TinyInt(rng.random_range(-128..=127)) };
            let specials = [f64::NAN, f64::INFINITY, -0.0, 0.0, 0.5];
            let d = match rng.random_range(0..8) {
                0 => Value::Null,
                1 => Value::Double(specials[rng.random_range(0..specials.len())]),
                _ => Value::Double(rng.random_range(-2.0..2.0)),
            };
            let f = match rng.random_range(0..6) {
                0 => Value::Null,
                1 => Value::Float(f32::NAN),
                _ => Value::Float(rng.random_range(-2.0f32..2.0)),
            };
            let m = if null(rng) {
                Value::Null
            } else {
                Value::decimal(rng.random_range(-9_999_999_999i128..10_000_000_000), 2)
            };
            // Products from small to past 38 digits and past i128.
            let w = if null(rng) {
                Value::Null
            } else {
                Value::decimal(rng.random_range(-10i128..10) * 10i128.pow(rng.random_range(0..38)), 0)
            };
            chunk.push(RowKind::Insert, &[a, b, c, t, d, f, m, w]);
        }
        chunk
    }

    #[test]
    fn kernels_agree_with_the_row_path_on_random_rows() {
        let mut rng = SmallRng::seed_from_u64(11);
        for _ in 0..300 {
            let rows = rng.random_range(0..40);
            let chunk = random_chunk(&mut rng, rows);
            let all: Vec<u32> = (0..rows as u32).collect();
            let columns = chunk.columns().arrays();
            for e in expressions() {
                let compiled = VectorExpr::compile(&e).unwrap_or_else(|| panic!("{e:?} has no kernels"));
                let by_rows = e.eval_selected(&chunk, &all);
                let by_columns = compiled.eval(columns, rows).map(|a| {
                    let a = a.expect("columns of the compiled types");
                    (0..rows).map(|i| weir_runtime::columnar::value_at(a.as_ref(), i)).collect::<Vec<_>>()
                });
                match (by_rows, by_columns) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "{e:?}"),
                    (Err(a), Err(b)) => assert_eq!(a, b),
                    (a, b) => panic!("{e:?}: rows {a:?}, columns {b:?}"),
                }
            }
        }
    }

    /// The values of `e` for `rows` of `chunk` by the row path.
    fn by_rows(e: &Expr, chunk: &Chunk, rows: &[u32]) -> Result<Vec<Value>, ExprError> {
        e.eval_selected(chunk, rows)
    }

    fn values(array: &ArrayRef) -> Vec<Value> {
        (0..array.len()).map(|i| weir_runtime::columnar::value_at(array.as_ref(), i)).collect()
    }

    #[test]
    fn expressions_compiled_together_share_their_common_calls_before_and_after_a_selection() {
        let mut sharing = Sharing::default();
        let compiled: Vec<(Expr, VectorExpr)> = expressions()
            .into_iter()
            .map(|e| {
                let v = VectorExpr::compile_shared(&e, &mut sharing).unwrap_or_else(|| panic!("{e:?} has no kernels"));
                (e, v)
            })
            .collect();
        let mut rng = SmallRng::seed_from_u64(12);
        for _ in 0..200 {
            let rows = rng.random_range(0..40);
            let chunk = random_chunk(&mut rng, rows);
            let all: Vec<u32> = (0..rows as u32).collect();
            let kept: Vec<u32> = all.iter().copied().filter(|_| rng.random_bool(0.5)).collect();
            let columns = chunk.columns().arrays();
            let narrowed: Vec<ArrayRef> = columns.iter().map(|c| weir_runtime::chunk::take(c, &kept)).collect();
            let mut shared = SharedValues::new();
            // Some expressions over every row, then all of them over the kept rows.
            let before = rng.random_range(0..compiled.len());
            for (e, v) in &compiled[..before] {
                let by_columns = v.eval_shared(columns, rows, &mut shared).map(|a| values(&a.unwrap()));
                assert_eq!(by_columns, by_rows(e, &chunk, &all), "{e:?}");
            }
            shared.select(&kept);
            for (e, v) in &compiled {
                let by_columns = v.eval_shared(&narrowed, kept.len(), &mut shared).map(|a| values(&a.unwrap()));
                assert_eq!(by_columns, by_rows(e, &chunk, &kept), "{e:?} after a selection");
            }
        }
    }

    #[test]
    fn equal_calls_share_a_slot_and_a_random_number_never_does() {
        let (a, c) = (col(0, DataType::int()), col(2, DataType::string()));
        let upper = || call(Function::named("UPPER"), vec![c.clone()]);
        let mut sharing = Sharing::default();
        assert_eq!(sharing.slot(&upper()), Some(0));
        assert_eq!(sharing.slot(&call(Function::Plus, vec![a.clone(), lit(1)])), Some(1));
        assert_eq!(sharing.slot(&upper()), Some(0));
        assert_eq!(sharing.slot(&call(Function::Plus, vec![a.clone(), lit(2)])), Some(2));
        let long_one = Expr::literal(Value::BigInt(1), DataType::bigint());
        assert_eq!(sharing.slot(&call(Function::Plus, vec![a.clone(), long_one])), Some(3));
        // Functions whose state is not in their arguments: a ROW's fields, EXTRACT's units.
        let row = col(8, DataType::new(LogicalType::Row(vec![])));
        let field = |i| Expr::Call {
            function: Function::Scalar(crate::expr::functions::collection::FieldAccess::of("f", i)),
            args: vec![row.clone()],
            ty: DataType::bigint(),
        };
        assert_eq!(sharing.slot(&field(0)), Some(4));
        assert_eq!(sharing.slot(&field(1)), Some(5));
        assert_eq!(sharing.slot(&field(0)), Some(4));
        let ts = col(9, DataType::timestamp(3));
        let extract = |unit| Expr::Call {
            function: Function::Scalar(crate::expr::functions::datetime::UnitFunction::extract(unit)),
            args: vec![ts.clone()],
            ty: DataType::bigint(),
        };
        assert_eq!(sharing.slot(&extract(crate::expr::TimeUnit::Hour)), Some(6));
        assert_eq!(sharing.slot(&extract(crate::expr::TimeUnit::Minute)), Some(7));
        assert_eq!(sharing.slot(&extract(crate::expr::TimeUnit::Hour)), Some(6));
        // A sum of many terms is not shared whole (finding it would cost a walk over it), its
        // first terms are.
        let deep = (0..200).fold(a.clone(), |sum, _| call(Function::Plus, vec![sum, a.clone()]));
        assert_eq!(sharing.slot(&deep), None);
        let Expr::Call { args, .. } = &deep else { unreachable!() };
        assert_eq!(sharing.slot(&args[0]), None);
        let small = (0..10).fold(a.clone(), |sum, _| call(Function::Plus, vec![sum, a.clone()]));
        assert_eq!(sharing.slot(&small), Some(8));
        assert_eq!(sharing.slot(&small.clone()), Some(8));
        let rand = call(Function::named("RAND"), vec![]);
        assert_eq!(sharing.slot(&rand), None);
        assert_eq!(sharing.slot(&call(Function::Greater, vec![rand.clone(), rand])), None);
    }

    #[test]
    fn a_division_that_may_fail_is_not_compiled_under_a_short_circuit() {
        let (a, b) = (col(0, DataType::int()), col(1, DataType::bigint()));
        let guarded = call(
            Function::And,
            vec![
                call(Function::NotEquals, vec![a.clone(), lit(0)]),
                call(Function::Greater, vec![call(Function::Divide, vec![b.clone(), a.clone()]), lit(1)]),
            ],
        );
        assert!(VectorExpr::compile(&guarded).is_none());
        let err = VectorExpr::compile(&call(Function::Divide, vec![b, a])).unwrap();
        let mut chunk = Chunk::with_types(&[DataType::int(), DataType::bigint()]);
        chunk.push(RowKind::Insert, &[Value::Int(0), Value::BigInt(4)]);
        assert_eq!(err.eval(chunk.columns().arrays(), 1).unwrap_err().to_string(), "/ by zero");
    }
}
