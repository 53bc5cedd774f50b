//! The texts of the attributes Flink's EXPLAIN prints for operators, shared by the operators
//! that print them (`physical/op/`) and the logical plans (`explain`): column lists, orders,
//! rank ranges, group-bys and the selections of aggregate phases, windows and conditions.

use weir_operators::aggregate::distinct::DistinctArgs;
use weir_operators::aggregate::{Accumulator, AggregateCall};
use weir_operators::expr::Expr;
use weir_operators::ranking::{RankRange, SortKey};
use weir_operators::{AttachedWindow, WindowKind};
use weir_runtime::Field;

use crate::plan_text::{expression, phase_text};

pub(crate) fn names(fields: &[Field]) -> String {
    fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// A call as EXPLAIN prints it (`COUNT(DISTINCT b)`, `SUM(a) FILTER c`).
pub(crate) fn aggregate_text(call: &AggregateCall, column: &dyn Fn(usize) -> String) -> String {
    phase_text(call, None, column)
}

/// What a local phase selects: the keys, each call's partial as `COUNT(*) AS count1$0`, each
/// DISTINCT argument's values as `DISTINCT(b) AS distinct$0` (`fields`: the local phase's).
pub(crate) fn local_select(
    keys: &[usize],
    calls: &[AggregateCall],
    fields: &[Field],
    column: &dyn Fn(usize) -> String,
) -> Vec<String> {
    let mut select: Vec<String> = keys.iter().map(|k| column(*k)).collect();
    let mut at = keys.len();
    let distinct = DistinctArgs::of(calls);
    for (i, c) in calls.iter().enumerate() {
        let names = shown_partials(c, &fields[at..]);
        select.push(format!("{} AS {names}", phase_text(c, distinct.slot(i).map(|s| s.set), column)));
        at += Accumulator::partial_width(c);
    }
    for (set, &arg) in distinct.columns().iter().enumerate() {
        select.push(format!("DISTINCT({}) AS {}", column(arg), fields[at + set].name));
    }
    select
}

/// The names of the partials of `call` Flink's plans show, from `fields` (which start at the
/// call's first partial): `sum$1`, or `(sum$0, count$1)` for several.
pub(crate) fn shown_partials(call: &AggregateCall, fields: &[Field]) -> String {
    match &fields[..Accumulator::shown_partial_width(call)] {
        [one] => one.name.clone(),
        many => format!("({})", many.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ")),
    }
}

/// What a global phase selects: the keys, then each call over the local phase's partial
/// (`COUNT(count1$0) AS EXPR$1`), named as `fields` (the global phase's) name them.
pub(crate) fn global_select(
    key_count: usize,
    calls: &[AggregateCall],
    fields: &[Field],
    local_fields: &[Field],
    column: &dyn Fn(usize) -> String,
) -> Vec<String> {
    let mut select: Vec<String> = (0..key_count).map(column).collect();
    let mut at = key_count;
    let distinct = DistinctArgs::of(calls);
    for (i, (c, f)) in calls.iter().zip(&fields[key_count..]).enumerate() {
        let partial = AggregateCall { arg: Some(at), filter: None, distinct: false, ..c.clone() };
        let partial = AggregateCall { kind: c.kind.merged_as(), ..partial };
        let text = phase_text(&partial, distinct.slot(i).map(|s| s.set), &|i| shown_partials(c, &local_fields[i..]));
        select.push(format!("{text} AS {}", f.name));
        at += Accumulator::partial_width(c);
    }
    select
}

/// `[default_catalog, default_database, t]`, with `project=[…], metadata=[]` for a projection.
/// `groupBy=[a, b], ` (nothing for a global aggregate).
pub(crate) fn group_by(keys: &[usize], column: &dyn Fn(usize) -> String) -> String {
    if keys.is_empty() {
        String::new()
    } else {
        format!("groupBy=[{}], ", keys.iter().map(|k| column(*k)).collect::<Vec<_>>().join(", "))
    }
}

/// `a, b` of the columns `list`.
pub(crate) fn columns(list: &[usize], column: &dyn Fn(usize) -> String) -> String {
    list.iter().map(|&c| column(c)).collect::<Vec<_>>().join(", ")
}

/// `total DESC, product ASC`
pub(crate) fn order_text(order: &[SortKey], column: &dyn Fn(usize) -> String) -> String {
    let key = |k: &SortKey| format!("{} {}", column(k.column), if k.descending { "DESC" } else { "ASC" });
    order.iter().map(key).collect::<Vec<_>>().join(", ")
}

/// `rankStart=1, rankEnd=3`
pub(crate) fn range_text(range: RankRange) -> String {
    format!("rankStart={}, rankEnd={}", range.start, range.end)
}

/// `TUMBLE(win_start=[window_start], win_end=[window_end], size=[1 min])`
pub(crate) fn attached(window: &AttachedWindow, column: &dyn Fn(usize) -> String) -> String {
    window.spec.explain(&format!("win_start=[{}], win_end=[{}]", column(window.start), column(window.end)))
}

/// `time_col=[ts]`
pub(crate) fn time_col(column: &dyn Fn(usize) -> String, time_col: usize) -> String {
    format!("time_col=[{}]", column(time_col))
}

/// The window properties a window aggregate selects after its aggregates: `start('w$) AS
/// window_start`, `end('w$) AS window_end`, and `rowtime('w$) AS window_time` when it has one.
pub(crate) fn properties(fields: &[Field], from: usize, window_time: bool) -> Vec<String> {
    let mut names = ["start", "end"].to_vec();
    if window_time {
        names.push("rowtime");
    }
    names.iter().zip(&fields[from..]).map(|(p, f)| format!("{p}('w$) AS {}", f.name)).collect()
}

/// A group window of the older syntax as Flink prints it: `GroupWindowAggregate(groupBy=[…],
/// window=[TumblingGroupWindow('w$, ts, 60000)], properties=[w$start, w$end, w$rowtime,
/// w$proctime], select=[…, start('w$) AS w$start, …])`. Flink's operator computes all four
/// properties (three over processing time); weir's computes the ones the query reads, but
/// prints Flink's list.
pub(crate) fn group_window_label(
    keys: &[usize],
    calls: &[AggregateCall],
    (window, processing_time): (WindowKind, bool),
    time_col: usize,
    fields: &[Field],
    column: &dyn Fn(usize) -> String,
) -> String {
    let time = column(time_col);
    let window = match window {
        WindowKind::Tumble { size } => format!("TumblingGroupWindow('w$, {time}, {size})"),
        WindowKind::Hop { size, slide } => format!("SlidingGroupWindow('w$, {time}, {size}, {slide})"),
        WindowKind::Session { gap } => format!("SessionGroupWindow('w$, {time}, {gap})"),
        WindowKind::Cumulate { max_size, step } => format!("CumulativeGroupWindow('w$, {time}, {max_size}, {step})"),
    };
    let mut select: Vec<String> = keys.iter().map(|&k| column(k)).collect();
    for (c, f) in calls.iter().zip(&fields[keys.len()..]) {
        select.push(format!("{} AS {}", aggregate_text(c, column), f.name));
    }
    let properties: &[&str] =
        if processing_time { &["start", "end", "proctime"] } else { &["start", "end", "rowtime", "proctime"] };
    select.extend(properties.iter().map(|p| format!("{p}('w$) AS w${p}")));
    let names: Vec<String> = properties.iter().map(|p| format!("w${p}")).collect();
    format!(
        "GroupWindowAggregate({}window=[{window}], properties=[{}], select=[{}])",
        group_by(keys, column),
        names.join(", "),
        select.join(", ")
    )
}

/// `where=[…]` of a condition, `true` without one.
pub(crate) fn condition_text(condition: Option<&Expr>, column: &dyn Fn(usize) -> String, infix: bool) -> String {
    condition.map_or("true".to_string(), |c| expression(c, column, infix))
}

/// The sets of an Expand as Flink prints them, `{a, null AS b, 1 AS $e}, …`, over `arity` input
/// columns that `column` names.
pub(crate) fn expand_projects(
    projects: &[weir_operators::ExpandProject],
    arity: usize,
    column: &dyn Fn(usize) -> String,
) -> String {
    let project = |p: &weir_operators::ExpandProject| {
        let mut items: Vec<String> = (0..arity)
            .map(|c| if p.nulled.contains(&c) { format!("null AS {}", column(c)) } else { column(c) })
            .collect();
        items.push(format!("{} AS $e", p.id));
        format!("{{{}}}", items.join(", "))
    };
    projects.iter().map(project).collect::<Vec<_>>().join(", ")
}

pub(crate) fn table_path(name: &str, projected: Option<&[Field]>) -> String {
    table_path_with_metadata(name, projected, &[])
}

/// [`table_path`] of a scan that reads the metadata `keys` too: `metadata=[…]` names them, and
/// `project=[…]` the physical columns only, as Flink prints a `SupportsReadingMetadata` scan.
pub(crate) fn table_path_with_metadata(name: &str, projected: Option<&[Field]>, keys: &[String]) -> String {
    let metadata = keys.join(", ");
    let path = table_path_prefix(name);
    match projected {
        Some(fields) => format!("{path}, project=[{}], metadata=[{metadata}]]", names(fields)),
        None if keys.is_empty() => format!("{path}]"),
        None => format!("{path}, metadata=[{metadata}]]"),
    }
}

/// `, partitions=[{dt=…}, …]` of a scan whose partitions were chosen (`""` otherwise), as Flink
/// prints it in every plan.
pub(crate) fn partitions_attribute(filter: &crate::plan::ScanFilter) -> String {
    let Some(pruning) = &filter.partitions else { return String::new() };
    let kept: Vec<String> = pruning.kept.iter().map(ToString::to_string).collect();
    format!(", partitions=[{}]", kept.join(", "))
}

/// `[catalog, database, table` of a table's path, as Flink prints it before the scan's details.
pub(crate) fn table_path_prefix(name: &str) -> String {
    format!("[{}", weir_connectors::api::name_parts(name).join(", "))
}
