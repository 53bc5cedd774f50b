//! GroupAggregate: `SELECT keys, aggregates … GROUP BY keys` over an insert-only or updating
//! input, one record at a time, with Flink's changelog.
//!
//! Per group it keeps the accumulators, the number of rows present (the hidden `COUNT(*)` Flink
//! adds for retracting input) and the last result it emitted. For each input row:
//! - a retraction (`-U`, `-D`) for a group without state is dropped;
//! - the first row of a group emits `+I[keys, results]`;
//! - a change emits `-U[old]` (when the planner asks for update-before) then `+U[new]`; an
//!   unchanged result emits nothing, unless state TTL is on (downstream state must be refreshed);
//! - the retraction of the group's last row emits `-D[old]` and drops the group's state.

use hashbrown::HashMap;
use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::owns_key;
use weir_runtime::{Chunk, DataType, Operator, OperatorContext, Output, Result, RowKind, Value};

use crate::aggregate::bundle::{row_bytes, BundleMeter, BundleTrigger, Bundled};
use crate::aggregate::distinct::DistinctValues;
use crate::aggregate::group_state::{check_groups, Emission, GroupState, Groups, ResultRow, GROUPS};
use crate::aggregate::typed_checkpoint::remap_groups;
use crate::aggregate::{
    restored_call_map, AccumulateError, Accumulator, AggregateCall, GroupLayout, TypedCalls, TypedGroups,
};
use crate::spec::OperatorSpec;

/// The state of one group: for each DISTINCT call, how often each argument value is present
/// (empty, without an allocation, when no call is DISTINCT).
type Group = GroupState<Vec<Option<DistinctValues>>>;

/// Rows buffered for a mini-batch, per group key, until the next flush.
#[derive(Debug, Default)]
struct Bundle {
    rows: HashMap<Box<[Value]>, Vec<(RowKind, Box<[Value]>)>>,
    bytes: usize,
}

/// The error of a typed aggregate given columns of other types than it was planned for.
pub(crate) fn unexpected_columns(operator: &str) -> weir_runtime::Error {
    weir_runtime::Error::execution(format!("the input columns of {operator} do not have the types it was planned for"))
}

/// Flink's name of a group aggregate, in mini-batches or not.
fn name_of(mini_batch: bool) -> &'static str {
    if mini_batch {
        "MiniBatchGroupAggregate"
    } else {
        "GroupAggregate"
    }
}

/// Everything a [`GroupAggregateOperator`] is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupAggregateSpec {
    /// Grouping columns of the input.
    pub keys: Vec<usize>,
    /// The aggregates.
    pub calls: Vec<AggregateCall>,
    /// Types of the input columns.
    pub input_types: Vec<DataType>,
    /// Whether `-U` is emitted before `+U`.
    pub update_before: bool,
    /// Whether the input retracts rows.
    pub retracting: bool,
    /// Mini-batch: when bundles flush (`MiniBatchGroupAggregate`); `None` per record.
    pub mini_batch: Option<BundleTrigger>,
    /// `table.exec.state.ttl` in milliseconds.
    pub ttl_millis: i64,
    /// Whether unchanged results are emitted.
    pub emit_unchanged: bool,
    /// How the groups are held, decided when the aggregate is planned ([`Self::group_layout_of`]).
    pub group_layout: GroupLayout,
}

impl GroupAggregateSpec {
    /// The operator's name: `MiniBatchGroupAggregate` in mini-batch, else `GroupAggregate`.
    pub fn name(&self) -> &'static str {
        name_of(self.mini_batch.is_some())
    }

    /// How an aggregate of these parameters holds its groups: typed when [`TypedCalls`] covers
    /// its keys and calls, per record (no mini-batch) and without state TTL; else as values.
    pub fn group_layout_of(
        keys: &[usize],
        calls: &[AggregateCall],
        input_types: &[DataType],
        retracting: bool,
        mini_batch: bool,
        ttl_millis: i64,
    ) -> GroupLayout {
        if !mini_batch && ttl_millis == 0 && TypedCalls::supports(keys, calls, input_types, retracting) {
            GroupLayout::Typed
        } else {
            GroupLayout::Values
        }
    }
}

impl OperatorSpec for GroupAggregateSpec {
    type Operator = GroupAggregateOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> GroupAggregateOperator {
        let operator = GroupAggregateOperator::new(self.keys.clone(), self.calls.clone(), &self.input_types)
            .with_update_before(self.update_before)
            .with_retracting_input(self.retracting)
            .with_state_ttl(self.ttl_millis)
            .with_emit_unchanged(self.emit_unchanged)
            .with_typed_state(self.group_layout == GroupLayout::Typed);
        match self.mini_batch {
            Some(trigger) => operator.with_mini_batch(trigger),
            None => operator,
        }
    }
}

/// A streaming group aggregate: per record, or in mini-batches (MiniBatchGroupAggregate).
#[derive(Debug)]
pub struct GroupAggregateOperator {
    keys: Vec<usize>,
    calls: Vec<AggregateCall>,
    arg_types: Vec<Option<DataType>>,
    emission: Emission,
    /// `table.exec.state.ttl` in milliseconds; 0 keeps state forever.
    ttl_millis: i64,
    retracting: bool,
    /// The bundle's bookkeeping, in mini-batch mode.
    meter: Option<BundleMeter>,
    bundle: Bundle,
    groups: Groups<Vec<Option<DistinctValues>>>,
    /// The groups, held as typed vectors when [`TypedGroups`] covers the calls (decided at the
    /// first chunk, once the builder settings are final).
    typed: Option<TypedGroups>,
    /// Whether `typed` may be used; the decision is taken once.
    typed_allowed: bool,
    typed_decided: bool,
    input_types: Vec<DataType>,
    key: Vec<Value>,
    /// The result row being computed, reused across rows.
    scratch: ResultRow,
}

impl GroupAggregateOperator {
    /// An aggregate grouping on input columns `keys`, computing `calls`. `input_types` are the
    /// types of the input columns (AVG needs its argument's type).
    pub fn new(keys: Vec<usize>, calls: Vec<AggregateCall>, input_types: &[DataType]) -> Self {
        let arg_types = calls.iter().map(|c| c.arg.map(|a| input_types[a].clone())).collect();
        GroupAggregateOperator {
            keys,
            calls,
            arg_types,
            emission: Emission { update_before: true, emit_unchanged: false },
            ttl_millis: 0,
            retracting: true,
            meter: None,
            bundle: Bundle::default(),
            groups: Groups::new(GROUPS, None),
            typed: None,
            typed_allowed: true,
            typed_decided: false,
            input_types: input_types.to_vec(),
            key: Vec::new(),
            scratch: ResultRow::new(),
        }
    }

    /// Whether to emit `-U` before `+U` (the planner's decision; on by default).
    pub fn with_update_before(mut self, generate: bool) -> Self {
        self.emission.update_before = generate;
        self
    }

    /// Whether an unchanged result is emitted anyway (when state TTL is on).
    pub fn with_emit_unchanged(mut self, emit: bool) -> Self {
        self.emission.emit_unchanged = emit;
        self
    }

    /// Whether the input may retract rows (the default). For insert-only input MIN and MAX
    /// keep only the extreme instead of every value.
    pub fn with_retracting_input(mut self, retracting: bool) -> Self {
        self.retracting = retracting;
        self
    }

    /// `table.exec.state.ttl`: a group not written for this long (processing time) is
    /// forgotten; its next row starts it over. 0 keeps state forever.
    pub fn with_state_ttl(mut self, ttl_millis: i64) -> Self {
        self.ttl_millis = ttl_millis.max(0);
        self.groups = Groups::new(GROUPS, Some(std::time::Duration::from_millis(self.ttl_millis as u64)));
        self
    }

    /// Buffers rows in mini-batches flushed by markers, watermarks, the end of input and `trigger`.
    pub fn with_mini_batch(mut self, trigger: BundleTrigger) -> Self {
        self.meter = Some(BundleMeter::new(trigger));
        self
    }

    /// Whether groups that [`TypedGroups`] covers are held as typed vectors (the default);
    /// off, every group is held as values (the reference the typed state is tested against).
    pub fn with_typed_state(mut self, allowed: bool) -> Self {
        self.typed_allowed = allowed;
        self
    }

    /// Number of groups with state.
    pub fn group_count(&self) -> usize {
        self.groups.len() + self.typed.as_ref().map_or(0, TypedGroups::len)
    }

    /// The typed group state, when this aggregate's settings and calls allow one.
    fn typed_groups(&mut self, restoring: bool) -> Option<&mut TypedGroups> {
        if !self.typed_decided {
            self.typed_decided = true;
            let layout = GroupAggregateSpec::group_layout_of(
                &self.keys,
                &self.calls,
                &self.input_types,
                self.retracting,
                self.meter.is_some(),
                self.ttl_millis,
            );
            // Typed groups live on the heap: with the on-disk backend they are keyed state, unless
            // a checkpoint of typed groups is restored (those stay on the heap).
            let heap = restoring || !weir_runtime::state::backend::on_disk();
            let eligible = self.typed_allowed && layout == GroupLayout::Typed && heap;
            if eligible {
                self.typed = TypedGroups::new(
                    &self.keys,
                    &self.calls,
                    &self.input_types,
                    self.emission.update_before,
                    self.emission.emit_unchanged,
                );
            }
        }
        self.typed.as_mut()
    }

    /// Applies the rows of one group (one row per record, or a bundle's rows) and emits the
    /// group's change, as Flink's GroupAggFunction and MiniBatchGroupAggFunction do.
    fn apply<'r>(
        &mut self,
        key: &[Value],
        rows: impl Iterator<Item = (RowKind, &'r [Value])>,
        now: i64,
        emitted: &mut Chunk,
    ) -> Result<()> {
        let mut rows = rows.peekable();
        let Self { groups, calls, arg_types, retracting, scratch, emission, .. } = self;
        let group = groups.get_mut_or_insert_with(key, now, || {
            // Retractions for a group without state are dropped.
            while rows.peek().is_some_and(|(kind, _)| !kind.is_accumulate()) {
                rows.next();
            }
            rows.peek()?;
            let distinct = if calls.iter().any(|c| c.distinct) {
                calls.iter().map(|c| c.distinct.then(|| DistinctValues::new(1))).collect()
            } else {
                Vec::new()
            };
            Some(GroupState::new(Accumulator::for_calls(calls, arg_types, *retracting), distinct))
        })?;
        let Some(group) = group else { return Ok(()) };
        let first = group.rows == 0;
        for (kind, row) in rows {
            update(calls, group, row, if kind.is_accumulate() { 1 } else { -1 })?;
        }
        if group.emit_change(first, key, calls, *emission, scratch, emitted) {
            groups.remove(key);
        }
        Ok(())
    }

    /// The processing time state TTL reads (0 without a TTL: nothing expires).
    fn now(&self, ctx: &OperatorContext) -> i64 {
        if self.ttl_millis > 0 {
            ctx.processing_time()
        } else {
            0
        }
    }
}

impl Bundled for GroupAggregateOperator {
    /// Applies every buffered group and emits their changes.
    fn flush(&mut self, ctx: &OperatorContext, out: &mut Output) -> Result<()> {
        if self.meter.as_ref().is_none_or(BundleMeter::is_empty) {
            return Ok(());
        }
        let now = self.now(ctx);
        // Drained in place: the table keeps its capacity for the next bundle.
        let mut bundle = std::mem::take(&mut self.bundle);
        let mut emitted = Chunk::with_capacity(self.keys.len() + self.calls.len(), bundle.rows.len());
        let groups = bundle.rows.len();
        for (key, rows) in bundle.rows.drain() {
            self.apply(&key, rows.iter().map(|(k, r)| (*k, &r[..])), now, &mut emitted)?;
        }
        bundle.bytes = 0;
        self.bundle = bundle;
        if let Some(meter) = &mut self.meter {
            meter.flushed(groups, ctx, &mut emitted);
        }
        out.collect(emitted);
        Ok(())
    }
}

/// The section of a group aggregate's state: its typed groups.
const TYPED_GROUPS: &str = "typed-groups";

/// Applies one input row to a group's accumulators.
fn update(
    calls: &[AggregateCall],
    group: &mut Group,
    row: &[Value],
    sign: i64,
) -> std::result::Result<(), AccumulateError> {
    group.rows += sign;
    for (i, call) in calls.iter().enumerate() {
        if let Some(f) = call.filter {
            if row[f] != Value::Boolean(true) {
                continue;
            }
        }
        let x = call.arg.map_or(&Value::Null, |a| &row[a]);
        if let Some(seen) = group.distinct.get_mut(i).and_then(Option::as_mut) {
            // Only the first arrival and the last departure of a value change the result.
            let mut change = [0];
            if seen.add(x, &[sign], &mut change) {
                group.accumulators[i].update(call, x, change[0])?;
            }
            continue;
        }
        group.accumulators[i].update(call, x, sign)?;
    }
    Ok(())
}

impl Operator for GroupAggregateOperator {
    fn name(&self) -> &str {
        name_of(self.meter.is_some())
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let now = self.now(ctx);
        if let Some(meter) = &mut self.meter {
            let row_bytes = row_bytes(&chunk);
            meter.arriving(&chunk);
            for (kind, row) in chunk.rows() {
                self.key.clear();
                self.key.extend(self.keys.iter().map(|&k| row[k].clone()));
                self.bundle.rows.entry_ref(&self.key[..]).or_default().push((kind, row.into()));
                self.bundle.bytes += row_bytes;
                let due = self.meter.as_mut().is_some_and(|m| m.add(1, self.bundle.bytes));
                if due {
                    self.flush(ctx, out)?;
                }
            }
            return Ok(());
        }
        if let Some(typed) = self.typed_groups(false) {
            let Some(emitted) = typed.process(&chunk) else { return Err(unexpected_columns("GroupAggregate")) };
            let mut emitted = emitted?;
            emitted.set_origin_nanos(chunk.origin_nanos());
            out.collect(emitted);
            return Ok(());
        }
        let arity = self.keys.len() + self.calls.len();
        let mut emitted = Chunk::with_capacity(arity, chunk.len());
        let mut key = std::mem::take(&mut self.key);
        for (kind, row) in chunk.rows() {
            key.clear();
            key.extend(self.keys.iter().map(|&k| row[k].clone()));
            self.apply(&key, std::iter::once((kind, row)), now, &mut emitted)?;
        }
        self.key = key;
        emitted.set_origin_nanos(chunk.origin_nanos());
        out.collect(emitted);
        Ok(())
    }

    fn process_flush_marker(&mut self, marker: i64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush_on_marker(marker, ctx, out)
    }

    /// The bundle goes out before a checkpoint's barrier: a checkpoint holds no bundle.
    fn prepare_snapshot_pre_barrier(&mut self, _: u64, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.flush(ctx, out)
    }

    /// Every group: typed, its key and words; as values, its key, last write, rows, last
    /// result, accumulators and DISTINCT values (keyed value state).
    fn snapshot_state(&mut self, _: u64, ctx: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        if let Some(typed) = &self.typed {
            typed.snapshot(state.section(TYPED_GROUPS));
            return Ok(());
        }
        self.groups.snapshot(state, self.now(ctx));
        Ok(())
    }

    /// Keeps the groups whose keys this subtask owns now, from every old subtask's state, held
    /// as they were held when checkpointed (typed or as values).
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        let me = ctx.subtask().clone();
        // A restore into other calls than the checkpoint's maps each call to its old one.
        let restored_calls = restored_call_map(states, self.calls.len())?;
        let key_len = self.keys.len();
        if states.iter().any(|s| s.section(TYPED_GROUPS).is_some()) {
            let Some(typed) = self.typed_groups(true) else {
                return Err(weir_runtime::Error::Restore(
                    "the checkpoint holds typed GroupAggregate state, which this aggregate's settings do not allow"
                        .into(),
                ));
            };
            let malformed =
                |e: DecodeError| weir_runtime::Error::Restore(format!("the state of GroupAggregate is malformed: {e}"));
            for state in states {
                let Some(mut input) = state.section(TYPED_GROUPS) else { continue };
                let Some(calls) = &restored_calls else {
                    typed.restore(&mut input, |key| owns_key(key, &me)).map_err(malformed)?;
                    continue;
                };
                let mut remapped = Encoder::new();
                remap_groups(input, key_len, calls, &mut remapped).map_err(malformed)?;
                let remapped = remapped.into_bytes();
                typed.restore(&mut Decoder::new(&remapped), |key| owns_key(key, &me)).map_err(malformed)?;
            }
            return Ok(());
        }
        self.typed_decided = true;
        self.typed = None;
        self.groups.restore(states, &me)?;
        if let Some(calls) = restored_calls {
            let Self { groups, calls: now, arg_types, retracting, keys, .. } = self;
            let fresh = |i: usize| Accumulator::new(&now[i], arg_types[i].as_ref(), *retracting);
            groups.retain(i64::MIN, |_, g| {
                g.remap(&calls, keys.len(), fresh);
                true
            });
        }
        let distinct_sets = if self.calls.iter().any(|c| c.distinct) { self.calls.len() } else { 0 };
        check_groups(&mut self.groups, self.calls.len(), |d| d.len() == distinct_sets, name_of(self.meter.is_some()))
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

impl crate::signature::StatefulSpec for GroupAggregateSpec {
    /// Per group key: typed, the group's words (its rows and each call's value, count and last result); as values, its rows, last result, accumulators and DISTINCT values.
    /// The spec holds its input's types: `inputs` is not read.
    fn state_signature(&self, _inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{accumulator_layout, column_types, StateKind, StateSignature};
        let arg_types: Vec<_> =
            self.calls.iter().map(|c| c.arg.and_then(|a| self.input_types.get(a).cloned())).collect();
        let mut value = vec!["rows BIGINT".to_string()];
        value.extend(accumulator_layout(&self.calls, &arg_types));
        let (name, kind) = match self.group_layout {
            GroupLayout::Typed => (TYPED_GROUPS, StateKind::Raw),
            GroupLayout::Values => (GROUPS, StateKind::Value),
        };
        StateSignature::new("GroupAggregate", STATE_VERSION).state(
            name,
            kind,
            column_types(&self.input_types, &self.keys),
            value,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::AggregateKind;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;
    use weir_runtime::fixture::materialize_changelog;
    use weir_runtime::harness::OperatorHarness;
    use weir_runtime::partition::{hash_key, subtask_for_hash};

    use crate::aggregate::bundle::BundleTrigger;

    fn count_sum(types: &[DataType]) -> GroupAggregateOperator {
        GroupAggregateOperator::new(
            vec![0],
            vec![
                AggregateCall::new(AggregateKind::CountStar, None, DataType::bigint().not_null()),
                AggregateCall::new(AggregateKind::Sum, Some(1), DataType::int()),
            ],
            types,
        )
    }

    #[test]
    fn emits_flinks_changelog() {
        let mut h = OperatorHarness::new(count_sum(&[DataType::string(), DataType::int()]));
        h.push(
            "op | k STRING | v INT
             -D | a | 1
             +I | a | 1
             +I | b | 2
             +I | a | 0
             -U | a | 1
             +U | a | 5
             -D | b | 2",
        )
        .unwrap();
        assert_eq!(
            h.take_lines(),
            [
                "+I[a, 1, 1]",
                "+I[b, 1, 2]",
                "-U[a, 1, 1]",
                "+U[a, 2, 1]",
                "-U[a, 2, 1]",
                "+U[a, 1, 0]",
                "-U[a, 1, 0]",
                "+U[a, 2, 5]",
                "-D[b, 1, 2]",
            ]
        );
    }

    #[test]
    fn unchanged_results_are_suppressed_unless_state_ttl_is_on() {
        let max = |emit_unchanged| {
            GroupAggregateOperator::new(
                vec![0],
                vec![AggregateCall::new(AggregateKind::Max, Some(1), DataType::int())],
                &[DataType::string(), DataType::int()],
            )
            .with_emit_unchanged(emit_unchanged)
            .with_update_before(false)
        };
        let input = "op | k STRING | v INT\n+I | a | 5\n+I | a | 3\n+I | a | 7";
        let mut h = OperatorHarness::new(max(false));
        h.push(input).unwrap();
        assert_eq!(h.take_lines(), ["+I[a, 5]", "+U[a, 7]"]);
        let mut h = OperatorHarness::new(max(true));
        h.push(input).unwrap();
        assert_eq!(h.take_lines(), ["+I[a, 5]", "+U[a, 5]", "+U[a, 7]"]);
    }

    #[test]
    fn insert_only_input_keeps_just_the_extremes() {
        let op = GroupAggregateOperator::new(
            vec![0],
            vec![
                AggregateCall::new(AggregateKind::Min, Some(1), DataType::int()),
                AggregateCall::new(AggregateKind::Max, Some(1), DataType::int()),
            ],
            &[DataType::string(), DataType::int()],
        )
        .with_retracting_input(false);
        let mut h = OperatorHarness::new(op);
        h.push("op | k STRING | v INT\n+I | a | 5\n+I | a | null\n+I | a | 2\n+I | a | 9\n+I | a | 4").unwrap();
        assert_eq!(h.take_lines(), ["+I[a, 5, 5]", "-U[a, 5, 5]", "+U[a, 2, 5]", "-U[a, 2, 5]", "+U[a, 2, 9]"]);
    }

    #[test]
    fn distinct_and_filter_count_what_they_should() {
        let op = GroupAggregateOperator::new(
            vec![],
            vec![
                AggregateCall::new(AggregateKind::Count, Some(0), DataType::bigint()).distinct(),
                AggregateCall::new(AggregateKind::CountStar, None, DataType::bigint()).filtered_by(1),
            ],
            &[DataType::int(), DataType::boolean()],
        );
        let mut h = OperatorHarness::new(op);
        h.push("op | u INT | f BOOLEAN\n+I | 1 | true\n+I | 1 | false\n+I | 2 | null\n-D | 1 | true").unwrap();
        assert_eq!(h.take_lines(), ["+I[1, 1]", "-U[1, 1]", "+U[2, 1]", "-U[2, 1]", "+U[2, 0]"]);
    }

    fn mini_batch(size: Option<usize>) -> GroupAggregateOperator {
        count_sum(&[DataType::string(), DataType::int()])
            .with_mini_batch(BundleTrigger { size, memory_budget: usize::MAX })
    }

    #[test]
    fn a_mini_batch_flushes_on_markers_and_emits_one_change_per_key() {
        let mut h = OperatorHarness::new(mini_batch(None));
        h.push("op | k STRING | v INT\n+I | a | 1\n+I | b | 2\n+I | a | 3").unwrap();
        assert!(h.take_lines().is_empty(), "nothing leaves before a flush");
        h.flush_marker(1000).unwrap();
        let mut lines = h.take_lines();
        assert_eq!(lines.pop().as_deref(), Some("flush-marker 1000"));
        lines.sort();
        assert_eq!(lines, ["+I[a, 2, 4]", "+I[b, 1, 2]"]);
        // Leading retractions of a key without state are dropped; a bundle that only retracts
        // one key does not stop the others.
        h.push("op | k STRING | v INT\n-D | x | 1\n-U | a | 1\n+U | a | 10\n-D | b | 2").unwrap();
        h.watermark(5).unwrap();
        let mut lines = h.take_lines();
        assert_eq!(lines.pop().as_deref(), Some("watermark 5"));
        lines.sort();
        assert_eq!(lines, ["+U[a, 2, 13]", "-D[b, 1, 2]", "-U[a, 2, 4]"]);
        let bundles = h.bundle_metrics();
        assert_eq!((bundles.bundles, bundles.rows, bundles.keys), (2, 7, 5), "3 rows of 2 keys, 4 rows of 3 keys");
    }

    #[test]
    fn a_mini_batch_flushes_on_its_size_and_at_end_of_input() {
        let mut h = OperatorHarness::new(mini_batch(Some(2)));
        h.push("op | k STRING | v INT\n+I | a | 1\n+I | a | 1\n+I | a | 1").unwrap();
        assert_eq!(h.take_lines(), ["+I[a, 2, 2]"]);
        h.end_input().unwrap();
        assert_eq!(h.take_lines(), ["-U[a, 2, 2]", "+U[a, 3, 3]"]);
        assert_eq!(h.bundle_metrics().rows_per_bundle(), 1.5);
    }

    #[test]
    fn expired_state_starts_a_key_over() {
        let op = count_sum(&[DataType::string(), DataType::int()]).with_state_ttl(1000).with_emit_unchanged(true);
        let mut h = OperatorHarness::new(op);
        h.push("op | k STRING | v INT\n+I | a | 1").unwrap();
        h.advance_processing_time(999).unwrap();
        h.push("op | k STRING | v INT\n+I | a | 1").unwrap();
        assert_eq!(h.take_lines(), ["+I[a, 1, 1]", "-U[a, 1, 1]", "+U[a, 2, 2]"]);
        h.advance_processing_time(1000).unwrap();
        h.push("op | k STRING | v INT\n-D | a | 1\n+I | a | 5").unwrap();
        assert_eq!(h.take_lines(), ["+I[a, 1, 5]"], "the expired key starts over; its retraction is dropped");
    }

    #[test]
    fn matches_a_recomputation_from_scratch_on_random_changelogs() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
        let calls = vec![
            AggregateCall::new(AggregateKind::CountStar, None, DataType::bigint()),
            AggregateCall::new(AggregateKind::Sum, Some(1), DataType::bigint()),
            AggregateCall::new(AggregateKind::Min, Some(1), DataType::bigint()),
            AggregateCall::new(AggregateKind::Max, Some(1), DataType::bigint()),
            AggregateCall::new(AggregateKind::Avg, Some(1), DataType::bigint()),
            AggregateCall::new(AggregateKind::Count, Some(1), DataType::bigint()).distinct(),
            AggregateCall::new(AggregateKind::ListAgg { delimiter: ",".into() }, Some(1), DataType::string()),
        ];
        for round in 0..60 {
            let mut op = GroupAggregateOperator::new(vec![0], calls.clone(), &[DataType::bigint(), DataType::bigint()]);
            if round % 2 == 1 {
                // Odd rounds run in mini-batches of a random size, flushed also by random markers.
                let size = [None, Some(1), Some(7), Some(100)][round % 4];
                op = op.with_mini_batch(BundleTrigger { size, memory_budget: usize::MAX });
            }
            let mut h = OperatorHarness::new(op);
            // Live input rows in arrival order, as (key, value).
            let mut live: Vec<(i64, Option<i64>)> = Vec::new();
            let mut output = Vec::new();
            for _ in 0..40 {
                let mut fixture = String::from("op | k BIGINT | v BIGINT\n");
                for _ in 0..rng.random_range(1..15) {
                    if !live.is_empty() && rng.random_bool(0.4) {
                        let (k, v) = live.remove(rng.random_range(0..live.len()));
                        let v = v.map_or("null".to_string(), |v| v.to_string());
                        let kind = if rng.random_bool(0.5) { "-D" } else { "-U" };
                        fixture.push_str(&format!("{kind} | {k} | {v}\n"));
                    } else {
                        let (k, v) = (rng.random_range(0..5), rng.random_bool(0.9).then(|| rng.random_range(-20..20)));
                        live.push((k, v));
                        let v = v.map_or("null".to_string(), |v| v.to_string());
                        fixture.push_str(&format!("+I | {k} | {v}\n"));
                    }
                }
                h.push(&fixture).unwrap();
                if rng.random_bool(0.3) {
                    h.flush_marker(0).unwrap();
                }
                output.extend(h.take_lines().into_iter().filter(|l| l.starts_with(['+', '-'])));
            }
            h.end_input().unwrap();
            output.extend(h.take_lines().into_iter().filter(|l| l.starts_with(['+', '-'])));
            // From scratch, per key, over the rows still present.
            let mut expected = BTreeMap::new();
            let keys: std::collections::BTreeSet<i64> = live.iter().map(|(k, _)| *k).collect();
            for k in keys {
                let rows: Vec<Option<i64>> = live.iter().filter(|(key, _)| *key == k).map(|(_, v)| *v).collect();
                let values: Vec<i64> = rows.iter().flatten().copied().collect();
                let opt = |v: Option<i64>| v.map_or("null".to_string(), |v| v.to_string());
                let sum = (!values.is_empty()).then(|| values.iter().sum::<i64>());
                let avg = sum.map(|s| s / values.len() as i64);
                let distinct: std::collections::BTreeSet<i64> = values.iter().copied().collect();
                // LISTAGG keeps arrival order of the values still present; the retraction of a
                // value removes its earliest occurrence, which leaves the same multiset in an
                // order that a from-scratch recount cannot know: compare sorted lists.
                let listagg = (!values.is_empty()).then(|| {
                    let mut v = values.clone();
                    v.sort_unstable();
                    v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
                });
                let row = format!(
                    "[{k}, {}, {}, {}, {}, {}, {}, {}]",
                    rows.len(),
                    opt(sum),
                    opt(values.iter().min().copied()),
                    opt(values.iter().max().copied()),
                    opt(avg),
                    distinct.len(),
                    listagg.unwrap_or_else(|| "null".into())
                );
                expected.insert(row, 1);
            }
            let mut actual = materialize_changelog(&output).unwrap();
            // Sort the LISTAGG field of each result the same way before comparing.
            actual = actual
                .into_iter()
                .map(|(row, n)| {
                    let (head, list) = row.trim_end_matches(']').rsplit_once(", ").unwrap();
                    let mut items: Vec<i64> = list.split(',').filter_map(|x| x.parse().ok()).collect();
                    items.sort_unstable();
                    let list = if list == "null" {
                        "null".to_string()
                    } else {
                        items.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
                    };
                    (format!("{head}, {list}]"), n)
                })
                .collect();
            assert_eq!(actual, expected, "round {round}");
        }
    }

    #[test]
    fn a_checkpoint_of_other_aggregates_is_refused_and_state_ttl_survives_a_restore() {
        let types = [DataType::string(), DataType::int()];
        let mut h = OperatorHarness::new(count_sum(&types).with_typed_state(false).with_state_ttl(1000));
        h.push("op | k STRING | v INT\n+I | a | 1").unwrap();
        h.advance_processing_time(600).unwrap();
        h.push("op | k STRING | v INT\n+I | b | 2").unwrap();
        let state = h.snapshot(1).unwrap();
        // Other calls than the checkpointed groups hold: refused, naming the operator.
        let one_call = GroupAggregateOperator::new(
            vec![0],
            vec![AggregateCall::new(AggregateKind::CountStar, None, DataType::bigint())],
            &types,
        );
        let error = OperatorHarness::new(one_call).restore(vec![state.clone()]).unwrap_err().to_string();
        assert!(error.contains("the state of GroupAggregate holds groups of other aggregates"), "{error}");
        // The same calls: each group keeps the time it was written at, and expires from it.
        let mut restored = OperatorHarness::new(count_sum(&types).with_state_ttl(1000).with_emit_unchanged(true));
        restored.restore(vec![state]).unwrap();
        restored.advance_processing_time(1000).unwrap();
        restored.push("op | k STRING | v INT\n+I | a | 5\n+I | b | 5").unwrap();
        assert_eq!(restored.take_lines(), ["+I[a, 1, 5]", "-U[b, 1, 2]", "+U[b, 2, 7]"]);
    }

    /// A restore into other calls (the map a compatibility check adds): kept calls go on from
    /// their accumulators and last results, a new call starts empty, held typed or as values.
    #[test]
    fn a_restore_into_other_calls_continues_the_kept_ones() {
        let types = [DataType::string(), DataType::int()];
        for typed in [true, false] {
            let mut h = OperatorHarness::new(count_sum(&types).with_typed_state(typed));
            h.push("op | k STRING | v INT\n+I | a | 1\n+I | a | 2\n+I | b | 4").unwrap();
            let state = h.snapshot(1).unwrap();
            // New calls: SUM(v) (old call 1), then a new COUNT(v); COUNT(*) is dropped.
            let calls = vec![
                AggregateCall::new(AggregateKind::Sum, Some(1), DataType::int()),
                AggregateCall::new(AggregateKind::Count, Some(1), DataType::bigint().not_null()),
            ];
            let new = GroupAggregateOperator::new(vec![0], calls, &types).with_typed_state(typed);
            let map = crate::aggregate::encode_call_map(&[Some(1), None]);
            let mut restored = OperatorHarness::new(new);
            restored.restore(vec![state.with_section(crate::aggregate::RESTORED_CALLS, map)]).unwrap();
            restored.push("op | k STRING | v INT\n+I | a | 3").unwrap();
            // The last result the restore holds is the kept SUM and NULL for the new COUNT.
            assert_eq!(restored.take_lines(), ["-U[a, 3, null]", "+U[a, 6, 1]"], "typed: {typed}");
        }
    }

    /// An aggregate checkpointed and restored at random points of a random changelog, at a
    /// random new parallelism each time (its groups split by key group), emits what one
    /// aggregate running through the same input does: the same final table.
    #[test]
    fn restored_aggregates_go_on_as_if_never_stopped() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(23);
        let calls = vec![
            AggregateCall::new(AggregateKind::CountStar, None, DataType::bigint()),
            AggregateCall::new(AggregateKind::Sum, Some(1), DataType::bigint()),
            AggregateCall::new(AggregateKind::Min, Some(1), DataType::bigint()),
            AggregateCall::new(AggregateKind::Avg, Some(1), DataType::bigint()),
            AggregateCall::new(AggregateKind::Count, Some(1), DataType::bigint()).distinct(),
            AggregateCall::new(AggregateKind::ListAgg { delimiter: ",".into() }, Some(1), DataType::string()),
            AggregateCall::new(AggregateKind::StddevPop, Some(1), DataType::double()),
        ];
        // Calls the typed state covers (every third round holds its groups typed).
        let typed_calls = vec![
            AggregateCall::new(AggregateKind::CountStar, None, DataType::bigint()),
            AggregateCall::new(AggregateKind::Sum, Some(1), DataType::bigint()),
            AggregateCall::new(AggregateKind::Avg, Some(1), DataType::bigint()),
            AggregateCall::new(AggregateKind::Count, Some(1), DataType::bigint()),
        ];
        let types = [DataType::bigint(), DataType::bigint()];
        let typed = |round: usize| round % 3 == 2;
        let build = |round: usize| {
            if typed(round) {
                return GroupAggregateOperator::new(vec![0], typed_calls.clone(), &types);
            }
            let op = GroupAggregateOperator::new(vec![0], calls.clone(), &types);
            if round % 2 == 1 {
                op.with_mini_batch(BundleTrigger { size: Some(5), memory_budget: usize::MAX })
            } else {
                op
            }
        };
        let owner = |k: i64, p: usize| subtask_for_hash(hash_key(&[Value::BigInt(k)], &[0]), p);
        for round in 0..30 {
            let mut whole = OperatorHarness::new(build(round));
            let mut parts = vec![OperatorHarness::new(build(round))];
            let (mut expected, mut actual) = (Vec::new(), Vec::new());
            let mut live: Vec<(i64, i64)> = Vec::new();
            for step in 0..30 {
                let mut rows = Vec::new();
                for _ in 0..rng.random_range(1..12) {
                    if !live.is_empty() && rng.random_bool(0.35) {
                        let (k, v) = live.remove(rng.random_range(0..live.len()));
                        rows.push(("-D", k, v));
                    } else {
                        let (k, v) = (rng.random_range(0..9), rng.random_range(-20..20));
                        live.push((k, v));
                        rows.push(("+I", k, v));
                    }
                }
                let fixture = |rows: &[(&str, i64, i64)]| {
                    let mut f = String::from("op | k BIGINT | v BIGINT\n");
                    rows.iter().for_each(|(kind, k, v)| f.push_str(&format!("{kind} | {k} | {v}\n")));
                    f
                };
                whole.push(&fixture(&rows)).unwrap();
                let p = parts.len();
                for (i, part) in parts.iter_mut().enumerate() {
                    let own: Vec<_> = rows.iter().copied().filter(|(_, k, _)| owner(*k, p) == i).collect();
                    part.push(&fixture(&own)).unwrap();
                }
                if step % 7 == 6 {
                    // A checkpoint, then a restore at another parallelism.
                    let p = rng.random_range(1..5);
                    let build = |i, p| OperatorHarness::with_subtask(Box::new(build(round)), i, p);
                    let states = OperatorHarness::rescale(&mut parts, step as u64, p, build, &mut actual).unwrap();
                    // Typed groups are held as keyed state with the on-disk backend.
                    let on_disk = weir_runtime::harness::state_on_disk();
                    let section = if typed(round) && !on_disk { TYPED_GROUPS } else { GROUPS };
                    assert!(states.iter().all(|s| s.section_names().all(|n| n == section)), "round {round}");
                }
            }
            whole.end_input().unwrap();
            expected.extend(whole.take_lines());
            for part in &mut parts {
                part.end_input().unwrap();
                actual.extend(part.take_lines());
            }
            let changes =
                |lines: &[String]| materialize_changelog(lines.iter().filter(|l| l.starts_with(['+', '-']))).unwrap();
            assert_eq!(changes(&actual), changes(&expected), "round {round}");
        }
    }
}
