//! Joins of windows and of times, recognised from the condition as Flink does (interval joins
//! when the join is bound, since their rowtimes stay time attributes; window joins here):
//!
//! - With `table.optimizer.window-join-enabled`, a join of two inputs whose rows carry windows of
//!   the same spec, whose condition equates both inputs' `window_start` and both `window_end`,
//!   is a window join (`StreamPhysicalWindowJoinRule`); its other equalities are its keys.
//!   Without the option, or with only one of the two equalities, it stays a regular join, whose
//!   results include the rows a window join would drop as late.
//! - A join ([`interval`]) whose condition bounds the left input's rowtime against the right input's
//!   from below and from above (`BETWEEN`, `<`, `<=`, `>`, `>=` between a time attribute of each
//!   side, each plus or minus a constant interval) is an interval join (`IntervalJoinUtil`): its
//!   bounds are the tightest the conjuncts give, a strict bound shifted by 1 ms.
//!
//! Both run over inserts only and emit inserts only; an updating input is refused with Flink's
//! message, as is an updating left input of an event-time temporal join (bound as one). The rule
//! runs after column pruning, so the window columns it records are final.

use weir_operators::expr::{Expr, Function};
use weir_operators::AttachedWindow;
use weir_runtime::types::TimeAttribute;
use weir_runtime::Value;

use super::window_rank::attached_window;
use crate::conditions::conjuncts;
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

/// Whether `expr` is `a = b` of columns `a` and `b`, either way round.
pub(crate) fn is_equality(expr: &Expr, a: usize, b: usize) -> bool {
    match expr {
        Expr::Call { function: Function::Equals, args, .. } => matches!(
            args.as_slice(),
            [Expr::Column { index: x, .. }, Expr::Column { index: y, .. }] if (*x, *y) == (a, b) || (*x, *y) == (b, a)
        ),
        _ => false,
    }
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

/// A time attribute column of the joined row plus a constant (ms): `ts`, `ts + INTERVAL …`.
fn time_term(expr: &Expr) -> Option<(usize, i64)> {
    let constant = |e: &Expr| match e {
        Expr::Literal { value: Value::IntervalDayTime(ms), .. } => Some(*ms),
        _ => None,
    };
    match expr {
        Expr::Column { index, .. } => Some((*index, 0)),
        Expr::Call { function: Function::Plus, args, .. } => match args.as_slice() {
            [a, b] => match (time_term(a), constant(b), constant(a), time_term(b)) {
                (Some((c, o)), Some(k), _, _) | (_, _, Some(k), Some((c, o))) => Some((c, o + k)),
                _ => None,
            },
            _ => None,
        },
        Expr::Call { function: Function::Minus, args, .. } => match args.as_slice() {
            [a, b] => time_term(a).zip(constant(b)).map(|((c, o), k)| (c, o - k)),
            _ => None,
        },
        _ => None,
    }
}

/// The interval join of `left` and `right` that `condition` describes, if it bounds a rowtime
/// of each side from both sides.
///
pub(crate) fn interval(left: &Plan, right: &Plan, condition: &Expr) -> Option<JoinStrategy> {
    let width = left.fields.len();
    let attribute = |column: usize| {
        let field = if column < width { &left.fields[column] } else { right.fields.get(column - width)? };
        field.data_type.time_attribute
    };
    let (mut lower, mut upper, mut times) = (None::<i64>, None::<i64>, None::<[usize; 2]>);
    let mut proctime = false;
    for conjunct in conjuncts(condition) {
        let Expr::Call { function, args, .. } = conjunct else { continue };
        let [a, b] = args.as_slice() else { continue };
        let (Some((ca, oa)), Some((cb, ob))) = (time_term(a), time_term(b)) else { continue };
        let (Some(ta), Some(tb)) = (attribute(ca), attribute(cb)) else { continue };
        if ta != tb || (ca < width) == (cb < width) {
            continue;
        }
        // ca + oa (op) cb + ob  ⇔  ca - cb (op) ob - oa; turned round to left - right.
        let (mut op, mut bound) = (function.clone(), ob - oa);
        let pair = if ca < width {
            [ca, cb - width]
        } else {
            bound = -bound;
            op = match op {
                Function::Less => Function::Greater,
                Function::LessOrEqual => Function::GreaterOrEqual,
                Function::Greater => Function::Less,
                Function::GreaterOrEqual => Function::LessOrEqual,
                other => other,
            };
            [cb, ca - width]
        };
        if times.is_some_and(|t| t != pair) {
            continue;
        }
        let (low, high) = match op {
            Function::GreaterOrEqual => (Some(bound), None),
            Function::Greater => (Some(bound + 1), None),
            Function::LessOrEqual => (None, Some(bound)),
            Function::Less => (None, Some(bound - 1)),
            _ => continue,
        };
        times = Some(pair);
        proctime |= ta == TimeAttribute::Proctime;
        lower = low.map_or(lower, |l| Some(lower.map_or(l, |m| m.max(l))));
        upper = high.map_or(upper, |h| Some(upper.map_or(h, |m| m.min(h))));
    }
    Some(JoinStrategy::Interval { times: times?, lower: lower?, upper: upper?, rowtime: !proctime })
}
