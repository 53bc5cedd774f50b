//! Logical rewrites, each in its own file and named as Flink names the rule where it has one.
//! [`rewrite`] applies them in order; scan reuse runs after them, across the statements of a
//! statement set.
//!
//! | file | rule | what it does |
//! |---|---|---|
//! | [`prune_columns`] | Calcite's field trimming, `PushProjectIntoTableSourceScanRule` | every node computes only the columns its consumers use; scans read only those |
//! | [`managed_scan`] | `PushFilterIntoTableSourceScanRule` (key) | a managed table's scan emits its merge engine's changes, and a filter pinning the primary key makes it a point query |
//! | [`split_aggregate`] | `SplitAggregateRule` | `COUNT(DISTINCT x)` in two levels over buckets (`table.optimizer.distinct-agg.split.enabled`) |
//! | [`scan_reuse`] | `ScanReuser` | a table read by several INSERTs of a statement set is scanned once |

pub mod managed_scan;
pub mod prune_columns;
pub mod scan_reuse;
pub mod split_aggregate;

use crate::error::Result;
use crate::options::PlannerOptions;
use crate::plan::Plan;

/// The logical rewrites every plan goes through: column pruning, managed table scans, then the
/// rules the options enable.
///
/// # Errors
/// A managed table whose options the merge engines reject.
pub fn rewrite(plan: Plan, options: &PlannerOptions) -> Result<Plan> {
    let plan = managed_scan::managed_scans(prune_columns::prune_plan(plan), options.batch)?;
    Ok(match options.split_distinct_buckets {
        Some(buckets) => split_aggregate::split_aggregate(plan, buckets),
        None => plan,
    })
}
