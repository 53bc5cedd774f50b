//! Where a physical plan runs: the parallelism of every node and how rows reach each sink,
//! decided once, here, from the session's default parallelism and what the connectors offer
//! ([`ConnectorRegistry::source_abilities`], [`ConnectorRegistry::sink_abilities`]). The job
//! graph and EXPLAIN's JSON plan both read the result; neither decides again.
//!
//! | node | parallelism |
//! |---|---|
//! | TableSourceScan | the connector's (`scan.parallelism`, 1 for a managed table), else the default |
//! | Values | 1 |
//! | GroupAggregate, GlobalGroupAggregate | 1 without grouping keys, else the default |
//! | Union | the default |
//! | Sink | the connector's (`sink.parallelism`), else its input's |
//! | every other node | its input's (it is chained to it) |

use weir_connectors::{ConnectorRegistry, ScanContext, SinkContext};

use super::{sink_ship_strategy, PhysicalKind, PhysicalNode};
use crate::error::{Error, Position, Result};

/// Decides parallelism and sink exchanges for the plans of one job.
pub struct Distribution<'a> {
    /// What the connectors offer.
    pub registry: &'a ConnectorRegistry,
    /// `parallelism.default`
    pub parallelism: usize,
    /// The job runs in batch mode: every scan must end by itself.
    pub batch: bool,
}

impl Distribution<'_> {
    /// Sets the parallelism of `node` and everything below it, and the boundedness and input
    /// strategy of its sinks. Returns whether every source below `node` ends by itself.
    ///
    /// # Errors
    /// A table whose connector refuses its options, an unbounded scan in batch mode, and
    /// updating input into a sink of another parallelism without a primary key.
    pub fn assign(&self, node: &mut PhysicalNode) -> Result<bool> {
        let mut bounded = true;
        for input in &mut node.inputs {
            bounded &= self.assign(input)?;
        }
        let input_parallelism = node.inputs.first().map_or(self.parallelism, |i| i.parallelism);
        node.parallelism = match &mut node.kind {
            PhysicalKind::TableSourceScan { table, key, .. } => {
                let scan = ScanContext { batch: self.batch, key: key.clone() };
                let offered = self.registry.source_abilities(table, &scan)?;
                if self.batch && !offered.bounded {
                    return Err(Error::validation(
                        Position::default(),
                        format!(
                            "Querying an unbounded table '{}' in batch mode is not allowed. The table source is unbounded.",
                            table.qualified_name()
                        ),
                    ));
                }
                bounded = offered.bounded;
                offered.parallelism.unwrap_or(self.parallelism)
            }
            PhysicalKind::Values { .. } => 1,
            PhysicalKind::GroupAggregate { keys, .. } if keys.is_empty() => 1,
            PhysicalKind::GlobalGroupAggregate { key_count: 0, .. } => 1,
            PhysicalKind::GroupAggregate { .. } | PhysicalKind::GlobalGroupAggregate { .. } | PhysicalKind::Union => {
                self.parallelism
            }
            PhysicalKind::Sink { table, targets, bounded_input, .. } => {
                *bounded_input = bounded;
                let context = SinkContext { bounded_input: bounded, targets: targets.clone() };
                self.registry.sink_abilities(table, &context)?.parallelism.unwrap_or(input_parallelism)
            }
            _ => input_parallelism,
        };
        let strategy = sink_ship_strategy(node, node.parallelism, input_parallelism)?;
        if let PhysicalKind::Sink { input_strategy, .. } = &mut node.kind {
            *input_strategy = strategy;
        }
        Ok(bounded)
    }
}
