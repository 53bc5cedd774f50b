//! `Deduplicate`: the first or last row per key by a time attribute (processing time too).

use weir_operators::ranking::SortKey;
use weir_operators::DeduplicateSpec;

use super::prelude::*;
use crate::attributes::{columns, order_text};
use crate::physical::state::Builder;

/// The first or last row per key.
#[derive(Debug, Clone)]
pub struct Deduplicate {
    /// The operator.
    pub spec: DeduplicateSpec,
    /// The time attribute ordered by (a processing time too), for EXPLAIN.
    pub time_col: usize,
}

impl PhysicalOp for Deduplicate {
    fn name(&self) -> &'static str {
        "Deduplicate"
    }

    /// The execution plan's `Deduplicate(keep=[FirstRow], key=[user_id], order=[PROCTIME],
    /// outputInsertOnly=[true])`; the physical plan shows the rank it is.
    fn explain(&self, node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (spec, column) = (&self.spec, input.column);
        if input.infix {
            return format!(
                "Deduplicate(keep=[{}], key=[{}], order=[{}], outputInsertOnly=[{}])",
                if spec.keep_last { "LastRow" } else { "FirstRow" },
                columns(&spec.key, column),
                if spec.rowtime.is_some() { "ROWTIME" } else { "PROCTIME" },
                spec.output_insert_only
            );
        }
        let append_only = node.inputs[0].changelog.is_insert_only();
        let order = [SortKey::new(self.time_col, spec.keep_last)];
        // Flink marks a rowtime ordering: `orderBy=[ROWTIME ts DESC]`.
        let marked = |c: usize| if spec.rowtime.is_some() { format!("ROWTIME {}", column(c)) } else { column(c) };
        format!(
            "Rank(strategy=[{}], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=1], partitionBy=[{}], orderBy=[{}], select=[{}])",
            if append_only { "AppendFastStrategy" } else { "RetractStrategy" },
            columns(&spec.key, column),
            order_text(&order, &marked),
            (0..spec.input_arity).map(column).collect::<Vec<_>>().join(", ")
        )
    }

    fn upsert_key(&self, _node: &PhysicalNode) -> Option<Vec<usize>> {
        (!self.spec.key.is_empty()).then(|| self.spec.key.clone())
    }

    fn runs(&self) -> Runs {
        Runs::Keyed { keys: self.spec.key.len() }
    }

    fn mini_batch(&self, _node: &PhysicalNode) -> MiniBatchNeed {
        MiniBatchNeed::watermarks_if(self.spec.rowtime.is_some())
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Medium), checkpointed: Some(&self.spec) }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let spec = &self.spec;
        let time = inputs[0].text(self.time_col);
        let order = format!("{time} {}", if spec.keep_last { "DESC" } else { "ASC" });
        // The first row on processing time is kept only as a mark that its key was seen (with
        // insert-only input: it never goes out again).
        let rule = match (spec.keep_last, spec.rowtime) {
            (false, None) if spec.output_insert_only => RowRule::Any,
            _ => RowRule::Types,
        };
        let mode = if spec.rowtime.is_some() { "rowtime" } else { "proctime" };
        let builder = Builder::new(node, inputs, "deduplicate")
            .key(&spec.key, false)
            .define("order", order)
            .define("time", mode.into())
            .rows(rule);
        builder.finish(Vec::new(), true)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        translator.unary(node, "Deduplicate", self.spec.factory())
    }
}
