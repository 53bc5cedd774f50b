//! Physical planning of group aggregates: one GroupAggregate (per record or in mini-batches),
//! or a LocalGroupAggregate and a GlobalGroupAggregate around the exchange when mini-batch is on
//! and every call can merge partials (`table.optimizer.agg-phase-strategy`); no exchange and no
//! local phase over input already hashed on the keys.

use weir_operators::aggregate::distinct::{DistinctArgs, DistinctValues};
use weir_operators::aggregate::{Accumulator, AggregateCall};
use weir_operators::{BundleTrigger, GlobalGroupAggregateSpec, GroupAggregateSpec, LocalGroupAggregateSpec};
use weir_runtime::{Field, ShipStrategy};

use super::op::exchange::Exchange;
use super::op::global_group_aggregate::GlobalGroupAggregate;
use super::op::group_aggregate::GroupAggregate;
use super::op::local_group_aggregate::LocalGroupAggregate;
use super::{ChangelogMode, Physical, PhysicalNode, UNASSIGNED};
use crate::options::{AggPhaseStrategy, MiniBatch};
use crate::plan::Plan;

/// Whether `call` can be split into a local and a global phase: a mergeable call, or a DISTINCT
/// one whose function is mergeable (the phases merge its distinct values, as Flink's
/// `DISTINCT(x) AS distinct$0` does; with a FILTER, the values of the rows it keeps).
pub(crate) fn two_phase_call(call: &AggregateCall, retracting: bool) -> bool {
    if call.distinct {
        let plain = AggregateCall { distinct: false, filter: None, ..call.clone() };
        return Accumulator::is_mergeable(&plain, retracting);
    }
    Accumulator::is_mergeable(call, retracting)
}

/// The partial accumulator columns a local phase emits for `calls`, named as Flink names them:
/// each partial Flink keeps is numbered across the calls (`count1$0, sum$1, count$2`); a partial
/// only weir keeps (SUM's count) is named after its call's first, with a `$` before it.
pub(super) fn partial_fields(calls: &[AggregateCall]) -> Vec<Field> {
    let mut fields = Vec::new();
    let mut index = 0;
    for call in calls {
        let first = index;
        for part in 0..Accumulator::partial_width(call) {
            let ty = if part == 1 { weir_runtime::DataType::bigint() } else { call.result_type.clone() };
            let base = call.kind.function().partials.get(part).copied().unwrap_or("acc");
            let name = match part < Accumulator::shown_partial_width(call) {
                true => format!("{base}${}", first + part),
                false => format!("${base}${first}"),
            };
            fields.push(Field::new(name, ty));
        }
        index += Accumulator::shown_partial_width(call);
    }
    fields
}

/// The bundle trigger of mini-batch settings.
pub(super) fn trigger(mini_batch: MiniBatch) -> BundleTrigger {
    BundleTrigger { size: mini_batch.size, memory_budget: mini_batch.memory_budget }
}

impl Physical<'_> {
    /// The group aggregate of `input` on `keys` computing `calls`.
    pub(super) fn aggregate(
        &self,
        input: Plan,
        keys: Vec<usize>,
        calls: Vec<AggregateCall>,
        fields: Vec<Field>,
        update_before: bool,
    ) -> PhysicalNode {
        // An aggregate retracts what it took back, so it needs its input's `-U` rows.
        let input = self.physical(input, true, false);
        let retracting = !input.changelog.is_insert_only();
        let changelog = ChangelogMode { insert: true, update_before, update_after: true, delete: retracting };
        let ttl_millis = self.options.state_ttl_millis;
        let strategy = if keys.is_empty() { ShipStrategy::Single } else { ShipStrategy::Hash(keys.clone()) };
        let exchange = |input: PhysicalNode, strategy: ShipStrategy| PhysicalNode {
            parallelism: UNASSIGNED,
            operator: Exchange { strategy }.into(),
            fields: input.fields.clone(),
            changelog: input.changelog,
            inputs: vec![input],
        };
        // Input already hashed on these keys (an aggregate on the same keys below) needs no
        // exchange and, as in Flink, no local phase.
        let hashed = !keys.is_empty() && input.hashed_on(&keys);
        let exchange = |input: PhysicalNode, strategy: ShipStrategy| {
            if hashed {
                input
            } else {
                exchange(input, strategy)
            }
        };
        let two_phase = self.mini_batch.is_some()
            && !hashed
            && self.options.agg_phase_strategy != AggPhaseStrategy::OnePhase
            && calls.iter().all(|c| two_phase_call(c, retracting));
        match self.mini_batch {
            Some(mini_batch) if two_phase => {
                let emit_unchanged = ttl_millis > 0 && self.options.output_identical;
                let mut local_fields: Vec<Field> = keys.iter().map(|&k| input.fields[k].clone()).collect();
                local_fields.extend(partial_fields(&calls));
                // Each argument of DISTINCT calls: its values in the bundle, with multiplicities.
                let distinct = DistinctArgs::of(&calls);
                for (i, &column) in distinct.columns().iter().enumerate() {
                    let map = DistinctValues::partial_type(input.fields[column].data_type.clone());
                    local_fields.push(Field::new(format!("distinct${i}"), map));
                }
                local_fields.push(Field::new("$rows", weir_runtime::DataType::bigint()));
                let arg_types: Vec<_> =
                    calls.iter().map(|c| c.arg.map(|a| input.fields[a].data_type.clone())).collect();
                let key_count = keys.len();
                let input_types = input.fields.iter().map(|f| f.data_type.clone()).collect();
                let trigger = trigger(mini_batch);
                let spec = LocalGroupAggregateSpec { keys, calls: calls.clone(), input_types, retracting, trigger };
                let local = PhysicalNode {
                    parallelism: UNASSIGNED,
                    operator: LocalGroupAggregate(spec).into(),
                    fields: local_fields.clone(),
                    changelog: ChangelogMode::INSERT_ONLY,
                    inputs: vec![input],
                };
                let strategy = match strategy {
                    ShipStrategy::Hash(_) => ShipStrategy::Hash((0..key_count).collect()),
                    other => other,
                };
                PhysicalNode {
                    parallelism: UNASSIGNED,
                    operator: GlobalGroupAggregate {
                        spec: GlobalGroupAggregateSpec {
                            group_layout: GlobalGroupAggregateSpec::group_layout_of(&calls, &arg_types, ttl_millis),
                            key_count,
                            calls,
                            arg_types,
                            update_before,
                            trigger,
                            ttl_millis,
                            emit_unchanged,
                        },
                        local_fields,
                    }
                    .into(),
                    inputs: vec![exchange(local, strategy)],
                    fields,
                    changelog,
                }
            }
            mini_batch => {
                let emit_unchanged = ttl_millis > 0 && (mini_batch.is_none() || self.options.output_identical);
                let input_types: Vec<_> = input.fields.iter().map(|f| f.data_type.clone()).collect();
                let group_layout = GroupAggregateSpec::group_layout_of(
                    &keys,
                    &calls,
                    &input_types,
                    retracting,
                    mini_batch.is_some(),
                    ttl_millis,
                );
                PhysicalNode {
                    parallelism: UNASSIGNED,
                    operator: GroupAggregate(GroupAggregateSpec {
                        group_layout,
                        keys,
                        calls,
                        input_types,
                        update_before,
                        retracting,
                        mini_batch: mini_batch.map(trigger),
                        ttl_millis,
                        emit_unchanged,
                    })
                    .into(),
                    inputs: vec![exchange(input, strategy)],
                    fields,
                    changelog,
                }
            }
        }
    }
}
