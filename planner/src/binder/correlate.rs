//! Correlated FROM items: `CROSS JOIN UNNEST(collection) AS t(a, …)` (each row joined with the
//! elements of an ARRAY or the entries of a MAP it holds) and `, LATERAL TABLE(f(args)) AS
//! t(a, …)` (each row joined with the rows a table function emits for it), and their `LEFT
//! JOIN … ON TRUE` forms; `TABLE(f(args))` alone calls a table function on constants.

use sqlparser::ast::{self, JoinConstraint, JoinOperator, TableFactor};
use weir_operators::expr::functions::{invalid_count, no_match};
use weir_operators::expr::Expr;
use weir_operators::{CorrelatedTable, TableFunctionCall};
use weir_runtime::Field;

use super::expr::ExprBinder;
use super::scope::{ident_position, position_of, Scope, ScopeColumn};
use super::{unsupported_at, Binder};
use crate::error::{Error, Position, Result};
use crate::plan::{unnested_fields, Node, Plan};

/// Whether `join` joins an `UNNEST(…)` or a `LATERAL TABLE(…)`.
pub(super) fn is_correlated(join: &ast::Join) -> bool {
    is_correlated_factor(&join.relation)
}

/// Whether `relation` is an `UNNEST(…)` or a `LATERAL TABLE(…)`, whose expressions read the
/// FROM items before it.
pub(super) fn is_correlated_factor(relation: &TableFactor) -> bool {
    unnest_of(relation).is_some() || lateral_call(relation).is_some()
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
            Some((alias.as_ref(), unnamed(&args.args), *with_ordinality))
        }
        _ => None,
    }
}

/// The unnamed expressions of `args`.
fn unnamed(args: &[ast::FunctionArg]) -> Vec<&ast::Expr> {
    args.iter()
        .filter_map(|a| match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
            _ => None,
        })
        .collect()
}

/// The alias and the call of `LATERAL TABLE(call) [AS t(…)]`.
fn lateral_call(relation: &TableFactor) -> Option<(Option<&ast::TableAlias>, &ast::Expr)> {
    match relation {
        TableFactor::Function { lateral: true, name, args, alias }
            if crate::parser::last_part(name).eq_ignore_ascii_case("TABLE") =>
        {
            match unnamed(args).as_slice() {
                [call] => Some((alias.as_ref(), *call)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether `constraint` is `ON TRUE` (or absent): the only condition a correlated join takes.
fn on_true(constraint: &JoinConstraint) -> bool {
    match constraint {
        JoinConstraint::None => true,
        JoinConstraint::On(ast::Expr::Value(v)) => v.value == ast::Value::Boolean(true),
        _ => false,
    }
}

/// A bound correlated table: what it generates, its columns, and where a wrong alias is
/// reported.
struct Generated {
    table: CorrelatedTable,
    fields: Vec<Field>,
    alias_at: Position,
}

impl Binder<'_> {
    /// Joins `input` (visible through `scope`) with the rows of the UNNEST or LATERAL TABLE of
    /// `join`.
    pub(super) fn bind_correlate(&mut self, input: Plan, scope: Scope, join: &ast::Join) -> Result<(Plan, Scope)> {
        let left = match &join.join_operator {
            JoinOperator::CrossJoin(c) | JoinOperator::Join(c) | JoinOperator::Inner(c) if on_true(c) => false,
            JoinOperator::Left(c) | JoinOperator::LeftOuter(c) if on_true(c) => true,
            _ => {
                let what = if lateral_call(&join.relation).is_some() { "LATERAL TABLE" } else { "UNNEST" };
                return Err(
                    self.unsupported_join(join, format!("{what} joined otherwise than by CROSS JOIN or ON TRUE"))
                );
            }
        };
        self.correlate(input, scope, &join.relation, left)
    }

    /// `TABLE(f(args))` or `LATERAL TABLE(f(args))` as the first FROM item, when `f` is a table
    /// function: its rows for constant arguments. `None` when `expr` calls no table function.
    pub(super) fn bind_table_function_alone(&mut self, factor: &TableFactor) -> Option<Result<(Plan, Scope)>> {
        let expr = match factor {
            TableFactor::TableFunction { expr, .. } => expr,
            other => lateral_call(other)?.1,
        };
        let ast::Expr::Function(call) = expr else { return None };
        self.catalog.functions().table(&crate::parser::last_part(&call.name))?;
        let nothing = Plan { node: Node::Values { rows: vec![Vec::new()] }, fields: Vec::new() };
        Some(self.correlate(nothing, Scope::default(), factor, false))
    }

    fn correlate(&mut self, input: Plan, scope: Scope, relation: &TableFactor, left: bool) -> Result<(Plan, Scope)> {
        let (alias, generated) = if let Some((alias, call)) = lateral_call(relation) {
            (alias, self.bind_table_function(&scope, call)?)
        } else if let TableFactor::TableFunction { expr, alias } = relation {
            (alias.as_ref(), self.bind_table_function(&scope, expr)?)
        } else {
            let Some((alias, collections, ordinality)) = unnest_of(relation) else {
                return Err(unsupported_at(relation, "This FROM item"));
            };
            if let TableFactor::UNNEST { with_offset: true, .. } = relation {
                return Err(unsupported_at(relation, "UNNEST … WITH OFFSET"));
            }
            let [collection] = collections.as_slice() else {
                return Err(unsupported_at(relation, "UNNEST of more than one collection"));
            };
            (alias, self.bind_unnest(&scope, relation, collection, ordinality)?)
        };
        let Generated { table, fields: generated, alias_at } = generated;
        // The generated columns keep their names in the plan (`f0`, `f1`, … for an UNNEST, as
        // Flink names them); the query sees them under the alias's column names.
        let names: Vec<String> = match alias.map(|a| a.columns.as_slice()) {
            Some(columns) if !columns.is_empty() => {
                if columns.len() != generated.len() {
                    let at = alias.map_or(alias_at, |a| ident_position(&a.name));
                    return Err(Error::validation(
                        at,
                        format!(
                            "List of column aliases must have same degree as table; table has {} columns",
                            generated.len()
                        ),
                    ));
                }
                columns.iter().map(|c| c.name.value.clone()).collect()
            }
            _ => generated.iter().map(|f| f.name.clone()).collect(),
        };
        let qualifier = alias.map(|a| a.name.value.clone());
        let mut joined = scope;
        for (field, name) in generated.iter().zip(names) {
            let mut data_type = field.data_type.clone();
            data_type.nullable |= left;
            joined.columns.push(ScopeColumn { qualifier: qualifier.clone(), name, data_type });
        }
        let mut fields = input.fields.clone();
        fields.extend(generated.into_iter().map(|mut f| {
            f.data_type.nullable |= left;
            f
        }));
        let node = Node::Correlate { input: Box::new(input), table, left };
        Ok((Plan { node, fields }, joined))
    }

    /// `UNNEST(collection) [WITH ORDINALITY]` over the rows of `scope`.
    fn bind_unnest(
        &mut self,
        scope: &Scope,
        relation: &TableFactor,
        collection: &ast::Expr,
        ordinality: bool,
    ) -> Result<Generated> {
        let bound: Expr = ExprBinder { scope, aggregates: None, functions: self.catalog.functions(), zone: self.zone }
            .bind(collection)?;
        if matches!(bound.ty().logical, weir_runtime::LogicalType::Multiset(_)) {
            // Flink's code generator takes no UNNEST of a bag.
            return Err(Error::Table("Expect an array or a map.".into()));
        }
        let Some(fields) = unnested_fields(bound.ty(), ordinality) else {
            let message = weir_operators::expr::functions::wrong_types(
                "UNNEST",
                &[bound.ty()],
                "<MULTISET>)'\n'UNNEST(<ARRAY>)'\n'UNNEST(<MAP>",
            );
            return Err(Error::validation(position_of(relation), message.0));
        };
        let table = CorrelatedTable::Unnest { collection: bound, ordinality };
        Ok(Generated { table, fields, alias_at: position_of(collection) })
    }

    /// `f(args)` of `LATERAL TABLE(f(args))`, `f` a table function, its arguments over the rows
    /// of `scope`.
    fn bind_table_function(&mut self, scope: &Scope, call: &ast::Expr) -> Result<Generated> {
        let at = position_of(call);
        let ast::Expr::Function(function) = call else {
            return Err(Error::validation(at, format!("'{call}' is not a call of a table function")));
        };
        let name = crate::parser::last_part(&function.name);
        let ast::FunctionArguments::List(list) = &function.args else {
            return Err(unsupported_at(call, "A table function called without an argument list"));
        };
        let arg_exprs = unnamed(&list.args);
        if arg_exprs.len() != list.args.len() {
            return Err(unsupported_at(call, "Named or wildcard arguments of a table function"));
        }
        let mut binder = ExprBinder { scope, aggregates: None, functions: self.catalog.functions(), zone: self.zone };
        let args: Vec<Expr> = arg_exprs.iter().map(|a| binder.bind(a)).collect::<Result<_>>()?;
        let types: Vec<&weir_runtime::DataType> = args.iter().map(Expr::ty).collect();
        let Some(udf) = self.catalog.functions().table(&name) else {
            return Err(Error::validation(at, no_match(&name, &types).0));
        };
        let arity = udf.arity();
        if !arity.admits(args.len()) {
            let err = match arity.max {
                Some(max) if max == arity.min => invalid_count(&name, max),
                _ => no_match(&name, &types),
            };
            return Err(Error::validation(at, err.0));
        }
        let fields = udf.result_fields(&types).map_err(|e| Error::validation(at, e.0))?;
        let table = CorrelatedTable::Function(TableFunctionCall {
            function: std::sync::Arc::clone(udf),
            args,
            fields: fields.clone(),
        });
        Ok(Generated { table, fields, alias_at: at })
    }
}
