//! The catalog statements of Flink's SQL client: `SHOW FUNCTIONS | CREATE TABLE | CREATE VIEW`
//! and `ALTER TABLE`, and the parts of `CREATE TABLE` that start from another table (`LIKE`) or a
//! query (`AS SELECT`).
//!
//! `USE`, `CREATE` and `DROP` of catalogs and databases are `super::namespaces`'.

use std::collections::BTreeMap;

use weir_runtime::LogicalType;

use super::describe::quoted;
use super::Session;
use crate::tableau::text_table;
use weir_planner::catalog::{sql_string, Catalog, CatalogEntry, CatalogTable};
use weir_planner::error::{Error, Position, Result};
use weir_planner::parser::{AlterTable, ColumnDef, CreateTable, Like, LikeMerge};

impl Session {
    /// A table of one column `header` with a row per value.
    pub(super) fn show_list(&mut self, header: &str, values: &[String]) -> Result<()> {
        let rows: Vec<Vec<String>> = values.iter().map(|v| vec![v.clone()]).collect();
        self.write_text(&text_table(&[header], &rows))
    }

    /// `SHOW [USER] FUNCTIONS`: the built-in functions weir has (scalar and aggregate) and those
    /// created with `CREATE FUNCTION`, sorted; `USER` only the latter.
    pub(super) fn show_functions(&mut self, user: bool, like: Option<&(bool, String)>, at: Position) -> Result<()> {
        let mut names: Vec<String> = self.catalog.functions().names();
        if !user {
            names.extend(
                weir_operators::expr::functions::names()
                    .into_iter()
                    .filter(|n| !n.starts_with('$'))
                    .map(str::to_string),
            );
            names.extend(weir_operators::aggregate::registry::names().map(str::to_string));
        }
        names.sort();
        names.dedup();
        let names = super::describe::matching(names, like, at)?;
        self.show_list("function name", &names)
    }

    /// `SHOW CREATE TABLE t` / `SHOW CREATE VIEW v`: the statement that makes it, as Flink writes it.
    pub(super) fn show_create(&mut self, name: &str, view: bool, at: Position) -> Result<()> {
        let text = match (self.catalog.get(name), view) {
            (Some(CatalogEntry::Table(t)), false) => create_table_text(t),
            (Some(CatalogEntry::View(query)), true) => {
                format!("CREATE VIEW {} AS\n{query}\n", Catalog::quoted_qualified(&self.catalog.key(name)))
            }
            (Some(CatalogEntry::View(_)), false) => {
                return Err(Error::validation(
                    at,
                    format!("SHOW CREATE TABLE is only supported for tables, but {} is a view. Please use SHOW CREATE VIEW instead.", Catalog::quoted_qualified(&self.catalog.key(name))),
                ))
            }
            (Some(CatalogEntry::Table(_)), true) => {
                return Err(Error::validation(
                    at,
                    format!("SHOW CREATE VIEW is only supported for views, but {} is a table. Please use SHOW CREATE TABLE instead.", Catalog::quoted_qualified(&self.catalog.key(name))),
                ))
            }
            (None, _) => {
                let kind = if view { "view" } else { "table" };
                return Err(Error::validation(
                    at,
                    format!("Could not execute SHOW CREATE {}. Table with identifier {} does not exist.", kind.to_uppercase(), Catalog::quoted_qualified(&self.catalog.key(name))),
                ));
            }
        };
        self.write_text(&text_table(&["result"], &[vec![text]]))
    }

    /// `ALTER TABLE`: a renamed table, new or reset options, columns added, changed or dropped.
    /// The table is defined anew, with the checks of `CREATE TABLE`; a managed table (whose
    /// rows the table store keeps by its definition) is refused.
    pub(super) fn alter_table(&mut self, name: &str, change: &AlterTable, at: Position) -> Result<()> {
        let key = self.catalog.key(name);
        let Some(CatalogEntry::Table(table)) = self.catalog.get(name) else {
            return Err(Error::validation(
                at,
                format!("Table {} doesn't exist or is a temporary table.", Catalog::quoted_qualified(&key)),
            ));
        };
        if crate::managed::is_managed(table) {
            return Err(Error::UnsupportedAt {
                position: at,
                feature: format!(
                    "ALTER TABLE of the managed table '{name}' (its table store keeps rows by its definition)"
                ),
            });
        }
        let mut definition = definition_of(table);
        match change {
            AlterTable::Rename(new_name) => {
                // A bare new name stays in the table's catalog and database.
                let new_key = match weir_connectors::api::name_parts(&key) {
                    [catalog, database, _] if !new_name.contains('.') => {
                        self.catalog.key(&format!("{catalog}.{database}.{new_name}"))
                    }
                    _ => self.catalog.key(new_name),
                };
                self.check_database_of(&new_key, "AlterTable", at)?;
                if self.catalog.get(&Catalog::qualified(&new_key)).is_some() {
                    return Err(Error::validation(
                        at,
                        format!("Could not execute ALTER TABLE {name} RENAME TO {new_name}: the table {new_name} already exists"),
                    ));
                }
                definition.name = new_key;
            }
            AlterTable::Set(options) => definition.options.extend(options.clone()),
            AlterTable::Reset(keys) => keys.iter().for_each(|k| {
                definition.options.remove(k);
            }),
            AlterTable::Add(columns) => {
                for (column, comment) in columns {
                    if let Some(comment) = comment {
                        definition.column_comments.insert(column.name().to_string(), comment.clone());
                    }
                    if definition.columns.iter().any(|c| c.name() == column.name()) {
                        return Err(Error::validation(
                            at,
                            format!("Try to add a column `{}` which already exists in the table.", column.name()),
                        ));
                    }
                    definition.columns.push(column.clone());
                }
            }
            AlterTable::Modify(columns) => {
                for (column, comment) in columns {
                    if let Some(comment) = comment {
                        definition.column_comments.insert(column.name().to_string(), comment.clone());
                    }
                    let Some(old) = definition.columns.iter_mut().find(|c| c.name() == column.name()) else {
                        return Err(Error::validation(
                            at,
                            format!("Try to modify a column `{}` which does not exist in the table.", column.name()),
                        ));
                    };
                    *old = column.clone();
                }
            }
            AlterTable::Watermark { watermark, replace } => {
                match (&definition.watermark, replace) {
                    (Some((column, expr)), false) => {
                        let expr = match expr {
                            sqlparser::ast::Expr::Identifier(i) => format!("`{}`", i.value),
                            other => other.to_string(),
                        };
                        return Err(Error::validation(
                            at,
                            format!(
                                "The current table has already defined the watermark strategy `{column}` AS {expr}. \
                                 You might want to drop it before adding a new one."
                            ),
                        ));
                    }
                    (None, true) => {
                        return Err(Error::validation(
                            at,
                            "The current table does not define any watermark. You might want to add a new one.",
                        ))
                    }
                    _ => {}
                }
                if !definition.columns.iter().any(|c| c.name() == watermark.0) {
                    let available: Vec<&str> = definition.columns.iter().map(|c| c.name()).collect();
                    return Err(Error::validation(
                        at,
                        format!(
                            "Invalid column name '{}' for rowtime attribute in watermark declaration. Available columns \
                             are: [{}]",
                            watermark.0,
                            available.join(", ")
                        ),
                    ));
                }
                definition.watermark = Some((**watermark).clone());
            }
            AlterTable::DropWatermark => {
                if definition.watermark.take().is_none() {
                    return Err(Error::validation(at, "The current table does not define any watermark strategy."));
                }
            }
            AlterTable::Drop(names) => {
                for dropped in names {
                    if !definition.columns.iter().any(|c| c.name() == dropped) {
                        return Err(Error::validation(
                            at,
                            format!("The column `{dropped}` does not exist in the base table."),
                        ));
                    }
                    if definition.primary_key.contains(dropped) {
                        return Err(Error::validation(
                            at,
                            format!("The column `{dropped}` is used as the primary key."),
                        ));
                    }
                    if definition.watermark.as_ref().is_some_and(|w| &w.0 == dropped) {
                        return Err(Error::validation(
                            at,
                            format!("The column `{dropped}` is referenced by watermark expression."),
                        ));
                    }
                    definition.columns.retain(|c| c.name() != dropped);
                    definition.column_comments.remove(dropped);
                }
            }
        }
        let altered = CatalogTable::from_create(&definition, at)?;
        self.catalog.rekey(&key, definition.name, CatalogEntry::Table(Box::new(altered)));
        Ok(())
    }

    /// `t` with its `LIKE` source's definition merged in, as Flink merges them: the source's
    /// columns first, then the new ones; each part taken, left out or overwritten as the
    /// `LIKE` clause says.
    pub(super) fn with_like(&self, t: &CreateTable, like: &Like, at: Position) -> Result<CreateTable> {
        let Some(CatalogEntry::Table(source)) = self.catalog.get(&like.source) else {
            return Err(Error::validation(
                at,
                format!(
                    "Source table '{}' of the LIKE clause not found in the catalog",
                    Catalog::qualified(&like.source)
                ),
            ));
        };
        let source = definition_of(source);
        let mut merged = t.clone();
        merged.like = None;
        let kept = |c: &ColumnDef| match c {
            ColumnDef::Physical { .. } => true,
            ColumnDef::Computed { .. } => like.generated != LikeMerge::Excluding,
            ColumnDef::Metadata { .. } => like.metadata != LikeMerge::Excluding,
        };
        // A key column stays NOT NULL, also when the key itself is left out.
        let mut columns: Vec<ColumnDef> = source
            .columns
            .iter()
            .filter(|c| kept(c))
            .map(|c| match c {
                ColumnDef::Physical { name, data_type } if source.primary_key.contains(name) => {
                    ColumnDef::Physical { name: name.clone(), data_type: data_type.clone().not_null() }
                }
                other => other.clone(),
            })
            .collect();
        for column in &t.columns {
            match columns.iter_mut().find(|c| c.name() == column.name()) {
                Some(existing) if !matches!(column, ColumnDef::Physical { .. }) => *existing = column.clone(),
                Some(_) => {
                    return Err(Error::validation(
                        at,
                        format!("A column named '{}' already exists in the base table.", column.name()),
                    ))
                }
                None => columns.push(column.clone()),
            }
        }
        merged.column_comments = source
            .column_comments
            .iter()
            .filter(|(name, _)| columns.iter().any(|c| c.name() == name.as_str()))
            .chain(&t.column_comments)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        merged.columns = columns;
        if like.constraints != LikeMerge::Excluding && t.primary_key.is_empty() {
            merged.primary_key = source.primary_key.clone();
        } else if like.constraints == LikeMerge::Including
            && !source.primary_key.is_empty()
            && !t.primary_key.is_empty()
        {
            return Err(Error::validation(
                at,
                "The base table already has a primary key. You might want to specify EXCLUDING CONSTRAINTS.",
            ));
        }
        match (like.watermarks, &t.watermark) {
            (LikeMerge::Excluding, _) => {}
            (LikeMerge::Including, Some(_)) if source.watermark.is_some() => {
                return Err(Error::validation(at, "There already exists a watermark spec for column in the base table. You might want to specify EXCLUDING WATERMARKS or OVERWRITING WATERMARKS."));
            }
            (_, None) => merged.watermark = source.watermark.clone(),
            (_, Some(_)) => {}
        }
        if like.partitions != LikeMerge::Excluding && t.partition_keys.is_empty() {
            merged.partition_keys = source.partition_keys.clone();
        }
        if like.options != LikeMerge::Excluding {
            let mut options = source.options.clone();
            for (key, value) in &t.options {
                if like.options == LikeMerge::Including && options.contains_key(key) {
                    return Err(Error::validation(
                        at,
                        format!("There already exists an option ['{key}' -> '{}'] in the base table. You might want to specify EXCLUDING OPTIONS or OVERWRITING OPTIONS.", options[key]),
                    ));
                }
                options.insert(key.clone(), value.clone());
            }
            merged.options = options;
        }
        Ok(merged)
    }
}

/// The `CREATE TABLE` a catalog table was made by (its `LIKE` and query resolved).
fn definition_of(t: &CatalogTable) -> CreateTable {
    CreateTable {
        name: t.descriptor.name.clone(),
        columns: t.columns.clone(),
        primary_key: t.primary_key.clone(),
        watermark: t.watermark.as_deref().cloned(),
        partition_keys: t.descriptor.partition_keys.clone(),
        options: t.descriptor.options.clone(),
        option_positions: t.option_positions.clone(),
        if_not_exists: false,
        comment: t.comment.clone(),
        column_comments: t.column_comments.clone(),
        like: None,
        query: None,
    }
}

/// A column type as Flink's `SHOW CREATE TABLE` writes it: `STRING` as `VARCHAR(2147483647)`,
/// `BYTES` as `VARBINARY(2147483647)`.
fn type_text(ty: &weir_runtime::DataType) -> String {
    let text = ty.to_string();
    match ty.logical {
        LogicalType::Varchar(_)
        | LogicalType::Varbinary(_)
        | LogicalType::Array(_)
        | LogicalType::Map(..)
        | LogicalType::Row(_)
        | LogicalType::Multiset(_) => {
            text.replace("STRING", "VARCHAR(2147483647)").replace("BYTES", "VARBINARY(2147483647)")
        }
        _ => text,
    }
}

/// Flink's `SHOW CREATE TABLE` text of `t`.
fn create_table_text(t: &CatalogTable) -> String {
    let mut lines: Vec<String> = Vec::new();
    for column in &t.columns {
        let name = format!("`{}`", column.name());
        let mut line = match column {
            ColumnDef::Physical { data_type, name: n } => {
                let mut ty = data_type.clone();
                if t.primary_key.contains(n) {
                    ty.nullable = false;
                }
                format!("  {name} {}", type_text(&ty))
            }
            ColumnDef::Computed { expr, .. } => format!("  {name} AS {}", quoted(expr)),
            ColumnDef::Metadata { data_type, key, is_virtual, .. } => {
                let from = key.as_ref().map(|k| format!(" FROM '{k}'")).unwrap_or_default();
                format!("  {name} {} METADATA{from}{}", type_text(data_type), if *is_virtual { " VIRTUAL" } else { "" })
            }
        };
        if let Some(comment) = t.column_comments.get(column.name()) {
            line.push_str(&format!(" COMMENT {}", sql_string(comment)));
        }
        lines.push(line);
    }
    if let Some(watermark) = &t.watermark {
        lines.push(format!("  WATERMARK FOR `{}` AS {}", watermark.0, quoted(&watermark.1)));
    }
    if !t.primary_key.is_empty() {
        let columns: Vec<String> = t.primary_key.iter().map(|k| format!("`{k}`")).collect();
        lines.push(format!(
            "  CONSTRAINT `PK_{}` PRIMARY KEY ({}) NOT ENFORCED",
            t.primary_key.join("_"),
            columns.join(", ")
        ));
    }
    let mut text =
        format!("CREATE TABLE {} (\n{}\n)\n", Catalog::quoted_qualified(&t.descriptor.name), lines.join(",\n"));
    if let Some(comment) = &t.comment {
        text.push_str(&format!("COMMENT {}\n", sql_string(comment)));
    }
    if !t.descriptor.partition_keys.is_empty() {
        let keys: Vec<String> = t.descriptor.partition_keys.iter().map(|k| format!("`{k}`")).collect();
        text.push_str(&format!("PARTITIONED BY ({})\n", keys.join(", ")));
    }
    let options: BTreeMap<&String, &String> = t.descriptor.options.iter().collect();
    let options: Vec<String> =
        options.iter().map(|(k, v)| format!("  {} = {}", sql_string(k), sql_string(v))).collect();
    text.push_str(&format!("WITH (\n{}\n)\n", options.join(",\n")));
    text
}
