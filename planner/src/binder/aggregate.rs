//! Aggregate calls: recognition, argument binding and Flink's result types.

use crate::catalog::UserFunctions;
use sqlparser::ast;
use weir_operators::aggregate::{registry, AggregateCall, AggregateKind};
use weir_operators::expr::types::is_numeric;
use weir_operators::expr::{Expr, Function};
use weir_runtime::time_zone::TimeZone;

use super::expr::{AggregateContext, ExprBinder};
use super::scope::position_of;
use crate::error::{Error, Position, Result};

/// Whether `name` (any case) is an aggregate function: a built-in one or one of `functions`.
pub fn is_aggregate(name: &str, functions: &UserFunctions) -> bool {
    registry::is_aggregate(name) || functions.aggregate(name).is_some()
}

/// Whether the expression contains an aggregate call (outside subqueries).
pub fn contains_aggregate(expr: &ast::Expr, functions: &UserFunctions) -> bool {
    let mut found = false;
    let _ = ast::visit_expressions(expr, |e| {
        if let ast::Expr::Function(f) = e {
            if f.over.is_none() && is_aggregate(&f.name.to_string(), functions) {
                found = true;
                return std::ops::ControlFlow::Break(());
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    found
}

/// Builds the aggregate call `f`, adding its argument and filter to the aggregate's input.
pub fn aggregate_call(
    f: &ast::Function,
    agg: &mut AggregateContext,
    functions: &UserFunctions,
    zone: TimeZone,
) -> Result<AggregateCall> {
    let name = f.name.to_string().to_ascii_uppercase();
    let node = ast::Expr::Function(f.clone());
    let at = position_of(&node);
    if !f.within_group.is_empty() {
        // Flink's validator refuses WITHIN GROUP on every aggregate it has.
        return Err(Error::validation(
            at,
            format!("Aggregate expression '{name}' must not contain a WITHIN GROUP clause"),
        ));
    }
    let mut clauses = registry::CallClauses::default();
    if let Some(treatment) = &f.null_treatment {
        clauses.ignore_nulls = Some(matches!(treatment, ast::NullTreatment::IgnoreNulls));
    }
    let (args, distinct, star) = match &f.args {
        ast::FunctionArguments::List(list) => {
            for clause in &list.clauses {
                match clause {
                    ast::FunctionArgumentClause::IgnoreOrRespectNulls(treatment) => {
                        clauses.ignore_nulls = Some(matches!(treatment, ast::NullTreatment::IgnoreNulls));
                    }
                    ast::FunctionArgumentClause::JsonNullClause(null_clause) => {
                        clauses.null_on_null = Some(matches!(null_clause, ast::JsonNullClause::NullOnNull));
                    }
                    other => return Err(Error::Unsupported(format!("The clause '{other}' of '{name}'"))),
                }
            }
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
    let mut bind = |e: &ast::Expr| ExprBinder { scope: &scope, aggregates: None, functions, zone }.bind(e);
    let mut bound: Vec<Expr> = args.iter().map(&mut bind).collect::<Result<_>>()?;
    // A nullable condition is tested `IS TRUE`, as Calcite writes it into the aggregate's input.
    let filter = match &f.filter {
        Some(condition) => {
            let condition = bind(condition)?;
            Some(match condition.ty().nullable {
                true => Expr::Call {
                    function: Function::named("IS TRUE"),
                    args: vec![condition],
                    ty: weir_runtime::DataType::boolean().not_null(),
                },
                false => condition,
            })
        }
        None => None,
    };
    if let Some(function) = functions.aggregate(&name) {
        return user_aggregate_call(function, &name, bound, distinct, filter, agg, at);
    }
    let kind = match registry::bind(&name, &mut bound, clauses) {
        Ok(Some(kind)) => kind,
        Ok(None) | Err(registry::BindError::Arity) => {
            return Err(Error::validation(at, format!("Invalid number of arguments to function '{name}'")))
        }
        Err(registry::BindError::Separator) => {
            return Err(Error::validation(at, "The separator of LISTAGG must be a string literal"))
        }
        Err(registry::BindError::Clause(clause)) => {
            return Err(Error::validation(at, format!("{clause} is not allowed in a call of '{name}'")))
        }
        Err(registry::BindError::Key(call, key, value)) => {
            let [key, value] = [key, value].map(|t| weir_operators::expr::types::calcite_name(&t.logical));
            return Err(Error::validation(
                at,
                format!(
                    "Cannot apply '{call}' to arguments of type '{call}(<{key}>, <{value}>)'. Supported form(s): \
                     '{call}(<CHARACTER>, <ANY>)'"
                ),
            ));
        }
    };
    let function = kind.function();
    let numeric_only = function.numeric_only;
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
    let result_type = (function.result_type)(arg_type.as_ref());
    let arg = bound.into_iter().next().map(|a| agg.input_column(a));
    let mut call = AggregateCall::new(kind, arg, result_type);
    call.distinct = distinct;
    call.filter = filter.map(|f| agg.input_column(f));
    Ok(call)
}

/// A call of the aggregate `function` written in Rust over the bound arguments `args`: typed by
/// the function, its arguments (any count but one) packed into one ROW.
fn user_aggregate_call(
    function: &std::sync::Arc<dyn weir_operators::aggregate::AggregateUdf>,
    name: &str,
    mut args: Vec<Expr>,
    distinct: bool,
    filter: Option<Expr>,
    agg: &mut AggregateContext,
    at: Position,
) -> Result<AggregateCall> {
    if !function.arity().admits(args.len()) {
        return Err(Error::validation(at, format!("Invalid number of arguments to function '{name}'")));
    }
    let types: Vec<&weir_runtime::DataType> = args.iter().map(Expr::ty).collect();
    let result_type = function.return_type(&types).map_err(|e| Error::validation(at, e.0))?;
    let packed = args.len() != 1;
    let arg = match args.len() {
        0 => None,
        1 => args.pop(),
        _ => Some(weir_operators::expr::functions::collection::row_of(args)),
    };
    let user = weir_operators::aggregate::UserAggregate { function: std::sync::Arc::clone(function), packed };
    let mut call = AggregateCall::new(AggregateKind::User(user), arg.map(|a| agg.input_column(a)), result_type);
    call.distinct = distinct;
    call.filter = filter.map(|f| agg.input_column(f));
    Ok(call)
}
