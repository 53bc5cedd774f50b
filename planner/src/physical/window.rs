//! Physical planning of window aggregates: a LocalWindowAggregate before the exchange and a
//! GlobalWindowAggregate after it when every call can merge partials and
//! `table.optimizer.agg-phase-strategy` allows two phases (Flink's
//! `TwoStageOptimizedWindowAggregateRule`, which needs no mini-batch), else one WindowAggregate;
//! group windows of the older syntax and windows of processing time in one phase, as Flink.

use weir_operators::aggregate::distinct::{DistinctArgs, DistinctValues};
use weir_operators::aggregate::AggregateCall;
use weir_operators::{LocalWindowAggregateSpec, WindowAggregateInput, WindowAggregateSpec, WindowSpec};
use weir_runtime::types::TimeAttribute;
use weir_runtime::{DataType, Field, ShipStrategy};

use super::aggregate::{partial_fields, two_phase_call};
use super::op::exchange::Exchange;
use super::op::local_window_aggregate::LocalWindowAggregate;
use super::op::session_window_aggregate::SessionWindowAggregate;
use super::op::window_aggregate::WindowAggregate;
use super::{ChangelogMode, Physical, PhysicalNode, UNASSIGNED};
use crate::options::AggPhaseStrategy;
use crate::plan::Plan;

/// What a window aggregate node of the logical plan holds.
pub(super) struct WindowAggregateParts {
    pub input: Plan,
    pub keys: Vec<usize>,
    pub calls: Vec<AggregateCall>,
    pub window: WindowSpec,
    pub time_col: usize,
    pub window_time: bool,
    pub group_window: bool,
}

/// The columns of a local window aggregate: the keys, each call's partial accumulators, each
/// DISTINCT argument's values (a MAP of value to count), the rows, and `$slice_end`.
fn local_fields(input: &PhysicalNode, keys: &[usize], calls: &[AggregateCall]) -> Vec<Field> {
    let mut fields: Vec<Field> = keys.iter().map(|&k| input.fields[k].clone()).collect();
    fields.extend(partial_fields(calls));
    let distinct = DistinctArgs::of(calls);
    for (i, &column) in distinct.columns().iter().enumerate() {
        fields.push(Field::new(
            format!("distinct${i}"),
            DistinctValues::partial_type(input.fields[column].data_type.clone()),
        ));
    }
    fields.push(Field::new("$rows", DataType::bigint()));
    fields.push(Field::new("$slice_end", DataType::bigint().not_null()));
    fields
}

impl Physical<'_> {
    /// The window aggregate of `parts`, producing `fields`.
    pub(super) fn window_aggregate(&self, parts: WindowAggregateParts, fields: Vec<Field>) -> PhysicalNode {
        let WindowAggregateParts { input, keys, calls, window, time_col, window_time, group_window } = parts;
        let input = self.physical(input, true, false);
        let retracting = !input.changelog.is_insert_only();
        let arg_types: Vec<Option<DataType>> =
            calls.iter().map(|c| c.arg.map(|a| input.fields[a].data_type.clone())).collect();
        let hashed = !keys.is_empty() && input.hashed_on(&keys);
        let processing_time = input.fields[time_col].data_type.time_attribute == Some(TimeAttribute::Proctime);
        let node = |operator, inputs, fields| PhysicalNode {
            parallelism: UNASSIGNED,
            operator,
            inputs,
            fields,
            changelog: ChangelogMode::INSERT_ONLY,
        };
        let exchange = |input: PhysicalNode, keys: Vec<usize>| {
            if hashed {
                return input;
            }
            let strategy = if keys.is_empty() { ShipStrategy::Single } else { ShipStrategy::Hash(keys) };
            let (fields, changelog) = (input.fields.clone(), input.changelog);
            PhysicalNode { changelog, ..node(Exchange { strategy }.into(), vec![input], fields) }
        };
        if let weir_operators::WindowKind::Session { gap } = window.kind {
            let spec = weir_operators::SessionWindowAggregateSpec {
                keys: keys.clone(),
                calls,
                arg_types,
                gap,
                time_col,
                retracting,
                window_time,
                group_window,
                zone: window.zone,
            };
            return node(SessionWindowAggregate(spec).into(), vec![exchange(input, keys)], fields);
        }
        // Flink plans group windows of the older syntax in one phase.
        let two_phase = !hashed
            && !group_window
            && !processing_time
            && self.options.agg_phase_strategy != AggPhaseStrategy::OnePhase
            && calls.iter().all(|c| two_phase_call(c, retracting));
        if !two_phase {
            let spec = WindowAggregateSpec {
                keys: keys.clone(),
                calls,
                arg_types,
                window,
                input: WindowAggregateInput::Rows { time_col, processing_time },
                retracting,
                window_time,
                group_window,
            };
            return node(WindowAggregate { spec, local_fields: None }.into(), vec![exchange(input, keys)], fields);
        }
        let key_count = keys.len();
        let local_fields = local_fields(&input, &keys, &calls);
        let local = LocalWindowAggregateSpec {
            keys,
            calls: calls.clone(),
            arg_types: arg_types.clone(),
            window,
            time_col,
            retracting,
        };
        let local = node(LocalWindowAggregate(local).into(), vec![input], local_fields.clone());
        let spec = WindowAggregateSpec {
            keys: (0..key_count).collect(),
            calls,
            arg_types,
            window,
            input: WindowAggregateInput::Partials,
            retracting,
            window_time,
            group_window: false,
        };
        let exchanged = exchange(local, (0..key_count).collect());
        node(WindowAggregate { spec, local_fields: Some(local_fields) }.into(), vec![exchanged], fields)
    }
}
