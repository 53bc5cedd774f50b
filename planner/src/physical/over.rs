//! Physical planning of OVER aggregates: `OverAggregate` after an exchange hashing the partition
//! columns (all rows to one subtask without any), as Flink plans it.

use weir_operators::aggregate::AggregateCall;
use weir_operators::{OverAggregateSpec, OverFrame};
use weir_runtime::types::TimeAttribute;
use weir_runtime::Field;

use super::op::over_aggregate::OverAggregate;
use super::{ChangelogMode, Physical, PhysicalNode};
use crate::plan::Plan;

impl Physical<'_> {
    /// `calls` over `frame` of the rows of each partition, ordered by `time_col`.
    pub(super) fn over_aggregate(
        &self,
        input: Plan,
        partition: Vec<usize>,
        (time_col, frame): (usize, OverFrame),
        calls: Vec<AggregateCall>,
        fields: Vec<Field>,
    ) -> PhysicalNode {
        let rowtime = input.fields[time_col].data_type.time_attribute == Some(TimeAttribute::Rowtime);
        let input = self.physical(input, true, false);
        let arg_types = calls.iter().map(|c| c.arg.map(|a| input.fields[a].data_type.clone())).collect();
        let spec = OverAggregateSpec {
            partition,
            time_col,
            rowtime,
            frame,
            calls,
            arg_types,
            input_arity: input.fields.len(),
            state_ttl: self.options.state_ttl(),
        };
        let partition = spec.partition.clone();
        let node = self.keyed_by_partition(input, &partition, OverAggregate(spec).into(), fields);
        PhysicalNode { changelog: ChangelogMode::INSERT_ONLY, ..node }
    }
}
