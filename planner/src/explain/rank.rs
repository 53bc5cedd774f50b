//! How EXPLAIN prints a rank in a logical plan (the physical ranks print themselves, in
//! `physical/op/`).

use weir_operators::ranking::{RankRange, RankType, SortKey};

use crate::attributes::{columns, order_text, range_text};

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
