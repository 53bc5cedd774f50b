//! Physical planning of the operators keyed by a partition of windows — window Top-N, window
//! deduplication and the SESSION window function on its own: the operator after an exchange
//! hashing its partition columns (all rows to one subtask without any), as Flink plans
//! `WindowRank`, `WindowDeduplicate` and a SESSION `WindowTableFunction`.

use weir_runtime::Field;

use super::aggregate::hashed_on;
use super::{keyed_exchange, ChangelogMode, Physical, PhysicalKind, PhysicalNode, UNASSIGNED};

/// The partition columns of a window Top-N or deduplication.
pub(super) fn partition_of(kind: &PhysicalKind) -> Option<&[usize]> {
    match kind {
        PhysicalKind::WindowRank { spec, .. } => Some(&spec.partition),
        PhysicalKind::WindowDeduplicate(spec) => Some(&spec.partition),
        PhysicalKind::SessionWindowTableFunction(spec) => Some(&spec.partition),
        _ => None,
    }
}

impl Physical<'_> {
    /// `kind` (keyed by a partition) over `input`, its rows exchanged by partition.
    pub(super) fn keyed_by_partition(
        &self,
        input: PhysicalNode,
        kind: PhysicalKind,
        fields: Vec<Field>,
    ) -> PhysicalNode {
        let partition = partition_of(&kind).map(<[usize]>::to_vec).unwrap_or_default();
        let exchanged = if !partition.is_empty() && hashed_on(&input, &partition) {
            input
        } else {
            keyed_exchange(input, &partition)
        };
        PhysicalNode {
            parallelism: UNASSIGNED,
            kind,
            inputs: vec![exchanged],
            fields,
            changelog: ChangelogMode::INSERT_ONLY,
        }
    }
}
