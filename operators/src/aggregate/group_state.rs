//! The keyed state of the stateful group aggregates (GroupAggregate and GlobalGroupAggregate):
//! one [`GroupState`] per group, and Flink's rules for what a group's change emits
//! ([`Emission`]). The row-at-a-time paths of both operators keep their groups so; the typed
//! paths keep the same facts in typed vectors.

use hashbrown::HashMap;
use smallvec::SmallVec;
use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::{Chunk, RowKind, Value};

use super::distinct::DistinctValues;

use super::{Accumulator, AggregateCall};

/// A group's key and results. Held inline in the group's state (up to four values), so that
/// comparing a new result with the last one reads no other memory.
pub(crate) type ResultRow = SmallVec<[Value; 4]>;

/// A group's key, held inline in the group table (up to two values), so that checking a hit
/// reads no other memory.
pub(crate) type GroupKey = SmallVec<[Value; 2]>;

/// One group: its rows, accumulators, the distinct values of its DISTINCT calls (`D`, kept as
/// each operator needs them), the result it emitted last and when it was last written.
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
    /// Processing time of the last write (for state TTL).
    pub written: i64,
}

impl<D> GroupState<D> {
    /// A group without rows, written at `now`.
    pub(crate) fn new(accumulators: SmallVec<[Accumulator; 4]>, distinct: D, now: i64) -> Self {
        GroupState { rows: 0, accumulators, distinct, last: ResultRow::new(), written: now }
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

/// What a group's change emits, and when its state expires: Flink's GroupAggFunction rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Emission {
    /// Emit `-U` before `+U`.
    pub update_before: bool,
    /// Emit an unchanged result anyway (state TTL is on: downstream state must be refreshed).
    pub emit_unchanged: bool,
    /// `table.exec.state.ttl` in milliseconds; 0 keeps state forever.
    pub ttl_millis: i64,
}

impl Emission {
    /// Whether a group last written at `written` is forgotten at `now` (its next row starts it over).
    pub(crate) fn expired(&self, written: i64, now: i64) -> bool {
        self.ttl_millis > 0 && now.saturating_sub(written) >= self.ttl_millis
    }

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

/// The distinct values a group keeps for its DISTINCT calls, as a checkpoint holds them: per
/// call a flag (whether it keeps values) and its values with their multiplicities.
pub(crate) trait DistinctState: Sized {
    /// Writes the distinct values.
    fn encode(&self, out: &mut Encoder);
    /// Reads what [`DistinctState::encode`] wrote.
    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError>;
}

fn encode_values(out: &mut Encoder, values: Option<&DistinctValues>) {
    let Some(values) = values else { return out.value(&Value::Boolean(false)) };
    out.value(&Value::Boolean(true));
    out.u32(values.len() as u32);
    for (v, n) in values {
        out.value(v);
        out.i64(*n);
    }
}

fn decode_values(input: &mut Decoder<'_>) -> Result<Option<DistinctValues>, DecodeError> {
    if input.value()? != Value::Boolean(true) {
        return Ok(None);
    }
    let mut values = HashMap::new();
    for _ in 0..input.u32()? {
        let v = input.value()?;
        values.insert(v, input.i64()?);
    }
    Ok(Some(values))
}

/// One-phase aggregates: values only for the DISTINCT calls.
impl DistinctState for Vec<Option<DistinctValues>> {
    fn encode(&self, out: &mut Encoder) {
        out.u32(self.len() as u32);
        self.iter().for_each(|v| encode_values(out, v.as_ref()));
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        (0..input.u32()?).map(|_| decode_values(input)).collect()
    }
}

/// Global aggregates: values per DISTINCT argument.
impl DistinctState for Vec<DistinctValues> {
    fn encode(&self, out: &mut Encoder) {
        out.u32(self.len() as u32);
        self.iter().for_each(|v| encode_values(out, Some(v)));
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        (0..input.u32()?).map(|_| decode_values(input).map(Option::unwrap_or_default)).collect()
    }
}

/// Writes every group of `groups` for a checkpoint: its key, rows, last write, last result,
/// accumulators and distinct values.
pub(crate) fn write_groups<D: DistinctState, S>(groups: &HashMap<GroupKey, GroupState<D>, S>, out: &mut Encoder) {
    out.u32(groups.len() as u32);
    for (key, group) in groups {
        out.values(key);
        out.i64(group.rows);
        out.i64(group.written);
        out.values(&group.last);
        group.accumulators.iter().for_each(|a| a.encode(out));
        group.distinct.encode(out);
    }
}

/// Adds to `groups` the groups [`write_groups`] wrote (each with `calls` accumulators) whose
/// keys `owns` accepts.
///
/// # Errors
/// A damaged encoding.
pub(crate) fn read_groups<D: DistinctState, S: std::hash::BuildHasher>(
    groups: &mut HashMap<GroupKey, GroupState<D>, S>,
    calls: usize,
    input: &mut Decoder<'_>,
    owns: impl Fn(&[Value]) -> bool,
) -> Result<(), DecodeError> {
    for _ in 0..input.u32()? {
        let key: GroupKey = input.values()?;
        let rows = input.i64()?;
        let written = input.i64()?;
        let last: ResultRow = input.values()?;
        let accumulators = (0..calls).map(|_| Accumulator::decode(input)).collect::<Result<_, _>>()?;
        let distinct = D::decode(input)?;
        if owns(&key) {
            groups.insert(key, GroupState { rows, accumulators, distinct, last, written });
        }
    }
    Ok(())
}
