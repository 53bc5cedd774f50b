//! Binding of regular joins: `FROM a [INNER | LEFT | RIGHT | FULL [OUTER]] JOIN b ON …` between
//! tables, views or subqueries (a right side read `FOR SYSTEM_TIME AS OF` is a lookup join,
//! bound elsewhere). The joined rows are the left side's columns, then the right side's; an outer
//! join makes the other side's columns nullable, and time attributes are plain timestamps after
//! a regular join, as in Flink. A join whose condition bounds the two rowtimes is an interval
//! join ([`crate::join_strategy::interval`]): its rowtimes stay time attributes (on the
//! sides no NULLs pad), so windows can follow it.

use sqlparser::ast::{self, JoinConstraint, JoinOperator};
use weir_operators::join::JoinType;
use weir_runtime::Field;

use super::expr::{expect_condition, ExprBinder};
use super::scope::Scope;
use super::Binder;
use crate::error::Result;
use crate::plan::{JoinStrategy, Node, Plan};

/// Makes the names of the joined row unique as Calcite does: a name taken before gets the first
/// number from 0 that makes it unique (`window_start`, `window_start0`). Names in the query
/// still resolve through the sides' qualifiers.
pub(crate) fn uniquify(fields: &mut [Field]) {
    let mut taken = std::collections::HashSet::new();
    for field in fields.iter_mut() {
        if !taken.insert(field.name.clone()) {
            let name = (0..).map(|i| format!("{}{i}", field.name)).find(|n| !taken.contains(n)).unwrap_or_default();
            taken.insert(name.clone());
            field.name = name;
        }
    }
}

/// The one name (table or alias) the first `width` columns of `scope` are known by, if they
/// share one: a join's left input, named in `STATE_TTL` hints.
pub(crate) fn scope_name(scope: &Scope, width: usize) -> Option<String> {
    let mut qualifiers = scope.columns[..width].iter().map(|c| c.qualifier.clone());
    let first = qualifiers.next()??;
    qualifiers.all(|q| q.as_deref() == Some(first.as_str())).then_some(first)
}

impl Binder<'_> {
    /// Joins `left` (visible through `scope`) with the table of `join`.
    pub(super) fn bind_regular_join(&mut self, left: Plan, scope: Scope, join: &ast::Join) -> Result<(Plan, Scope)> {
        let (join_type, constraint) = match &join.join_operator {
            JoinOperator::Join(c) | JoinOperator::Inner(c) => (JoinType::Inner, c),
            JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (JoinType::Left, c),
            JoinOperator::Right(c) | JoinOperator::RightOuter(c) => (JoinType::Right, c),
            JoinOperator::FullOuter(c) => (JoinType::Full, c),
            _ => return Err(self.unsupported_join(join, "Joins other than INNER, LEFT, RIGHT and FULL OUTER")),
        };
        let JoinConstraint::On(on) = constraint else {
            return Err(self.unsupported_join(join, "Joins without an ON condition"));
        };
        let (right, qualifier) = self.bind_table_factor(&join.relation)?;
        let names = [scope_name(&scope, scope.columns.len()), qualifier.clone()];
        let mut joined = scope;
        joined.columns.extend(Scope::new(&right.fields, qualifier.as_deref()).columns);
        let condition =
            ExprBinder { scope: &joined, aggregates: None, functions: self.catalog.functions(), zone: self.zone }
                .bind(on)?;
        expect_condition(&condition, "ON", on)?;
        let strategy = crate::join_strategy::interval(&left, &right, &condition).unwrap_or(JoinStrategy::Regular);
        // An interval join's rowtimes stay time attributes where no NULLs pad them.
        let kept = match strategy {
            JoinStrategy::Interval { times, .. } => [Some(times[0]), Some(times[1])],
            _ => [None, None],
        };
        let plain = |f: &Field, nullable: bool, time: bool| {
            let mut field = f.clone();
            if !time || nullable {
                field.data_type.time_attribute = None;
            }
            field.data_type.nullable |= nullable;
            field
        };
        let side = |fields: &[Field], at: Option<usize>, nullable: bool| -> Vec<Field> {
            fields.iter().enumerate().map(|(i, f)| plain(f, nullable, at == Some(i))).collect()
        };
        let mut fields = side(&left.fields, kept[0], join_type.is_outer(1));
        fields.extend(side(&right.fields, kept[1], join_type.is_outer(0)));
        uniquify(&mut fields);
        for (column, field) in joined.columns.iter_mut().zip(&fields) {
            column.data_type = field.data_type.clone();
        }
        let node = Node::Join { left: Box::new(left), right: Box::new(right), join_type, condition, strategy, names };
        Ok((Plan { node, fields }, joined))
    }
}
