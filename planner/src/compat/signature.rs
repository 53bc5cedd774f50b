//! The state signature of each physical node kind: the one place that says which kinds keep
//! state in checkpoints (every kind is named: a new one must say), each signature declared by
//! its operator's spec (`weir_operators::signature`).

use weir_operators::signature::{StateSignature, StatefulSpec};
use weir_runtime::DataType;

use crate::physical::{PhysicalKind, PhysicalNode, SinkMaterializer};

/// The column types of each input of `node`.
fn input_types(node: &PhysicalNode) -> Vec<Vec<DataType>> {
    node.inputs.iter().map(|i| i.fields.iter().map(|f| f.data_type.clone()).collect()).collect()
}

/// What `node` writes into checkpoints; `None` for a node that keeps no state there (a sink's
/// materializer is described by [`materializer_signature`]).
pub fn state_signature(node: &PhysicalNode) -> Option<StateSignature> {
    let spec: &dyn StatefulSpec = match &node.kind {
        PhysicalKind::GroupAggregate(spec) => spec,
        PhysicalKind::GlobalGroupAggregate { spec, .. } => spec,
        PhysicalKind::WindowAggregate(spec) | PhysicalKind::GlobalWindowAggregate { spec, .. } => spec,
        PhysicalKind::SessionWindowAggregate(spec) => spec,
        PhysicalKind::SessionWindowTableFunction(spec) => spec,
        PhysicalKind::WindowRank { spec, .. } => spec,
        PhysicalKind::WindowDeduplicate(spec) => spec,
        PhysicalKind::Rank { spec, .. } => spec,
        PhysicalKind::Deduplicate { spec, .. } => spec,
        PhysicalKind::ChangelogNormalize(spec) => spec,
        PhysicalKind::TemporalSort { spec, .. } => spec,
        PhysicalKind::OverAggregate(spec) => spec,
        PhysicalKind::Join(spec) => spec,
        PhysicalKind::IntervalJoin(spec) => spec,
        PhysicalKind::WindowJoin(spec) => spec,
        PhysicalKind::TemporalJoin(spec) => spec,
        // Stateless, or flushed before every checkpoint barrier (the local phases), or in
        // batch jobs, which take no checkpoints (FinalRows); scans and sinks keep their
        // connector's state, the sink's materializer its own.
        PhysicalKind::TableSourceScan { .. }
        | PhysicalKind::Values { .. }
        | PhysicalKind::Calc(_)
        | PhysicalKind::WatermarkAssigner(_)
        | PhysicalKind::Exchange { .. }
        | PhysicalKind::MiniBatchAssigner(_)
        | PhysicalKind::LocalGroupAggregate(_)
        | PhysicalKind::WindowTableFunction(_)
        | PhysicalKind::LocalWindowAggregate(_)
        | PhysicalKind::Union
        | PhysicalKind::FinalRows(_)
        | PhysicalKind::LookupJoin { .. }
        | PhysicalKind::Correlate(_)
        | PhysicalKind::Expand(_)
        | PhysicalKind::Sink { .. } => return None,
    };
    let types = input_types(node);
    let inputs: Vec<&[DataType]> = types.iter().map(Vec::as_slice).collect();
    Some(spec.state_signature(&inputs))
}

/// What the materializer of `sink` (a `Sink` node) writes into checkpoints.
pub fn materializer_signature(sink: &PhysicalNode, materializer: &SinkMaterializer) -> StateSignature {
    let types = input_types(sink);
    let inputs: Vec<&[DataType]> = types.iter().map(Vec::as_slice).collect();
    match materializer {
        SinkMaterializer::Deduplicate(operator) => operator.state_signature(&inputs),
        SinkMaterializer::Compacting(operator) => operator.state_signature(&inputs),
    }
}
