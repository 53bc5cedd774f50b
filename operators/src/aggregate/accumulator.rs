//! The state of one aggregate for one group, with accumulate, retract and the current result.

use std::collections::BTreeMap;
use std::sync::Arc;

use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::{DataType, LogicalType, Value};

use super::json::{write_json, write_key};
use super::numeric::{add, integer, rescale, unscaled_at, zero};
use super::{AggregateCall, AggregateKind};

/// Running sum for AVG: integral inputs sum as i64 and divide as integers, as in Flink.
#[derive(Debug, Clone, PartialEq)]
enum AvgSum {
    Integral(i64),
    Floating(f64),
    Decimal { unscaled: i128, scale: u8 },
}

/// The running variance of STDDEV and VAR as Flink 2.3's `WelfordM2AggFunction` keeps it: the
/// count of values, their mean and the sum of squared differences from it (`m2`), in DOUBLE,
/// updated one value at a time by Welford's method (retraction and merging by their formulas),
/// so that the results equal Flink's to the last bit.
#[derive(Debug, Clone, PartialEq)]
struct Welford {
    n: i64,
    mean: f64,
    m2: f64,
}

impl Welford {
    const EMPTY: Welford = Welford { n: 0, mean: 0.0, m2: 0.0 };

    /// The state that old checkpoints kept (count, Σx, Σx²), as Welford's.
    fn from_sums(count: i64, sum: f64, sum_of_squares: f64) -> Welford {
        if count <= 0 {
            return Welford { n: count, ..Welford::EMPTY };
        }
        let mean = sum / count as f64;
        Welford { n: count, mean, m2: sum_of_squares - sum * mean }
    }

    fn accumulate(&mut self, value: f64) {
        self.n += 1;
        if self.n <= 0 {
            return;
        }
        let delta = value - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (value - self.mean);
    }

    fn retract(&mut self, value: f64) {
        self.n -= 1;
        if self.n <= 0 {
            if self.n == 0 {
                (self.mean, self.m2) = (0.0, 0.0);
            }
            return;
        }
        let delta2 = value - self.mean;
        self.mean -= delta2 / self.n as f64;
        self.m2 -= (value - self.mean) * delta2;
    }

    fn merge(&mut self, other: &Welford) {
        if other.n <= 0 {
            self.n += other.n;
        } else if self.n == 0 {
            *self = other.clone();
            return;
        } else {
            let n = self.n + other.n;
            let delta = other.mean - self.mean;
            let mean = self.mean + other.n as f64 / n as f64 * delta;
            self.m2 = self.m2 + other.m2 + self.n as f64 * other.n as f64 / n as f64 * delta * delta;
            (self.n, self.mean) = (n, mean);
        }
        if self.n <= 0 {
            (self.mean, self.m2) = (0.0, 0.0);
        }
    }
}

/// A user function's value, or NULL in place of one that failed: the failure fails the
/// operator's call ([`weir_runtime::call_failure`]), so the NULL never leaves it.
fn or_fail_call(value: Result<Value, crate::expr::ExprError>) -> Value {
    value.unwrap_or_else(|e| {
        weir_runtime::call_failure::fail_current_call(e.0);
        Value::Null
    })
}

/// The state of one aggregate call for one group.
#[derive(Debug, Clone, PartialEq)]
pub struct Accumulator(State);

/// What an aggregate function refuses while it aggregates (a repeated JSON_OBJECTAGG key), in
/// Flink's words; one word wide, so that the per-row [`Accumulator::update`] stays cheap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccumulateError(Box<str>);

impl From<AccumulateError> for weir_runtime::Error {
    fn from(error: AccumulateError) -> Self {
        weir_runtime::Error::Execution(error.0.into())
    }
}

#[derive(Debug, Clone, PartialEq)]
enum State {
    /// COUNT(*) and COUNT(x).
    Count(i64),
    /// SUM and $SUM0: the sum in the result type and how many non-NULL values it holds.
    Sum { sum: Value, count: i64 },
    /// MIN and MAX over retracting input: every value present with its multiplicity.
    Extremum(BTreeMap<Value, i64>),
    /// MIN and MAX over insert-only input: the extreme so far.
    Extreme(Value),
    /// AVG: the running sum and how many non-NULL values it holds.
    Avg { sum: AvgSum, count: i64 },
    /// FIRST_VALUE and LAST_VALUE: non-NULL values present, in arrival order.
    Ordered(Vec<Value>),
    /// LISTAGG: non-NULL values present, in arrival order.
    List(Vec<Value>),
    /// STDDEV_* and VAR_*.
    Moments(Welford),
    /// JSON_OBJECTAGG: the entries present, by key.
    Entries(BTreeMap<Arc<str>, Value>),
    /// A function written in Rust: the accumulator it made.
    User(Value),
}

impl Accumulator {
    /// The empty accumulator of `call`, for an input column of type `arg_type`. With
    /// `retracting` false the input is insert-only and MIN / MAX keep only the extreme (as
    /// Flink picks `MaxAggFunction` over `MaxWithRetractAggFunction`).
    pub fn new(call: &AggregateCall, arg_type: Option<&DataType>, retracting: bool) -> Self {
        Accumulator(match &call.kind {
            AggregateKind::CountStar | AggregateKind::Count => State::Count(0),
            AggregateKind::Sum | AggregateKind::Sum0 => State::Sum { sum: zero(&call.result_type), count: 0 },
            AggregateKind::Min | AggregateKind::Max if !retracting => State::Extreme(Value::Null),
            AggregateKind::Min | AggregateKind::Max | AggregateKind::Collect | AggregateKind::ApproxCountDistinct => {
                State::Extremum(BTreeMap::new())
            }
            AggregateKind::Avg => {
                let sum = match arg_type.map(|t| &t.logical) {
                    Some(LogicalType::Float | LogicalType::Double) => AvgSum::Floating(0.0),
                    Some(LogicalType::Decimal { scale, .. }) => AvgSum::Decimal { unscaled: 0, scale: *scale },
                    _ => AvgSum::Integral(0),
                };
                State::Avg { sum, count: 0 }
            }
            AggregateKind::FirstValue
            | AggregateKind::LastValue
            | AggregateKind::ArrayAgg { .. }
            | AggregateKind::JsonArrayAgg { .. } => State::Ordered(Vec::new()),
            AggregateKind::JsonObjectAgg { .. } => State::Entries(BTreeMap::new()),
            AggregateKind::ListAgg { .. } => State::List(Vec::new()),
            AggregateKind::StddevPop | AggregateKind::StddevSamp | AggregateKind::VarPop | AggregateKind::VarSamp => {
                State::Moments(Welford::EMPTY)
            }
            AggregateKind::User(user) => State::User(or_fail_call(user.function.create_accumulator())),
        })
    }

    /// Adds (`sign` = 1) or retracts (`sign` = -1) one input value; `x` is `Value::Null` for
    /// COUNT(*). NULLs are skipped unless the function takes them
    /// ([`AggregateKind::counts_nulls`]). A retraction removes the earliest equal value of the
    /// functions that keep values in order, as Flink's list views do.
    ///
    /// # Errors
    /// What Flink refuses while aggregating: a JSON_OBJECTAGG key that is NULL or already present.
    pub fn update(&mut self, call: &AggregateCall, x: &Value, sign: i64) -> Result<(), AccumulateError> {
        if x.is_null() && !call.kind.counts_nulls() {
            return Ok(());
        }
        match &mut self.0 {
            State::Count(n) => *n += sign,
            State::Sum { sum, count } => {
                *sum = add(sum, x, sign, &call.result_type);
                *count += sign;
            }
            State::Extremum(values) => {
                let n = values.entry(x.clone()).or_insert(0);
                *n += sign;
                if *n == 0 {
                    values.remove(x);
                }
            }
            State::Extreme(current) => {
                if x.is_null() {
                    return Ok(());
                }
                let better = match (&call.kind, &*current) {
                    (_, Value::Null) => true,
                    (AggregateKind::Min, c) => x < c,
                    (_, c) => x > c,
                };
                if better && sign > 0 {
                    *current = x.clone();
                }
            }
            State::Avg { sum, count } => {
                match sum {
                    AvgSum::Integral(s) => *s = s.wrapping_add(sign.wrapping_mul(x.as_i64().unwrap_or(0))),
                    AvgSum::Floating(s) => *s += sign as f64 * x.as_f64().unwrap_or(0.0),
                    AvgSum::Decimal { unscaled, scale } => *unscaled += i128::from(sign) * unscaled_at(x, *scale),
                }
                *count += sign;
            }
            State::Ordered(values) | State::List(values) => {
                if sign > 0 {
                    values.push(x.clone());
                } else if let Some(i) = values.iter().position(|v| v == x) {
                    values.remove(i);
                }
            }
            State::Moments(m) => {
                let v = x.as_f64().unwrap_or(0.0);
                if sign > 0 {
                    m.accumulate(v);
                } else {
                    m.retract(v);
                }
            }
            State::Entries(entries) => return update_entries(entries, x, sign),
            State::User(accumulator) => {
                let AggregateKind::User(user) = &call.kind else { return Err(mismatched(call)) };
                let args = user.arguments(x);
                let done = if sign > 0 {
                    user.function.accumulate(accumulator, args)
                } else {
                    user.function.retract(accumulator, args)
                };
                return done.map_err(|e| AccumulateError(e.0.into()));
            }
        }
        Ok(())
    }

    /// Writes the accumulator for a checkpoint: a tag byte's worth of kind (as a value) and the
    /// numbers or values it holds, read back by [`Accumulator::decode`].
    pub fn encode(&self, out: &mut Encoder) {
        let tag = |out: &mut Encoder, t: i32| out.value(&Value::Int(t));
        match &self.0 {
            State::Count(n) => {
                tag(out, 0);
                out.i64(*n);
            }
            State::Sum { sum, count } => {
                tag(out, 1);
                out.value(sum);
                out.i64(*count);
            }
            State::Extremum(values) => {
                tag(out, 2);
                out.u32(values.len() as u32);
                for (v, n) in values {
                    out.value(v);
                    out.i64(*n);
                }
            }
            State::Extreme(v) => {
                tag(out, 3);
                out.value(v);
            }
            State::Avg { sum, count } => {
                tag(out, 4);
                match sum {
                    AvgSum::Integral(s) => out.value(&Value::BigInt(*s)),
                    AvgSum::Floating(s) => out.value(&Value::Double(*s)),
                    AvgSum::Decimal { unscaled, scale } => out.value(&Value::decimal(*unscaled, *scale)),
                }
                out.i64(*count);
            }
            State::Ordered(values) | State::List(values) => {
                tag(out, if matches!(self.0, State::Ordered(_)) { 5 } else { 6 });
                out.value(&Value::Array(values.clone().into()));
            }
            State::Moments(m) => {
                tag(out, 10);
                out.i64(m.n);
                out.value(&Value::Double(m.mean));
                out.value(&Value::Double(m.m2));
            }
            State::Entries(entries) => {
                tag(out, 8);
                out.u32(entries.len() as u32);
                for (k, v) in entries {
                    out.str(k);
                    out.value(v);
                }
            }
            State::User(accumulator) => {
                tag(out, 9);
                out.value(accumulator);
            }
        }
    }

    /// Reads what [`Accumulator::encode`] wrote.
    ///
    /// # Errors
    /// A damaged encoding, or one of a kind this build does not know.
    pub fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let unknown = |what: &str| DecodeError { offset: 0, what: what.to_string() };
        let tag = input.value()?.as_i64().ok_or_else(|| unknown("an accumulator's kind"))?;
        let double = |input: &mut Decoder<'_>| input.value().map(|v| v.as_f64().unwrap_or(0.0));
        Ok(Accumulator(match tag {
            0 => State::Count(input.i64()?),
            1 => State::Sum { sum: input.value()?, count: input.i64()? },
            2 => {
                let mut values = BTreeMap::new();
                for _ in 0..input.u32()? {
                    let v = input.value()?;
                    values.insert(v, input.i64()?);
                }
                State::Extremum(values)
            }
            3 => State::Extreme(input.value()?),
            4 => {
                let sum = match input.value()? {
                    Value::BigInt(s) => AvgSum::Integral(s),
                    Value::Double(s) => AvgSum::Floating(s),
                    d => {
                        let d = d.as_decimal().ok_or_else(|| unknown("an AVG's sum"))?;
                        AvgSum::Decimal { unscaled: d.unscaled, scale: d.scale }
                    }
                };
                State::Avg { sum, count: input.i64()? }
            }
            5 | 6 => {
                let Value::Array(values) = input.value()? else { return Err(unknown("the values of an aggregate")) };
                if tag == 5 {
                    State::Ordered(values.to_vec())
                } else {
                    State::List(values.to_vec())
                }
            }
            // Written before weir kept Welford's state: count, Σx, Σx².
            7 => State::Moments(Welford::from_sums(input.i64()?, double(input)?, double(input)?)),
            10 => State::Moments(Welford { n: input.i64()?, mean: double(input)?, m2: double(input)? }),
            8 => {
                let mut entries = BTreeMap::new();
                for _ in 0..input.u32()? {
                    let key: Arc<str> = Arc::from(input.str()?);
                    entries.insert(key, input.value()?);
                }
                State::Entries(entries)
            }
            9 => State::User(input.value()?),
            other => return Err(unknown(&format!("an accumulator, not kind {other}"))),
        }))
    }

    /// The empty accumulators of `calls`, whose arguments have `arg_types` (one per call), as
    /// [`Accumulator::new`] makes them.
    pub fn for_calls<C: FromIterator<Accumulator>>(
        calls: &[AggregateCall],
        arg_types: &[Option<DataType>],
        retracting: bool,
    ) -> C {
        calls.iter().zip(arg_types).map(|(c, t)| Accumulator::new(c, t.as_ref(), retracting)).collect()
    }

    /// Whether partial accumulators of `call` can be merged (two-phase aggregation), as its
    /// function says ([`super::registry`]); never for DISTINCT calls.
    pub fn is_mergeable(call: &AggregateCall, retracting: bool) -> bool {
        !call.distinct && call.kind.function().merges(retracting)
    }

    /// How many values [`Accumulator::partial`] writes for a mergeable call.
    pub fn partial_width(call: &AggregateCall) -> usize {
        call.kind.function().partials.len().max(1)
    }

    /// How many of its partials Flink's plans name (all but SUM's count, which only weir keeps).
    pub fn shown_partial_width(call: &AggregateCall) -> usize {
        Self::partial_width(call) - call.kind.function().hidden_partials
    }

    /// Appends this accumulator's state as values, for a local aggregate's output.
    pub fn partial(&self, out: &mut Vec<Value>) {
        match &self.0 {
            State::Count(n) => out.push(Value::BigInt(*n)),
            State::Sum { sum, count } => out.extend([sum.clone(), Value::BigInt(*count)]),
            State::Extreme(v) => out.push(v.clone()),
            State::Avg { sum, count } => {
                out.push(match sum {
                    AvgSum::Integral(s) => Value::BigInt(*s),
                    AvgSum::Floating(s) => Value::Double(*s),
                    AvgSum::Decimal { unscaled, scale } => Value::decimal(*unscaled, *scale),
                });
                out.push(Value::BigInt(*count));
            }
            // Not mergeable: never asked for (see `is_mergeable`).
            State::Extremum(_)
            | State::Ordered(_)
            | State::List(_)
            | State::Moments(_)
            | State::Entries(_)
            | State::User(_) => {}
        }
    }

    /// Merges the state a local aggregate wrote with [`Accumulator::partial`].
    pub fn merge_partial(&mut self, call: &AggregateCall, values: &[Value]) {
        let count = |i: usize| values.get(i).and_then(Value::as_i64).unwrap_or(0);
        match &mut self.0 {
            State::Count(n) => *n += count(0),
            State::Sum { sum, count: c } => {
                if let Some(v) = values.first().filter(|v| !v.is_null()) {
                    *sum = add(sum, v, 1, &call.result_type);
                }
                *c += count(1);
            }
            State::Extreme(_) => {
                if let Some(v) = values.first() {
                    // MIN and MAX take every value.
                    let _ = self.update(call, v, 1);
                }
            }
            State::Avg { sum, count: c } => {
                let v = values.first().cloned().unwrap_or(Value::Null);
                match sum {
                    AvgSum::Integral(s) => *s = s.wrapping_add(v.as_i64().unwrap_or(0)),
                    AvgSum::Floating(s) => *s += v.as_f64().unwrap_or(0.0),
                    AvgSum::Decimal { unscaled, scale } => *unscaled += unscaled_at(&v, *scale),
                }
                *c += count(1);
            }
            // Not mergeable: never asked for (see `is_mergeable`).
            State::Extremum(_)
            | State::Ordered(_)
            | State::List(_)
            | State::Moments(_)
            | State::Entries(_)
            | State::User(_) => {}
        }
    }

    /// Merges `other`, the accumulator of the same call over a later slice of a window (HOP and
    /// CUMULATE windows merge their slices): counts, sums and moments add up, value sets join,
    /// `other`'s values in order come after this one's.
    ///
    /// # Errors
    /// A JSON_OBJECTAGG key in both, as Flink refuses it.
    pub fn merge(&mut self, call: &AggregateCall, other: &Accumulator) -> Result<(), AccumulateError> {
        if let (State::Extreme(_), State::Extreme(more)) = (&self.0, &other.0) {
            // MIN and MAX over insert-only input: the other extreme is one more value.
            return self.update(call, more, 1);
        }
        match (&mut self.0, &other.0) {
            (State::Count(n), State::Count(more)) => *n += more,
            (State::Sum { sum, count }, State::Sum { sum: more, count: more_count }) => {
                if !more.is_null() {
                    *sum = add(sum, more, 1, &call.result_type);
                }
                *count += more_count;
            }
            (State::Avg { sum, count }, State::Avg { sum: more, count: more_count }) => {
                match (sum, more) {
                    (AvgSum::Integral(s), AvgSum::Integral(m)) => *s = s.wrapping_add(*m),
                    (AvgSum::Floating(s), AvgSum::Floating(m)) => *s += m,
                    (AvgSum::Decimal { unscaled, scale }, AvgSum::Decimal { unscaled: m, scale: from }) => {
                        *unscaled += rescale(*m, *from, *scale);
                    }
                    (AvgSum::Integral(_) | AvgSum::Floating(_) | AvgSum::Decimal { .. }, _) => {
                        return Err(mismatched(call));
                    }
                }
                *count += more_count;
            }
            (State::Extremum(values), State::Extremum(more)) => {
                for (v, n) in more {
                    let count = values.entry(v.clone()).or_insert(0);
                    *count += n;
                    if *count == 0 {
                        values.remove(v);
                    }
                }
            }
            (State::Ordered(values), State::Ordered(more)) | (State::List(values), State::List(more)) => {
                values.extend(more.iter().cloned());
            }
            (State::Moments(m), State::Moments(more)) => m.merge(more),
            (State::Entries(entries), State::Entries(more)) => {
                for (key, value) in more {
                    if entries.contains_key(key) {
                        return Err(duplicate_key(key));
                    }
                    entries.insert(Arc::clone(key), value.clone());
                }
            }
            (
                State::Count(_)
                | State::Sum { .. }
                | State::Extreme(_)
                | State::Avg { .. }
                | State::Extremum(_)
                | State::Ordered(_)
                | State::List(_)
                | State::Moments(_)
                | State::Entries(_)
                | State::User(_),
                _,
            ) => return Err(mismatched(call)),
        }
        Ok(())
    }

    /// The current result of `call`.
    pub fn result(&self, call: &AggregateCall) -> Value {
        match (&self.0, &call.kind) {
            (State::Count(n), _) => Value::BigInt(*n),
            (State::Sum { count: 0, .. }, AggregateKind::Sum) => Value::Null,
            (State::Sum { count: 0, .. }, _) => zero(&call.result_type),
            (State::Sum { sum, .. }, _) => sum.clone(),
            (State::Extremum(values), AggregateKind::Collect) => {
                Value::Map(values.iter().map(|(v, n)| (v.clone(), Value::Int(*n as i32))).collect())
            }
            (State::Extremum(values), AggregateKind::ApproxCountDistinct) => Value::BigInt(values.len() as i64),
            (State::Extremum(values), AggregateKind::Min) => values.keys().next().cloned().unwrap_or(Value::Null),
            (State::Extremum(values), _) => values.keys().next_back().cloned().unwrap_or(Value::Null),
            (State::Extreme(v), _) => v.clone(),
            (State::Avg { count, .. }, _) if *count <= 0 => Value::Null,
            (State::Avg { sum, count }, _) => average(sum, *count, &call.result_type),
            (State::Ordered(values), AggregateKind::ArrayAgg { .. }) if values.is_empty() => Value::Null,
            (State::Ordered(values), AggregateKind::ArrayAgg { .. }) => Value::Array(values.clone().into()),
            (State::Ordered(values), AggregateKind::JsonArrayAgg { .. }) => {
                let mut text = String::from("[");
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        text.push(',');
                    }
                    write_json(&mut text, v);
                }
                text.push(']');
                Value::String(Arc::from(text))
            }
            (State::Ordered(values), AggregateKind::FirstValue) => values.first().cloned().unwrap_or(Value::Null),
            (State::Ordered(values), _) => values.last().cloned().unwrap_or(Value::Null),
            (State::List(values), AggregateKind::ListAgg { delimiter }) if !values.is_empty() => {
                let mut text = String::new();
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        text.push_str(delimiter);
                    }
                    weir_runtime::print::write_value(&mut text, v);
                }
                Value::String(Arc::from(text))
            }
            (State::List(_), _) => Value::Null,
            (State::Moments(m), kind) => variance(m, kind, &call.result_type),
            (State::User(accumulator), AggregateKind::User(user)) => or_fail_call(user.function.get_value(accumulator)),
            (State::User(_), _) => Value::Null,
            (State::Entries(entries), kind) => {
                let null_on_null = *kind != AggregateKind::JsonObjectAgg { null_on_null: false };
                let mut text = String::from("{");
                for (k, v) in entries.iter().filter(|(_, v)| null_on_null || !v.is_null()) {
                    if text.len() > 1 {
                        text.push(',');
                    }
                    write_key(&mut text, &Value::String(Arc::clone(k)));
                    write_json(&mut text, v);
                }
                text.push('}');
                Value::String(Arc::from(text))
            }
        }
    }
}

/// JSON_OBJECTAGG's entries after a `ROW(key, value)` comes (`sign` 1) or goes (-1), with
/// Flink's errors for a NULL or repeated key.
fn update_entries(entries: &mut BTreeMap<Arc<str>, Value>, x: &Value, sign: i64) -> Result<(), AccumulateError> {
    let Value::Row(entry) = x else { return Ok(()) };
    let key: Arc<str> = match entry.first() {
        None | Some(Value::Null) => return Err(AccumulateError("Map views don't support null keys.".into())),
        Some(Value::String(k)) => Arc::clone(k),
        Some(other) => Arc::from(weir_runtime::print::value_to_string(other)),
    };
    if sign < 0 {
        entries.remove(&key);
        return Ok(());
    }
    if entries.contains_key(&key) {
        return Err(duplicate_key(&key));
    }
    entries.insert(key, entry.get(1).cloned().unwrap_or(Value::Null));
    Ok(())
}

/// Two accumulators of `call` that cannot merge: they were made for other calls.
fn mismatched(call: &AggregateCall) -> AccumulateError {
    AccumulateError(format!("the accumulators of {} over two slices differ in kind", call.kind.name()).into())
}

/// Flink's error for a JSON_OBJECTAGG key that is already present.
fn duplicate_key(key: &str) -> AccumulateError {
    AccumulateError(
        format!(
        "Key '{key}' is already present. Duplicate keys are not allowed in JSON_OBJECTAGG. Please ensure that keys \
         are unique."
    )
        .into(),
    )
}

fn average(sum: &AvgSum, count: i64, ty: &DataType) -> Value {
    match (sum, &ty.logical) {
        (AvgSum::Integral(s), LogicalType::Double) => Value::Double(*s as f64 / count as f64),
        (AvgSum::Integral(s), _) => integer(s.wrapping_div(count), ty),
        (AvgSum::Floating(s), LogicalType::Float) => Value::Float((*s / count as f64) as f32),
        (AvgSum::Floating(s), _) => Value::Double(*s / count as f64),
        (AvgSum::Decimal { unscaled, scale }, LogicalType::Decimal { scale: result_scale, .. }) => {
            // Divide at two extra digits, then round half up to the result's scale.
            let widened = rescale(*unscaled, *scale, result_scale + 2);
            Value::decimal(rescale(widened / i128::from(count), result_scale + 2, *result_scale), *result_scale)
        }
        (AvgSum::Decimal { unscaled, scale }, _) => {
            Value::Double(*unscaled as f64 / 10f64.powi(i32::from(*scale)) / count as f64)
        }
    }
}

/// Flink 2.3 plans VAR_POP(x) as `CAST(m2 / n AS R)` over Welford's `m2` (NULL for no value or
/// an `m2` below zero), VAR_SAMP as `m2 / (n - 1)` (NULL for one value) and STDDEV as their
/// `POWER(…, 0.5)`, in DOUBLE, cast to the result type `R` (the argument's; DECIMAL(38, max(6,
/// s)) for DECIMAL(p, s)) as CAST casts.
fn variance(m: &Welford, kind: &AggregateKind, result_type: &DataType) -> Value {
    if m.n <= 0 || m.m2 < 0.0 {
        return Value::Null;
    }
    let n = m.n as f64;
    let var = match kind {
        AggregateKind::VarPop | AggregateKind::StddevPop => m.m2 / n,
        _ if m.n == 1 => return Value::Null,
        _ => m.m2 / (n - 1.0),
    };
    let value = match kind {
        AggregateKind::StddevPop | AggregateKind::StddevSamp => var.powf(0.5),
        _ => var,
    };
    crate::expr::cast::cast(&Value::Double(value), &DataType::double(), result_type).unwrap_or(Value::Null)
}

#[cfg(test)]
#[path = "accumulator_tests.rs"]
mod tests;
