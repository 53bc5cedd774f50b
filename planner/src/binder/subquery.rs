//! Subqueries in WHERE, decorrelated into joins as Flink decorrelates them: `x IN (SELECT c …)`
//! and `EXISTS (SELECT …)` keep the rows with a match (a left semi join), `NOT EXISTS (SELECT …)`
//! the rows without (a left anti join). `x NOT IN (SELECT c …)` is an anti join that, as SQL's
//! NULLs require, also counts as a match every pair where `x` or `c` is NULL: a NULL `x` is kept
//! only when the subquery is empty, and one NULL `c` keeps no row. The conditions of an EXISTS or
//! IN subquery's WHERE that read the outer query's columns (a correlated subquery) become the
//! join's condition; the others filter the subquery's rows.

use sqlparser::ast::{self, BinaryOperator, SetExpr};
use weir_operators::expr::types::common_type;
use weir_operators::expr::{Expr, Function};
use weir_operators::join::JoinType;

use super::expr::{expect_condition, ExprBinder};
use super::scope::{position_of, Scope};
use super::{calc, identity, unsupported_at, Binder};
use crate::conditions::conjunction;
use crate::error::{Error, Result};
use crate::plan::{JoinStrategy, Node, Plan};

/// The conjuncts of an AND tree of syntax.
pub(super) fn conjuncts(expr: &ast::Expr) -> Vec<&ast::Expr> {
    match expr {
        ast::Expr::BinaryOp { left, op: BinaryOperator::And, right } => {
            let mut parts = conjuncts(left);
            parts.extend(conjuncts(right));
            parts
        }
        ast::Expr::Nested(inner) => conjuncts(inner),
        other => vec![other],
    }
}

/// Whether `expr` holds a subquery a WHERE conjunct can be decorrelated from.
pub(super) fn is_subquery_predicate(expr: &ast::Expr) -> bool {
    matches!(expr, ast::Expr::InSubquery { .. } | ast::Expr::Exists { .. })
        || matches!(expr, ast::Expr::UnaryOp { op: ast::UnaryOperator::Not, expr } if matches!(**expr, ast::Expr::Exists { .. }))
}

impl Binder<'_> {
    /// `plan` (seen through `scope`) filtered by the WHERE `condition`: its plain conjuncts as a
    /// filter, then each subquery conjunct as a semi or anti join.
    pub(super) fn bind_where(&mut self, mut plan: Plan, scope: &Scope, condition: &ast::Expr) -> Result<Plan> {
        let (subqueries, plain): (Vec<&ast::Expr>, Vec<&ast::Expr>) =
            conjuncts(condition).into_iter().partition(|c| is_subquery_predicate(c));
        // Without subqueries, the condition is bound whole (its ANDs as one call).
        let plain = if subqueries.is_empty() { vec![condition] } else { plain };
        let mut bound = Vec::new();
        for part in &plain {
            let expr = ExprBinder { scope, aggregates: None, functions: self.catalog.functions(), zone: self.zone }
                .bind(part)?;
            expect_condition(&expr, "WHERE", *part)?;
            bound.push(expr);
        }
        if let Some(condition) = conjunction(bound) {
            let names = plan.fields.iter().map(|f| f.name.clone()).collect();
            plan = calc(plan.clone(), identity(&plan.fields), names, Some(condition));
        }
        for predicate in subqueries {
            plan = match predicate {
                ast::Expr::InSubquery { expr, subquery, negated } => {
                    self.bind_in(plan, scope, expr, subquery, *negated)?
                }
                ast::Expr::Exists { subquery, negated } => {
                    let join_type = if *negated { JoinType::LeftAnti } else { JoinType::LeftSemi };
                    self.bind_exists(plan, scope, subquery, join_type)?
                }
                ast::Expr::UnaryOp { expr, .. } => match &**expr {
                    ast::Expr::Exists { subquery, negated } => {
                        let join_type = if *negated { JoinType::LeftSemi } else { JoinType::LeftAnti };
                        self.bind_exists(plan, scope, subquery, join_type)?
                    }
                    _ => unreachable!("a subquery predicate"),
                },
                _ => unreachable!("a subquery predicate"),
            };
        }
        Ok(plan)
    }

    /// `expr [NOT] IN (subquery)`: a semi join on `expr` = the subquery's one column, or the
    /// null-aware anti join of NOT IN; a subquery reading the outer query's columns in its WHERE
    /// adds those conditions to the join's.
    fn bind_in(
        &mut self,
        left: Plan,
        scope: &Scope,
        expr: &ast::Expr,
        subquery: &ast::Query,
        negated: bool,
    ) -> Result<Plan> {
        if let Some(plan) = self.correlated_in(&left, scope, expr, subquery, negated)? {
            return Ok(plan);
        }
        let right = self.bind_query(subquery)?;
        if right.fields.len() != 1 {
            return Err(Error::validation(position_of(subquery), "The subquery of IN must select one column"));
        }
        let column = Expr::column(scope.columns.len(), right.fields[0].data_type.clone());
        let condition = self.in_condition(scope, expr, column, negated)?;
        let join_type = if negated { JoinType::LeftAnti } else { JoinType::LeftSemi };
        Ok(semi_anti(left, right, join_type, condition))
    }

    /// The condition pairing an outer row with a subquery row for `expr [NOT] IN`: `expr =
    /// column` (both cast to their common type), or for NOT IN also when either is NULL, since
    /// `x NOT IN S` holds only when no `x = c` of S is TRUE or UNKNOWN.
    fn in_condition(&mut self, scope: &Scope, expr: &ast::Expr, column: Expr, negated: bool) -> Result<Expr> {
        let value =
            ExprBinder { scope, aggregates: None, functions: self.catalog.functions(), zone: self.zone }.bind(expr)?;
        let ty = common_type(value.ty(), column.ty()).ok_or_else(|| {
            Error::validation(
                position_of(expr),
                format!("Values passed to IN operator must have compatible types: {} and {}", value.ty(), column.ty()),
            )
        })?;
        let (value, column) = (value.cast_to(&ty), column.cast_to(&ty));
        let call = |function, args| Expr::call(function, args).map_err(|e| Error::validation(position_of(expr), e.0));
        let equal = call(Function::Equals, vec![value.clone(), column.clone()])?;
        if !negated {
            return Ok(equal);
        }
        let mut alternatives = vec![equal];
        for side in [value, column].into_iter().filter(|e| e.ty().nullable) {
            alternatives.push(call(Function::IsNull, vec![side])?);
        }
        if alternatives.len() == 1 {
            return Ok(alternatives.remove(0));
        }
        call(Function::Or, alternatives)
    }

    /// `[NOT] EXISTS (SELECT … FROM … WHERE …)`: the subquery's rows filtered by its conditions
    /// on its own columns, joined by those that read the outer query's.
    fn bind_exists(&mut self, left: Plan, scope: &Scope, subquery: &ast::Query, join_type: JoinType) -> Result<Plan> {
        let SetExpr::Select(select) = &*subquery.body else {
            return Err(unsupported_at(subquery, "EXISTS over anything but a SELECT"));
        };
        if subquery.with.is_some() || !matches!(&select.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty()) {
            return Err(unsupported_at(subquery, "EXISTS over a grouped query or WITH"));
        }
        let (right, _, correlated) = self.correlated_rows(scope, select)?;
        Ok(semi_anti(left, right, join_type, conjunction(correlated).unwrap_or_else(condition_true)))
    }

    /// The rows of a subquery's FROM filtered by the conjuncts of its WHERE that read its own
    /// columns alone; the scope of those rows; and the conjuncts that read the outer query's
    /// columns too, over the joined row (outer columns, then the subquery's).
    fn correlated_rows(&mut self, scope: &Scope, select: &ast::Select) -> Result<(Plan, Scope, Vec<Expr>)> {
        let (mut right, inner) = self.bind_from(&select.from)?;
        let width = scope.columns.len();
        let mut joined = scope.clone();
        joined.columns.extend(inner.columns.iter().cloned());
        let (mut own, mut correlated) = (Vec::new(), Vec::new());
        for part in select.selection.as_ref().map(conjuncts).unwrap_or_default() {
            // The subquery's own columns first: they hide the outer query's of the same name.
            if let Ok(expr) =
                (ExprBinder { scope: &inner, aggregates: None, functions: self.catalog.functions(), zone: self.zone })
                    .bind(part)
            {
                expect_condition(&expr, "WHERE", part)?;
                own.push(expr);
                continue;
            }
            let expr =
                ExprBinder { scope: &joined, aggregates: None, functions: self.catalog.functions(), zone: self.zone }
                    .bind(part)?;
            expect_condition(&expr, "WHERE", part)?;
            let mut reads = vec![false; joined.columns.len()];
            expr.mark_columns(&mut reads);
            if reads[..width].iter().any(|&r| r) {
                correlated.push(expr);
            } else {
                own.push(expr.remap(&shift_left(joined.columns.len(), width)));
            }
        }
        if let Some(filter) = conjunction(own) {
            let names = right.fields.iter().map(|f| f.name.clone()).collect();
            right = calc(right.clone(), identity(&right.fields), names, Some(filter));
        }
        Ok((right, inner, correlated))
    }

    /// `x [NOT] IN (SELECT e FROM … WHERE …)` whose WHERE reads the outer query's columns: the
    /// subquery's rows filtered by its own conditions, joined on `x = e` (null-aware for NOT IN)
    /// and its correlated conditions. `None` when the subquery is not such a SELECT.
    fn correlated_in(
        &mut self,
        left: &Plan,
        scope: &Scope,
        expr: &ast::Expr,
        subquery: &ast::Query,
        negated: bool,
    ) -> Result<Option<Plan>> {
        let SetExpr::Select(select) = &*subquery.body else { return Ok(None) };
        let item = match select.projection.as_slice() {
            [ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. }] => e,
            _ => return Ok(None),
        };
        let plain = subquery.with.is_none()
            && select.having.is_none()
            && select.distinct.is_none()
            && matches!(&select.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty());
        if !plain || select.selection.is_none() {
            return Ok(None);
        }
        let (right, inner, correlated) = self.correlated_rows(scope, select)?;
        if correlated.is_empty() {
            return Ok(None);
        }
        let width = scope.columns.len();
        let column =
            ExprBinder { scope: &inner, aggregates: None, functions: self.catalog.functions(), zone: self.zone }
                .bind(item)?;
        let shift: Vec<Option<usize>> = (0..inner.columns.len()).map(|i| Some(i + width)).collect();
        let condition = self.in_condition(scope, expr, column.remap(&shift), negated)?;
        let condition = conjunction([vec![condition], correlated].concat()).unwrap_or_else(condition_true);
        let join_type = if negated { JoinType::LeftAnti } else { JoinType::LeftSemi };
        Ok(Some(semi_anti(left.clone(), right, join_type, condition)))
    }
}

/// TRUE, the condition of a join that pairs every row.
fn condition_true() -> Expr {
    Expr::literal(weir_runtime::Value::Boolean(true), weir_runtime::DataType::boolean())
}

/// The remapping that moves the columns from `width` on of a `len`-column row to the front.
fn shift_left(len: usize, width: usize) -> Vec<Option<usize>> {
    (0..len).map(|i| i.checked_sub(width)).collect()
}

/// The semi or anti join of `left` and `right` on `condition` (over left's columns, then right's).
fn semi_anti(left: Plan, right: Plan, join_type: JoinType, condition: Expr) -> Plan {
    let fields = left.fields.clone();
    Plan {
        node: Node::Join {
            left: Box::new(left),
            right: Box::new(right),
            join_type,
            condition,
            strategy: JoinStrategy::Regular,
            names: [None, None],
        },
        fields,
    }
}
