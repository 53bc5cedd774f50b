//! Physical planning of sinks, as Flink 2.3 plans them: the changes an INSERT's sink takes, the
//! ConstraintEnforcer (NOT NULL and length checks), the SinkMaterializer before an upsert sink
//! (and `ON CONFLICT`), and how rows reach the sink's subtasks (`table.exec.sink.keyed-shuffle`).

use weir_connectors::{SinkChangelogMode, SinkTable, TableDescriptor};
use weir_operators::{
    ConstraintEnforcerOperator, LengthCheck, LengthEnforcement, OnConflict, SinkUpsertMaterializerOperator,
    WatermarkCompactingMaterializerOperator,
};
use weir_runtime::types::{LogicalType, MAX_LENGTH};
use weir_runtime::{Field, ShipStrategy};

use super::op::sink::{Sink, SinkMaterializer};
use super::op::table_source_scan::TableSourceScan;
use super::op::values::Values;
use super::op::watermark_assigner::WatermarkAssigner;
use super::{final_rows, ChangelogMode, Physical, PhysicalNode, UNASSIGNED};
use crate::catalog::Catalog;
use crate::error::{Error, Position, Result};
use crate::options::{PlannerOptions, UpsertMaterialize};
use crate::parser::ConflictStrategy;
use crate::plan::Plan;

/// The table an INSERT writes and how.
pub struct SinkTarget<'a> {
    /// The table, resolved as a sink.
    pub table: &'a SinkTable,
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
/// What the SinkMaterializer's rules report about `ON CONFLICT` (Flink's messages).
pub fn physical_sink(plan: Plan, sink: SinkTarget<'_>, options: &PlannerOptions, at: Position) -> Result<PhysicalNode> {
    let SinkTarget { table, mode, primary_key, on_conflict, targets } = sink;
    let planner = Physical::new(&plan, options);
    // Only a retracting sink wants `-U` rows; an upsert sink (blackhole) does without them.
    let input = planner.physical(plan, mode == SinkChangelogMode::Retract, false);
    let input = final_rows(super::mini_batch::infer_modes(input), options);
    let materializer = upsert_materializer(&input, table, mode, &primary_key, on_conflict, options, at)?;
    Ok(PhysicalNode {
        parallelism: UNASSIGNED,
        fields: input.fields.clone(),
        operator: Sink {
            table: table.clone(),
            primary_key,
            keyed_shuffle: options.sink_keyed_shuffle,
            enforcer: constraint_enforcer(table, options).map(Box::new),
            materializer: materializer.map(Box::new),
            on_conflict,
            targets,
            bounded_input: false,
            input_strategy: None,
        }
        .into(),
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
    let upsert_key = input.upsert_key();
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
        _ => SinkMaterializer::Deduplicate(
            SinkUpsertMaterializerOperator::new(key, upsert, &names).with_state_ttl(options.state_ttl()),
        ),
    }))
}

/// The first scan of `node` without a watermark assigner above it, if any.
fn source_without_watermark(node: &PhysicalNode) -> Option<String> {
    if node.is::<WatermarkAssigner>() {
        None
    } else if let Some(scan) = node.op::<TableSourceScan>() {
        Some(Catalog::qualified(&scan.table.name))
    } else if node.is::<Values>() {
        Some("Values".to_string())
    } else {
        node.inputs.iter().find_map(source_without_watermark)
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
    let Some(Sink { table, primary_key, keyed_shuffle, materializer, .. }) = sink.op::<Sink>() else {
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
