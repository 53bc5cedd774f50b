//! The in-memory catalog: tables and views by name, in catalogs and databases
//! ([`Namespaces`]), names resolved against the current catalog and database as Flink resolves
//! them.

use std::collections::BTreeMap;

use parking_lot::Mutex;
use weir_connectors::api::{name_parts, DEFAULT_CATALOG, DEFAULT_DATABASE};

use crate::namespaces::Namespaces;

use std::sync::Arc;

use weir_operators::aggregate::AggregateUdf;
use weir_operators::expr::functions::ScalarRef;
use weir_operators::TableUdf;

use sqlparser::ast::Query;
use weir_connectors::{MetadataColumn, TableDescriptor};
use weir_runtime::{Field, Schema};

use crate::error::{Error, Position, Result};
use crate::parser::{ColumnDef, CreateTable};

/// A table declared with `CREATE TABLE`.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogTable {
    /// Name, physical schema and `WITH` options.
    pub descriptor: TableDescriptor,
    /// `PRIMARY KEY` columns.
    pub primary_key: Vec<String>,
    /// All columns in declaration order, computed ones included.
    pub columns: Vec<crate::parser::ColumnDef>,
    /// `WATERMARK FOR column AS expression`.
    pub watermark: Option<Box<(String, sqlparser::ast::Expr)>>,
    /// Where each `WITH` option's key is written (and `WITH` itself, under that name), in the
    /// script that created the table.
    pub option_positions: std::collections::BTreeMap<String, crate::error::Position>,
    /// `COMMENT '…'` of the table.
    pub comment: Option<String>,
    /// `COMMENT '…'` of its columns, by column name.
    pub column_comments: BTreeMap<String, String>,
}

impl CatalogTable {
    /// The catalog entry of a `CREATE TABLE` at `at`.
    ///
    /// # Errors
    /// A primary key column that is not a column (or is a metadata column), a partition column
    /// that is not a physical column.
    pub fn from_create(t: &CreateTable, at: Position) -> Result<CatalogTable> {
        let fields: Vec<Field> = t
            .columns
            .iter()
            .filter_map(|c| match c {
                // Primary key columns are NOT NULL, as in Flink.
                ColumnDef::Physical { name, data_type } if t.primary_key.contains(name) => {
                    Some(Field::new(name.clone(), data_type.clone().not_null()))
                }
                ColumnDef::Physical { name, data_type } | ColumnDef::Metadata { name, data_type, .. } => {
                    Some(Field::new(name.clone(), data_type.clone()))
                }
                ColumnDef::Computed { .. } => None,
            })
            .collect();
        // The metadata columns, by their place among the columns a scan produces.
        let metadata: Vec<MetadataColumn> = t
            .columns
            .iter()
            .filter(|c| !matches!(c, ColumnDef::Computed { .. }))
            .enumerate()
            .filter_map(|(position, c)| match c {
                ColumnDef::Metadata { name, key, is_virtual, .. } => Some(MetadataColumn {
                    position,
                    key: key.clone().unwrap_or_else(|| name.clone()),
                    is_virtual: *is_virtual,
                }),
                ColumnDef::Physical { .. } | ColumnDef::Computed { .. } => None,
            })
            .collect();
        for key in &t.primary_key {
            if metadata.iter().any(|m| &fields[m.position].name == key) {
                return Err(Error::validation(
                    at,
                    format!("Could not create a PRIMARY KEY with column '{key}'. A PRIMARY KEY constraint must be declared on physical columns."),
                ));
            }
        }
        for key in &t.primary_key {
            if !fields.iter().any(|f| &f.name == key) {
                return Err(Error::validation(at, format!("Primary key column '{key}' is not defined in the schema.")));
            }
        }
        for key in &t.partition_keys {
            let physical = |f: &&Field| !metadata.iter().any(|m| fields[m.position].name == f.name);
            if !fields.iter().filter(physical).any(|f| &f.name == key) {
                let available: Vec<String> = fields.iter().filter(physical).map(|f| format!("'{}'", f.name)).collect();
                return Err(Error::validation(
                    at,
                    format!(
                        "Partition column '{key}' not defined in the table schema. Available columns: [{}]",
                        available.join(", ")
                    ),
                ));
            }
        }
        let keys: Vec<&str> = t.primary_key.iter().map(String::as_str).collect();
        let descriptor = TableDescriptor::new(t.name.clone(), Schema::new(fields), &[]).with_primary_key(&keys);
        let descriptor = TableDescriptor {
            options: t.options.clone(),
            metadata,
            partition_keys: t.partition_keys.clone(),
            ..descriptor
        };
        Ok(CatalogTable {
            descriptor,
            primary_key: t.primary_key.clone(),
            columns: t.columns.clone(),
            watermark: t.watermark.clone().map(Box::new),
            option_positions: t.option_positions.clone(),
            comment: t.comment.clone(),
            column_comments: t.column_comments.clone(),
        })
    }
}

/// What a name in the catalog stands for.
#[derive(Debug, Clone, PartialEq)]
pub enum CatalogEntry {
    /// A table with a connector.
    Table(Box<CatalogTable>),
    /// A view: a named query.
    View(Box<Query>),
}

/// Tables and views by name (names are case-sensitive, as in Flink).
///
/// Each entry is kept under its key: the table's name alone in `default_catalog.default_database`
/// (`orders`), `catalog.database.table` elsewhere (`mem.sales.orders`); a written name is
/// resolved to its key against the current catalog and database ([`Catalog::key`]).
#[derive(Debug)]
pub struct Catalog {
    entries: BTreeMap<String, CatalogEntry>,
    /// The catalogs and their databases.
    namespaces: Namespaces,
    /// The current catalog and database (`USE`); a view's body is bound in its own.
    current: Mutex<(String, String)>,
    /// Functions created with `CREATE FUNCTION`.
    functions: UserFunctions,
    /// Set when a name was looked up that the catalog does not hold: a statement that failed
    /// so may name a managed table of a table store not opened yet.
    missed: std::sync::atomic::AtomicBool,
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog {
            entries: BTreeMap::new(),
            namespaces: Namespaces::default(),
            current: Mutex::new((DEFAULT_CATALOG.to_string(), DEFAULT_DATABASE.to_string())),
            functions: UserFunctions::default(),
            missed: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl Clone for Catalog {
    fn clone(&self) -> Self {
        Catalog {
            entries: self.entries.clone(),
            namespaces: self.namespaces.clone(),
            current: Mutex::new(self.current.lock().clone()),
            functions: self.functions.clone(),
            missed: std::sync::atomic::AtomicBool::new(self.missed()),
        }
    }
}

impl Catalog {
    /// The full name Flink prints for a table.
    pub fn qualified(name: &str) -> String {
        weir_connectors::api::qualified_name(name)
    }

    /// The full name Flink writes in messages and `SHOW CREATE TABLE`, each part quoted:
    /// `` `default_catalog`.`default_database`.`t` ``. A name qualified by another database or
    /// catalog (`other_db.t`) keeps its parts, the defaults filling in what it leaves out.
    pub fn quoted_qualified(name: &str) -> String {
        let parts: Vec<&str> = match name.split('.').collect::<Vec<_>>()[..] {
            [table] => vec!["default_catalog", "default_database", table],
            [database, table] => vec!["default_catalog", database, table],
            ref qualified => qualified.to_vec(),
        };
        parts.iter().map(|part| format!("`{}`", part.replace('`', "``"))).collect::<Vec<_>>().join(".")
    }

    /// The key of the entry a written name stands for: `t`, `db.t` and `catalog.db.t` complete
    /// with the current catalog and database, then shortened to `t` in the default ones.
    pub fn key(&self, written: &str) -> String {
        let current = self.current.lock();
        let (catalog, database, table) = match written.split('.').collect::<Vec<_>>()[..] {
            [table] => (current.0.as_str(), current.1.as_str(), table),
            [database, table] => (current.0.as_str(), database, table),
            [catalog, database, table] => (catalog, database, table),
            _ => return written.to_string(),
        };
        if catalog == DEFAULT_CATALOG && database == DEFAULT_DATABASE {
            table.to_string()
        } else {
            format!("{catalog}.{database}.{table}")
        }
    }

    /// The current catalog and database.
    pub fn current(&self) -> (String, String) {
        self.current.lock().clone()
    }

    /// Makes `catalog.database` current (`USE`).
    pub fn set_current(&mut self, catalog: &str, database: &str) {
        *self.current.lock() = (catalog.to_string(), database.to_string());
    }

    /// `f` run with the catalog and database of the entry keyed `key` current, as a view's body
    /// is bound: its names mean what they meant where the view was created.
    pub fn within_namespace_of<R>(&self, key: &str, f: impl FnOnce() -> R) -> R {
        let [catalog, database, _] = name_parts(key);
        let saved = std::mem::replace(&mut *self.current.lock(), (catalog.to_string(), database.to_string()));
        let result = f();
        *self.current.lock() = saved;
        result
    }

    /// The catalogs and their databases.
    pub fn namespaces(&self) -> &Namespaces {
        &self.namespaces
    }

    /// The catalogs and their databases, to create or drop one.
    pub fn namespaces_mut(&mut self) -> &mut Namespaces {
        &mut self.namespaces
    }

    /// The names of the tables and views of `catalog.database`, sorted.
    pub fn names_in(&self, catalog: &str, database: &str) -> Vec<String> {
        self.entries
            .keys()
            .filter_map(|key| match name_parts(key) {
                [c, d, table] if c == catalog && d == database => Some(table.to_string()),
                _ => None,
            })
            .collect()
    }

    /// Removes every table and view of `catalog` (of its `database` only, when given).
    pub fn remove_namespace(&mut self, catalog: &str, database: Option<&str>) {
        self.entries.retain(|key, _| {
            let [c, d, _] = name_parts(key);
            !(c == catalog && database.is_none_or(|database| d == database))
        });
    }

    /// The entry a written name stands for ([`Catalog::key`]).
    pub fn get(&self, name: &str) -> Option<&CatalogEntry> {
        let found = self.entries.get(&self.key(name));
        if found.is_none() {
            self.note_miss();
        }
        found
    }

    /// Whether a name the catalog does not hold was looked up since [`Catalog::forget_misses`].
    pub fn missed(&self) -> bool {
        self.missed.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Records a miss seen elsewhere (in a copy of this catalog).
    pub fn note_miss(&self) {
        self.missed.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Starts counting misses afresh.
    pub fn forget_misses(&self) {
        self.missed.store(false, std::sync::atomic::Ordering::Relaxed);
    }

    /// Adds an entry under the key of a written name; returns `false` (and changes nothing)
    /// when the name is taken.
    pub fn add(&mut self, name: &str, entry: CatalogEntry) -> bool {
        let key = self.key(name);
        if self.entries.contains_key(&key) {
            return false;
        }
        self.entries.insert(key, entry);
        true
    }

    /// Replaces the entry keyed `old_key` by `entry` keyed `new_key` (a table altered or renamed).
    pub fn rekey(&mut self, old_key: &str, new_key: String, entry: CatalogEntry) {
        self.entries.remove(old_key);
        self.entries.insert(new_key, entry);
    }

    /// Removes the entry a written name stands for; returns it if there was one.
    pub fn remove(&mut self, name: &str) -> Option<CatalogEntry> {
        let key = self.key(name);
        self.entries.remove(&key)
    }

    /// The functions created with `CREATE FUNCTION`.
    pub fn functions(&self) -> &UserFunctions {
        &self.functions
    }

    /// The functions created with `CREATE FUNCTION`, to add or drop one.
    pub fn functions_mut(&mut self) -> &mut UserFunctions {
        &mut self.functions
    }
}

/// A function created with `CREATE FUNCTION name AS 'class'` or registered from Rust
/// (`Session::register_function` and its kin): weir's implementation of it, by kind.
#[derive(Debug, Clone)]
pub enum UserFunction {
    /// A scalar function, called in expressions.
    Scalar(ScalarRef),
    /// An aggregate function, called like a built-in aggregate.
    Aggregate(Arc<dyn AggregateUdf>),
    /// A table function, called in `LATERAL TABLE(…)`.
    Table(Arc<dyn TableUdf>),
}

/// The functions a session created, by name (compared without case, as Flink compares function
/// names); they shadow built-ins of the same name, as Flink's catalog functions do. Functions of
/// every kind share the names.
#[derive(Debug, Clone, Default)]
pub struct UserFunctions {
    by_name: BTreeMap<String, UserFunction>,
}

impl UserFunctions {
    /// No functions (where an expression cannot call one: window sizes, partition columns).
    pub fn none() -> &'static UserFunctions {
        static NONE: UserFunctions = UserFunctions { by_name: BTreeMap::new() };
        &NONE
    }

    /// The functions' names (lower case), sorted.
    pub fn names(&self) -> Vec<String> {
        self.by_name.keys().cloned().collect()
    }

    fn lookup(&self, name: &str) -> Option<&UserFunction> {
        self.by_name.get(&name.to_ascii_lowercase())
    }

    /// The scalar function called `name`.
    pub fn get(&self, name: &str) -> Option<&ScalarRef> {
        match self.lookup(name)? {
            UserFunction::Scalar(function) => Some(function),
            UserFunction::Aggregate(_) | UserFunction::Table(_) => None,
        }
    }

    /// The aggregate function called `name`.
    pub fn aggregate(&self, name: &str) -> Option<&Arc<dyn AggregateUdf>> {
        match self.lookup(name)? {
            UserFunction::Aggregate(function) => Some(function),
            UserFunction::Scalar(_) | UserFunction::Table(_) => None,
        }
    }

    /// The table function called `name`.
    pub fn table(&self, name: &str) -> Option<&Arc<dyn TableUdf>> {
        match self.lookup(name)? {
            UserFunction::Table(function) => Some(function),
            UserFunction::Scalar(_) | UserFunction::Aggregate(_) => None,
        }
    }

    /// Whether a function of any kind is called `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.lookup(name).is_some()
    }

    /// Adds `function` as `name`; `false` (and nothing changes) when the name is taken.
    pub fn add(&mut self, name: &str, function: UserFunction) -> bool {
        match self.by_name.entry(name.to_ascii_lowercase()) {
            std::collections::btree_map::Entry::Occupied(_) => false,
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(function);
                true
            }
        }
    }

    /// Drops the function called `name`; whether there was one.
    pub fn remove(&mut self, name: &str) -> bool {
        self.by_name.remove(&name.to_ascii_lowercase()).is_some()
    }
}

/// `catalog` with each hinted table's options overridden by its hints (`/*+ OPTIONS(…) */`).
///
/// # Errors
/// Flink's validation error for a hint on a view.
pub fn apply_hints(catalog: &Catalog, hints: &[crate::hints::TableHint]) -> crate::error::Result<Catalog> {
    let mut hinted = catalog.clone();
    for hint in hints {
        let Some(entry) = hinted.remove(&hint.table) else {
            continue;
        };
        let entry = match entry {
            CatalogEntry::Table(mut table) => {
                table.descriptor.options.extend(hint.options.clone());
                CatalogEntry::Table(table)
            }
            CatalogEntry::View(_) => {
                return Err(crate::error::Error::validation(
                    hint.position,
                    format!(
                        "View '{}' cannot be enriched with new options. Hints can only be applied to tables.",
                        Catalog::qualified(&hint.table)
                    ),
                ));
            }
        };
        hinted.add(&hint.table, entry);
    }
    Ok(hinted)
}

/// The text a managed table's definition is kept as: a `CREATE TABLE` statement.
pub fn definition_text(table: &CreateTable) -> String {
    let mut parts: Vec<String> = table.columns.iter().map(|c| format!("`{}` {}", c.name(), c.definition())).collect();
    if let Some((column, expr)) = &table.watermark {
        parts.push(format!("WATERMARK FOR `{column}` AS {expr}"));
    }
    if !table.primary_key.is_empty() {
        let key: Vec<String> = table.primary_key.iter().map(|k| format!("`{k}`")).collect();
        parts.push(format!("PRIMARY KEY ({}) NOT ENFORCED", key.join(", ")));
    }
    let options: Vec<String> =
        table.options.iter().map(|(k, v)| format!("{} = {}", sql_string(k), sql_string(v))).collect();
    let mut sql = format!("CREATE TABLE `{}` (\n  {}\n)", table.name, parts.join(",\n  "));
    if !table.partition_keys.is_empty() {
        let keys: Vec<String> = table.partition_keys.iter().map(|k| format!("`{k}`")).collect();
        sql.push_str(&format!("\nPARTITIONED BY ({})", keys.join(", ")));
    }
    if !options.is_empty() {
        sql.push_str(&format!(" WITH (\n  {}\n)", options.join(",\n  ")));
    }
    sql
}

/// `text` as a SQL string literal: in single quotes, each quote in it doubled.
pub fn sql_string(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}
