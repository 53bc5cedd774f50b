//! Lookup joins: each input row is joined with the rows a dimension table returns for its
//! lookup key (`JOIN dim FOR SYSTEM_TIME AS OF s.proc_time AS d ON s.k = d.id`).
//!
//! [`AsyncLookupJoinOperator`] keeps up to `capacity` lookups in flight and emits results in
//! input order (ORDERED, and sync lookups as capacity 1) or as they complete (UNORDERED, for
//! insert-only input; watermarks still never pass a record). [`KeyOrderedLookupJoinOperator`]
//! serializes lookups per update key for updating input while different keys run concurrently.

mod async_lookup_join;
mod key_ordered_lookup_join;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use weir_runtime::{Chunk, Error, LookupFunction, LookupRows, Result, RowKind, Value};

use crate::expr::{Expr, ExprError};

pub use async_lookup_join::AsyncLookupJoinOperator;
pub use key_ordered_lookup_join::KeyOrderedLookupJoinOperator;

/// INNER drops input rows without a match; LEFT pads them with NULLs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupJoinType {
    /// `JOIN`
    Inner,
    /// `LEFT JOIN`
    LeftOuter,
}

impl LookupJoinType {
    /// Flink's name: `InnerJoin` or `LeftOuterJoin`.
    pub fn flink_name(self) -> &'static str {
        match self {
            LookupJoinType::Inner => "InnerJoin",
            LookupJoinType::LeftOuter => "LeftOuterJoin",
        }
    }
}

/// What a lookup join computes, independent of how lookups are scheduled.
///
/// The output row is the input row followed by the dimension row (NULLs for a LEFT join
/// without a match), with the input row's kind.
#[derive(Debug, Clone)]
pub struct LookupJoinSpec {
    /// The dimension table's full name, for errors.
    pub table: String,
    /// INNER or LEFT.
    pub join_type: LookupJoinType,
    /// The lookup key, one expression over the input row per key column of the function.
    pub keys: Vec<Expr>,
    /// The names of the dimension table's key columns, for errors.
    pub key_names: Vec<String>,
    /// Number of the dimension table's columns.
    pub dim_arity: usize,
    /// A condition on the dimension row alone (`where=[…]` in EXPLAIN).
    pub dim_filter: Option<Expr>,
    /// A condition on the joined row (`joinCondition=[…]` in EXPLAIN).
    pub join_condition: Option<Expr>,
}

/// How async lookups are scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsyncLookupOptions {
    /// Most lookups in flight (and records held) per subtask; 1 for sync lookups.
    pub capacity: usize,
    /// Longest a record may wait for its lookup, retries included; zero for no limit.
    pub timeout: Duration,
    /// Whether results leave in input order.
    pub ordered: bool,
    /// Retries of lookups that found nothing (the LOOKUP hint's `lookup_miss` predicate).
    pub retry: Option<LookupRetry>,
}

/// `'retry-strategy'='fixed_delay'`: look up again after `delay` while the result is empty,
/// up to `max_attempts` attempts in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookupRetry {
    /// Pause between attempts.
    pub delay: Duration,
    /// Attempts in all, the first included.
    pub max_attempts: usize,
}

fn expr_error(e: ExprError) -> Error {
    Error::execution(e.to_string())
}

impl LookupJoinSpec {
    /// Width of an output row.
    pub fn output_arity(&self, input_arity: usize) -> usize {
        input_arity + self.dim_arity
    }

    /// The lookup key of an input row; `None` when a key column is NULL (nothing can match).
    pub fn key_of(&self, row: &[Value]) -> Result<Option<Vec<Value>>> {
        let mut key = Vec::with_capacity(self.keys.len());
        for k in &self.keys {
            let value = k.eval(row).map_err(expr_error)?;
            if value.is_null() {
                return Ok(None);
            }
            key.push(value);
        }
        Ok(Some(key))
    }

    /// The key as `name=value, …`, for errors.
    pub fn describe_key(&self, key: &[Value]) -> String {
        self.key_names
            .iter()
            .zip(key)
            .map(|(n, v)| format!("{n}={}", weir_runtime::print::value_to_string(v)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Appends the joined rows of input row `row` (of kind `kind`) and the looked-up `dim_rows`.
    pub fn join_into(&self, kind: RowKind, row: &[Value], dim_rows: &LookupRows, out: &mut Chunk) -> Result<()> {
        let mut matched = false;
        let mut joined = Vec::with_capacity(row.len() + self.dim_arity);
        for dim in dim_rows {
            if let Some(filter) = &self.dim_filter {
                if filter.eval(dim).map_err(expr_error)? != Value::Boolean(true) {
                    continue;
                }
            }
            joined.clear();
            joined.extend_from_slice(row);
            joined.extend_from_slice(dim);
            if let Some(condition) = &self.join_condition {
                if condition.eval(&joined).map_err(expr_error)? != Value::Boolean(true) {
                    continue;
                }
            }
            matched = true;
            out.push(kind, &joined);
        }
        if !matched && self.join_type == LookupJoinType::LeftOuter {
            out.push_with(kind, |fields| {
                fields.extend_from_slice(row);
                fields.extend(std::iter::repeat_n(Value::Null, self.dim_arity));
            });
        }
        Ok(())
    }
}

/// A factory of lookup join operators, one per subtask, all sharing `function` (and its cache):
/// key-ordered on the input columns `order_key` when given, else as `options` say.
pub fn lookup_join_factory(
    spec: Arc<LookupJoinSpec>,
    function: Arc<dyn LookupFunction>,
    options: AsyncLookupOptions,
    input_arity: usize,
    order_key: Option<Vec<usize>>,
) -> weir_runtime::graph::OperatorFactory {
    match order_key {
        Some(order_key) => Arc::new(move |_| {
            Box::new(KeyOrderedLookupJoinOperator::new(
                Arc::clone(&spec),
                Arc::clone(&function),
                options,
                input_arity,
                order_key.clone(),
            ))
        }),
        None => Arc::new(move |_| {
            Box::new(AsyncLookupJoinOperator::new(Arc::clone(&spec), Arc::clone(&function), options, input_arity))
        }),
    }
}

/// The lookup of one key with the options' retries and timeout; a NULL key finds nothing
/// without asking the table.
pub(crate) fn lookup(
    function: &Arc<dyn LookupFunction>,
    spec: &Arc<LookupJoinSpec>,
    key: Option<Vec<Value>>,
    options: &AsyncLookupOptions,
) -> BoxFuture<'static, Result<LookupRows>> {
    let Some(key) = key else {
        return Box::pin(futures::future::ready(Ok(Vec::new())));
    };
    let (function, spec, options) = (Arc::clone(function), Arc::clone(spec), *options);
    Box::pin(async move {
        let attempts = async {
            let mut attempt = 1;
            loop {
                let rows = function.lookup(key.clone()).await.map_err(|e| {
                    Error::execution(format!(
                        "Lookup join on table '{}' failed for key ({}): {e}",
                        spec.table,
                        spec.describe_key(&key)
                    ))
                })?;
                match options.retry {
                    Some(retry) if rows.is_empty() && attempt < retry.max_attempts => {
                        tokio::time::sleep(retry.delay).await;
                        attempt += 1;
                    }
                    _ => return Ok(rows),
                }
            }
        };
        if options.timeout.is_zero() {
            return attempts.await;
        }
        match tokio::time::timeout(options.timeout, attempts).await {
            Ok(result) => result,
            Err(_) => Err(Error::execution(format!(
                "Lookup join on table '{}' timed out after {} ms for key ({}) \
                 (table.exec.async-lookup.timeout or the LOOKUP hint's 'timeout')",
                spec.table,
                options.timeout.as_millis(),
                spec.describe_key(&key)
            ))),
        }
    })
}
