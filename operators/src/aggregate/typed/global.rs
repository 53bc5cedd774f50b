//! The global phase's typed state: a local phase's partial rows merged per group until a
//! flush, then into each group's state, with Flink's changelog per group.

use arrow_array::ArrayRef;
use arrow_schema::DataType as ArrowType;
use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::columnar::IntColumn;
use weir_runtime::{memory, Chunk, Value};

use super::changelog::{Changelog, EmitOptions};
use super::checkpoint::{read_groups, write_groups};
use super::{GroupKeys, KeyTable, Slab, TypedCalls, WordColumn};
use crate::aggregate::AggregateCall;

/// A global aggregate's bundle and state held typed (see the module docs for what it covers).
#[derive(Debug)]
pub struct TypedGlobalGroups {
    keys: GroupKeys,
    key_count: usize,
    calls: TypedCalls,
    /// Each group's state.
    table: KeyTable,
    slab: Slab,
    /// The partials merged since the last flush, per group in the order they came.
    bundle: KeyTable,
    bundle_slab: Slab,
    update_before: bool,
    emit_unchanged: bool,
}

impl TypedGlobalGroups {
    /// Writes every group for a checkpoint (the bundle has been flushed before).
    pub fn snapshot(&self, out: &mut Encoder) {
        write_groups(&self.keys, &self.table, &self.slab, out);
    }

    /// Takes back the groups a [`TypedGlobalGroups::snapshot`] wrote whose keys `owns` accepts.
    ///
    /// # Errors
    /// A damaged encoding, or one of other calls or key types than this state's.
    pub fn restore(&mut self, input: &mut Decoder<'_>, owns: impl Fn(&[Value]) -> bool) -> Result<(), DecodeError> {
        read_groups(&self.keys, &mut self.table, &mut self.slab, input, owns)
    }

    /// The state for rows `[keys…, partials…, rows]` whose key columns are of `key_types`,
    /// computing `calls` (which [`TypedCalls::supports_calls`]); `None` when the key types
    /// cannot be encoded.
    pub fn new(
        key_types: Vec<ArrowType>,
        calls: &[AggregateCall],
        update_before: bool,
        emit_unchanged: bool,
    ) -> Option<Self> {
        Some(TypedGlobalGroups {
            key_count: key_types.len(),
            keys: GroupKeys::for_arrow_types(key_types)?,
            calls: TypedCalls::new(calls)?,
            table: KeyTable::default(),
            slab: Slab::new(calls.len()),
            bundle: KeyTable::default(),
            bundle_slab: Slab::new(calls.len()),
            update_before,
            emit_unchanged,
        })
    }

    /// Number of groups in the bundle.
    pub fn bundled(&self) -> usize {
        self.bundle.len()
    }

    /// Bytes the bundle takes, about.
    pub fn bundle_bytes(&self) -> usize {
        self.bundle.len() * (3 * self.calls.len() + 4) * 8
    }

    /// Merges rows `from..from + count` of `chunk` into the bundle; `None` when a column is
    /// not of an integer type.
    pub fn add(&mut self, chunk: &Chunk, from: usize, count: usize) -> Option<()> {
        let columns = chunk.columns();
        let key_arrays: Vec<ArrayRef> = (0..self.key_count).map(|k| columns.compacted(k)).collect();
        let keys = self.keys.read(&self.keys.columns(&key_arrays)?)?;
        // The partial columns: a value per call, and a count after a sum's.
        let mut at = self.key_count;
        let mut partials = Vec::with_capacity(self.calls.len());
        for call in self.calls.iter() {
            let value = WordColumn::of(columns.compacted(at).as_ref())?;
            at += 1;
            let count = if call.has_count() {
                at += 1;
                Some(IntColumn::of(columns.compacted(at - 1).as_ref())?)
            } else {
                None
            };
            partials.push((value, count));
        }
        let rows = IntColumn::of(columns.compacted(at).as_ref())?;
        let Self { calls, bundle, bundle_slab, .. } = self;
        for i in from..from + count {
            let id = match keys.get(bundle, i) {
                Some(id) => id,
                None => keys.insert(bundle, i, || bundle_slab.grow()),
            };
            let mut group = bundle_slab.group(id);
            for (c, (call, (value, count))) in calls.iter().zip(&partials).enumerate() {
                group.merge(c, call, value.get(i), count.as_ref().and_then(|n| n.get(i)));
            }
            *group.rows() += rows.get(i).unwrap_or(0);
        }
        Some(())
    }

    /// Merges the bundle into the groups' state and returns Flink's changelog: per group, `+I`
    /// when new, `-U`/`+U` when changed, `-D` when its last row left. The bundle is empty afterwards.
    ///
    /// # Errors
    /// [`weir_runtime::Error::AllocationRefused`] when the state cannot grow by the bundle's new
    /// keys (the memory limit leaves no room); nothing is merged then.
    pub fn flush(&mut self) -> weir_runtime::Result<Chunk> {
        let mut out = Changelog::new(self.calls.len(), self.bundle.len());
        let options = EmitOptions { update_before: self.update_before, emit_unchanged: self.emit_unchanged };
        let Self { calls, table, slab, bundle, bundle_slab, keys: key_kind, .. } = self;
        // The state ids of the bundle's keys first, in a loop of independent probes the
        // processor overlaps. Each key is once in the bundle, so they stay right: only its own
        // key's group is created or dropped while one is merged.
        let found: Vec<Option<u32>> = (0..bundle.len() as u32).map(|b| table.get_key_of(bundle, b)).collect();
        // Room for the keys not in the state, as their inserts would grow it.
        let new = found.iter().filter(|f| f.is_none()).count();
        memory::fallible(|| key_kind.try_reserve(table, new))?;
        memory::fallible(|| slab.try_reserve(new))?;
        for b in 0..bundle.len() as u32 {
            let mut merged = bundle_slab.group(b);
            let rows = *merged.rows();
            let id = match found[b as usize] {
                Some(id) => id,
                // Only retractions for a group without state: dropped.
                None if rows <= 0 => continue,
                None => table.insert_key_of(bundle, b, || slab.grow()),
            };
            let mut group = slab.group(id);
            let first = *group.rows() == 0;
            for (c, call) in calls.iter().enumerate() {
                let (value, count) = merged.partial(c, call);
                group.merge(c, call, value, Some(count));
            }
            *group.rows() += rows;
            if out.record(&mut group, calls, first, b, options) {
                group.reset();
                table.remove(id);
            }
        }
        let keys = self.keys.arrays(&self.bundle, out.sources().iter().copied());
        self.bundle.clear();
        self.bundle_slab.clear();
        Ok(out.finish(keys, &self.calls))
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use weir_runtime::harness::OperatorHarness;
    use weir_runtime::{DataType, RowKind, StreamElement, Value};

    use crate::aggregate::bundle::BundleTrigger;
    use crate::global_group_aggregate::GlobalGroupAggregateOperator;
    use crate::local_group_aggregate::LocalGroupAggregateOperator;

    use super::super::{test_calls as calls, test_types};

    fn types() -> Vec<DataType> {
        test_types(DataType::new(weir_runtime::LogicalType::SmallInt))
    }

    /// The key columns of round `round`: one integer, one string (arrow-row keys), or both.
    fn keys(round: usize) -> Vec<usize> {
        [vec![0], vec![3], vec![3, 0]][(round / 3) % 3].clone()
    }

    /// A local and a global aggregate, typed or holding values, with the same settings.
    fn phases(typed: bool, retracting: bool, size: Option<usize>, round: usize) -> (OperatorHarness, OperatorHarness) {
        let trigger = BundleTrigger { size, memory_budget: usize::MAX };
        let calls = calls(retracting);
        let arg_types = calls.iter().map(|c| c.arg.map(|a| types()[a].clone())).collect();
        let local = LocalGroupAggregateOperator::new(keys(round), calls.clone(), &types(), retracting, trigger)
            .with_typed_state(typed);
        // With a size trigger, update-before is on: the changelogs are compared as the tables they make.
        let global = GlobalGroupAggregateOperator::new(keys(round).len(), calls, arg_types, trigger)
            .with_update_before(size.is_some() || round % 3 != 0)
            .with_emit_unchanged(round % 4 == 0)
            .with_typed_state(typed);
        (OperatorHarness::new(local), OperatorHarness::new(global))
    }

    /// Moves what `from` emitted into `to`; returns `to`'s output, each flush's rows sorted
    /// (both phases emit a bundle's groups in an order of their own).
    fn pass(from: &mut OperatorHarness, to: &mut OperatorHarness) -> Vec<String> {
        for element in from.take_output() {
            match element {
                StreamElement::Chunk(c) => to.push_chunk(0, c).unwrap(),
                StreamElement::FlushMarker(m) => to.flush_marker(m).unwrap(),
                _ => {}
            }
        }
        let mut lines = Vec::new();
        let mut bundle = Vec::new();
        for line in to.take_lines() {
            if line.starts_with("flush-marker") {
                bundle.sort();
                lines.append(&mut bundle);
                lines.push(line);
            } else {
                bundle.push(line);
            }
        }
        bundle.sort();
        lines.append(&mut bundle);
        lines
    }

    /// The changelogs are equal flush by flush; with a size trigger (which splits a local
    /// phase's output, in its own order, into the global phase's bundles) as the tables they end as.
    fn assert_same(
        typed: Vec<String>,
        values: Vec<String>,
        sized: bool,
        all: &mut (Vec<String>, Vec<String>),
        round: usize,
        end: bool,
    ) {
        if !sized {
            assert_eq!(typed, values, "round {round}");
        }
        all.0.extend(typed);
        all.1.extend(values);
        if !end {
            return;
        }
        let table = |lines: &[String]| {
            weir_runtime::fixture::materialize_changelog(lines.iter().filter(|l| !l.starts_with("flush-marker")))
                .unwrap()
        };
        assert_eq!(table(&all.0), table(&all.1), "round {round}");
    }

    /// A checkpoint's barrier flushes the bundles of both phases: what they held goes out before
    /// it (a checkpoint holds no bundle), the same rows a flush marker would have sent.
    #[test]
    fn a_checkpoint_flushes_the_bundles_before_its_barrier() {
        for typed in [false, true] {
            let rows = |h: &mut OperatorHarness| {
                let mut chunk = weir_runtime::Chunk::with_types(&types());
                for k in 0..3i16 {
                    let row = [
                        Value::SmallInt(k),
                        Value::Int(1),
                        Value::BigInt(2),
                        Value::string("a"),
                        Value::Boolean(true),
                        Value::Double(0.5),
                    ];
                    chunk.push(RowKind::Insert, &row);
                }
                h.push_chunk(0, chunk).unwrap();
            };
            let (mut local, mut global) = phases(typed, false, None, 0);
            rows(&mut local);
            assert!(local.take_output().is_empty(), "the bundle holds the rows");
            let state = local.snapshot(1).unwrap();
            assert!(state.is_empty());
            let (mut marked_local, mut marked_global) = phases(typed, false, None, 0);
            rows(&mut marked_local);
            marked_local.flush_marker(1).unwrap();
            let flushed = pass(&mut local, &mut global);
            assert!(flushed.is_empty(), "the global phase holds them in its own bundle");
            global.snapshot(1).unwrap();
            let mut by_barrier = global.take_lines();
            let mut by_marker = pass(&mut marked_local, &mut marked_global);
            by_marker.retain(|l| !l.starts_with("flush-marker"));
            by_barrier.sort();
            assert_eq!(by_barrier.len(), 3, "typed {typed}: {by_barrier:?}");
            assert_eq!(by_barrier, by_marker, "typed {typed}");
        }
    }

    /// A global phase checkpointed and restored at random points, at a random new parallelism
    /// each time (its groups split by key group), typed or holding values, ends with the table
    /// an uninterrupted global phase ends with.
    #[test]
    fn restored_global_phases_go_on_as_if_never_stopped() {
        use weir_runtime::partition::{hash_key, subtask_for_hash};
        let mut rng = SmallRng::seed_from_u64(31);
        for round in 0..40 {
            let typed = round % 2 == 0;
            let retracting = round % 4 == 1;
            let global_of = |index: usize, parallelism: usize| {
                let calls = calls(retracting);
                let arg_types = calls.iter().map(|c| c.arg.map(|a| types()[a].clone())).collect();
                let trigger = BundleTrigger { size: None, memory_budget: usize::MAX };
                let op = GlobalGroupAggregateOperator::new(keys(round).len(), calls, arg_types, trigger)
                    .with_typed_state(typed);
                OperatorHarness::with_subtask(Box::new(op), index, parallelism)
            };
            let (mut local, _) = phases(typed, retracting, None, round);
            let mut whole = global_of(0, 1);
            let mut parts = vec![global_of(0, 1)];
            let (mut expected, mut actual) = (Vec::new(), Vec::new());
            let key_count = keys(round).len();
            let owner = |row: &[Value], p: usize| {
                subtask_for_hash(hash_key(&row[..key_count], &(0..key_count).collect::<Vec<_>>()), p)
            };
            for step in 0..20u64 {
                let mut chunk = weir_runtime::Chunk::with_types(&types());
                for _ in 0..rng.random_range(1..15) {
                    let key = Value::SmallInt(rng.random_range(0..7));
                    let row = [
                        key,
                        Value::Int(rng.random_range(-9..9)),
                        Value::BigInt(rng.random_range(-9..9)),
                        Value::string(["x", "yy", "zzz"][rng.random_range(0..3)]),
                        Value::Boolean(rng.random_bool(0.5)),
                        Value::Double(0.5),
                    ];
                    chunk.push(RowKind::Insert, &row);
                }
                local.push_chunk(0, chunk).unwrap();
                local.flush_marker(step as i64).unwrap();
                let p = parts.len();
                for element in local.take_output() {
                    let StreamElement::Chunk(c) = element else { continue };
                    whole.push_chunk(0, c.clone()).unwrap();
                    for (i, part) in parts.iter_mut().enumerate() {
                        let mut own = c.clone();
                        own.retain(|_, row| owner(row, p) == i);
                        part.push_chunk(0, own).unwrap();
                    }
                }
                whole.flush_marker(step as i64).unwrap();
                parts.iter_mut().for_each(|h| h.flush_marker(step as i64).unwrap());
                expected.extend(whole.take_lines());
                parts.iter_mut().for_each(|h| actual.extend(h.take_lines()));
                if step % 5 == 4 {
                    let p = rng.random_range(1..5);
                    OperatorHarness::rescale(&mut parts, step, p, global_of, &mut actual).unwrap();
                }
            }
            let table = |lines: &[String]| {
                weir_runtime::fixture::materialize_changelog(lines.iter().filter(|l| l.starts_with(['+', '-'])))
                    .unwrap()
            };
            assert_eq!(table(&actual), table(&expected), "round {round}");
        }
    }

    #[test]
    fn typed_phases_emit_the_changelog_of_phases_holding_values() {
        let mut rng = SmallRng::seed_from_u64(9);
        for round in 0..150 {
            let retracting = round % 2 == 1;
            let size = if round % 3 == 0 { Some(rng.random_range(1..6)) } else { None };
            let (mut typed_local, mut typed_global) = phases(true, retracting, size, round);
            let (mut local, mut global) = phases(false, retracting, size, round);
            let mut present: Vec<[Value; 6]> = Vec::new();
            let mut all = (Vec::new(), Vec::new());
            for step in 0..rng.random_range(1..12) {
                let mut chunk = weir_runtime::Chunk::with_types(&types());
                for _ in 0..rng.random_range(0..20) {
                    if retracting && !present.is_empty() && rng.random_range(0..3) == 0 {
                        let row = present.swap_remove(rng.random_range(0..present.len()));
                        chunk.push(RowKind::Delete, &row);
                    } else {
                        let key = if rng.random_range(0..8) == 0 {
                            Value::Null
                        } else {
                            Value::SmallInt(rng.random_range(0..6))
                        };
                        let v =
                            if rng.random_range(0..5) == 0 { Value::Null } else { Value::Int(rng.random_range(-9..9)) };
                        let w = if rng.random_range(0..5) == 0 {
                            Value::Null
                        } else {
                            Value::BigInt(rng.random_range(-9..9))
                        };
                        let text = match rng.random_range(0..5) {
                            0 => Value::Null,
                            n => Value::string(["x", "yy", "", "zzz"][n - 1]),
                        };
                        let pass = match rng.random_range(0..3) {
                            0 => Value::Null,
                            n => Value::Boolean(n == 1),
                        };
                        let d = [
                            Value::Null,
                            Value::Double(0.25),
                            Value::Double(-0.0),
                            Value::Double(-3.5),
                            Value::Double(f64::INFINITY),
                        ][rng.random_range(0..5)]
                        .clone();
                        let row = [key, v, w, text, pass, d];
                        chunk.push(RowKind::Insert, &row);
                        present.push(row);
                    }
                }
                let columnar = chunk.clone();
                columnar.columns();
                typed_local.push_chunk(0, columnar).unwrap();
                local.push_chunk(0, chunk).unwrap();
                if step % 2 == 1 {
                    typed_local.flush_marker(step).unwrap();
                    local.flush_marker(step).unwrap();
                }
                let (a, b) = (pass(&mut typed_local, &mut typed_global), pass(&mut local, &mut global));
                assert_same(a, b, size.is_some(), &mut all, round, false);
            }
            typed_local.end_input().unwrap();
            local.end_input().unwrap();
            let (a, b) = (pass(&mut typed_local, &mut typed_global), pass(&mut local, &mut global));
            assert_same(a, b, size.is_some(), &mut all, round, false);
            typed_global.end_input().unwrap();
            global.end_input().unwrap();
            let (a, b) = (pass(&mut typed_local, &mut typed_global), pass(&mut local, &mut global));
            assert_same(a, b, size.is_some(), &mut all, round, true);
        }
    }
}
