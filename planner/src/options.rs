//! The planner's options (`SET 'key' = 'value'`), with Flink's keys, defaults and checks.
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `table.exec.mini-batch.enabled` | `false` | buffer aggregate input in mini-batches |
//! | `table.exec.mini-batch.allow-latency` | `0 ms` | mini-batch interval; must be > 0 when enabled |
//! | `table.exec.mini-batch.size` | `-1` | flush at this many buffered rows; `-1`: when the memory budget is full |
//! | `table.exec.mini-batch.memory-budget` | `64 mb` | weir: bytes a bundle may hold per subtask before it flushes |
//! | `table.optimizer.agg-phase-strategy` | `AUTO` | `AUTO`, `ONE_PHASE` or `TWO_PHASE` |
//! | `table.exec.state.ttl` | `0 ms` | forget a group not written for this long; 0 keeps state |
//! | `table.exec.agg.mini-batch.output-identical-enabled` | `false` | with TTL, emit unchanged mini-batch results |
//! | `table.optimizer.distinct-agg.split.enabled` | `false` | split `COUNT(DISTINCT ..)` aggregates over buckets |
//! | `table.optimizer.distinct-agg.split.bucket-num` | `1024` | buckets of the split distinct aggregation |
//! | `table.exec.sink.keyed-shuffle` | `AUTO` | `NONE`, `AUTO` or `FORCE`: hash rows into a primary-key sink on the key |
//! | `table.exec.sink.upsert-materialize` | `AUTO` | `NONE`, `AUTO` or `FORCE`: keep each key's rows before an upsert sink |
//! | `table.exec.sink.require-on-conflict` | `true` | an upsert key other than the sink's key needs `ON CONFLICT` |
//! | `table.exec.sink.not-null-enforcer` | `ERROR` | `ERROR` or `DROP` a row with NULL in a NOT NULL sink column |
//! | `table.exec.sink.type-length-enforcer` | `IGNORE` | `IGNORE`, `TRIM_PAD` or `ERROR` on strings that do not fit their column |
//!
//! The lookup join options are in [`crate::lookup_options`].

use std::collections::BTreeMap;

use weir_operators::{LengthEnforcement, NotNullEnforcement};
use weir_runtime::config::parse_duration;
use weir_runtime::Error as RuntimeError;

use crate::error::{Error, Result};
use crate::lookup_options::{AsyncLookupSettings, LookupHint};

/// How aggregates are split into phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggPhaseStrategy {
    /// Two phases when every aggregate can be merged (and mini-batch is on).
    Auto,
    /// Always one phase.
    OnePhase,
    /// Two phases whenever they can run.
    TwoPhase,
}

/// `table.exec.sink.keyed-shuffle`: whether rows into a sink with a primary key are hashed on
/// the key, so that every change of a key reaches the same sink subtask in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkKeyedShuffle {
    /// Never hash.
    None,
    /// Hash when the sink's parallelism differs from its input's and is not 1.
    Auto,
    /// Hash whenever the sink's parallelism is not 1.
    Force,
}

impl SinkKeyedShuffle {
    /// Whether rows from an input at `input_parallelism` into a sink at `sink_parallelism` are
    /// hashed on the primary key (never without one).
    pub fn hashes(self, has_primary_key: bool, sink_parallelism: usize, input_parallelism: usize) -> bool {
        has_primary_key
            && sink_parallelism != 1
            && match self {
                SinkKeyedShuffle::None => false,
                SinkKeyedShuffle::Auto => sink_parallelism != input_parallelism,
                SinkKeyedShuffle::Force => true,
            }
    }
}

/// `table.exec.sink.upsert-materialize`: whether a SinkMaterializer keeps the rows of each
/// primary key before an upsert sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpsertMaterialize {
    /// Never.
    None,
    /// When the query's changes are not keyed by a subset of the sink's primary key.
    Auto,
    /// Whenever the sink has a primary key and takes upserts.
    Force,
}

/// Mini-batch settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MiniBatch {
    /// `allow-latency` in milliseconds.
    pub interval_millis: i64,
    /// `size`, when positive.
    pub size: Option<usize>,
    /// The memory budget of a bundle, in bytes.
    pub memory_budget: usize,
}

/// The options the planner reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannerOptions {
    /// `'execution.runtime-mode' = 'batch'`: scans read what their tables hold now and end.
    pub batch: bool,
    /// Set when `table.exec.mini-batch.enabled` is true.
    pub mini_batch: Option<MiniBatch>,
    /// `table.optimizer.agg-phase-strategy`
    pub agg_phase_strategy: AggPhaseStrategy,
    /// `table.exec.state.ttl` in milliseconds.
    pub state_ttl_millis: i64,
    /// `table.exec.agg.mini-batch.output-identical-enabled`
    pub output_identical: bool,
    /// `table.optimizer.distinct-agg.split.bucket-num`, when the split is enabled.
    pub split_distinct_buckets: Option<i32>,
    /// `table.exec.sink.keyed-shuffle`
    pub sink_keyed_shuffle: SinkKeyedShuffle,
    /// `table.exec.sink.upsert-materialize`
    pub upsert_materialize: UpsertMaterialize,
    /// `table.exec.sink.require-on-conflict`
    pub require_on_conflict: bool,
    /// `table.exec.sink.not-null-enforcer`
    pub not_null_enforcer: NotNullEnforcement,
    /// `table.exec.sink.type-length-enforcer`; `None` for `IGNORE`.
    pub type_length_enforcer: Option<LengthEnforcement>,
    /// `table.exec.async-lookup.*`
    pub async_lookup: AsyncLookupSettings,
    /// The statement's `LOOKUP` hints.
    pub lookup_hints: Vec<LookupHint>,
    /// Tables whose connector only looks rows up synchronously.
    pub sync_lookup_tables: std::collections::BTreeSet<String>,
}

pub(crate) fn invalid(key: &str, value: &str, expected: &str) -> Error {
    RuntimeError::InvalidOption { key: key.to_string(), value: value.to_string(), expected: expected.to_string() }
        .into()
}

pub(crate) fn boolean(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(invalid(key, value, "'true' or 'false'")),
    }
}

fn millis(key: &str, value: &str) -> Result<i64> {
    Ok(parse_duration(key, value)?.as_millis() as i64)
}

/// Bytes of a memory size such as `64 mb`, `512kb`, `1 gb` or a bare number of bytes.
fn bytes(key: &str, value: &str) -> Result<usize> {
    let text = value.trim().to_ascii_lowercase();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let factor: usize = match unit.trim() {
        "" | "b" | "bytes" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(invalid(key, value, "a memory size such as '64 mb'")),
    };
    number
        .parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
        .map(|n| n * factor)
        .ok_or_else(|| invalid(key, value, "a memory size such as '64 mb'"))
}

/// Checks one option's value when it is set; keys weir does not read are accepted, as Flink does.
///
/// # Errors
/// A value of the wrong form, naming the key and what it accepts.
pub fn validate(key: &str, value: &str) -> Result<()> {
    if let Some(checked) = crate::lookup_options::validate(key, value) {
        return checked;
    }
    match key {
        "table.exec.mini-batch.enabled"
        | "table.exec.sink.require-on-conflict"
        | "table.exec.agg.mini-batch.output-identical-enabled"
        | "table.optimizer.distinct-agg.split.enabled" => boolean(key, value).map(|_| ()),
        "table.exec.mini-batch.allow-latency" | "table.exec.state.ttl" => millis(key, value).map(|_| ()),
        "table.exec.mini-batch.size" => match value.trim().parse::<i64>() {
            Ok(n) if n == -1 || n > 0 => Ok(()),
            _ => Err(invalid(key, value, "a positive number of rows, or -1 for the memory budget")),
        },
        "table.exec.mini-batch.memory-budget" => bytes(key, value).map(|_| ()),
        "table.optimizer.agg-phase-strategy" => strategy(key, value).map(|_| ()),
        "table.optimizer.distinct-agg.split.bucket-num" => positive(key, value).map(|_| ()),
        "table.exec.sink.keyed-shuffle" => keyed_shuffle(key, value).map(|_| ()),
        "table.exec.sink.not-null-enforcer" => not_null_enforcer(key, value).map(|_| ()),
        "table.exec.sink.upsert-materialize" => upsert_materialize(key, value).map(|_| ()),
        "table.exec.sink.type-length-enforcer" => type_length_enforcer(key, value).map(|_| ()),
        "execution.runtime-mode" => runtime_mode(key, value).map(|_| ()),
        _ => Ok(()),
    }
}

fn positive(key: &str, value: &str) -> Result<i32> {
    value.trim().parse::<i32>().ok().filter(|n| *n > 0).ok_or_else(|| invalid(key, value, "a positive number"))
}

/// The value of an enumerated option (case-insensitive, as Flink reads enums), or an error
/// listing the names it accepts.
fn choice<T: Copy>(key: &str, value: &str, choices: &[(&str, T)]) -> Result<T> {
    let wanted = value.trim().to_ascii_uppercase();
    choices.iter().find(|(name, _)| *name == wanted).map(|(_, v)| *v).ok_or_else(|| {
        let names: Vec<String> = choices.iter().map(|(name, _)| format!("'{name}'")).collect();
        invalid(key, value, &format!("one of {}", names.join(", ")))
    })
}

/// `execution.runtime-mode`: whether it is `batch` (`streaming` and `automatic` run as streaming).
fn runtime_mode(key: &str, value: &str) -> Result<bool> {
    choice(key, value, &[("STREAMING", false), ("BATCH", true), ("AUTOMATIC", false)])
}

fn keyed_shuffle(key: &str, value: &str) -> Result<SinkKeyedShuffle> {
    use SinkKeyedShuffle::*;
    choice(key, value, &[("NONE", None), ("AUTO", Auto), ("FORCE", Force)])
}

fn upsert_materialize(key: &str, value: &str) -> Result<UpsertMaterialize> {
    use UpsertMaterialize::*;
    choice(key, value, &[("NONE", None), ("AUTO", Auto), ("FORCE", Force)])
}

fn not_null_enforcer(key: &str, value: &str) -> Result<NotNullEnforcement> {
    choice(key, value, &[("ERROR", NotNullEnforcement::Error), ("DROP", NotNullEnforcement::Drop)])
}

fn type_length_enforcer(key: &str, value: &str) -> Result<Option<LengthEnforcement>> {
    let choices =
        [("IGNORE", None), ("TRIM_PAD", Some(LengthEnforcement::TrimPad)), ("ERROR", Some(LengthEnforcement::Error))];
    choice(key, value, &choices)
}

fn strategy(key: &str, value: &str) -> Result<AggPhaseStrategy> {
    use AggPhaseStrategy::*;
    choice(key, value, &[("AUTO", Auto), ("ONE_PHASE", OnePhase), ("TWO_PHASE", TwoPhase)])
}

impl PlannerOptions {
    /// The options from a session's `SET` values.
    ///
    /// # Errors
    /// Malformed values, and mini-batch enabled without a positive latency (Flink's
    /// `MiniBatch Latency must be greater than 0 ms.`).
    pub fn from_settings(settings: &BTreeMap<String, String>) -> Result<Self> {
        let get = |key: &str| settings.get(key).map(String::as_str);
        let enabled =
            get("table.exec.mini-batch.enabled").map(|v| boolean("table.exec.mini-batch.enabled", v)).transpose()?;
        let mini_batch = if enabled == Some(true) {
            let latency_key = "table.exec.mini-batch.allow-latency";
            let interval_millis = get(latency_key).map(|v| millis(latency_key, v)).transpose()?.unwrap_or(0);
            if interval_millis <= 0 {
                return Err(Error::Configuration("MiniBatch Latency must be greater than 0 ms.".into()));
            }
            let size = match get("table.exec.mini-batch.size") {
                Some(v) => {
                    validate("table.exec.mini-batch.size", v)?;
                    v.trim().parse::<i64>().ok().filter(|n| *n > 0).map(|n| n as usize)
                }
                None => None,
            };
            let budget_key = "table.exec.mini-batch.memory-budget";
            let memory_budget = get(budget_key).map(|v| bytes(budget_key, v)).transpose()?.unwrap_or(64 << 20);
            Some(MiniBatch { interval_millis, size, memory_budget })
        } else {
            None
        };
        let strategy_key = "table.optimizer.agg-phase-strategy";
        let agg_phase_strategy =
            get(strategy_key).map(|v| strategy(strategy_key, v)).transpose()?.unwrap_or(AggPhaseStrategy::Auto);
        let ttl_key = "table.exec.state.ttl";
        let state_ttl_millis = get(ttl_key).map(|v| millis(ttl_key, v)).transpose()?.unwrap_or(0);
        let identical_key = "table.exec.agg.mini-batch.output-identical-enabled";
        let output_identical = get(identical_key).map(|v| boolean(identical_key, v)).transpose()?.unwrap_or(false);
        let split_key = "table.optimizer.distinct-agg.split.enabled";
        let split = get(split_key).map(|v| boolean(split_key, v)).transpose()?.unwrap_or(false);
        let buckets_key = "table.optimizer.distinct-agg.split.bucket-num";
        let buckets = get(buckets_key).map(|v| positive(buckets_key, v)).transpose()?.unwrap_or(1024);
        let split_distinct_buckets = split.then_some(buckets);
        let shuffle_key = "table.exec.sink.keyed-shuffle";
        let sink_keyed_shuffle =
            get(shuffle_key).map(|v| keyed_shuffle(shuffle_key, v)).transpose()?.unwrap_or(SinkKeyedShuffle::Auto);
        let materialize_key = "table.exec.sink.upsert-materialize";
        let upsert_materialize = get(materialize_key)
            .map(|v| upsert_materialize(materialize_key, v))
            .transpose()?
            .unwrap_or(UpsertMaterialize::Auto);
        let require_key = "table.exec.sink.require-on-conflict";
        let require_on_conflict = get(require_key).map(|v| boolean(require_key, v)).transpose()?.unwrap_or(true);
        let not_null_key = "table.exec.sink.not-null-enforcer";
        let not_null_enforcer = get(not_null_key)
            .map(|v| not_null_enforcer(not_null_key, v))
            .transpose()?
            .unwrap_or(NotNullEnforcement::Error);
        let length_key = "table.exec.sink.type-length-enforcer";
        let type_length_enforcer = get(length_key).map(|v| type_length_enforcer(length_key, v)).transpose()?.flatten();
        let mode_key = "execution.runtime-mode";
        let batch = get(mode_key).map(|v| runtime_mode(mode_key, v)).transpose()?.unwrap_or(false);
        Ok(PlannerOptions {
            batch,
            mini_batch,
            agg_phase_strategy,
            state_ttl_millis,
            output_identical,
            split_distinct_buckets,
            sink_keyed_shuffle,
            upsert_materialize,
            require_on_conflict,
            not_null_enforcer,
            type_length_enforcer,
            async_lookup: AsyncLookupSettings::from_settings(settings)?,
            lookup_hints: Vec::new(),
            sync_lookup_tables: Default::default(),
        })
    }
}

impl Default for PlannerOptions {
    fn default() -> Self {
        PlannerOptions {
            batch: false,
            mini_batch: None,
            agg_phase_strategy: AggPhaseStrategy::Auto,
            state_ttl_millis: 0,
            output_identical: false,
            split_distinct_buckets: None,
            sink_keyed_shuffle: SinkKeyedShuffle::Auto,
            upsert_materialize: UpsertMaterialize::Auto,
            require_on_conflict: true,
            not_null_enforcer: NotNullEnforcement::Error,
            type_length_enforcer: None,
            async_lookup: AsyncLookupSettings::default(),
            lookup_hints: Vec::new(),
            sync_lookup_tables: Default::default(),
        }
    }
}
