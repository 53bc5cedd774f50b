//! How EXPLAIN prints window table functions and window aggregates in logical plans (the
//! physical ones print themselves, in `physical/op/`).

use weir_operators::aggregate::AggregateCall;
use weir_operators::{WindowKind, WindowSpec};
use weir_runtime::types::TimeAttribute;

use super::calcite_type;
use crate::attributes::aggregate_text;
use crate::plan::Plan;

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
