//! `TemporalJoin`: an event-time temporal join of a stream (left) with the version of a
//! versioned table (right) valid at each row's time.

use weir_operators::join::TemporalJoinSpec;

use super::prelude::*;
use crate::attributes::names;
use crate::plan_text::expression;

/// An event-time temporal join.
#[derive(Debug, Clone)]
pub struct TemporalJoin(pub TemporalJoinSpec);

/// Flink's marker of the temporal condition: both rowtimes, the versioned table's key (weir
/// prints the right join keys, which hold it) and the join keys of each side.
fn temporal_condition(spec: &TemporalJoinSpec, column: &dyn Fn(usize) -> String) -> String {
    let list = |keys: &[usize], offset: usize| keys.iter().map(|&k| column(k + offset)).collect::<Vec<_>>().join(", ");
    let (left, right) = (list(&spec.keys[0], 0), list(&spec.keys[1], spec.arities[0]));
    format!(
        "__TEMPORAL_JOIN_CONDITION({}, {}, __TEMPORAL_JOIN_CONDITION_PRIMARY_KEY({right}), \
         __TEMPORAL_JOIN_LEFT_KEY({left}), __TEMPORAL_JOIN_RIGHT_KEY({right}))",
        column(spec.times[0]),
        column(spec.arities[0] + spec.times[1])
    )
}

impl PhysicalOp for TemporalJoin {
    fn name(&self) -> &'static str {
        "TemporalJoin"
    }

    /// `TemporalJoin(joinType=[…], where=[AND(=(product, product0),
    /// __TEMPORAL_JOIN_CONDITION(ts, ts0, …))], select=[…])`.
    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (spec, column, infix) = (&self.0, input.column, input.infix);
        let marker = temporal_condition(spec, column);
        let condition = match &spec.condition {
            None => marker,
            Some(c) => {
                let parts: Vec<String> =
                    crate::conditions::conjuncts(c).into_iter().map(|p| expression(p, column, infix)).collect();
                if infix {
                    format!("({} AND {marker})", parts.join(" AND "))
                } else {
                    format!("AND({}, {marker})", parts.join(", "))
                }
            }
        };
        format!(
            "TemporalJoin(joinType=[{}], where=[{condition}], select=[{}])",
            spec.join_type.name(),
            names(&node.fields)
        )
    }

    fn runs(&self) -> Runs {
        Runs::Keyed { keys: self.0.keys[0].len() }
    }

    fn mini_batch(&self, _node: &PhysicalNode) -> MiniBatchNeed {
        // The temporal join joins versions by event time.
        MiniBatchNeed::Watermarks
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Medium), checkpointed: Some(&self.0) }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let spec = &self.0;
        let times = format!("{} AS OF {}", inputs[1].text(spec.times[1]), inputs[0].text(spec.times[0]));
        let condition = spec.condition.as_ref();
        let more = vec![("version", times)];
        crate::physical::state::join(node, inputs, "temporal join", &spec.join_type, &spec.keys, condition, more)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.binary(node, self.0.factory())
    }
}
