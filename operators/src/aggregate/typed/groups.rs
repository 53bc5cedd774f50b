//! The one-phase group aggregate's typed state: every row of a chunk applied in order, with
//! Flink's changelog for each record, the output built a column at a time.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray};
use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::columnar::arrow_type;
use weir_runtime::{memory, Chunk, DataType, Value};

use super::changelog::{Changelog, EmitOptions};
use super::checkpoint::{read_groups, write_groups};
use super::{GroupKeys, KeyTable, Slab, TypedCalls, WordColumn};
use crate::aggregate::AggregateCall;

/// The typed state of every group of a group aggregate (see the module docs for what it covers).
#[derive(Debug)]
pub struct TypedGroups {
    key_columns: Vec<usize>,
    keys: GroupKeys,
    calls: TypedCalls,
    table: KeyTable,
    slab: Slab,
    update_before: bool,
    emit_unchanged: bool,
}

impl TypedGroups {
    /// The state for groups keyed by input columns `keys` computing `calls` (which
    /// [`TypedCalls::supports`]); `update_before` and `emit_unchanged` as the operator's.
    /// `None` when the key types cannot be encoded.
    pub fn new(
        keys: &[usize],
        calls: &[AggregateCall],
        input_types: &[DataType],
        update_before: bool,
        emit_unchanged: bool,
    ) -> Option<Self> {
        let key_types = keys.iter().map(|&k| arrow_type(&input_types[k])).collect();
        Some(TypedGroups {
            key_columns: keys.to_vec(),
            keys: GroupKeys::for_arrow_types(key_types)?,
            calls: TypedCalls::new(calls)?,
            table: KeyTable::default(),
            slab: Slab::new(calls.len()),
            update_before,
            emit_unchanged,
        })
    }

    /// Number of groups with state.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether no group has state.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes every group for a checkpoint ([`super::checkpoint::write_groups`]).
    pub fn snapshot(&self, out: &mut Encoder) {
        write_groups(&self.keys, &self.table, &self.slab, out);
    }

    /// Takes back the groups a [`TypedGroups::snapshot`] wrote whose keys `owns` accepts.
    ///
    /// # Errors
    /// A damaged encoding, or one of other calls or key types than this state's.
    pub fn restore(&mut self, input: &mut Decoder<'_>, owns: impl Fn(&[Value]) -> bool) -> Result<(), DecodeError> {
        read_groups(&self.keys, &mut self.table, &mut self.slab, input, owns)
    }

    /// Applies every row of `chunk` in order and returns Flink's changelog for them; `None`
    /// when a column does not have the type the state was built for, an error when the state
    /// cannot grow by the chunk's new keys (the memory limit leaves no room; nothing applied).
    pub fn process(&mut self, chunk: &Chunk) -> Option<weir_runtime::Result<Chunk>> {
        let columns = chunk.columns();
        let key_arrays: Vec<ArrayRef> = self.key_columns.iter().map(|&k| columns.compacted(k)).collect();
        let key_arrays = self.keys.columns(&key_arrays)?;
        let keys = self.keys.read(&key_arrays)?;
        let args = argument_columns(&self.calls, |a| columns.compacted(a))?;
        let mut out = Changelog::new(self.calls.len(), chunk.len());
        let options = EmitOptions { update_before: self.update_before, emit_unchanged: self.emit_unchanged };
        let Self { calls, table, slab, keys: key_kind, .. } = self;
        // The keys' ids first, in a loop of independent probes the processor overlaps; a key
        // whose group is created or dropped within the chunk is probed again when it comes.
        let found: Vec<Option<u32>> = (0..chunk.len()).map(|i| keys.get(table, i)).collect();
        // Room for the keys not found, at most: the state grows as their inserts would grow it.
        let new = found.iter().filter(|f| f.is_none()).count();
        if let Err(refused) = memory::fallible(|| key_kind.try_reserve(table, new))
            .and_then(|()| memory::fallible(|| slab.try_reserve(new)))
        {
            return Some(Err(refused));
        }
        // Hashes of the keys whose group was created or dropped in this chunk.
        let mut changed: hashbrown::HashSet<u64> = hashbrown::HashSet::new();
        for (i, &kind) in chunk.kinds().iter().enumerate() {
            let accumulate = kind.is_accumulate();
            let known =
                if changed.is_empty() || !changed.contains(&keys.hash(i)) { found[i] } else { keys.get(table, i) };
            let id = match known {
                Some(id) => id,
                // Retractions for a group without state are dropped.
                None if !accumulate => continue,
                None => {
                    changed.insert(keys.hash(i));
                    keys.insert(table, i, || slab.grow())
                }
            };
            let sign = if accumulate { 1 } else { -1 };
            let mut group = slab.group(id);
            let first = *group.rows() == 0;
            *group.rows() += sign;
            for (c, (call, columns)) in calls.iter().zip(&args).enumerate() {
                if let Some(x) = columns.counted(i) {
                    group.update(c, call, x, sign);
                }
            }
            if out.record(&mut group, calls, first, i as u32, options) {
                group.reset();
                table.remove(id);
                changed.insert(keys.hash(i));
            }
        }
        let keys = key_arrays.iter().map(|k| weir_runtime::chunk::take(k, out.sources())).collect();
        Some(Ok(out.finish(keys, calls)))
    }
}

/// The columns one call reads from a chunk.
pub(crate) struct CallColumns {
    /// The argument read as words (`None` for `COUNT(*)`).
    arg: Option<WordColumn>,
    /// The `FILTER` column.
    filter: Option<BooleanArray>,
}

impl CallColumns {
    /// The argument of row `i` when the call counts the row (`Some(None)` for NULL or
    /// `COUNT(*)`); `None` when the call's filter leaves the row out.
    #[inline]
    pub fn counted(&self, i: usize) -> Option<Option<i64>> {
        match &self.filter {
            Some(f) if !(f.is_valid(i) && f.value(i)) => None,
            _ => Some(self.arg.as_ref().and_then(|a| a.get(i))),
        }
    }
}

/// Each call's columns; `None` when an argument is neither an integer nor a DOUBLE, or a filter not BOOLEAN.
pub(crate) fn argument_columns(calls: &TypedCalls, column: impl Fn(usize) -> ArrayRef) -> Option<Vec<CallColumns>> {
    calls
        .iter()
        .map(|c| {
            let arg = match c.arg {
                None => None,
                Some(a) => Some(WordColumn::of(column(a).as_ref())?),
            };
            let filter = match c.filter {
                None => None,
                Some(f) => Some(column(f).as_boolean_opt()?.clone()),
            };
            Some(CallColumns { arg, filter })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use weir_runtime::harness::OperatorHarness;
    use weir_runtime::Value;

    use super::*;
    use crate::aggregate::{AggregateCall, AggregateKind};
    use crate::group_aggregate::GroupAggregateOperator;
    use weir_runtime::{Chunk, DataType, RowKind};

    use super::super::{test_calls as calls, test_types};

    fn types() -> Vec<DataType> {
        test_types(DataType::int())
    }

    /// The key columns of round `round`: one integer, one string (arrow-row keys), or both.
    fn keys(round: usize) -> Vec<usize> {
        [vec![0], vec![3], vec![0, 3], vec![3, 2]][round % 4].clone()
    }

    /// A random changelog over keys 0..8 and NULL: retractions only of rows still present
    /// (and some of rows never seen), with NULL and extreme arguments.
    fn changelog(rng: &mut SmallRng, rows: usize, retracting: bool) -> Vec<Chunk> {
        let mut present: Vec<[Value; 6]> = Vec::new();
        let mut chunks = Vec::new();
        let mut chunk = Chunk::with_types(&types());
        for _ in 0..rows {
            let retract = retracting && !present.is_empty() && rng.random_range(0..3) == 0;
            if retract {
                let row = present.swap_remove(rng.random_range(0..present.len()));
                let kind = if rng.random() { RowKind::Delete } else { RowKind::UpdateBefore };
                chunk.push(kind, &row);
            } else if retracting && rng.random_range(0..20) == 0 {
                chunk.push(
                    RowKind::Delete,
                    &[
                        Value::Int(99),
                        Value::Int(1),
                        Value::BigInt(1),
                        Value::string("none"),
                        Value::Boolean(true),
                        Value::Double(1.0),
                    ],
                );
            } else {
                let key = if rng.random_range(0..9) == 0 { Value::Null } else { Value::Int(rng.random_range(0..8)) };
                let v = match rng.random_range(0..6) {
                    0 => Value::Null,
                    1 => Value::Int(i32::MAX),
                    _ => Value::Int(rng.random_range(-5..5)),
                };
                let w = if rng.random_range(0..5) == 0 { Value::Null } else { Value::BigInt(rng.random_range(-3..3)) };
                let words = ["", "a", "b", "ß", "long enough to spill past inline bytes"];
                let text = match rng.random_range(0..7) {
                    0 => Value::Null,
                    n => Value::string(words[n % words.len()]),
                };
                let pass = match rng.random_range(0..4) {
                    0 => Value::Null,
                    n => Value::Boolean(n % 2 == 1),
                };
                let d = [
                    Value::Null,
                    Value::Double(0.5),
                    Value::Double(-0.0),
                    Value::Double(1e300),
                    Value::Double(f64::NAN),
                    Value::Double(-2.25),
                ][rng.random_range(0..6)]
                .clone();
                let row = [key, v, w, text, pass, d];
                let kind = if rng.random() { RowKind::Insert } else { RowKind::UpdateAfter };
                chunk.push(kind, &row);
                present.push(row);
            }
            if rng.random_range(0..7) == 0 {
                chunks.push(std::mem::replace(&mut chunk, Chunk::with_types(&types())));
            }
        }
        chunks.push(chunk);
        chunks
    }

    #[test]
    fn typed_groups_emit_the_changelog_of_groups_held_as_values() {
        let mut rng = SmallRng::seed_from_u64(5);
        for round in 0..200 {
            let retracting = round % 2 == 0;
            let (update_before, emit_unchanged) = (round % 3 != 0, round % 5 == 0);
            let operator = |typed: bool| {
                GroupAggregateOperator::new(keys(round), calls(retracting), &types())
                    .with_retracting_input(retracting)
                    .with_update_before(update_before)
                    .with_emit_unchanged(emit_unchanged)
                    .with_typed_state(typed)
            };
            assert!(TypedCalls::supports(&keys(round), &calls(retracting), &types(), retracting));
            assert!(TypedGroups::new(&keys(round), &calls(retracting), &types(), true, false).is_some());
            let (mut typed, mut values) = (OperatorHarness::new(operator(true)), OperatorHarness::new(operator(false)));
            let rows = rng.random_range(0..60);
            for chunk in changelog(&mut rng, rows, retracting) {
                let columnar = chunk.clone();
                columnar.columns();
                typed.push_chunk(0, columnar).unwrap();
                values.push_chunk(0, chunk).unwrap();
                assert_eq!(typed.take_lines(), values.take_lines(), "round {round}");
            }
        }
    }

    #[test]
    fn what_typed_groups_cannot_hold_is_left_to_values() {
        let ints = types();
        let max = AggregateCall::new(AggregateKind::Max, Some(1), DataType::int());
        assert!(!TypedCalls::supports(&[0], std::slice::from_ref(&max), &ints, true));
        assert!(!TypedCalls::supports(&[0], &[max.clone().distinct()], &ints, false));
        assert!(!TypedCalls::supports(&[], std::slice::from_ref(&max), &ints, false));
        let strings = [DataType::string(), DataType::int()];
        let max_text = AggregateCall::new(AggregateKind::Max, Some(0), DataType::string());
        assert!(!TypedCalls::supports(&[1], &[max_text], &strings, false));
        let nested = [DataType::new(weir_runtime::LogicalType::Array(Box::new(DataType::int()))), DataType::int()];
        assert!(!TypedCalls::supports(&[0], &[max], &nested, false));
    }
}
