//! The accumulators of one key over one slice: what a window aggregate keeps in state and a
//! local window aggregate sends on, and how slices merge into a window.

use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::state::StateValue;
use weir_runtime::{DataType, Value};

use crate::aggregate::distinct::{counts_buffer, DistinctArgs, DistinctValues};
use crate::aggregate::{AccumulateError, Accumulator, AggregateCall};

/// The aggregates a window aggregate computes and how their inputs look.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Calls {
    /// The calls.
    pub calls: Vec<AggregateCall>,
    /// The type of each call's argument.
    pub arg_types: Vec<Option<DataType>>,
    /// The DISTINCT calls' argument columns and which set each call reads.
    pub distinct: DistinctArgs,
    /// Whether the input retracts rows.
    pub retracting: bool,
}

impl Calls {
    /// `calls` over arguments of `arg_types`.
    pub fn new(calls: Vec<AggregateCall>, arg_types: Vec<Option<DataType>>, retracting: bool) -> Self {
        Calls { distinct: DistinctArgs::of(&calls), calls, arg_types, retracting }
    }

    /// Number of columns of a partial row after the keys: partials, distinct sets, rows.
    pub fn partial_width(&self) -> usize {
        self.calls.iter().map(Accumulator::partial_width).sum::<usize>() + self.distinct.len() + 1
    }
}

/// One key's accumulators over one slice (or a window's merged slices).
#[derive(Debug, Clone)]
pub(crate) struct SliceAccumulators {
    /// Rows added less rows retracted: a window without rows is not emitted.
    pub rows: i64,
    /// One per call, on the heap: a window aggregate keeps one of these per key and slice, so
    /// the struct stays small (a key's open slices sit in a short vector of the state).
    accumulators: Box<[Accumulator]>,
    /// The values of each DISTINCT argument, with multiplicities.
    distinct: Vec<DistinctValues>,
}

impl SliceAccumulators {
    /// Empty accumulators of `calls`.
    pub fn new(calls: &Calls) -> Self {
        SliceAccumulators {
            rows: 0,
            accumulators: Accumulator::for_calls(&calls.calls, &calls.arg_types, calls.retracting),
            distinct: calls.distinct.empty_sets(),
        }
    }

    /// The accumulators as the aggregate of `calls` holds them after a restore from a state of
    /// other calls: accumulator `i` is old call `restored[i]`'s, or empty for a new call. The
    /// DISTINCT calls do not change, nor do their values.
    pub fn remap(&mut self, restored: &[Option<usize>], calls: &Calls) {
        let old = std::mem::take(&mut self.accumulators);
        let fresh = |i: usize| Accumulator::new(&calls.calls[i], calls.arg_types[i].as_ref(), calls.retracting);
        self.accumulators = restored
            .iter()
            .enumerate()
            .map(|(i, c)| c.and_then(|j| old.get(j).cloned()).unwrap_or_else(|| fresh(i)))
            .collect();
    }

    /// Whether these accumulators fit `calls` (a restored state of other aggregates does not).
    pub fn fits(&self, calls: &Calls) -> bool {
        self.accumulators.len() == calls.calls.len() && calls.distinct.fits(&self.distinct)
    }

    /// Adds (`sign` 1) or retracts (-1) an input row.
    ///
    /// # Errors
    /// What an aggregate function refuses ([`Accumulator::update`]).
    pub fn add_row(&mut self, calls: &Calls, row: &[Value], sign: i64) -> Result<(), AccumulateError> {
        let mut failed = Ok(());
        self.rows += sign;
        // A DISTINCT call sees a value's first arrival and last departure in the slice.
        let changes = calls.distinct.count_row(&mut self.distinct, row, sign);
        for (i, (call, acc)) in calls.calls.iter().zip(self.accumulators.iter_mut()).enumerate() {
            if call.filter.is_some_and(|f| row[f] != Value::Boolean(true)) {
                continue;
            }
            let x = call.arg.map_or(&Value::Null, |a| &row[a]);
            // Every call takes the row; the first refusal is reported after them.
            let change = calls.distinct.slot(i).map_or(sign, |slot| changes[slot.flat]);
            let updated = if change == 0 { Ok(()) } else { acc.update(call, x, change) };
            if updated.is_err() {
                failed = updated;
            }
        }
        failed
    }

    /// Writes the partial row of these accumulators after the key: partials, distinct sets
    /// ([`DistinctValues::to_partial`]) and rows.
    pub fn write_partial(&self, values: &mut Vec<Value>) {
        self.accumulators.iter().for_each(|a| a.partial(values));
        values.extend(self.distinct.iter().map(DistinctValues::to_partial));
        values.push(Value::BigInt(self.rows));
    }

    /// Merges a partial row [`SliceAccumulators::write_partial`] wrote (`partial`, after the key).
    ///
    /// # Errors
    /// What an aggregate function refuses ([`Accumulator::update`]).
    pub fn add_partial(&mut self, calls: &Calls, partial: &[Value]) -> Result<(), AccumulateError> {
        let mut at = 0;
        for (i, (call, acc)) in calls.calls.iter().zip(self.accumulators.iter_mut()).enumerate() {
            let width = Accumulator::partial_width(call);
            if calls.distinct.slot(i).is_none() {
                acc.merge_partial(call, &partial[at..at + width]);
            }
            at += width;
        }
        for set in 0..calls.distinct.len() {
            let Self { distinct, accumulators, .. } = self;
            distinct[set].add_partial(&partial[at + set], |x, changes| {
                calls.distinct.update_calls(&calls.calls, accumulators, set, x, changes)
            })?;
        }
        self.rows += partial[at + calls.distinct.len()].as_i64().unwrap_or(0);
        Ok(())
    }

    /// Merges another slice's accumulators into these.
    ///
    /// # Errors
    /// What an aggregate function refuses ([`Accumulator::update`]).
    pub fn merge(&mut self, calls: &Calls, other: &SliceAccumulators) -> Result<(), AccumulateError> {
        for (i, (call, (acc, from))) in
            calls.calls.iter().zip(self.accumulators.iter_mut().zip(&other.accumulators)).enumerate()
        {
            if calls.distinct.slot(i).is_none() {
                acc.merge(call, from)?;
            }
        }
        for (set, values) in other.distinct.iter().enumerate() {
            self.count_distinct(calls, set, values)?;
        }
        self.rows += other.rows;
        Ok(())
    }

    /// Adds `values` with their counts to DISTINCT set `set`, updating the calls reading it on
    /// a value's first arrival and last departure under their filter.
    fn count_distinct(&mut self, calls: &Calls, set: usize, values: &DistinctValues) -> Result<(), AccumulateError> {
        let mut changes = counts_buffer(values.width());
        for (x, deltas) in values.iter() {
            if self.distinct[set].add(x, deltas, &mut changes) {
                calls.distinct.update_calls(&calls.calls, &mut self.accumulators, set, x, &changes)?;
            }
        }
        Ok(())
    }

    /// Appends the result of every call.
    pub fn results(&self, calls: &Calls, values: &mut Vec<Value>) {
        values.extend(self.accumulators.iter().zip(&calls.calls).map(|(a, c)| a.result(c)));
    }
}

/// A slice in a checkpoint: rows, accumulators (with their number) and distinct sets.
impl StateValue for SliceAccumulators {
    fn encode(&self, out: &mut Encoder) {
        out.i64(self.rows);
        out.u32(self.accumulators.len() as u32);
        self.accumulators.iter().for_each(|a| a.encode(out));
        out.u32(self.distinct.len() as u32);
        self.distinct.iter().for_each(|values| values.encode(out));
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let rows = input.i64()?;
        let accumulators = (0..input.u32()?).map(|_| Accumulator::decode(input)).collect::<Result<_, _>>()?;
        let distinct = (0..input.u32()?).map(|_| DistinctValues::decode(input)).collect::<Result<_, _>>()?;
        Ok(SliceAccumulators { rows, accumulators, distinct })
    }
}
