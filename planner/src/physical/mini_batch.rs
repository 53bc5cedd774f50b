//! The mode of each MiniBatchAssigner, inferred as Flink's `MiniBatchIntervalInferRule` infers
//! it: from the sink down, a node that needs watermarks (an event-time window, interval or
//! window join, OVER, deduplication, temporal join) makes every assigner below it
//! [`MiniBatchMode::RowTime`] — it then passes watermarks on at interval boundaries instead of
//! dropping them, so the rows late there are the rows late without mini-batch (to the
//! interval). Elsewhere an assigner stays [`MiniBatchMode::ProcTime`]. Below a group window of
//! the older syntax (`GROUP BY TUMBLE(…)`, Flink's `GroupWindowAggregate`) there is no
//! mini-batch: its assigners are removed.

use weir_operators::{MiniBatchAssignerSpec, MiniBatchMode};
use weir_runtime::types::TimeAttribute;

use super::op::mini_batch_assigner::MiniBatchAssigner;
use super::op::MiniBatchNeed;
use super::{PhysicalKind, PhysicalNode};

/// What the operators above a node ask of the mini-batch below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Above {
    /// Only operators that flush on markers: processing-time batches.
    ProcTime,
    /// Something that needs watermarks.
    RowTime,
    /// A group window of the older syntax: no mini-batch.
    None,
}

/// `node` with the mode of each of its MiniBatchAssigners decided (and those below a group
/// window of the older syntax removed).
pub(super) fn infer_modes(node: PhysicalNode) -> PhysicalNode {
    infer(node, Above::ProcTime)
}

fn infer(mut node: PhysicalNode, above: Above) -> PhysicalNode {
    if let Some(MiniBatchAssigner(spec)) = node.op::<MiniBatchAssigner>() {
        let mode = match above {
            Above::None => return node.inputs.remove(0),
            Above::ProcTime => MiniBatchMode::ProcTime,
            Above::RowTime => MiniBatchMode::RowTime,
        };
        node.kind = MiniBatchAssigner(MiniBatchAssignerSpec { mode, ..*spec }).into();
        return node;
    }
    let below = match (above, needs(&node)) {
        (Above::None, _) | (_, Need::NoMiniBatch) => Above::None,
        (_, Need::Watermarks) => Above::RowTime,
        (above, Need::Nothing) => above,
    };
    node.inputs = std::mem::take(&mut node.inputs).into_iter().map(|input| infer(input, below)).collect();
    node
}

/// What a node asks of the mini-batch below it.
enum Need {
    Nothing,
    /// Watermarks (Flink's `requireWatermark`): an assigner below passes them on.
    Watermarks,
    /// No mini-batch below (Flink's `GroupWindowAggregate`).
    NoMiniBatch,
}

fn needs(node: &PhysicalNode) -> Need {
    let _rowtime = |time_col: usize| {
        node.inputs.first().and_then(|input| input.fields.get(time_col)).and_then(|f| f.data_type.time_attribute)
            == Some(TimeAttribute::Rowtime)
    };
    let _watermarks = |yes: bool| if yes { Need::Watermarks } else { Need::Nothing };
    match &node.kind {
        PhysicalKind::Op(op) => match op.mini_batch(node) {
            MiniBatchNeed::Nothing => Need::Nothing,
            MiniBatchNeed::Watermarks => Need::Watermarks,
            MiniBatchNeed::NoMiniBatch => Need::NoMiniBatch,
        },
        PhysicalKind::TableSourceScan { .. }
        | PhysicalKind::Values { .. }
        | PhysicalKind::Exchange { .. }
        | PhysicalKind::Union
        | PhysicalKind::Sink { .. } => Need::Nothing,
    }
}
