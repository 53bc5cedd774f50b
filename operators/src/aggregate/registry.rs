//! The aggregate functions weir computes, each described in one place: its SQL name and how a
//! call of it binds, Flink's result type, which arguments it takes, whether partial
//! accumulators of it merge (two-phase aggregation) and under which names a local phase emits
//! them, whether the distinct-split rule may split it, and the layout of its accumulator (for
//! state signatures). Which calls the typed group state computes is said beside it
//! (`typed/mod.rs`).
//!
//! [`AggregateKind::function`] is the one place that tells kinds apart for the planner; the
//! accumulators themselves (`accumulator.rs`, `typed/`) are the rest of this module. Adding an
//! aggregate: a variant of [`AggregateKind`], its entries here ([`AggregateKind::function`], and
//! its SQL name and binding in `BINDINGS`), its state in `accumulator.rs`, and a docs row
//! (`docs/sql.md`).

use weir_runtime::{DataType, LogicalType, Value};

use super::{AggregateCall, AggregateKind};
use crate::expr::types::MAX_PRECISION;
use crate::expr::Expr;

/// Whether partial accumulators of a function merge, so that it can run in two phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// Always (COUNT, SUM, AVG).
    Always,
    /// Only over insert-only input (MIN and MAX keep only the extreme then).
    InsertOnly,
    /// Never: the function runs in one phase.
    Never,
}

/// What weir knows of one aggregate function.
#[derive(Debug)]
pub struct AggregateFunction {
    /// Runs only in batch mode (Flink's `… aggregate function does not support yet for
    /// streaming.` otherwise).
    pub batch_only: bool,
    /// The name EXPLAIN prints (`COUNT` for `COUNT(*)` too, `$SUM0`).
    pub name: &'static str,
    /// Only numeric arguments (Flink's `'SUM(<NUMERIC>)'`).
    pub numeric_only: bool,
    /// Flink's result type for an argument of the given type (`None` for `COUNT(*)`).
    pub result_type: fn(Option<&DataType>) -> DataType,
    /// Whether it runs in two phases.
    pub merge: Merge,
    /// The names of the partial values a local phase emits, in order (`sum`, `count`); empty
    /// when it never merges.
    pub partials: &'static [&'static str],
    /// How many of the last `partials` Flink's plans do not name: its SUM keeps no count on
    /// insert-only input, weir's always does (so that a SUM of retracted rows is NULL again).
    pub hidden_partials: usize,
    /// Whether the distinct-split rule (`table.optimizer.distinct-agg.split.enabled`) may run
    /// it in its buckets: without DISTINCT, and with DISTINCT when `split_distinct`.
    pub splittable: bool,
    /// Whether a DISTINCT call of it may be split into buckets (COUNT only).
    pub split_distinct: bool,
    /// What its accumulator holds per group, in order: the layout a checkpoint writes.
    pub accumulator: &'static [&'static str],
    /// Flink's implementation class when it has no `merge`: Flink then refuses the function in
    /// HOP and CUMULATE windows, whose slices merge ([`slice_merge_refusal`]).
    pub unmergeable_class: Option<&'static str>,
}

impl AggregateFunction {
    /// Whether partial accumulators merge for input that retracts rows or not.
    pub fn merges(&self, retracting: bool) -> bool {
        match self.merge {
            Merge::Always => true,
            Merge::InsertOnly => !retracting,
            Merge::Never => false,
        }
    }
}

const fn function(
    name: &'static str,
    result_type: fn(Option<&DataType>) -> DataType,
    accumulator: &'static [&'static str],
) -> AggregateFunction {
    AggregateFunction {
        batch_only: false,
        name,
        numeric_only: false,
        result_type,
        merge: Merge::Never,
        partials: &[],
        hidden_partials: 0,
        splittable: false,
        split_distinct: false,
        accumulator,
        unmergeable_class: None,
    }
}

fn count_type(_: Option<&DataType>) -> DataType {
    DataType::bigint().not_null()
}

fn nullable_arg(arg: Option<&DataType>) -> DataType {
    let mut t = arg.cloned().unwrap_or_else(DataType::bigint);
    t.nullable = true;
    t
}

/// SUM's: the argument's type, a DECIMAL widened to the largest precision.
fn sum_type(arg: Option<&DataType>) -> DataType {
    match arg.map(|a| &a.logical) {
        Some(LogicalType::Decimal { scale, .. }) => nullable_arg(Some(&DataType::decimal(MAX_PRECISION, *scale))),
        _ => nullable_arg(arg),
    }
}

/// AVG's: the argument's type, a DECIMAL widened to the largest precision and at least 6 digits
/// after the point.
fn avg_type(arg: Option<&DataType>) -> DataType {
    match arg.map(|a| &a.logical) {
        Some(LogicalType::Decimal { scale, .. }) => {
            nullable_arg(Some(&DataType::decimal(MAX_PRECISION, (*scale).max(6))))
        }
        _ => nullable_arg(arg),
    }
}

fn string_type(_: Option<&DataType>) -> DataType {
    DataType::string()
}

static COUNT: AggregateFunction = AggregateFunction {
    merge: Merge::Always,
    partials: &["count"],
    splittable: true,
    split_distinct: true,
    ..function("COUNT", count_type, &["count BIGINT"])
};
static COUNT_STAR: AggregateFunction = AggregateFunction { partials: &["count1"], ..COUNT };
static SUM: AggregateFunction = AggregateFunction {
    numeric_only: true,
    merge: Merge::Always,
    partials: &["sum", "count"],
    hidden_partials: 1,
    splittable: true,
    ..function("SUM", sum_type, &["sum RESULT", "count BIGINT"])
};
static SUM0: AggregateFunction = AggregateFunction { name: "$SUM0", ..SUM };
static MIN: AggregateFunction = AggregateFunction {
    merge: Merge::InsertOnly,
    partials: &["min"],
    splittable: true,
    ..function("MIN", nullable_arg, &["values MAP<ARG, BIGINT> (retracting) | extreme ARG (insert-only)"])
};
static MAX: AggregateFunction = AggregateFunction { name: "MAX", partials: &["max"], ..MIN };
static AVG: AggregateFunction = AggregateFunction {
    numeric_only: true,
    merge: Merge::Always,
    partials: &["sum", "count"],
    ..function("AVG", avg_type, &["sum BIGINT | DOUBLE | DECIMAL", "count BIGINT"])
};
static FIRST_VALUE: AggregateFunction = AggregateFunction {
    unmergeable_class: Some("FirstValueAggFunction"),
    ..function("FIRST_VALUE", nullable_arg, &["values ARRAY<ARG> (arrival order)"])
};
static LAST_VALUE: AggregateFunction =
    AggregateFunction { name: "LAST_VALUE", unmergeable_class: Some("LastValueAggFunction"), ..FIRST_VALUE };
static LISTAGG: AggregateFunction = function("LISTAGG", string_type, &["values ARRAY<ARG> (arrival order)"]);
static STDDEV_POP: AggregateFunction = AggregateFunction {
    numeric_only: true,
    ..function("STDDEV_POP", avg_type, &["count BIGINT", "mean DOUBLE", "m2 DOUBLE"])
};
static STDDEV_SAMP: AggregateFunction = AggregateFunction { name: "STDDEV_SAMP", ..STDDEV_POP };
static VAR_POP: AggregateFunction = AggregateFunction { name: "VAR_POP", ..STDDEV_POP };
static VAR_SAMP: AggregateFunction = AggregateFunction { name: "VAR_SAMP", ..STDDEV_POP };

fn multiset_type(arg: Option<&DataType>) -> DataType {
    DataType::new(LogicalType::Multiset(Box::new(arg.cloned().unwrap_or_else(DataType::bigint)))).not_null()
}

/// ARRAY_AGG's: an ARRAY of the argument's type, as nullable as the argument.
fn array_type(arg: Option<&DataType>) -> DataType {
    let element = arg.cloned().unwrap_or_else(DataType::bigint);
    let nullable = element.nullable;
    let mut array = DataType::new(LogicalType::Array(Box::new(element)));
    array.nullable = nullable;
    array
}

fn json_type(_: Option<&DataType>) -> DataType {
    DataType::new(LogicalType::Varchar(2000)).not_null()
}

static COLLECT: AggregateFunction = function("COLLECT", multiset_type, &["counts MAP<ARG, BIGINT>"]);
static ARRAY_AGG: AggregateFunction = function("ARRAY_AGG", array_type, &["values ARRAY<ARG> (arrival order)"]);
static JSON_ARRAYAGG: AggregateFunction = AggregateFunction {
    unmergeable_class: Some("JsonArrayAggFunction"),
    ..function("JSON_ARRAYAGG", json_type, &["values ARRAY<ARG> (arrival order)"])
};
static JSON_OBJECTAGG: AggregateFunction =
    function("JSON_OBJECTAGG", json_type, &["entries MAP<STRING, VALUE> (by key)"]);
/// An aggregate function written in Rust ([`super::user`]): its name and result type are the
/// registration's and the call's ([`AggregateKind::name`]), and it runs in one phase.
static USER: AggregateFunction = AggregateFunction {
    unmergeable_class: Some("UserDefinedFunction"),
    ..function("USER", nullable_arg, &["accumulator (the function's value)"])
};
static APPROX_COUNT_DISTINCT: AggregateFunction = AggregateFunction {
    batch_only: true,
    ..function("APPROX_COUNT_DISTINCT", count_type, &["counts MAP<ARG, BIGINT>"])
};

impl AggregateKind {
    /// What weir knows of the function.
    pub fn function(&self) -> &'static AggregateFunction {
        match self {
            AggregateKind::CountStar => &COUNT_STAR,
            AggregateKind::Count => &COUNT,
            AggregateKind::Sum => &SUM,
            AggregateKind::Sum0 => &SUM0,
            AggregateKind::Min => &MIN,
            AggregateKind::Max => &MAX,
            AggregateKind::Avg => &AVG,
            AggregateKind::FirstValue => &FIRST_VALUE,
            AggregateKind::LastValue => &LAST_VALUE,
            AggregateKind::ListAgg { .. } => &LISTAGG,
            AggregateKind::StddevPop => &STDDEV_POP,
            AggregateKind::StddevSamp => &STDDEV_SAMP,
            AggregateKind::VarPop => &VAR_POP,
            AggregateKind::VarSamp => &VAR_SAMP,
            AggregateKind::Collect => &COLLECT,
            AggregateKind::ArrayAgg { .. } => &ARRAY_AGG,
            AggregateKind::JsonArrayAgg { .. } => &JSON_ARRAYAGG,
            AggregateKind::JsonObjectAgg { .. } => &JSON_OBJECTAGG,
            AggregateKind::ApproxCountDistinct => &APPROX_COUNT_DISTINCT,
            AggregateKind::User(_) => &USER,
        }
    }

    /// The name EXPLAIN and messages print: [`AggregateFunction::name`], or the name a function
    /// written in Rust was registered with.
    pub fn name(&self) -> &str {
        match self {
            AggregateKind::User(user) => user.function.name(),
            other => other.function().name,
        }
    }

    /// The kind a global phase merges this kind's partials with: `COUNT(*)`'s partial counts
    /// are summed as `COUNT`'s are; every other kind merges as itself.
    pub fn merged_as(&self) -> AggregateKind {
        match self {
            AggregateKind::CountStar => AggregateKind::Count,
            other => other.clone(),
        }
    }

    /// The kind the distinct-split rule merges its buckets' results with: counts are summed
    /// (`$SUM0`), every other splittable kind merges as itself.
    pub fn buckets_merged_as(&self) -> AggregateKind {
        match self {
            AggregateKind::CountStar | AggregateKind::Count | AggregateKind::Sum0 => AggregateKind::Sum0,
            other => other.clone(),
        }
    }

    /// Whether the function takes rows whose argument is NULL (`COUNT(*)`, `ARRAY_AGG` without
    /// `IGNORE NULLS`, `JSON_ARRAYAGG … NULL ON NULL`); every other one skips them.
    pub fn counts_nulls(&self) -> bool {
        match self {
            // A function written in Rust sees NULL arguments, as Flink's user functions do.
            AggregateKind::CountStar | AggregateKind::User(_) => true,
            AggregateKind::ArrayAgg { ignore_nulls } => !ignore_nulls,
            AggregateKind::JsonArrayAgg { null_on_null } => *null_on_null,
            AggregateKind::Count
            | AggregateKind::Sum
            | AggregateKind::Sum0
            | AggregateKind::Min
            | AggregateKind::Max
            | AggregateKind::Avg
            | AggregateKind::FirstValue
            | AggregateKind::LastValue
            | AggregateKind::ListAgg { .. }
            | AggregateKind::StddevPop
            | AggregateKind::StddevSamp
            | AggregateKind::VarPop
            | AggregateKind::VarSamp
            | AggregateKind::Collect
            | AggregateKind::JsonObjectAgg { .. }
            | AggregateKind::ApproxCountDistinct => false,
        }
    }
}

/// Flink's refusal of `call` in a window whose slices merge (HOP, CUMULATE), when its function
/// cannot merge accumulators: `Could not find an implementation method 'merge' in class '…'`.
pub fn slice_merge_refusal(call: &AggregateCall) -> Option<String> {
    let class = call.kind.function().unmergeable_class?;
    let name = match call.kind {
        AggregateKind::JsonArrayAgg { null_on_null: true } => "JSON_ARRAYAGG_NULL_ON_NULL",
        AggregateKind::JsonArrayAgg { null_on_null: false } => "JSON_ARRAYAGG_ABSENT_ON_NULL",
        AggregateKind::User(ref user) => {
            return Some(format!(
                "Could not find an implementation method 'merge' in function '{}' (a function written in \
                 Rust runs in one phase; HOP and CUMULATE windows merge their slices)",
                user.function.name()
            ))
        }
        ref other => other.function().name,
    };
    Some(format!(
        "Could not find an implementation method 'merge' in class \
         'org.apache.flink.table.runtime.functions.aggregate.{class}' for function '{name}' that matches the \
         following signature:\nvoid merge(org.apache.flink.table.data.RowData, java.lang.Iterable)"
    ))
}

/// The names of the aggregate functions, upper case.
pub fn names() -> impl Iterator<Item = &'static str> {
    BINDINGS.iter().map(|(name, _)| *name)
}

/// Whether `name` (any case) is an aggregate function.
pub fn is_aggregate(name: &str) -> bool {
    binding(name).is_some()
}

/// How a call of a function binds to its kind.
enum Binding {
    /// One argument, this kind.
    One(AggregateKind),
    /// One argument, the kind the clauses written in the call make.
    OneWith(fn(CallClauses) -> AggregateKind),
    /// Any number of arguments, the kind their number makes.
    ByArity(fn(usize) -> AggregateKind),
    /// Its own rule: arity, clauses and parameters taken out of the arguments.
    Own(fn(&mut Vec<Expr>, CallClauses) -> Result<AggregateKind, BindError>),
}

/// Every aggregate function by its SQL name (`SUM0` is Calcite's `$SUM0`), and how a call of it
/// binds: the one list of the functions a query can call.
const BINDINGS: [(&str, Binding); 18] = [
    ("COLLECT", Binding::One(AggregateKind::Collect)),
    ("ARRAY_AGG", Binding::OneWith(array_agg)),
    ("JSON_ARRAYAGG", Binding::OneWith(json_arrayagg)),
    ("JSON_OBJECTAGG", Binding::Own(json_objectagg)),
    ("APPROX_COUNT_DISTINCT", Binding::One(AggregateKind::ApproxCountDistinct)),
    ("COUNT", Binding::ByArity(count)),
    ("SUM", Binding::One(AggregateKind::Sum)),
    ("SUM0", Binding::One(AggregateKind::Sum0)),
    ("MIN", Binding::One(AggregateKind::Min)),
    ("MAX", Binding::One(AggregateKind::Max)),
    ("AVG", Binding::One(AggregateKind::Avg)),
    ("LISTAGG", Binding::Own(listagg)),
    ("FIRST_VALUE", Binding::One(AggregateKind::FirstValue)),
    ("LAST_VALUE", Binding::One(AggregateKind::LastValue)),
    ("STDDEV_POP", Binding::One(AggregateKind::StddevPop)),
    ("STDDEV_SAMP", Binding::One(AggregateKind::StddevSamp)),
    ("VAR_POP", Binding::One(AggregateKind::VarPop)),
    ("VAR_SAMP", Binding::One(AggregateKind::VarSamp)),
];

/// The binding of function `name` (any case), if it is an aggregate.
fn binding(name: &str) -> Option<&'static Binding> {
    BINDINGS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, b)| b)
}

fn array_agg(clauses: CallClauses) -> AggregateKind {
    AggregateKind::ArrayAgg { ignore_nulls: clauses.ignore_nulls.unwrap_or(false) }
}

fn json_arrayagg(clauses: CallClauses) -> AggregateKind {
    AggregateKind::JsonArrayAgg { null_on_null: clauses.null_on_null.unwrap_or(false) }
}

/// JSON_OBJECTAGG's key and value become one `ROW(k, v)`; its key must be a character string.
fn json_objectagg(args: &mut Vec<Expr>, clauses: CallClauses) -> Result<AggregateKind, BindError> {
    if args.len() != 2 {
        return Err(BindError::Arity);
    }
    let key = args[0].ty();
    if !matches!(key.logical, LogicalType::Varchar(_) | LogicalType::Char(_)) {
        let name = match clauses.null_on_null {
            Some(false) => "JSON_OBJECTAGG_ABSENT_ON_NULL",
            Some(true) | None => "JSON_OBJECTAGG_NULL_ON_NULL",
        };
        return Err(BindError::Key(name, key.clone(), args[1].ty().clone()));
    }
    let value = args.remove(1);
    let key = args.remove(0);
    args.push(crate::expr::functions::collection::row_of(vec![key, value]));
    Ok(AggregateKind::JsonObjectAgg { null_on_null: clauses.null_on_null.unwrap_or(true) })
}

/// `COUNT(*)` (no argument) or `COUNT(x, …)`.
fn count(arguments: usize) -> AggregateKind {
    match arguments {
        0 => AggregateKind::CountStar,
        _ => AggregateKind::Count,
    }
}

/// LISTAGG's separator, a string literal (`,` by default), is taken out of the arguments.
fn listagg(args: &mut Vec<Expr>, _: CallClauses) -> Result<AggregateKind, BindError> {
    let delimiter = match args.get(1..) {
        Some([]) => ",".to_string(),
        Some([Expr::Literal { value: Value::String(s), .. }]) => s.to_string(),
        Some([_]) => return Err(BindError::Separator),
        Some(_) | None => return Err(BindError::Arity),
    };
    args.truncate(1);
    Ok(AggregateKind::ListAgg { delimiter })
}

fn exactly_one(args: &[Expr]) -> Result<(), BindError> {
    match args.len() {
        1 => Ok(()),
        _ => Err(BindError::Arity),
    }
}

/// Why a call of an aggregate does not bind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindError {
    /// Flink's `Invalid number of arguments to function '…'`.
    Arity,
    /// LISTAGG's separator is not a string literal.
    Separator,
    /// A clause the function does not take (`IGNORE NULLS` of `COUNT`), as written.
    Clause(String),
    /// JSON_OBJECTAGG's key is not a character string: Calcite's name of the call
    /// (`JSON_OBJECTAGG_NULL_ON_NULL`) and the key's and value's types.
    Key(&'static str, DataType, DataType),
}

/// The clauses written inside an aggregate call's parentheses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallClauses {
    /// `IGNORE NULLS` (`Some(true)`) or `RESPECT NULLS` (`Some(false)`).
    pub ignore_nulls: Option<bool>,
    /// `NULL ON NULL` (`Some(true)`) or `ABSENT ON NULL` (`Some(false)`).
    pub null_on_null: Option<bool>,
}

/// The kind of a call of aggregate `name` (upper case) over the bound arguments `args`
/// (`COUNT(*)` has none) with `clauses`; arguments the kind keeps as parameters (LISTAGG's
/// separator) are taken out of `args`, and JSON_OBJECTAGG's key and value become one `ROW(k, v)`.
/// `Ok(None)` when `name` is no aggregate.
///
/// # Errors
/// A call with the wrong number of arguments or a clause it does not take, a separator that is
/// no string literal, a JSON_OBJECTAGG key that is no string.
pub fn bind(name: &str, args: &mut Vec<Expr>, clauses: CallClauses) -> Result<Option<AggregateKind>, BindError> {
    let clause = |text: &str| Err(BindError::Clause(text.to_string()));
    match (name, clauses.ignore_nulls, clauses.null_on_null) {
        ("ARRAY_AGG", _, None) | ("JSON_ARRAYAGG" | "JSON_OBJECTAGG", None, _) | (_, None, None) => {}
        (_, Some(true), _) if name != "ARRAY_AGG" => return clause("IGNORE NULLS"),
        (_, Some(false), _) if name != "ARRAY_AGG" => return clause("RESPECT NULLS"),
        (_, _, Some(true)) => return clause("NULL ON NULL"),
        (_, _, _) => return clause("ABSENT ON NULL"),
    }
    let Some(binding) = binding(name) else { return Ok(None) };
    let kind = match binding {
        Binding::One(kind) => {
            exactly_one(args)?;
            kind.clone()
        }
        Binding::OneWith(kind) => {
            exactly_one(args)?;
            kind(clauses)
        }
        Binding::ByArity(kind) => kind(args.len()),
        Binding::Own(bind) => bind(args, clauses)?,
    };
    Ok(Some(kind))
}

/// The calls an OVER window computes for `call`: SUM as Calcite expands it over a window (a
/// COUNT and a `$SUM0`, the SUM being NULL when the count is 0), every other call as it is.
pub fn over_window_calls(call: AggregateCall) -> Vec<AggregateCall> {
    if call.kind != AggregateKind::Sum {
        return vec![call];
    }
    vec![
        AggregateCall { kind: AggregateKind::Count, result_type: DataType::bigint().not_null(), ..call.clone() },
        AggregateCall { kind: AggregateKind::Sum0, result_type: call.result_type.clone().not_null(), ..call },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names an aggregate is recognised by and the calls [`bind`] binds are one list: every
    /// name binds with one or two arguments, and no other name does.
    #[test]
    fn every_aggregate_name_binds_and_no_other_does() {
        let arg = || Expr::literal(Value::string("a"), DataType::string());
        for name in names() {
            let binds = (1..=2).any(|n| matches!(bind(name, &mut vec![arg(); n], CallClauses::default()), Ok(Some(_))));
            assert!(binds, "{name} is an aggregate's name but binds no call");
        }
        assert_eq!(bind("UPPER", &mut vec![arg()], CallClauses::default()), Ok(None));
    }
}
