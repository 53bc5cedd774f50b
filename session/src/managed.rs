//! Managed tables in the catalog: tables declared without `'connector'` live in the table store
//! of the data directory `table.store.path` (default `weir-data` under the working directory).
//! Their definitions are kept there with their rows, so a later session sees them: the store is
//! opened, and its tables join the catalog, at the first statement that reads the catalog when
//! the directory holds a store, or at the first `CREATE TABLE` of a managed table.

use std::path::PathBuf;
use std::sync::Arc;

use weir_connectors::managed::TableStore;
use weir_runtime::settings::{Setting, Settings};

use weir_planner::catalog::{sql_string, Catalog, CatalogEntry, CatalogTable};
use weir_planner::error::{Error, Position, Result};
use weir_planner::parser::{parse_script, ColumnDef, CreateTable, Statement};

/// `table.store.path`: the data directory of managed tables.
pub static STORE_PATH: Setting<String> = Setting::text(
    "table.store.path",
    "weir-data",
    "the data directory of managed tables (tables without 'connector'), under the working directory",
)
.weir_only();

fn store_error(e: weir_connectors::Error) -> Error {
    Error::Table(e.to_string())
}

/// The data directory the session's settings name.
pub fn store_dir(settings: &Settings) -> PathBuf {
    PathBuf::from(settings.get(&STORE_PATH))
}

/// Opens the store of `dir` (creating it when `create`; `None` when it does not exist and
/// `create` is not set) and adds its tables to `catalog`, unless a table of the session has
/// the name already.
///
/// # Errors
/// The store is in use by another process, or a stored definition does not read back.
pub fn open_store(dir: &std::path::Path, create: bool, catalog: &mut Catalog) -> Result<Option<Arc<TableStore>>> {
    if !create && !TableStore::exists(dir).map_err(store_error)? {
        return Ok(None);
    }
    let store = TableStore::open(dir).map_err(store_error)?;
    for (name, definition) in store.definitions().map_err(store_error)? {
        let table = read_definition(&definition).map_err(|e| {
            Error::Table(format!("The definition of managed table '{name}' in '{}' cannot be read: {e}", dir.display()))
        })?;
        // A definition's name is the table's key ([`Catalog::key`]), read back unambiguously.
        catalog.add(
            &Catalog::qualified(&name),
            CatalogEntry::Table(Box::new(weir_planner::catalog::CatalogTable::from_create(
                &table,
                Position::default(),
            )?)),
        );
    }
    Ok(Some(store))
}

/// Removes the tables of `store` from `catalog` (the session switched data directories).
///
/// # Errors
/// The storage failed.
pub fn close_store(store: &TableStore, catalog: &mut Catalog) -> Result<()> {
    for (name, _) in store.definitions().map_err(store_error)? {
        let name = Catalog::qualified(&name);
        if matches!(catalog.get(&name), Some(CatalogEntry::Table(t)) if is_managed(t)) {
            catalog.remove(&name);
        }
    }
    Ok(())
}

/// Whether `table` is kept by the table store.
pub fn is_managed(table: &CatalogTable) -> bool {
    weir_connectors::managed::is_managed(&table.descriptor)
}

fn read_definition(definition: &str) -> Result<CreateTable> {
    match parse_script(definition)?.into_iter().next().map(|l| l.statement) {
        Some(Statement::CreateTable(table)) => Ok(*table),
        _ => Err(Error::Table("not a CREATE TABLE statement".into())),
    }
}

/// The first difference between the definition of `existing` and `wanted`, in words.
pub fn difference(existing: &CatalogTable, wanted: &CreateTable) -> Option<String> {
    let column = |c: &ColumnDef| (c.name().to_string(), c.definition());
    let old: Vec<(String, String)> = existing.columns.iter().map(column).collect();
    let new: Vec<(String, String)> = wanted.columns.iter().map(column).collect();
    for (i, (o, n)) in old.iter().zip(&new).enumerate() {
        if o.0 != n.0 {
            return Some(format!("column {} is '{}' in the existing table, '{}' here", i + 1, o.0, n.0));
        }
        if o.1 != n.1 {
            return Some(format!("column '{}' is {} in the existing table, {} here", o.0, o.1, n.1));
        }
    }
    if old.len() != new.len() {
        return Some(format!("the existing table has {} columns, this definition {}", old.len(), new.len()));
    }
    if existing.primary_key != wanted.primary_key {
        return Some(format!(
            "the primary key is ({}) in the existing table, ({}) here",
            existing.primary_key.join(", "),
            wanted.primary_key.join(", ")
        ));
    }
    let watermark = |w: Option<(&String, &sqlparser::ast::Expr)>| w.map(|(c, e)| format!("{c} AS {e}"));
    let (old_mark, new_mark) = (
        watermark(existing.watermark.as_deref().map(|(c, e)| (c, e))),
        watermark(wanted.watermark.as_ref().map(|(c, e)| (c, e))),
    );
    if old_mark != new_mark {
        return Some(format!(
            "the watermark is {} in the existing table, {} here",
            old_mark.unwrap_or_else(|| "not set".into()),
            new_mark.unwrap_or_else(|| "not set".into())
        ));
    }
    let keys = existing.descriptor.options.keys().chain(wanted.options.keys());
    for key in keys {
        let (o, n) = (existing.descriptor.options.get(key), wanted.options.get(key));
        if o != n {
            let show = |v: Option<&String>| v.map_or("not set".to_string(), |v| sql_string(v));
            return Some(format!("option '{key}' is {} in the existing table, {} here", show(o), show(n)));
        }
    }
    None
}

/// The message for `CREATE TABLE IF NOT EXISTS` of a managed table that exists with another
/// definition.
pub fn differs_message(name: &str, difference: &str) -> String {
    format!(
        "Could not execute CreateTable in path {}: Table already exists with a different definition \
         ({difference}). Drop it first, or use the existing definition.",
        Catalog::quoted_qualified(name)
    )
}

/// The message for a managed table without a primary key.
pub fn needs_key_message(name: &str) -> String {
    format!(
        "Table '{}' has no 'connector' option, so weir's table store keeps it, and a stored table needs a primary \
         key: declare PRIMARY KEY (…) NOT ENFORCED, or give the table a 'connector'.",
        Catalog::qualified(name)
    )
}
