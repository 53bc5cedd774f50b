//! How EXPLAIN prints joins of two streams, as Flink does: `Join(joinType=[InnerJoin],
//! where=[…], select=[…], leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey])`,
//! `IntervalJoin(joinType=[InnerJoin], windowBounds=[isRowTime=true, leftLowerBound=-10000,
//! leftUpperBound=1000, leftTimeIndex=1, rightTimeIndex=2], where=[…], select=[…])` and
//! `WindowJoin(leftWindow=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[5 min])],
//! rightWindow=[…], joinType=[InnerJoin], where=[…], select=[…])`. Expressions read the joined
//! row (`column`); window bounds are named as each input names them.

use weir_operators::expr::Expr;
use weir_operators::join::{IntervalJoinSpec, RegularJoinSpec, WindowJoinSpec};
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
        "IntervalJoin(joinType=[{}], windowBounds=[isRowTime=true, leftLowerBound={}, leftUpperBound={}, \
         leftTimeIndex={}, rightTimeIndex={}], where=[{}], select=[{}])",
        spec.join_type.name(),
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
