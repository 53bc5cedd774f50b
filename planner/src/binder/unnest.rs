//! `CROSS JOIN UNNEST(collection) AS t(a, …)` and `LEFT JOIN UNNEST(collection) AS t(a, …) ON
//! TRUE`: each row joined with the elements of an ARRAY or the entries of a MAP it holds.

use sqlparser::ast::{self, JoinConstraint, JoinOperator, TableFactor};
use weir_operators::expr::Expr;

use super::expr::ExprBinder;
use super::scope::{ident_position, position_of, Scope, ScopeColumn};
use super::{unsupported_at, Binder};
use crate::error::{Error, Result};
use crate::plan::{unnested_fields, Node, Plan};

/// Whether `join` joins an `UNNEST(…)`.
pub(super) fn is_unnest(join: &ast::Join) -> bool {
    unnest_of(&join.relation).is_some()
}

/// The alias and the collections of `UNNEST(…) [AS t(…)]`, which the parser reads, in Flink's
/// dialect, as a call of a table function named `UNNEST`.
fn unnest_of(relation: &TableFactor) -> Option<(Option<&ast::TableAlias>, Vec<&ast::Expr>, bool)> {
    match relation {
        TableFactor::UNNEST { alias, array_exprs, with_ordinality, .. } => {
            Some((alias.as_ref(), array_exprs.iter().collect(), *with_ordinality))
        }
        TableFactor::Table { name, alias, args: Some(args), with_ordinality, .. }
            if crate::parser::last_part(name).eq_ignore_ascii_case("UNNEST") =>
        {
            let exprs = args
                .args
                .iter()
                .filter_map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect();
            Some((alias.as_ref(), exprs, *with_ordinality))
        }
        _ => None,
    }
}

/// Whether `constraint` is `ON TRUE` (or absent): the only condition an UNNEST join takes.
fn on_true(constraint: &JoinConstraint) -> bool {
    match constraint {
        JoinConstraint::None => true,
        JoinConstraint::On(ast::Expr::Value(v)) => v.value == ast::Value::Boolean(true),
        _ => false,
    }
}

impl Binder<'_> {
    /// Joins `input` (visible through `scope`) with the elements of the UNNEST of `join`.
    pub(super) fn bind_unnest(&mut self, input: Plan, scope: Scope, join: &ast::Join) -> Result<(Plan, Scope)> {
        let Some((alias, collections, ordinality)) = unnest_of(&join.relation) else {
            return Err(unsupported_at(&join.relation, "This FROM item"));
        };
        if let TableFactor::UNNEST { with_offset: true, .. } = &join.relation {
            return Err(unsupported_at(&join.relation, "UNNEST … WITH OFFSET"));
        }
        let left = match &join.join_operator {
            JoinOperator::CrossJoin(c) | JoinOperator::Join(c) | JoinOperator::Inner(c) if on_true(c) => false,
            JoinOperator::Left(c) | JoinOperator::LeftOuter(c) if on_true(c) => true,
            _ => return Err(self.unsupported_join(join, "UNNEST joined otherwise than by CROSS JOIN or ON TRUE")),
        };
        let [collection] = collections.as_slice() else {
            return Err(unsupported_at(&join.relation, "UNNEST of more than one collection"));
        };
        let bound: Expr =
            ExprBinder { scope: &scope, aggregates: None, functions: self.catalog.functions() }.bind(collection)?;
        if matches!(bound.ty().logical, weir_runtime::LogicalType::Multiset(_)) {
            // Flink's code generator takes no UNNEST of a bag.
            return Err(Error::Table("Expect an array or a map.".into()));
        }
        if ordinality && matches!(bound.ty().logical, weir_runtime::LogicalType::Map(..)) {
            return Err(unsupported_at(&join.relation, "UNNEST of a MAP WITH ORDINALITY"));
        }
        let Some(elements) = unnested_fields(bound.ty(), ordinality) else {
            let message = weir_operators::expr::functions::wrong_types(
                "UNNEST",
                &[bound.ty()],
                "<MULTISET>)'\n'UNNEST(<ARRAY>)'\n'UNNEST(<MAP>",
            );
            return Err(Error::validation(position_of(&join.relation), message.0));
        };
        // The element columns are `f0`, `f1`, … in the plan, as Flink names them; the query
        // sees them under the alias's column names.
        let names: Vec<String> = match alias.map(|a| a.columns.as_slice()) {
            Some(columns) if !columns.is_empty() => {
                if columns.len() != elements.len() {
                    let at = alias.map_or(position_of(*collection), |a| ident_position(&a.name));
                    return Err(Error::validation(
                        at,
                        format!(
                            "List of column aliases must have same degree as table; table has {} columns",
                            elements.len()
                        ),
                    ));
                }
                columns.iter().map(|c| c.name.value.clone()).collect()
            }
            _ => elements.iter().map(|f| f.name.clone()).collect(),
        };
        let qualifier = alias.map(|a| a.name.value.clone());
        let mut joined = scope;
        for (field, name) in elements.iter().zip(names) {
            let mut data_type = field.data_type.clone();
            data_type.nullable |= left;
            joined.columns.push(ScopeColumn { qualifier: qualifier.clone(), name, data_type });
        }
        let mut fields = input.fields.clone();
        fields.extend(elements.into_iter().map(|mut f| {
            f.data_type.nullable |= left;
            f
        }));
        let node = Node::Unnest { input: Box::new(input), collection: bound, left, ordinality };
        Ok((Plan { node, fields }, joined))
    }
}
