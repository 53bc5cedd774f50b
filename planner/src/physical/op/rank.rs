//! Top-N: `Rank`, or as EXPLAIN names an `ORDER BY … LIMIT` and a `LIMIT` alone, `SortLimit` and
//! `Limit` — the first rows of each partition by an order.

use weir_operators::ranking::RankType;
use weir_operators::RankSpec;

use super::prelude::*;
use crate::attributes::{columns, order_text, range_text};
use crate::error::Error;
use crate::physical::state::Builder;

/// How EXPLAIN names a Top-N: a `Rank`, an `ORDER BY … LIMIT` (`SortLimit`) or a `LIMIT` alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankShape {
    /// `ROW_NUMBER() | RANK() | DENSE_RANK() OVER (…)` filtered on the rank.
    Rank,
    /// `ORDER BY … LIMIT fetch OFFSET offset`.
    SortLimit {
        /// `OFFSET`.
        offset: u64,
        /// `LIMIT`.
        fetch: u64,
    },
    /// `LIMIT fetch OFFSET offset` without ORDER BY.
    Limit {
        /// `OFFSET`.
        offset: u64,
        /// `LIMIT`.
        fetch: u64,
    },
}

/// Top-N: `Rank`, `SortLimit` or `Limit`, as `shape` says.
#[derive(Debug, Clone)]
pub struct Rank {
    /// The operator.
    pub spec: RankSpec,
    /// How EXPLAIN names it.
    pub shape: RankShape,
}

impl PhysicalOp for Rank {
    fn name(&self) -> &'static str {
        match self.shape {
            RankShape::Rank => "Rank",
            RankShape::SortLimit { .. } => "SortLimit",
            RankShape::Limit { .. } => "Limit",
        }
    }

    /// `Rank(strategy=[…], rankType=[…], rankRange=[…], partitionBy=[…], orderBy=[…],
    /// select=[…])`, `SortLimit(orderBy=[…], offset=[0], fetch=[3], strategy=[…])` or
    /// `Limit(offset=[0], fetch=[3])`.
    fn explain(&self, _node: &PhysicalNode, input: &ExplainInput<'_>) -> String {
        let (spec, column) = (&self.spec, input.column);
        match self.shape {
            RankShape::Rank => {
                let mut select: Vec<String> = (0..spec.input_arity).map(column).collect();
                if spec.output_rank {
                    select.push(crate::binder::RANK_COLUMN.to_string());
                }
                format!(
                    "Rank(strategy=[{}], rankType=[{}], rankRange=[{}], partitionBy=[{}], orderBy=[{}], select=[{}])",
                    spec.strategy(),
                    spec.rank_type.name(),
                    range_text(spec.range),
                    columns(&spec.partition, column),
                    order_text(&spec.order, column),
                    select.join(", ")
                )
            }
            RankShape::SortLimit { offset, fetch } => format!(
                "SortLimit(orderBy=[{}], offset=[{offset}], fetch=[{fetch}], strategy=[{}])",
                order_text(&spec.order, column),
                spec.strategy()
            ),
            RankShape::Limit { offset, fetch } => format!("Limit(offset=[{offset}], fetch=[{fetch}])"),
        }
    }

    fn upsert_key(&self, _node: &PhysicalNode) -> Option<Vec<usize>> {
        let spec = &self.spec;
        spec.output_rank.then(|| spec.partition.iter().copied().chain([spec.input_arity]).collect())
    }

    fn runs(&self) -> Runs {
        Runs::Keyed { keys: self.spec.partition.len() }
    }

    fn state(&self, _node: &PhysicalNode) -> State<'_> {
        State { size: Some(StateSize::Medium), checkpointed: Some(&self.spec) }
    }

    fn trace(&self, node: &PhysicalNode, inputs: &[Lineage]) -> Traced {
        let spec = &self.spec;
        let class = match self.shape {
            RankShape::Rank => "rank",
            RankShape::SortLimit { .. } | RankShape::Limit { .. } => "limit",
        };
        let strategy = if spec.append_only { "AppendFastStrategy" } else { "RetractStrategy" };
        let builder = Builder::new(node, inputs, class)
            .key(&spec.partition, false)
            .define("order", inputs[0].order(&spec.order))
            .define("rank range", format!("{:?}", spec.range))
            .define("strategy", strategy.into())
            .rows(RowRule::Lineage);
        builder.finish(vec!["ROW_NUMBER".into()], true)
    }

    fn translate<'p>(&self, node: &'p PhysicalNode, translator: &mut dyn Wiring<'p>) -> Result<Output> {
        if self.spec.rank_type != RankType::RowNumber {
            // Flink's words, when it translates the plan: its streaming Top-N ranks by
            // ROW_NUMBER only.
            return Err(Error::Table(format!(
                "{}() on streaming table is not supported currently",
                self.spec.rank_type.name()
            )));
        }
        translator.unary(node, self.name(), self.spec.factory())
    }
}
