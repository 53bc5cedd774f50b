//! How EXPLAIN prints window Top-N and window deduplication, as Flink does:
//! `WindowRank(window=[TUMBLE(win_start=[window_start], win_end=[window_end], size=[1 min])],
//! rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=3], partitionBy=[], orderBy=[total
//! DESC], select=[…, w0$o0])`, `WindowDeduplicate(window=[…], keep=[FirstRow],
//! partitionKeys=[user_id], orderKey=[ts], order=[ROWTIME])`; Top-N (`Rank`, `SortLimit`,
//! `Limit`), `Deduplicate` and `TemporalSort`; and ranks in logical plans.

use weir_operators::ranking::{RankRange, RankType, SortKey};
use weir_operators::{AttachedWindow, DeduplicateSpec, RankSpec, WindowDeduplicateSpec, WindowRankSpec};

use crate::physical::RankShape;

/// `TUMBLE(win_start=[window_start], win_end=[window_end], size=[1 min])`
fn attached(window: &AttachedWindow, column: &dyn Fn(usize) -> String) -> String {
    window.spec.explain(&format!("win_start=[{}], win_end=[{}]", column(window.start), column(window.end)))
}

pub(super) fn columns(list: &[usize], column: &dyn Fn(usize) -> String) -> String {
    list.iter().map(|&c| column(c)).collect::<Vec<_>>().join(", ")
}

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

/// `Rank(strategy=[…], rankType=[…], rankRange=[…], partitionBy=[…], orderBy=[…], select=[…])`,
/// `SortLimit(orderBy=[…], offset=[0], fetch=[3], strategy=[…])` or `Limit(offset=[0], fetch=[3])`.
pub(super) fn rank_label(spec: &RankSpec, shape: RankShape, column: &dyn Fn(usize) -> String) -> String {
    match shape {
        RankShape::Rank => {
            let mut select: Vec<String> = (0..spec.input_arity).map(column).collect();
            if spec.output_rank {
                select.push(crate::binder::RANK_COLUMN.to_string());
            }
            format!(
                "Rank(strategy=[{}], rankType=[{}], rankRange=[{}], partitionBy=[{}], orderBy=[{}], select=[{}])",
                spec.strategy(),
                spec.rank_type.name(),
                range_text(spec.range),
                columns(&spec.partition, column),
                order_text(&spec.order, column),
                select.join(", ")
            )
        }
        RankShape::SortLimit { offset, fetch } => format!(
            "SortLimit(orderBy=[{}], offset=[{offset}], fetch=[{fetch}], strategy=[{}])",
            order_text(&spec.order, column),
            spec.strategy()
        ),
        RankShape::Limit { offset, fetch } => format!("Limit(offset=[{offset}], fetch=[{fetch}])"),
    }
}

/// The execution plan's `Deduplicate(keep=[FirstRow], key=[user_id], order=[PROCTIME],
/// outputInsertOnly=[true])`; the physical plan shows the rank it is.
pub(super) fn deduplicate_label(
    spec: &DeduplicateSpec,
    time_col: usize,
    (append_only, execution): (bool, bool),
    column: &dyn Fn(usize) -> String,
) -> String {
    if execution {
        return format!(
            "Deduplicate(keep=[{}], key=[{}], order=[{}], outputInsertOnly=[{}])",
            if spec.keep_last { "LastRow" } else { "FirstRow" },
            columns(&spec.key, column),
            if spec.rowtime.is_some() { "ROWTIME" } else { "PROCTIME" },
            spec.output_insert_only
        );
    }
    let order = [SortKey::new(time_col, spec.keep_last)];
    // Flink marks a rowtime ordering: `orderBy=[ROWTIME ts DESC]`.
    let marked = |c: usize| if spec.rowtime.is_some() { format!("ROWTIME {}", column(c)) } else { column(c) };
    format!(
        "Rank(strategy=[{}], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=1], partitionBy=[{}], orderBy=[{}], select=[{}])",
        if append_only { "AppendFastStrategy" } else { "RetractStrategy" },
        columns(&spec.key, column),
        order_text(&order, &marked),
        (0..spec.input_arity).map(column).collect::<Vec<_>>().join(", ")
    )
}

/// `TemporalSort(orderBy=[ts ASC, id DESC])`
pub(super) fn temporal_sort_label(order: &[SortKey], column: &dyn Fn(usize) -> String) -> String {
    format!("TemporalSort(orderBy=[{}])", order_text(order, column))
}
