//! The planner's settings, each declared (key, type, default, description, check) beside the
//! code that reads it: the planner's options, the lookup joins', the state compatibility
//! check's and EXPLAIN's. The session lists them with the runtime's and its own for `SET`,
//! `RESET`, `SET;` and the documentation (`weir_session::settings`).

use weir_runtime::settings::{Settings, Spec};
use weir_runtime::RuntimeConfig;

use crate::{compat, lookup_options as lookup, options};

/// The planner's settings: its options, the lookup joins', the state compatibility check's and
/// EXPLAIN's.
pub static PLANNER_SETTINGS: [&Spec; 25] = [
    &options::RUNTIME_MODE.spec,
    &options::MINI_BATCH_ENABLED.spec,
    &options::MINI_BATCH_LATENCY.spec,
    &options::MINI_BATCH_SIZE.spec,
    &options::MINI_BATCH_MEMORY_BUDGET.spec,
    &options::AGG_PHASE_STRATEGY.spec,
    &options::STATE_TTL.spec,
    &options::LOCAL_TIME_ZONE.spec,
    &options::WINDOW_JOIN_ENABLED.spec,
    &options::DEDUPLICATE_COMPACT_CHANGES.spec,
    &options::OUTPUT_IDENTICAL.spec,
    &options::SPLIT_DISTINCT.spec,
    &options::SPLIT_DISTINCT_BUCKETS.spec,
    &options::SINK_KEYED_SHUFFLE.spec,
    &options::SINK_UPSERT_MATERIALIZE.spec,
    &options::SINK_REQUIRE_ON_CONFLICT.spec,
    &options::SINK_NOT_NULL_ENFORCER.spec,
    &options::SINK_TYPE_LENGTH_ENFORCER.spec,
    &lookup::BUFFER_CAPACITY.spec,
    &lookup::TIMEOUT.spec,
    &lookup::OUTPUT_MODE.spec,
    &lookup::KEY_ORDERED.spec,
    &compat::IGNORE_FILTER.spec,
    &compat::IGNORE_SINK.spec,
    &crate::options::EXPLAIN_FORMAT.spec,
];

/// The runtime's settings and the planner's: what a [`crate::phases::Planner`] reads.
pub fn planner_and_runtime() -> &'static [&'static Spec] {
    static ALL: std::sync::OnceLock<Vec<&'static Spec>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| RuntimeConfig::SETTINGS.iter().chain(&PLANNER_SETTINGS).copied().collect())
}

/// An empty set of settings over [`planner_and_runtime`].
pub fn planner_settings() -> Settings {
    Settings::new(planner_and_runtime())
}
