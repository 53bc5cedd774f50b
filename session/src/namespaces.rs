//! `USE [CATALOG]`, `CREATE | DROP CATALOG | DATABASE` and `SHOW DATABASES`: the session's
//! catalogs and databases ([`weir_planner::namespaces`]) and which of them is current.

use super::Session;
use weir_planner::error::{Error, Position, Result};

impl Session {
    /// The catalog and database `written` names (`database` or `catalog.database`; the current
    /// one when `None`).
    ///
    /// # Errors
    /// Flink's message when there is no such database.
    pub(super) fn database_named(&self, written: Option<&str>, at: Position) -> Result<(String, String)> {
        let (current_catalog, current_database) = self.catalog.current();
        let (catalog, database) = match written.map(|w| w.split_once('.')) {
            None => (current_catalog, current_database),
            Some(Some((catalog, database))) => (catalog.to_string(), database.to_string()),
            Some(None) => (current_catalog, written.unwrap_or_default().to_string()),
        };
        if !self.catalog.namespaces().has_database(&catalog, &database) {
            return Err(Error::validation(
                at,
                format!("A database with name [{database}] does not exist in the catalog: [{catalog}]."),
            ));
        }
        Ok((catalog, database))
    }

    /// Checks that the database of the entry keyed `key` exists, before `statement` (Flink's
    /// `CreateTable`, `CreateView`) creates it there.
    ///
    /// # Errors
    /// Flink's messages: no such catalog, no such database in it.
    pub(super) fn check_database_of(&self, key: &str, statement: &str, at: Position) -> Result<()> {
        let [catalog, database, _] = weir_connectors::api::name_parts(key);
        if self.catalog.namespaces().has_database(catalog, database) {
            return Ok(());
        }
        if self.catalog.namespaces().databases(catalog).is_none() {
            return Err(Error::validation(at, format!("Catalog {catalog} does not exist.")));
        }
        Err(Error::validation(
            at,
            format!(
                "Could not execute {statement} in path {}: Database {database} does not exist in Catalog {catalog}.",
                weir_planner::catalog::Catalog::quoted_qualified(key)
            ),
        ))
    }

    /// `USE CATALOG name` (its default database becomes current too) or `USE [catalog.]database`.
    pub(super) fn use_namespace(&mut self, name: &str, catalog: bool, at: Position) -> Result<()> {
        let (catalog, database) = if catalog {
            let database = self.catalog.namespaces().default_database(name).map_err(|m| Error::validation(at, m))?;
            (name.to_string(), database)
        } else {
            self.database_named(Some(name), at)?
        };
        self.catalog.set_current(&catalog, &database);
        Ok(())
    }

    /// `SHOW DATABASES [FROM | IN catalog] [[NOT] LIKE 'pattern']`.
    pub(super) fn show_databases(
        &mut self,
        catalog: Option<&str>,
        like: Option<&(bool, String)>,
        at: Position,
    ) -> Result<()> {
        let catalog = catalog.map_or_else(|| self.catalog.current().0, str::to_string);
        let Some(databases) = self.catalog.namespaces().databases(&catalog) else {
            return Err(Error::validation(at, format!("Catalog {catalog} does not exist.")));
        };
        let databases = super::describe::matching(databases, like, at)?;
        self.show_list("database name", &databases)
    }

    /// `CREATE CATALOG name WITH (…)` or `CREATE DATABASE [catalog.]name`.
    pub(super) fn create_namespace(
        &mut self,
        kind: &str,
        name: &str,
        if_not_exists: bool,
        options: &[(String, String)],
        at: Position,
    ) -> Result<()> {
        let created = if kind == "CATALOG" {
            self.catalog.namespaces_mut().create_catalog(name, options, if_not_exists)
        } else {
            let current = self.catalog.current().0;
            let (catalog, database) = name.split_once('.').unwrap_or((&current, name));
            self.catalog.namespaces_mut().create_database(catalog, database, if_not_exists)
        };
        created.map(drop).map_err(|message| Error::validation(at, message))
    }

    /// `DROP CATALOG name` (with its tables and views) or `DROP DATABASE [catalog.]name
    /// [RESTRICT | CASCADE]`: a database that holds tables or views goes only with `CASCADE`.
    pub(super) fn drop_namespace(
        &mut self,
        kind: &str,
        name: &str,
        if_exists: bool,
        cascade: bool,
        at: Position,
    ) -> Result<()> {
        let (current_catalog, current_database) = self.catalog.current();
        if kind == "CATALOG" {
            let dropped = self
                .catalog
                .namespaces_mut()
                .drop_catalog(name, if_exists, &current_catalog)
                .map_err(|m| Error::validation(at, m))?;
            if dropped {
                self.catalog.remove_namespace(name, None);
            }
            return Ok(());
        }
        let (catalog, database) = name.split_once('.').unwrap_or((&current_catalog, name));
        let current = (current_catalog.as_str(), current_database.as_str());
        let exists = self
            .catalog
            .namespaces()
            .check_drop_database((catalog, database), name, if_exists, current)
            .map_err(|m| Error::validation(at, m))?;
        if !exists {
            return Ok(());
        }
        if !cascade && !self.catalog.names_in(catalog, database).is_empty() {
            return Err(Error::validation(
                at,
                format!(
                    "Could not execute DROP DATABASE {name} RESTRICT: Database {database} in catalog {catalog} is not empty."
                ),
            ));
        }
        self.catalog.remove_namespace(catalog, Some(database));
        self.catalog.namespaces_mut().drop_database(catalog, database);
        Ok(())
    }
}
