//! The warnings EXPLAIN gives about a plan in Confluent's format ([`super::confluent`]), in
//! Confluent's words: an upsert sink whose primary key is not the query's upsert key, a window
//! GROUP BY with only one of `window_start` and `window_end`, a SESSION window without
//! PARTITION BY, and (for the whole query) highly state-intensive operators without a state TTL.

use crate::options::AdviceSettings;
use crate::physical::op::exchange::Exchange;
use crate::physical::op::global_group_aggregate::GlobalGroupAggregate;
use crate::physical::op::group_aggregate::GroupAggregate;
use crate::physical::op::session_window_aggregate::SessionWindowAggregate;
use crate::physical::op::session_window_table_function::SessionWindowTableFunction;
use crate::physical::op::sink::Sink;
use crate::physical::state::lineage_texts;
use crate::physical::PhysicalNode;

/// Flink's `PLAN_ADVICE` for `node` (its GroupAggregationAnalyzer): a one-phase group aggregate
/// whose calls could run in a local and a global phase, with the settings that would make it so.
pub(super) fn flink_advice(node: &PhysicalNode, settings: &AdviceSettings) -> Option<String> {
    let GroupAggregate(spec) = node.op::<GroupAggregate>()?;
    // Rows already hashed on the keys take no local phase.
    let exchanged = node.inputs.first().is_some_and(PhysicalNode::is::<Exchange>);
    let mergeable = spec.calls.iter().all(|c| crate::physical::aggregate::two_phase_call(c, spec.retracting));
    if !exchanged || !mergeable {
        return None;
    }
    let mut tuning = Vec::new();
    if settings.one_phase {
        tuning.push("'table.optimizer.agg-phase-strategy' to 'AUTO'");
    }
    if !settings.mini_batch_enabled {
        tuning.push("'table.exec.mini-batch.enabled' to 'true'");
    }
    if settings.mini_batch_latency_millis <= 0 {
        tuning.push("'table.exec.mini-batch.allow-latency' to a positive long value");
    }
    if settings.mini_batch_size <= 0 {
        tuning.push("'table.exec.mini-batch.size' to a positive long value");
    }
    Some(format!(
        "You might want to enable local-global two-phase optimization by configuring ({}).",
        tuning.join(", ")
    ))
}

/// The whole query's warning when an operator's state is `high` and no TTL is set.
pub(super) const HIGH_STATE_WITHOUT_TTL: &str = "Your query includes one or more highly state-intensive operators but \
does not set a time-to-live (TTL) value, which means that the system potentially needs to store an infinite amount of \
state. This can result in a DEGRADED statement and higher CFU consumption. If possible, change your query to use a \
different operator, or set a time-to-live (TTL) value. For more information, see \
https://cnfl.io/high_state_intensive_operators.";

/// `[a,b]`, or `null` without a key.
fn bracketed(key: Option<&[String]>) -> String {
    key.map_or("null".to_string(), |k| format!("[{}]", k.join(",")))
}

fn primary_key_mismatch(node: &PhysicalNode) -> Option<String> {
    let Sink { table, primary_key, materializer: Some(_), .. } = node.op::<Sink>()? else { return None };
    let pk: Vec<String> = primary_key.iter().map(|&k| table.schema.fields[k].name.clone()).collect();
    let upsert = super::confluent::sink_upsert_key(node);
    Some(format!(
        "The primary key does not match the upsert key derived from the query. If the primary key and upsert key \
         don't match, the system needs to add a state-intensive operation for correction. Please revisit the query \
         (upsert key: {}) or the table declaration for {} (primary key: {}). Grouping, partitioning, and joining \
         operations should reference the upsert keys of the source tables. For more information, see \
         https://cnfl.io/primary_vs_upsert_key.",
        bracketed(upsert.as_deref()),
        super::confluent::qualified_table(table),
        bracketed(Some(&pk)),
    ))
}

/// A regular aggregate grouping on `window_start` or `window_end` of a window table function,
/// but not on both.
fn window_bound_missing(node: &PhysicalNode) -> Option<String> {
    let keys = if let Some(GroupAggregate(spec)) = node.op::<GroupAggregate>() {
        spec.keys.len()
    } else if let Some(global) = node.op::<GlobalGroupAggregate>() {
        global.spec.key_count
    } else {
        return None;
    };
    let texts = lineage_texts(node);
    let keys = &texts[..keys.min(texts.len())];
    let has = |bound: &str| keys.iter().any(|k| k.ends_with(&format!(".{bound}")));
    let (only, missing) = match (has("window_start"), has("window_end")) {
        (true, false) => ("window_start", "window_end"),
        (false, true) => ("window_end", "window_start"),
        _ => return None,
    };
    Some(format!(
        "Your query contains only \"{only}\" in the GROUP BY clause, with no corresponding \"{missing}\". This means \
         that the query is considered a regular aggregation query and not a windowed aggregation, which can result \
         in unexpected, continuously updating output and higher CFU consumption. if you want a windowed aggregation \
         in your query, ensure that you include both \"window_start\" and \"window_end\" in the GROUP BY clause. For \
         more information, see https://cnfl.io/regular_vs_window_aggregation."
    ))
}

/// A SESSION window whose rows are not partitioned: one task takes them all.
fn session_without_partition(node: &PhysicalNode) -> Option<String> {
    let unpartitioned = if let Some(function) = node.op::<SessionWindowTableFunction>() {
        function.0.partition.is_empty()
    } else if let Some(SessionWindowAggregate(spec)) = node.op::<SessionWindowAggregate>() {
        spec.keys.is_empty()
    } else {
        false
    };
    unpartitioned.then(|| {
        "Your query uses a SESSION window without a PARTITION BY clause. This results in all data being processed \
         by a single, non-parallel task, which can create a significant bottleneck, leading to poor performance and \
         high resource consumption. To improve performance and enable parallel execution, specify a PARTITION BY key \
         in your SESSION window. For more information, see https://cnfl.io/session_without_partioning."
            .to_string()
    })
}

/// The warnings about `node` itself.
pub(super) fn node_warnings(node: &PhysicalNode) -> Vec<String> {
    [primary_key_mismatch(node), window_bound_missing(node), session_without_partition(node)]
        .into_iter()
        .flatten()
        .collect()
}
