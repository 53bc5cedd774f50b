//! Aggregate calls Flink refuses where they stand, refused with Flink's messages (the registry,
//! `weir_operators::aggregate::registry`, says which):
//!
//! - a batch-only function in a streaming plan (`APPROX_COUNT_DISTINCT aggregate function does
//!   not support yet for streaming.`);
//! - a function without `merge` in a HOP or CUMULATE window, whose slices merge (`Could not find
//!   an implementation method 'merge' in class '…FirstValueAggFunction' …`).

use weir_operators::aggregate::registry::slice_merge_refusal;
use weir_operators::aggregate::AggregateCall;

use crate::error::{Error, Result};
use crate::plan::{Node, Plan};

/// Refuses the first aggregate call of `plan` that Flink refuses; `batch` for a batch plan.
///
/// # Errors
/// Flink's message naming the function.
pub fn check_aggregates(plan: &Plan, batch: bool) -> Result<()> {
    let calls: &[AggregateCall] = if let Node::Aggregate { calls, .. } = &plan.node {
        calls
    } else if let Node::WindowAggregate { calls, window, .. } = &plan.node {
        if !window.unshared() {
            if let Some(refusal) = calls.iter().find_map(slice_merge_refusal) {
                return Err(Error::Table(refusal));
            }
        }
        calls
    } else if let Node::OverAggregate { calls, .. } = &plan.node {
        calls
    } else {
        &[]
    };
    if let Some(call) = calls.iter().find(|c| !batch && c.kind.function().batch_only) {
        return Err(Error::Table(format!(
            "{} aggregate function does not support yet for streaming.",
            call.kind.function().name
        )));
    }
    plan.node.inputs().into_iter().try_for_each(|input| check_aggregates(input, batch))
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::Fixture;

    /// A batch-only aggregate is refused in a streaming plan with Flink's message, and planned
    /// in a batch one.
    #[test]
    fn a_batch_only_aggregate_is_refused_in_a_stream() {
        let f = Fixture::new("CREATE TABLE t (a INT, b STRING) WITH ('connector' = 'datagen');");
        let plan = f.bind("SELECT a, APPROX_COUNT_DISTINCT(b) FROM t GROUP BY a");
        let refused = super::check_aggregates(&plan, false).unwrap_err().to_string();
        assert!(
            refused.contains("APPROX_COUNT_DISTINCT aggregate function does not support yet for streaming."),
            "{refused}"
        );
        assert!(super::check_aggregates(&plan, true).is_ok());
        assert!(super::check_aggregates(&f.bind("SELECT a, COUNT(b) FROM t GROUP BY a"), false).is_ok());
    }
}
