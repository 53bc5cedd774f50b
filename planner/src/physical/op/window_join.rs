//! `WindowJoin`: a join of the rows of the same window of two streams, fired as the watermark
//! passes each window's end.

use weir_operators::join::WindowJoinSpec;
use weir_operators::AttachedWindow;
use weir_runtime::Field;

use super::prelude::*;
use crate::attributes::condition_text;
use crate::attributes::names;

/// A window join of its two inputs.
#[derive(Debug, Clone)]
pub struct WindowJoin(pub WindowJoinSpec);

/// `TUMBLE(win_start=[window_start], win_end=[window_end], size=[5 min])` of one input.
fn window_text(window: &AttachedWindow, input: &[Field]) -> String {
    let name = |i: usize| input.get(i).map_or(format!("${i}"), |f| f.name.clone());
    window.spec.explain(&format!("win_start=[{}], win_end=[{}]", name(window.start), name(window.end)))
}

impl PhysicalOp for WindowJoin {
    fn name(&self) -> &'static str {
        "WindowJoin"
    }

    /// The windows' bounds are named as each input names them.
    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let spec = &self.0;
        format!(
            "WindowJoin(leftWindow=[{}], rightWindow=[{}], joinType=[{}], where=[{}], select=[{}])",
            window_text(&spec.windows[0], &node.inputs[0].fields),
            window_text(&spec.windows[1], &node.inputs[1].fields),
            spec.join_type.name(),
            condition_text(spec.condition.as_ref(), input.column, input.infix),
            names(&node.fields)
        )
    }

    fn runs(&self) -> Runs {
        Runs::Keyed { keys: self.0.keys[0].len() }
    }

    fn mini_batch(&self, _node: &PhysicalNode) -> MiniBatchNeed {
        // Window joins run on event time only.
        MiniBatchNeed::Watermarks
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Low), checkpointed: Some(&self.0) }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let spec = &self.0;
        let windows = format!("{:?} / {:?}", spec.windows[0].spec, spec.windows[1].spec);
        let condition = spec.condition.as_ref();
        let more = vec![("window", windows)];
        crate::physical::state::join(node, inputs, "window join", &spec.join_type, &spec.keys, condition, more)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.binary(node, self.0.factory())
    }
}
