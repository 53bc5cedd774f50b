//! Ranking functions in a SELECT list: `ROW_NUMBER() | RANK() | DENSE_RANK() OVER (PARTITION BY …
//! ORDER BY …)`. The SELECT's rows are ranked by a [`Node::Rank`] whose rank column (`w0$o0`, as
//! Flink names it) the item then reads; a filter on the rank above makes it a Top-N
//! ([`crate::rules::rank`]). Aggregates over windows are [`super::over_aggregate`]'s.

use crate::catalog::UserFunctions;
use std::ops::ControlFlow;
use weir_runtime::time_zone::TimeZone;

use sqlparser::ast::{self, Visit, Visitor};
use weir_operators::expr::Expr;
use weir_operators::ranking::{RankType, SortKey};
use weir_runtime::{DataType, Field};

use super::expr::ExprBinder;
use super::scope::{Scope, ScopeColumn};
use super::{position_of, unsupported_at};
use crate::error::{Error, Result};
use crate::plan::{Node, Plan};

/// The name of the rank column.
pub(crate) const RANK_COLUMN: &str = "w0$o0";

/// The plan ranked by the one ranking function among `items`, when there is one, and the items
/// with the call replaced by its rank column (named as Flink names an unnamed item, `EXPR$i`).
///
/// # Errors
/// More than one OVER window, an OVER window inside an expression, OVER aggregates and window
/// clauses weir does not plan, partition or order keys that are not columns.
pub(super) fn bind_ranking(
    plan: Plan,
    scope: &Scope,
    items: &mut [(ast::Expr, Option<String>)],
    named: &[ast::NamedWindowDefinition],
    functions: &UserFunctions,
    zone: TimeZone,
) -> Result<(Plan, Scope)> {
    if items.iter().any(|(item, _)| contains_over_aggregate(item)) {
        return super::over_aggregate::bind_over_aggregates(plan, scope, items, named, functions, zone);
    }
    let mut found = None;
    for (i, (item, _)) in items.iter().enumerate() {
        match item {
            ast::Expr::Function(f) if f.over.is_some() => {
                if found.is_some() {
                    return Err(unsupported_at(item, "More than one OVER window in a SELECT"));
                }
                found = Some(i);
            }
            other if contains_over(other) => {
                return Err(unsupported_at(other, "An OVER window inside an expression"));
            }
            _ => {}
        }
    }
    let Some(at) = found else { return Ok((plan, scope.clone())) };
    let ast::Expr::Function(function) = &items[at].0 else { unreachable!("found a function") };
    let rank = bind_rank(plan, scope, function, &items[at].0)?;
    let mut scope = scope.clone();
    scope.columns.push(ScopeColumn { qualifier: None, name: RANK_COLUMN.into(), data_type: rank_column_type() });
    let alias = items[at].1.take().unwrap_or_else(|| format!("EXPR${at}"));
    items[at] = (ast::Expr::Identifier(ast::Ident::new(RANK_COLUMN)), Some(alias));
    Ok((rank, scope))
}

/// The type of a rank: BIGINT NOT NULL.
fn rank_column_type() -> DataType {
    DataType::bigint().not_null()
}

/// Whether `expr` holds an OVER window of a function other than a ranking function.
fn contains_over_aggregate(expr: &ast::Expr) -> bool {
    let found = ast::visit_expressions(expr, |e| match e {
        ast::Expr::Function(f) if f.over.is_some() && !is_ranking(&f.name.to_string()) => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    });
    found.is_break()
}

/// Whether `name` is ROW_NUMBER, RANK or DENSE_RANK.
fn is_ranking(name: &str) -> bool {
    ["ROW_NUMBER", "RANK", "DENSE_RANK"].iter().any(|r| r.eq_ignore_ascii_case(name))
}

/// Whether `expr` holds an OVER window anywhere.
fn contains_over(expr: &ast::Expr) -> bool {
    struct Finder;
    impl Visitor for Finder {
        type Break = ();
        fn pre_visit_expr(&mut self, expr: &ast::Expr) -> ControlFlow<()> {
            match expr {
                ast::Expr::Function(f) if f.over.is_some() => ControlFlow::Break(()),
                _ => ControlFlow::Continue(()),
            }
        }
    }
    expr.visit(&mut Finder).is_break()
}

/// The column an expression of the OVER clause names.
fn column(scope: &Scope, expr: &ast::Expr, clause: &str) -> Result<usize> {
    match (ExprBinder { scope, aggregates: None, functions: UserFunctions::none(), zone: TimeZone::Utc }).bind(expr)? {
        Expr::Column { index, .. } => Ok(index),
        _ => Err(unsupported_at(expr, format!("{clause} expressions other than columns"))),
    }
}

/// `ROW_NUMBER() | RANK() | DENSE_RANK() OVER (…)` over `input`.
fn bind_rank(input: Plan, scope: &Scope, function: &ast::Function, node: &ast::Expr) -> Result<Plan> {
    let name = function.name.to_string().to_ascii_uppercase();
    let rank_type = match name.as_str() {
        "ROW_NUMBER" => RankType::RowNumber,
        "RANK" => RankType::Rank,
        "DENSE_RANK" => RankType::DenseRank,
        _ => return Err(unsupported_at(node, "OVER aggregates")),
    };
    let no_args = match &function.args {
        ast::FunctionArguments::None => true,
        ast::FunctionArguments::List(list) => list.args.is_empty(),
        ast::FunctionArguments::Subquery(_) => false,
    };
    if !no_args {
        return Err(Error::validation(
            position_of(node),
            format!("Invalid number of arguments to function '{name}'. Was expecting 0 arguments"),
        ));
    }
    let spec = match &function.over {
        Some(ast::WindowType::WindowSpec(spec)) if spec.window_name.is_none() => spec,
        _ => return Err(unsupported_at(node, "Named windows (OVER w, the WINDOW clause)")),
    };
    if spec.window_frame.is_some() {
        return Err(unsupported_at(node, "A window frame on a ranking function"));
    }
    if spec.order_by.is_empty() {
        if rank_type == RankType::RowNumber {
            return Err(unsupported_at(node, "ROW_NUMBER() without ORDER BY"));
        }
        // Calcite's words.
        return Err(Error::validation(
            position_of(node),
            "RANK or DENSE_RANK functions require ORDER BY clause in window specification",
        ));
    }
    let partition = spec.partition_by.iter().map(|e| column(scope, e, "PARTITION BY")).collect::<Result<_>>()?;
    let order = spec
        .order_by
        .iter()
        .map(|o| {
            let mut key = SortKey::new(column(scope, &o.expr, "ORDER BY")?, o.options.asc == Some(false));
            if let Some(first) = o.options.nulls_first {
                key.nulls_last = !first;
            }
            Ok(key)
        })
        .collect::<Result<_>>()?;
    let mut fields = input.fields.clone();
    fields.push(Field::new(RANK_COLUMN, rank_column_type()));
    let node = Node::Rank { input: Box::new(input), partition, order, rank_type, range: None, output_rank: true };
    Ok(Plan { node, fields })
}
