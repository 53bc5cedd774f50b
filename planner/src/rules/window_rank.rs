//! A Top-N whose partition holds both `window_start` and `window_end` of the windows its input
//! rows carry (a window table function's or a window aggregate's output, through Calcs that keep
//! both) is a window Top-N (Flink's `StreamPhysicalWindowRankRule`): each window ranked once,
//! when the watermark passes its end. One that keeps rank 1 alone, ordered by the rowtime and not
//! selecting the rank, is a window deduplication (`StreamPhysicalWindowDeduplicateRule`): the
//! first row per key and window, or the last when ordered descending. Other Top-Ns keep their
//! partition: a deduplication when they keep the first row by one time attribute
//! (`StreamPhysicalDeduplicateRule`), else a `Rank`.

use weir_operators::expr::Expr;
use weir_operators::ranking::{RankRange, RankType, SortKey};
use weir_operators::AttachedWindow;
use weir_runtime::types::TimeAttribute;

use crate::error::{Error, Result};
use crate::plan::{Node, Plan};

/// The plan with every window Top-N and window deduplication recognised.
///
/// # Errors
/// A window Top-N over updating rows, a window deduplication ordered by processing time.
pub fn window_rank(plan: Plan) -> Result<Plan> {
    let Plan { node, fields } = plan;
    let node = node.try_map_inputs(window_rank)?;
    let Node::Rank { input, partition, order, rank_type, range: Some(range), output_rank } = node else {
        return Ok(Plan { node, fields });
    };
    let window = attached_window(&input).filter(|w| partition.contains(&w.start) && partition.contains(&w.end));
    let Some(window) = window else {
        return Ok(Plan { node: deduplicate_or_rank(input, partition, order, rank_type, range, output_rank), fields });
    };
    if of_processing_time(&input) {
        let what = if first_row(rank_type, range, output_rank) { "Deduplication" } else { "TopN" };
        return Err(Error::Table(format!("Processing time Window {what} is not supported yet.")));
    }
    if let Some(node) = input.updating_node() {
        return Err(Error::Table(format!(
            "WindowRank doesn't support consuming update and delete changes which is produced by node {node}"
        )));
    }
    let partition: Vec<usize> = partition.into_iter().filter(|&p| p != window.start && p != window.end).collect();
    let time = match order.as_slice() {
        [key] if first_row(rank_type, range, output_rank) => {
            input.fields[key.column].data_type.time_attribute.map(|t| (key, t))
        }
        _ => None,
    };
    let node = match time {
        Some((key, TimeAttribute::Rowtime)) => {
            Node::WindowDeduplicate { input, partition, time_col: key.column, keep_last: key.descending, window }
        }
        Some((_, TimeAttribute::Proctime)) => {
            return Err(Error::Table("Processing time Window Deduplication is not supported yet.".into()))
        }
        None => Node::WindowRank { input, partition, order, rank_type, range, output_rank, window },
    };
    Ok(Plan { node, fields })
}

/// A Top-N over other partitions: a deduplication when it keeps the first row alone ordered by
/// one time attribute (Flink's `canConvertToDeduplicate`), else a rank.
fn deduplicate_or_rank(
    input: Box<Plan>,
    partition: Vec<usize>,
    order: Vec<SortKey>,
    rank_type: RankType,
    range: RankRange,
    output_rank: bool,
) -> Node {
    match order.as_slice() {
        [key]
            if first_row(rank_type, range, output_rank)
                && input.fields[key.column].data_type.time_attribute.is_some() =>
        {
            Node::Deduplicate { input, partition, time_col: key.column, keep_last: key.descending }
        }
        _ => Node::Rank { input, partition, order, rank_type, range: Some(range), output_rank },
    }
}

/// Whether a rank keeps the first row alone without selecting its rank (a deduplication, when
/// ordered by a time attribute).
fn first_row(rank_type: RankType, range: RankRange, output_rank: bool) -> bool {
    rank_type == RankType::RowNumber && range == RankRange { start: 1, end: 1 } && !output_rank
}

/// Whether the windows the rows of `plan` carry are of processing time.
fn of_processing_time(plan: &Plan) -> bool {
    let proctime = |input: &Plan, time_col: usize| {
        input.fields[time_col].data_type.time_attribute == Some(TimeAttribute::Proctime)
    };
    match &plan.node {
        Node::WindowTableFunction { input, time_col, .. } | Node::WindowAggregate { input, time_col, .. } => {
            proctime(input, *time_col)
        }
        Node::Calc { input, .. } | Node::WindowRank { input, .. } | Node::WindowDeduplicate { input, .. } => {
            of_processing_time(input)
        }
        _ => false,
    }
}

/// Where the rows of `plan` carry their window, when they do.
pub(crate) fn attached_window(plan: &Plan) -> Option<AttachedWindow> {
    match &plan.node {
        Node::WindowTableFunction { input, window, .. } => {
            let arity = input.fields.len();
            Some(AttachedWindow { start: arity, end: arity + 1, spec: *window })
        }
        Node::WindowAggregate { keys, calls, window, .. } => {
            let at = keys.len() + calls.len();
            Some(AttachedWindow { start: at, end: at + 1, spec: *window })
        }
        Node::WindowRank { window, .. } | Node::WindowDeduplicate { window, .. } => Some(*window),
        Node::Calc { input, projections, .. } => {
            let below = attached_window(input)?;
            let find = |column: usize| {
                projections.iter().position(|p| matches!(p, Expr::Column { index, .. } if *index == column))
            };
            Some(AttachedWindow { start: find(below.start)?, end: find(below.end)?, spec: below.spec })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{before_after, Fixture};

    /// The plan the rules before this one leave for `sql`.
    fn ranked(sql: &str) -> crate::plan::Plan {
        crate::rules::rank::rank(Fixture::bids().bind(sql)).unwrap()
    }

    /// A Top-N partitioned by both window columns is a window Top-N.
    #[test]
    fn a_top_n_per_window_is_a_window_rank() {
        let plan = ranked(
            "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) AS rn \
             FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) WHERE rn <= 3",
        );
        let after = super::window_rank(plan.clone()).unwrap();
        expect![[r#"
            before:
            LogicalProject(item=[$0], price=[$1], ts=[$2], window_start=[$3], window_end=[$4], window_time=[$5], rn=[$6])
            +- LogicalRank(rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=3], partitionBy=[$3, $4], orderBy=[$1 DESC])
               +- LogicalTableFunctionScan(invocation=[TUMBLE(TABLE(#0), DESCRIPTOR(_UTF-16LE'ts'), 60000:INTERVAL MINUTE)], rowType=[RecordType(VARCHAR(2147483647) item, INTEGER price, TIMESTAMP(3) *ROWTIME* ts, TIMESTAMP(3) window_start, TIMESTAMP(3) window_end, TIMESTAMP(3) *ROWTIME* window_time)])
                  +- LogicalWatermarkAssigner(rowtime=[ts], watermark=[$2])
                     +- LogicalTableScan(table=[[default_catalog, default_database, bids]], project=[item, price, ts], changelogMode=[I])
            after:
            LogicalProject(item=[$0], price=[$1], ts=[$2], window_start=[$3], window_end=[$4], window_time=[$5], rn=[$6])
            +- LogicalWindowRank(rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=3], partitionBy=[], orderBy=[$1 DESC])
               +- LogicalTableFunctionScan(invocation=[TUMBLE(TABLE(#0), DESCRIPTOR(_UTF-16LE'ts'), 60000:INTERVAL MINUTE)], rowType=[RecordType(VARCHAR(2147483647) item, INTEGER price, TIMESTAMP(3) *ROWTIME* ts, TIMESTAMP(3) window_start, TIMESTAMP(3) window_end, TIMESTAMP(3) *ROWTIME* window_time)])
                  +- LogicalWatermarkAssigner(rowtime=[ts], watermark=[$2])
                     +- LogicalTableScan(table=[[default_catalog, default_database, bids]], project=[item, price, ts], changelogMode=[I])
        "#]].assert_eq(&before_after(&plan, &after));
    }

    /// Rank 1 alone, ordered by the rowtime and not selected, is a window deduplication.
    #[test]
    fn the_first_row_per_window_is_a_window_deduplication() {
        let plan = ranked(
            "SELECT item, price, window_start FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY item, window_start, \
             window_end ORDER BY ts) AS rn FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) \
             WHERE rn = 1",
        );
        let after = super::window_rank(plan.clone()).unwrap();
        expect![[r#"
            before:
            LogicalProject(item=[$0], price=[$1], window_start=[$3])
            +- LogicalRank(rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=1], partitionBy=[$0, $3, $4], orderBy=[$2 ASC])
               +- LogicalTableFunctionScan(invocation=[TUMBLE(TABLE(#0), DESCRIPTOR(_UTF-16LE'ts'), 60000:INTERVAL MINUTE)], rowType=[RecordType(VARCHAR(2147483647) item, INTEGER price, TIMESTAMP(3) *ROWTIME* ts, TIMESTAMP(3) window_start, TIMESTAMP(3) window_end, TIMESTAMP(3) *ROWTIME* window_time)])
                  +- LogicalWatermarkAssigner(rowtime=[ts], watermark=[$2])
                     +- LogicalTableScan(table=[[default_catalog, default_database, bids]], project=[item, price, ts], changelogMode=[I])
            after:
            LogicalProject(item=[$0], price=[$1], window_start=[$3])
            +- LogicalWindowDeduplicate(keep=[FirstRow], partitionKeys=[$0], orderKey=[$2])
               +- LogicalTableFunctionScan(invocation=[TUMBLE(TABLE(#0), DESCRIPTOR(_UTF-16LE'ts'), 60000:INTERVAL MINUTE)], rowType=[RecordType(VARCHAR(2147483647) item, INTEGER price, TIMESTAMP(3) *ROWTIME* ts, TIMESTAMP(3) window_start, TIMESTAMP(3) window_end, TIMESTAMP(3) *ROWTIME* window_time)])
                  +- LogicalWatermarkAssigner(rowtime=[ts], watermark=[$2])
                     +- LogicalTableScan(table=[[default_catalog, default_database, bids]], project=[item, price, ts], changelogMode=[I])
        "#]].assert_eq(&before_after(&plan, &after));
    }
}
