//! Aggregate functions with retraction, as Flink's streaming group aggregates compute them.
//!
//! An [`AggregateCall`] says which function runs over which input columns, whether it is
//! `DISTINCT`, which boolean column filters it (`FILTER (WHERE …)`), and the SQL type of its
//! result (chosen by the planner with Flink's type inference). Its [`Accumulator`] takes
//! accumulations (`+I`, `+U`) and retractions (`-U`, `-D`) and yields the current result.

mod accumulator;
pub mod bundle;
pub mod distinct;
pub(crate) mod group_state;
pub(crate) mod json;
pub(crate) mod numeric;
pub mod registry;
mod typed;
pub mod user;

pub use accumulator::{AccumulateError, Accumulator};
pub use registry::{AggregateFunction, Merge};
pub use user::{AggregateUdf, UserAggregate};

/// The state section a restore adds to an aggregate's state when the new aggregate computes
/// other calls than the one that wrote it: for each new call, the old call it continues
/// ([`encode_call_map`]).
pub const RESTORED_CALLS: &str = "restored-calls";

/// The bytes of [`RESTORED_CALLS`]: the number of calls, then per call `0` (it starts empty) or
/// the old call's index plus one.
pub fn encode_call_map(calls: &[Option<usize>]) -> Vec<u8> {
    let mut out = weir_runtime::checkpoint::codec::Encoder::new();
    out.u32(calls.len() as u32);
    calls.iter().for_each(|c| out.u32(c.map_or(0, |j| j as u32 + 1)));
    out.into_bytes()
}

/// The call map a restore added to `states` ([`RESTORED_CALLS`]), if it added one; it must
/// have one entry per call of the aggregate (`calls`).
///
/// # Errors
/// A damaged map, or one for another number of calls.
pub(crate) fn restored_call_map(
    states: &[weir_runtime::checkpoint::StateReader],
    calls: usize,
) -> weir_runtime::Result<Option<Vec<Option<usize>>>> {
    let map = restored_calls(states)?;
    if let Some(count) = map.as_ref().map(Vec::len).filter(|&n| n != calls) {
        return Err(weir_runtime::Error::Restore(format!(
            "the restored aggregate calls are malformed: {count} calls where the aggregate has {calls}"
        )));
    }
    Ok(map)
}

/// The call map a restore added to `states` ([`RESTORED_CALLS`]), if it added one, of any length.
///
/// # Errors
/// A damaged map.
pub(crate) fn restored_calls(
    states: &[weir_runtime::checkpoint::StateReader],
) -> weir_runtime::Result<Option<Vec<Option<usize>>>> {
    let Some(mut input) = states.iter().find_map(|s| s.section(RESTORED_CALLS)) else { return Ok(None) };
    let bad =
        |what: String| weir_runtime::Error::Restore(format!("the restored aggregate calls are malformed: {what}"));
    let count = input.u32().map_err(|e| bad(e.to_string()))? as usize;
    let map = (0..count)
        .map(|_| input.u32().map(|c| c.checked_sub(1).map(|j| j as usize)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(e.to_string()))?;
    Ok(Some(map))
}

pub(crate) use typed::checkpoint as typed_checkpoint;
pub use typed::{TypedCalls, TypedGlobalGroups, TypedGroups, TypedLocalGroups};

use weir_runtime::DataType;

/// How a group aggregate holds its groups (and writes them into checkpoints), decided when it
/// is planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupLayout {
    /// As typed machine words per group ([`TypedGroups`]): the columnar form.
    Typed,
    /// As values per group: every aggregate function, DISTINCT, state TTL and mini-batches.
    Values,
}

/// The aggregate functions weir computes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AggregateKind {
    /// `COUNT(*)`: rows.
    CountStar,
    /// `COUNT(x)`: rows where x is not NULL.
    Count,
    /// `SUM(x)`: NULL when no non-NULL value remains.
    Sum,
    /// `$SUM0(x)`: like SUM, but 0 instead of NULL.
    Sum0,
    /// `MIN(x)`
    Min,
    /// `MAX(x)`
    Max,
    /// `AVG(x)`: integer types divide as integers, as in Flink.
    Avg,
    /// `FIRST_VALUE(x)`: the earliest non-NULL value still present.
    FirstValue,
    /// `LAST_VALUE(x)`: the latest non-NULL value still present.
    LastValue,
    /// `LISTAGG(x[, delimiter])`: non-NULL values joined in arrival order.
    ListAgg {
        /// Text between values (`,` by default).
        delimiter: String,
    },
    /// `STDDEV_POP(x)`
    StddevPop,
    /// `STDDEV_SAMP(x)`
    StddevSamp,
    /// `VAR_POP(x)`
    VarPop,
    /// `VAR_SAMP(x)`
    VarSamp,
    /// `COLLECT(x)`: the MULTISET of the non-NULL values present.
    Collect,
    /// `ARRAY_AGG(x [RESPECT NULLS | IGNORE NULLS])`: the values present in arrival order, NULLs
    /// included unless `ignore_nulls`.
    ArrayAgg {
        /// `IGNORE NULLS`
        ignore_nulls: bool,
    },
    /// `JSON_ARRAYAGG(x [ABSENT ON NULL | NULL ON NULL])`: a JSON array of the values present in
    /// arrival order (NULLs as `null` only with `NULL ON NULL`).
    JsonArrayAgg {
        /// `NULL ON NULL` (the default is `ABSENT ON NULL`).
        null_on_null: bool,
    },
    /// `JSON_OBJECTAGG([KEY] k VALUE v [NULL ON NULL | ABSENT ON NULL])`: a JSON object of the
    /// entries present, by key; its argument is `ROW(k, v)`.
    JsonObjectAgg {
        /// `NULL ON NULL` (the default; `ABSENT ON NULL` leaves out entries of NULL value).
        null_on_null: bool,
    },
    /// `APPROX_COUNT_DISTINCT(x)`: the number of distinct non-NULL values (batch mode only, as
    /// in Flink; weir counts them exactly).
    ApproxCountDistinct,
    /// An aggregate function written in Rust and registered by name ([`user`]).
    User(UserAggregate),
}

/// One aggregate of a GROUP BY.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggregateCall {
    /// The function.
    pub kind: AggregateKind,
    /// Input column of the argument (none for `COUNT(*)`).
    pub arg: Option<usize>,
    /// `DISTINCT`: each distinct argument value counts once.
    pub distinct: bool,
    /// Input column of a BOOLEAN filter: only rows where it is TRUE count.
    pub filter: Option<usize>,
    /// The SQL type of the result.
    pub result_type: DataType,
}

impl AggregateCall {
    /// A call of `kind` over column `arg` with result type `result_type`.
    pub fn new(kind: AggregateKind, arg: Option<usize>, result_type: DataType) -> Self {
        AggregateCall { kind, arg, distinct: false, filter: None, result_type }
    }

    /// The same call with `DISTINCT`.
    pub fn distinct(mut self) -> Self {
        self.distinct = true;
        self
    }

    /// The same call with `FILTER (WHERE column)`.
    pub fn filtered_by(mut self, column: usize) -> Self {
        self.filter = Some(column);
        self
    }
}
