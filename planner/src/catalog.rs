//! The in-memory catalog of `default_catalog.default_database`: tables and views by name.

use std::collections::BTreeMap;

use weir_operators::expr::functions::ScalarRef;

use sqlparser::ast::Query;
use weir_connectors::TableDescriptor;

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

/// What a name in the catalog stands for.
#[derive(Debug, Clone, PartialEq)]
pub enum CatalogEntry {
    /// A table with a connector.
    Table(Box<CatalogTable>),
    /// A view: a named query.
    View(Box<Query>),
}

/// Tables and views by name (names are case-sensitive, as in Flink).
#[derive(Debug, Default)]
pub struct Catalog {
    entries: BTreeMap<String, CatalogEntry>,
    /// Functions created with `CREATE FUNCTION`.
    functions: UserFunctions,
    /// Set when a name was looked up that the catalog does not hold: a statement that failed
    /// so may name a managed table of a table store not opened yet.
    missed: std::sync::atomic::AtomicBool,
}

impl Clone for Catalog {
    fn clone(&self) -> Self {
        Catalog {
            entries: self.entries.clone(),
            functions: self.functions.clone(),
            missed: std::sync::atomic::AtomicBool::new(self.missed()),
        }
    }
}

impl Catalog {
    /// The full name Flink prints for a table.
    pub fn qualified(name: &str) -> String {
        weir_connectors::registry::qualified_name(name)
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

    /// The entry called `name`.
    pub fn get(&self, name: &str) -> Option<&CatalogEntry> {
        let found = self.entries.get(name);
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

    /// Adds an entry; returns `false` (and changes nothing) when the name is taken.
    pub fn add(&mut self, name: &str, entry: CatalogEntry) -> bool {
        if self.entries.contains_key(name) {
            return false;
        }
        self.entries.insert(name.to_string(), entry);
        true
    }

    /// Removes an entry; returns it if there was one.
    pub fn remove(&mut self, name: &str) -> Option<CatalogEntry> {
        self.entries.remove(name)
    }

    /// The names of all tables and views, sorted.
    pub fn names(&self) -> Vec<String> {
        self.entries.keys().cloned().collect()
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
/// (`Session::register_function`).
#[derive(Debug, Clone)]
pub struct UserFunction {
    /// weir's implementation of it, called by the function's name.
    pub function: ScalarRef,
}

/// The functions a session created, by name (compared without case, as Flink compares function
/// names); they shadow built-ins of the same name, as Flink's catalog functions do.
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

    /// The functions' names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.by_name.keys().cloned().collect()
    }

    /// The function called `name`.
    pub fn get(&self, name: &str) -> Option<&UserFunction> {
        self.by_name.get(&name.to_ascii_lowercase())
    }

    /// Adds `function` as `name`; `false` (and nothing changes) when the name is taken.
    pub fn add(&mut self, name: &str, function: UserFunction) -> bool {
        let key = name.to_ascii_lowercase();
        if self.by_name.contains_key(&key) {
            return false;
        }
        self.by_name.insert(key, function);
        true
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
