//! How EXPLAIN prints window table functions and window aggregates, as Flink does:
//! `WindowTableFunction(window=[TUMBLE(time_col=[ts], size=[1 min])])`,
//! `LocalWindowAggregate(… select=[…, slice_end('w$) AS $slice_end])`,
//! `GlobalWindowAggregate(window=[TUMBLE(slice_end=[$slice_end], size=[1 min])], select=[…,
//! start('w$) AS window_start, end('w$) AS window_end])`.

use weir_operators::aggregate::AggregateCall;
use weir_operators::{LocalWindowAggregateSpec, WindowAggregateSpec, WindowKind, WindowSpec};
use weir_runtime::types::TimeAttribute;
use weir_runtime::Field;

use super::{aggregate_text, calcite_type, global_select, group_by, local_select};
use crate::plan::Plan;

/// `time_col=[ts]`
fn time_col(column: &dyn Fn(usize) -> String, time_col: usize) -> String {
    format!("time_col=[{}]", column(time_col))
}

/// The window properties a window aggregate selects after its aggregates: `start('w$) AS
/// window_start`, `end('w$) AS window_end`, and `rowtime('w$) AS window_time` when it has one.
fn properties(fields: &[Field], from: usize, window_time: bool) -> Vec<String> {
    let mut names = ["start", "end"].to_vec();
    if window_time {
        names.push("rowtime");
    }
    names.iter().zip(&fields[from..]).map(|(p, f)| format!("{p}('w$) AS {}", f.name)).collect()
}

pub(super) fn table_function_label(
    spec: &weir_operators::WindowTableFunctionSpec,
    column: &dyn Fn(usize) -> String,
) -> String {
    format!("WindowTableFunction(window=[{}])", spec.window.explain(&time_col(column, spec.time_col)))
}

/// `WindowTableFunction(window=[SESSION(time_col=[ts], gap=[3 s], partition keys=[user_id])])`
pub(super) fn session_function_label(
    spec: &weir_operators::SessionTableFunctionSpec,
    column: &dyn Fn(usize) -> String,
) -> String {
    let window = WindowSpec::new(WindowKind::Session { gap: spec.gap }, 0);
    let mut text = window.explain(&time_col(column, spec.time_col));
    text.pop();
    if !spec.partition.is_empty() {
        let keys: Vec<String> = spec.partition.iter().map(|&p| column(p)).collect();
        text.push_str(&format!(", partition keys=[{}]", keys.join(", ")));
    }
    format!("WindowTableFunction(window=[{text})])")
}

pub(super) fn local_label(
    spec: &LocalWindowAggregateSpec,
    fields: &[Field],
    column: &dyn Fn(usize) -> String,
) -> String {
    let mut select = local_select(&spec.keys, &spec.calls, fields, column);
    select.push("slice_end('w$) AS $slice_end".to_string());
    format!(
        "LocalWindowAggregate({}window=[{}], select=[{}])",
        group_by(&spec.keys, column),
        spec.window.explain(&time_col(column, spec.time_col)),
        select.join(", ")
    )
}

pub(super) fn global_label(
    spec: &WindowAggregateSpec,
    fields: &[Field],
    local_fields: &[Field],
    column: &dyn Fn(usize) -> String,
) -> String {
    let key_count = spec.keys.len();
    let mut select = global_select(key_count, &spec.calls, fields, local_fields, column);
    select.extend(properties(fields, key_count + spec.calls.len(), spec.window_time));
    format!(
        "GlobalWindowAggregate({}window=[{}], select=[{}])",
        group_by(&spec.keys, column),
        spec.window.explain("slice_end=[$slice_end]"),
        select.join(", ")
    )
}

/// A group window of the older syntax as Flink prints it: `GroupWindowAggregate(groupBy=[…],
/// window=[TumblingGroupWindow('w$, ts, 60000)], properties=[w$start, w$end, w$rowtime,
/// w$proctime], select=[…, start('w$) AS w$start, …])`. Flink's operator computes all four
/// properties (three over processing time); weir's computes the ones the query reads, but
/// prints Flink's list.
fn group_window_label(
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

pub(super) fn one_phase_label(
    spec: &WindowAggregateSpec,
    fields: &[Field],
    column: &dyn Fn(usize) -> String,
) -> String {
    if let (true, weir_operators::WindowAggregateInput::Rows { time_col, processing_time }) =
        (spec.group_window, spec.input)
    {
        let window = (spec.window.kind, processing_time);
        return group_window_label(&spec.keys, &spec.calls, window, time_col, fields, column);
    }
    let mut select: Vec<String> = spec.keys.iter().map(|&k| column(k)).collect();
    for (c, f) in spec.calls.iter().zip(&fields[spec.keys.len()..]) {
        select.push(format!("{} AS {}", aggregate_text(c, column), f.name));
    }
    select.extend(properties(fields, spec.keys.len() + spec.calls.len(), spec.window_time));
    let time = match spec.input {
        weir_operators::WindowAggregateInput::Rows { time_col: t, .. } => time_col(column, t),
        weir_operators::WindowAggregateInput::Partials => "slice_end=[$slice_end]".to_string(),
    };
    format!(
        "WindowAggregate({}window=[{}], select=[{}])",
        group_by(&spec.keys, column),
        spec.window.explain(&time),
        select.join(", ")
    )
}

pub(super) fn session_label(
    spec: &weir_operators::SessionWindowAggregateSpec,
    fields: &[Field],
    column: &dyn Fn(usize) -> String,
) -> String {
    if spec.group_window {
        let window = (WindowKind::Session { gap: spec.gap }, false);
        return group_window_label(&spec.keys, &spec.calls, window, spec.time_col, fields, column);
    }
    let mut select: Vec<String> = spec.keys.iter().map(|&k| column(k)).collect();
    for (c, f) in spec.calls.iter().zip(&fields[spec.keys.len()..]) {
        select.push(format!("{} AS {}", aggregate_text(c, column), f.name));
    }
    select.extend(properties(fields, spec.keys.len() + spec.calls.len(), spec.window_time));
    let window = WindowSpec::new(WindowKind::Session { gap: spec.gap }, 0);
    let first = time_col(column, spec.time_col);
    format!(
        "WindowAggregate({}window=[{}], select=[{}])",
        group_by(&spec.keys, column),
        window.explain(&first),
        select.join(", ")
    )
}

/// An interval as Calcite prints a literal: `60000:INTERVAL MINUTE`.
fn interval_literal(millis: i64) -> String {
    let unit = match millis {
        m if m % 86_400_000 == 0 => "DAY",
        m if m % 3_600_000 == 0 => "HOUR",
        m if m % 60_000 == 0 => "MINUTE",
        _ => "SECOND",
    };
    format!("{millis}:INTERVAL {unit}")
}

/// `LogicalTableFunctionScan(invocation=[TUMBLE(TABLE(#0), DESCRIPTOR(_UTF-16LE'ts'), 60000:INTERVAL
/// MINUTE)], rowType=[RecordType(…)])`, as Flink's AST prints a window function.
pub(super) fn logical_function_label(plan: &Plan, input: &Plan, time_col: usize, window: &WindowSpec) -> String {
    let (name, sizes) = match window.kind {
        WindowKind::Tumble { size } => ("TUMBLE", vec![size]),
        WindowKind::Hop { size, slide } => ("HOP", vec![slide, size]),
        WindowKind::Cumulate { max_size, step } => ("CUMULATE", vec![step, max_size]),
        WindowKind::Session { gap } => ("SESSION", vec![gap]),
    };
    let mut args = vec!["TABLE(#0)".to_string(), format!("DESCRIPTOR(_UTF-16LE'{}')", input.fields[time_col].name)];
    args.extend(sizes.into_iter().map(interval_literal));
    if window.offset != 0 {
        args.push(interval_literal(window.offset));
    }
    let row_type: Vec<String> = plan
        .fields
        .iter()
        .map(|f| {
            let marker = match f.data_type.time_attribute {
                Some(TimeAttribute::Rowtime) => " *ROWTIME*",
                Some(TimeAttribute::Proctime) => " *PROCTIME*",
                None => "",
            };
            let mut ty = f.data_type.clone();
            ty.nullable = true;
            format!("{}{marker} {}", calcite_type(&ty), f.name)
        })
        .collect();
    format!(
        "LogicalTableFunctionScan(invocation=[{name}({})], rowType=[RecordType({})])",
        args.join(", "),
        row_type.join(", ")
    )
}

/// A window aggregate in the logical plan (after the rules): its grouping, window and calls.
pub(super) fn logical_aggregate_label(
    plan: &Plan,
    input: &Plan,
    keys: &[usize],
    calls: &[AggregateCall],
    window: &WindowSpec,
    time_col: usize,
) -> String {
    let dollar = |i: usize| format!("${i}");
    let mut items = vec![
        format!("group=[{{{}}}]", keys.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ")),
        format!("window=[{}]", window.explain(&format!("time_col=[{}]", input.fields[time_col].name))),
    ];
    for (c, f) in calls.iter().zip(&plan.fields[keys.len()..]) {
        items.push(format!("{}=[{}]", f.name, aggregate_text(c, &dollar).replace("(*)", "()")));
    }
    format!("LogicalWindowAggregate({})", items.join(", "))
}
