//! `DELETE` and `UPDATE` statements, on managed tables in batch mode, as Flink runs row-level
//! modifications against Fluss: the rows the condition selects are read, then written back in
//! one atomic, durable batch — as deletes, or as the updated rows. Only tables with the default
//! merge engine take them (Fluss's rule and messages).

use weir_connectors::managed::merger_of;
use weir_runtime::RowKind;
use weir_store::{DeleteBehavior, MergeEngine};

use super::Session;
use weir_planner::binder::sink_rows::conform_to_sink;
use weir_planner::catalog::Catalog;
use weir_planner::error::{Error, Position, Result};
use weir_planner::parser::{parse_script, Statement};

/// What a statement does to the rows it selects.
pub(super) enum Modification<'a> {
    /// `DELETE`
    Delete,
    /// `UPDATE … SET column = expression, …`
    Update(&'a [(String, sqlparser::ast::Expr)]),
}

impl Session {
    /// Runs `DELETE FROM table [WHERE selection]` or `UPDATE table SET … [WHERE selection]`.
    pub(super) fn modify(
        &mut self,
        table: &str,
        modification: Modification<'_>,
        selection: Option<&sqlparser::ast::Expr>,
        at: Position,
    ) -> Result<()> {
        let statement = match modification {
            Modification::Delete => "DELETE",
            Modification::Update(_) => "UPDATE",
        };
        let planner = self.planner()?;
        if !planner.options().batch {
            return Err(Error::Table(format!("{statement} statement is not supported for streaming mode now.")));
        }
        let sink = planner.sink_table(table)?;
        let name = Catalog::qualified(table);
        if !crate::managed::is_managed(&sink) {
            return Err(Error::Unsupported(format!(
                "{statement} on table '{name}': weir modifies rows of managed tables (declared without 'connector') only"
            )));
        }
        let merger = merger_of(&sink.descriptor).map_err(|e| Error::validation(at, e.to_string()))?;
        let engine = match merger.engine() {
            MergeEngine::LastRow => None,
            MergeEngine::FirstRow => Some("FIRST_ROW"),
            MergeEngine::Versioned(_) => Some("VERSIONED"),
            MergeEngine::Aggregation(_) => Some("AGGREGATION"),
        };
        if let Some(engine) = engine {
            return Err(Error::validation(
                at,
                format!(
                    "Table {name} uses the '{engine}' merge engine which does not support DELETE or UPDATE statements."
                ),
            ));
        }
        if matches!(modification, Modification::Delete) && merger.delete_behavior() == DeleteBehavior::Disable {
            return Err(Error::validation(
                at,
                format!("Table {name} has delete behavior set to 'disable' which does not support DELETE statements."),
            ));
        }
        // The rows to write, read by a query over the table.
        let fields = &sink.descriptor.schema.fields;
        let columns: Vec<String> = fields
            .iter()
            .map(|f| match &modification {
                Modification::Update(assignments) => match assignments.iter().find(|(c, _)| c == &f.name) {
                    Some((_, value)) => format!("({value}) AS `{}`", f.name),
                    None => format!("`{}`", f.name),
                },
                Modification::Delete => format!("`{}`", f.name),
            })
            .collect();
        if let Modification::Update(assignments) = &modification {
            if let Some((column, _)) = assignments.iter().find(|(c, _)| !fields.iter().any(|f| &f.name == c)) {
                return Err(Error::validation(at, format!("Unknown target column '{column}'")));
            }
            if let Some((column, _)) = assignments.iter().find(|(c, _)| sink.primary_key.contains(c)) {
                return Err(Error::validation(
                    at,
                    format!("UPDATE cannot change primary key column '{column}' of table '{name}'."),
                ));
            }
        }
        let condition = selection.map(|s| format!(" WHERE {s}")).unwrap_or_default();
        let sql = format!("SELECT {} FROM `{table}`{condition}", columns.join(", "));
        let Some(Statement::Query(query)) = parse_script(&sql)?.into_iter().next().map(|l| l.statement) else {
            return Err(Error::Table(format!("the {statement} statement did not read back as a query")));
        };
        let plan = planner.bind_query(&query)?;
        let plan = conform_to_sink(plan, &sink, &[], at)?;
        if self.dry_run {
            // Explaining a script changes no data.
            return Ok(());
        }
        let handle = weir_connectors::CollectHandle::new();
        let graph = super::collect_graph(&planner, plan, &handle)?;
        drop(planner);
        self.run_query(graph)?;
        let rows = handle.rows();
        let kind = match modification {
            Modification::Delete => RowKind::Delete,
            Modification::Update(_) => RowKind::UpdateAfter,
        };
        let store = self.open_table_store()?;
        let managed = store.table(&sink.descriptor).map_err(|e| Error::validation(at, e.to_string()))?;
        let mut batch = managed.buffer();
        for row in &rows {
            batch.push(kind, &row.values).map_err(|e| Error::Table(e.to_string()))?;
        }
        let changes = managed.write(&batch, None).map_err(|e| Error::validation(at, e.to_string()))?;
        tracing::debug!(table = %table, statement, rows = rows.len(), changes, "modified a managed table");
        Ok(())
    }
}
