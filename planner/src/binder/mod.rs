//! The binder: SQL queries to typed logical plans, resolving names against the catalog.

mod aggregate;
mod correlate;
mod expr;
mod group_window;
mod grouping_sets;
mod json;
mod lookup_join;
mod over;
mod over_aggregate;
mod regular_join;
mod scope;
pub mod sink_rows;
mod sort;
mod subquery;
mod temporal_join;
mod window;

use std::collections::HashMap;
use weir_runtime::time_zone::TimeZone;

use sqlparser::ast::{self, SetExpr, SetOperator, SetQuantifier, TableFactor};
use weir_operators::expr::types::common_type;
use weir_operators::expr::Expr;
use weir_runtime::{DataType, Field, Value};

use crate::catalog::{Catalog, CatalogEntry, UserFunctions};
use crate::error::{Error, Position, Result};
use crate::plan::{Node, Plan};
use crate::resolve::Resolver;
pub use expr::data_type;
use expr::{AggregateContext, ExprBinder};
use grouping_sets::{GroupBy, Grouping};
pub(crate) use over::RANK_COLUMN;
pub(crate) use regular_join::uniquify;
pub use scope::position_of;
use scope::Scope;
use weir_connectors::SourceTable;

/// Binds queries against a catalog.
pub struct Binder<'a> {
    catalog: &'a Catalog,
    /// Resolves the tables the statement reads, once each.
    resolver: &'a Resolver<'a>,
    /// Common table expressions in scope, innermost last.
    ctes: Vec<HashMap<String, ast::Query>>,
    /// Where the statement's join operators start, in order.
    join_operators: &'a [Position],
    /// The session time zone (`table.local-time-zone`), for calls of its wall clock.
    zone: TimeZone,
}

fn unsupported(what: impl std::fmt::Display) -> Error {
    Error::Unsupported(what.to_string())
}

/// A feature weir does not plan yet, at `clause` (at the statement when the parser left the
/// clause without a place).
pub(crate) fn unsupported_at(clause: &impl ast::Spanned, what: impl std::fmt::Display) -> Error {
    let start = clause.span().start;
    if start.line == 0 {
        return unsupported(what);
    }
    let position = Position { line: start.line, column: start.column.max(1) };
    Error::UnsupportedAt { position, feature: what.to_string() }
}

/// A projection of `input` to `exprs` named `names`; an identity projection only renames.
fn calc(input: Plan, projections: Vec<Expr>, names: Vec<String>, condition: Option<Expr>) -> Plan {
    let fields: Vec<Field> = projections.iter().zip(names).map(|(e, n)| Field::new(n, e.ty().clone())).collect();
    let identity = projections.len() == input.fields.len()
        && projections.iter().enumerate().all(|(i, p)| matches!(p, Expr::Column { index, .. } if *index == i));
    if identity && condition.is_none() {
        return Plan { node: input.node, fields };
    }
    Plan { node: Node::Calc { input: Box::new(input), projections, condition }, fields }
}

/// Identity projections of all columns of `fields`.
fn identity(fields: &[Field]) -> Vec<Expr> {
    fields.iter().enumerate().map(|(i, f)| Expr::column(i, f.data_type.clone())).collect()
}

impl<'a> Binder<'a> {
    /// A binder over `catalog`.
    pub fn new(catalog: &'a Catalog, resolver: &'a Resolver<'a>) -> Self {
        Binder { catalog, resolver, ctes: Vec::new(), join_operators: &[], zone: TimeZone::Utc }
    }

    /// The binder with the session time zone `zone` (UTC by default).
    pub fn with_zone(mut self, zone: TimeZone) -> Self {
        self.zone = zone;
        self
    }

    /// The binder reports a refused join at its operator, the last of `join_operators` (in
    /// order) before the joined table; without them, at the joined table.
    pub fn with_join_operators(mut self, join_operators: &'a [Position]) -> Self {
        self.join_operators = join_operators;
        self
    }

    /// A join weir does not plan: at its operator (`FULL OUTER JOIN`, `JOIN`), which the
    /// syntax tree does not keep, so it is the last join operator written before the table.
    fn unsupported_join(&self, join: &ast::Join, what: impl std::fmt::Display) -> Error {
        let table = ast::Spanned::span(&join.relation).start;
        let operator =
            self.join_operators.iter().rev().find(|p| (p.line, p.column) < (table.line, table.column)).copied();
        match operator {
            Some(position) => Error::UnsupportedAt { position, feature: what.to_string() },
            None => unsupported_at(&join.relation, what),
        }
    }

    /// Binds a query.
    ///
    /// # Errors
    /// Unknown names, type mismatches, and features weir does not plan yet.
    pub fn bind_query(&mut self, query: &ast::Query) -> Result<Plan> {
        if let Some(widened) = sort::with_hidden_order_columns(query) {
            // ORDER BY columns the query does not select: selected for the sort, then dropped.
            let plan = self.bind_query_body(&widened.query)?;
            return sort::bind_sort(plan, &widened.query).map(|sorted| widened.drop_hidden(sorted));
        }
        let plan = self.bind_query_body(query)?;
        sort::bind_sort(plan, query)
    }

    /// A query without its ORDER BY and LIMIT.
    fn bind_query_body(&mut self, query: &ast::Query) -> Result<Plan> {
        let with_ctes = query.with.is_some();
        if let Some(with) = &query.with {
            let mut ctes = HashMap::new();
            for cte in &with.cte_tables {
                ctes.insert(cte.alias.name.value.clone(), (*cte.query).clone());
            }
            self.ctes.push(ctes);
        }
        let result = self.bind_set_expr(&query.body);
        if with_ctes {
            self.ctes.pop();
        }
        result
    }

    fn bind_set_expr(&mut self, body: &SetExpr) -> Result<Plan> {
        match body {
            SetExpr::Select(select) => self.bind_select(select),
            SetExpr::Query(query) => self.bind_query(query),
            SetExpr::Values(values) => self.bind_values(values),
            SetExpr::SetOperation { op: SetOperator::Union, set_quantifier: SetQuantifier::All, left, right } => {
                let inputs = vec![self.bind_set_expr(left)?, self.bind_set_expr(right)?];
                union(inputs, body)
            }
            SetExpr::SetOperation { op, set_quantifier, .. } => Err(unsupported(format!("{op} {set_quantifier}"))),
            other => Err(unsupported(format!("The query '{other}'"))),
        }
    }

    fn bind_values(&mut self, values: &ast::Values) -> Result<Plan> {
        let empty = Scope::default();
        let mut rows: Vec<Vec<Expr>> = Vec::new();
        for row in &values.rows {
            let mut binder =
                ExprBinder { scope: &empty, aggregates: None, functions: self.catalog.functions(), zone: self.zone };
            rows.push(row.iter().map(|e| binder.bind(e)).collect::<Result<_>>()?);
        }
        let arity = rows.first().map_or(0, Vec::len);
        if rows.iter().any(|r| r.len() != arity) {
            return Err(Error::validation(
                position_of(values),
                "All rows of VALUES must have the same number of columns",
            ));
        }
        let mut types: Vec<Option<DataType>> = vec![None; arity];
        for row in &rows {
            for (t, e) in types.iter_mut().zip(row) {
                if e.is_null_literal() {
                    continue;
                }
                *t = Some(match t.take() {
                    None => e.ty().clone(),
                    Some(c) => common_type(&c, e.ty()).ok_or_else(|| {
                        Error::validation(
                            position_of(values),
                            format!("Illegal mixing of types in VALUES: {c} and {}", e.ty()),
                        )
                    })?,
                });
            }
        }
        let types: Vec<DataType> = types
            .into_iter()
            .zip(0..arity)
            .map(|(t, i)| {
                let mut t = t.unwrap_or_else(DataType::string);
                t.nullable = rows.iter().any(|r| r[i].ty().nullable || r[i].is_null_literal());
                t
            })
            .collect();
        let mut constant_rows = Vec::new();
        for row in rows {
            let values: Vec<Value> = row
                .into_iter()
                .zip(&types)
                .map(|(e, t)| e.cast_to(t).eval(&[]).map_err(|err| Error::validation(position_of(values), err.0)))
                .collect::<Result<_>>()?;
            constant_rows.push(values);
        }
        let fields = types.into_iter().enumerate().map(|(i, t)| Field::new(format!("EXPR${i}"), t)).collect();
        Ok(Plan { node: Node::Values { rows: constant_rows }, fields })
    }

    /// The plan and qualifier of one FROM item.
    fn bind_table_factor(&mut self, factor: &TableFactor) -> Result<(Plan, Option<String>)> {
        match factor {
            TableFactor::Table { name, alias, args: None, .. } => {
                let table = crate::parser::table_name(name);
                let qualifier = alias.as_ref().map_or(table, |a| a.name.value.clone());
                let plan = self.bind_table_name(name)?;
                Ok((rename(plan, alias.as_ref())?, Some(qualifier)))
            }
            TableFactor::Derived { lateral: false, subquery, alias } => {
                let plan = self.bind_query(subquery)?;
                let qualifier = alias.as_ref().map(|a| a.name.value.clone());
                Ok((rename(plan, alias.as_ref())?, qualifier))
            }
            TableFactor::TableFunction { expr, alias } => self.bind_window_function(factor, expr, alias.as_ref()),
            TableFactor::Table { version: Some(_), .. } => Err(unsupported("Lookup joins (FOR SYSTEM_TIME AS OF)")),
            other => Err(unsupported(format!("The FROM item '{other}'"))),
        }
    }

    /// The rows of the table, view or common table expression `name`.
    fn bind_table_name(&mut self, name: &ast::ObjectName) -> Result<Plan> {
        let table = crate::parser::table_name(name);
        let cte = self.ctes.iter().rev().find_map(|c| c.get(&table)).cloned();
        match (cte, self.catalog.get(&table)) {
            (Some(query), _) => self.bind_query(&query),
            // A view's names mean what they meant in the catalog and database it was created in.
            (None, Some(CatalogEntry::View(query))) => {
                self.catalog.within_namespace_of(&self.catalog.key(&table), || {
                    Binder::new(self.catalog, self.resolver).with_zone(self.zone).bind_query(query)
                })
            }
            (None, Some(CatalogEntry::Table(t))) => table_plan(t, Some(self.resolver.source(&t.descriptor)?)),
            (None, None) => Err(Error::validation(position_of(name), format!("Object '{table}' not found"))),
        }
    }

    fn bind_from(&mut self, from: &[ast::TableWithJoins]) -> Result<(Plan, Scope)> {
        match from {
            [] => {
                let plan = Plan { node: Node::Values { rows: vec![Vec::new()] }, fields: Vec::new() };
                Ok((plan, Scope::default()))
            }
            [single] => {
                let (mut plan, mut scope) = match self.bind_table_function_alone(&single.relation) {
                    Some(bound) => bound?,
                    None => {
                        let (plan, qualifier) = self.bind_table_factor(&single.relation)?;
                        let scope = Scope::new(&plan.fields, qualifier.as_deref());
                        (plan, scope)
                    }
                };
                for join in &single.joins {
                    let lookup = matches!(join.relation, TableFactor::Table { version: Some(_), .. });
                    (plan, scope) = if correlate::is_correlated(join) {
                        self.bind_correlate(plan, scope, join)?
                    } else if lookup {
                        self.bind_lookup_join(plan, scope, join)?
                    } else {
                        self.bind_regular_join(plan, scope, join)?
                    };
                }
                Ok((plan, scope))
            }
            _ => Err(unsupported("Joins (comma-separated FROM items)")),
        }
    }

    /// `FROM a, b, … WHERE c` as Flink plans it: inner joins, the WHERE's conditions (those
    /// without a subquery) the last join's condition, the others `TRUE`; the subquery conditions
    /// stay in the WHERE. A single FROM item is left as it is.
    fn comma_joined(select: &ast::Select) -> Option<ast::Select> {
        let [first, rest @ ..] = select.from.as_slice() else { return None };
        if rest.is_empty() {
            return None;
        }
        let (subqueries, plain): (Vec<&ast::Expr>, Vec<&ast::Expr>) = match &select.selection {
            None => (Vec::new(), Vec::new()),
            Some(condition) => {
                subquery::conjuncts(condition).into_iter().partition(|c| subquery::is_subquery_predicate(c))
            }
        };
        let and = |parts: Vec<&ast::Expr>| {
            parts.into_iter().cloned().reduce(|left, right| ast::Expr::BinaryOp {
                left: Box::new(left),
                op: ast::BinaryOperator::And,
                right: Box::new(right),
            })
        };
        let truth = || ast::Expr::Value(ast::Value::Boolean(true).into());
        // An UNNEST or LATERAL TABLE after a comma is a cross join of each row with its own rows;
        // the conditions go to the last join when it is a plain one, else they stay a WHERE,
        // above the correlated columns they may read.
        let correlated = |item: &ast::TableWithJoins| correlate::is_correlated_factor(&item.relation);
        let last_is_plain = rest.last().is_some_and(|item| !correlated(item));
        let mut joined = first.clone();
        for (i, item) in rest.iter().enumerate() {
            let join_operator = if correlated(item) {
                ast::JoinOperator::CrossJoin(ast::JoinConstraint::None)
            } else {
                let on = match i + 1 == rest.len() {
                    true => and(plain.clone()).unwrap_or_else(truth),
                    false => truth(),
                };
                ast::JoinOperator::Inner(ast::JoinConstraint::On(on))
            };
            joined.joins.push(ast::Join { relation: item.relation.clone(), global: false, join_operator });
            joined.joins.extend(item.joins.iter().cloned());
        }
        let mut rewritten = select.clone();
        rewritten.from = vec![joined];
        rewritten.selection = match last_is_plain {
            true => and(subqueries),
            false => select.selection.clone(),
        };
        Some(rewritten)
    }

    fn bind_select(&mut self, select: &ast::Select) -> Result<Plan> {
        // `GROUP BY TUMBLE(ts, …)`: the window table function it means.
        let group_window = match &select.group_by {
            ast::GroupByExpr::Expressions(exprs, modifiers) if modifiers.is_empty() => group_window::find(exprs),
            _ => None,
        };
        let comma_joined = Self::comma_joined(select);
        let select = comma_joined.as_ref().unwrap_or(select);
        let rewritten;
        let select = match &group_window {
            Some(window) => {
                rewritten = window.rewrite(select)?;
                &rewritten
            }
            None => select,
        };
        let (plan, scope) = self.bind_from(&select.from)?;
        let (mut plan, scope) = match &group_window {
            Some(window) => window.apply(plan, scope)?,
            None => (plan, scope),
        };
        if let Some(condition) = &select.selection {
            plan = self.bind_where(plan, &scope, condition)?;
        }
        let mut group_by = match &select.group_by {
            ast::GroupByExpr::Expressions(exprs, modifiers) if modifiers.is_empty() => GroupBy::of(exprs)?,
            other => return Err(unsupported(format!("GROUP BY {other}"))),
        };
        let mut items = self.expand_items(select, &scope)?;
        match &select.distinct {
            None => {}
            // SELECT DISTINCT: grouped by every item, as Flink plans it.
            Some(ast::Distinct::Distinct)
                if group_by.exprs.is_empty()
                    && group_by.sets.is_none()
                    && !items.iter().any(|(e, _)| aggregate::contains_aggregate(e, self.catalog.functions())) =>
            {
                group_by = GroupBy { exprs: items.iter().map(|(e, _)| e.clone()).collect(), sets: None };
            }
            Some(_) => return Err(unsupported("SELECT DISTINCT with GROUP BY, aggregates or ON")),
        }
        let aggregating = !group_by.exprs.is_empty()
            || group_by.sets.is_some()
            || items.iter().any(|(e, _)| aggregate::contains_aggregate(e, self.catalog.functions()))
            || select.having.is_some();
        if !aggregating {
            let (plan, scope) = over::bind_ranking(
                plan,
                &scope,
                &mut items,
                &select.named_window,
                self.catalog.functions(),
                self.zone,
            )?;
            let mut binder =
                ExprBinder { scope: &scope, aggregates: None, functions: self.catalog.functions(), zone: self.zone };
            let projections = items.iter().map(|(e, _)| binder.bind(e)).collect::<Result<Vec<_>>>()?;
            let names = output_names(&items);
            let projected = fuse_calc(plan, projections, names);
            return match &select.qualify {
                Some(qualify) => qualified(projected, qualify, self.catalog.functions(), self.zone),
                None => Ok(projected),
            };
        }
        if let Some(qualify) = &select.qualify {
            return Err(unsupported_at(qualify, "QUALIFY with GROUP BY or aggregates"));
        }
        // The aggregate's input: group keys first, then arguments and filters as they are found.
        let mut context = AggregateContext { input_scope: scope.clone(), ..Default::default() };
        let mut key_of = Vec::with_capacity(group_by.exprs.len());
        for g in &group_by.exprs {
            let key =
                ExprBinder { scope: &scope, aggregates: None, functions: self.catalog.functions(), zone: self.zone }
                    .bind(g)?;
            let keys_before = context.input_exprs.len();
            let column = context.input_column(key);
            key_of.push(column);
            if column < keys_before {
                // A key given twice (`GROUP BY a, a`) groups once, as in Flink.
                continue;
            }
            context.group_asts.push(g.clone());
        }
        let key_count = context.group_asts.len();
        let grouping = match &group_by.sets {
            None => Grouping::plain(key_count),
            Some(sets) => {
                let sets: Vec<Vec<usize>> = sets.iter().map(|set| set.iter().map(|&e| key_of[e]).collect()).collect();
                Grouping::of(key_count, &sets)?
            }
        };
        context.grouping = Some(grouping.clone());
        let mut projections = Vec::new();
        let having;
        {
            let empty = Scope::default();
            let mut binder = ExprBinder {
                scope: &empty,
                aggregates: Some(&mut context),
                functions: self.catalog.functions(),
                zone: self.zone,
            };
            for (e, _) in &items {
                projections.push(binder.bind(e)?);
            }
            having = select.having.as_ref().map(|h| binder.bind(h)).transpose()?;
            if let (Some(bound), Some(h)) = (&having, &select.having) {
                expr::expect_condition(bound, "HAVING", h)?;
            }
        }
        let mut calls: Vec<_> = context.calls.into_iter().map(|(_, c)| c).collect();
        if grouping.expanded {
            // The Expand nulls the keys a set leaves out; a call reading a key column reads a
            // copy of it that stays whole, as Flink's Expand duplicates such columns.
            for call in &mut calls {
                for column in [&mut call.arg, &mut call.filter].into_iter().flatten() {
                    if *column < key_count {
                        context.input_exprs.push(context.input_exprs[*column].clone());
                        *column = context.input_exprs.len() - 1;
                    }
                }
            }
        }
        // The aggregate's input: its keys, then its arguments and filters (a Calc that column
        // pruning removes again when it only passes columns on).
        let mut taken = std::collections::HashSet::new();
        let input_names: Vec<String> = context
            .input_exprs
            .iter()
            .enumerate()
            .map(|(i, e)| match e {
                // A key column copied for the calls over an Expand takes a name of its own.
                Expr::Column { index, .. } if taken.insert(scope.columns[*index].name.clone()) => {
                    scope.columns[*index].name.clone()
                }
                Expr::Column { index, .. } => format!("{}_{i}", scope.columns[*index].name),
                _ => format!("$f{i}"),
            })
            .collect();
        let mut input = fuse_calc(plan, context.input_exprs, input_names);
        let mut keys: Vec<usize> = (0..key_count).collect();
        if grouping.expanded {
            keys.push(input.fields.len());
            input = Plan::expand(input, grouping.projects());
        }
        let first_call = keys.len();
        let mut fields: Vec<Field> = keys.iter().map(|&k: &usize| input.fields[k].clone()).collect();
        fields.extend(calls.iter().enumerate().map(|(i, c)| Field::new(format!("EXPR${i}"), c.result_type.clone())));
        // As Calcite names them: an aggregate after the first SELECT item that is just it.
        let names = output_names(&items);
        let mut named = vec![false; fields.len()];
        for (projection, name) in projections.iter().zip(&names) {
            if let Expr::Column { index, .. } = projection {
                if *index >= first_call && !named[*index] {
                    named[*index] = true;
                    fields[*index].name = name.clone();
                }
            }
        }
        let aggregate = Plan { node: Node::Aggregate { input: Box::new(input), keys, calls }, fields };
        Ok(calc(aggregate, projections, names, having))
    }

    /// The SELECT items with `*` expanded, as expressions and their aliases.
    fn expand_items(&self, select: &ast::Select, scope: &Scope) -> Result<Vec<(ast::Expr, Option<String>)>> {
        let mut items = Vec::new();
        for item in &select.projection {
            match item {
                ast::SelectItem::UnnamedExpr(e) => items.push((e.clone(), None)),
                ast::SelectItem::ExprWithAlias { expr, alias } => items.push((expr.clone(), Some(alias.value.clone()))),
                ast::SelectItem::Wildcard(options) => {
                    if select.from.is_empty() {
                        let span = options.wildcard_token.0.span;
                        let at = Position { line: span.start.line.max(1), column: span.start.column.max(1) };
                        return Err(Error::validation(at, "SELECT * requires a FROM clause"));
                    }
                    for c in &scope.columns {
                        // Qualified, so that equal names from two joined tables stay apart.
                        let column = ast::Ident::new(c.name.clone());
                        items.push(match &c.qualifier {
                            Some(q) => (ast::Expr::CompoundIdentifier(vec![ast::Ident::new(q.clone()), column]), None),
                            None => (ast::Expr::Identifier(column), None),
                        });
                    }
                }
                ast::SelectItem::QualifiedWildcard(ast::SelectItemQualifiedWildcardKind::ObjectName(name), _) => {
                    let qualifier = crate::parser::last_part(name);
                    for c in scope.columns.iter().filter(|c| c.qualifier.as_deref() == Some(&qualifier)) {
                        let parts = vec![ast::Ident::new(qualifier.clone()), ast::Ident::new(c.name.clone())];
                        items.push((ast::Expr::CompoundIdentifier(parts), None));
                    }
                }
                other => return Err(unsupported(format!("The select item '{other}'"))),
            }
        }
        Ok(items)
    }
}

/// The rows of a table: its scan of `source` (the table resolved as a source: physical and
/// metadata columns), its computed columns (a Calc) and its watermark assigner: its columns in
/// the order declared, with the rowtime column marked when it has a watermark. Without `source` (for `DESCRIBE`,
/// which reads only the columns) the scan is an empty `Values`.
pub fn table_plan(t: &crate::catalog::CatalogTable, source: Option<SourceTable>) -> Result<Plan> {
    use crate::parser::ColumnDef;
    let physical = t.descriptor.schema.fields.clone();
    let projection = (0..physical.len()).collect();
    let node = match source {
        Some(table) => Node::Scan {
            table,
            projection,
            changelog: crate::plan::ChangelogMode::INSERT_ONLY,
            key: None,
            filter: crate::plan::ScanFilter::default(),
            projected: false,
        },
        None => Node::Values { rows: Vec::new() },
    };
    let mut plan = Plan { fields: physical.clone(), node };
    if t.columns.iter().any(|c| matches!(c, ColumnDef::Computed { .. })) {
        let scope = Scope::new(&physical, Some(&t.descriptor.name));
        let mut binder =
            ExprBinder { scope: &scope, aggregates: None, functions: UserFunctions::none(), zone: TimeZone::Utc };
        let mut projections = Vec::new();
        let mut names = Vec::new();
        for column in &t.columns {
            match column {
                ColumnDef::Physical { name, .. } | ColumnDef::Metadata { name, .. } => {
                    let (index, ty) = scope.resolve(&[ast::Ident::new(name.clone())])?;
                    projections.push(Expr::column(index, ty));
                    names.push(name.clone());
                }
                ColumnDef::Computed { name, expr } => {
                    projections.push(binder.bind(expr)?);
                    names.push(name.clone());
                }
            }
        }
        plan = calc(plan, projections, names, None);
    }
    if let Some((column, expr)) = t.watermark.as_deref() {
        let scope = Scope::new(&plan.fields, Some(&t.descriptor.name));
        let (rowtime, _) = scope.resolve(&[ast::Ident::new(column.clone())])?;
        let watermark =
            ExprBinder { scope: &scope, aggregates: None, functions: UserFunctions::none(), zone: TimeZone::Utc }
                .bind(expr)?;
        let mut fields = plan.fields.clone();
        fields[rowtime].data_type.time_attribute = Some(weir_runtime::types::TimeAttribute::Rowtime);
        plan = Plan { node: Node::WatermarkAssigner { input: Box::new(plan), rowtime, watermark }, fields };
    }
    Ok(plan)
}

/// `QUALIFY condition` over the SELECT's rows: a filter on its output columns (a ranking
/// function's alias, most often), which the rank rule turns into a Top-N or a deduplication.
fn qualified(projected: Plan, condition: &ast::Expr, functions: &UserFunctions, zone: TimeZone) -> Result<Plan> {
    let scope = Scope::new(&projected.fields, None);
    let bound = ExprBinder { scope: &scope, aggregates: None, functions, zone }.bind(condition)?;
    expr::expect_condition(&bound, "QUALIFY", condition)?;
    let names = projected.fields.iter().map(|f| f.name.clone()).collect();
    Ok(calc(projected.clone(), identity(&projected.fields), names, Some(bound)))
}

/// Output names: the alias, the column's own name, or Flink's `EXPR$n`.
fn output_names(items: &[(ast::Expr, Option<String>)]) -> Vec<String> {
    items
        .iter()
        .enumerate()
        .map(|(i, (e, alias))| match (alias, e) {
            (Some(a), _) => a.clone(),
            (None, ast::Expr::Identifier(id)) => id.value.clone(),
            (None, ast::Expr::CompoundIdentifier(parts)) => {
                parts.last().map_or(format!("EXPR${i}"), |p| p.value.clone())
            }
            _ => format!("EXPR${i}"),
        })
        .collect()
}

/// A projection over `input`, merged into `input` when it is a Calc (Flink merges Calcs).
fn fuse_calc(input: Plan, projections: Vec<Expr>, names: Vec<String>) -> Plan {
    match input.node {
        Node::Calc { input: inner, projections: below, condition } => {
            let merged = projections.into_iter().map(|p| p.substitute(&below)).collect();
            calc(*inner, merged, names, condition)
        }
        node => calc(Plan { node, fields: input.fields }, projections, names, None),
    }
}

/// Applies `AS alias (c1, c2, …)` column names.
fn rename(mut plan: Plan, alias: Option<&ast::TableAlias>) -> Result<Plan> {
    let Some(alias) = alias.filter(|a| !a.columns.is_empty()) else { return Ok(plan) };
    if alias.columns.len() != plan.fields.len() {
        return Err(Error::validation(
            scope::ident_position(&alias.name),
            format!("List of column aliases must have same degree as table; table has {} columns", plan.fields.len()),
        ));
    }
    for (f, c) in plan.fields.iter_mut().zip(&alias.columns) {
        f.name = c.name.value.clone();
    }
    Ok(plan)
}

/// UNION ALL: inputs cast to the column types they meet in.
fn union(inputs: Vec<Plan>, node: &SetExpr) -> Result<Plan> {
    let arity = inputs[0].fields.len();
    if inputs.iter().any(|p| p.fields.len() != arity) {
        return Err(Error::validation(position_of(node), "Column count mismatch in UNION ALL"));
    }
    let mut types: Vec<DataType> = inputs[0].fields.iter().map(|f| f.data_type.clone()).collect();
    for input in &inputs[1..] {
        for (t, f) in types.iter_mut().zip(&input.fields) {
            *t = common_type(t, &f.data_type).ok_or_else(|| {
                Error::validation(position_of(node), format!("Type mismatch in UNION ALL: {t} and {}", f.data_type))
            })?;
        }
    }
    let names: Vec<String> = inputs[0].fields.iter().map(|f| f.name.clone()).collect();
    let inputs = inputs
        .into_iter()
        .map(|p| {
            if p.fields.iter().zip(&types).all(|(f, t)| &f.data_type == t) {
                return p;
            }
            let casts = identity(&p.fields).into_iter().zip(&types).map(|(e, t)| e.cast_to(t)).collect();
            fuse_calc(p, casts, names.clone())
        })
        .collect();
    let fields = names.into_iter().zip(types).map(|(n, t)| Field::new(n, t)).collect();
    Ok(Plan { node: Node::Union { inputs }, fields })
}
