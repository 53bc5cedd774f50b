//! Joins of windows and of times, recognised from the condition as Flink does (interval joins
//! when the join is bound, since their rowtimes stay time attributes; window joins here):
//!
//! - With `table.optimizer.window-join-enabled`, a join of two inputs whose rows carry windows of
//!   the same spec, whose condition equates both inputs' `window_start` and both `window_end`,
//!   is a window join (`StreamPhysicalWindowJoinRule`); its other equalities are its keys.
//!   Without the option, or with only one of the two equalities, it stays a regular join, whose
//!   results include the rows a window join would drop as late.
//! - A join ([`interval`], in `crate::join_strategy`) whose condition bounds the left input's rowtime against the right input's
//!   from below and from above (`BETWEEN`, `<`, `<=`, `>`, `>=` between a time attribute of each
//!   side, each plus or minus a constant interval) is an interval join (`IntervalJoinUtil`): its
//!   bounds are the tightest the conjuncts give, a strict bound shifted by 1 ms.
//!
//! Both run over inserts only and emit inserts only; an updating input is refused with Flink's
//! message, as is an updating left input of an event-time temporal join (bound as one). The rule
//! runs after column pruning, so the window columns it records are final.

use weir_operators::expr::Expr;
use weir_operators::AttachedWindow;

use super::window_rank::attached_window;
use crate::conditions::{conjuncts, is_equality};
use crate::error::{Error, Result};
use crate::plan::{JoinStrategy, Node, Plan};

/// The plan with each join's strategy decided; `window_join` is
/// `table.optimizer.window-join-enabled`.
///
/// # Errors
/// An interval or window join over an input that updates, a temporal join over a left input
/// that updates.
pub fn time_join(plan: Plan, window_join: bool) -> Result<Plan> {
    let Plan { node, fields } = plan;
    let node = node.try_map_inputs(|input| time_join(input, window_join))?;
    let Node::Join { left, right, join_type, condition, strategy, names } = node else {
        return Ok(Plan { node, fields });
    };
    let strategy = match strategy {
        JoinStrategy::Regular if window_join => {
            windows_joined(&left, &right, &condition).map_or(JoinStrategy::Regular, JoinStrategy::Window)
        }
        bound => bound,
    };
    // Which inputs must insert only: both of an interval or window join, the left one of a
    // temporal join (its versioned table may change).
    let checked = match strategy {
        JoinStrategy::Regular => None,
        JoinStrategy::Interval { .. } => Some(("IntervalJoin", right.updating_node())),
        JoinStrategy::Window(_) => Some(("WindowJoin", right.updating_node())),
        JoinStrategy::Temporal { .. } => Some(("TemporalJoin", None)),
    };
    if let Some((name, right_updating)) = checked {
        if let Some(node) = left.updating_node().or(right_updating) {
            return Err(Error::Table(format!(
                "{name} doesn't support consuming update and delete changes which is produced by node {node}"
            )));
        }
    }
    Ok(Plan { node: Node::Join { left, right, join_type, condition, strategy, names }, fields })
}

/// Whether `condition` has the conjunct `left column = right column`.
fn equates(condition: &Expr, left: usize, right: usize) -> bool {
    conjuncts(condition).into_iter().any(|c| is_equality(c, left, right))
}

/// Both inputs' windows, when they have the same spec and the condition equates their starts
/// and their ends (right columns counted after the left ones).
fn windows_joined(left: &Plan, right: &Plan, condition: &Expr) -> Option<[AttachedWindow; 2]> {
    let (l, r) = (attached_window(left)?, attached_window(right)?);
    let width = left.fields.len();
    let same = l.spec == r.spec;
    (same && equates(condition, l.start, r.start + width) && equates(condition, l.end, r.end + width)).then_some([l, r])
}

#[cfg(test)]
mod tests {
    use crate::plan::{JoinStrategy, Node, Plan};
    use crate::rules::testing::Fixture;

    const WINDOW_JOIN: &str = "SELECT l.item, r.price FROM \
        (SELECT * FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) l JOIN \
        (SELECT * FROM TABLE(TUMBLE(TABLE asks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) r \
        ON l.item = r.item AND l.window_start = r.window_start AND l.window_end = r.window_end";

    fn fixture() -> Fixture {
        Fixture::new(
            "CREATE TABLE bids (item STRING, price INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) \
             WITH ('connector' = 'datagen');\n\
             CREATE TABLE asks (item STRING, price INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) \
             WITH ('connector' = 'datagen');",
        )
    }

    /// The strategy of the plan's first join, top first, as `Debug` writes it.
    fn join_strategy(plan: &Plan) -> Option<String> {
        match &plan.node {
            Node::Join { strategy, .. } => Some(match strategy {
                JoinStrategy::Regular => "Regular".to_string(),
                other => format!("{other:?}"),
            }),
            node => node.inputs().into_iter().find_map(join_strategy),
        }
    }

    /// With window joins on, a join equating both window columns of both sides is a window
    /// join; with them off it stays a regular join.
    #[test]
    fn a_join_of_equal_windows_is_a_window_join_when_enabled() {
        let plan = fixture().bind(WINDOW_JOIN);
        assert_eq!(join_strategy(&plan).as_deref(), Some("Regular"));
        let joined = join_strategy(&super::time_join(plan.clone(), true).unwrap()).unwrap();
        assert!(joined.starts_with("Window("), "{joined}");
        assert_eq!(join_strategy(&super::time_join(plan, false).unwrap()).as_deref(), Some("Regular"));
    }
}
