//! Physical plans: the operators that run, named as Flink names them, with the exchanges
//! between them, their parallelism and their changelog modes. EXPLAIN prints these; the job
//! graph is built from them. Each node holds its [`op::Operator`], one of the files of `op/`
//! (the operator's spec, `weir_operators::*Spec`, its parameters written once, inside it).
//!
//! This file plans scans, Calcs, watermark and mini-batch assigners and unions; [`aggregate`]
//! group aggregates (one or two phases), `window` window aggregates (one or two phases),
//! `rank` window Top-N and window deduplication,
//! `lookup` lookup joins, [`sink`] sinks (enforcer,
//! materializer, keyed shuffle), and [`distribution`] decides every node's parallelism.

use weir_connectors::ScanChanges;
use weir_operators::ranking::{RankRange, RankType};
use weir_operators::{
    CalcSpec, FinalRowsSpec, MiniBatchAssignerSpec, MiniBatchMode, WatermarkAssignerSpec, WindowTableFunctionSpec,
};
use weir_runtime::ShipStrategy;

pub mod aggregate;
pub mod distribution;
mod join;
pub mod lineage;
mod lookup;
mod mini_batch;
pub mod op;
mod over;
mod rank;
pub mod sink;
pub mod state;
mod window;

pub use op::rank::RankShape;
pub use op::sink::{SinkMaterializer, SinkStep};
pub use op::{Operator, PhysicalNode, UNASSIGNED};
pub use sink::{physical_sink, sink_ship_strategy, SinkTarget};

use op::exchange::Exchange;
use op::table_source_scan::TableSourceScan;

use crate::options::{MiniBatch, PlannerOptions};
pub use crate::plan::ChangelogMode;
use crate::plan::{Node, Plan};

/// `input` sent on hashed on `keys`, or all to one subtask without keys.
fn keyed_exchange(input: PhysicalNode, keys: &[usize]) -> PhysicalNode {
    let strategy = if keys.is_empty() { ShipStrategy::Single } else { ShipStrategy::Hash(keys.to_vec()) };
    let (fields, changelog) = (input.fields.clone(), input.changelog);
    PhysicalNode::new(Exchange { strategy }, vec![input], fields, changelog)
}

/// Builds the physical plan of a query whose result is collected with every row kind.
pub fn physical_query(plan: Plan, options: &PlannerOptions) -> PhysicalNode {
    let planner = Physical::new(&plan, options);
    final_rows(mini_batch::infer_modes(planner.physical(plan, true, false)), options)
}

/// The physical plan of a query as EXPLAIN shows it: as Flink plans a query's root, without
/// `-U` rows when its rows have an upsert key (its changes are then upserts on that key).
/// Running the query still collects every row kind ([`physical_query`]), as Flink's collect
/// sink does.
pub fn physical_explained_query(plan: Plan, options: &PlannerOptions) -> PhysicalNode {
    let planner = Physical::new(&plan, options);
    let node = planner.physical(plan.clone(), true, false);
    let node = if node.upsert_key().is_some() { planner.physical(plan, false, false) } else { node };
    final_rows(mini_batch::infer_modes(node), options)
}

/// In batch mode, an updating `node` behind a FinalRows that leaves only its final rows, as
/// Flink's batch operators produce them; else `node`.
fn final_rows(node: PhysicalNode, options: &PlannerOptions) -> PhysicalNode {
    if !options.batch || node.changelog.is_insert_only() {
        return node;
    }
    // The final rows of an `ORDER BY … LIMIT` leave in its order, as Flink's batch SortLimit
    // emits them. When a Calc above drops a column it sorts by, the rows are made final below
    // the Calc, which keeps their order.
    let order = match sort_limit_order(&node) {
        Some(order) => order,
        None if node.op::<op::calc::Calc>().is_some_and(|calc| calc.0.condition.is_none()) => {
            let Some(order) = sort_limit_order(&node.inputs[0]) else { return final_rows_of(node, Vec::new()) };
            let mut calc = node;
            let below = calc.inputs.remove(0);
            calc.inputs.push(final_rows_of(below, order));
            calc.changelog = ChangelogMode::INSERT_ONLY;
            return calc;
        }
        None => Vec::new(),
    };
    final_rows_of(node, order)
}

/// `node` behind a FinalRows leaving its final rows in `order`.
fn final_rows_of(node: PhysicalNode, order: Vec<weir_operators::ranking::SortKey>) -> PhysicalNode {
    PhysicalNode {
        parallelism: UNASSIGNED,
        operator: op::final_rows::FinalRows(FinalRowsSpec { arity: node.fields.len(), key: node.upsert_key(), order })
            .into(),
        fields: node.fields.clone(),
        changelog: ChangelogMode::INSERT_ONLY,
        inputs: vec![node],
    }
}

/// The order of the `ORDER BY … LIMIT` whose rows `node` emits (through Calcs that only pick
/// columns), in `node`'s columns.
fn sort_limit_order(node: &PhysicalNode) -> Option<Vec<weir_operators::ranking::SortKey>> {
    if let Some(rank) = node.op::<op::rank::Rank>() {
        let sort_limit = matches!(rank.shape, RankShape::SortLimit { .. }) && rank.spec.partition.is_empty();
        return sort_limit.then(|| rank.spec.order.clone());
    }
    // Through Calcs that only pick columns.
    let calc = node.op::<op::calc::Calc>().filter(|calc| calc.0.condition.is_none())?;
    let below = sort_limit_order(&node.inputs[0])?;
    below
        .into_iter()
        .map(|key| Some(weir_operators::ranking::SortKey { column: calc.output_of(key.column)?, ..key }))
        .collect()
}

/// Whether a streaming plan gets MiniBatchAssigners when mini-batch is on: as Flink 2.3 plans
/// them, one with a stateful operator or an event-time attribute (a watermark assigner) does; a
/// plan of projections, filters, unions and lookups over sources without watermarks does not.
fn batches_apply(plan: &Plan) -> bool {
    match &plan.node {
        Node::Calc { input, .. }
        | Node::LookupJoin { input, .. }
        | Node::Correlate { input, .. }
        | Node::Expand { input, .. } => batches_apply(input),
        Node::Union { inputs } => inputs.iter().any(batches_apply),
        Node::Scan { .. } | Node::Values { .. } => false,
        Node::WatermarkAssigner { .. }
        | Node::Aggregate { .. }
        | Node::Deduplicate { .. }
        | Node::WindowTableFunction { .. }
        | Node::Rank { .. }
        | Node::Sort { .. }
        | Node::OverAggregate { .. }
        | Node::WindowAggregate { .. }
        | Node::WindowRank { .. }
        | Node::WindowDeduplicate { .. }
        | Node::Join { .. } => true,
    }
}

fn has_aggregate(plan: &Plan) -> bool {
    match &plan.node {
        Node::Aggregate { .. } | Node::Deduplicate { .. } => true,
        Node::Calc { input, .. }
        | Node::WatermarkAssigner { input, .. }
        | Node::LookupJoin { input, .. }
        | Node::WindowTableFunction { input, .. }
        | Node::Correlate { input, .. }
        | Node::Expand { input, .. }
        | Node::Rank { input, .. }
        | Node::Sort { input, .. }
        | Node::OverAggregate { input, .. } => has_aggregate(input),
        Node::Union { inputs } => inputs.iter().any(has_aggregate),
        Node::Scan { .. }
        | Node::Values { .. }
        | Node::WindowAggregate { .. }
        | Node::WindowRank { .. }
        | Node::WindowDeduplicate { .. }
        | Node::Join { .. } => false,
    }
}

/// Physical planning with the session's options.
struct Physical<'a> {
    options: &'a PlannerOptions,
    /// Mini-batch applies to aggregates and deduplications: it is on and the plan has one.
    mini_batch: Option<MiniBatch>,
    /// Mini-batch assigners go above sources: it is on and the job streams (in batch mode only
    /// when the plan aggregates).
    assigners: Option<MiniBatch>,
}

impl<'a> Physical<'a> {
    fn new(plan: &Plan, options: &'a PlannerOptions) -> Self {
        let mini_batch = options.mini_batch.filter(|_| has_aggregate(plan));
        let assigners = if options.batch { mini_batch } else { options.mini_batch.filter(|_| batches_apply(plan)) };
        Physical { options, mini_batch, assigners }
    }

    /// A MiniBatchAssigner above `node` when mini-batch is on (its mode is decided for the
    /// whole plan afterwards, by [`mini_batch::infer_modes`]).
    fn with_assigner(&self, node: PhysicalNode) -> PhysicalNode {
        match self.assigners {
            Some(m) => PhysicalNode {
                parallelism: UNASSIGNED,
                operator: op::mini_batch_assigner::MiniBatchAssigner(MiniBatchAssignerSpec {
                    interval_millis: m.interval_millis,
                    mode: MiniBatchMode::ProcTime,
                })
                .into(),
                fields: node.fields.clone(),
                changelog: node.changelog,
                inputs: vec![node],
            },
            None => node,
        }
    }

    /// An upsert `scan` (`[UA,D]`, as Flink's upsert sources emit) made a full changelog by a
    /// `ChangelogNormalize` keyed on the table's primary key, after a hash exchange on it, as
    /// Flink plans every upsert source.
    fn normalized(&self, scan: PhysicalNode, key: Vec<usize>, update_before: bool) -> PhysicalNode {
        let upserts = ChangelogMode { insert: false, update_before: false, update_after: true, delete: true };
        let scan = PhysicalNode { changelog: upserts, ..scan };
        let spec = weir_operators::ChangelogNormalizeSpec {
            key: key.clone(),
            input_arity: scan.fields.len(),
            update_before,
            state_ttl: self.options.state_ttl(),
        };
        let fields = scan.fields.clone();
        let exchanged = keyed_exchange(scan, &key);
        PhysicalNode {
            parallelism: UNASSIGNED,
            operator: op::changelog_normalize::ChangelogNormalize(spec).into(),
            inputs: vec![exchanged],
            fields,
            changelog: ChangelogMode { insert: true, update_before, update_after: true, delete: true },
        }
    }

    /// The physical plan of `plan`; `update_before` says whether the consumer needs `-U`
    /// rows, `under_watermark` whether the parent is a watermark assigner (which takes the
    /// mini-batch assigner above it instead).
    fn physical(&self, plan: Plan, update_before: bool, under_watermark: bool) -> PhysicalNode {
        let Plan { node, fields } = plan;
        let leaf =
            |operator: Operator| PhysicalNode::new(operator, Vec::new(), fields.clone(), ChangelogMode::INSERT_ONLY);
        match node {
            Node::Scan { table, projection, changelog, key, filter, projected } => {
                let scan_context = op::table_source_scan::scan_context(self.options.batch, key.clone());
                let upserts = table.abilities(&scan_context).changes == ScanChanges::Upserts;
                let primary_key: Vec<usize> =
                    table.primary_key.iter().filter_map(|k| projection.iter().position(|p| p == k)).collect();
                let kind = Operator::from(TableSourceScan { table, projection, key, filter, projected });
                let scan = match upserts {
                    true => self.normalized(leaf(kind), primary_key, update_before),
                    false => PhysicalNode { changelog, ..leaf(kind) },
                };
                if under_watermark {
                    scan
                } else {
                    self.with_assigner(scan)
                }
            }
            Node::Values { rows } => leaf(op::values::Values { rows }.into()),
            Node::Calc { input, projections, condition } => {
                // A Calc between a watermark assigner and its scan (a statement's projection of a
                // shared scan) leaves the mini-batch assigner above the watermark assigner.
                let input = self.physical(*input, update_before, under_watermark);
                let changelog = input.changelog;
                PhysicalNode {
                    parallelism: UNASSIGNED,
                    operator: op::calc::Calc(CalcSpec { projections, condition }).into(),
                    inputs: vec![input],
                    fields,
                    changelog,
                }
            }
            Node::WatermarkAssigner { input, rowtime, watermark } => {
                let input = self.physical(*input, update_before, true);
                let changelog = input.changelog;
                let assigner = PhysicalNode {
                    parallelism: UNASSIGNED,
                    operator: op::watermark_assigner::WatermarkAssigner(WatermarkAssignerSpec {
                        rowtime,
                        watermark,
                        interval_millis: self.options.watermark_interval_millis,
                    })
                    .into(),
                    inputs: vec![input],
                    fields,
                    changelog,
                };
                self.with_assigner(assigner)
            }
            Node::Aggregate { input, keys, calls } => self.aggregate(*input, keys, calls, fields, update_before),
            Node::WindowTableFunction { input, time_col, window, partition, .. }
                if matches!(window.kind, weir_operators::WindowKind::Session { .. }) =>
            {
                let input = self.physical(*input, update_before, false);
                let weir_operators::WindowKind::Session { gap } = window.kind else { unreachable!("a SESSION window") };
                let input_arity = input.fields.len();
                let spec = weir_operators::SessionTableFunctionSpec {
                    partition,
                    time_col,
                    gap,
                    zone: window.zone,
                    input_arity,
                };
                let partition = spec.partition.clone();
                let op = op::session_window_table_function::SessionWindowTableFunction(spec);
                self.keyed_by_partition(input, &partition, op.into(), fields)
            }
            Node::WindowTableFunction { input, time_col, window, .. } => {
                let input = self.physical(*input, update_before, false);
                let ltz = matches!(
                    input.fields[time_col].data_type.logical,
                    weir_runtime::types::LogicalType::TimestampLtz(_)
                );
                let changelog = input.changelog;
                PhysicalNode {
                    parallelism: UNASSIGNED,
                    operator: op::window_table_function::WindowTableFunction(WindowTableFunctionSpec {
                        time_col,
                        window,
                        ltz,
                    })
                    .into(),
                    inputs: vec![input],
                    fields,
                    changelog,
                }
            }
            Node::WindowAggregate { input, keys, calls, window, time_col, window_time, group_window } => {
                let parts = window::WindowAggregateParts {
                    input: *input,
                    keys,
                    calls,
                    window,
                    time_col,
                    window_time,
                    group_window,
                };
                self.window_aggregate(parts, fields)
            }
            Node::WindowRank { input, partition, order, rank_type, range, output_rank, window } => {
                let input = self.physical(*input, true, false);
                let spec = weir_operators::WindowRankSpec {
                    input_arity: input.fields.len(),
                    partition,
                    order,
                    range,
                    output_rank,
                    window,
                };
                let partition = spec.partition.clone();
                let op = op::window_rank::WindowRank { spec, rank_type };
                self.keyed_by_partition(input, &partition, op.into(), fields)
            }
            Node::WindowDeduplicate { input, partition, time_col, keep_last, window } => {
                let input = self.physical(*input, true, false);
                let input_arity = input.fields.len();
                let spec =
                    weir_operators::WindowDeduplicateSpec { partition, time_col, keep_last, window, input_arity };
                let partition = spec.partition.clone();
                let op = op::window_deduplicate::WindowDeduplicate(spec);
                self.keyed_by_partition(input, &partition, op.into(), fields)
            }
            Node::Rank { input, partition, order, rank_type, range: Some(range), output_rank } => {
                let parts = rank::RankParts {
                    input: *input,
                    partition,
                    order,
                    rank_type,
                    range,
                    output_rank,
                    shape: RankShape::Rank,
                };
                self.rank(parts, fields, update_before)
            }
            Node::Rank { range: None, .. } => unreachable!("the rank rule bounds every rank or refuses it"),
            // In batch mode a sort is Flink's batch `Sort`: the whole input, sorted, at its end.
            Node::Sort { input, order, offset: _, fetch: None } if self.options.batch => {
                let input = self.physical(*input, true, false);
                let key = input.upsert_key();
                let spec = FinalRowsSpec { arity: fields.len(), key, order };
                PhysicalNode {
                    parallelism: UNASSIGNED,
                    operator: op::final_rows::FinalRows(spec).into(),
                    inputs: vec![keyed_exchange(input, &[])],
                    fields,
                    changelog: ChangelogMode::INSERT_ONLY,
                }
            }
            Node::Sort { input, order, offset: _, fetch: None } => self.temporal_sort(*input, order, fields),
            Node::Sort { input, order, offset, fetch: Some(fetch) } => {
                let shape = if order.is_empty() {
                    RankShape::Limit { offset, fetch }
                } else {
                    RankShape::SortLimit { offset, fetch }
                };
                let range = RankRange { start: offset + 1, end: offset + fetch };
                let parts = rank::RankParts {
                    input: *input,
                    partition: Vec::new(),
                    order,
                    rank_type: RankType::RowNumber,
                    range,
                    output_rank: false,
                    shape,
                };
                self.rank(parts, fields, update_before)
            }
            Node::Deduplicate { input, partition, time_col, keep_last } => {
                self.deduplicate(*input, partition, (time_col, keep_last), fields, update_before)
            }
            Node::OverAggregate { input, partition, time_col, frame, calls } => {
                self.over_aggregate(*input, partition, (time_col, frame), calls, fields)
            }
            Node::Join { left, right, join_type, condition, strategy, names } => {
                let parts = join::JoinParts { left: *left, right: *right, join_type, condition, strategy, names };
                self.join(parts, fields)
            }
            Node::LookupJoin { input, table, alias, join_type, keys, dim_filter, join_condition } => {
                let parts = lookup::LookupJoinParts {
                    input: *input,
                    table,
                    alias,
                    join_type,
                    keys,
                    dim_filter,
                    join_condition,
                };
                self.lookup_join(parts, fields, update_before)
            }
            Node::Correlate { input, table, left } => {
                let input = self.physical(*input, update_before, false);
                let changelog = input.changelog;
                let spec = weir_operators::CorrelateSpec { table, left };
                PhysicalNode {
                    parallelism: UNASSIGNED,
                    operator: op::correlate::Correlate(spec).into(),
                    inputs: vec![input],
                    fields,
                    changelog,
                }
            }
            Node::Expand { input, projects } => {
                let input = self.physical(*input, update_before, false);
                let changelog = input.changelog;
                let expand = op::expand::Expand(weir_operators::ExpandSpec { projects });
                PhysicalNode::new(expand, vec![input], fields, changelog)
            }
            Node::Union { inputs } => {
                let inputs: Vec<PhysicalNode> =
                    inputs.into_iter().map(|i| self.physical(i, update_before, false)).collect();
                let changelog = inputs.iter().fold(ChangelogMode::default(), |m, i| m.union(i.changelog));
                PhysicalNode::new(op::union::Union, inputs, fields, changelog)
            }
        }
    }
}
