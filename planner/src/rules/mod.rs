//! Logical rewrites, each in its own file and named as Flink names the rule where it has one.
//! [`rewrite`] applies them in order; scan reuse runs after them, across the statements of a
//! statement set.
//!
//! | file | rule | what it does |
//! |---|---|---|
//! | [`filter_correlate`] | `FilterCorrelateRule` | a `WHERE` above `CROSS JOIN UNNEST(…)` filters the rows before they are multiplied |
//! | [`prune_columns`] | Calcite's field trimming, `PushProjectIntoTableSourceScanRule` | every node computes only the columns its consumers use; scans read only those |
//! | [`push_filter_into_scan`] | `PushFilterIntoTableSourceScanRule` (key filters) | a filter pinning the whole primary key makes a scan that reads single keys a point query |
//! | [`scan_changelog`] | `ScanTableSource#getChangelogMode` | each scan emits the changes its connector declares (inserts only when bounded) |
//! | [`window_zone`] | (Flink's shift time zone) | windows over a TIMESTAMP_LTZ follow `table.local-time-zone` |
//! | [`window_aggregate`] | `StreamPhysicalWindowAggregateRule` | a GROUP BY of `window_start` and `window_end` over a window table function is one window aggregate |
//! | [`rank`] | `FlinkLogicalRankRule` | a filter on the rank of `ROW_NUMBER() OVER (…)` sets the ranks it keeps (a Top-N) |
//! | [`window_rank`] | `StreamPhysicalWindowRankRule`, `StreamPhysicalWindowDeduplicateRule` | a Top-N partitioned by the windows its rows carry is a window Top-N, or a window deduplication |
//! | [`temporal_sort`] | `StreamPhysicalTemporalSortRule` | an `ORDER BY` without `LIMIT` must sort on an ascending time attribute first |
//! | [`time_join`] | `StreamPhysicalWindowJoinRule`, `StreamPhysicalIntervalJoinRule` | a join of windows on both windows' bounds is a window join (`table.optimizer.window-join-enabled`); one bounding the two rowtimes from both sides is an interval join |
//! | [`split_aggregate`] | `SplitAggregateRule` | `COUNT(DISTINCT x)` in two levels over buckets (`table.optimizer.distinct-agg.split.enabled`) |
//! | [`scan_reuse`] | `ScanReuser` | a table read by several INSERTs of a statement set is scanned once |

pub mod aggregate_checks;
pub mod filter_correlate;
pub mod prune_columns;
pub mod push_filter_into_scan;
pub mod rank;
pub mod scan_changelog;
pub mod scan_projection;
pub mod scan_reuse;
pub mod split_aggregate;
pub mod temporal_sort;
#[cfg(test)]
pub(crate) mod testing;
pub mod time_join;
pub mod window_aggregate;
pub mod window_rank;
pub mod window_zone;

use crate::error::Result;
use crate::options::PlannerOptions;
use crate::plan::Plan;

/// The logical rewrites every plan goes through: window time zones, window aggregates, Top-N ranges, column
/// pruning, window Top-N, interval and window joins, key filters into scans, the scans' changelogs, then the rules the
/// options enable.
///
/// # Errors
/// A table whose connector refuses its options.
pub fn rewrite(plan: Plan, options: &PlannerOptions) -> Result<Plan> {
    let plan = window_zone::window_zone(plan, options.local_time_zone);
    let plan = filter_correlate::filter_correlate(plan);
    let plan = window_aggregate::window_aggregate(plan)?;
    let plan = rank::rank(plan)?;
    // A batch job sorts anything; a stream only by time.
    if !options.batch {
        temporal_sort::temporal_sort(&plan)?;
    }
    let plan = prune_columns::prune_plan(plan);
    let plan = scan_projection::unproject_scans(plan)?;
    let plan = window_rank::window_rank(plan)?;
    let plan = time_join::time_join(plan, options.window_join_enabled)?;
    let plan = push_filter_into_scan::push_filter_into_scan(plan)?;
    // Conjuncts that chose partitions left their filters: the columns they read may go too.
    let plan = if push_filter_into_scan::chose_partitions(&plan) { prune_columns::prune_plan(plan) } else { plan };
    let plan = scan_changelog::scan_changelog(plan, options.batch)?;
    aggregate_checks::check_aggregates(&plan, options.batch)?;
    Ok(match options.split_distinct_buckets {
        Some(buckets) => split_aggregate::split_aggregate(plan, buckets),
        None => plan,
    })
}
