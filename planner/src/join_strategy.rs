//! Interval joins recognised from a join's condition, as Flink's `IntervalJoinUtil` recognises
//! them: the binder and the time-join rule (`crate::rules::time_join`) both ask.

use weir_operators::expr::{Expr, Function};
use weir_runtime::types::TimeAttribute;
use weir_runtime::Value;

use crate::conditions::conjuncts;
use crate::plan::{JoinStrategy, Plan};

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
