//! Physical plans: the operators that run, named as Flink names them, with the exchanges
//! between them, their parallelism and their changelog modes. EXPLAIN prints these; the job
//! graph is built from them.

use std::sync::Arc;

use weir_connectors::{SinkChangelogMode, TableDescriptor};
use weir_operators::aggregate::distinct::DistinctArgs;
use weir_operators::aggregate::{Accumulator, AggregateCall, AggregateKind};
use weir_operators::expr::Expr;
use weir_operators::{
    BundleTrigger, CalcSpec, ConstraintEnforcerOperator, FinalRowsSpec, GlobalGroupAggregateSpec, GroupAggregateSpec,
    LengthCheck, LengthEnforcement, LocalGroupAggregateSpec, MiniBatchAssignerSpec, MiniBatchMode, OnConflict,
    SinkUpsertMaterializerOperator, WatermarkAssignerSpec, WatermarkCompactingMaterializerOperator,
};
use weir_runtime::types::{LogicalType, MAX_LENGTH};
use weir_runtime::Operator as _;
use weir_runtime::{Field, ShipStrategy, Value};

pub mod distribution;
mod lookup;

use crate::catalog::Catalog;
use crate::error::{Error, Position, Result};
use crate::lookup_options::LookupExecution;
use crate::options::{AggPhaseStrategy, MiniBatch, PlannerOptions, SinkKeyedShuffle, UpsertMaterialize};
use crate::parser::ConflictStrategy;
pub use crate::plan::ChangelogMode;
use crate::plan::{Node, Plan};

/// What a physical node does.
#[derive(Debug, Clone)]
pub enum PhysicalKind {
    /// Reads a table.
    TableSourceScan {
        /// The table.
        table: TableDescriptor,
        /// The physical columns read.
        projection: Vec<usize>,
        /// The primary key values of a point query.
        key: Option<Vec<Value>>,
        /// The filter conjuncts the connector took, over the table's columns.
        filter: Vec<Expr>,
    },
    /// Constant rows.
    Values {
        /// The rows.
        rows: Vec<Vec<Value>>,
    },
    /// Filter and projection.
    Calc(CalcSpec),
    /// Watermarks from an expression.
    WatermarkAssigner(WatermarkAssignerSpec),
    /// Redistributes rows among subtasks.
    Exchange {
        /// How.
        strategy: ShipStrategy,
    },
    /// A streaming group aggregate (in mini-batches when its spec has a trigger).
    GroupAggregate(GroupAggregateSpec),
    /// Injects flush markers every interval.
    MiniBatchAssigner(MiniBatchAssignerSpec),
    /// First phase of a two-phase aggregate: partial accumulators per mini-batch.
    LocalGroupAggregate(LocalGroupAggregateSpec),
    /// Second phase: merges partial accumulators into keyed state.
    GlobalGroupAggregate {
        /// The operator.
        spec: GlobalGroupAggregateSpec,
        /// The names of the local aggregate's columns, for EXPLAIN.
        local_fields: Vec<Field>,
    },
    /// UNION ALL.
    Union,
    /// Batch mode: the input's changelog folded into its final rows, emitted as inserts when
    /// the input ends.
    FinalRows(FinalRowsSpec),
    /// Joins each row with the rows a lookup in `table` finds.
    LookupJoin {
        /// The dimension table.
        table: Box<TableDescriptor>,
        /// The table's key columns looked up, in the order of `spec.keys`.
        dim_keys: Vec<usize>,
        /// The operator: join type, key expressions over the input row, conditions.
        spec: Arc<weir_operators::LookupJoinSpec>,
        /// Sync or async, ordering, timeout, capacity and retries.
        execution: LookupExecution,
    },
    /// Writes into a table.
    Sink {
        /// The table.
        table: TableDescriptor,
        /// Primary key columns of the table.
        primary_key: Vec<usize>,
        /// `table.exec.sink.keyed-shuffle`
        keyed_shuffle: SinkKeyedShuffle,
        /// The checks run on rows before the sink, when any column needs one.
        enforcer: Option<Box<ConstraintEnforcerOperator>>,
        /// The SinkMaterializer before the sink, when `table.exec.sink.upsert-materialize` asks for one.
        materializer: Option<Box<SinkMaterializer>>,
        /// The INSERT's `ON CONFLICT` clause.
        on_conflict: Option<ConflictStrategy>,
        /// The INSERT's target columns, when it names them.
        targets: Option<Vec<usize>>,
        /// Whether every source of its input ends by itself (set by the distribution).
        bounded_input: bool,
        /// How rows reach the sink's subtasks when not FORWARD (set by the distribution).
        input_strategy: Option<ShipStrategy>,
    },
}

/// The materializer before an upsert sink.
#[derive(Debug, Clone)]
pub enum SinkMaterializer {
    /// Without `ON CONFLICT` or with `DO DEDUPLICATE`: the newest row wins, rolling back when it
    /// is retracted.
    Deduplicate(SinkUpsertMaterializerOperator),
    /// `ON CONFLICT DO ERROR | DO NOTHING`: changes compacted per watermark, after a
    /// WatermarkTimestampAssigner before the key-by.
    Compacting(WatermarkCompactingMaterializerOperator),
}

impl SinkMaterializer {
    /// The operator's name.
    pub fn name(&self) -> String {
        match self {
            SinkMaterializer::Deduplicate(op) => op.name().to_string(),
            SinkMaterializer::Compacting(op) => op.name().to_string(),
        }
    }

    /// Whether rows need the watermark they passed at (a WatermarkTimestampAssigner upstream).
    pub fn needs_timestamps(&self) -> bool {
        matches!(self, SinkMaterializer::Compacting(_))
    }

    /// A factory of the operator, one instance per subtask.
    pub fn factory(&self) -> weir_runtime::graph::OperatorFactory {
        match self.clone() {
            SinkMaterializer::Deduplicate(op) => Arc::new(move |_| Box::new(op.clone())),
            SinkMaterializer::Compacting(op) => Arc::new(move |_| Box::new(op.clone())),
        }
    }
}

/// A physical operator with its inputs.
#[derive(Debug, Clone)]
pub struct PhysicalNode {
    /// What it does.
    pub kind: PhysicalKind,
    /// Its inputs.
    pub inputs: Vec<PhysicalNode>,
    /// Its output columns.
    pub fields: Vec<Field>,
    /// The row kinds it emits.
    pub changelog: ChangelogMode,
    /// How many subtasks run it: decided for the whole plan by [`distribution::Distribution`]
    /// ([`UNASSIGNED`] until then).
    pub parallelism: usize,
}

/// The parallelism of a node [`distribution::Distribution`] has not seen yet.
pub const UNASSIGNED: usize = 0;

impl PhysicalNode {
    /// A text that is equal for nodes that compute the same rows (scans of the same columns).
    pub fn reuse_digest(&self) -> Option<String> {
        match &self.kind {
            PhysicalKind::TableSourceScan { table, projection, key, filter } => {
                Some(format!("{}{projection:?}{key:?}{filter:?}", table.name))
            }
            _ => None,
        }
    }

    /// Flink's name for the node.
    pub fn name(&self) -> &'static str {
        match self.kind {
            PhysicalKind::TableSourceScan { .. } => "TableSourceScan",
            PhysicalKind::Values { .. } => "Values",
            PhysicalKind::Calc(_) => "Calc",
            PhysicalKind::WatermarkAssigner(_) => "WatermarkAssigner",
            PhysicalKind::Exchange { .. } => "Exchange",
            PhysicalKind::GroupAggregate(_) => "GroupAggregate",
            PhysicalKind::MiniBatchAssigner(_) => "MiniBatchAssigner",
            PhysicalKind::LocalGroupAggregate(_) => "LocalGroupAggregate",
            PhysicalKind::GlobalGroupAggregate { .. } => "GlobalGroupAggregate",
            PhysicalKind::Union => "Union",
            PhysicalKind::FinalRows(_) => "FinalRows",
            PhysicalKind::LookupJoin { .. } => "LookupJoin",
            PhysicalKind::Sink { .. } => "Sink",
        }
    }
}

/// The table an INSERT writes and how.
pub struct SinkTarget<'a> {
    /// The table.
    pub table: &'a TableDescriptor,
    /// The changes its sink takes.
    pub mode: SinkChangelogMode,
    /// Its primary key columns.
    pub primary_key: Vec<usize>,
    /// The INSERT's `ON CONFLICT` clause.
    pub on_conflict: Option<ConflictStrategy>,
    /// The INSERT's target columns, when it names them.
    pub targets: Option<Vec<usize>>,
}

/// Builds the physical plan of `plan` written into `sink.table`.
///
/// # Errors
/// What [`upsert_materializer`] reports about `ON CONFLICT`.
pub fn physical_sink(plan: Plan, sink: SinkTarget<'_>, options: &PlannerOptions, at: Position) -> Result<PhysicalNode> {
    let SinkTarget { table, mode, primary_key, on_conflict, targets } = sink;
    let planner = Physical::new(&plan, options);
    // Only a retracting sink wants `-U` rows; an upsert sink (blackhole) does without them.
    let input = final_rows(planner.physical(plan, mode == SinkChangelogMode::Retract, false), options);
    let materializer = upsert_materializer(&input, table, mode, &primary_key, on_conflict, options, at)?;
    Ok(PhysicalNode {
        parallelism: UNASSIGNED,
        fields: input.fields.clone(),
        kind: PhysicalKind::Sink {
            table: table.clone(),
            primary_key,
            keyed_shuffle: options.sink_keyed_shuffle,
            enforcer: constraint_enforcer(table, options).map(Box::new),
            materializer: materializer.map(Box::new),
            on_conflict,
            targets,
            bounded_input: false,
            input_strategy: None,
        },
        inputs: vec![input],
        changelog: ChangelogMode::default(),
    })
}

/// The SinkMaterializer Flink 2.3 puts before an upsert sink (one that takes `+U` without `-U`)
/// with a primary key: with `FORCE` always; with `AUTO` when no upsert key of the input lies
/// within the primary key (unless insert-only rows come with `ON CONFLICT DO DEDUPLICATE`), which
/// without an `ON CONFLICT` clause is an error while `table.exec.sink.require-on-conflict` is on.
///
/// # Errors
/// Flink's validation errors for a missing or misplaced `ON CONFLICT` clause, and `DO NOTHING` or
/// `DO ERROR` over a source without a watermark.
fn upsert_materializer(
    input: &PhysicalNode,
    table: &TableDescriptor,
    mode: SinkChangelogMode,
    primary_key: &[usize],
    on_conflict: Option<ConflictStrategy>,
    options: &PlannerOptions,
    at: Position,
) -> Result<Option<SinkMaterializer>> {
    let append_only_sink = mode == SinkChangelogMode::Append;
    let retract_sink = mode == SinkChangelogMode::Retract;
    let name = Catalog::qualified(&table.name);
    if let Some(strategy) = on_conflict {
        let not_upsert = |why: &str| {
            Error::validation(
                at,
                format!("ON CONFLICT clause is only allowed for upsert sinks. The sink '{name}' is not an upsert sink because it {why}"),
            )
        };
        if append_only_sink {
            return Err(not_upsert("only accepts INSERT (append-only) changes"));
        }
        if retract_sink {
            return Err(not_upsert("requires UPDATE_BEFORE (retract mode)"));
        }
        if strategy != ConflictStrategy::Deduplicate {
            if let Some(source) = source_without_watermark(input) {
                return Err(Error::validation(
                    at,
                    format!(
                        "ON CONFLICT DO {} resolves conflicts as watermarks pass, so every source of the query needs \
                         a watermark; '{source}' declares none.",
                        strategy.name()
                    ),
                ));
            }
        }
    }
    if primary_key.is_empty() || append_only_sink || retract_sink {
        return Ok(None);
    }
    let upsert_key = upsert_key(input);
    let wanted = match options.upsert_materialize {
        UpsertMaterialize::None => false,
        UpsertMaterialize::Force => true,
        UpsertMaterialize::Auto
            if input.changelog.is_insert_only() && on_conflict == Some(ConflictStrategy::Deduplicate) =>
        {
            false
        }
        UpsertMaterialize::Auto => {
            let differs = !upsert_key.as_ref().is_some_and(|key| key.iter().all(|k| primary_key.contains(k)));
            if differs && on_conflict.is_none() && options.require_on_conflict {
                let names = |columns: &[usize], fields: &[Field]| {
                    columns.iter().map(|&c| fields[c].name.as_str()).collect::<Vec<_>>().join(", ")
                };
                let upsert =
                    upsert_key.as_ref().map_or("none".to_string(), |k| format!("[{}]", names(k, &input.fields)));
                return Err(Error::validation(
                    at,
                    format!(
                        "The query has an upsert key that differs from the primary key of the sink table '{name}'. \
                         Primary key: [{}], upsert key: {upsert}. This can lead to non-deterministic results when \
                         multiple records with different upsert keys map to the same primary key. Please specify an \
                         ON CONFLICT clause to define how conflicts should be handled: ON CONFLICT DO DEDUPLICATE \
                         (update to the latest record, state intensive, since we need to keep the entire history), or \
                         ON CONFLICT DO ERROR (fail on conflict), or ON CONFLICT DO NOTHING (keep first record).",
                        names(primary_key, &table.schema.fields)
                    ),
                ));
            }
            differs
        }
    };
    let names: Vec<String> = primary_key.iter().map(|&k| table.schema.fields[k].name.clone()).collect();
    let (key, upsert) = (primary_key.to_vec(), upsert_key);
    Ok(wanted.then(|| match on_conflict {
        Some(ConflictStrategy::Error) => SinkMaterializer::Compacting(WatermarkCompactingMaterializerOperator::new(
            key,
            upsert,
            OnConflict::Error,
            &names,
        )),
        Some(ConflictStrategy::Nothing) => SinkMaterializer::Compacting(WatermarkCompactingMaterializerOperator::new(
            key,
            upsert,
            OnConflict::Nothing,
            &names,
        )),
        _ => SinkMaterializer::Deduplicate(SinkUpsertMaterializerOperator::new(key, upsert, &names)),
    }))
}

/// The first scan of `node` without a watermark assigner above it, if any.
fn source_without_watermark(node: &PhysicalNode) -> Option<String> {
    match &node.kind {
        PhysicalKind::WatermarkAssigner(_) => None,
        PhysicalKind::TableSourceScan { table, .. } => Some(Catalog::qualified(&table.name)),
        PhysicalKind::Values { .. } => Some("Values".to_string()),
        _ => node.inputs.iter().find_map(source_without_watermark),
    }
}

/// The columns whose values identify the row each change of `node` updates, when there are:
/// an aggregate's group keys, carried through Calcs that keep them.
fn upsert_key(node: &PhysicalNode) -> Option<Vec<usize>> {
    match &node.kind {
        PhysicalKind::GroupAggregate(spec) if !spec.keys.is_empty() => Some((0..spec.keys.len()).collect()),
        PhysicalKind::GlobalGroupAggregate { spec, .. } if spec.key_count > 0 => Some((0..spec.key_count).collect()),
        PhysicalKind::FinalRows(spec) => spec.key.clone(),
        PhysicalKind::Exchange { .. }
        | PhysicalKind::WatermarkAssigner(_)
        | PhysicalKind::MiniBatchAssigner(_)
        | PhysicalKind::LookupJoin { .. } => upsert_key(&node.inputs[0]),
        PhysicalKind::Calc(CalcSpec { projections, .. }) => upsert_key(&node.inputs[0])?
            .into_iter()
            .map(|k| projections.iter().position(|p| matches!(p, Expr::Column { index, .. } if *index == k)))
            .collect(),
        _ => None,
    }
}

/// The ConstraintEnforcer Flink puts before a sink: NOT NULL columns always, and with
/// `table.exec.sink.type-length-enforcer` set, CHAR/VARCHAR/BINARY/VARBINARY columns of a
/// declared length. `None` when no column needs a check.
fn constraint_enforcer(table: &TableDescriptor, options: &PlannerOptions) -> Option<ConstraintEnforcerOperator> {
    let fields = &table.schema.fields;
    let not_null: Vec<usize> = (0..fields.len()).filter(|&i| !fields[i].data_type.nullable).collect();
    let lengths: Vec<LengthCheck> = match options.type_length_enforcer {
        None => Vec::new(),
        Some(_) => fields
            .iter()
            .enumerate()
            .filter_map(|(index, f)| {
                let (length, fixed, binary) = match f.data_type.logical {
                    LogicalType::Char(n) => (n, true, false),
                    LogicalType::Varchar(n) if n != MAX_LENGTH => (n, false, false),
                    LogicalType::Binary(n) => (n, true, true),
                    LogicalType::Varbinary(n) if n != MAX_LENGTH => (n, false, true),
                    _ => return None,
                };
                Some(LengthCheck { index, length: length as usize, fixed, binary })
            })
            .collect(),
    };
    if not_null.is_empty() && lengths.is_empty() {
        return None;
    }
    let columns = fields.iter().map(|f| f.name.clone()).collect();
    let length_enforcement = options.type_length_enforcer.unwrap_or(LengthEnforcement::TrimPad);
    Some(ConstraintEnforcerOperator::new(columns, not_null, options.not_null_enforcer, lengths, length_enforcement))
}

/// Builds the physical plan of a query whose result is collected with every row kind.
pub fn physical_query(plan: Plan, options: &PlannerOptions) -> PhysicalNode {
    let planner = Physical::new(&plan, options);
    final_rows(planner.physical(plan, true, false), options)
}

/// In batch mode, an updating `node` behind a FinalRows that leaves only its final rows, as
/// Flink's batch operators produce them; else `node`.
fn final_rows(node: PhysicalNode, options: &PlannerOptions) -> PhysicalNode {
    if !options.batch || node.changelog.is_insert_only() {
        return node;
    }
    PhysicalNode {
        parallelism: UNASSIGNED,
        kind: PhysicalKind::FinalRows(FinalRowsSpec { arity: node.fields.len(), key: upsert_key(&node) }),
        fields: node.fields.clone(),
        changelog: ChangelogMode::INSERT_ONLY,
        inputs: vec![node],
    }
}

fn has_aggregate(plan: &Plan) -> bool {
    match &plan.node {
        Node::Aggregate { .. } => true,
        Node::Calc { input, .. } | Node::WatermarkAssigner { input, .. } | Node::LookupJoin { input, .. } => {
            has_aggregate(input)
        }
        Node::Union { inputs } => inputs.iter().any(has_aggregate),
        _ => false,
    }
}

/// The name Flink gives a local aggregate's accumulator column.
/// Whether `call` can be split into a local and a global phase: a mergeable call, or a DISTINCT
/// one without FILTER whose function is mergeable (the phases merge its distinct values, as
/// Flink's `DISTINCT(x) AS distinct$0` does).
fn two_phase_call(call: &AggregateCall, retracting: bool) -> bool {
    if call.distinct {
        let plain = AggregateCall { distinct: false, ..call.clone() };
        return call.filter.is_none() && Accumulator::is_mergeable(&plain, retracting);
    }
    Accumulator::is_mergeable(call, retracting)
}

fn accumulator_name(kind: &AggregateKind, index: usize, part: usize) -> String {
    let base = match (kind, part) {
        (AggregateKind::CountStar, _) => "count1",
        (AggregateKind::Count, _) | (_, 1) => "count",
        (AggregateKind::Sum | AggregateKind::Sum0 | AggregateKind::Avg, _) => "sum",
        (AggregateKind::Min, _) => "min",
        (AggregateKind::Max, _) => "max",
        _ => "acc",
    };
    format!("{base}${index}")
}

/// The bundle trigger of mini-batch settings.
fn trigger(mini_batch: MiniBatch) -> BundleTrigger {
    BundleTrigger { size: mini_batch.size, memory_budget: mini_batch.memory_budget }
}

/// Physical planning with the session's options.
struct Physical<'a> {
    options: &'a PlannerOptions,
    /// Mini-batch applies: it is on and the plan is not stateless (Flink skips stateless plans).
    mini_batch: Option<MiniBatch>,
}

impl<'a> Physical<'a> {
    fn new(plan: &Plan, options: &'a PlannerOptions) -> Self {
        let mini_batch = options.mini_batch.filter(|_| has_aggregate(plan));
        Physical { options, mini_batch }
    }

    /// A MiniBatchAssigner above `node` when mini-batch applies.
    fn with_assigner(&self, node: PhysicalNode) -> PhysicalNode {
        match self.mini_batch {
            Some(m) => PhysicalNode {
                parallelism: UNASSIGNED,
                kind: PhysicalKind::MiniBatchAssigner(MiniBatchAssignerSpec {
                    interval_millis: m.interval_millis,
                    mode: MiniBatchMode::ProcTime,
                }),
                fields: node.fields.clone(),
                changelog: node.changelog,
                inputs: vec![node],
            },
            None => node,
        }
    }

    /// The physical plan of `plan`; `update_before` says whether the consumer needs `-U`
    /// rows, `under_watermark` whether the parent is a watermark assigner (which takes the
    /// mini-batch assigner above it instead).
    fn physical(&self, plan: Plan, update_before: bool, under_watermark: bool) -> PhysicalNode {
        let Plan { node, fields } = plan;
        let leaf = |kind| PhysicalNode {
            parallelism: UNASSIGNED,
            kind,
            inputs: Vec::new(),
            fields: fields.clone(),
            changelog: ChangelogMode::INSERT_ONLY,
        };
        match node {
            Node::Scan { table, projection, changelog, key, filter } => {
                let kind = PhysicalKind::TableSourceScan { table, projection, key, filter };
                let scan = PhysicalNode { changelog, ..leaf(kind) };
                if under_watermark {
                    scan
                } else {
                    self.with_assigner(scan)
                }
            }
            Node::Values { rows } => leaf(PhysicalKind::Values { rows }),
            Node::Calc { input, projections, condition } => {
                let input = self.physical(*input, update_before, false);
                let changelog = input.changelog;
                PhysicalNode {
                    parallelism: UNASSIGNED,
                    kind: PhysicalKind::Calc(CalcSpec { projections, condition }),
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
                    kind: PhysicalKind::WatermarkAssigner(WatermarkAssignerSpec { rowtime, watermark }),
                    inputs: vec![input],
                    fields,
                    changelog,
                };
                self.with_assigner(assigner)
            }
            Node::Aggregate { input, keys, calls } => self.aggregate(*input, keys, calls, fields, update_before),
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
            Node::Union { inputs } => {
                let inputs: Vec<PhysicalNode> =
                    inputs.into_iter().map(|i| self.physical(i, update_before, false)).collect();
                let changelog = inputs.iter().fold(ChangelogMode::default(), |m, i| m.union(i.changelog));
                PhysicalNode { kind: PhysicalKind::Union, inputs, fields, changelog, parallelism: UNASSIGNED }
            }
        }
    }

    fn aggregate(
        &self,
        input: Plan,
        keys: Vec<usize>,
        calls: Vec<AggregateCall>,
        fields: Vec<Field>,
        update_before: bool,
    ) -> PhysicalNode {
        // An aggregate retracts what it took back, so it needs its input's `-U` rows.
        let input = self.physical(input, true, false);
        let retracting = !input.changelog.is_insert_only();
        let changelog = ChangelogMode { insert: true, update_before, update_after: true, delete: retracting };
        let ttl_millis = self.options.state_ttl_millis;
        let strategy = if keys.is_empty() { ShipStrategy::Single } else { ShipStrategy::Hash(keys.clone()) };
        let exchange = |input: PhysicalNode, strategy: ShipStrategy| PhysicalNode {
            parallelism: UNASSIGNED,
            kind: PhysicalKind::Exchange { strategy },
            fields: input.fields.clone(),
            changelog: input.changelog,
            inputs: vec![input],
        };
        // Input already hashed on these keys (an aggregate on the same keys below) needs no
        // exchange and, as in Flink, no local phase.
        let hashed = !keys.is_empty() && hashed_on(&input, &keys);
        let exchange = |input: PhysicalNode, strategy: ShipStrategy| {
            if hashed {
                input
            } else {
                exchange(input, strategy)
            }
        };
        let two_phase = self.mini_batch.is_some()
            && !hashed
            && self.options.agg_phase_strategy != AggPhaseStrategy::OnePhase
            && calls.iter().all(|c| two_phase_call(c, retracting));
        match self.mini_batch {
            Some(mini_batch) if two_phase => {
                let emit_unchanged = ttl_millis > 0 && self.options.output_identical;
                let mut local_fields: Vec<Field> = keys.iter().map(|&k| input.fields[k].clone()).collect();
                let mut index = 0;
                for call in &calls {
                    for part in 0..Accumulator::partial_width(call) {
                        let ty = if part == 1 { weir_runtime::DataType::bigint() } else { call.result_type.clone() };
                        local_fields.push(Field::new(accumulator_name(&call.kind, index, part), ty));
                        index += 1;
                    }
                }
                // Each argument of DISTINCT calls: its values in the bundle, with multiplicities.
                let distinct = DistinctArgs::of(&calls);
                for (i, &column) in distinct.columns().iter().enumerate() {
                    let value = input.fields[column].data_type.clone();
                    let counts = weir_runtime::DataType::bigint().not_null();
                    let map = weir_runtime::DataType::new(LogicalType::Map(Box::new(value), Box::new(counts)));
                    local_fields.push(Field::new(format!("distinct${i}"), map));
                }
                local_fields.push(Field::new("$rows", weir_runtime::DataType::bigint()));
                let arg_types = calls.iter().map(|c| c.arg.map(|a| input.fields[a].data_type.clone())).collect();
                let key_count = keys.len();
                let input_types = input.fields.iter().map(|f| f.data_type.clone()).collect();
                let trigger = trigger(mini_batch);
                let spec = LocalGroupAggregateSpec { keys, calls: calls.clone(), input_types, retracting, trigger };
                let local = PhysicalNode {
                    parallelism: UNASSIGNED,
                    kind: PhysicalKind::LocalGroupAggregate(spec),
                    fields: local_fields.clone(),
                    changelog: ChangelogMode::INSERT_ONLY,
                    inputs: vec![input],
                };
                let strategy = match strategy {
                    ShipStrategy::Hash(_) => ShipStrategy::Hash((0..key_count).collect()),
                    other => other,
                };
                PhysicalNode {
                    parallelism: UNASSIGNED,
                    kind: PhysicalKind::GlobalGroupAggregate {
                        spec: GlobalGroupAggregateSpec {
                            key_count,
                            calls,
                            arg_types,
                            update_before,
                            trigger,
                            ttl_millis,
                            emit_unchanged,
                        },
                        local_fields,
                    },
                    inputs: vec![exchange(local, strategy)],
                    fields,
                    changelog,
                }
            }
            mini_batch => {
                let emit_unchanged = ttl_millis > 0 && (mini_batch.is_none() || self.options.output_identical);
                let input_types = input.fields.iter().map(|f| f.data_type.clone()).collect();
                PhysicalNode {
                    parallelism: UNASSIGNED,
                    kind: PhysicalKind::GroupAggregate(GroupAggregateSpec {
                        keys,
                        calls,
                        input_types,
                        update_before,
                        retracting,
                        mini_batch: mini_batch.map(trigger),
                        ttl_millis,
                        emit_unchanged,
                    }),
                    inputs: vec![exchange(input, strategy)],
                    fields,
                    changelog,
                }
            }
        }
    }
}

/// Whether the rows of `node` are already partitioned by a hash of its columns `keys` (in that
/// order): true above an exchange or a group aggregate on exactly those columns, through Calcs
/// that pass the columns on unchanged.
fn hashed_on(node: &PhysicalNode, keys: &[usize]) -> bool {
    match &node.kind {
        PhysicalKind::Calc(CalcSpec { projections, .. }) => {
            let below: Option<Vec<usize>> = keys
                .iter()
                .map(|&k| match projections.get(k) {
                    Some(Expr::Column { index, .. }) => Some(*index),
                    _ => None,
                })
                .collect();
            below.is_some_and(|below| hashed_on(&node.inputs[0], &below))
        }
        PhysicalKind::Exchange { strategy: ShipStrategy::Hash(hash) } => hash == keys,
        PhysicalKind::GroupAggregate(spec) => keys.iter().copied().eq(0..spec.keys.len()) && !spec.keys.is_empty(),
        PhysicalKind::GlobalGroupAggregate { spec, .. } => {
            spec.key_count > 0 && keys.iter().copied().eq(0..spec.key_count)
        }
        _ => false,
    }
}

/// How rows from an input at `input_parallelism` reach a sink at `sink_parallelism`, as Flink
/// decides it: hashed on the primary key when `table.exec.sink.keyed-shuffle` asks for it, else
/// FORWARD between equal parallelisms and REBALANCE otherwise.
///
/// # Errors
/// Flink's TableException for updating input into a sink of another parallelism without a
/// primary key (its rows could not be kept in order).
pub fn sink_ship_strategy(
    sink: &PhysicalNode,
    sink_parallelism: usize,
    input_parallelism: usize,
) -> Result<Option<ShipStrategy>> {
    let PhysicalKind::Sink { table, primary_key, keyed_shuffle, materializer, .. } = &sink.kind else {
        return Ok(None);
    };
    let insert_only = sink.inputs.first().is_none_or(|i| i.changelog.is_insert_only());
    if !insert_only && sink_parallelism != input_parallelism && primary_key.is_empty() {
        return Err(Error::Table(format!(
            "The sink for table '{}' has a configured parallelism of {sink_parallelism}, while the input parallelism \
             is {input_parallelism}. Since the configured parallelism is different from the input's parallelism and \
             the changelog mode is not insert-only, a primary key is required but could not be found.",
            Catalog::qualified(&table.name)
        )));
    }
    // A materializer keeps state per key: its rows are always hashed on the key.
    let hashed =
        materializer.is_some() || keyed_shuffle.hashes(!primary_key.is_empty(), sink_parallelism, input_parallelism);
    Ok(hashed.then(|| ShipStrategy::Hash(primary_key.clone())))
}
