//! The planner's options (`SET 'key' = 'value'`), with Flink's keys, defaults and checks: each
//! is a [`Setting`] declared here, read typed by [`PlannerOptions::from_settings`]. The lookup
//! join options are in [`crate::lookup_options`]; the planner's settings are listed in
//! [`crate::settings::PLANNER_SETTINGS`], every setting weir reads in `weir_session::settings`.

use std::time::Duration;

use weir_operators::{LengthEnforcement, NotNullEnforcement};
use weir_runtime::settings::{Setting, Settings};
use weir_runtime::time_zone::TimeZone;
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
    /// `table.exec.source.idle-timeout`, when not zero: a source split (a Kafka partition)
    /// without records this long holds no watermark back.
    pub source_idle_timeout: Option<Duration>,
    /// `pipeline.auto-watermark-interval` in milliseconds: how a WatermarkAssigner sends its
    /// watermarks on (see [`weir_operators::WatermarkAssignerOperator`]).
    pub watermark_interval_millis: i64,
    /// `weir.explain.format` is `CONFLUENT`.
    pub confluent_explain: bool,
    /// The settings `EXPLAIN PLAN_ADVICE` names.
    pub advice: AdviceSettings,
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
    /// The statement's `STATE_TTL` hints.
    pub state_ttl_hints: Vec<crate::hints::StateTtlHint>,
    /// Tables whose connector only looks rows up synchronously.
    pub sync_lookup_tables: std::collections::BTreeSet<String>,
    /// `table.local-time-zone`
    pub local_time_zone: TimeZone,
    /// `table.optimizer.window-join-enabled`
    pub window_join_enabled: bool,
    /// `table.exec.deduplicate.mini-batch.compact-changes-enabled`
    pub deduplicate_compact_changes: bool,
}

/// The zone `table.local-time-zone` names (`default`: the machine's).
///
/// # Errors
/// A value Flink refuses, with Flink's message.
fn local_time_zone(text: &str) -> Result<TimeZone> {
    if text.trim().eq_ignore_ascii_case("default") {
        return Ok(TimeZone::system());
    }
    TimeZone::parse(text).ok_or_else(|| {
        Error::Configuration(
            "Invalid time zone. The value should be a Time Zone Database (TZDB) ID such as 'America/Los_Angeles' \
             to include daylight saving time. Fixed offsets are supported using 'GMT-03:00' or 'GMT+03:00'. Or use \
             'UTC' without time zone and daylight saving time."
                .to_string(),
        )
    })
}

/// `table.exec.mini-batch.enabled`
pub static MINI_BATCH_ENABLED: Setting<bool> = Setting::boolean(
    "table.exec.mini-batch.enabled",
    false,
    "buffer aggregate input in bundles and apply each key once per bundle",
);
/// `table.exec.mini-batch.allow-latency`
pub static MINI_BATCH_LATENCY: Setting<Duration> = Setting::duration(
    "table.exec.mini-batch.allow-latency",
    Duration::ZERO,
    "0 ms",
    "how often a bundle flushes; must be > 0 when mini-batch is on",
);
/// `table.exec.mini-batch.size`
pub static MINI_BATCH_SIZE: Setting<i64> = Setting::int(
    "table.exec.mini-batch.size",
    -1,
    "-1",
    |n| n == -1 || n > 0,
    "a positive number of rows, or -1 for the memory budget",
    "flush a bundle at this many rows; -1 flushes on the interval and the memory budget only",
);
/// `table.exec.mini-batch.memory-budget`
pub static MINI_BATCH_MEMORY_BUDGET: Setting<u64> = Setting::memory_size(
    "table.exec.mini-batch.memory-budget",
    64 << 20,
    "64 mb",
    "bytes a bundle may hold per subtask before it flushes early",
)
.weir_only();
/// `table.optimizer.agg-phase-strategy`
pub static AGG_PHASE_STRATEGY: Setting<&'static str> = Setting::choice(
    "table.optimizer.agg-phase-strategy",
    &["AUTO", "ONE_PHASE", "TWO_PHASE"],
    "AUTO",
    "ONE_PHASE keeps one phase; AUTO and TWO_PHASE run two phases with mini-batch when every aggregate can merge partials",
);
/// `table.exec.state.ttl`
pub static STATE_TTL: Setting<Duration> = Setting::duration(
    "table.exec.state.ttl",
    Duration::ZERO,
    "0 ms",
    "forget a group not written for this long; 0 keeps state forever",
);
/// `table.exec.agg.mini-batch.output-identical-enabled`
pub static OUTPUT_IDENTICAL: Setting<bool> = Setting::boolean(
    "table.exec.agg.mini-batch.output-identical-enabled",
    false,
    "with a TTL and mini-batch, still emit a result that did not change (refreshing the sink's TTL)",
);
/// `table.optimizer.distinct-agg.split.enabled`
pub static SPLIT_DISTINCT: Setting<bool> = Setting::boolean(
    "table.optimizer.distinct-agg.split.enabled",
    false,
    "compute COUNT(DISTINCT x) in two levels to spread a hot key",
);
/// `table.optimizer.distinct-agg.split.bucket-num`
pub static SPLIT_DISTINCT_BUCKETS: Setting<i64> = Setting::int(
    "table.optimizer.distinct-agg.split.bucket-num",
    1024,
    "1024",
    |n| n > 0 && n <= i64::from(i32::MAX),
    "a positive number",
    "buckets of the first level of a split distinct aggregation",
);
/// `table.exec.sink.keyed-shuffle`
pub static SINK_KEYED_SHUFFLE: Setting<&'static str> = Setting::choice(
    "table.exec.sink.keyed-shuffle",
    &["NONE", "AUTO", "FORCE"],
    "AUTO",
    "hash rows into a primary-key sink on the key (AUTO: when the sink's parallelism differs from its input's)",
);
/// `table.exec.sink.upsert-materialize`
pub static SINK_UPSERT_MATERIALIZE: Setting<&'static str> = Setting::choice(
    "table.exec.sink.upsert-materialize",
    &["NONE", "AUTO", "FORCE"],
    "AUTO",
    "keep each key's rows in a SinkMaterializer before an upsert sink",
);
/// `table.exec.sink.require-on-conflict`
pub static SINK_REQUIRE_ON_CONFLICT: Setting<bool> = Setting::boolean(
    "table.exec.sink.require-on-conflict",
    true,
    "an upsert key other than the sink's primary key needs ON CONFLICT",
);
/// `table.exec.sink.not-null-enforcer`
pub static SINK_NOT_NULL_ENFORCER: Setting<&'static str> = Setting::choice(
    "table.exec.sink.not-null-enforcer",
    &["ERROR", "DROP"],
    "ERROR",
    "fail on, or drop, a row with NULL in a NOT NULL sink column",
);
/// `table.exec.sink.type-length-enforcer`
pub static SINK_TYPE_LENGTH_ENFORCER: Setting<&'static str> = Setting::choice(
    "table.exec.sink.type-length-enforcer",
    &["IGNORE", "TRIM_PAD", "ERROR"],
    "IGNORE",
    "what happens to strings and bytes that do not fit their sink column",
);
/// `table.local-time-zone`
pub static LOCAL_TIME_ZONE: Setting<String> = Setting::text(
    "table.local-time-zone",
    "default",
    "the session time zone: windows over a TIMESTAMP_LTZ, and the functions and casts that read or write wall-clock time, follow its wall clock ('default': the machine's zone)",
);
/// `table.optimizer.window-join-enabled`
pub static WINDOW_JOIN_ENABLED: Setting<bool> = Setting::boolean(
    "table.optimizer.window-join-enabled",
    false,
    "run a join of two windowed inputs on both windows' bounds as a window join (late rows dropped) instead of a regular join",
);
/// `table.exec.deduplicate.mini-batch.compact-changes-enabled`
pub static DEDUPLICATE_COMPACT_CHANGES: Setting<bool> = Setting::boolean(
    "table.exec.deduplicate.mini-batch.compact-changes-enabled",
    false,
    "with mini-batch, an event-time deduplication emits only each key's last change of a batch",
);
/// `execution.runtime-mode`
pub static RUNTIME_MODE: Setting<&'static str> = Setting::choice(
    "execution.runtime-mode",
    &["STREAMING", "BATCH", "AUTOMATIC"],
    "STREAMING",
    "BATCH: scans read what their tables hold now and end, results are final rows",
);

impl PlannerOptions {
    /// `table.exec.state.ttl`, `None` when state is kept forever (0).
    pub fn state_ttl(&self) -> Option<std::time::Duration> {
        (self.state_ttl_millis > 0).then(|| std::time::Duration::from_millis(self.state_ttl_millis as u64))
    }

    /// How long a join keeps the rows of its input known as `name`: its `STATE_TTL` hint, else
    /// `table.exec.state.ttl` (`None`: forever; a hint of 0 keeps the rows forever too).
    pub fn join_state_ttl(&self, name: Option<&str>) -> Option<std::time::Duration> {
        let hinted = name.and_then(|n| self.state_ttl_hints.iter().rev().find_map(|h| h.ttls.get(n).copied()));
        match hinted {
            Some(ttl) => (!ttl.is_zero()).then_some(ttl),
            None => self.state_ttl(),
        }
    }

    /// The options from a session's settings.
    ///
    /// # Errors
    /// Mini-batch enabled without a positive latency (Flink's
    /// `MiniBatch Latency must be greater than 0 ms.`).
    pub fn from_settings(settings: &Settings) -> Result<Self> {
        let mini_batch = if settings.get(&MINI_BATCH_ENABLED) {
            let interval_millis = settings.get(&MINI_BATCH_LATENCY).as_millis() as i64;
            if interval_millis <= 0 {
                return Err(Error::Configuration("MiniBatch Latency must be greater than 0 ms.".into()));
            }
            let size = usize::try_from(settings.get(&MINI_BATCH_SIZE)).ok();
            let memory_budget = usize::try_from(settings.get(&MINI_BATCH_MEMORY_BUDGET)).unwrap_or(usize::MAX);
            Some(MiniBatch { interval_millis, size, memory_budget })
        } else {
            None
        };
        let agg_phase_strategy = match settings.get(&AGG_PHASE_STRATEGY) {
            "ONE_PHASE" => AggPhaseStrategy::OnePhase,
            "TWO_PHASE" => AggPhaseStrategy::TwoPhase,
            _ => AggPhaseStrategy::Auto,
        };
        let sink_keyed_shuffle = match settings.get(&SINK_KEYED_SHUFFLE) {
            "NONE" => SinkKeyedShuffle::None,
            "FORCE" => SinkKeyedShuffle::Force,
            _ => SinkKeyedShuffle::Auto,
        };
        let upsert_materialize = match settings.get(&SINK_UPSERT_MATERIALIZE) {
            "NONE" => UpsertMaterialize::None,
            "FORCE" => UpsertMaterialize::Force,
            _ => UpsertMaterialize::Auto,
        };
        let not_null_enforcer = match settings.get(&SINK_NOT_NULL_ENFORCER) {
            "DROP" => NotNullEnforcement::Drop,
            _ => NotNullEnforcement::Error,
        };
        let type_length_enforcer = match settings.get(&SINK_TYPE_LENGTH_ENFORCER) {
            "TRIM_PAD" => Some(LengthEnforcement::TrimPad),
            "ERROR" => Some(LengthEnforcement::Error),
            _ => None,
        };
        Ok(PlannerOptions {
            batch: settings.get(&RUNTIME_MODE) == "BATCH",
            mini_batch,
            agg_phase_strategy,
            state_ttl_millis: settings.get(&STATE_TTL).as_millis() as i64,
            source_idle_timeout: Some(settings.get(&weir_runtime::config::IDLE_TIMEOUT)).filter(|d| !d.is_zero()),
            watermark_interval_millis: settings.get(&weir_runtime::config::AUTO_WATERMARK_INTERVAL).as_millis() as i64,
            confluent_explain: settings.get(&EXPLAIN_FORMAT) == "CONFLUENT",
            advice: AdviceSettings {
                one_phase: agg_phase_strategy == AggPhaseStrategy::OnePhase,
                mini_batch_enabled: settings.get(&MINI_BATCH_ENABLED),
                mini_batch_latency_millis: settings.get(&MINI_BATCH_LATENCY).as_millis() as i64,
                mini_batch_size: settings.get(&MINI_BATCH_SIZE),
            },
            output_identical: settings.get(&OUTPUT_IDENTICAL),
            split_distinct_buckets: settings.get(&SPLIT_DISTINCT).then(|| settings.get(&SPLIT_DISTINCT_BUCKETS) as i32),
            sink_keyed_shuffle,
            upsert_materialize,
            require_on_conflict: settings.get(&SINK_REQUIRE_ON_CONFLICT),
            not_null_enforcer,
            type_length_enforcer,
            async_lookup: AsyncLookupSettings::from_settings(settings),
            lookup_hints: Vec::new(),
            state_ttl_hints: Vec::new(),
            sync_lookup_tables: Default::default(),
            local_time_zone: local_time_zone(&settings.get(&LOCAL_TIME_ZONE))?,
            window_join_enabled: settings.get(&WINDOW_JOIN_ENABLED),
            deduplicate_compact_changes: settings.get(&DEDUPLICATE_COMPACT_CHANGES),
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
            source_idle_timeout: None,
            watermark_interval_millis: 200,
            confluent_explain: false,
            advice: AdviceSettings {
                one_phase: false,
                mini_batch_enabled: false,
                mini_batch_latency_millis: 0,
                mini_batch_size: -1,
            },
            output_identical: false,
            split_distinct_buckets: None,
            sink_keyed_shuffle: SinkKeyedShuffle::Auto,
            upsert_materialize: UpsertMaterialize::Auto,
            require_on_conflict: true,
            not_null_enforcer: NotNullEnforcement::Error,
            type_length_enforcer: None,
            async_lookup: AsyncLookupSettings::default(),
            lookup_hints: Vec::new(),
            state_ttl_hints: Vec::new(),
            sync_lookup_tables: Default::default(),
            local_time_zone: TimeZone::system(),
            window_join_enabled: false,
            deduplicate_compact_changes: false,
        }
    }
}

/// What Flink's advice on a group aggregate names: the settings that would make it two-phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdviceSettings {
    /// `table.optimizer.agg-phase-strategy` is `ONE_PHASE`.
    pub one_phase: bool,
    /// `table.exec.mini-batch.enabled`
    pub mini_batch_enabled: bool,
    /// `table.exec.mini-batch.allow-latency` in milliseconds.
    pub mini_batch_latency_millis: i64,
    /// `table.exec.mini-batch.size`
    pub mini_batch_size: i64,
}

/// `weir.explain.format`
pub static EXPLAIN_FORMAT: Setting<&'static str> = Setting::choice(
    "weir.explain.format",
    &["FLINK", "CONFLUENT"],
    "FLINK",
    "how EXPLAIN prints plans: Flink's three sections, or Confluent Cloud's numbered plan with details and warnings",
)
.weir_only();
