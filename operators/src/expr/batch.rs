//! Column-at-a-time evaluation: an expression over the selected rows of a chunk, one node at a
//! time, so that the tree is walked once per chunk instead of once per row. Results are those of
//! [`Expr::eval`] row by row: functions get the same evaluated arguments, `AND`/`OR` evaluate
//! their later operands only for the rows the earlier ones leave undecided, and the other
//! functions that look at their arguments themselves (`CASE`, `COALESCE`, `IF`, …) run per row.

use smallvec::SmallVec;
use weir_runtime::{Chunk, Value};

use super::function::{self, apply, boolean, truth, Function};
use super::{Expr, ExprError};

/// Adds the columns `e` reads to `read` (each once).
fn columns_read(e: &Expr, read: &mut Vec<usize>) {
    match e {
        Expr::Column { index, .. } => {
            if !read.contains(index) {
                read.push(*index);
            }
        }
        Expr::Literal { .. } => {}
        Expr::Call { args, .. } => args.iter().for_each(|a| columns_read(a, read)),
    }
}

impl Expr {
    /// The value of the expression for each row of `chunk` listed in `selection`, in order.
    ///
    /// # Errors
    /// What [`Expr::eval`] reports for one of the rows.
    pub fn eval_selected(&self, chunk: &Chunk, selection: &[u32]) -> Result<Vec<Value>, ExprError> {
        match self {
            Expr::Column { index, .. } => Ok(chunk.column_values(*index, selection)),
            Expr::Literal { value, .. } => Ok(vec![value.clone(); selection.len()]),
            Expr::Call { function: Function::And, args, .. } => short_circuit(args, chunk, selection, false),
            Expr::Call { function: Function::Or, args, .. } => short_circuit(args, chunk, selection, true),
            Expr::Call { function: Function::Cast, args, ty } => {
                let from = args[0].ty();
                let values = args[0].eval_selected(chunk, selection)?;
                values.iter().map(|v| super::cast::cast(v, from, ty).map_err(ExprError)).collect()
            }
            Expr::Call { function, .. } if function::is_lazy(function) => {
                // Row by row over the columns it reads only: the others stay NULL in the row.
                let mut read = Vec::new();
                columns_read(self, &mut read);
                let mut columns: Vec<Vec<Value>> = read.iter().map(|&c| chunk.column_values(c, selection)).collect();
                let mut row = vec![Value::Null; chunk.arity()];
                (0..selection.len())
                    .map(|k| {
                        for (&c, values) in read.iter().zip(columns.iter_mut()) {
                            row[c] = std::mem::take(&mut values[k]);
                        }
                        self.eval(&row)
                    })
                    .collect()
            }
            Expr::Call { function, args, ty } => {
                let mut columns: SmallVec<[Argument; 4]> = args
                    .iter()
                    .map(|a| match a {
                        Expr::Literal { value, .. } => Ok(Argument::Constant(value.clone())),
                        _ => a.eval_selected(chunk, selection).map(Argument::Values),
                    })
                    .collect::<Result<_, _>>()?;
                let mut out = Vec::with_capacity(selection.len());
                match columns.as_mut_slice() {
                    [x] => {
                        for i in 0..selection.len() {
                            out.push(apply(function, &[x.take(i)], ty)?);
                        }
                    }
                    [x, y] => {
                        let fast = integer_kernel(function, ty);
                        for i in 0..selection.len() {
                            let value = match fast.and_then(|k| k.apply(x.get(i), y.get(i))) {
                                Some(result) => result?,
                                None => apply(function, &[x.take(i), y.take(i)], ty)?,
                            };
                            out.push(value);
                        }
                    }
                    all => {
                        let mut values: SmallVec<[Value; 4]> = SmallVec::new();
                        for i in 0..selection.len() {
                            values.clear();
                            for a in all.iter_mut() {
                                values.push(a.take(i));
                            }
                            out.push(apply(function, &values, ty)?);
                        }
                    }
                }
                Ok(out)
            }
        }
    }
}

/// An evaluated argument: a value per selected row, or one constant for all.
enum Argument {
    Values(Vec<Value>),
    Constant(Value),
}

impl Argument {
    /// The argument's value for the `i`-th selected row.
    fn get(&self, i: usize) -> &Value {
        match self {
            Argument::Values(values) => &values[i],
            Argument::Constant(value) => value,
        }
    }

    /// The argument's value for the `i`-th selected row (taken: each is read once).
    fn take(&mut self, i: usize) -> Value {
        match self {
            Argument::Values(values) => std::mem::replace(&mut values[i], Value::Null),
            Argument::Constant(value) => value.clone(),
        }
    }
}

/// A binary function on integers computed without the general dispatch: the same results as
/// [`apply`] (wrapping arithmetic in 64 bits, narrowed to the result type; `/ by zero`), for
/// operands that are both integers or NULL.
#[derive(Clone, Copy)]
enum IntegerKernel {
    /// `+ - * / %` (by function) into an integer of `bits` bits.
    Arithmetic { op: u8, bits: u8 },
    /// `= <> < <= > >=` (by function).
    Comparison { op: u8 },
}

fn integer_kernel(function: &Function, ty: &weir_runtime::DataType) -> Option<IntegerKernel> {
    let arithmetic = |op| ty.integer_bits().map(|bits| IntegerKernel::Arithmetic { op, bits });
    match function {
        Function::Plus => arithmetic(b'+'),
        Function::Minus => arithmetic(b'-'),
        Function::Times => arithmetic(b'*'),
        Function::Divide => arithmetic(b'/'),
        Function::Modulo => arithmetic(b'%'),
        Function::Equals => Some(IntegerKernel::Comparison { op: b'=' }),
        Function::NotEquals => Some(IntegerKernel::Comparison { op: b'!' }),
        Function::Less => Some(IntegerKernel::Comparison { op: b'<' }),
        Function::LessOrEqual => Some(IntegerKernel::Comparison { op: b'l' }),
        Function::Greater => Some(IntegerKernel::Comparison { op: b'>' }),
        Function::GreaterOrEqual => Some(IntegerKernel::Comparison { op: b'g' }),
        _ => None,
    }
}

impl IntegerKernel {
    /// The result for `a` and `b`, or `None` when they are not both integers (or NULL).
    fn apply(self, a: &Value, b: &Value) -> Option<Result<Value, ExprError>> {
        if a.is_null() || b.is_null() {
            return Some(Ok(Value::Null));
        }
        let (x, y) = (integer_of(a)?, integer_of(b)?);
        Some(Ok(match self {
            IntegerKernel::Arithmetic { op, bits } => {
                let r = match op {
                    b'+' => x.wrapping_add(y),
                    b'-' => x.wrapping_sub(y),
                    b'*' => x.wrapping_mul(y),
                    _ if y == 0 => return Some(Err(ExprError("/ by zero".into()))),
                    b'/' => x.wrapping_div(y),
                    _ => x.wrapping_rem(y),
                };
                match bits {
                    8 => Value::TinyInt(r as i8),
                    16 => Value::SmallInt(r as i16),
                    32 => Value::Int(r as i32),
                    _ => Value::BigInt(r),
                }
            }
            IntegerKernel::Comparison { op } => Value::Boolean(match op {
                b'=' => x == y,
                b'!' => x != y,
                b'<' => x < y,
                b'l' => x <= y,
                b'>' => x > y,
                _ => x >= y,
            }),
        }))
    }
}

/// The value of an integer-typed value (TINYINT to BIGINT), `None` for any other.
fn integer_of(v: &Value) -> Option<i64> {
    match v {
        Value::TinyInt(n) => Some(i64::from(*n)),
        Value::SmallInt(n) => Some(i64::from(*n)),
        Value::Int(n) => Some(i64::from(*n)),
        Value::BigInt(n) => Some(*n),
        _ => None,
    }
}

/// `AND` (`decisive` = false) or `OR` (`decisive` = true): each operand is evaluated only for
/// the rows no earlier operand has decided; NULL when an operand was NULL and none decisive.
fn short_circuit(args: &[Expr], chunk: &Chunk, selection: &[u32], decisive: bool) -> Result<Vec<Value>, ExprError> {
    let mut result: Vec<Option<bool>> = vec![Some(!decisive); selection.len()];
    let mut open: Vec<usize> = (0..selection.len()).collect();
    for arg in args {
        if open.is_empty() {
            break;
        }
        let rows: Vec<u32> = open.iter().map(|&i| selection[i]).collect();
        let values = arg.eval_selected(chunk, &rows)?;
        let mut still_open = Vec::with_capacity(open.len());
        for (&i, v) in open.iter().zip(&values) {
            match truth(v) {
                Some(b) if b == decisive => result[i] = Some(decisive),
                None => {
                    result[i] = None;
                    still_open.push(i);
                }
                Some(_) => still_open.push(i),
            }
        }
        open = still_open;
    }
    Ok(result.into_iter().map(boolean).collect())
}

#[cfg(test)]
mod tests {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use weir_runtime::{DataType, RowKind};

    use super::*;
    use crate::expr::test_support::{call, col, int};

    /// Expressions over `[a INT, b BIGINT, c STRING, d DOUBLE]`, with NULLs, errors and
    /// conditions that guard errors.
    fn expressions() -> Vec<Expr> {
        let (a, b, c, d) = (
            col(0, DataType::int()),
            col(1, DataType::bigint()),
            col(2, DataType::string()),
            col(3, DataType::double()),
        );
        vec![
            call(Function::Plus, vec![call(Function::Times, vec![b.clone(), int(2)]), a.clone()]),
            call(Function::Equals, vec![call(Function::Modulo, vec![a.clone(), int(2)]), int(0)]),
            call(Function::named("UPPER"), vec![c.clone()]),
            call(Function::Greater, vec![d.clone(), Expr::literal(Value::Double(0.5), DataType::double())]),
            // A division by zero is guarded by the AND on some rows only.
            call(
                Function::And,
                vec![
                    call(Function::NotEquals, vec![a.clone(), int(0)]),
                    call(Function::Greater, vec![call(Function::Divide, vec![b.clone(), a.clone()]), int(1)]),
                ],
            ),
            call(
                Function::Or,
                vec![
                    call(Function::IsNull, vec![c.clone()]),
                    call(Function::Less, vec![a.clone(), int(3)]),
                    call(Function::Greater, vec![d.clone(), Expr::literal(Value::Double(0.9), DataType::double())]),
                ],
            ),
            call(
                Function::Case,
                vec![
                    call(Function::Equals, vec![a.clone(), int(0)]),
                    int(-1),
                    call(Function::Divide, vec![int(100), a.clone()]),
                ],
            ),
            // Unguarded: fails whenever a selected row has a = 0.
            call(Function::Divide, vec![int(7), a]),
        ]
    }

    fn random_chunk(rng: &mut SmallRng, rows: usize) -> Chunk {
        let mut chunk = Chunk::new(4);
        for _ in 0..rows {
            let null = |rng: &mut SmallRng| rng.random_range(0..6) == 0;
            let a = if null(rng) { Value::Null } else { Value::Int(rng.random_range(-3..6)) };
            let b = if null(rng) { Value::Null } else { Value::BigInt(rng.random_range(-50..50)) };
            let c = if null(rng) { Value::Null } else { Value::string(&format!("s{}", rng.random_range(0..9))) };
            let d = if null(rng) { Value::Null } else { Value::Double(rng.random_range(0.0..1.0)) };
            chunk.push(RowKind::Insert, &[a, b, c, d]);
        }
        chunk
    }

    #[test]
    fn column_at_a_time_agrees_with_row_at_a_time_on_random_rows() {
        let mut rng = SmallRng::seed_from_u64(7);
        for _ in 0..200 {
            let rows = rng.random_range(0..40);
            let chunk = random_chunk(&mut rng, rows);
            let selection: Vec<u32> = (0..chunk.len() as u32).filter(|_| rng.random_range(0..4) != 0).collect();
            for e in expressions() {
                let by_rows: Result<Vec<Value>, ExprError> =
                    selection.iter().map(|&r| e.eval(chunk.row(r as usize))).collect();
                let by_column = e.eval_selected(&chunk, &selection);
                // The selected rows as a chunk of arrays under a selection, without a row view:
                // columns are read from their arrays.
                let narrowed = chunk.selected(&selection);
                let all: Vec<u32> = (0..narrowed.len() as u32).collect();
                let by_array = e.eval_selected(&narrowed, &all);
                assert!(narrowed.is_columnar());
                match (by_rows, by_column, by_array) {
                    (Ok(a), Ok(b), Ok(c)) => {
                        assert_eq!(a, b, "{e:?}");
                        assert_eq!(a, c, "{e:?} over arrays");
                    }
                    (Err(_), Err(_), Err(_)) => {}
                    (a, b, c) => panic!("{e:?}: rows {a:?}, column {b:?}, arrays {c:?}"),
                }
            }
        }
    }
}
