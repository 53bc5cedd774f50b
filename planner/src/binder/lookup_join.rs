//! Binding of lookup joins: `FROM s JOIN dim FOR SYSTEM_TIME AS OF s.proc_time AS d ON …`.
//!
//! Equalities between a column of the dimension table and an expression over the probe side
//! become lookup keys; conditions on the dimension table alone filter the rows a lookup
//! returns; everything else is checked on the joined row.

use sqlparser::ast::{self, JoinConstraint, JoinOperator, TableFactor, TableVersion};
use weir_operators::expr::{Expr, Function};
use weir_operators::LookupJoinType;
use weir_runtime::types::TimeAttribute;
use weir_runtime::Field;

use super::expr::ExprBinder;
use super::scope::{position_of, Scope};
use super::{unsupported, Binder};
use crate::catalog::{Catalog, CatalogEntry};
use crate::conditions::{conjunction, conjuncts};
use crate::error::{Error, Result};
use crate::plan::{Node, Plan};

fn columns(expr: &Expr, width: usize) -> Vec<bool> {
    let mut used = vec![false; width];
    expr.mark_columns(&mut used);
    used
}

/// The dimension column an equality side is (a column, possibly cast), if it is one.
fn dim_column(expr: &Expr, probe_width: usize) -> Option<usize> {
    match expr {
        Expr::Column { index, .. } if *index >= probe_width => Some(index - probe_width),
        Expr::Call { function: Function::Cast, args, .. } => dim_column(&args[0], probe_width),
        _ => None,
    }
}

impl Binder<'_> {
    /// Joins `probe` (visible through `scope`) with the lookup table of `join`.
    pub(super) fn bind_lookup_join(&mut self, probe: Plan, scope: Scope, join: &ast::Join) -> Result<(Plan, Scope)> {
        let (join_type, constraint) = match &join.join_operator {
            JoinOperator::Join(c) | JoinOperator::Inner(c) => (LookupJoinType::Inner, c),
            JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (LookupJoinType::LeftOuter, c),
            _ => return Err(self.unsupported_join(join, "Joins other than INNER and LEFT lookup joins")),
        };
        let TableFactor::Table { name, alias, version: Some(TableVersion::ForSystemTimeAsOf(time)), .. } =
            &join.relation
        else {
            return Err(self.unsupported_join(
                join,
                "Regular joins (weir plans lookup joins: JOIN t FOR SYSTEM_TIME AS OF s.proc_time AS d ON …)",
            ));
        };
        let time_expr =
            ExprBinder { scope: &scope, aggregates: None, functions: self.catalog.functions(), zone: self.zone }
                .bind(time)?;
        match &time_expr {
            Expr::Column { index, .. } => match probe.fields[*index].data_type.time_attribute {
                Some(TimeAttribute::Proctime) => {}
                Some(TimeAttribute::Rowtime) => {
                    let join_type = match join_type {
                        LookupJoinType::Inner => weir_operators::join::JoinType::Inner,
                        LookupJoinType::LeftOuter => weir_operators::join::JoinType::Left,
                    };
                    return self.bind_temporal_join(probe, scope, join, constraint, join_type, *index);
                }
                None => {
                    return Err(Error::validation(
                        position_of(time),
                        "Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' left table's time \
                         attribute field",
                    ))
                }
            },
            _ => {
                return Err(Error::validation(
                    position_of(time),
                    "Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' left table's time attribute \
                     field",
                ))
            }
        }
        let table_name = crate::parser::table_name(name);
        let table = match self.catalog.get(&table_name) {
            Some(CatalogEntry::Table(t)) => t.descriptor.clone(),
            Some(CatalogEntry::View(_)) => {
                return Err(Error::validation(
                    position_of(name),
                    format!(
                        "Temporal table join requires a table that can be looked up, but '{}' is a view",
                        Catalog::qualified(&table_name)
                    ),
                ))
            }
            None => return Err(Error::validation(position_of(name), format!("Object '{table_name}' not found"))),
        };
        let qualifier = alias.as_ref().map_or(table_name.clone(), |a| a.name.value.clone());
        let dim_fields: Vec<Field> = table
            .schema
            .fields
            .iter()
            .cloned()
            .map(|mut f| {
                f.data_type.nullable |= join_type == LookupJoinType::LeftOuter;
                f
            })
            .collect();
        let mut joined = scope.clone();
        joined.columns.extend(Scope::new(&table.schema.fields, Some(&qualifier)).columns);
        let JoinConstraint::On(on) = constraint else {
            return Err(unsupported("Lookup joins without an ON condition"));
        };
        let condition =
            ExprBinder { scope: &joined, aggregates: None, functions: self.catalog.functions(), zone: self.zone }
                .bind(on)?;
        super::expr::expect_condition(&condition, "ON", on)?;
        let probe_width = probe.fields.len();
        let width = probe_width + dim_fields.len();
        let parts: Vec<Expr> = conjuncts(&condition).into_iter().cloned().collect();
        let (mut keys, mut dim_only, mut rest) = (Vec::<(usize, Expr)>::new(), Vec::new(), Vec::new());
        for part in parts {
            if let Expr::Call { function: Function::Equals, args, .. } = &part {
                let sides = [(&args[0], &args[1]), (&args[1], &args[0])];
                let key = sides.iter().find_map(|(d, p)| {
                    let column = dim_column(d, probe_width)?;
                    let probe_only = !columns(p, width)[probe_width..].iter().any(|u| *u);
                    (probe_only && !keys.iter().any(|(k, _)| *k == column)).then_some((column, (*p).clone()))
                });
                if let Some((column, value)) = key {
                    let ty = &table.schema.fields[column].data_type;
                    let value = if value.ty().logical == ty.logical { value } else { value.cast_to(ty) };
                    keys.push((column, value));
                    continue;
                }
            }
            let used = columns(&part, width);
            if used[..probe_width].iter().all(|u| !u) && used[probe_width..].iter().any(|u| *u) {
                let shift: Vec<Option<usize>> = (0..width).map(|i| i.checked_sub(probe_width)).collect();
                dim_only.push(part.remap(&shift));
            } else {
                rest.push(part);
            }
        }
        if keys.is_empty() {
            return Err(Error::validation(
                position_of(on),
                format!(
                    "Temporal table join requires an equality condition on fields of table [{}].",
                    Catalog::qualified(&table_name)
                ),
            ));
        }
        let mut fields = probe.fields.clone();
        fields.extend(dim_fields);
        let node = Node::LookupJoin {
            input: Box::new(probe),
            table: Box::new(self.resolver.lookup(&table)?),
            alias: qualifier,
            join_type,
            keys,
            dim_filter: conjunction(dim_only),
            join_condition: conjunction(rest),
        };
        Ok((Plan { node, fields }, joined))
    }
}
