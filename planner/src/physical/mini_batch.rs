//! The mode of each MiniBatchAssigner, inferred as Flink's `MiniBatchIntervalInferRule` infers
//! it: from the sink down, a node that needs watermarks (an event-time window, interval or
//! window join, OVER, deduplication, temporal join) makes every assigner below it
//! [`MiniBatchMode::RowTime`] — it then passes watermarks on at interval boundaries instead of
//! dropping them, so the rows late there are the rows late without mini-batch (to the
//! interval). Elsewhere an assigner stays [`MiniBatchMode::ProcTime`]. Below a group window of
//! the older syntax (`GROUP BY TUMBLE(…)`, Flink's `GroupWindowAggregate`) there is no
//! mini-batch: its assigners are removed.

use weir_operators::{MiniBatchAssignerSpec, MiniBatchMode};

use super::op::mini_batch_assigner::MiniBatchAssigner;
use super::op::MiniBatchNeed;
use super::PhysicalNode;

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
        node.operator = MiniBatchAssigner(MiniBatchAssignerSpec { mode, ..*spec }).into();
        return node;
    }
    let below = match (above, node.operator.mini_batch(&node)) {
        (Above::None, _) | (_, MiniBatchNeed::NoMiniBatch) => Above::None,
        (_, MiniBatchNeed::Watermarks) => Above::RowTime,
        (above, MiniBatchNeed::Nothing) => above,
    };
    node.inputs = std::mem::take(&mut node.inputs).into_iter().map(|input| infer(input, below)).collect();
    node
}
