//! GlobalGroupAggregate: the second phase of a two-phase aggregation. Behind the hash exchange
//! it buffers the partial accumulators of local aggregates per group and, at every flush,
//! merges them into keyed state and emits Flink's changelog, as the one-phase aggregate does.
//! DISTINCT calls are merged from the local phases' distinct values: a value that arrives in
//! (or leaves) the group's own set reaches the calls on its column.

use hashbrown::HashMap;
use smallvec::SmallVec;
use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::owns_key;
use weir_runtime::{Chunk, DataType, Operator, OperatorContext, Output, Result, Value};

use crate::aggregate::bundle::{BundleMeter, BundleTrigger, Bundled};
use crate::aggregate::distinct::{DistinctArgs, DistinctValues};
use crate::aggregate::group_state::{check_groups, Emission, GroupKey, GroupState, Groups, ResultRow, GROUPS};
use crate::aggregate::typed_checkpoint::{filter_groups, remap_groups};
use crate::aggregate::GroupLayout;
use crate::aggregate::{restored_call_map, Accumulator, AggregateCall, TypedCalls, TypedGlobalGroups};
use crate::group_aggregate::unexpected_columns;
use crate::spec::OperatorSpec;

/// The section of a global aggregate's typed groups (as values, they are [`GROUPS`]).
const TYPED_GROUPS: &str = "typed-groups";

/// The error of a restore whose state does not decode.
fn malformed(e: &DecodeError) -> weir_runtime::Error {
    weir_runtime::Error::Restore(format!("the state of GlobalGroupAggregate is malformed: {e}"))
}

/// What the bundle holds for one group.
#[derive(Debug)]
struct Merged {
    rows: i64,
    merged: Vec<Accumulator>,
    /// Per DISTINCT set, the local phases' sets as they arrived: added to the group's own at the
    /// flush, with no set of the bundle's own in between.
    distinct: Vec<SmallVec<[Value; 1]>>,
}

/// Everything a [`GlobalGroupAggregateOperator`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct GlobalGroupAggregateSpec {
    /// Number of leading key columns of the input (the local aggregate's keys).
    pub key_count: usize,
    /// The aggregates (arguments refer to the local aggregate's input).
    pub calls: Vec<AggregateCall>,
    /// Types of the aggregates' arguments.
    pub arg_types: Vec<Option<DataType>>,
    /// Whether `-U` is emitted before `+U`.
    pub update_before: bool,
    /// When bundles flush besides markers, watermarks and the end of input.
    pub trigger: BundleTrigger,
    /// `table.exec.state.ttl` in milliseconds.
    pub ttl_millis: i64,
    /// Whether unchanged results are emitted.
    pub emit_unchanged: bool,
    /// How the groups are held, decided when the aggregate is planned ([`Self::group_layout_of`]);
    /// typed state also needs key columns the typed keys encode, which the first chunk shows.
    pub group_layout: GroupLayout,
}

impl GlobalGroupAggregateSpec {
    /// How a global aggregate of `calls` (over arguments of `arg_types`) holds its groups:
    /// typed when [`TypedCalls`] covers the calls and there is no state TTL; else as values.
    pub fn group_layout_of(calls: &[AggregateCall], arg_types: &[Option<DataType>], ttl_millis: i64) -> GroupLayout {
        if ttl_millis == 0 && TypedCalls::supports_calls(calls, arg_types, false) {
            GroupLayout::Typed
        } else {
            GroupLayout::Values
        }
    }
}

impl OperatorSpec for GlobalGroupAggregateSpec {
    type Operator = GlobalGroupAggregateOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> GlobalGroupAggregateOperator {
        GlobalGroupAggregateOperator::new(self.key_count, self.calls.clone(), self.arg_types.clone(), self.trigger)
            .with_update_before(self.update_before)
            .with_state_ttl(self.ttl_millis)
            .with_emit_unchanged(self.emit_unchanged)
            .with_typed_state(self.group_layout == GroupLayout::Typed)
    }
}

/// Merges partial accumulators into keyed state.
#[derive(Debug)]
pub struct GlobalGroupAggregateOperator {
    key_count: usize,
    calls: Vec<AggregateCall>,
    arg_types: Vec<Option<DataType>>,
    emission: Emission,
    /// `table.exec.state.ttl` in milliseconds; 0 keeps state forever.
    ttl_millis: i64,
    /// Each group's state, with the distinct values of each DISTINCT argument.
    groups: Groups<Vec<DistinctValues>>,
    distinct: DistinctArgs,
    /// Per group, the rows, partial accumulators and distinct values merged since the last flush.
    bundle: HashMap<GroupKey, Merged>,
    meter: BundleMeter,
    scratch: ResultRow,
    /// Bundle and state held as typed vectors, when [`TypedCalls`] covers the calls and the
    /// keys can be encoded (decided at the first chunk, which shows the keys' types).
    typed: Option<TypedGlobalGroups>,
    typed_allowed: bool,
    typed_decided: bool,
    /// Typed groups restored from a checkpoint, this subtask's share, waiting for the first
    /// chunk (which shows the key types the typed state is built for).
    restored_typed: Option<Vec<u8>>,
}

impl GlobalGroupAggregateOperator {
    /// A global aggregate over rows `[keys…, partials…, rows]` of a local aggregate with
    /// `key_count` keys and `calls` (whose arguments had `arg_types`).
    pub fn new(
        key_count: usize,
        calls: Vec<AggregateCall>,
        arg_types: Vec<Option<DataType>>,
        trigger: BundleTrigger,
    ) -> Self {
        GlobalGroupAggregateOperator {
            distinct: DistinctArgs::of(&calls),
            key_count,
            calls,
            arg_types,
            emission: Emission { update_before: true, emit_unchanged: false },
            ttl_millis: 0,
            groups: Groups::new(GROUPS, None),
            bundle: HashMap::new(),
            meter: BundleMeter::new(trigger),
            scratch: ResultRow::new(),
            typed: None,
            typed_allowed: true,
            typed_decided: false,
            restored_typed: None,
        }
    }

    /// Whether state that [`TypedCalls`] covers is held as typed vectors (the default); off,
    /// as values (the reference the typed state is tested against).
    pub fn with_typed_state(mut self, allowed: bool) -> Self {
        self.typed_allowed = allowed;
        self
    }

    /// Decides, at the first chunk, whether the state is held typed, and takes back the typed
    /// groups of a restore.
    fn decide_typed(&mut self, chunk: &Chunk) -> Result<()> {
        if self.typed_decided {
            return Ok(());
        }
        self.typed_decided = true;
        // The local phase's key columns show the key types (an all-NULL column of values
        // built row by row may show none: the state then holds values).
        let key_types: Vec<arrow_schema::DataType> =
            chunk.columns().arrays().iter().take(self.key_count).map(|a| a.data_type().clone()).collect();
        let layout = GlobalGroupAggregateSpec::group_layout_of(&self.calls, &self.arg_types, self.ttl_millis);
        // Typed groups live on the heap: with the on-disk backend they are keyed state, unless a
        // checkpoint of typed groups is restored (those stay on the heap).
        let heap = self.restored_typed.is_some() || !weir_runtime::state::backend::on_disk();
        if self.typed_allowed && layout == GroupLayout::Typed && key_types.len() == self.key_count && heap {
            self.typed = TypedGlobalGroups::new(
                key_types,
                &self.calls,
                self.emission.update_before,
                self.emission.emit_unchanged,
            );
        }
        let Some(restored) = self.restored_typed.take() else { return Ok(()) };
        let typed = self.typed.as_mut().ok_or_else(|| {
            weir_runtime::Error::Restore(
                "the checkpoint holds typed GlobalGroupAggregate state, which this aggregate cannot hold typed".into(),
            )
        })?;
        typed.restore(&mut Decoder::new(&restored), |_| true).map_err(|e| malformed(&e))
    }

    /// Merges `chunk` into the typed bundle, flushing whenever the trigger says so.
    fn process_typed(&mut self, chunk: &Chunk, ctx: &OperatorContext, out: &mut Output) -> Result<()> {
        let mut from = 0;
        while from < chunk.len() {
            let room = self.meter.room(chunk.len() - from);
            let typed = self.typed.as_mut().ok_or_else(|| unexpected_columns("GlobalGroupAggregate"))?;
            typed.add(chunk, from, room).ok_or_else(|| unexpected_columns("GlobalGroupAggregate"))?;
            from += room;
            if self.meter.add(room, typed.bundle_bytes()) {
                self.flush(ctx, out)?;
            }
        }
        Ok(())
    }

    /// Whether to emit `-U` before `+U`.
    pub fn with_update_before(mut self, generate: bool) -> Self {
        self.emission.update_before = generate;
        self
    }

    /// Whether an unchanged result is emitted anyway.
    pub fn with_emit_unchanged(mut self, emit: bool) -> Self {
        self.emission.emit_unchanged = emit;
        self
    }

    /// The processing time state TTL reads (0 without a TTL: nothing expires).
    fn now(&self, ctx: &OperatorContext) -> i64 {
        if self.ttl_millis > 0 {
            ctx.processing_time()
        } else {
            0
        }
    }

    /// `table.exec.state.ttl` in milliseconds (0: keep state forever).
    pub fn with_state_ttl(mut self, ttl_millis: i64) -> Self {
        self.ttl_millis = ttl_millis.max(0);
        self.groups = Groups::new(GROUPS, Some(std::time::Duration::from_millis(self.ttl_millis as u64)));
        self
    }
}

impl Bundled for GlobalGroupAggregateOperator {
    /// Merges every group of the bundle into its state and emits the groups' changes.
    fn flush(&mut self, ctx: &OperatorContext, out: &mut Output) -> Result<()> {
        if let Some(typed) = &mut self.typed {
            if typed.bundled() == 0 {
                return Ok(());
            }
            let groups = typed.bundled();
            let mut emitted = typed.flush()?;
            self.meter.flushed(groups, ctx, &mut emitted);
            out.collect(emitted);
            return Ok(());
        }
        if self.bundle.is_empty() {
            return Ok(());
        }
        let now = self.now(ctx);
        let groups = self.bundle.len();
        let mut emitted = Chunk::with_capacity(self.key_count + self.calls.len(), groups);
        // Drained in place: the table keeps its capacity for the next bundle.
        let mut bundle = std::mem::take(&mut self.bundle);
        let mut partial = Vec::new();
        let emission = self.emission;
        for (key, Merged { rows, merged, distinct: arrived }) in bundle.drain() {
            let Self { groups, calls, arg_types, scratch, distinct, .. } = self;
            // Only retractions for a group without state: dropped.
            let make = || {
                (rows > 0)
                    .then(|| GroupState::new(Accumulator::for_calls(calls, arg_types, false), distinct.empty_sets()))
            };
            let Some(group) = groups.get_mut_or_insert_with(&key, now, make)? else { continue };
            let first = group.rows == 0;
            for (i, ((call, acc), from)) in calls.iter().zip(group.accumulators.iter_mut()).zip(&merged).enumerate() {
                if distinct.slot(i).is_some() {
                    continue;
                }
                partial.clear();
                from.partial(&mut partial);
                acc.merge_partial(call, &partial);
            }
            for (set, partials) in arrived.iter().enumerate() {
                for partial in partials {
                    let GroupState { distinct: values, accumulators, .. } = group;
                    values[set].add_partial(partial, |x, changes| {
                        distinct.update_calls(calls, accumulators, set, x, changes)
                    })?;
                }
            }
            group.rows += rows;
            if group.emit_change(first, &key, calls, emission, scratch, &mut emitted) {
                groups.remove(&key);
            }
        }
        self.bundle = bundle;
        self.meter.flushed(groups, ctx, &mut emitted);
        out.collect(emitted);
        Ok(())
    }
}

impl Operator for GlobalGroupAggregateOperator {
    fn name(&self) -> &str {
        "GlobalGroupAggregate"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        self.meter.arriving(&chunk);
        self.decide_typed(&chunk)?;
        if self.typed.is_some() {
            return self.process_typed(&chunk, ctx, out);
        }
        for (_, row) in chunk.rows() {
            let Self { calls, arg_types, bundle, key_count, distinct, .. } = self;
            let group = bundle.entry_ref(&row[..*key_count]).or_insert_with(|| Merged {
                rows: 0,
                merged: Accumulator::for_calls(calls, arg_types, false),
                distinct: vec![SmallVec::new(); distinct.len()],
            });
            let mut at = *key_count;
            for (i, (call, acc)) in calls.iter().zip(group.merged.iter_mut()).enumerate() {
                let width = Accumulator::partial_width(call);
                if distinct.slot(i).is_none() {
                    acc.merge_partial(call, &row[at..at + width]);
                }
                at += width;
            }
            for partials in group.distinct.iter_mut() {
                partials.push(row[at].clone());
                at += 1;
            }
            group.rows += row[at].as_i64().unwrap_or(0);
            let bytes = self.bundle.len() * (row.len() + self.calls.len()) * 48;
            if self.meter.add(1, bytes) {
                self.flush(ctx, out)?;
            }
        }
        Ok(())
    }

    fn process_flush_marker(&mut self, marker: i64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush_on_marker(marker, ctx, out)
    }

    /// The bundle goes out before a checkpoint's barrier: a checkpoint holds no bundle.
    fn prepare_snapshot_pre_barrier(&mut self, _: u64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush(ctx, out)
    }

    /// Every group, typed or as values (typed groups restored and not yet taken back as they
    /// were restored).
    fn snapshot_state(&mut self, _: u64, ctx: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        if let Some(typed) = &self.typed {
            typed.snapshot(state.section(TYPED_GROUPS));
        } else if let Some(restored) = &self.restored_typed {
            state.section(TYPED_GROUPS).raw(restored);
        } else {
            self.groups.snapshot(state, self.now(ctx));
        }
        Ok(())
    }

    /// Keeps the groups whose keys this subtask owns now, from every old subtask's state; typed
    /// ones are taken back typed at the first chunk.
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        let me = ctx.subtask().clone();
        // A restore into other calls than the checkpoint's maps each call to its old one.
        let restored_calls = restored_call_map(states, self.calls.len())?;
        let typed: Vec<_> = states.iter().filter_map(|s| s.section(TYPED_GROUPS)).collect();
        if !typed.is_empty() {
            let remapped: Vec<Vec<u8>> = match &restored_calls {
                Some(calls) => typed
                    .into_iter()
                    .map(|input| {
                        let mut out = Encoder::new();
                        remap_groups(input, self.key_count, calls, &mut out).map(|()| out.into_bytes())
                    })
                    .collect::<std::result::Result<_, _>>()
                    .map_err(|e| malformed(&e))?,
                None => Vec::new(),
            };
            let typed = match &restored_calls {
                Some(_) => remapped.iter().map(|b| Decoder::new(b)).collect(),
                None => states.iter().filter_map(|s| s.section(TYPED_GROUPS)).collect(),
            };
            let mut own = Encoder::new();
            filter_groups(typed, self.key_count, |key| owns_key(key, &me), &mut own).map_err(|e| malformed(&e))?;
            self.restored_typed = Some(own.into_bytes());
            return Ok(());
        }
        self.typed_decided = true;
        self.groups.restore(states, &me)?;
        if let Some(calls) = restored_calls {
            let Self { groups, calls: now, arg_types, key_count, .. } = self;
            let fresh = |i: usize| Accumulator::new(&now[i], arg_types[i].as_ref(), false);
            groups.retain(i64::MIN, |_, g| {
                g.remap(&calls, *key_count, fresh);
                true
            });
        }
        check_groups(&mut self.groups, self.calls.len(), |d| self.distinct.fits(d), "GlobalGroupAggregate")
    }

    fn process_watermark(&mut self, watermark: i64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush_on_watermark(watermark, ctx, out)
    }

    fn end_of_input(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush_at_end(ctx, out)
    }
}

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for GlobalGroupAggregateSpec {
    /// Per group key (the local phase's leading columns): typed words, or the rows, last result, accumulators and DISTINCT values.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{accumulator_layout, column_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        let key: Vec<usize> = (0..self.key_count).collect();
        let mut value = vec!["rows BIGINT".to_string()];
        value.extend(accumulator_layout(&self.calls, &self.arg_types));
        let (name, kind) = match self.group_layout {
            GroupLayout::Typed => (TYPED_GROUPS, StateKind::Raw),
            GroupLayout::Values => (GROUPS, StateKind::Value),
        };
        StateSignature::new("GlobalGroupAggregate", STATE_VERSION).state(name, kind, column_types(input, &key), value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::AggregateKind;
    use crate::local_group_aggregate::LocalGroupAggregateOperator;
    use crate::GroupAggregateOperator;
    use rand::{Rng, SeedableRng};
    use weir_runtime::fixture::materialize_changelog;
    use weir_runtime::harness::OperatorHarness;
    use weir_runtime::StreamElement;

    fn calls() -> Vec<AggregateCall> {
        vec![
            AggregateCall::new(AggregateKind::CountStar, None, DataType::bigint()),
            AggregateCall::new(AggregateKind::Sum, Some(1), DataType::bigint()),
            AggregateCall::new(AggregateKind::Avg, Some(1), DataType::bigint()),
            AggregateCall::new(AggregateKind::Count, Some(1), DataType::bigint()),
            // DISTINCT calls on one column share the set the local phase emits.
            AggregateCall::new(AggregateKind::Count, Some(1), DataType::bigint()).distinct(),
            AggregateCall::new(AggregateKind::Sum, Some(1), DataType::bigint()).distinct(),
            AggregateCall::new(AggregateKind::Avg, Some(1), DataType::bigint()).distinct(),
        ]
    }

    /// Local (two parallel instances) → global must end like the one-phase aggregate.
    #[test]
    fn two_phases_end_like_one_phase_on_random_changelogs() {
        let types = [DataType::bigint(), DataType::bigint()];
        let trigger = BundleTrigger { size: None, memory_budget: usize::MAX };
        let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
        for round in 0..60 {
            let local = || LocalGroupAggregateOperator::new(vec![0], calls(), &types, true, trigger);
            let mut locals = [OperatorHarness::new(local()), OperatorHarness::new(local())];
            let arg_types = calls().iter().map(|c| c.arg.map(|_| DataType::bigint())).collect();
            let mut global = OperatorHarness::new(GlobalGroupAggregateOperator::new(1, calls(), arg_types, trigger));
            let mut one_phase = OperatorHarness::new(GroupAggregateOperator::new(vec![0], calls(), &types));
            let mut live: Vec<(i64, Option<i64>)> = Vec::new();
            let (mut two, mut one) = (Vec::new(), Vec::new());
            let (mut pushed, mut forwarded) = (0u64, 0u64);
            for _ in 0..30 {
                // A key's changes always take the same path (upstream is partitioned by key):
                // even keys through the first local aggregate, odd ones through the second.
                let header = "op | k BIGINT | v BIGINT\n";
                let mut fixtures = [String::from(header), String::from(header)];
                let mut all = String::from(header);
                for _ in 0..rng.random_range(1..10) {
                    let line = if !live.is_empty() && rng.random_bool(0.3) {
                        let (k, v) = live.remove(rng.random_range(0..live.len()));
                        (k, format!("-D | {k} | {}\n", v.map_or("null".into(), |v| v.to_string())))
                    } else {
                        let (k, v) = (rng.random_range(0..4), rng.random_bool(0.9).then(|| rng.random_range(-9..9)));
                        live.push((k, v));
                        (k, format!("+I | {k} | {}\n", v.map_or("null".into(), |v| v.to_string())))
                    };
                    fixtures[(line.0 % 2) as usize].push_str(&line.1);
                    all.push_str(&line.1);
                    pushed += 1;
                }
                one_phase.push(&all).unwrap();
                one.extend(one_phase.take_lines());
                for (local, fixture) in locals.iter_mut().zip(&fixtures) {
                    local.push(fixture).unwrap();
                }
                if rng.random_bool(0.5) || round % 3 == 0 {
                    for l in locals.iter_mut() {
                        l.flush_marker(0).unwrap();
                        for element in l.take_output() {
                            match element {
                                StreamElement::Chunk(c) => {
                                    forwarded += c.len() as u64;
                                    global.push_chunk(0, c).unwrap()
                                }
                                StreamElement::FlushMarker(m) => global.flush_marker(m).unwrap(),
                                _ => {}
                            }
                        }
                    }
                }
                two.extend(global.take_lines().into_iter().filter(|l| l.starts_with(['+', '-'])));
            }
            for l in locals.iter_mut() {
                l.end_input().unwrap();
                for element in l.take_output() {
                    if let StreamElement::Chunk(c) = element {
                        forwarded += c.len() as u64;
                        global.push_chunk(0, c).unwrap();
                    }
                }
            }
            global.end_input().unwrap();
            two.extend(global.take_lines().into_iter().filter(|l| l.starts_with(['+', '-'])));
            assert_eq!(materialize_changelog(&two).unwrap(), materialize_changelog(&one).unwrap(), "round {round}");
            // Every row passed through exactly one bundle, and a bundle never has more keys than rows.
            let local_bundles = locals.iter().map(|l| l.bundle_metrics());
            assert_eq!(local_bundles.clone().map(|b| b.rows).sum::<u64>(), pushed);
            assert_eq!(global.bundle_metrics().rows, forwarded);
            assert!(local_bundles.chain([global.bundle_metrics()]).all(|b| b.keys <= b.rows));
        }
    }
}
