//! OVER aggregates in a SELECT list: `agg(x) OVER (PARTITION BY … ORDER BY time ROWS|RANGE
//! BETWEEN … PRECEDING AND CURRENT ROW)`, inline or through the `WINDOW w AS (…)` clause. The
//! SELECT's rows go through one [`Node::OverAggregate`] whose columns (`w0$o0`, `w0$o1`, …, as
//! Flink names them) the items then read. As Calcite does, `SUM(x) OVER w` is
//! `CASE WHEN COUNT(x) OVER w > 0 THEN $SUM0(x) OVER w ELSE NULL END`.
//!
//! Flink's rules: every aggregate of a SELECT over the same window; ordered ascending; frames end
//! at the current row; a RANGE frame's offset is a day-time interval and a ROWS frame's a row
//! count. weir orders by one time attribute only (Flink 2 also by other columns, updating).

use crate::catalog::UserFunctions;
use std::ops::ControlFlow;
use weir_runtime::time_zone::TimeZone;

use sqlparser::ast::{self, VisitMut, VisitorMut};
use weir_operators::aggregate::AggregateCall;
use weir_operators::expr::Expr;
use weir_operators::OverFrame;
use weir_runtime::Field;

use super::aggregate::aggregate_call;
use super::expr::{AggregateContext, ExprBinder};
use super::scope::{Scope, ScopeColumn};
use super::{position_of, unsupported_at};
use crate::error::{Error, Result};
use crate::plan::{Node, Plan};

/// The window of a SELECT's OVER aggregates, resolved.
struct Window {
    partition: Vec<usize>,
    time_col: usize,
    frame: OverFrame,
}

/// The plan with the OVER aggregates of `items` computed, its scope (with the aggregates'
/// columns), and the items reading those columns instead of the calls.
///
/// # Errors
/// Aggregates over different windows, ordering on anything but one ascending time attribute,
/// frames Flink refuses, unknown named windows.
pub(super) fn bind_over_aggregates(
    plan: Plan,
    scope: &Scope,
    items: &mut [(ast::Expr, Option<String>)],
    named: &[ast::NamedWindowDefinition],
    functions: &UserFunctions,
    zone: TimeZone,
) -> Result<(Plan, Scope)> {
    // Every OVER call, with its window's specification.
    let mut calls: Vec<(ast::Function, ast::WindowSpec)> = Vec::new();
    for (item, _) in items.iter() {
        let _ = ast::visit_expressions(item, |e| {
            if let ast::Expr::Function(f) = e {
                if let Some(over) = &f.over {
                    calls.push((f.clone(), resolve(over, named)));
                }
            }
            ControlFlow::<()>::Continue(())
        });
    }
    let Some((first, spec)) = calls.first().map(|(f, s)| (f.clone(), s.clone())) else {
        return Ok((plan, scope.clone()));
    };
    let at = ast::Expr::Function(first);
    if calls.iter().any(|(_, s)| *s != spec) {
        // Flink's words (after the logical plan it could not optimize).
        return Err(Error::Table(
            "Sql optimization: Cannot generate a valid execution plan for the given query: Over Agg: Unsupported use \
             of OVER windows. All aggregates must be computed on the same window. please re-check the over window \
             statement."
                .into(),
        ));
    }
    let window = bind_window(&plan, scope, &spec, &at)?;
    // The calls' arguments, over the input's columns (computed ones appended).
    let mut context = AggregateContext { input_scope: scope.clone(), ..Default::default() };
    let mut bound: Vec<(ast::Expr, Vec<AggregateCall>)> = Vec::new();
    for (function, _) in &calls {
        let mut plain = function.clone();
        plain.over = None;
        let node = ast::Expr::Function(function.clone());
        if bound.iter().any(|(n, _)| *n == node) {
            continue;
        }
        let call = aggregate_call(&plain, &mut context, functions, zone)?;
        if call.distinct {
            return Err(unsupported_at(&node, "DISTINCT in an OVER aggregate"));
        }
        let expanded = weir_operators::aggregate::registry::over_window_calls(call);
        bound.push((node, expanded));
    }
    let arity = plan.fields.len();
    let (input, columns) = with_arguments(plan, &context.input_exprs);
    let mut over_calls: Vec<AggregateCall> = Vec::new();
    let mut replacements: Vec<(ast::Expr, ast::Expr)> = Vec::new();
    for (node, expanded) in bound {
        let mut names = Vec::new();
        for call in expanded {
            let call =
                AggregateCall { arg: call.arg.map(|a| columns[a]), filter: call.filter.map(|f| columns[f]), ..call };
            let index = over_calls.iter().position(|c| *c == call).unwrap_or_else(|| {
                over_calls.push(call);
                over_calls.len() - 1
            });
            names.push(format!("w0$o{index}"));
        }
        replacements.push((node, replacement(&names)));
    }
    let mut fields = input.fields.clone();
    let mut scope = scope.clone();
    for (i, field) in input.fields.iter().enumerate().skip(arity) {
        // Computed arguments are no columns a query can name.
        scope.columns.push(ScopeColumn { qualifier: None, name: format!("$f{i}"), data_type: field.data_type.clone() });
    }
    for (i, call) in over_calls.iter().enumerate() {
        let name = format!("w0$o{i}");
        fields.push(Field::new(name.clone(), call.result_type.clone()));
        scope.columns.push(ScopeColumn { qualifier: None, name, data_type: call.result_type.clone() });
    }
    for (index, (item, alias)) in items.iter_mut().enumerate() {
        let top_level = matches!(item, ast::Expr::Function(f) if f.over.is_some());
        if alias.is_none() && top_level {
            *alias = Some(format!("EXPR${index}"));
        }
        let _ = item.visit(&mut Replace(&replacements));
    }
    let Window { partition, time_col, frame } = window;
    let node = Node::OverAggregate { input: Box::new(input), partition, time_col, frame, calls: over_calls };
    Ok((Plan { node, fields }, scope))
}

/// The specification of an OVER clause: its own, or the named window's.
fn resolve(over: &ast::WindowType, named: &[ast::NamedWindowDefinition]) -> ast::WindowSpec {
    let by_name = |name: &ast::Ident| {
        named.iter().find(|d| d.0.value.eq_ignore_ascii_case(&name.value)).and_then(|d| match &d.1 {
            ast::NamedWindowExpr::WindowSpec(spec) => Some(spec.clone()),
            ast::NamedWindowExpr::NamedWindow(_) => None,
        })
    };
    match over {
        ast::WindowType::WindowSpec(spec) => match &spec.window_name {
            Some(name) => by_name(name).unwrap_or_else(|| spec.clone()),
            None => spec.clone(),
        },
        ast::WindowType::NamedWindow(name) => by_name(name).unwrap_or_else(|| ast::WindowSpec {
            window_name: Some(name.clone()),
            partition_by: Vec::new(),
            order_by: Vec::new(),
            window_frame: None,
        }),
    }
}

/// The partition, time attribute and frame of a window specification.
fn bind_window(plan: &Plan, scope: &Scope, spec: &ast::WindowSpec, at: &ast::Expr) -> Result<Window> {
    if let Some(name) = &spec.window_name {
        return Err(Error::validation(position_of(at), format!("Window '{name}' not found")));
    }
    let column = |e: &ast::Expr, clause: &str| match (ExprBinder {
        scope,
        aggregates: None,
        functions: UserFunctions::none(),
        zone: TimeZone::Utc,
    })
    .bind(e)?
    {
        Expr::Column { index, .. } => Ok(index),
        _ => Err(unsupported_at(e, format!("{clause} expressions other than columns"))),
    };
    let partition = spec.partition_by.iter().map(|e| column(e, "PARTITION BY")).collect::<Result<_>>()?;
    // Flink 2 also orders OVER windows by other columns (an updating result); weir not yet.
    let not_on_time = || unsupported_at(at, "OVER windows ordered by other than one time attribute");
    let [order] = spec.order_by.as_slice() else { return Err(not_on_time()) };
    let time_col = column(&order.expr, "ORDER BY")?;
    if plan.fields[time_col].data_type.time_attribute.is_none() {
        return Err(not_on_time());
    }
    if order.options.asc == Some(false) {
        return Err(Error::Table("The window can only be ordered in ASCENDING mode.".into()));
    }
    let frame = match &spec.window_frame {
        // With ORDER BY and no frame: RANGE UNBOUNDED PRECEDING, as in SQL.
        None => OverFrame::Range(None),
        Some(frame) => bind_frame(frame, at)?,
    };
    Ok(Window { partition, time_col, frame })
}

/// `ROWS|RANGE [BETWEEN] bound PRECEDING [AND CURRENT ROW]`.
fn bind_frame(frame: &ast::WindowFrame, at: &ast::Expr) -> Result<OverFrame> {
    if !matches!(frame.end_bound, None | Some(ast::WindowFrameBound::CurrentRow)) {
        return Err(Error::Table("OVER RANGE FOLLOWING windows are not supported yet.".into()));
    }
    let offset = match &frame.start_bound {
        ast::WindowFrameBound::Preceding(offset) => offset.as_deref(),
        ast::WindowFrameBound::CurrentRow => {
            return Err(unsupported_at(at, "A window frame starting at the current row"))
        }
        ast::WindowFrameBound::Following(_) => {
            return Err(Error::Table("OVER RANGE FOLLOWING windows are not supported yet.".into()))
        }
    };
    match frame.units {
        ast::WindowFrameUnits::Rows => {
            let rows = offset
                .map(|e| match e {
                    ast::Expr::Value(v) => match &v.value {
                        ast::Value::Number(n, _) => n.parse::<u64>().ok(),
                        _ => None,
                    },
                    _ => None,
                })
                .map(|n| n.ok_or_else(|| Error::validation(position_of(at), "A ROWS frame's offset is a row count")))
                .transpose()?;
            Ok(OverFrame::Rows(rows))
        }
        ast::WindowFrameUnits::Range => {
            let millis = offset.map(|e| super::window::interval_millis(e, false)).transpose()?;
            Ok(OverFrame::Range(millis))
        }
        ast::WindowFrameUnits::Groups => Err(unsupported_at(at, "GROUPS frames")),
    }
}

/// `plan` with the non-column expressions among `args` appended (a Calc), and where each of
/// `args` is in it.
fn with_arguments(plan: Plan, args: &[Expr]) -> (Plan, Vec<usize>) {
    let arity = plan.fields.len();
    let mut projections: Vec<Expr> =
        plan.fields.iter().enumerate().map(|(i, f)| Expr::column(i, f.data_type.clone())).collect();
    let mut names: Vec<String> = plan.fields.iter().map(|f| f.name.clone()).collect();
    let columns = args
        .iter()
        .map(|arg| match arg {
            Expr::Column { index, .. } => *index,
            computed => {
                projections.push(computed.clone());
                names.push(format!("$f{}", projections.len() - 1));
                projections.len() - 1
            }
        })
        .collect();
    if projections.len() == arity {
        return (plan, columns);
    }
    (super::fuse_calc(plan, projections, names), columns)
}

/// What an OVER call reads once computed: its column, or for SUM the CASE over its count and sum.
fn replacement(names: &[String]) -> ast::Expr {
    let column = |name: &str| ast::Expr::Identifier(ast::Ident::new(name));
    match names {
        [count, sum] => ast::Expr::Case {
            case_token: ast::helpers::attached_token::AttachedToken::empty(),
            end_token: ast::helpers::attached_token::AttachedToken::empty(),
            operand: None,
            conditions: vec![ast::CaseWhen {
                condition: ast::Expr::BinaryOp {
                    left: Box::new(column(count)),
                    op: ast::BinaryOperator::Gt,
                    right: Box::new(ast::Expr::Cast {
                        kind: ast::CastKind::Cast,
                        expr: Box::new(ast::Expr::value(ast::Value::Number("0".into(), false))),
                        data_type: ast::DataType::BigInt(None),
                        format: None,
                    }),
                },
                result: column(sum),
            }],
            else_result: Some(Box::new(ast::Expr::value(ast::Value::Null))),
        },
        [one] => column(one),
        _ => unreachable!("a call is one or two columns"),
    }
}

/// Replaces each OVER call by what reads its columns.
struct Replace<'a>(&'a [(ast::Expr, ast::Expr)]);

impl VisitorMut for Replace<'_> {
    type Break = ();

    fn post_visit_expr(&mut self, expr: &mut ast::Expr) -> ControlFlow<()> {
        if let Some((_, with)) = self.0.iter().find(|(call, _)| call == expr) {
            *expr = with.clone();
        }
        ControlFlow::Continue(())
    }
}
