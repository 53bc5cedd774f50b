//! Physical planning of regular joins (Flink's `Join`): the equalities of the condition between
//! a left and a right column become the join keys (both inputs hashed on them, or sent to one
//! subtask when there are none), the rest of the condition is checked on each pair, and each
//! side's state is sized by what its unique key allows (`JoinInputSideSpec`). Inputs send their
//! update-befores: the join retracts pairs by the rows they were made of.
//!
//! An interval join (`IntervalJoin`) and a window join (`WindowJoin`), as the rules decided
//! ([`crate::rules::time_join`]), and an event-time temporal join (`TemporalJoin`, as bound)
//! are keyed the same way and emit inserts only; a window join's keys leave out the windows'
//! bounds, which it pairs by itself.

use weir_operators::expr::{Expr, Function};
use weir_operators::join::{
    IntervalJoinSpec, JoinInputSideSpec, JoinType, RegularJoinSpec, TemporalJoinSpec, WindowJoinSpec,
};
use weir_runtime::Field;

use super::op::interval_join::IntervalJoin;
use super::op::join::Join;
use super::op::temporal_join::TemporalJoin;
use super::op::window_join::WindowJoin;
use super::{keyed_exchange, ChangelogMode, Operator, Physical, PhysicalNode, UNASSIGNED};
use crate::conditions::is_equality;
use crate::conditions::{conjunction, conjuncts};
use crate::plan::{JoinStrategy, Plan};

/// What a join node of the logical plan holds.
pub(super) struct JoinParts {
    pub left: Plan,
    pub right: Plan,
    pub join_type: JoinType,
    pub condition: Expr,
    pub strategy: JoinStrategy,
    pub names: [Option<String>; 2],
}

/// The equal-key pairs of `condition` (left column, right column) and what else it asks.
pub(super) fn equi_keys(condition: &Expr, left_width: usize) -> (Vec<usize>, Vec<usize>, Option<Expr>) {
    let (mut left, mut right, mut rest) = (Vec::new(), Vec::new(), Vec::new());
    for part in conjuncts(condition).into_iter().cloned() {
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
    (left, right, conjunction(rest))
}

/// What the state of an input with `node`'s rows keeps, joined on `keys`.
fn side_spec(node: &PhysicalNode, keys: &[usize]) -> JoinInputSideSpec {
    match node.upsert_key() {
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
        let JoinParts { left, right, join_type, condition, strategy, names } = parts;
        let (left, right) = (self.physical(left, true, false), self.physical(right, true, false));
        let arities = [left.fields.len(), right.fields.len()];
        let (mut left_keys, mut right_keys, _) = equi_keys(&condition, left.fields.len());
        let kind = match strategy {
            JoinStrategy::Regular => None,
            JoinStrategy::Interval { times, lower, upper, rowtime } => {
                let keys = [left_keys.clone(), right_keys.clone()];
                let condition = Some(condition.clone());
                Some(Operator::from(IntervalJoin(IntervalJoinSpec {
                    join_type,
                    keys,
                    arities,
                    times,
                    lower,
                    upper,
                    condition,
                    rowtime,
                })))
            }
            JoinStrategy::Temporal { times } => {
                let keys = [left_keys.clone(), right_keys.clone()];
                let condition = Some(condition.clone());
                Some(TemporalJoin(TemporalJoinSpec { join_type, keys, arities, times, condition }).into())
            }
            JoinStrategy::Window(windows) => {
                // The windows' bounds are paired by the operator, not hashed on.
                let bounds = [(windows[0].start, windows[1].start), (windows[0].end, windows[1].end)];
                let is_bound = |l: usize, r: usize| bounds.contains(&(l, r));
                let pairs: Vec<(usize, usize)> = left_keys
                    .iter()
                    .zip(&right_keys)
                    .map(|(&l, &r)| (l, r))
                    .filter(|&(l, r)| !is_bound(l, r))
                    .collect();
                (left_keys, right_keys) = pairs.into_iter().unzip();
                let width = arities[0];
                let rest = conjuncts(&condition)
                    .into_iter()
                    .filter(|c| !bounds.iter().any(|&(l, r)| is_equality(c, l, r + width)))
                    .cloned()
                    .collect();
                let keys = [left_keys.clone(), right_keys.clone()];
                Some(Operator::from(WindowJoin(WindowJoinSpec {
                    join_type,
                    keys,
                    arities,
                    windows,
                    condition: conjunction(rest),
                })))
            }
        };
        if let Some(kind) = kind {
            let inputs = vec![keyed_exchange(left, &left_keys), keyed_exchange(right, &right_keys)];
            let changelog = ChangelogMode { insert: true, ..ChangelogMode::default() };
            return PhysicalNode::new(kind, inputs, fields, changelog);
        }
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
            arities,
            condition: Some(condition),
            state_ttl: names.map(|name| self.options.join_state_ttl(name.as_deref())),
        };
        let inputs = vec![keyed_exchange(left, &spec.keys[0]), keyed_exchange(right, &spec.keys[1])];
        PhysicalNode { parallelism: UNASSIGNED, operator: Join(spec).into(), inputs, fields, changelog }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::physical::op::join::Join;
    use crate::physical::PhysicalNode;
    use crate::rules::testing::Fixture;

    /// Each side's state TTL of the regular join in `plan`.
    fn join_ttls(plan: &PhysicalNode) -> Option<[Option<Duration>; 2]> {
        if let Some(Join(spec)) = plan.op::<Join>() {
            Some(spec.state_ttl)
        } else {
            plan.inputs.iter().find_map(join_ttls)
        }
    }

    #[test]
    fn state_ttl_hints_set_the_ttl_of_the_side_they_name() {
        let mut fixture = Fixture::new(
            "CREATE TABLE a (k INT, v INT) WITH ('connector' = 'datagen');\n\
             CREATE TABLE b (k INT, w INT) WITH ('connector' = 'datagen');\n\
             CREATE TABLE out (k INT, v INT, w INT) WITH ('connector' = 'blackhole');",
        );
        let join = "x.k, x.v, y.w FROM a AS x JOIN b AS y ON x.k = y.k";
        let ttls = |fixture: &Fixture, hint: &str| {
            join_ttls(&fixture.physical(&format!("INSERT INTO out SELECT {hint} {join}"))[0]).expect("a join")
        };
        let (hour, day) = (Duration::from_secs(3600), Duration::from_secs(86_400));
        assert_eq!(ttls(&fixture, ""), [None, None], "no TTL: rows kept forever");
        assert_eq!(ttls(&fixture, "/*+ STATE_TTL('x' = '1d') */"), [Some(day), None]);
        fixture.set("table.exec.state.ttl", "1 h");
        assert_eq!(ttls(&fixture, ""), [Some(hour), Some(hour)]);
        assert_eq!(ttls(&fixture, "/*+ STATE_TTL('y' = '1d', 'x' = '0 ms') */"), [None, Some(day)]);
    }
}
