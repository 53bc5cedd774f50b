//! How EXPLAIN prints joins of two streams, as Flink does: `Join(joinType=[InnerJoin],
//! where=[…], select=[…], leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey])`,
//! `IntervalJoin(joinType=[InnerJoin], windowBounds=[isRowTime=true, leftLowerBound=-10000,
//! leftUpperBound=1000, leftTimeIndex=1, rightTimeIndex=2], where=[…], select=[…])` and
//! `WindowJoin(leftWindow=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[5 min])],
//! rightWindow=[…], joinType=[InnerJoin], where=[…], select=[…])` and `TemporalJoin(joinType=[…],
//! where=[AND(=(product, product0), __TEMPORAL_JOIN_CONDITION(ts, ts0, …))], select=[…])`. Expressions read the joined
//! row (`column`); window bounds are named as each input names them.

use weir_operators::expr::Expr;
use weir_operators::join::{IntervalJoinSpec, RegularJoinSpec, TemporalJoinSpec, WindowJoinSpec};
use weir_operators::AttachedWindow;
use weir_runtime::Field;

use super::{expression, names};

/// `where=[…]` of a condition, `true` without one.
fn condition_text(condition: Option<&Expr>, column: &dyn Fn(usize) -> String, infix: bool) -> String {
    condition.map_or("true".to_string(), |c| expression(c, column, infix))
}

pub(super) fn regular_label(
    spec: &RegularJoinSpec,
    fields: &[Field],
    column: &dyn Fn(usize) -> String,
    infix: bool,
) -> String {
    format!(
        "Join(joinType=[{}], where=[{}], select=[{}], leftInputSpec=[{}], rightInputSpec=[{}])",
        spec.join_type.name(),
        condition_text(spec.condition.as_ref(), column, infix),
        names(fields),
        spec.sides[0].name(),
        spec.sides[1].name()
    )
}

pub(super) fn interval_label(
    spec: &IntervalJoinSpec,
    fields: &[Field],
    column: &dyn Fn(usize) -> String,
    infix: bool,
) -> String {
    format!(
        "IntervalJoin(joinType=[{}], windowBounds=[isRowTime={}, leftLowerBound={}, leftUpperBound={}, \
         leftTimeIndex={}, rightTimeIndex={}], where=[{}], select=[{}])",
        spec.join_type.name(),
        spec.rowtime,
        spec.lower,
        spec.upper,
        spec.times[0],
        spec.times[1],
        condition_text(spec.condition.as_ref(), column, infix),
        names(fields)
    )
}

/// `TUMBLE(win_start=[window_start], win_end=[window_end], size=[5 min])` of one input.
fn window_text(window: &AttachedWindow, input: &[Field]) -> String {
    let name = |i: usize| input.get(i).map_or(format!("${i}"), |f| f.name.clone());
    window.spec.explain(&format!("win_start=[{}], win_end=[{}]", name(window.start), name(window.end)))
}

pub(super) fn window_label(
    spec: &WindowJoinSpec,
    inputs: [&[Field]; 2],
    fields: &[Field],
    column: &dyn Fn(usize) -> String,
    infix: bool,
) -> String {
    format!(
        "WindowJoin(leftWindow=[{}], rightWindow=[{}], joinType=[{}], where=[{}], select=[{}])",
        window_text(&spec.windows[0], inputs[0]),
        window_text(&spec.windows[1], inputs[1]),
        spec.join_type.name(),
        condition_text(spec.condition.as_ref(), column, infix),
        names(fields)
    )
}

/// Flink's marker of the temporal condition: both rowtimes, the versioned table's key (weir
/// prints the right join keys, which hold it) and the join keys of each side.
fn temporal_condition(spec: &TemporalJoinSpec, column: &dyn Fn(usize) -> String) -> String {
    let list = |keys: &[usize], offset: usize| keys.iter().map(|&k| column(k + offset)).collect::<Vec<_>>().join(", ");
    let (left, right) = (list(&spec.keys[0], 0), list(&spec.keys[1], spec.arities[0]));
    format!(
        "__TEMPORAL_JOIN_CONDITION({}, {}, __TEMPORAL_JOIN_CONDITION_PRIMARY_KEY({right}), \
         __TEMPORAL_JOIN_LEFT_KEY({left}), __TEMPORAL_JOIN_RIGHT_KEY({right}))",
        column(spec.times[0]),
        column(spec.arities[0] + spec.times[1])
    )
}

pub(super) fn temporal_label(
    spec: &TemporalJoinSpec,
    fields: &[Field],
    column: &dyn Fn(usize) -> String,
    infix: bool,
) -> String {
    let marker = temporal_condition(spec, column);
    let condition = match &spec.condition {
        None => marker,
        Some(c) => {
            let parts: Vec<String> =
                crate::conditions::conjuncts(c).into_iter().map(|p| expression(p, column, infix)).collect();
            if infix {
                format!("({} AND {marker})", parts.join(" AND "))
            } else {
                format!("AND({}, {marker})", parts.join(", "))
            }
        }
    };
    format!("TemporalJoin(joinType=[{}], where=[{condition}], select=[{}])", spec.join_type.name(), names(fields))
}
