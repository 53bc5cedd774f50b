//! Physical planning of the operators keyed by a partition — Top-N (`Rank`, `SortLimit`,
//! `Limit`), `Deduplicate`, `OverAggregate`, window Top-N, window deduplication and the SESSION
//! window function on its own: the operator after an exchange hashing its partition columns (all
//! rows to one subtask without any), as Flink plans them; and `TemporalSort`, on one subtask.

use weir_operators::ranking::{RankRange, RankType, SortKey};
use weir_operators::{DeduplicateSpec, RankSpec, TemporalSortSpec};
use weir_runtime::types::TimeAttribute;
use weir_runtime::Field;

use crate::plan::Plan;

use super::op::deduplicate::Deduplicate;
use super::op::rank::{Rank, RankShape};
use super::op::temporal_sort::TemporalSort;
use super::{keyed_exchange, ChangelogMode, Operator, Physical, PhysicalNode, UNASSIGNED};

impl Physical<'_> {
    /// `operator` (keyed by `partition`) over `input`, its rows exchanged by partition.
    pub(super) fn keyed_by_partition(
        &self,
        input: PhysicalNode,
        partition: &[usize],
        operator: Operator,
        fields: Vec<Field>,
    ) -> PhysicalNode {
        let exchanged =
            if !partition.is_empty() && input.hashed_on(partition) { input } else { keyed_exchange(input, partition) };
        PhysicalNode {
            parallelism: UNASSIGNED,
            operator,
            inputs: vec![exchanged],
            fields,
            changelog: ChangelogMode::INSERT_ONLY,
        }
    }
}

/// The parts of a Top-N to plan.
pub(super) struct RankParts {
    pub input: Plan,
    pub partition: Vec<usize>,
    pub order: Vec<SortKey>,
    pub rank_type: RankType,
    pub range: RankRange,
    pub output_rank: bool,
    pub shape: RankShape,
}

impl Physical<'_> {
    /// A Top-N after an exchange on its partition: `AppendFastStrategy` over insert-only input,
    /// else `RetractStrategy` (its input then sends update-befores).
    pub(super) fn rank(&self, parts: RankParts, fields: Vec<Field>, update_before: bool) -> PhysicalNode {
        let RankParts { input, partition, order, rank_type, range, output_rank, shape } = parts;
        let input = self.physical(input, true, false);
        let spec = RankSpec {
            input_arity: input.fields.len(),
            append_only: input.changelog.is_insert_only(),
            partition,
            order,
            rank_type,
            range,
            output_rank,
            update_before,
            state_ttl: self.options.state_ttl(),
        };
        let changelog = ChangelogMode { insert: true, update_before, update_after: true, delete: true };
        let partition = spec.partition.clone();
        PhysicalNode { changelog, ..self.keyed_by_partition(input, &partition, Rank { spec, shape }.into(), fields) }
    }

    /// The first or last row per key by a time attribute. Keeping the first row of insert-only
    /// input without mini-batch emits inserts only (Flink 2's `outputInsertOnly`).
    pub(super) fn deduplicate(
        &self,
        input: Plan,
        partition: Vec<usize>,
        (time_col, keep_last): (usize, bool),
        fields: Vec<Field>,
        update_before: bool,
    ) -> PhysicalNode {
        let rowtime = input.fields[time_col].data_type.time_attribute == Some(TimeAttribute::Rowtime);
        let input = self.physical(input, true, false);
        let mini_batch = self.mini_batch.map(super::aggregate::trigger);
        let output_insert_only = !keep_last && mini_batch.is_none() && input.changelog.is_insert_only();
        let spec = DeduplicateSpec {
            key: partition,
            keep_last,
            rowtime: rowtime.then_some(time_col),
            input_arity: input.fields.len(),
            output_insert_only,
            update_before,
            mini_batch,
            compact_changes: self.options.deduplicate_compact_changes,
            state_ttl: self.options.state_ttl(),
        };
        let changelog = if output_insert_only {
            ChangelogMode::INSERT_ONLY
        } else {
            ChangelogMode { insert: true, update_before, update_after: true, delete: true }
        };
        PhysicalNode {
            changelog,
            ..self.keyed_by_partition(input, &spec.key.clone(), Deduplicate { spec, time_col }.into(), fields)
        }
    }
}

impl Physical<'_> {
    /// `ORDER BY` without a limit: a temporal sort of all rows on one subtask (the rule in
    /// `crate::rules::sort` made sure the first key is an ascending time attribute).
    pub(super) fn temporal_sort(&self, input: Plan, order: Vec<SortKey>, fields: Vec<Field>) -> PhysicalNode {
        let time_col = order[0].column;
        let rowtime = input.fields[time_col].data_type.time_attribute == Some(TimeAttribute::Rowtime);
        let input = self.physical(input, true, false);
        let spec = TemporalSortSpec { time_col, rowtime, order: order[1..].to_vec(), arity: input.fields.len() };
        let exchanged = keyed_exchange(input, &[]);
        PhysicalNode::new(TemporalSort { spec, order }, vec![exchanged], fields, ChangelogMode::INSERT_ONLY)
    }
}
