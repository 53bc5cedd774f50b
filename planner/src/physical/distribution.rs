//! Where a physical plan runs: the parallelism of every node and how rows reach each sink,
//! decided once, here, from the session's default parallelism and what the resolved tables offer
//! ([`SourceTable::abilities`], [`SinkTable::abilities`]). The job
//! graph and EXPLAIN's JSON plan both read the result; neither decides again.
//!
//! | node | parallelism |
//! |---|---|
//! | TableSourceScan | the connector's (`scan.parallelism`, 1 for a managed table), else the default |
//! | Values | 1 |
//! | GroupAggregate, GlobalGroupAggregate, WindowAggregate, GlobalWindowAggregate | 1 without grouping keys, else the default |
//! | Rank, SortLimit, Limit, Deduplicate, OverAggregate, WindowRank, WindowDeduplicate, a SESSION WindowTableFunction | 1 without partition columns, else the default |
//! | TemporalSort | 1 |
//! | Join, IntervalJoin, WindowJoin, TemporalJoin | 1 without join keys, else the default |
//! | Union | the default |
//! | Sink | the connector's (`sink.parallelism`), else its input's |
//! | every other node | its input's (it is chained to it) |

use weir_connectors::SinkContext;
#[cfg(doc)]
use weir_connectors::{SinkTable, SourceTable};

use super::op::sink::Sink;
use super::op::table_source_scan::{scan_context, TableSourceScan};
use super::op::Runs;
use super::{sink_ship_strategy, PhysicalNode};
use crate::error::{Error, Position, Result};

/// Decides parallelism and sink exchanges for the plans of one job.
pub struct Distribution {
    /// `parallelism.default`
    pub parallelism: usize,
    /// The job runs in batch mode: every scan must end by itself.
    pub batch: bool,
}

impl Distribution {
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
        node.parallelism = match node.operator.runs() {
            Runs::ChainedToInput => input_parallelism,
            Runs::Keyed { keys: 0 } | Runs::OnOneSubtask => 1,
            Runs::Keyed { .. } | Runs::AtDefaultParallelism => self.parallelism,
            Runs::AsItsConnectorOffers => self.offered(node, input_parallelism, &mut bounded)?,
        };
        if let Some(sink) = node.op::<Sink>() {
            let input_strategy = sink_ship_strategy(node, node.parallelism, input_parallelism)?;
            node.operator = Sink { bounded_input: bounded, input_strategy, ..sink.clone() }.into();
        }
        Ok(bounded)
    }

    /// The parallelism the connector of a scan or sink offers, else the default (a scan) or its
    /// input's (a sink); a scan says in `bounded` whether it ends by itself.
    fn offered(&self, node: &PhysicalNode, input_parallelism: usize, bounded: &mut bool) -> Result<usize> {
        if let Some(scan) = node.op::<TableSourceScan>() {
            let offered = scan.table.abilities(&scan_context(self.batch, scan.key.clone()));
            if self.batch && !offered.bounded {
                return Err(Error::validation(
                    Position::default(),
                    format!(
                        "Querying an unbounded table '{}' in batch mode is not allowed. The table source is unbounded.",
                        scan.table.qualified_name()
                    ),
                ));
            }
            *bounded = offered.bounded;
            return Ok(offered.parallelism.unwrap_or(self.parallelism));
        }
        let Some(sink) = node.op::<Sink>() else {
            return Err(Error::Table(format!(
                "{} runs as its connector offers, but reads or writes no table",
                node.name()
            )));
        };
        let context = SinkContext { bounded_input: *bounded, targets: sink.targets.clone() };
        Ok(sink.table.abilities(&context)?.parallelism.unwrap_or(input_parallelism))
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write;

    use expect_test::expect;

    use crate::physical::op::exchange::Exchange;
    use crate::physical::op::sink::Sink;
    use crate::physical::PhysicalNode;
    use crate::rules::testing::Fixture;

    /// Each node's name and parallelism, and how rows reach a sink.
    fn distributed(plans: &[PhysicalNode]) -> String {
        fn walk(node: &PhysicalNode, depth: usize, out: &mut String) {
            let _ = write!(out, "{}{} p={}", "  ".repeat(depth), node.name(), node.parallelism);
            if let Some(Exchange { strategy }) = node.op::<Exchange>() {
                let _ = write!(out, " {}", strategy.flink_name());
            }
            if let Some(Sink { input_strategy, bounded_input, .. }) = node.op::<Sink>() {
                let strategy = input_strategy.as_ref().map_or("FORWARD or REBALANCE", |s| s.flink_name());
                let _ = write!(out, " input={strategy} bounded_input={bounded_input}");
            }
            out.push('\n');
            node.inputs.iter().for_each(|i| walk(i, depth + 1, out));
        }
        let mut out = String::new();
        plans.iter().for_each(|p| walk(p, 0, &mut out));
        out
    }

    const TABLES: &str = "CREATE TABLE orders (id BIGINT, k STRING, n INT) WITH ('connector' = 'datagen', 'scan.parallelism' = '3', 'number-of-rows' = '10');
        CREATE TABLE totals (k STRING, c BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'print', 'sink.parallelism' = '4');
        CREATE TABLE everything (c BIGINT) WITH ('connector' = 'print');";

    #[test]
    fn parallelism_comes_from_connectors_the_default_and_the_keys() {
        let mut f = Fixture::new(TABLES);
        f.set("parallelism.default", "2");
        let plans = f.physical(
            "EXECUTE STATEMENT SET BEGIN
             INSERT INTO totals SELECT k, COUNT(*) FROM orders GROUP BY k;
             INSERT INTO everything SELECT COUNT(*) FROM orders;
             END;",
        );
        expect![[r#"
            Sink p=4 input=HASH bounded_input=true
              GroupAggregate p=2
                Exchange p=3 HASH
                  Calc p=3
                    TableSourceScan p=3
            Sink p=1 input=FORWARD or REBALANCE bounded_input=true
              GroupAggregate p=1
                Exchange p=3 GLOBAL
                  Calc p=3
                    TableSourceScan p=3
        "#]]
        .assert_eq(&distributed(&plans));
    }
}
