//! Calc: a fused filter and projection, as Flink plans `SELECT exprs FROM … WHERE condition`.

use weir_runtime::{Chunk, Error, Operator, OperatorContext, Output, Result, Value};

use crate::expr::Expr;

/// Keeps the rows whose condition is TRUE (not FALSE, not NULL) and computes the projections
/// of each; row kinds pass through.
#[derive(Debug, Clone)]
pub struct CalcOperator {
    projections: Vec<Expr>,
    condition: Option<Expr>,
}

impl CalcOperator {
    /// A Calc computing `projections` over the rows that satisfy `condition`.
    pub fn new(projections: Vec<Expr>, condition: Option<Expr>) -> Self {
        CalcOperator { projections, condition }
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
        let fail = |e: crate::expr::ExprError| Error::execution(e.to_string());
        // Column at a time: the rows that pass the condition, then each computed column over them.
        let all: Vec<u32> = (0..chunk.len() as u32).collect();
        let selection = match &self.condition {
            None => all,
            Some(condition) => {
                let passed = condition.eval_selected(&chunk, &all).map_err(fail)?;
                all.into_iter().zip(passed).filter(|(_, v)| *v == Value::Boolean(true)).map(|(r, _)| r).collect()
            }
        };
        let mut computed: Vec<Option<Vec<Value>>> = Vec::with_capacity(self.projections.len());
        for p in &self.projections {
            computed.push(match p {
                Expr::Column { .. } => None,
                _ => Some(p.eval_selected(&chunk, &selection).map_err(fail)?),
            });
        }
        let mut result = Chunk::with_capacity(self.projections.len(), selection.len());
        for (i, &r) in selection.iter().enumerate() {
            let row = chunk.row(r as usize);
            result.push_with(chunk.kind(r as usize), |fields| {
                for (p, values) in self.projections.iter().zip(computed.iter_mut()) {
                    fields.push(match (p, values) {
                        (_, Some(values)) => std::mem::replace(&mut values[i], Value::Null),
                        (Expr::Column { index, .. }, None) => row[*index].clone(),
                        (_, None) => Value::Null,
                    });
                }
            });
        }
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
        let upper = Expr::call(Function::Upper, vec![Expr::column(0, DataType::string())]).unwrap();
        let mut h = OperatorHarness::new(CalcOperator::new(vec![upper, doubled], Some(condition)));
        h.push("op | p STRING | q INT\n+I | apple | 3\n+I | fig | 1\n-D | kiwi | null\n-U | pear | 5").unwrap();
        assert_eq!(h.take_lines(), ["+I[APPLE, 6]", "-U[PEAR, 10]"]);
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
