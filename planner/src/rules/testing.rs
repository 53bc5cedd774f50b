//! A fixture for the rules' snapshot tests: tables declared in SQL, queries bound against them,
//! plans printed before and after a rule ([`crate::explain::logical_plan_text`]).

use weir_runtime::RuntimeConfig;

use crate::explain::logical_plan_text;
use crate::parser::{parse_script, Statement};
use crate::plan::Plan;
use crate::session::Session;

/// A session holding the tables of a test.
pub(crate) struct Fixture {
    session: Session,
    _store: tempfile::TempDir,
}

impl Fixture {
    /// A session that ran `ddl` (managed tables live in a directory of their own).
    pub fn new(ddl: &str) -> Self {
        let store = tempfile::tempdir().expect("a temporary directory");
        let registry = weir_connectors::ConnectorRegistry::default();
        let mut session = Session::new(RuntimeConfig::default(), registry, Box::new(std::io::sink()));
        session.set("table.store.path", &store.path().display().to_string()).expect("a text setting");
        session.execute_script(ddl).unwrap_or_else(|e| panic!("{ddl}: {}", e.error));
        Fixture { session, _store: store }
    }

    /// A session holding `bids (item STRING, price INT, ts TIMESTAMP(3))`, a datagen table
    /// whose `ts` is its rowtime: the table of the window and rank rules' tests.
    pub fn bids() -> Self {
        Fixture::new(
            "CREATE TABLE bids (item STRING, price INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) \
             WITH ('connector' = 'datagen');",
        )
    }

    /// The bound logical plan of query `sql`.
    pub fn bind(&self, sql: &str) -> Plan {
        let statements = parse_script(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        let Some(Statement::Query(query)) = statements.into_iter().next().map(|l| l.statement) else {
            panic!("{sql} is not a query");
        };
        let planner = self.session.planner().expect("planner settings");
        planner.bind_query(&query).unwrap_or_else(|e| panic!("{sql}: {e}"))
    }
}

impl Fixture {
    /// The physical plans (distributed) of the INSERT or statement set `sql`.
    pub fn physical(&self, sql: &str) -> Vec<crate::physical::PhysicalNode> {
        let located = parse_script(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).remove(0);
        let inserts = match located.statement {
            Statement::Insert(insert) => vec![insert],
            Statement::StatementSet(inserts) => inserts,
            _ => panic!("{sql} is not an INSERT"),
        };
        let planner = self.session.planner_with(located.query_hints.clone()).expect("planner settings");
        planner.physical_inserts(&inserts, located.position).unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// Sets `key` for the plans that follow.
    pub fn set(&mut self, key: &str, value: &str) {
        self.session.set(key, value).expect("a valid setting");
    }
}

/// `before` and `after` drawn one above the other, for a snapshot.
pub(crate) fn before_after(before: &Plan, after: &Plan) -> String {
    format!("before:\n{}after:\n{}", logical_plan_text(before), logical_plan_text(after))
}
