//! Calc: a fused filter and projection, as Flink plans `SELECT exprs FROM … WHERE condition`.
//!
//! Column at a time: the condition gives a boolean column, whose TRUE rows become the chunk's
//! selection; a projection of input columns reuses their arrays under that selection (nothing
//! is copied), computed columns are evaluated by [`VectorExpr`] kernels over the passing rows.
//! The condition and the projections are compiled together: a call they have in common is
//! evaluated once per chunk, the projections reading its passing rows. Expressions without
//! kernels take the row path, with the same results.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, StructArray};
use weir_runtime::columnar::{array_from_values, arrow_type, value_at};
use weir_runtime::{Chunk, Error, Operator, OperatorContext, Output, Result, RowKind, Value};

use crate::expr::{Expr, ExprError, Function, SharedValues, Sharing, VectorExpr};
use crate::spec::OperatorSpec;

/// Everything a [`CalcOperator`] is built from.
#[derive(Debug, Clone)]
pub struct CalcSpec {
    /// Output expressions over the input.
    pub projections: Vec<Expr>,
    /// Rows where this is not TRUE are dropped.
    pub condition: Option<Expr>,
}

impl OperatorSpec for CalcSpec {
    type Operator = CalcOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> CalcOperator {
        CalcOperator::new(self.projections.clone(), self.condition.clone())
    }

    /// Compiles the expressions once; every subtask takes a copy.
    fn factory(&self) -> weir_runtime::graph::OperatorFactory {
        let operator = CalcOperator::new(self.projections.clone(), self.condition.clone());
        Arc::new(move |_| Box::new(operator.clone()))
    }
}

/// Keeps the rows whose condition is TRUE (not FALSE, not NULL) and computes the projections
/// of each; row kinds pass through.
#[derive(Debug, Clone)]
pub struct CalcOperator {
    projections: Vec<Compiled>,
    condition: Option<Compiled>,
    /// The input columns some expression reads.
    used: Vec<bool>,
    /// For each input column read only by ROW field accesses, the fields they read: the
    /// others are left out of the rows the condition passes (`None`: the column is read whole).
    fields_read: Vec<Option<Vec<bool>>>,
}

/// An expression with its kernels, when it has them.
#[derive(Debug, Clone)]
struct Compiled {
    expr: Expr,
    vector: Option<VectorExpr>,
}

impl Compiled {
    fn new(expr: Expr, sharing: &mut Sharing) -> Self {
        Compiled { vector: VectorExpr::compile_shared(&expr, sharing), expr }
    }

    /// The expression over `columns` (the chunk's rows listed in `rows`, compacted): by its
    /// kernels where it has them (with the values of `shared` calls over these rows), else
    /// row by row.
    fn eval(
        &self,
        columns: &[ArrayRef],
        chunk: &Chunk,
        rows: &[u32],
        shared: &mut SharedValues,
    ) -> std::result::Result<ArrayRef, ExprError> {
        if let Some(vector) = &self.vector {
            if let Some(array) = vector.eval_shared(columns, rows.len(), shared)? {
                return Ok(array);
            }
        }
        let values = self.expr.eval_selected(chunk, rows)?;
        let refs: Vec<&Value> = values.iter().collect();
        array_from_values(&arrow_type(self.expr.ty()), &refs).map_err(|e| ExprError(e.to_string()))
    }
}

impl CalcOperator {
    /// A Calc computing `projections` over the rows that satisfy `condition`.
    pub fn new(projections: Vec<Expr>, condition: Option<Expr>) -> Self {
        let arity = projections.iter().chain(&condition).map(max_column).max().unwrap_or(0);
        let mut used = vec![false; arity];
        for e in projections.iter().chain(&condition) {
            e.mark_columns(&mut used);
        }
        let fields_read = fields_read(projections.iter().chain(&condition), arity);
        let mut sharing = Sharing::default();
        let condition = condition.map(|c| Compiled::new(c, &mut sharing));
        CalcOperator {
            projections: projections.into_iter().map(|p| Compiled::new(p, &mut sharing)).collect(),
            condition,
            used,
            fields_read,
        }
    }
}

/// For each of `arity` input columns that `exprs` read only as the ROW of field accesses, the
/// fields they read; `None` for the others.
fn fields_read<'a>(exprs: impl Iterator<Item = &'a Expr>, arity: usize) -> Vec<Option<Vec<bool>>> {
    let mut read: Vec<Option<Vec<bool>>> = vec![Some(Vec::new()); arity];
    let mut pending: Vec<&Expr> = exprs.collect();
    while let Some(e) = pending.pop() {
        match e {
            Expr::Column { index, .. } => read[*index] = None,
            Expr::Literal { .. } => {}
            Expr::Call { function, args, .. } => {
                let field = match (function, args.as_slice()) {
                    (Function::Scalar(f), [Expr::Column { index, .. }]) => f.field_index().map(|k| (*index, k)),
                    _ => None,
                };
                match field {
                    Some((column, k)) => {
                        if let Some(fields) = &mut read[column] {
                            if fields.len() <= k {
                                fields.resize(k + 1, false);
                            }
                            fields[k] = true;
                        }
                    }
                    None => pending.extend(args),
                }
            }
        }
    }
    read
}

/// `column` with the fields `read` does not mark replaced by NULLs, when it is a ROW column (as
/// it is, when it is not): its rows are then copied without them.
fn without_unread_fields(column: ArrayRef, read: &[bool]) -> ArrayRef {
    let Some(rows) = column.as_struct_opt() else { return column };
    if (0..rows.num_columns()).all(|k| read.get(k).copied().unwrap_or(false)) {
        return column;
    }
    let (mut fields, mut children) = (Vec::with_capacity(rows.num_columns()), Vec::with_capacity(rows.num_columns()));
    for (k, (field, child)) in rows.fields().iter().zip(rows.columns()).enumerate() {
        if read.get(k).copied().unwrap_or(false) {
            fields.push(Arc::clone(field));
            children.push(Arc::clone(child));
        } else {
            fields.push(Arc::new(field.as_ref().clone().with_nullable(true)));
            children.push(arrow_array::new_null_array(child.data_type(), rows.len()));
        }
    }
    match StructArray::try_new(fields.into(), children, rows.nulls().cloned()) {
        Ok(pruned) => Arc::new(pruned),
        Err(_) => column,
    }
}

/// One past the highest input column `e` reads.
fn max_column(e: &Expr) -> usize {
    match e {
        Expr::Column { index, .. } => index + 1,
        Expr::Literal { .. } => 0,
        Expr::Call { args, .. } => args.iter().map(max_column).max().unwrap_or(0),
    }
}

/// The rows of `passed` that are TRUE.
fn true_rows(passed: &BooleanArray) -> Vec<u32> {
    let values = passed.values();
    match passed.nulls() {
        None => values.set_indices().map(|i| i as u32).collect(),
        Some(nulls) => values.set_indices().filter(|&i| nulls.is_valid(i)).map(|i| i as u32).collect(),
    }
}

impl Operator for CalcOperator {
    fn name(&self) -> &str {
        "Calc"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let fail = |e: ExprError| Error::execution(e.to_string());
        let rows = chunk.len();
        // A projection of input columns keeps the input's arrays and selection.
        let picked: Option<Vec<usize>> = self
            .projections
            .iter()
            .map(|p| match p.expr {
                Expr::Column { index, .. } => Some(index),
                _ => None,
            })
            .collect();
        if let (Some(picked), None) = (&picked, &self.condition) {
            if rows > 0 {
                out.collect(chunk.project(picked));
            }
            return Ok(());
        }
        let all: Vec<u32> = (0..rows as u32).collect();
        let columns = chunk.columns();
        // The columns no expression reads stay out of the work (their place holds NULLs).
        let reads = |i: usize| self.used.get(i).copied().unwrap_or(false);
        let inputs: Vec<ArrayRef> = (0..chunk.arity())
            .map(|i| {
                if reads(i) {
                    match &self.fields_read[i] {
                        Some(read) => without_unread_fields(columns.compacted(i), read),
                        None => columns.compacted(i),
                    }
                } else {
                    arrow_array::new_null_array(&arrow_schema::DataType::Null, rows)
                }
            })
            .collect();
        let mut shared = SharedValues::new();
        let passing: Option<Vec<u32>> = match &self.condition {
            None => None,
            Some(condition) => {
                let passed = condition.eval(&inputs, &chunk, &all, &mut shared).map_err(fail)?;
                let kept = match passed.as_any().downcast_ref::<BooleanArray>() {
                    Some(b) => true_rows(b),
                    None => (0..rows)
                        .filter(|&i| value_at(passed.as_ref(), i) == Value::Boolean(true))
                        .map(|i| i as u32)
                        .collect(),
                };
                (kept.len() < rows).then_some(kept)
            }
        };
        if passing.as_ref().is_some_and(Vec::is_empty) || rows == 0 {
            return Ok(());
        }
        let mut result = if let Some(picked) = &picked {
            // The condition narrows the selection of the input's arrays.
            let mut result = chunk.project(picked);
            if let Some(kept) = &passing {
                result.select(kept);
            }
            result
        } else {
            let (filtered, selected, kinds): (Vec<ArrayRef>, Vec<u32>, Vec<RowKind>) = match passing {
                None => (inputs, all, chunk.kinds().to_vec()),
                Some(kept) => {
                    shared.select(&kept);
                    let filtered = inputs
                        .iter()
                        .enumerate()
                        .map(|(i, a)| if reads(i) { weir_runtime::chunk::take(a, &kept) } else { Arc::clone(a) })
                        .collect();
                    let kinds = kept.iter().map(|&r| chunk.kind(r as usize)).collect();
                    (filtered, kept, kinds)
                }
            };
            let mut arrays = Vec::with_capacity(self.projections.len());
            for p in &self.projections {
                arrays.push(match p.expr {
                    Expr::Column { index, .. } => Arc::clone(&filtered[index]),
                    _ => p.eval(&filtered, &chunk, &selected, &mut shared).map_err(fail)?,
                });
            }
            Chunk::from_arrays(kinds, arrays)
        };
        result.set_origin_nanos(chunk.origin_nanos());
        out.collect(result);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Function;
    use weir_runtime::harness::OperatorHarness;
    use weir_runtime::DataType;

    #[test]
    fn filters_and_projects_with_sql_null_semantics() {
        let qty = Expr::column(1, DataType::int());
        let condition =
            Expr::call(Function::Greater, vec![qty.clone(), Expr::literal(Value::Int(2), DataType::int())]).unwrap();
        let doubled = Expr::call(Function::Times, vec![qty, Expr::literal(Value::Int(2), DataType::int())]).unwrap();
        let upper = Expr::call(Function::named("UPPER"), vec![Expr::column(0, DataType::string())]).unwrap();
        let mut h = OperatorHarness::new(CalcOperator::new(vec![upper, doubled], Some(condition)));
        h.push("op | p STRING | q INT\n+I | apple | 3\n+I | fig | 1\n-D | kiwi | null\n-U | pear | 5").unwrap();
        assert_eq!(h.take_lines(), ["+I[APPLE, 6]", "-U[PEAR, 10]"]);
    }

    /// A ROW column read only through two of its fields is copied without the third; read
    /// whole as well, it is copied whole. The rows are those of the row path either way.
    #[test]
    fn a_row_read_by_field_accesses_passes_only_those_fields() {
        use crate::expr::functions::collection::FieldAccess;
        let fields = vec![
            weir_runtime::Field { name: "a".into(), data_type: DataType::int() },
            weir_runtime::Field { name: "b".into(), data_type: DataType::string() },
            weir_runtime::Field { name: "c".into(), data_type: DataType::bigint() },
        ];
        let row_type = DataType::new(weir_runtime::LogicalType::Row(fields));
        let row = Expr::column(1, row_type.clone());
        let field = |k: usize| Expr::call(Function::Scalar(FieldAccess::of("f", k)), vec![row.clone()]).unwrap();
        let condition =
            Expr::call(Function::Greater, vec![field(0), Expr::literal(Value::Int(1), DataType::int())]).unwrap();
        let mut chunk = Chunk::with_types(&[DataType::int(), row_type]);
        let rows = [
            Value::Row(vec![Value::Int(2), Value::string("x"), Value::BigInt(20)].into()),
            Value::Null,
            Value::Row(vec![Value::Int(0), Value::string("y"), Value::BigInt(30)].into()),
            Value::Row(vec![Value::Int(5), Value::Null, Value::Null].into()),
        ];
        for (i, r) in rows.into_iter().enumerate() {
            chunk.push(RowKind::Insert, &[Value::Int(i as i32), r]);
        }
        let calc = CalcOperator::new(vec![field(2), Expr::column(0, DataType::int())], Some(condition.clone()));
        assert_eq!(calc.fields_read[1], Some(vec![true, false, true]));
        let mut h = OperatorHarness::new(calc);
        h.push_chunk(0, chunk.clone()).unwrap();
        assert_eq!(h.take_lines(), ["+I[20, 0]", "+I[null, 3]"]);
        let whole = CalcOperator::new(vec![field(2), row.clone()], Some(condition));
        assert_eq!(whole.fields_read[1], None);
        let mut h = OperatorHarness::new(whole);
        h.push_chunk(0, chunk).unwrap();
        assert_eq!(h.take_lines(), ["+I[20, +I[2, x, 20]]", "+I[null, +I[5, null, null]]"]);
    }

    #[test]
    fn columns_after_the_last_one_read_are_left_alone() {
        // Reads column 0 only, of three; the filter keeps some rows and a column is computed.
        let q = Expr::column(0, DataType::int());
        let condition =
            Expr::call(Function::Greater, vec![q.clone(), Expr::literal(Value::Int(1), DataType::int())]).unwrap();
        let plus = Expr::call(Function::Plus, vec![q, Expr::literal(Value::Int(1), DataType::int())]).unwrap();
        let mut h = OperatorHarness::new(CalcOperator::new(vec![plus], Some(condition)));
        h.push("op | q INT | p STRING | r INT\n+I | 1 | a | 7\n+I | 2 | b | 8\n-D | 3 | c | 9").unwrap();
        assert_eq!(h.take_lines(), ["+I[3]", "-D[4]"]);
    }

    #[test]
    fn a_projection_of_columns_keeps_the_inputs_selection() {
        let mut chunk = Chunk::with_types(&[DataType::int(), DataType::string()]);
        for (i, s) in ["a", "b", "c", "d"].iter().enumerate() {
            chunk.push(RowKind::Insert, &[Value::Int(i as i32), Value::string(s)]);
        }
        chunk.columns();
        chunk.select(&[1, 2, 3]);
        let swap = || vec![Expr::column(1, DataType::string()), Expr::column(0, DataType::int())];
        let mut h = OperatorHarness::new(CalcOperator::new(swap(), None));
        h.push_chunk(0, chunk.clone()).unwrap();
        assert_eq!(h.take_lines(), ["+I[b, 1]", "+I[c, 2]", "+I[d, 3]"]);
        let odd = Expr::call(
            Function::Equals,
            vec![
                Expr::call(
                    Function::Modulo,
                    vec![Expr::column(0, DataType::int()), Expr::literal(Value::Int(2), DataType::int())],
                )
                .unwrap(),
                Expr::literal(Value::Int(1), DataType::int()),
            ],
        )
        .unwrap();
        let mut h = OperatorHarness::new(CalcOperator::new(swap(), Some(odd)));
        h.push_chunk(0, chunk).unwrap();
        assert_eq!(h.take_lines(), ["+I[b, 1]", "+I[d, 3]"]);
    }

    #[test]
    fn a_runtime_error_fails_with_its_reason() {
        let q = Expr::column(0, DataType::int());
        let ratio = Expr::call(Function::Divide, vec![Expr::literal(Value::Int(1), DataType::int()), q]).unwrap();
        let mut h = OperatorHarness::new(CalcOperator::new(vec![ratio], None));
        let err = h.push("op | q INT\n+I | 0").unwrap_err().to_string();
        assert_eq!(err, "Operator 'Calc' (subtask 1/1) failed: / by zero");
    }
}
