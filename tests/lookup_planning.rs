//! How lookup joins are planned and explained: Flink's LookupJoin line with its async options,
//! the choices between sync, ordered, unordered and key-ordered lookups, and planning errors.
//! Nothing here connects to a database: planning only describes the lookups.

use weir::connectors::ConnectorRegistry;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

const TABLES: &str = "\
CREATE TABLE MyTable (a INT, b STRING, proctime AS PROCTIME()) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE AsyncLookupTable (id INT, name STRING, age INT) WITH \
  ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://localhost:5432/db', 'table-name' = 'users');
CREATE TABLE SyncLookupTable (id INT, name STRING, age INT) WITH ('connector' = 'hologres', \
  'endpoint' = 'localhost:80', 'dbname' = 'db', 'tablename' = 'users', 'username' = 'u', 'password' = 'p');
CREATE TABLE snk (a INT, id INT, name STRING, age INT) WITH ('connector' = 'blackhole');
CREATE VIEW counts AS SELECT a, COUNT(*) AS c, PROCTIME() AS proctime FROM MyTable GROUP BY a;
";

/// The EXPLAIN text of `statement` after `settings`, or the error as text.
fn explain(settings: &[(&str, &str)], statement: &str) -> Result<String, String> {
    let mut session = Session::new(
        RuntimeConfig::default().with_parallelism(2),
        ConnectorRegistry::default(),
        Box::new(std::io::sink()),
    );
    for (k, v) in settings {
        session.set(k, v).map_err(|e| e.to_string())?;
    }
    session.execute_script(TABLES).unwrap();
    session.explain_script(&format!("EXPLAIN {statement};")).map_err(|e| e.error.to_string())
}

fn lookup_line(plan: &str) -> String {
    plan.lines()
        .rev()
        .find(|l| l.contains("LookupJoin("))
        .map(|l| l.trim_start_matches([' ', '+', '-', ':']).to_string())
        .unwrap_or_else(|| panic!("no LookupJoin in {plan}"))
}

const LEFT_JOIN: &str = "SELECT T.a, D.id, D.name, D.age FROM MyTable AS T \
    LEFT JOIN AsyncLookupTable FOR SYSTEM_TIME AS OF T.proctime AS D ON T.a = D.id";

const UPDATING_JOIN: &str = "INSERT INTO snk SELECT T.a, D.id, D.name, D.age FROM counts AS T \
    JOIN AsyncLookupTable FOR SYSTEM_TIME AS OF T.proctime AS D ON T.a = D.id";

#[test]
fn explains_an_async_lookup_join_as_flink_does() {
    let plan = explain(&[], LEFT_JOIN).unwrap();
    assert_eq!(
        lookup_line(&plan),
        "LookupJoin(table=[default_catalog.default_database.AsyncLookupTable], joinType=[LeftOuterJoin], \
         lookup=[id=a], select=[a, id, name, age], async=[ORDERED, KEY_ORDERED: false, 180000ms, 100])"
    );
}

#[test]
fn unordered_output_only_for_insert_only_input() {
    let unordered = [("table.exec.async-lookup.output-mode", "ALLOW_UNORDERED")];
    assert!(lookup_line(&explain(&unordered, LEFT_JOIN).unwrap()).contains("async=[UNORDERED, KEY_ORDERED: false"));
    // Updating input keeps its order.
    assert!(lookup_line(&explain(&unordered, UPDATING_JOIN).unwrap()).contains("async=[ORDERED, KEY_ORDERED: false"));
}

#[test]
fn key_ordered_lookups_for_updating_input_hash_on_the_update_key() {
    let settings = [
        ("table.exec.async-lookup.output-mode", "ALLOW_UNORDERED"),
        ("table.exec.async-lookup.key-ordered-enabled", "true"),
    ];
    let plan = explain(&settings, &format!("JSON_EXECUTION_PLAN {UPDATING_JOIN}")).unwrap();
    assert!(lookup_line(&plan).contains("async=[ORDERED, KEY_ORDERED: true, 180000ms, 100]"), "{plan}");
    let json = plan.split("== Physical Execution Plan ==").nth(1).unwrap();
    let lookup = json.split("\"type\" : \"LookupJoin").nth(1).unwrap();
    assert!(lookup.split("} ]").next().unwrap().contains("\"ship_strategy\" : \"HASH\""), "{json}");
    // Insert-only input is not key-ordered, and neither is ORDERED output.
    assert!(lookup_line(&explain(&settings, LEFT_JOIN).unwrap()).contains("async=[UNORDERED, KEY_ORDERED: false"));
    let ordered = [("table.exec.async-lookup.key-ordered-enabled", "true")];
    assert!(lookup_line(&explain(&ordered, UPDATING_JOIN).unwrap()).contains("KEY_ORDERED: false"));
}

#[test]
fn the_lookup_hint_overrides_the_options_and_asks_for_retries_or_sync_lookups() {
    let hinted = LEFT_JOIN.replacen(
        "SELECT",
        "SELECT /*+ LOOKUP('table'='D', 'output-mode'='allow_unordered', 'capacity'='7', 'timeout'='5s', \
         'retry-predicate'='lookup_miss', 'retry-strategy'='fixed_delay', 'fixed-delay'='10s', 'max-attempts'='3') */",
        1,
    );
    assert!(lookup_line(&explain(&[], &hinted).unwrap())
        .ends_with("async=[UNORDERED, KEY_ORDERED: false, 5000ms, 7], retry=[lookup_miss, FIXED_DELAY, 10000ms, 3])"));
    let sync = LEFT_JOIN.replacen("SELECT", "SELECT /*+ LOOKUP('table'='AsyncLookupTable', 'async'='false') */", 1);
    assert!(lookup_line(&explain(&[], &sync).unwrap()).ends_with("select=[a, id, name, age])"));
    // A retry without its predicate is no retry, as in Flink.
    let no_retry = LEFT_JOIN.replacen("SELECT", "SELECT /*+ LOOKUP('table'='D', 'fixed-delay'='10s') */", 1);
    assert!(!lookup_line(&explain(&[], &no_retry).unwrap()).contains("retry="));
}

#[test]
fn a_table_with_only_sync_lookups_is_looked_up_synchronously() {
    let sync = "SELECT T.a, D.name FROM MyTable AS T JOIN SyncLookupTable FOR SYSTEM_TIME AS OF T.proctime AS D \
        ON T.a = D.id AND D.age > 18 AND T.b <> D.name";
    assert_eq!(
        lookup_line(&explain(&[], sync).unwrap()),
        "LookupJoin(table=[default_catalog.default_database.SyncLookupTable], joinType=[InnerJoin], lookup=[id=a], \
         where=[(age > 18)], joinCondition=[(b <> name)], select=[a, b, id, name, age])"
    );
}

#[test]
fn planning_errors_say_what_is_wrong_and_where() {
    let error = |q: &str| explain(&[], q).unwrap_err();
    assert!(error(
        "SELECT * FROM MyTable AS T JOIN AsyncLookupTable FOR SYSTEM_TIME AS OF T.proctime AS D ON T.a > D.id"
    )
    .contains("Temporal table join requires an equality condition on fields of table [default_catalog.default_database.AsyncLookupTable]."));
    assert!(error("SELECT * FROM MyTable AS T JOIN MyTable FOR SYSTEM_TIME AS OF T.proctime AS D ON T.a = D.a")
        .contains("connector 'datagen' of table 'default_catalog.default_database.MyTable' offers no lookups"));
    assert!(error("SELECT * FROM MyTable AS T JOIN AsyncLookupTable FOR SYSTEM_TIME AS OF T.a AS D ON T.a = D.id")
        .contains("only supports 'FOR SYSTEM_TIME AS OF' left table's time attribute field"));
    assert!(error("SELECT * FROM MyTable AS T JOIN AsyncLookupTable AS D USING (a)").contains("Joins without an ON"));
    assert!(error(&LEFT_JOIN.replacen("SELECT", "SELECT /*+ LOOKUP('capacity'='x') */", 1))
        .contains("Invalid LOOKUP hint: incomplete required option(s): 'table'"));
    assert!(error(&LEFT_JOIN.replacen("SELECT", "SELECT /*+ LOOKUP('table'='D', 'capacity'='x') */", 1))
        .contains("Invalid value 'x' for option 'capacity'"));
    let bad = explain(&[("table.exec.async-lookup.output-mode", "SOMETIMES")], LEFT_JOIN).unwrap_err();
    assert!(bad.contains("one of 'ORDERED', 'ALLOW_UNORDERED'"), "{bad}");
}
