//! `WindowRank`: window Top-N over rows that carry their window, fired as the watermark passes
//! each window's end.

use weir_operators::ranking::RankType;
use weir_operators::WindowRankSpec;

use super::prelude::*;
use crate::attributes::{attached, columns, order_text, range_text};
use crate::error::Error;
use crate::physical::state::Builder;

/// Window Top-N.
#[derive(Debug, Clone)]
pub struct WindowRank {
    /// The operator.
    pub spec: WindowRankSpec,
    /// The ranking function (only ROW_NUMBER runs; EXPLAIN shows the others, as Flink's).
    pub rank_type: RankType,
}

impl PhysicalOp for WindowRank {
    fn name(&self) -> &'static str {
        "WindowRank"
    }

    /// The input's columns, then the rank as Flink names it (whatever the query calls it).
    fn explain(&self, _node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (spec, column) = (&self.spec, input.column);
        let mut select: Vec<String> = (0..spec.input_arity).map(column).collect();
        if spec.output_rank {
            select.push(crate::binder::RANK_COLUMN.to_string());
        }
        format!(
            "WindowRank(window=[{}], rankType=[{}], rankRange=[{}], partitionBy=[{}], orderBy=[{}], select=[{}])",
            attached(&spec.window, column),
            self.rank_type.name(),
            range_text(spec.range),
            columns(&spec.partition, column),
            order_text(&spec.order, column),
            select.join(", ")
        )
    }

    fn runs(&self) -> Runs {
        Runs::Keyed { keys: self.spec.partition.len() }
    }

    fn mini_batch(&self, _node: &PhysicalNode) -> MiniBatchNeed {
        // Window Top-N runs on event time only.
        MiniBatchNeed::Watermarks
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Low), checkpointed: Some(&self.spec) }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let spec = &self.spec;
        let builder = Builder::new(node, inputs, "window rank")
            .key(&spec.partition, false)
            .define("window", format!("{:?}", spec.window.spec))
            .define("order", inputs[0].order(&spec.order))
            .define("range", format!("{:?}", spec.range))
            .rows(RowRule::Lineage);
        builder.finish(vec!["ROW_NUMBER".into()], true)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        if self.rank_type != RankType::RowNumber {
            // Flink's words, when it translates the plan.
            return Err(Error::Table(format!(
                "{}() function is not supported on Window TopN currently, only ROW_NUMBER() is supported.",
                self.rank_type.name()
            )));
        }
        translator.unary(node, "WindowRank", self.spec.factory())
    }
}
