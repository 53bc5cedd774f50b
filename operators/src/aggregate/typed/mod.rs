//! Group state as typed machine words indexed by group id: the columnar form of the group
//! aggregates (one-phase, and the local and global phases of a two-phase aggregation).
//!
//! A key table maps a group key to a dense group id; a [`Slab`] holds, per group id, the
//! rows present and, per aggregate call, its accumulator (value and count) and the last result
//! emitted, side by side in one `Vec<i64>`, so that a row's update touches one or two cache
//! lines instead of a group entry of values (DataFusion's `GroupsAccumulator` idea, laid out
//! per group because Flink's changelog is emitted per record). Results equal those of
//! [`Accumulator`](super::Accumulator).
//!
//! Covered ([`TypedCalls::supports`]): keys of any non-nested types (one integer or DATE
//! column read as its values, others as `arrow-row` rows); `COUNT(*)`, `COUNT(x)`,
//! `SUM` / `$SUM0` and `AVG` of integers and of DOUBLEs, and `MIN` / `MAX` of integers over insert-only input, each
//! with or without `FILTER (WHERE …)`; no `DISTINCT`. Other aggregates keep their state as values.

mod changelog;
pub(crate) mod checkpoint;
mod global;
mod groups;
mod keys;
mod local;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int16Type, Int32Type, Int64Type, Int8Type};
use arrow_array::{Array, ArrayRef, Float64Array, PrimitiveArray};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType as ArrowType;
use weir_runtime::columnar::{arrow_type, wrap_to_bits, IntColumn};
use weir_runtime::{DataType, LogicalType};

pub use global::TypedGlobalGroups;
pub use groups::TypedGroups;
pub use local::TypedLocalGroups;

use keys::{GroupKeys, KeyTable};

use super::{AggregateCall, AggregateKind};

/// How one call accumulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    CountStar,
    Count,
    /// SUM and $SUM0 of integers (wrapping in the result type) or, `double`, of DOUBLEs (the
    /// sum's bits in the word).
    Sum {
        zero_when_empty: bool,
        double: bool,
    },
    /// AVG of integers (an i64 sum divided as integers, as Flink's) or, `double`, of DOUBLEs;
    /// the count of values beside the sum.
    Avg {
        double: bool,
    },
    Min,
    Max,
}

/// One aggregate call as the typed state computes it.
#[derive(Debug, Clone)]
pub(crate) struct TypedCall {
    pub kind: Kind,
    pub arg: Option<usize>,
    /// The BOOLEAN column of `FILTER (WHERE …)`: only rows where it is TRUE count.
    pub filter: Option<usize>,
    /// Bits of the result type (sums wrap in it, as Flink's do).
    pub bits: u8,
    pub result_type: ArrowType,
}

impl TypedCall {
    /// A sum or average's word plus `sign` times `x`: DOUBLEs as Flink adds them, integers
    /// wrapping, a SUM's narrowed to its result type (an AVG's sum stays 64 bits, as Flink's).
    #[inline]
    fn add(&self, sum: i64, x: i64, sign: i64) -> i64 {
        match self.kind {
            Kind::Sum { double: true, .. } | Kind::Avg { double: true } => {
                (f64_of(sum) + sign as f64 * f64_of(x)).to_bits() as i64
            }
            Kind::Sum { .. } => wrap_to_bits(sum.wrapping_add(sign.wrapping_mul(x)), self.bits),
            _ => sum.wrapping_add(sign.wrapping_mul(x)),
        }
    }

    /// Whether a local phase emits a count of values after the partial value (sums and averages).
    pub fn has_count(&self) -> bool {
        matches!(self.kind, Kind::Sum { .. } | Kind::Avg { .. })
    }

    /// The type of the partial value a local phase emits: a sum's is the result type, an
    /// average's sum a BIGINT or DOUBLE (as the value accumulator's).
    pub fn partial_type(&self) -> ArrowType {
        match self.kind {
            Kind::Avg { double: false } => ArrowType::Int64,
            _ => self.result_type.clone(),
        }
    }
}

/// The calls of an aggregate, as the typed state computes them.
#[derive(Debug, Clone)]
pub struct TypedCalls {
    calls: Vec<TypedCall>,
}

impl TypedCalls {
    /// Whether the typed state computes `calls` grouped by `keys` over `input_types` exactly
    /// as their accumulators do (`retracting`: the input may retract rows).
    /// `FILTER (WHERE b)` is covered for BOOLEAN columns `b`.
    pub fn supports(keys: &[usize], calls: &[AggregateCall], input_types: &[DataType], retracting: bool) -> bool {
        let arg_types: Vec<Option<DataType>> =
            calls.iter().map(|c| c.arg.and_then(|a| input_types.get(a).cloned())).collect();
        let boolean = |f: usize| input_types.get(f).is_some_and(|t| t.logical == LogicalType::Boolean);
        !keys.is_empty()
            && keys.iter().all(|&k| GroupKeys::supports(&input_types[k]))
            && calls.iter().all(|c| c.filter.is_none_or(boolean))
            && TypedCalls::supports_calls(calls, &arg_types, retracting)
    }

    /// Whether the typed state computes the functions of `calls`, whose arguments have
    /// `arg_types` (one per call), their filters aside: a global phase merges partials that the
    /// local phase filtered.
    pub fn supports_calls(calls: &[AggregateCall], arg_types: &[Option<DataType>], retracting: bool) -> bool {
        calls.len() <= MAX_CALLS
            && calls.iter().zip(arg_types).all(|(c, arg_type)| typed_supports(c, arg_type.as_ref(), retracting))
    }

    /// The typed form of `calls` (see [`TypedCalls::supports`]); `None` when one is not computed
    /// by the typed state.
    pub fn new(calls: &[AggregateCall]) -> Option<Self> {
        let calls = calls
            .iter()
            .map(|c| {
                Some(TypedCall {
                    kind: typed_form(c)?,
                    arg: c.arg,
                    filter: c.filter,
                    bits: c.result_type.integer_bits().unwrap_or(64),
                    result_type: arrow_type(&c.result_type),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(TypedCalls { calls })
    }

    pub(crate) fn iter(&self) -> std::slice::Iter<'_, TypedCall> {
        self.calls.iter()
    }

    pub(crate) fn len(&self) -> usize {
        self.calls.len()
    }
}

/// At most this many calls: the validity of their last results is one word's bits.
const MAX_CALLS: usize = 62;

/// Per group: `[rows, validity of the last results (a bit per call), (value, count, last) per call]`.
#[derive(Debug)]
pub(crate) struct Slab {
    stride: usize,
    data: Vec<i64>,
}

const ROWS: usize = 0;
const LAST_VALID: usize = 1;
const CALLS: usize = 2;

impl Slab {
    pub fn new(calls: usize) -> Self {
        Slab { stride: CALLS + 3 * calls, data: Vec::new() }
    }

    /// Makes room for `additional` more groups.
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), std::collections::TryReserveError> {
        self.data.try_reserve(additional.saturating_mul(self.stride))
    }

    /// Adds a zeroed group at the end.
    pub fn grow(&mut self) {
        self.data.resize(self.data.len() + self.stride, 0);
    }

    /// The words of group `g`.
    #[inline]
    pub fn group(&mut self, g: u32) -> Group<'_> {
        let start = g as usize * self.stride;
        Group { words: &mut self.data[start..start + self.stride] }
    }

    /// Drops every group, keeping the allocation.
    pub fn clear(&mut self) {
        self.data.clear();
    }

    /// Words per group.
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// The words of group `g`, to write into a checkpoint.
    pub fn words(&self, g: u32) -> &[i64] {
        let start = g as usize * self.stride;
        &self.data[start..start + self.stride]
    }

    /// Sets the words of group `g` from a checkpoint.
    pub fn set_words(&mut self, g: u32, words: &[i64]) {
        let start = g as usize * self.stride;
        self.data[start..start + self.stride].copy_from_slice(words);
    }
}

/// The state of one group in a [`Slab`].
pub(crate) struct Group<'a> {
    words: &'a mut [i64],
}

impl Group<'_> {
    /// Rows present (the hidden `COUNT(*)`).
    #[inline]
    pub fn rows(&mut self) -> &mut i64 {
        &mut self.words[ROWS]
    }

    /// Zeroes the group for reuse.
    pub fn reset(&mut self) {
        self.words.fill(0);
    }

    #[inline]
    fn value(&mut self, c: usize) -> &mut i64 {
        &mut self.words[CALLS + 3 * c]
    }

    #[inline]
    fn count(&mut self, c: usize) -> &mut i64 {
        &mut self.words[CALLS + 3 * c + 1]
    }

    /// Adds (`sign` = 1) or retracts (`sign` = -1) one input value of call `c` (`None` is NULL).
    #[inline]
    pub fn update(&mut self, c: usize, call: &TypedCall, x: Option<i64>, sign: i64) {
        match (call.kind, x) {
            (Kind::CountStar, _) => *self.value(c) += sign,
            (_, None) => {}
            (Kind::Count, Some(_)) => *self.value(c) += sign,
            (Kind::Sum { .. } | Kind::Avg { .. }, Some(x)) => {
                let sum = self.value(c);
                *sum = call.add(*sum, x, sign);
                *self.count(c) += sign;
            }
            (Kind::Min | Kind::Max, Some(x)) => {
                let seen = *self.count(c) > 0;
                let current = *self.value(c);
                let better = !seen || if call.kind == Kind::Min { x < current } else { x > current };
                if better && sign > 0 {
                    *self.value(c) = x;
                    *self.count(c) = 1;
                }
            }
        }
    }

    /// Merges a local phase's partial state of call `c`: `value` and, for sums, `count`.
    #[inline]
    pub fn merge(&mut self, c: usize, call: &TypedCall, value: Option<i64>, count: Option<i64>) {
        match call.kind {
            Kind::CountStar | Kind::Count => *self.value(c) += value.unwrap_or(0),
            Kind::Sum { .. } | Kind::Avg { .. } => {
                if let Some(v) = value {
                    let sum = self.value(c);
                    *sum = call.add(*sum, v, 1);
                }
                *self.count(c) += count.unwrap_or(0);
            }
            Kind::Min | Kind::Max => self.update(c, call, value, 1),
        }
    }

    /// The current result of call `c` (`None` is NULL).
    #[inline]
    pub fn result(&mut self, c: usize, call: &TypedCall) -> Option<i64> {
        let (value, count) = (*self.value(c), *self.count(c));
        match call.kind {
            Kind::CountStar | Kind::Count => Some(value),
            // 0 is also the bits of a DOUBLE 0.0.
            Kind::Sum { zero_when_empty, .. } if count == 0 => zero_when_empty.then_some(0),
            Kind::Sum { .. } | Kind::Min | Kind::Max => (count > 0).then_some(value),
            Kind::Avg { .. } if count <= 0 => None,
            Kind::Avg { double: true } => Some((f64_of(value) / count as f64).to_bits() as i64),
            Kind::Avg { double: false } => Some(wrap_to_bits(value.wrapping_div(count), call.bits)),
        }
    }

    /// The partial state of call `c` a local phase emits: `(value, count)`; the count only
    /// matters for sums. A sum of no values is 0 (as the value accumulator's), an extreme NULL.
    pub fn partial(&mut self, c: usize, call: &TypedCall) -> (Option<i64>, i64) {
        let (value, count) = (*self.value(c), *self.count(c));
        match call.kind {
            Kind::Min | Kind::Max => ((count > 0).then_some(value), count),
            _ => (Some(value), count),
        }
    }

    /// The last result emitted for call `c`.
    #[inline]
    pub fn last(&mut self, c: usize) -> Option<i64> {
        let valid = self.words[LAST_VALID] & (1 << c) != 0;
        valid.then(|| self.words[CALLS + 3 * c + 2])
    }

    /// Records the current results as the last emitted ones.
    pub fn remember_results(&mut self, calls: &TypedCalls) {
        for (c, call) in calls.iter().enumerate() {
            let r = self.result(c, call);
            self.words[CALLS + 3 * c + 2] = r.unwrap_or(0);
            if r.is_some() {
                self.words[LAST_VALID] |= 1 << c;
            } else {
                self.words[LAST_VALID] &= !(1 << c);
            }
        }
    }

    /// Whether some result differs from the last one emitted.
    pub fn changed(&mut self, calls: &TypedCalls) -> bool {
        calls.iter().enumerate().any(|(c, call)| self.result(c, call) != self.last(c))
    }
}

/// Whether the typed group state computes `call` over an argument of `arg_type` exactly as its
/// accumulator does: `COUNT(*)`, `COUNT(x)`, `SUM` / `$SUM0` / `AVG` of integers into integers
/// or of DOUBLEs into DOUBLE, and `MIN` / `MAX` of integers over insert-only input; no DISTINCT.
fn typed_supports(call: &AggregateCall, arg_type: Option<&DataType>, retracting: bool) -> bool {
    let integer_arg = arg_type.is_some_and(|t| t.integer_bits().is_some());
    let integer_result = call.result_type.integer_bits().is_some();
    let double = |t: &DataType| t.logical == LogicalType::Double;
    let double_sum = arg_type.is_some_and(double) && double(&call.result_type);
    let supported = match typed_form(call) {
        None => return false,
        Some(Kind::CountStar) => true,
        Some(Kind::Count) => call.arg.is_some(),
        Some(Kind::Sum { .. } | Kind::Avg { .. }) => integer_arg && integer_result || double_sum,
        Some(Kind::Min | Kind::Max) => !retracting && integer_arg && integer_result,
    };
    supported && !call.distinct
}

/// How the typed group state computes `call` (one that [`typed_supports`]); `None` for a
/// function it does not compute.
fn typed_form(call: &AggregateCall) -> Option<Kind> {
    let double = call.result_type.logical == LogicalType::Double;
    match call.kind {
        AggregateKind::CountStar => Some(Kind::CountStar),
        AggregateKind::Count => Some(Kind::Count),
        AggregateKind::Sum => Some(Kind::Sum { zero_when_empty: false, double }),
        AggregateKind::Sum0 => Some(Kind::Sum { zero_when_empty: true, double }),
        AggregateKind::Avg => Some(Kind::Avg { double }),
        AggregateKind::Min => Some(Kind::Min),
        AggregateKind::Max => Some(Kind::Max),
        AggregateKind::FirstValue
        | AggregateKind::LastValue
        | AggregateKind::ListAgg { .. }
        | AggregateKind::StddevPop
        | AggregateKind::StddevSamp
        | AggregateKind::VarPop
        | AggregateKind::VarSamp
        | AggregateKind::Collect
        | AggregateKind::ArrayAgg { .. }
        | AggregateKind::JsonArrayAgg { .. }
        | AggregateKind::JsonObjectAgg { .. }
        | AggregateKind::ApproxCountDistinct
        | AggregateKind::User(_) => None,
    }
}

/// The calls the typed state's tests compare with the value accumulators': every function it
/// covers over input columns `1` (INT), `2` (BIGINT) and `5` (DOUBLE), with and without
/// `FILTER (WHERE column 4)`; extremes only over insert-only input.
#[cfg(test)]
pub(crate) fn test_calls(retracting: bool) -> Vec<AggregateCall> {
    use super::AggregateKind;
    let call = |kind, arg, ty: DataType| AggregateCall::new(kind, arg, ty);
    let count = || DataType::bigint().not_null();
    let mut calls = vec![
        call(AggregateKind::CountStar, None, count()),
        call(AggregateKind::Count, Some(2), count()),
        call(AggregateKind::Sum, Some(1), DataType::int()),
        call(AggregateKind::Sum0, Some(2), DataType::bigint()),
        call(AggregateKind::CountStar, None, count()).filtered_by(4),
        call(AggregateKind::Count, Some(1), count()).filtered_by(4),
        call(AggregateKind::Sum, Some(1), DataType::int()).filtered_by(4),
        call(AggregateKind::Sum, Some(2), DataType::bigint()).filtered_by(4),
        call(AggregateKind::Sum, Some(5), DataType::double()),
        call(AggregateKind::Sum0, Some(5), DataType::double()).filtered_by(4),
        call(AggregateKind::Avg, Some(1), DataType::int()),
        call(AggregateKind::Avg, Some(2), DataType::bigint()).filtered_by(4),
        call(AggregateKind::Avg, Some(5), DataType::double()),
    ];
    if !retracting {
        calls.push(call(AggregateKind::Max, Some(1), DataType::int()));
        calls.push(call(AggregateKind::Min, Some(2), DataType::bigint()));
        calls.push(call(AggregateKind::Max, Some(2), DataType::bigint()));
        calls.push(call(AggregateKind::Min, Some(1), DataType::int()).filtered_by(4));
        calls.push(call(AggregateKind::Max, Some(1), DataType::int()).filtered_by(4));
    }
    calls
}

/// The input columns [`test_calls`] reads, after a key column of type `key`: INT, BIGINT,
/// STRING (a second key), BOOLEAN (the filter) and DOUBLE.
#[cfg(test)]
pub(crate) fn test_types(key: DataType) -> Vec<DataType> {
    vec![key, DataType::int(), DataType::bigint(), DataType::string(), DataType::boolean(), DataType::double()]
}

/// A DOUBLE held in a word as its bits.
#[inline]
fn f64_of(word: i64) -> f64 {
    f64::from_bits(word as u64)
}

/// A column read as words: integers (and DATEs) as their values, DOUBLEs as their bits.
pub(crate) enum WordColumn {
    Integers(IntColumn),
    Doubles(Float64Array),
}

impl WordColumn {
    /// `array` as words; `None` for a type that is neither an integer nor a DOUBLE.
    pub fn of(array: &dyn Array) -> Option<WordColumn> {
        match array.as_primitive_opt::<Float64Type>() {
            Some(doubles) => Some(WordColumn::Doubles(doubles.clone())),
            None => IntColumn::of(array).map(WordColumn::Integers),
        }
    }

    /// The word of row `i`, `None` for NULL.
    #[inline]
    pub fn get(&self, i: usize) -> Option<i64> {
        match self {
            WordColumn::Integers(ints) => ints.get(i),
            WordColumn::Doubles(doubles) => doubles.is_valid(i).then(|| doubles.value(i).to_bits() as i64),
        }
    }
}

/// A column of the integer, DATE or DOUBLE type `ty` holding `values` (words as [`WordColumn`] reads them).
pub(crate) fn word_column(ty: &ArrowType, values: &[Option<i64>]) -> ArrayRef {
    let nulls = values.iter().any(Option::is_none).then(|| NullBuffer::from_iter(values.iter().map(Option::is_some)));
    macro_rules! build {
        ($t:ty, $native:ty) => {
            Arc::new(PrimitiveArray::<$t>::new(values.iter().map(|v| v.unwrap_or(0) as $native).collect(), nulls))
        };
    }
    match ty {
        ArrowType::Int8 => build!(Int8Type, i8),
        ArrowType::Int16 => build!(Int16Type, i16),
        ArrowType::Int32 => build!(Int32Type, i32),
        ArrowType::Date32 => build!(arrow_array::types::Date32Type, i32),
        ArrowType::Float64 => {
            Arc::new(PrimitiveArray::<Float64Type>::new(values.iter().map(|v| f64_of(v.unwrap_or(0))).collect(), nulls))
        }
        _ => build!(Int64Type, i64),
    }
}
