//! Subqueries in WHERE, decorrelated into joins as Flink decorrelates them: `x IN (SELECT c …)`
//! and `EXISTS (SELECT …)` keep the rows with a match (a left semi join), `NOT EXISTS (SELECT …)`
//! the rows without (a left anti join). `x NOT IN (SELECT c …)` is an anti join that, as SQL's
//! NULLs require, also counts as a match every pair where `x` or `c` is NULL: a NULL `x` is kept
//! only when the subquery is empty, and one NULL `c` keeps no row. The conditions of an EXISTS subquery that read the outer
//! query's columns become the join's condition; the others filter the subquery's rows.

use sqlparser::ast::{self, BinaryOperator, SetExpr};
use weir_operators::expr::types::common_type;
use weir_operators::expr::{Expr, Function};
use weir_operators::join::JoinType;

use super::expr::{expect_condition, ExprBinder};
use super::scope::{position_of, Scope};
use super::{calc, identity, unsupported_at, Binder};
use crate::error::{Error, Result};
use crate::plan::{JoinStrategy, Node, Plan};

/// The conjuncts of an AND tree of syntax.
fn conjuncts(expr: &ast::Expr) -> Vec<&ast::Expr> {
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

fn and(parts: Vec<Expr>) -> Option<Expr> {
    parts.into_iter().reduce(|a, b| Expr::Call {
        function: Function::And,
        args: vec![a, b],
        ty: weir_runtime::DataType::boolean(),
    })
}

/// Whether `expr` holds a subquery a WHERE conjunct can be decorrelated from.
fn is_subquery_predicate(expr: &ast::Expr) -> bool {
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
            let expr = ExprBinder { scope, aggregates: None }.bind(part)?;
            expect_condition(&expr, "WHERE", *part)?;
            bound.push(expr);
        }
        if let Some(condition) = and(bound) {
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
    /// null-aware anti join of NOT IN.
    fn bind_in(
        &mut self,
        left: Plan,
        scope: &Scope,
        expr: &ast::Expr,
        subquery: &ast::Query,
        negated: bool,
    ) -> Result<Plan> {
        let right = self.bind_query(subquery)?;
        if right.fields.len() != 1 {
            return Err(Error::validation(position_of(subquery), "The subquery of IN must select one column"));
        }
        let value = ExprBinder { scope, aggregates: None }.bind(expr)?;
        let width = left.fields.len();
        let column = Expr::column(width, right.fields[0].data_type.clone());
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
            return Ok(semi_anti(left, right, JoinType::LeftSemi, equal));
        }
        // `x NOT IN S` holds when no `x = c` of S is TRUE or UNKNOWN.
        let unknown = [value, column].into_iter().filter(|e| e.ty().nullable);
        let mut alternatives = vec![equal];
        for side in unknown {
            alternatives.push(call(Function::IsNull, vec![side])?);
        }
        let condition =
            if alternatives.len() == 1 { alternatives.remove(0) } else { call(Function::Or, alternatives)? };
        Ok(semi_anti(left, right, JoinType::LeftAnti, condition))
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
        let (mut right, inner) = self.bind_from(&select.from)?;
        let width = left.fields.len();
        let mut joined = scope.clone();
        joined.columns.extend(inner.columns.iter().cloned());
        let (mut own, mut correlated) = (Vec::new(), Vec::new());
        for part in select.selection.as_ref().map(conjuncts).unwrap_or_default() {
            let expr = ExprBinder { scope: &joined, aggregates: None }.bind(part)?;
            expect_condition(&expr, "WHERE", part)?;
            let mut reads = vec![false; joined.columns.len()];
            expr.mark_columns(&mut reads);
            if reads[..width].iter().any(|&r| r) {
                correlated.push(expr);
            } else {
                let shift: Vec<Option<usize>> = (0..joined.columns.len()).map(|i| i.checked_sub(width)).collect();
                own.push(expr.remap(&shift));
            }
        }
        if let Some(filter) = and(own) {
            let names = right.fields.iter().map(|f| f.name.clone()).collect();
            right = calc(right.clone(), identity(&right.fields), names, Some(filter));
        }
        let condition = and(correlated)
            .unwrap_or_else(|| Expr::literal(weir_runtime::Value::Boolean(true), weir_runtime::DataType::boolean()));
        Ok(semi_anti(left, right, join_type, condition))
    }
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
