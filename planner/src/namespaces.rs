//! Catalogs and their databases, as Flink's catalog manager keeps them: `default_catalog` with
//! `default_database` from the start, more in-memory catalogs from `CREATE CATALOG … WITH
//! ('type' = 'generic_in_memory')` (each starting with the database `default`), more databases
//! from `CREATE DATABASE`. The messages are Flink's, from the exception that causes each failure.

use std::collections::{BTreeMap, BTreeSet};

use weir_connectors::api::{DEFAULT_CATALOG, DEFAULT_DATABASE};

/// The one catalog type weir has: Flink's in-memory catalog.
pub const IN_MEMORY: &str = "generic_in_memory";

/// The option of `generic_in_memory` naming the database a new catalog starts with.
const DEFAULT_DATABASE_OPTION: &str = "default-database";

/// What an in-memory catalog starts with when `default-database` is not given.
const IN_MEMORY_DEFAULT_DATABASE: &str = "default";

/// One catalog: its databases and the one `USE CATALOG` makes current.
#[derive(Debug, Clone, PartialEq)]
struct CatalogSpace {
    default_database: String,
    databases: BTreeSet<String>,
}

/// Every catalog and its databases.
#[derive(Debug, Clone, PartialEq)]
pub struct Namespaces {
    catalogs: BTreeMap<String, CatalogSpace>,
}

impl Default for Namespaces {
    fn default() -> Self {
        let default = CatalogSpace {
            default_database: DEFAULT_DATABASE.to_string(),
            databases: BTreeSet::from([DEFAULT_DATABASE.to_string()]),
        };
        Namespaces { catalogs: BTreeMap::from([(DEFAULT_CATALOG.to_string(), default)]) }
    }
}

impl Namespaces {
    /// The catalogs' names, sorted.
    pub fn catalogs(&self) -> Vec<String> {
        self.catalogs.keys().cloned().collect()
    }

    /// The databases of `catalog`, sorted; `None` when there is no such catalog.
    pub fn databases(&self, catalog: &str) -> Option<Vec<String>> {
        self.catalogs.get(catalog).map(|c| c.databases.iter().cloned().collect())
    }

    /// Whether `catalog` has `database`.
    pub fn has_database(&self, catalog: &str, database: &str) -> bool {
        self.catalogs.get(catalog).is_some_and(|c| c.databases.contains(database))
    }

    /// The database `USE CATALOG catalog` makes current.
    ///
    /// # Errors
    /// Flink's message when there is no such catalog.
    pub fn default_database(&self, catalog: &str) -> Result<String, String> {
        match self.catalogs.get(catalog) {
            Some(c) => Ok(c.default_database.clone()),
            None => Err(format!("A catalog with name [{catalog}] does not exist.")),
        }
    }

    /// `CREATE CATALOG name WITH (options)`; `Ok(false)` when it exists and `if_not_exists`.
    ///
    /// # Errors
    /// Flink's messages: a catalog of that name, no `type`, a type weir does not have.
    pub fn create_catalog(
        &mut self,
        name: &str,
        options: &[(String, String)],
        if_not_exists: bool,
    ) -> Result<bool, String> {
        if self.catalogs.contains_key(name) {
            if if_not_exists {
                return Ok(false);
            }
            return Err(format!("Could not execute CREATE CATALOG: Catalog {name} already exists."));
        }
        let option = |key: &str| options.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        match option("type") {
            Some(IN_MEMORY) => {}
            Some(other) => {
                return Err(format!(
                    "Unable to create catalog '{name}'. Could not find any factory for identifier '{other}' that \
                     implements 'org.apache.flink.table.factories.CatalogFactory' in the classpath. (weir has the \
                     catalog type '{IN_MEMORY}'.)"
                ))
            }
            None => {
                return Err(format!(
                    "Unable to create catalog '{name}'. Catalog options do not contain an option key 'type' for \
                     discovering a catalog."
                ))
            }
        }
        let database = option(DEFAULT_DATABASE_OPTION).unwrap_or(IN_MEMORY_DEFAULT_DATABASE).to_string();
        let space = CatalogSpace { default_database: database.clone(), databases: BTreeSet::from([database]) };
        self.catalogs.insert(name.to_string(), space);
        Ok(true)
    }

    /// `DROP CATALOG name`; `Ok(false)` when there is none and `if_exists`. `current` is the
    /// catalog in use, which cannot be dropped.
    ///
    /// # Errors
    /// Flink's messages: no such catalog, the catalog in use.
    pub fn drop_catalog(&mut self, name: &str, if_exists: bool, current: &str) -> Result<bool, String> {
        if !self.catalogs.contains_key(name) {
            if if_exists {
                return Ok(false);
            }
            return Err(format!("Could not execute DROP CATALOG: Catalog {name} does not exist."));
        }
        if name == current {
            return Err("Could not execute DROP CATALOG: Cannot drop a catalog which is currently in use.".into());
        }
        self.catalogs.remove(name);
        Ok(true)
    }

    /// `CREATE DATABASE catalog.database`; `Ok(false)` when it exists and `if_not_exists`.
    ///
    /// # Errors
    /// Flink's messages: no such catalog, a database of that name.
    pub fn create_database(&mut self, catalog: &str, database: &str, if_not_exists: bool) -> Result<bool, String> {
        let Some(space) = self.catalogs.get_mut(catalog) else {
            return Err(format!("Catalog {catalog} does not exist."));
        };
        if space.databases.contains(database) {
            if if_not_exists {
                return Ok(false);
            }
            return Err(format!(
                "Could not execute CREATE DATABASE: Database {database} already exists in Catalog {catalog}."
            ));
        }
        space.databases.insert(database.to_string());
        Ok(true)
    }

    /// Checks that `catalog.database` can be dropped (`written` is the statement's name, for the
    /// message); `Ok(false)` when it does not exist and `if_exists`.
    ///
    /// # Errors
    /// Flink's messages: no such catalog or database, the database in use.
    pub fn check_drop_database(
        &self,
        (catalog, database): (&str, &str),
        written: &str,
        if_exists: bool,
        current: (&str, &str),
    ) -> Result<bool, String> {
        let Some(space) = self.catalogs.get(catalog) else {
            return Err(format!("Catalog {catalog} does not exist."));
        };
        if !space.databases.contains(database) {
            if if_exists {
                return Ok(false);
            }
            return Err(format!(
                "Could not execute DROP DATABASE {written} RESTRICT: Database {database} does not exist in Catalog {catalog}."
            ));
        }
        if (catalog, database) == current {
            return Err(format!(
                "Could not execute DROP DATABASE {written} RESTRICT: Cannot drop a database which is currently in use."
            ));
        }
        Ok(true)
    }

    /// Drops `catalog.database` (checked by [`Namespaces::check_drop_database`]).
    pub fn drop_database(&mut self, catalog: &str, database: &str) {
        if let Some(space) = self.catalogs.get_mut(catalog) {
            space.databases.remove(database);
        }
    }
}
