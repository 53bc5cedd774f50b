//! How EXPLAIN prints window Top-N and window deduplication, as Flink does:
//! `WindowRank(window=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[1 min])],
//! rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=3], partitionBy=[], orderBy=[total
//! DESC], select=[…, w0$o0])`, `WindowDeduplicate(window=[…], keep=[FirstRow],
//! partitionKeys=[user_id], orderKey=[ts], order=[ROWTIME])`; and ranks in logical plans.

use weir_operators::ranking::{RankRange, RankType, SortKey};
use weir_operators::{AttachedWindow, WindowDeduplicateSpec, WindowRankSpec};

/// `TUMBLE(win_start=[window_start], win_end=[window_end], size=[1 min])`
fn attached(window: &AttachedWindow, column: &dyn Fn(usize) -> String) -> String {
    window.spec.explain(&format!("win_start=[{}], win_end=[{}]", column(window.start), column(window.end)))
}

fn columns(list: &[usize], column: &dyn Fn(usize) -> String) -> String {
    list.iter().map(|&c| column(c)).collect::<Vec<_>>().join(", ")
}

/// `total DESC, product ASC`
fn order_text(order: &[SortKey], column: &dyn Fn(usize) -> String) -> String {
    let key = |k: &SortKey| format!("{} {}", column(k.column), if k.descending { "DESC" } else { "ASC" });
    order.iter().map(key).collect::<Vec<_>>().join(", ")
}

fn range_text(range: RankRange) -> String {
    format!("rankStart={}, rankEnd={}", range.start, range.end)
}

/// The input's columns, then the rank as Flink names it (whatever the query calls it).
pub(super) fn window_rank_label(
    spec: &WindowRankSpec,
    rank_type: RankType,
    column: &dyn Fn(usize) -> String,
) -> String {
    let mut select: Vec<String> = (0..spec.input_arity).map(column).collect();
    if spec.output_rank {
        select.push(crate::binder::RANK_COLUMN.to_string());
    }
    format!(
        "WindowRank(window=[{}], rankType=[{}], rankRange=[{}], partitionBy=[{}], orderBy=[{}], select=[{}])",
        attached(&spec.window, column),
        rank_type.name(),
        range_text(spec.range),
        columns(&spec.partition, column),
        order_text(&spec.order, column),
        select.join(", ")
    )
}

pub(super) fn window_deduplicate_label(spec: &WindowDeduplicateSpec, column: &dyn Fn(usize) -> String) -> String {
    format!(
        "WindowDeduplicate(window=[{}], keep=[{}], partitionKeys=[{}], orderKey=[{}], order=[ROWTIME])",
        attached(&spec.window, column),
        if spec.keep_last { "LastRow" } else { "FirstRow" },
        columns(&spec.partition, column),
        column(spec.time_col)
    )
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
