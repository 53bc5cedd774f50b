//! `Calc`: a filter and a projection, chained to its input (Flink's `PythonCalc` when it calls a
//! Python function).

use weir_operators::expr::{Expr, Function};
use weir_operators::CalcSpec;

use super::prelude::*;
use crate::physical::state::columns_of;
use crate::plan_text::expression;

/// Filter and projection.
#[derive(Debug, Clone)]
pub struct Calc(pub CalcSpec);

/// Whether `e` calls a Python function.
pub(crate) fn calls_python(e: &Expr) -> bool {
    match e {
        Expr::Call { function: Function::Scalar(f), args, .. } => f.0.is_python() || args.iter().any(calls_python),
        Expr::Call { args, .. } => args.iter().any(calls_python),
        Expr::Column { .. } | Expr::Literal { .. } => false,
    }
}

impl Calc {
    /// The column of the output that is input column `column` passed on unchanged, if any.
    pub fn output_of(&self, column: usize) -> Option<usize> {
        self.0.projections.iter().position(|p| matches!(p, Expr::Column { index, .. } if *index == column))
    }

    /// The column of the output that is input column `column` passed on unchanged or through
    /// a cast that keeps distinct values distinct (`CHAR(1)` to `STRING`, `INT` to `BIGINT`):
    /// a key of the input stays a key (as Flink's upsert keys follow such casts). Not for hashing:
    /// the cast value hashes otherwise.
    pub fn key_output_of(&self, column: usize) -> Option<usize> {
        self.output_of(column).or_else(|| {
            self.0.projections.iter().position(|p| match p {
                Expr::Call { function: Function::Cast, args, ty } => {
                    matches!(&args[..], [Expr::Column { index, ty: from }] if *index == column && keeps_distinct(&from.logical, &ty.logical))
                }
                _ => false,
            })
        })
    }
}

/// Whether a cast from `from` to `to` maps distinct values to distinct values.
fn keeps_distinct(from: &weir_runtime::LogicalType, to: &weir_runtime::LogicalType) -> bool {
    use weir_runtime::LogicalType::{BigInt, Char, Decimal, Int, SmallInt, TinyInt, Varchar};
    match (from, to) {
        (Char(n) | Varchar(n), Varchar(m)) => m >= n,
        (TinyInt, SmallInt | Int | BigInt) | (SmallInt, Int | BigInt) | (Int, BigInt) => true,
        (Decimal { precision: p, scale: s }, Decimal { precision: q, scale: t }) => s == t && q >= p,
        (from, to) => from == to,
    }
}

impl PhysicalOp for Calc {
    fn name(&self) -> &'static str {
        "Calc"
    }

    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let CalcSpec { projections, condition } = &self.0;
        let select: Vec<String> = projections
            .iter()
            .zip(&node.fields)
            .map(|(p, f)| {
                let e = expression(p, input.column, input.infix);
                if e == f.name {
                    e
                } else {
                    format!("{e} AS {}", f.name)
                }
            })
            .collect();
        // A Calc that calls a Python function is Flink's PythonCalc.
        let name = if projections.iter().any(calls_python) { "PythonCalc" } else { "Calc" };
        let mut text = format!("{name}(select=[{}]", select.join(", "));
        if let Some(c) = condition {
            text.push_str(&format!(", where=[{}]", expression(c, input.column, input.infix)));
        }
        text.push(')');
        text
    }

    /// The input's, when every column of it is passed on unchanged or through a cast that keeps
    /// distinct values distinct.
    fn upsert_key(&self, node: &PhysicalNode) -> Option<Vec<usize>> {
        node.inputs[0].upsert_key()?.into_iter().map(|k| self.key_output_of(k)).collect()
    }

    fn runs(&self) -> Runs {
        Runs::ChainedToInput
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State::NONE
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let mut lineage = inputs.first().cloned().unwrap_or_default();
        if let Some(c) = &self.0.condition {
            let condition = lineage.expr(c);
            lineage.filters.push(condition);
        }
        let texts = self.0.projections.iter().map(|p| lineage.expr(p)).collect();
        lineage.columns = columns_of(node, texts, "Calc");
        Traced::Output(lineage)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, "Calc", self.0.factory())
    }

    /// Its input's, when the columns pass through unchanged.
    fn hashed_on(&self, node: &PhysicalNode, keys: &[usize]) -> bool {
        let below: Option<Vec<usize>> = keys
            .iter()
            .map(|&k| match self.0.projections.get(k) {
                Some(Expr::Column { index, .. }) => Some(*index),
                _ => None,
            })
            .collect();
        below.is_some_and(|below| node.inputs[0].hashed_on(&below))
    }
}
