//! How lookup joins run: the `table.exec.async-lookup.*` options and the `LOOKUP` hint, merged
//! as Flink merges them (`LookupJoinUtil.getMergedAsyncOptions`).
//!
//! The four `table.exec.async-lookup.*` settings are declared below.
//!
//! `SELECT /*+ LOOKUP('table'='d', 'async'='true', 'output-mode'='allow_unordered',
//! 'capacity'='100', 'timeout'='180s', 'retry-predicate'='lookup_miss',
//! 'retry-strategy'='fixed_delay', 'fixed-delay'='10s', 'max-attempts'='3') */` overrides them
//! for the lookup join of table (or alias) `d`.

use std::collections::BTreeMap;
use std::time::Duration;

use sqlparser::tokenizer::TokenWithSpan;
use weir_operators::{AsyncLookupOptions, LookupRetry};
use weir_runtime::config::parse_duration;
use weir_runtime::settings::{Setting, Settings};

use crate::error::{Error, Position, Result};
use crate::hints::{hint_comments, hint_pairs};
use crate::options::{boolean, invalid};

/// `table.exec.async-lookup.output-mode`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    /// Results in input order.
    Ordered,
    /// Results as lookups complete, where that cannot change the result.
    AllowUnordered,
}

/// The job-level async lookup options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsyncLookupSettings {
    /// `table.exec.async-lookup.buffer-capacity`
    pub capacity: usize,
    /// `table.exec.async-lookup.timeout`
    pub timeout: Duration,
    /// `table.exec.async-lookup.output-mode`
    pub output_mode: OutputMode,
    /// `table.exec.async-lookup.key-ordered-enabled`
    pub key_ordered: bool,
}

/// `table.exec.async-lookup.buffer-capacity`
pub static BUFFER_CAPACITY: Setting<i64> = Setting::int(
    "table.exec.async-lookup.buffer-capacity",
    100,
    "100",
    |n| n > 0 && n <= 1 << 20,
    "a positive number up to 1048576",
    "most lookups in flight (and records held) per subtask",
);
/// `table.exec.async-lookup.timeout`
pub static TIMEOUT: Setting<Duration> = Setting::duration(
    "table.exec.async-lookup.timeout",
    Duration::from_secs(180),
    "3 min",
    "a record whose lookup (retries included) takes longer fails the job, naming the table and key",
);
/// `table.exec.async-lookup.output-mode`
pub static OUTPUT_MODE: Setting<&'static str> = Setting::choice(
    "table.exec.async-lookup.output-mode",
    &["ORDERED", "ALLOW_UNORDERED"],
    "ORDERED",
    "ALLOW_UNORDERED emits results as lookups complete, for insert-only input only",
);
/// `table.exec.async-lookup.key-ordered-enabled`
pub static KEY_ORDERED: Setting<bool> = Setting::boolean(
    "table.exec.async-lookup.key-ordered-enabled",
    false,
    "with ALLOW_UNORDERED and updating input: one lookup at a time per update key",
);

impl Default for AsyncLookupSettings {
    fn default() -> Self {
        AsyncLookupSettings::from_settings(&Settings::new(&[]))
    }
}

fn capacity(key: &str, value: &str) -> Result<usize> {
    value.trim().parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| invalid(key, value, "a positive number"))
}

impl OutputMode {
    /// The mode an accepted name of [`OUTPUT_MODE`] stands for.
    fn named(name: &str) -> Self {
        match name {
            "ALLOW_UNORDERED" => OutputMode::AllowUnordered,
            _ => OutputMode::Ordered,
        }
    }
}

/// A hint's `output-mode`, read and checked as the option's declaration reads it.
fn output_mode(key: &str, value: &str) -> Result<OutputMode> {
    match OUTPUT_MODE.spec.kind.parse(key, value)? {
        weir_runtime::settings::Value::Choice(name) => Ok(OutputMode::named(name)),
        _ => Ok(OutputMode::Ordered),
    }
}

impl AsyncLookupSettings {
    /// The settings a session set (defaults for the others).
    pub fn from_settings(settings: &Settings) -> Self {
        AsyncLookupSettings {
            capacity: settings.get(&BUFFER_CAPACITY) as usize,
            timeout: settings.get(&TIMEOUT),
            output_mode: OutputMode::named(settings.get(&OUTPUT_MODE)),
            key_ordered: settings.get(&KEY_ORDERED),
        }
    }
}

/// A `LOOKUP(…)` query hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookupHint {
    /// The table (or its alias) the hint is for.
    pub table: String,
    /// `async`: whether lookups are async.
    pub async_lookup: Option<bool>,
    /// `output-mode`
    pub output_mode: Option<OutputMode>,
    /// `capacity`
    pub capacity: Option<usize>,
    /// `timeout`
    pub timeout: Option<Duration>,
    /// `retry-predicate` + `retry-strategy` + `fixed-delay` + `max-attempts`, when retry is on.
    pub retry: Option<LookupRetry>,
    /// Where the hint starts.
    pub position: Position,
}

const HINT_KEYS: [&str; 10] = [
    "table",
    "async",
    "output-mode",
    "capacity",
    "timeout",
    "retry-predicate",
    "retry-strategy",
    "fixed-delay",
    "max-attempts",
    "shuffle",
];

impl LookupHint {
    /// A hint from its `'key' = 'value'` pairs.
    ///
    /// # Errors
    /// Unknown keys, a missing `table`, and malformed values, naming the key.
    pub fn from_pairs(pairs: &BTreeMap<String, String>, position: Position) -> Result<Self> {
        Self::read(pairs, position).map_err(|e| match e {
            Error::Validation { .. } => e,
            other => Error::validation(position, format!("Invalid LOOKUP hint: {other}")),
        })
    }

    fn read(pairs: &BTreeMap<String, String>, position: Position) -> Result<Self> {
        let hint_error = |message: String| Error::validation(position, format!("Invalid LOOKUP hint: {message}"));
        if let Some(unknown) = pairs.keys().find(|k| !HINT_KEYS.contains(&k.as_str())) {
            return Err(hint_error(format!(
                "unsupported option '{unknown}'. Supported options: {}",
                HINT_KEYS.map(|k| format!("'{k}'")).join(", ")
            )));
        }
        let table = pairs.get("table").ok_or_else(|| hint_error("incomplete required option(s): 'table'".into()))?;
        let get = |k: &str| pairs.get(k).map(String::as_str);
        let duration = |k: &str| get(k).map(|v| parse_duration(k, v)).transpose().map_err(Error::from);
        let predicate_ok = get("retry-predicate").is_some_and(|p| p.trim().eq_ignore_ascii_case("lookup_miss"));
        let strategy_ok = get("retry-strategy").is_some_and(|s| s.trim().eq_ignore_ascii_case("fixed_delay"));
        let retry = match duration("fixed-delay")? {
            Some(delay) if predicate_ok && strategy_ok => {
                let max_attempts = get("max-attempts").map(|v| capacity("max-attempts", v)).transpose()?.unwrap_or(1);
                Some(LookupRetry { delay, max_attempts })
            }
            _ => None,
        };
        if let Some(v) = get("shuffle") {
            boolean("shuffle", v)?;
        }
        Ok(LookupHint {
            table: table.clone(),
            async_lookup: get("async").map(|v| boolean("async", v)).transpose()?,
            output_mode: get("output-mode").map(|v| output_mode("output-mode", v)).transpose()?,
            capacity: get("capacity").map(|v| capacity("capacity", v)).transpose()?,
            timeout: duration("timeout")?,
            retry,
            position,
        })
    }
}

/// The `LOOKUP` hints among a script's tokens, in order.
///
/// # Errors
/// A malformed hint.
pub fn lookup_hints(tokens: &[TokenWithSpan]) -> Result<Vec<LookupHint>> {
    let mut hints = Vec::new();
    for (_, body, position) in hint_comments(tokens) {
        if let Some(pairs) = hint_pairs(body, position, "LOOKUP")? {
            hints.push(LookupHint::from_pairs(&pairs, position)?);
        }
    }
    Ok(hints)
}

/// How one lookup join runs, after merging the job options with its hint and looking at its
/// input's changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookupExecution {
    /// Async options; `None` for sync lookups.
    pub async_options: Option<AsyncExecution>,
    /// Retries of lookups that found nothing.
    pub retry: Option<LookupRetry>,
}

/// The async part of [`LookupExecution`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsyncExecution {
    /// Whether results leave in input order (`ORDERED` in EXPLAIN) or as lookups complete.
    pub ordered: bool,
    /// The update-key columns lookups are serialized on, when key-ordered.
    pub key_ordered: Option<Vec<usize>>,
    /// Longest wait for one record.
    pub timeout: Duration,
    /// Most lookups in flight.
    pub capacity: usize,
}

impl LookupExecution {
    /// How the operator schedules lookups: async as decided, or sync (one lookup at a time,
    /// in order, without a time limit).
    pub fn options(&self) -> AsyncLookupOptions {
        match &self.async_options {
            Some(a) => {
                AsyncLookupOptions { capacity: a.capacity, timeout: a.timeout, ordered: a.ordered, retry: self.retry }
            }
            None => AsyncLookupOptions { capacity: 1, timeout: Duration::ZERO, ordered: true, retry: self.retry },
        }
    }

    /// The update-key columns lookups are serialized on, when key-ordered.
    pub fn order_key(&self) -> Option<Vec<usize>> {
        self.async_options.as_ref().and_then(|a| a.key_ordered.clone())
    }
}

impl std::fmt::Display for AsyncExecution {
    /// Flink's `AsyncOptions.toString()`: `ORDERED, KEY_ORDERED: false, 180000ms, 100`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}, KEY_ORDERED: {}, {}ms, {}",
            if self.ordered { "ORDERED" } else { "UNORDERED" },
            self.key_ordered.is_some(),
            self.timeout.as_millis(),
            self.capacity
        )
    }
}

/// Decides how a lookup join runs: async unless the hint says `'async'='false'` or the table
/// only looks up synchronously; unordered only for insert-only input; key-ordered for updating
/// input with `ALLOW_UNORDERED` and `key-ordered-enabled`, on `update_key` (all columns when the
/// input has none).
pub fn lookup_execution(
    settings: &AsyncLookupSettings,
    hint: Option<&LookupHint>,
    supports_async: bool,
    insert_only: bool,
    update_key: Option<Vec<usize>>,
    input_width: usize,
) -> LookupExecution {
    let retry = hint.and_then(|h| h.retry);
    let prefer_async = hint.and_then(|h| h.async_lookup).unwrap_or(true);
    if !(prefer_async && supports_async) {
        return LookupExecution { async_options: None, retry };
    }
    let mode = hint.and_then(|h| h.output_mode).unwrap_or(settings.output_mode);
    let key_ordered = (settings.key_ordered && !insert_only && mode == OutputMode::AllowUnordered)
        .then(|| update_key.filter(|k| !k.is_empty()).unwrap_or_else(|| (0..input_width).collect()));
    LookupExecution {
        async_options: Some(AsyncExecution {
            ordered: !(insert_only && mode == OutputMode::AllowUnordered),
            key_ordered,
            timeout: hint.and_then(|h| h.timeout).unwrap_or(settings.timeout),
            capacity: hint.and_then(|h| h.capacity).unwrap_or(settings.capacity),
        }),
        retry,
    }
}
