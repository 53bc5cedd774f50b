//! A fixture for the planner's tests: tables declared in SQL, queries bound against them,
//! plans printed before and after a rule ([`crate::explain::logical_plan_text`]), physical plans
//! distributed. It holds what a session would hand the planner: a catalog, the connectors and
//! the settings.

use std::sync::Arc;

use weir_connectors::managed::TableStore;
use weir_connectors::ConnectorRegistry;
use weir_runtime::settings::Settings;
use weir_runtime::RuntimeConfig;

use crate::catalog::{definition_text, Catalog, CatalogEntry, CatalogTable};
use crate::explain::logical_plan_text;
use crate::hints::QueryHints;
use crate::parser::{parse_script, CreateTable, Statement};
use crate::phases::Planner;
use crate::plan::Plan;

/// The tables and settings of a test.
pub(crate) struct Fixture {
    catalog: Catalog,
    registry: ConnectorRegistry,
    settings: Settings,
    runtime: RuntimeConfig,
}

impl Fixture {
    /// The tables `ddl` creates (`CREATE TABLE` statements; a managed table, one without a
    /// connector, in a table store in memory).
    pub fn new(ddl: &str) -> Self {
        let mut catalog = Catalog::default();
        let mut registry = ConnectorRegistry::default();
        let store = TableStore::in_memory(std::path::Path::new("managed")).expect("a table store in memory");
        registry.set_table_store(Some(Arc::clone(&store)));
        for located in parse_script(ddl).unwrap_or_else(|e| panic!("{ddl}: {e}")) {
            let Statement::CreateTable(t) = located.statement else { panic!("{ddl}: the fixture creates tables only") };
            let key = catalog.key(&t.name);
            let created = CreateTable { name: key, ..*t.clone() };
            let table = CatalogTable::from_create(&created, located.position).unwrap_or_else(|e| panic!("{ddl}: {e}"));
            if weir_connectors::managed::is_managed(&table.descriptor) {
                store.create(&table.descriptor, &definition_text(&created)).unwrap_or_else(|e| panic!("{ddl}: {e}"));
            }
            catalog.add(&t.name, CatalogEntry::Table(Box::new(table)));
        }
        let settings = crate::settings::planner_settings();
        Fixture { catalog, registry, settings, runtime: RuntimeConfig::default() }
    }

    /// A fixture holding `bids (item STRING, price INT, ts TIMESTAMP(3))`, a datagen table
    /// whose `ts` is its rowtime: the table of the window and rank rules' tests.
    pub fn bids() -> Self {
        Fixture::new(
            "CREATE TABLE bids (item STRING, price INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) \
             WITH ('connector' = 'datagen');",
        )
    }

    /// A planner over the fixture's tables and settings, with the query hints `hints`.
    fn planner(&self, hints: QueryHints) -> Planner<'_> {
        let runtime = self.runtime.configured(&self.settings);
        let (parallelism, clock) = (runtime.default_parallelism, Arc::clone(&runtime.clock));
        Planner::new(&self.catalog, &self.registry, &self.settings, hints, &[], parallelism, clock)
            .expect("planner settings")
    }

    /// The bound logical plan of query `sql`.
    pub fn bind(&self, sql: &str) -> Plan {
        let statements = parse_script(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        let Some(Statement::Query(query)) = statements.into_iter().next().map(|l| l.statement) else {
            panic!("{sql} is not a query");
        };
        self.planner(QueryHints::default()).bind_query(&query).unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The physical plans (distributed) of the INSERT or statement set `sql`.
    pub fn physical(&self, sql: &str) -> Vec<crate::physical::PhysicalNode> {
        let located = parse_script(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).remove(0);
        let inserts = match located.statement {
            Statement::Insert(insert) => vec![insert],
            Statement::StatementSet(inserts) => inserts,
            _ => panic!("{sql} is not an INSERT"),
        };
        let planner = self.planner(located.query_hints.clone());
        planner.physical_inserts(&inserts, located.position).unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// Sets `key` for the plans that follow.
    pub fn set(&mut self, key: &str, value: &str) {
        self.settings.set(key, value).expect("a valid setting");
    }
}

/// `before` and `after` drawn one above the other, for a snapshot.
pub(crate) fn before_after(before: &Plan, after: &Plan) -> String {
    format!("before:\n{}after:\n{}", logical_plan_text(before), logical_plan_text(after))
}
