//! The tables of the state compatibility examples (docs/compat.md) and scripts that write a
//! query of them into a sink, as `weir compat` compares them.

use weir::connectors::ConnectorRegistry;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

/// `MyTable` as the rules' examples declare it, and sinks of every shape the examples write.
pub const TABLES: &str = "
CREATE TEMPORARY TABLE MyTable (
  a int, b bigint, c varchar, d int, ts timestamp(3),
  proctime as proctime(),
  watermark for ts AS ts - interval '1' second
) WITH ('connector' = 'datagen');
CREATE TEMPORARY TABLE MyTable2 (
  a int, b bigint, c varchar, d int, ts timestamp(3),
  watermark for ts AS ts - interval '1' second
) WITH ('connector' = 'datagen');
CREATE TABLE out1 (x1 STRING) WITH ('connector' = 'print');
CREATE TEMPORARY TABLE Rates (
  currency varchar, rate int, ts timestamp(3),
  PRIMARY KEY (currency) NOT ENFORCED,
  watermark for ts AS ts
) WITH ('connector' = 'datagen');
";

pub fn session(set: &[(&str, &str)]) -> Session {
    let runtime = RuntimeConfig::default().with_parallelism(2);
    let mut session = Session::new(runtime, ConnectorRegistry::default(), Box::new(std::io::sink()));
    for (k, v) in set {
        session.set(k, v).unwrap();
    }
    session
}

/// `INSERT INTO out` of `query`, after [`TABLES`] and a blackhole sink `out` of the query's
/// columns (the sink is the same table in both scripts; only its columns follow the query).
pub fn script(query: &str) -> String {
    let mut planning = session(&[]);
    planning.execute_script(TABLES).unwrap();
    let statement = weir::planner::parser::parse_script(query).unwrap().remove(0);
    let weir::planner::parser::Statement::Query(parsed) = &statement.statement else { panic!("{query} is no query") };
    let plan = planning.planner().unwrap().bind_query(parsed).unwrap_or_else(|e| panic!("{query}: {e}"));
    // A time attribute's type prints with its mark (`TIMESTAMP(3) *ROWTIME*`); the sink's is plain.
    let type_of = |f: &weir::runtime::Field| f.data_type.to_string().split(" *").next().unwrap_or_default().to_string();
    let columns: Vec<String> = plan.fields.iter().map(|f| format!("`{}` {}", f.name, type_of(f))).collect();
    format!(
        "{TABLES}\nCREATE TABLE `out` ({}) WITH ('connector' = 'blackhole');\nINSERT INTO `out` {query};\n",
        columns.join(", ")
    )
}
