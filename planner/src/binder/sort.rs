//! `ORDER BY … [LIMIT n] [OFFSET m]` and `FETCH FIRST n ROWS ONLY` of a query: a [`Node::Sort`]
//! over its rows. The ORDER BY keys name the query's output columns (by name or by 1-based
//! position), or columns of its FROM clause it does not select: those are selected as hidden
//! columns for the sort and dropped after it, as Flink does. NULLs come first ascending and last
//! descending unless the key says otherwise, as in Flink.

use sqlparser::ast;
use weir_operators::ranking::SortKey;

use super::{position_of, unsupported_at};
use crate::error::{Error, Result};
use crate::plan::{Node, Plan};
use weir_operators::expr::Expr;

/// A query whose SELECT list was widened by the ORDER BY columns it does not select.
pub(super) struct Widened {
    /// The query with the hidden columns selected last.
    pub query: ast::Query,
    /// How many columns the query selects itself.
    visible: usize,
}

impl Widened {
    /// `sorted` without the hidden columns.
    pub fn drop_hidden(&self, sorted: Plan) -> Plan {
        let fields = sorted.fields[..self.visible].to_vec();
        let projections = fields.iter().enumerate().map(|(i, f)| Expr::column(i, f.data_type.clone())).collect();
        Plan { node: Node::Calc { input: Box::new(sorted), projections, condition: None }, fields }
    }
}

/// `query` with the plain column names its ORDER BY uses but its SELECT list does not name
/// selected after its own columns; `None` when there are none, or the query is no plain
/// `SELECT` (without DISTINCT or `*`) whose output could take them.
pub(super) fn with_hidden_order_columns(query: &ast::Query) -> Option<Widened> {
    let Some(ast::OrderBy { kind: ast::OrderByKind::Expressions(keys), .. }) = &query.order_by else { return None };
    let ast::SetExpr::Select(select) = query.body.as_ref() else { return None };
    if select.distinct.is_some() {
        return None;
    }
    let mut selected = Vec::new();
    for item in &select.projection {
        match item {
            ast::SelectItem::UnnamedExpr(ast::Expr::Identifier(id)) => selected.push(id.value.to_lowercase()),
            ast::SelectItem::UnnamedExpr(ast::Expr::CompoundIdentifier(parts)) => {
                selected.extend(parts.last().map(|p| p.value.to_lowercase()))
            }
            ast::SelectItem::ExprWithAlias { alias, .. } => selected.push(alias.value.to_lowercase()),
            ast::SelectItem::UnnamedExpr(_) => {}
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => return None,
        }
    }
    let mut hidden: Vec<ast::SelectItem> = Vec::new();
    for key in keys {
        let name = match &key.expr {
            ast::Expr::Identifier(id) => &id.value,
            ast::Expr::CompoundIdentifier(parts) => &parts.last()?.value,
            _ => continue,
        };
        if !selected.contains(&name.to_lowercase()) {
            selected.push(name.to_lowercase());
            hidden.push(ast::SelectItem::UnnamedExpr(key.expr.clone()));
        }
    }
    if hidden.is_empty() {
        return None;
    }
    let visible = select.projection.len();
    let mut widened = query.clone();
    if let ast::SetExpr::Select(select) = widened.body.as_mut() {
        select.projection.extend(hidden);
    }
    Some(Widened { query: widened, visible })
}

/// `plan` sorted and limited as `query` says (as it is without ORDER BY, LIMIT and FETCH).
///
/// # Errors
/// A key that is no output column, a limit or offset that is no non-negative integer.
pub(super) fn bind_sort(plan: Plan, query: &ast::Query) -> Result<Plan> {
    let order = match &query.order_by {
        None => Vec::new(),
        Some(ast::OrderBy { kind: ast::OrderByKind::Expressions(keys), .. }) => {
            keys.iter().map(|key| sort_key(&plan, key)).collect::<Result<_>>()?
        }
        Some(other) => return Err(unsupported_at(other, format!("'{other}'"))),
    };
    let (mut fetch, mut offset) = (None, 0);
    match &query.limit_clause {
        None => {}
        Some(ast::LimitClause::LimitOffset { limit, offset: skip, limit_by }) if limit_by.is_empty() => {
            fetch = limit.as_ref().map(|l| count(l, "LIMIT")).transpose()?;
            offset = skip.as_ref().map(|o| count(&o.value, "OFFSET")).transpose()?.unwrap_or(0);
        }
        Some(other) => return Err(unsupported_at(other, format!("'{other}'"))),
    }
    if let Some(ast::Fetch { quantity: Some(quantity), with_ties: false, percent: false }) = &query.fetch {
        fetch = Some(count(quantity, "FETCH")?);
    } else if let Some(other) = &query.fetch {
        return Err(Error::Unsupported(format!("'{other}'")));
    }
    if order.is_empty() && fetch.is_none() && offset == 0 {
        return Ok(plan);
    }
    let fields = plan.fields.clone();
    Ok(Plan { node: Node::Sort { input: Box::new(plan), order, offset, fetch }, fields })
}

/// The output column an ORDER BY key names, with its direction.
fn sort_key(plan: &Plan, key: &ast::OrderByExpr) -> Result<SortKey> {
    let column = match &key.expr {
        ast::Expr::Identifier(id) => plan.fields.iter().position(|f| f.name.eq_ignore_ascii_case(&id.value)),
        ast::Expr::CompoundIdentifier(parts) => {
            parts.last().and_then(|last| plan.fields.iter().position(|f| f.name.eq_ignore_ascii_case(&last.value)))
        }
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => {
                let ordinal: usize = n.parse().unwrap_or(0);
                if ordinal == 0 || ordinal > plan.fields.len() {
                    return Err(Error::validation(
                        position_of(&key.expr),
                        format!("Ordinal out of range: {n} (the query has {} columns)", plan.fields.len()),
                    ));
                }
                Some(ordinal - 1)
            }
            _ => None,
        },
        _ => return Err(unsupported_at(&key.expr, "ORDER BY expressions other than output columns")),
    };
    let Some(column) = column else {
        return Err(Error::validation(
            position_of(&key.expr),
            format!("Column '{}' not found in the query's output (ORDER BY names output columns)", key.expr),
        ));
    };
    let mut sort_key = SortKey::new(column, key.options.asc == Some(false));
    if let Some(first) = key.options.nulls_first {
        sort_key.nulls_last = !first;
    }
    Ok(sort_key)
}

/// A non-negative integer literal of a LIMIT, OFFSET or FETCH.
fn count(expr: &ast::Expr, clause: &str) -> Result<u64> {
    match expr {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        _ => None,
    }
    .ok_or_else(|| Error::validation(position_of(expr), format!("{clause} must be a non-negative integer, not {expr}")))
}
