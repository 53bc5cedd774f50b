//! Merge engines: how a write for a primary key combines with the row stored for it, and which
//! changes that emits — Fluss's `RowMerger`s and `KvTablet` rules.
//!
//! | `table.merge-engine` | a write for a stored key | changelog |
//! |---|---|---|
//! | (unset) | the new row replaces it | `-U old, +U new` |
//! | `first_row` | the stored row stays | nothing |
//! | `versioned` | the new row wins when its version (`table.merge-engine.versioned.ver-column`) is not lower; NULL is the lowest | `-U/+U`, or nothing |
//! | `aggregation` | each field merges by its function ([`AggFunction`]; key columns `last_value`, others `last_value_ignore_nulls` unless `fields.<f>.agg` says otherwise) | `-U old, +U merged`, even when nothing changed |
//!
//! The first write of a key is stored as sent and emits `+I`. A partial write (`INSERT INTO t
//! (id, a) …`) merges its target columns and keeps the stored values of the others.
//! `table.delete.behavior` (`ignore`, the default with a merge engine; `disable`; `allow`)
//! decides what a delete does.

use std::collections::BTreeMap;

use weir_runtime::{DataType, LogicalType, RowKind, Value};

use crate::agg::AggFunction;
use crate::error::{Error, Result};

/// `table.merge-engine`
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeEngine {
    /// The newest row wins (no `table.merge-engine`).
    LastRow,
    /// The first row of a key stays.
    FirstRow,
    /// The row with the highest version in column `0` wins (ties: the newer).
    Versioned(usize),
    /// Fields merge by their functions, one per column.
    Aggregation(Vec<AggFunction>),
}

/// `table.delete.behavior`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteBehavior {
    /// Deletes remove rows (or, in a partial write, clear its target columns).
    Allow,
    /// Deletes are dropped.
    Ignore,
    /// Deletes fail the write.
    Disable,
}

/// The changes a scan of a table emits, as Fluss declares them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanChanges {
    /// `[I]`: `first_row` tables.
    InsertOnly,
    /// `[I,UB,UA]`: deletes are ignored or disabled.
    Updates,
    /// `[I,UB,UA,D]`: `'table.delete.behavior' = 'allow'`; a CDC format's changes.
    UpdatesAndDeletes,
    /// `[UA,D]`: an upsert stream (`upsert-kafka`): each row is its primary key's new value, a
    /// delete carries the key; the plan makes it a full changelog (`ChangelogNormalize`).
    Upserts,
}

/// What a write does to the stored row of its key.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Nothing changes; nothing is emitted.
    None,
    /// A new key: `+I row`.
    Insert(Vec<Value>),
    /// `-U before, +U after`.
    Update {
        /// The stored row.
        before: Vec<Value>,
        /// The row stored from now on.
        after: Vec<Value>,
    },
    /// `-D row`: the key is gone.
    Delete(Vec<Value>),
}

impl Change {
    /// The changelog rows, as Fluss emits them.
    pub fn rows(&self) -> Vec<(RowKind, &[Value])> {
        match self {
            Change::None => Vec::new(),
            Change::Insert(row) => vec![(RowKind::Insert, row)],
            Change::Update { before, after } => vec![(RowKind::UpdateBefore, before), (RowKind::UpdateAfter, after)],
            Change::Delete(row) => vec![(RowKind::Delete, row)],
        }
    }
}

/// A table's merge rules.
#[derive(Debug, Clone, PartialEq)]
pub struct RowMerger {
    engine: MergeEngine,
    delete: DeleteBehavior,
    columns: Vec<(String, DataType)>,
    primary_key: Vec<usize>,
}

fn validation(message: impl Into<String>) -> Error {
    Error::Validation(message.into())
}

impl RowMerger {
    /// The rules of a table with `columns`, primary key `primary_key` and `options` (its `WITH`
    /// options: `table.merge-engine`, `table.merge-engine.versioned.ver-column`,
    /// `table.delete.behavior`, `fields.<f>.agg`, `fields.<f>.<function>.<parameter>`).
    ///
    /// # Errors
    /// Fluss's messages for every option it rejects.
    pub fn new(
        columns: Vec<(String, DataType)>,
        primary_key: Vec<usize>,
        options: &BTreeMap<String, String>,
    ) -> Result<Self> {
        let engine_name = options.get("table.merge-engine").map(|e| e.trim().to_ascii_lowercase());
        let delete_option = options.get("table.delete.behavior").map(|d| d.trim().to_ascii_lowercase());
        if primary_key.is_empty() {
            if engine_name.is_some() {
                return Err(validation("Merge engine is only supported in primary key table."));
            }
            if delete_option.is_some() {
                return Err(validation(
                    "The 'table.delete.behavior' configuration is only supported for primary key tables.",
                ));
            }
        }
        let mut functions: Vec<Option<AggFunction>> = vec![None; columns.len()];
        for (key, value) in options {
            let Some(rest) = key.strip_prefix("fields.") else { continue };
            let Some((column, what)) = rest.split_once('.') else { continue };
            let Some(index) = columns.iter().position(|(c, _)| c == column) else { continue };
            if what == "agg" {
                let function = AggFunction::parse(column, value)?;
                function.check_type(column, &columns[index].1)?;
                functions[index] = Some(function);
            }
        }
        // Parameters, once every function is known.
        for (key, value) in options {
            let Some(rest) = key.strip_prefix("fields.") else { continue };
            let mut parts = rest.splitn(3, '.');
            let (Some(column), Some(function), Some(parameter)) = (parts.next(), parts.next(), parts.next()) else {
                continue;
            };
            let Some(index) = columns.iter().position(|(c, _)| c == column) else { continue };
            if let Some(f) = functions[index].take().filter(|f| f.name() == function.to_ascii_lowercase()) {
                functions[index] = Some(f.with_parameter(parameter, value)?);
            } else {
                return Err(validation(format!(
                    "Parameter '{parameter}' is not supported for aggregation function '{function}'. Supported parameters: none"
                )));
            }
        }
        let engine = match engine_name.as_deref() {
            None => MergeEngine::LastRow,
            Some("first_row") => MergeEngine::FirstRow,
            Some("versioned") => {
                let column = options.get("table.merge-engine.versioned.ver-column").ok_or_else(|| {
                    validation("'table.merge-engine.versioned.ver-column' must be set for versioned merge engine.")
                })?;
                let index = columns.iter().position(|(c, _)| c == column).ok_or_else(|| {
                    validation(format!("The version column '{column}' for versioned merge engine doesn't exist in schema."))
                })?;
                let ty = &columns[index].1;
                if !matches!(
                    ty.logical,
                    LogicalType::Int | LogicalType::BigInt | LogicalType::Timestamp(_) | LogicalType::TimestampLtz(_)
                ) {
                    return Err(validation(format!(
                        "The version column '{column}' for versioned merge engine must be one type of \
                         [INT, BIGINT, TIMESTAMP, TIMESTAMP_LTZ], but got {ty}."
                    )));
                }
                MergeEngine::Versioned(index)
            }
            Some("aggregation") => MergeEngine::Aggregation(
                functions
                    .iter()
                    .enumerate()
                    .map(|(i, f)| match f {
                        _ if primary_key.contains(&i) => AggFunction::LastValue,
                        Some(f) => f.clone(),
                        None => AggFunction::LastValueIgnoreNulls,
                    })
                    .collect(),
            ),
            Some(other) => {
                return Err(validation(format!(
                    "Could not parse value '{other}' for key 'table.merge-engine': expected one of 'first_row', 'versioned', 'aggregation'."
                )))
            }
        };
        if !matches!(engine, MergeEngine::Aggregation(_)) {
            if let Some((i, f)) = functions.iter().enumerate().find_map(|(i, f)| f.as_ref().map(|f| (i, f))) {
                return Err(validation(format!(
                    "Aggregation function is only supported for aggregation merge engine table, but column '{}' has \
                     aggregation function '{}'.",
                    columns[i].0,
                    f.name()
                )));
            }
        }
        let delete = match delete_option.as_deref() {
            None if engine == MergeEngine::LastRow => DeleteBehavior::Allow,
            None => DeleteBehavior::Ignore,
            Some("allow") => DeleteBehavior::Allow,
            Some("ignore") => DeleteBehavior::Ignore,
            Some("disable") => DeleteBehavior::Disable,
            Some(other) => {
                return Err(validation(format!(
                    "Could not parse value '{other}' for key 'table.delete.behavior': expected one of 'allow', 'ignore', 'disable'."
                )))
            }
        };
        if delete == DeleteBehavior::Allow && matches!(engine, MergeEngine::FirstRow | MergeEngine::Versioned(_)) {
            return Err(validation(format!(
                "Table with '{}' merge engine does not support delete operations. The 'table.delete.behavior' config \
                 must be set to 'ignore' or 'disable', but got 'allow'.",
                if engine == MergeEngine::FirstRow { "FIRST_ROW" } else { "VERSIONED" }
            )));
        }
        Ok(RowMerger { engine, delete, columns, primary_key })
    }

    /// The merge engine.
    pub fn engine(&self) -> &MergeEngine {
        &self.engine
    }

    /// The delete behavior.
    pub fn delete_behavior(&self) -> DeleteBehavior {
        self.delete
    }

    /// The changes a scan of the table emits, as Fluss declares them.
    pub fn scan_changes(&self) -> ScanChanges {
        match (&self.engine, self.delete) {
            (MergeEngine::FirstRow, _) => ScanChanges::InsertOnly,
            (_, DeleteBehavior::Allow) => ScanChanges::UpdatesAndDeletes,
            _ => ScanChanges::Updates,
        }
    }

    /// [`Self::scan_changes`] as Flink prints a changelog mode: `[I]`, `[I,UB,UA]`,
    /// `[I,UB,UA,D]`.
    pub fn changelog_mode(&self) -> &'static str {
        match self.scan_changes() {
            ScanChanges::InsertOnly => "[I]",
            ScanChanges::Updates => "[I,UB,UA]",
            ScanChanges::UpdatesAndDeletes => "[I,UB,UA,D]",
            ScanChanges::Upserts => "[UA,D]",
        }
    }

    /// Checks the target columns of a partial write.
    ///
    /// # Errors
    /// Fluss's messages: no partial writes under `first_row` / `versioned`, targets without
    /// the whole key, NOT NULL columns outside the targets of an aggregation table.
    pub fn check_targets(&self, targets: &[usize]) -> Result<()> {
        match &self.engine {
            MergeEngine::FirstRow => {
                return Err(validation("Partial update is not supported for the first_row merge engine."))
            }
            MergeEngine::Versioned(_) => {
                return Err(validation("Partial update is not supported for the versioned merge engine."))
            }
            _ => {}
        }
        if !self.primary_key.iter().all(|k| targets.contains(k)) {
            let names: Vec<&str> = self.primary_key.iter().map(|&k| self.columns[k].0.as_str()).collect();
            return Err(validation(format!(
                "The target write columns must contain the primary key columns [{}].",
                names.join(", ")
            )));
        }
        if matches!(self.engine, MergeEngine::Aggregation(_)) {
            if let Some((name, _)) = self
                .columns
                .iter()
                .enumerate()
                .filter(|(i, _)| !self.primary_key.contains(i))
                .map(|(_, c)| c)
                .find(|(_, ty)| !ty.nullable)
            {
                return Err(validation(format!(
                    "Partial aggregate requires all columns except primary key to be nullable, but column {name} is NOT NULL."
                )));
            }
        }
        Ok(())
    }

    /// What writing `row` does to the `stored` row of its key; `targets` are the columns of a
    /// partial write (`None`: all).
    ///
    /// # Errors
    /// A field that cannot be merged (bitmap bytes), naming the column.
    pub fn upsert(&self, stored: Option<&[Value]>, row: &[Value], targets: Option<&[usize]>) -> Result<Change> {
        let Some(old) = stored else {
            return Ok(Change::Insert(row.to_vec()));
        };
        let is_target = |i: usize| targets.is_none_or(|t| t.contains(&i));
        let merged: Vec<Value> = match &self.engine {
            MergeEngine::FirstRow => return Ok(Change::None),
            MergeEngine::Versioned(v) => {
                // NULL is the lowest version; a tie goes to the new row.
                if version_lower(&row[*v], &old[*v]) {
                    return Ok(Change::None);
                }
                row.to_vec()
            }
            MergeEngine::LastRow => {
                (0..row.len()).map(|i| if is_target(i) { row[i].clone() } else { old[i].clone() }).collect()
            }
            MergeEngine::Aggregation(functions) => (0..row.len())
                .map(|i| {
                    if !is_target(i) {
                        return Ok(old[i].clone());
                    }
                    functions[i]
                        .merge(&old[i], &row[i], &self.columns[i].1)
                        .map_err(|e| Error::Merge(format!("Cannot merge column '{}': {e}", self.columns[i].0)))
                })
                .collect::<Result<_>>()?,
        };
        Ok(Change::Update { before: old.to_vec(), after: merged })
    }

    /// What deleting the key of `row` does to its `stored` row; `targets` are the columns of a
    /// partial write.
    ///
    /// # Errors
    /// Deletes on a table with `'table.delete.behavior' = 'disable'`.
    pub fn delete(&self, stored: Option<&[Value]>, targets: Option<&[usize]>) -> Result<Change> {
        match self.delete {
            DeleteBehavior::Ignore => return Ok(Change::None),
            DeleteBehavior::Disable => {
                return Err(Error::Merge(
                    "Delete operations are disabled for this table. The table.delete.behavior is set to 'disable'."
                        .into(),
                ))
            }
            DeleteBehavior::Allow => {}
        }
        let Some(old) = stored else { return Ok(Change::None) };
        let Some(targets) = targets else { return Ok(Change::Delete(old.to_vec())) };
        let others_empty = (0..old.len()).filter(|i| !targets.contains(i)).all(|i| old[i].is_null());
        if others_empty {
            return Ok(Change::Delete(old.to_vec()));
        }
        let after = (0..old.len())
            .map(|i| if targets.contains(&i) && !self.primary_key.contains(&i) { Value::Null } else { old[i].clone() })
            .collect();
        Ok(Change::Update { before: old.to_vec(), after })
    }
}

/// Whether version `new` is lower than `old` (NULL lowest).
fn version_lower(new: &Value, old: &Value) -> bool {
    match (new, old) {
        (Value::Null, Value::Null) => false,
        (Value::Null, _) => true,
        (_, Value::Null) => false,
        (n, o) => n < o,
    }
}
