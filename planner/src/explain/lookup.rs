//! The EXPLAIN line of a lookup join, as Flink's `CommonPhysicalLookupJoin.explainTerms` writes it:
//! `LookupJoin(table=[…], joinType=[…], lookup=[id=a], where=[…], joinCondition=[…],
//! select=[…], async=[ORDERED, KEY_ORDERED: false, 180000ms, 100], retry=[…])`.

use weir_operators::expr::Expr;
use weir_operators::LookupJoinSpec;
use weir_runtime::Field;

use super::expression;
use crate::catalog::Catalog;
use crate::lookup_options::LookupExecution;

/// Output names made unique as Calcite does: a repeated name gets `0`, `1`, … appended.
pub(super) fn unique_names(fields: &[Field]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for f in fields {
        let mut name = f.name.clone();
        let mut n = 0;
        while names.contains(&name) {
            name = format!("{}{n}", f.name);
            n += 1;
        }
        names.push(name);
    }
    names
}

/// The lookup join's label (`dim_keys` pair with `spec.keys`); `infix` as for other nodes.
pub(super) fn lookup_join_label(
    table: &weir_connectors::TableDescriptor,
    dim_keys: &[usize],
    spec: &LookupJoinSpec,
    execution: &LookupExecution,
    input: &[Field],
    output: &[Field],
    infix: bool,
) -> String {
    let names = unique_names(output);
    let input_column = |i: usize| names.get(i).cloned().unwrap_or(format!("${i}"));
    let dim = &table.schema.fields;
    let dim_column = |i: usize| names.get(input.len() + i).cloned().unwrap_or_else(|| dim[i].name.clone());
    let mut sorted: Vec<(usize, &Expr)> = dim_keys.iter().copied().zip(&spec.keys).collect();
    sorted.sort_by_key(|(d, _)| *d);
    let lookup: Vec<String> =
        sorted.iter().map(|(d, e)| format!("{}={}", dim[*d].name, expression(e, &input_column, infix))).collect();
    let mut text = format!(
        "LookupJoin(table=[{}], joinType=[{}], lookup=[{}]",
        Catalog::qualified(&table.name),
        spec.join_type.flink_name(),
        lookup.join(", ")
    );
    if let Some(filter) = &spec.dim_filter {
        text.push_str(&format!(", where=[{}]", expression(filter, &dim_column, infix)));
    }
    if let Some(condition) = &spec.join_condition {
        text.push_str(&format!(", joinCondition=[{}]", expression(condition, &input_column, infix)));
    }
    text.push_str(&format!(", select=[{}]", names.join(", ")));
    if let Some(options) = &execution.async_options {
        text.push_str(&format!(", async=[{options}]"));
    }
    if let Some(retry) = &execution.retry {
        text.push_str(&format!(
            ", retry=[lookup_miss, FIXED_DELAY, {}ms, {}]",
            retry.delay.as_millis(),
            retry.max_attempts
        ));
    }
    text.push(')');
    text
}
