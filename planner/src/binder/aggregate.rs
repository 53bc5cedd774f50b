//! Aggregate calls: recognition, argument binding and Flink's result types.

use sqlparser::ast;
use weir_operators::aggregate::{AggregateCall, AggregateKind};
use weir_operators::expr::types::{is_numeric, MAX_PRECISION};
use weir_operators::expr::Expr;
use weir_runtime::{DataType, LogicalType, Value};

use super::expr::{AggregateContext, ExprBinder};
use super::scope::position_of;
use crate::error::{Error, Position, Result};

const AGGREGATES: [&str; 13] = [
    "COUNT",
    "SUM",
    "SUM0",
    "MIN",
    "MAX",
    "AVG",
    "LISTAGG",
    "FIRST_VALUE",
    "LAST_VALUE",
    "STDDEV_POP",
    "STDDEV_SAMP",
    "VAR_POP",
    "VAR_SAMP",
];

/// Whether `name` (any case) is an aggregate function.
pub fn is_aggregate(name: &str) -> bool {
    AGGREGATES.contains(&name.to_ascii_uppercase().as_str())
}

/// Whether the expression contains an aggregate call (outside subqueries).
pub fn contains_aggregate(expr: &ast::Expr) -> bool {
    let mut found = false;
    let _ = ast::visit_expressions(expr, |e| {
        if let ast::Expr::Function(f) = e {
            if f.over.is_none() && is_aggregate(&f.name.to_string()) {
                found = true;
                return std::ops::ControlFlow::Break(());
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    found
}

/// Flink's result type of an aggregate over an argument of type `arg`.
fn result_type(kind: &AggregateKind, arg: Option<&DataType>) -> DataType {
    let arg = arg.cloned().unwrap_or_else(DataType::bigint);
    let nullable = |mut t: DataType| {
        t.nullable = true;
        t
    };
    match kind {
        AggregateKind::CountStar | AggregateKind::Count => DataType::bigint().not_null(),
        AggregateKind::Sum | AggregateKind::Sum0 => match arg.logical {
            LogicalType::Decimal { scale, .. } => nullable(DataType::decimal(MAX_PRECISION, scale)),
            _ => nullable(arg),
        },
        AggregateKind::Avg => match arg.logical {
            LogicalType::Decimal { scale, .. } => nullable(DataType::decimal(MAX_PRECISION, scale.max(6))),
            _ => nullable(arg),
        },
        AggregateKind::ListAgg { .. } => DataType::string(),
        AggregateKind::StddevPop | AggregateKind::StddevSamp | AggregateKind::VarPop | AggregateKind::VarSamp => {
            DataType::double()
        }
        _ => nullable(arg),
    }
}

/// Builds the aggregate call `f`, adding its argument and filter to the aggregate's input.
pub fn aggregate_call(f: &ast::Function, agg: &mut AggregateContext) -> Result<AggregateCall> {
    let name = f.name.to_string().to_ascii_uppercase();
    let node = ast::Expr::Function(f.clone());
    let at = position_of(&node);
    let (args, distinct, star) = match &f.args {
        ast::FunctionArguments::List(list) => {
            let distinct = matches!(list.duplicate_treatment, Some(ast::DuplicateTreatment::Distinct));
            let mut args = Vec::new();
            let mut star = false;
            for a in &list.args {
                match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => args.push(e.clone()),
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => star = true,
                    other => return Err(Error::Unsupported(format!("The argument '{other}'"))),
                }
            }
            (args, distinct, star)
        }
        ast::FunctionArguments::None => (Vec::new(), false, false),
        ast::FunctionArguments::Subquery(_) => return Err(Error::Unsupported(format!("The call '{f}'"))),
    };
    if distinct && star {
        // Flink's parser refuses `COUNT(DISTINCT *)`; the `*` follows `NAME(DISTINCT `.
        let star_at = Position { line: at.line, column: at.column + (name.len() + "(DISTINCT ".len()) as u64 };
        return Err(Error::Parse {
            position: star_at,
            message: format!("Encountered \"*\" at line {}, column {}.", star_at.line, star_at.column),
        });
    }
    let scope = agg.input_scope.clone();
    let mut bind = |e: &ast::Expr| ExprBinder { scope: &scope, aggregates: None }.bind(e);
    let mut bound: Vec<Expr> = args.iter().map(&mut bind).collect::<Result<_>>()?;
    let filter = match &f.filter {
        Some(condition) => Some(bind(condition)?),
        None => None,
    };
    let kind = match (name.as_str(), bound.len(), star) {
        ("COUNT", 0, _) => AggregateKind::CountStar,
        ("COUNT", _, _) => AggregateKind::Count,
        ("SUM", 1, _) => AggregateKind::Sum,
        ("SUM0", 1, _) => AggregateKind::Sum0,
        ("MIN", 1, _) => AggregateKind::Min,
        ("MAX", 1, _) => AggregateKind::Max,
        ("AVG", 1, _) => AggregateKind::Avg,
        ("FIRST_VALUE", 1, _) => AggregateKind::FirstValue,
        ("LAST_VALUE", 1, _) => AggregateKind::LastValue,
        ("STDDEV_POP", 1, _) => AggregateKind::StddevPop,
        ("STDDEV_SAMP", 1, _) => AggregateKind::StddevSamp,
        ("VAR_POP", 1, _) => AggregateKind::VarPop,
        ("VAR_SAMP", 1, _) => AggregateKind::VarSamp,
        ("LISTAGG", 1 | 2, _) => {
            let delimiter = match bound.get(1) {
                None => ",".to_string(),
                Some(Expr::Literal { value: Value::String(s), .. }) => s.to_string(),
                Some(_) => return Err(Error::validation(at, "The separator of LISTAGG must be a string literal")),
            };
            bound.truncate(1);
            AggregateKind::ListAgg { delimiter }
        }
        _ => return Err(Error::validation(at, format!("Invalid number of arguments to function '{name}'"))),
    };
    let numeric_only = matches!(
        kind,
        AggregateKind::Sum
            | AggregateKind::Sum0
            | AggregateKind::Avg
            | AggregateKind::StddevPop
            | AggregateKind::StddevSamp
            | AggregateKind::VarPop
            | AggregateKind::VarSamp
    );
    if numeric_only && !bound.first().is_some_and(|a| is_numeric(a.ty())) {
        let ty = bound.first().map(|a| weir_operators::expr::types::calcite_name(&a.ty().logical)).unwrap_or_default();
        return Err(Error::validation(
            at,
            format!(
                "Cannot apply '{name}' to arguments of type '{name}(<{ty}>)'. Supported form(s): '{name}(<NUMERIC>)'"
            ),
        ));
    }
    let arg_type = bound.first().map(|a| a.ty().clone());
    let result_type = result_type(&kind, arg_type.as_ref());
    let arg = bound.into_iter().next().map(|a| agg.input_column(a));
    let mut call = AggregateCall::new(kind, arg, result_type);
    call.distinct = distinct;
    call.filter = filter.map(|f| agg.input_column(f));
    Ok(call)
}
