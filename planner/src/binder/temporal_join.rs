//! Binding of event-time temporal joins: `FROM o [LEFT] JOIN versioned FOR SYSTEM_TIME AS OF
//! o.rowtime AS v ON o.key = v.pk`, where `versioned` is a table with a primary key and a
//! watermark (a versioned table). The join keys must hold the whole primary key, as Flink
//! requires. The joined rows are the left side's columns (its rowtime still a time attribute),
//! then the versioned table's (nullable for a LEFT join, plain timestamps).

use sqlparser::ast::{self, JoinConstraint, TableFactor};
use weir_operators::join::JoinType;
use weir_runtime::types::TimeAttribute;
use weir_runtime::Field;

use super::expr::{expect_condition, ExprBinder};
use super::scope::{position_of, Scope};
use super::{unsupported, Binder};
use crate::catalog::CatalogEntry;
use crate::conditions::conjuncts;
use crate::conditions::is_equality;
use crate::error::{Error, Result};
use crate::plan::{JoinStrategy, Node, Plan};

impl Binder<'_> {
    /// Joins `left` (visible through `scope`) with the versioned table of `join`, as of the left
    /// rowtime column `left_time`.
    pub(super) fn bind_temporal_join(
        &mut self,
        left: Plan,
        scope: Scope,
        join: &ast::Join,
        constraint: &JoinConstraint,
        join_type: JoinType,
        left_time: usize,
    ) -> Result<(Plan, Scope)> {
        let TableFactor::Table { name, alias, .. } = &join.relation else {
            return Err(unsupported("Temporal joins of other than tables"));
        };
        let table_name = crate::parser::table_name(name);
        let primary_key = match self.catalog.get(&table_name) {
            Some(CatalogEntry::Table(t)) => t.primary_key.clone(),
            Some(CatalogEntry::View(_)) => return Err(unsupported("Temporal joins against versioned views")),
            None => return Err(Error::validation(position_of(name), format!("Object '{table_name}' not found"))),
        };
        let right = self.bind_table_name(name)?;
        if primary_key.is_empty() {
            return Err(Error::validation(
                position_of(name),
                "Temporal Table Join requires primary key in versioned table, but no primary key can be found.",
            ));
        }
        let Some(right_time) =
            right.fields.iter().position(|f| f.data_type.time_attribute == Some(TimeAttribute::Rowtime))
        else {
            return Err(Error::validation(
                position_of(name),
                "Event-Time Temporal Table Join requires both primary key and row time attribute in versioned \
                 table, but no row time attribute can be found.",
            ));
        };
        let qualifier = alias.as_ref().map_or(table_name, |a| a.name.value.clone());
        let mut joined = scope;
        joined.columns.extend(Scope::new(&right.fields, Some(&qualifier)).columns);
        let JoinConstraint::On(on) = constraint else {
            return Err(unsupported("Temporal joins without an ON condition"));
        };
        let condition =
            ExprBinder { scope: &joined, aggregates: None, functions: self.catalog.functions(), zone: self.zone }
                .bind(on)?;
        expect_condition(&condition, "ON", on)?;
        let width = left.fields.len();
        let keyed = |pk: &String| {
            let Some(column) = right.fields.iter().position(|f| &f.name == pk) else { return false };
            conjuncts(&condition).into_iter().any(|c| (0..width).any(|l| is_equality(c, l, width + column)))
        };
        if !primary_key.iter().all(keyed) {
            return Err(Error::validation(
                position_of(on),
                format!(
                    "Temporal table's primary key [{}] must be included in the equivalence condition of temporal \
                     join, but current temporal join condition is [{on}].",
                    primary_key.join(", ")
                ),
            ));
        }
        let mut fields: Vec<Field> = left.fields.clone();
        fields.extend(right.fields.iter().map(|f| {
            let mut field = f.clone();
            field.data_type.time_attribute = None;
            field.data_type.nullable |= join_type == JoinType::Left;
            field
        }));
        super::regular_join::uniquify(&mut fields);
        for (column, field) in joined.columns.iter_mut().zip(&fields) {
            column.data_type = field.data_type.clone();
        }
        let strategy = JoinStrategy::Temporal { times: [left_time, right_time] };
        let names = [super::regular_join::scope_name(&joined, width), Some(qualifier)];
        let node = Node::Join { left: Box::new(left), right: Box::new(right), join_type, condition, strategy, names };
        Ok((Plan { node, fields }, joined))
    }
}
