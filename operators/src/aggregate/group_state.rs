//! The keyed state of the stateful group aggregates (GroupAggregate and GlobalGroupAggregate):
//! one [`GroupState`] per group, held in keyed value state ([`ValueState`], which stamps each
//! group's last write for state TTL and checkpoints it), and Flink's rules for what a group's
//! change emits ([`Emission`]). The row-at-a-time paths of both operators keep their groups so;
//! the typed paths keep the same facts in typed vectors.

use smallvec::SmallVec;
use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::state::{StateValue, ValueState};
use weir_runtime::{Chunk, RowKind, Value};

use super::distinct::DistinctValues;

use super::{Accumulator, AggregateCall};

/// A group's key and results. Held inline in the group's state (up to four values), so that
/// comparing a new result with the last one reads no other memory.
pub(crate) type ResultRow = SmallVec<[Value; 4]>;

/// A group's key, held inline in the group table (up to two values), so that checking a hit
/// reads no other memory: the key of keyed state.
pub(crate) type GroupKey = weir_runtime::state::Key;

/// The groups of an aggregate, by key: the section `groups` of its checkpoints.
pub(crate) type Groups<D> = ValueState<GroupState<D>>;

/// The name of the groups' state (their section in checkpoints).
pub(crate) const GROUPS: &str = "groups";

/// One group: its rows, accumulators, the distinct values of its DISTINCT calls (`D`, kept as
/// each operator needs them) and the result it emitted last.
#[derive(Debug)]
pub(crate) struct GroupState<D> {
    /// Rows present (the hidden `COUNT(*)` Flink adds for retracting input).
    pub rows: i64,
    /// One accumulator per call.
    pub accumulators: SmallVec<[Accumulator; 4]>,
    /// The values DISTINCT calls have seen, with their multiplicities.
    pub distinct: D,
    /// The last result emitted (empty before the first).
    pub last: ResultRow,
}

impl<D> GroupState<D> {
    /// A group without rows.
    pub(crate) fn new(accumulators: SmallVec<[Accumulator; 4]>, distinct: D) -> Self {
        GroupState { rows: 0, accumulators, distinct, last: ResultRow::new() }
    }

    /// After the group's rows were applied at `now` (`first`: it had no rows before), emits its
    /// change into `emitted` as `how` says (computing the result with `key` in `scratch`);
    /// returns whether the group has no rows left and its state must go.
    pub(crate) fn emit_change(
        &mut self,
        first: bool,
        key: &[Value],
        calls: &[AggregateCall],
        how: Emission,
        scratch: &mut ResultRow,
        emitted: &mut Chunk,
    ) -> bool {
        let gone = self.rows <= 0;
        scratch.clear();
        if !gone {
            scratch.extend(key.iter().cloned());
            scratch.extend(self.accumulators.iter().zip(calls).map(|(a, c)| a.result(c)));
        }
        how.emit(first, gone, &mut self.last, scratch, emitted)
    }
}

impl<D: DistinctState> GroupState<D> {
    /// The group as the aggregate of other calls holds it after a restore: accumulator `i` (and
    /// the last result's column, after the `key_len` key columns) is old call `calls[i]`'s, or
    /// `fresh(i)` for a call that starts empty, whose last result is NULL (nothing was emitted
    /// for it; the typed groups hold the same). One-phase DISTINCT values follow their calls.
    pub(crate) fn remap(&mut self, calls: &[Option<usize>], key_len: usize, fresh: impl Fn(usize) -> Accumulator) {
        let old = std::mem::take(&mut self.accumulators);
        self.accumulators = calls
            .iter()
            .enumerate()
            .map(|(i, c)| c.and_then(|j| old.get(j).cloned()).unwrap_or_else(|| fresh(i)))
            .collect();
        if !self.last.is_empty() {
            let mut last: ResultRow = self.last[..key_len.min(self.last.len())].iter().cloned().collect();
            last.extend(
                calls.iter().map(|c| c.and_then(|j| self.last.get(key_len + j).cloned()).unwrap_or(Value::Null)),
            );
            self.last = last;
        }
        self.distinct.remap(calls);
    }
}

/// What a group's change emits: Flink's GroupAggFunction rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Emission {
    /// Emit `-U` before `+U`.
    pub update_before: bool,
    /// Emit an unchanged result anyway (state TTL is on: downstream state must be refreshed).
    pub emit_unchanged: bool,
}

impl Emission {
    /// Emits the change from `last` to `new` into `emitted` and keeps `new` as the group's last
    /// result: `+I` for a new group (`first`), `-U`/`+U` for a change (or an unchanged result
    /// when `emit_unchanged`), `-D` when its last row left (`gone`). Returns whether the group's
    /// state must be dropped.
    pub(crate) fn emit(
        &self,
        first: bool,
        gone: bool,
        last: &mut ResultRow,
        new: &mut ResultRow,
        emitted: &mut Chunk,
    ) -> bool {
        if gone {
            if !first {
                emitted.push(RowKind::Delete, last);
            }
            return true;
        }
        if first {
            emitted.push(RowKind::Insert, new);
        } else if self.emit_unchanged || new != last {
            if self.update_before {
                emitted.push(RowKind::UpdateBefore, last);
            }
            emitted.push(RowKind::UpdateAfter, new);
        } else {
            return false;
        }
        std::mem::swap(last, new);
        false
    }
}

/// The distinct values a group keeps for its DISTINCT calls, as a checkpoint holds them: the
/// number of sets, then per set a flag (whether it keeps values) and its values with their
/// counts ([`DistinctValues::encode`]).
pub(crate) trait DistinctState: Sized {
    /// Writes the distinct values.
    fn encode(&self, out: &mut Encoder);
    /// Reads what [`DistinctState::encode`] wrote.
    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError>;
    /// Follows a change of calls ([`GroupState::remap`]).
    fn remap(&mut self, calls: &[Option<usize>]);
}

fn encode_values(out: &mut Encoder, values: Option<&DistinctValues>) {
    let Some(values) = values else { return out.value(&Value::Boolean(false)) };
    out.value(&Value::Boolean(true));
    values.encode(out);
}

fn decode_values(input: &mut Decoder<'_>) -> Result<Option<DistinctValues>, DecodeError> {
    if input.value()? != Value::Boolean(true) {
        return Ok(None);
    }
    DistinctValues::decode(input).map(Some)
}

/// One-phase aggregates: a set for each DISTINCT call (`None` for the others).
impl DistinctState for Vec<Option<DistinctValues>> {
    fn encode(&self, out: &mut Encoder) {
        out.u32(self.len() as u32);
        self.iter().for_each(|v| encode_values(out, v.as_ref()));
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        (0..input.u32()?).map(|_| decode_values(input)).collect()
    }

    /// Values per call: each call takes its old call's (none for a new call).
    fn remap(&mut self, calls: &[Option<usize>]) {
        if self.is_empty() {
            return;
        }
        let mut old = std::mem::take(self);
        *self = calls.iter().map(|c| c.and_then(|j| old.get_mut(j).and_then(Option::take))).collect();
    }
}

/// Global aggregates: a set per DISTINCT argument ([`super::distinct::DistinctArgs`]).
impl DistinctState for Vec<DistinctValues> {
    fn encode(&self, out: &mut Encoder) {
        out.u32(self.len() as u32);
        self.iter().for_each(|v| encode_values(out, Some(v)));
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        (0..input.u32()?)
            .map(|_| match decode_values(input)? {
                Some(values) => Ok(values),
                None => input.fail("the distinct values of a DISTINCT argument"),
            })
            .collect()
    }

    /// Values per DISTINCT argument: the DISTINCT calls do not change, nor do their arguments.
    fn remap(&mut self, _: &[Option<usize>]) {}
}

/// A group in a checkpoint: its rows, last result, accumulators (with their number) and
/// distinct values.
impl<D: DistinctState> StateValue for GroupState<D> {
    fn encode(&self, out: &mut Encoder) {
        out.i64(self.rows);
        out.values(&self.last);
        out.u32(self.accumulators.len() as u32);
        self.accumulators.iter().for_each(|a| a.encode(out));
        self.distinct.encode(out);
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let rows = input.i64()?;
        let last: ResultRow = input.values()?;
        let accumulators = (0..input.u32()?).map(|_| Accumulator::decode(input)).collect::<Result<_, _>>()?;
        Ok(GroupState { rows, accumulators, distinct: D::decode(input)?, last })
    }
}

/// Checks that every restored group has one accumulator per call (`calls`) and the distinct
/// values `distinct_fits` accepts, as `operator` computes them.
///
/// # Errors
/// A group of another shape: the checkpoint was taken of other aggregates.
pub(crate) fn check_groups<D: DistinctState>(
    groups: &mut Groups<D>,
    calls: usize,
    distinct_fits: impl Fn(&D) -> bool,
    operator: &str,
) -> weir_runtime::Result<()> {
    let mut fits = true;
    groups.retain(0, |_, g| {
        fits &= g.accumulators.len() == calls && distinct_fits(&g.distinct);
        true
    });
    if fits {
        return Ok(());
    }
    Err(weir_runtime::Error::Restore(format!(
        "the state of {operator} holds groups of other aggregates than its {calls} calls"
    )))
}
