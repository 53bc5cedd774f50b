//! How EXPLAIN prints window Top-N and window deduplication, as Flink does:
//! `WindowRank(window=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[1 min])],
//! rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=3], partitionBy=[], orderBy=[total
//! DESC], select=[…, w0$o0])`, `WindowDeduplicate(window=[…], keep=[FirstRow],
//! partitionKeys=[user_id], orderKey=[ts], order=[ROWTIME])`; Top-N (`Rank`, `SortLimit`,
//! `Limit`), `Deduplicate` and `TemporalSort`; and ranks in logical plans.

use weir_operators::ranking::{RankRange, RankType, SortKey};

use crate::attributes::{columns, order_text, range_text};

/// Batch mode's final rows: Flink's batch `Sort(orderBy=[…])` over rows that only insert;
/// else `FinalRows`, with the key the rows fold by and the order they leave in.
pub(super) fn final_rows_label(
    spec: &weir_operators::FinalRowsSpec,
    node: &crate::physical::PhysicalNode,
    column: &dyn Fn(usize) -> String,
) -> String {
    let sorts_inserts = node.inputs.first().is_some_and(|i| i.changelog.is_insert_only());
    if sorts_inserts && !spec.order.is_empty() {
        return format!("Sort(orderBy=[{}])", order_text(&spec.order, column));
    }
    let mut attributes = Vec::new();
    if let Some(key) = &spec.key {
        attributes.push(format!("key=[{}]", key.iter().map(|&k| column(k)).collect::<Vec<_>>().join(", ")));
    }
    if !spec.order.is_empty() {
        attributes.push(format!("orderBy=[{}]", order_text(&spec.order, column)));
    }
    match attributes.is_empty() {
        true => "FinalRows".to_string(),
        false => format!("FinalRows({})", attributes.join(", ")),
    }
}

/// A rank in the logical plan: `LogicalRank(rankType=[ROW_NUMBER], rankRange=[…],
/// partitionBy=[$0, $1], orderBy=[$3 DESC])` (no range before a filter set it).
pub(super) fn logical_rank_label(
    name: &str,
    rank_type: RankType,
    range: Option<RankRange>,
    partition: &[usize],
    order: &[SortKey],
) -> String {
    let dollar = |i: usize| format!("${i}");
    let range = range.map_or_else(|| "unbounded".to_string(), range_text);
    format!(
        "{name}(rankType=[{}], rankRange=[{range}], partitionBy=[{}], orderBy=[{}])",
        rank_type.name(),
        columns(partition, &dollar),
        order_text(order, &dollar)
    )
}
