//! DDL on the session's catalog: `CREATE TABLE` (managed tables go to the table store of the
//! data directory), `DROP TABLE` and the table store the session has open.

use std::sync::Arc;

use weir_connectors::managed::TableStore;

use super::Session;
use weir_planner::catalog::{Catalog, CatalogEntry, CatalogTable};
use weir_planner::error::{Error, Position, Result};
use weir_planner::parser::{ColumnDef, CreateTable};

impl Session {
    /// The table store of the data directory `table.store.path` names, opened (and its tables
    /// added to the catalog) when it exists or `create` is set; a store of another directory
    /// is closed first.
    pub(super) fn table_store(&mut self, create: bool) -> Result<Option<Arc<TableStore>>> {
        let dir = crate::managed::store_dir(&self.settings);
        if let Some(store) = self.registry.table_store() {
            if store.dir() == dir {
                return Ok(Some(Arc::clone(store)));
            }
            let store = Arc::clone(store);
            crate::managed::close_store(&store, &mut self.catalog)?;
            self.registry.set_table_store(None);
        }
        let store = crate::managed::open_store(&dir, create, &mut self.catalog)?;
        self.registry.set_table_store(store.clone());
        Ok(store)
    }

    /// The table store the session has open (a managed table in the catalog has one).
    pub(super) fn open_table_store(&self) -> Result<Arc<TableStore>> {
        self.registry.table_store().cloned().ok_or_else(|| Error::Table("the table store is not open".into()))
    }

    /// `DROP TABLE` / `DROP VIEW`: a managed table's rows go with it (not while a script is
    /// only explained).
    pub(super) fn drop(&mut self, name: &str, if_exists: bool, view: bool, at: Position) -> Result<()> {
        let matches = match self.catalog.get(name) {
            Some(CatalogEntry::View(_)) => view,
            Some(CatalogEntry::Table(_)) => !view,
            None => false,
        };
        if !matches {
            if if_exists {
                return Ok(());
            }
            let kind = if view { "View" } else { "Table" };
            return Err(Error::validation(
                at,
                format!("{kind} with identifier '{}' does not exist.", Catalog::qualified(&self.catalog.key(name))),
            ));
        }
        if let Some(CatalogEntry::Table(table)) = self.catalog.get(name) {
            if crate::managed::is_managed(table) && !self.dry_run {
                self.open_table_store()?.drop_table(name).map_err(|e| Error::validation(at, e.to_string()))?;
            }
        }
        self.catalog.remove(name);
        Ok(())
    }

    /// `CREATE TABLE`, also `… LIKE source` (the source's definition merged in) and `… AS
    /// query` (the query's columns, then its rows inserted).
    pub(super) fn create_table(&mut self, t: &CreateTable, at: Position) -> Result<()> {
        if let Some(like) = &t.like {
            if t.query.is_some() {
                return Err(Error::validation(
                    at,
                    "CREATE TABLE AS SELECT syntax does not support to specify explicit LIKE clause yet.",
                ));
            }
            let merged = self.with_like(t, like, at)?;
            return self.create_table(&merged, at);
        }
        if let Some(query) = &t.query {
            return self.create_table_as(t, query, at);
        }
        // The table's descriptor carries its key: the catalog and database it is created in
        // are part of its name wherever it prints (EXPLAIN, job names, errors).
        let key = self.catalog.key(&t.name);
        self.check_database_of(&key, "CreateTable", at)?;
        let table = CatalogTable::from_create(&CreateTable { name: key.clone(), ..t.clone() }, at)?;
        let exists = || {
            Error::validation(
                at,
                format!(
                    "Could not execute CreateTable in path {}: Table already exists",
                    Catalog::quoted_qualified(&key)
                ),
            )
        };
        if !crate::managed::is_managed(&table) {
            if !self.catalog.add(&t.name, CatalogEntry::Table(Box::new(table))) && !t.if_not_exists {
                return Err(exists());
            }
            return Ok(());
        }
        if t.primary_key.is_empty() {
            return Err(Error::validation(at, crate::managed::needs_key_message(&t.name)));
        }
        let store = match self.table_store(!self.dry_run)? {
            Some(store) => store,
            None => {
                // Explaining without a data directory: plans read an empty store in memory.
                let dir = crate::managed::store_dir(&self.settings);
                let store = TableStore::in_memory(&dir).map_err(|e| Error::Table(e.to_string()))?;
                self.registry.set_table_store(Some(Arc::clone(&store)));
                store
            }
        };
        match self.catalog.get(&t.name) {
            Some(CatalogEntry::Table(existing)) if t.if_not_exists && crate::managed::is_managed(existing) => {
                match crate::managed::difference(existing, t) {
                    Some(difference) => Err(Error::validation(at, crate::managed::differs_message(&key, &difference))),
                    None => Ok(()),
                }
            }
            Some(_) if t.if_not_exists => Ok(()),
            Some(_) => Err(exists()),
            None => {
                let definition = weir_planner::catalog::definition_text(t);
                let created = if self.dry_run && store.is_on_disk() {
                    weir_connectors::managed::validate(&table.descriptor)
                } else {
                    store.create(&table.descriptor, &definition)
                };
                created.map_err(|e| Error::validation(at, e.to_string()))?;
                self.catalog.add(&t.name, CatalogEntry::Table(Box::new(table)));
                Ok(())
            }
        }
    }
}

impl Session {
    /// `CREATE TABLE name WITH (…) AS query`: a table of the query's columns (names and types,
    /// time attributes dropped), then the query's rows inserted into it, as Flink's CTAS does.
    fn create_table_as(&mut self, t: &CreateTable, query: &sqlparser::ast::Query, at: Position) -> Result<()> {
        if !t.columns.is_empty() || !t.primary_key.is_empty() || t.watermark.is_some() {
            return Err(Error::UnsupportedAt {
                position: at,
                feature: "CREATE TABLE AS SELECT with its own columns, key or watermark".into(),
            });
        }
        let plan = self.planner()?.bind_query(query)?;
        let mut table = t.clone();
        table.query = None;
        table.columns = plan
            .fields
            .iter()
            .map(|f| {
                let mut data_type = f.data_type.clone();
                data_type.time_attribute = None;
                ColumnDef::Physical { name: f.name.clone(), data_type }
            })
            .collect();
        self.create_table(&table, at)?;
        let insert = weir_planner::parser::Insert {
            table: t.name.clone(),
            columns: Vec::new(),
            source: Box::new(query.clone()),
            on_conflict: None,
        };
        self.insert(&[insert], at)
    }
}
