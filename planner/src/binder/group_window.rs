//! Group windows in the older syntax: `GROUP BY TUMBLE(ts, size)`, `HOP(ts, slide, size)` or
//! `SESSION(ts, gap)` with `TUMBLE_START(…)`, `TUMBLE_END(…)`, `TUMBLE_ROWTIME(…)` (and the HOP
//! and SESSION equivalents) in the SELECT list. weir binds them as the window table function
//! they mean: the FROM rows go through the function, whose window columns are named as Flink
//! names a group window's properties (`w$start`, `w$end`, `w$rowtime`), the GROUP BY's window
//! becomes `w$start, w$end`, and `…_START`, `…_END`, `…_ROWTIME` become those columns, so the
//! same window aggregate computes them (planned in one phase, as Flink's
//! `GroupWindowAggregate`).

use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments};
use weir_operators::{WindowKind, WindowSpec};
use weir_runtime::types::{LogicalType, TimeAttribute};
use weir_runtime::DataType;

use super::scope::{position_of, Scope, ScopeColumn};
use super::window::{interval_millis, time_attribute_column, window_time_type};
use crate::error::{Error, Result};
use crate::plan::{Node, Plan};

/// The window columns of a group window, named as Flink names its properties.
const START: &str = "w$start";
const END: &str = "w$end";
const ROWTIME: &str = "w$rowtime";
const PROCTIME: &str = "w$proctime";

/// A group window found in a GROUP BY.
pub(super) struct GroupWindow {
    /// TUMBLE, HOP or SESSION.
    name: String,
    /// Its place among the GROUP BY expressions.
    at: usize,
    /// Its arguments: the time column, then the intervals.
    args: Vec<ast::Expr>,
    call: ast::Function,
    /// The GROUP BY's other expressions: a SESSION window's sessions are per their values.
    keys: Vec<ast::Expr>,
}

fn call_parts(expr: &ast::Expr) -> Option<(String, &ast::Function, Vec<ast::Expr>)> {
    let ast::Expr::Function(f) = expr else { return None };
    let name = f.name.0.last()?.as_ident()?.value.to_uppercase();
    let FunctionArguments::List(list) = &f.args else { return None };
    let args = list
        .args
        .iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e.clone()),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some((name, f, args))
}

/// The group window of `group_by`, if it has one.
pub(super) fn find(group_by: &[ast::Expr]) -> Option<GroupWindow> {
    group_by.iter().enumerate().find_map(|(at, e)| {
        let (name, call, args) = call_parts(e)?;
        let arity = match name.as_str() {
            "TUMBLE" | "SESSION" => 2,
            "HOP" => 3,
            _ => return None,
        };
        let keys = group_by.iter().enumerate().filter(|(i, _)| *i != at).map(|(_, k)| k.clone()).collect();
        (args.len() == arity).then(|| GroupWindow { name, at, args, call: call.clone(), keys })
    })
}

impl GroupWindow {
    /// The FROM rows `plan` (with `scope`) through the window function, and their new scope.
    pub(super) fn apply(&self, plan: Plan, scope: Scope) -> Result<(Plan, Scope)> {
        let time_col = match &self.args[0] {
            ast::Expr::Identifier(column) => time_attribute_column(&scope, std::slice::from_ref(column), &self.call)?,
            ast::Expr::CompoundIdentifier(parts) => time_attribute_column(&scope, parts, &self.call)?,
            other => {
                return Err(Error::validation(position_of(other), "A group window's first argument is a time column"))
            }
        };
        let interval = |i: usize| interval_millis(&self.args[i], true);
        let kind = match self.name.as_str() {
            "TUMBLE" => WindowKind::Tumble { size: interval(1)? },
            "HOP" => WindowKind::Hop { slide: interval(1)?, size: interval(2)? },
            _ => WindowKind::Session { gap: interval(1)? },
        };
        // Sessions are per group (Flink's group window aggregate merges them per key).
        let partition = match kind {
            WindowKind::Session { .. } => self.session_keys(&scope)?,
            WindowKind::Tumble { .. } | WindowKind::Hop { .. } | WindowKind::Cumulate { .. } => Vec::new(),
        };
        let window = WindowSpec::new(kind, 0);
        let mut fields = plan.fields.clone();
        let mut columns = scope.columns;
        let timestamp = DataType::new(LogicalType::Timestamp(3)).not_null();
        let window_time = window_time_type(&columns[time_col].data_type);
        let time_name = match window_time.time_attribute {
            Some(TimeAttribute::Proctime) => PROCTIME,
            _ => ROWTIME,
        };
        for (name, ty) in [(START, timestamp.clone()), (END, timestamp), (time_name, window_time)] {
            fields.push(weir_runtime::Field::new(name, ty.clone()));
            columns.push(ScopeColumn { qualifier: None, name: name.to_string(), data_type: ty });
        }
        let input = Box::new(plan);
        let node = Node::WindowTableFunction { input, time_col, window, partition, group_window: true };
        Ok((Plan { node, fields }, Scope { columns }))
    }

    /// The columns of the GROUP BY's other keys, which a SESSION group window's sessions are
    /// per; a key that is not a column is refused.
    fn session_keys(&self, scope: &Scope) -> Result<Vec<usize>> {
        self.keys
            .iter()
            .map(|key| match key {
                ast::Expr::Identifier(column) => Ok(scope.resolve(std::slice::from_ref(column))?.0),
                ast::Expr::CompoundIdentifier(parts) => Ok(scope.resolve(parts)?.0),
                other => Err(Error::UnsupportedAt {
                    position: position_of(other),
                    feature: format!("a SESSION group window grouped by the expression '{other}' (group by a column)"),
                }),
            })
            .collect()
    }

    /// `select` with the window in its GROUP BY replaced by `window_start, window_end` and the
    /// window's `_START`, `_END`, `_ROWTIME` and `_PROCTIME` functions by those columns (the
    /// window's time, when read, is grouped on too: it follows from the window's end).
    pub(super) fn rewrite(&self, select: &ast::Select) -> Result<ast::Select> {
        let mut select = select.clone();
        let mut time = None;
        let mut refused = None;
        let mut replace = |e: &mut ast::Expr| {
            let Some((name, call, args)) = call_parts(e) else { return std::ops::ControlFlow::<()>::Continue(()) };
            let column = match name.strip_prefix(&self.name).and_then(|s| s.strip_prefix('_')) {
                Some("START") => START,
                Some("END") => END,
                Some("ROWTIME") => *time.insert(ROWTIME),
                Some("PROCTIME") => *time.insert(PROCTIME),
                _ => return std::ops::ControlFlow::Continue(()),
            };
            let same = args.len() == self.args.len()
                && args.iter().zip(&self.args).all(|(a, b)| a.to_string() == b.to_string());
            if !same {
                refused.get_or_insert_with(|| {
                    Error::validation(
                        position_of(call),
                        format!("{name} must take the arguments of the GROUP BY's {}", self.name),
                    )
                });
            }
            *e = ast::Expr::Identifier(ast::Ident::new(column));
            std::ops::ControlFlow::Continue(())
        };
        let _ = ast::visit_expressions_mut(&mut select.projection, &mut replace);
        let _ = ast::visit_expressions_mut(&mut select.having, &mut replace);
        if let ast::GroupByExpr::Expressions(exprs, _) = &mut select.group_by {
            let column = |name: &str| ast::Expr::Identifier(ast::Ident::new(name));
            let window = [START, END].into_iter().chain(time).map(column);
            exprs.splice(self.at..=self.at, window);
        }
        match refused {
            Some(error) => Err(error),
            None => Ok(select),
        }
    }
}
