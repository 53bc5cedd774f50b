//! `ORDER BY … [LIMIT n] [OFFSET m]` and `FETCH FIRST n ROWS ONLY` of a query: a [`Node::Sort`]
//! over its rows. The ORDER BY keys name the query's output columns (by name or by 1-based
//! position); NULLs come first ascending and last descending unless the key says otherwise, as in
//! Flink.

use sqlparser::ast;
use weir_operators::ranking::SortKey;

use super::{position_of, unsupported_at};
use crate::error::{Error, Result};
use crate::plan::{Node, Plan};

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
