//! Physical planning of regular joins (Flink's `Join`): the equalities of the condition between
//! a left and a right column become the join keys (both inputs hashed on them, or sent to one
//! subtask when there are none), the rest of the condition is checked on each pair, and each
//! side's state is sized by what its unique key allows (`JoinInputSideSpec`). Inputs send their
//! update-befores: the join retracts pairs by the rows they were made of.

use weir_operators::expr::{Expr, Function};
use weir_operators::join::{JoinInputSideSpec, JoinType, RegularJoinSpec};
use weir_runtime::Field;

use super::{keyed_exchange, upsert_key, ChangelogMode, Physical, PhysicalKind, PhysicalNode, UNASSIGNED};
use crate::plan::Plan;

/// What a join node of the logical plan holds.
pub(super) struct JoinParts {
    pub left: Plan,
    pub right: Plan,
    pub join_type: JoinType,
    pub condition: Expr,
}

/// The conjuncts of an AND tree.
fn conjuncts(expr: Expr, out: &mut Vec<Expr>) {
    match expr {
        Expr::Call { function: Function::And, args, .. } => args.into_iter().for_each(|a| conjuncts(a, out)),
        other => out.push(other),
    }
}

/// The equal-key pairs of `condition` (left column, right column) and what else it asks.
pub(super) fn equi_keys(condition: &Expr, left_width: usize) -> (Vec<usize>, Vec<usize>, Option<Expr>) {
    let mut parts = Vec::new();
    conjuncts(condition.clone(), &mut parts);
    let (mut left, mut right, mut rest) = (Vec::new(), Vec::new(), Vec::new());
    for part in parts {
        if let Expr::Call { function: Function::Equals, args, .. } = &part {
            if let [Expr::Column { index: a, .. }, Expr::Column { index: b, .. }] = args.as_slice() {
                let (l, r) = if a < b { (*a, *b) } else { (*b, *a) };
                if l < left_width && r >= left_width {
                    left.push(l);
                    right.push(r - left_width);
                    continue;
                }
            }
        }
        rest.push(part);
    }
    let rest = rest.into_iter().reduce(|a, b| Expr::Call {
        function: Function::And,
        args: vec![a, b],
        ty: weir_runtime::DataType::boolean(),
    });
    (left, right, rest)
}

/// What the state of an input with `node`'s rows keeps, joined on `keys`.
fn side_spec(node: &PhysicalNode, keys: &[usize]) -> JoinInputSideSpec {
    match upsert_key(node) {
        Some(unique) if !unique.is_empty() && unique.iter().all(|k| keys.contains(k)) => {
            JoinInputSideSpec::JoinKeyContainsUniqueKey
        }
        Some(unique) if !unique.is_empty() => JoinInputSideSpec::HasUniqueKey(unique),
        _ => JoinInputSideSpec::NoUniqueKey,
    }
}

impl Physical<'_> {
    /// The join of `parts`, producing `fields`.
    pub(super) fn join(&self, parts: JoinParts, fields: Vec<Field>) -> PhysicalNode {
        let JoinParts { left, right, join_type, condition } = parts;
        let (left, right) = (self.physical(left, true, false), self.physical(right, true, false));
        let (left_keys, right_keys, _) = equi_keys(&condition, left.fields.len());
        let changelog = if join_type == JoinType::Inner {
            left.changelog.union(right.changelog)
        } else if join_type.keeps_left_only() {
            // As Flink declares a semi or anti join's changes.
            ChangelogMode { insert: true, update_before: true, update_after: true, delete: true }
        } else {
            ChangelogMode { insert: true, delete: true, ..ChangelogMode::default() }
        };
        let spec = RegularJoinSpec {
            join_type,
            sides: [side_spec(&left, &left_keys), side_spec(&right, &right_keys)],
            keys: [left_keys, right_keys],
            arities: [left.fields.len(), right.fields.len()],
            condition: Some(condition),
            state_ttl: self.options.state_ttl(),
        };
        let inputs = vec![keyed_exchange(left, &spec.keys[0]), keyed_exchange(right, &spec.keys[1])];
        PhysicalNode { parallelism: UNASSIGNED, kind: PhysicalKind::Join(spec), inputs, fields, changelog }
    }
}
