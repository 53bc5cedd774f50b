//! EXPLAIN in Confluent Cloud's format (`SET 'weir.explain.format' = 'confluent'`), against the
//! verbatim examples of Confluent's documentation and labs that weir plans the same way. Where
//! weir's output differs, the expected text is the verbatim example with the differences applied
//! one by one, each with its reason (its catalog names; its Kafka sources, which take no
//! projection and assign watermarks inside the scan).
//!
//! Covered: the basic anti-join (1, one Calc less: Confluent's table has system columns), INSERT VALUES
//! (2), the statement set with source reuse (3), the window aggregate and its missing-`window_end`
//! variant (5, with the warning), the warnings of (7) and (8) verbatim, the deduplication and the
//! group aggregate of (10). Not covered: (4) and (9) read upsert Kafka tables through
//! `ChangelogNormalize`, which weir's connectors do not produce; (6) is a CREATE TABLE AS.

use weir::connectors::ConnectorRegistry;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

/// The EXPLAIN text of the last statement of `script`, in Confluent's format.
fn explain(script: &str) -> String {
    let mut session = Session::new(
        RuntimeConfig::default().with_parallelism(2),
        ConnectorRegistry::default(),
        Box::new(std::io::sink()),
    );
    session.set("weir.explain.format", "confluent").unwrap();
    session.explain_script(script).unwrap_or_else(|e| panic!("{}", e.in_statement()))
}

/// `reference` with each `(from, to, why)` replacement applied (each must apply).
fn adapted(reference: &str, changes: &[(&str, &str, &str)]) -> String {
    let mut text = reference.to_string();
    for (from, to, why) in changes {
        assert!(text.contains(from), "the change '{why}' does not apply: no '{from}'");
        text = text.replace(from, to);
    }
    text
}

#[track_caller]
fn assert_text(actual: &str, expected: &str) {
    let (actual, expected) = (actual.trim_end(), expected.trim_end());
    if actual != expected {
        panic!("EXPLAIN differs.\n--- weir ---\n{actual}\n--- expected ---\n{expected}\n");
    }
}

const CATALOG: (&str, &str, &str) =
    ("`examples`.`marketplace`", "`default_catalog`.`default_database`", "weir's catalog and database");

/// A.9 (2): INSERT VALUES.
#[test]
fn insert_values() {
    let reference = "== Physical Plan ==

StreamSink [3]
  +- StreamCalc [2]
    +- StreamValues [1]

== Physical Details ==

[1] StreamValues
Changelog mode: append
State size: low

[3] StreamSink
Table: `catalogs`.`database`.`orders`
Changelog mode: append
State size: low
";
    let script = "CREATE TABLE orders (order_id INT, customer_id INT, order_date DATE, price DOUBLE) WITH ('connector' = 'blackhole');
EXPLAIN INSERT INTO orders VALUES
  (1, 1001, '2023-02-24', 50.0),
  (2, 1002, '2023-02-25', 60.0),
  (3, 1003, '2023-02-26', 70.0);";
    let expected = adapted(reference, &[("`catalogs`.`database`", "`default_catalog`.`default_database`", "catalog")]);
    assert_text(&explain(script), &expected);
}

/// A.9 (3): a statement set reading one source twice.
#[test]
fn statement_set_with_source_reuse() {
    let reference = "== Physical Plan ==

StreamSink [3]
  +- StreamCalc [2]
    +- StreamTableSourceScan [1]

StreamSink [5]
  +- StreamCalc [4]
    +- (reused) [1]

== Physical Details ==

[1] StreamTableSourceScan
Table: `examples`.`marketplace`.`orders`
Changelog mode: append
State size: low

[3] StreamSink
Table: `catalog`.`database`.`low_orders`
Changelog mode: append
State size: low

[5] StreamSink
Table: `catalog`.`database`.`high_orders`
Changelog mode: append
State size: low
";
    let script = "CREATE TABLE orders (order_id INT, customer_id INT, product_id STRING, price DOUBLE) WITH ('connector' = 'datagen');
CREATE TABLE low_orders (order_id INT, customer_id INT, product_id STRING, price DOUBLE) WITH ('connector' = 'blackhole');
CREATE TABLE high_orders (order_id INT, customer_id INT, product_id STRING, price DOUBLE) WITH ('connector' = 'blackhole');
EXPLAIN STATEMENT SET
BEGIN
  INSERT INTO low_orders SELECT * from `orders` where price < 100;
  INSERT INTO high_orders SELECT * from `orders` where price > 100;
END;";
    let expected = adapted(
        reference,
        &[CATALOG, ("`catalog`.`database`", "`default_catalog`.`default_database`", "catalog of the sinks")],
    );
    assert_text(&explain(script), &expected);
}

/// A.9 (10): a group aggregate over a table with a primary key, with HAVING.
#[test]
fn group_aggregate_with_having() {
    let reference = "== Physical Plan ==

StreamSink [6]
  +- StreamCalc [5]
    +- StreamGroupAggregate [4]
      +- StreamExchange [3]
        +- StreamCalc [2]
          +- StreamTableSourceScan [1]

== Physical Details ==

[1] StreamTableSourceScan
Table: `j9r-env`.`j9r-kafka`.`transactions`
Primary key: (txn_id)
Changelog mode: append
Upsert key: (txn_id)
State size: low
Startup mode: earliest-offset

[4] StreamGroupAggregate
Changelog mode: retract
Upsert key: (account_number,transaction_type)
State size: medium
State TTL: never

[5] StreamCalc
Changelog mode: retract
Upsert key: (account_number,transaction_type)

[6] StreamSink
Table: Foreground
Changelog mode: retract
Upsert key: (account_number,transaction_type)
State size: low
";
    let script = "CREATE TABLE transactions (txn_id STRING, account_number STRING, transaction_type STRING, amount DOUBLE,
  PRIMARY KEY (txn_id) NOT ENFORCED) WITH ('connector' = 'datagen');
EXPLAIN SELECT account_number, transaction_type, SUM(amount) FROM transactions WHERE transaction_type = 'withdrawal' GROUP BY account_number, transaction_type HAVING SUM(amount) > 5000;";
    let expected = adapted(
        reference,
        &[
            ("`j9r-env`.`j9r-kafka`", "`default_catalog`.`default_database`", "catalog"),
            ("Startup mode: earliest-offset\n", "", "a Kafka source's option"),
        ],
    );
    assert_text(&explain(script), &expected);
}

const CLICKS: &str = "CREATE TABLE clicks (user_id INT, url STRING, user_agent STRING, view_time INT,
  `$rowtime` TIMESTAMP_LTZ(3), WATERMARK FOR `$rowtime` AS `$rowtime`) WITH ('connector' = 'datagen');";

/// The source document's window example: grouped by `window_start` only, it is a regular
/// aggregate and EXPLAIN warns; with `window_end` too, a window aggregate and no warning.
#[test]
fn a_window_group_by_without_window_end_is_a_regular_aggregate_with_a_warning() {
    let query = |group_by: &str| {
        format!(
            "{CLICKS}\nEXPLAIN SELECT\nwindow_time,\nAVG(CAST(view_time AS DOUBLE)) AS avg_viewtime\n\
             FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(`$rowtime`), INTERVAL '1' MINUTE))\nGROUP BY {group_by}"
        )
    };
    // Generation 1 of the example (Advent of Flink, Day 2), in today's names. Confluent's Kafka
    // scan assigns watermarks inside; datagen's are assigned by a WatermarkAssigner right after
    // the scan (as Flink plans datagen), so the nodes above it are numbered one higher.
    let windowed = explain(&query("window_end, window_start, window_time"));
    let reference_tree = "StreamSink [7]
  +- StreamCalc [6]
    +- StreamGlobalWindowAggregate [5]
      +- StreamExchange [4]
        +- StreamLocalWindowAggregate [3]
          +- StreamCalc [2]
            +- StreamTableSourceScan [1]";
    let expected_tree = "StreamSink [8]
  +- StreamCalc [7]
    +- StreamGlobalWindowAggregate [6]
      +- StreamExchange [5]
        +- StreamLocalWindowAggregate [4]
          +- StreamCalc [3]
            +- StreamWatermarkAssigner [2]
              +- StreamTableSourceScan [1]";
    assert!(windowed.contains(expected_tree), "{windowed}");
    // Node for node, the reference's plan but for the watermark assigner.
    let nodes = |tree: &str| -> Vec<String> {
        tree.lines()
            .filter_map(|l| l.trim_start_matches([' ', '+', '-', ':']).split(" [").next().map(str::to_string))
            .filter(|n| n != "StreamWatermarkAssigner")
            .collect()
    };
    let printed = windowed.split("\n\n").nth(1).unwrap();
    assert_eq!(nodes(printed), nodes(reference_tree), "{windowed}");
    assert!(!windowed.contains("== Warnings =="), "{windowed}");
    assert!(
        windowed.contains("[8] StreamSink\nTable: Foreground\nChangelog mode: append\nState size: low"),
        "{windowed}"
    );

    let regular = explain(&query("window_start, window_time"));
    let expected_tree = "StreamSink [9]
  +- StreamCalc [8]
    +- StreamGroupAggregate [7]
      +- StreamExchange [6]
        +- StreamCalc [5]
          +- StreamWindowTableFunction [4]
            +- StreamCalc [3]
              +- StreamWatermarkAssigner [2]
                +- StreamTableSourceScan [1]";
    assert!(regular.contains(expected_tree), "{regular}");
    assert!(regular.contains("[7] StreamGroupAggregate\nChangelog mode: retract\n"), "{regular}");
    assert!(regular.contains("[9] StreamSink\nTable: Foreground\nChangelog mode: retract\n"), "{regular}");
    let warning = "== Warnings ==\n\nCritical for StreamGroupAggregate [7]: Your query contains only \"window_start\" in the \
GROUP BY clause, with no corresponding \"window_end\". This means that the query is considered a regular aggregation query \
and not a windowed aggregation, which can result in unexpected, continuously updating output and higher CFU consumption. \
if you want a windowed aggregation in your query, ensure that you include both \"window_start\" and \"window_end\" in the \
GROUP BY clause. For more information, see https://cnfl.io/regular_vs_window_aggregation.";
    assert!(regular.trim_end().ends_with(warning), "{regular}");
    // Only window_end: the same, the other way round.
    let only_end = explain(&query("window_end, window_time"));
    assert!(only_end
        .contains("contains only \"window_end\" in the GROUP BY clause, with no corresponding \"window_start\""));
}

/// A.9 (5): a statement set of two window aggregates over one source; the source is shared.
#[test]
fn statement_set_of_window_aggregates_shares_the_source() {
    let sinks = "CREATE TABLE clicks_view_time_1m (window_time TIMESTAMP_LTZ(3), avg_viewtime DOUBLE) WITH ('connector' = 'blackhole');
CREATE TABLE clicks_view_time_1h (window_time TIMESTAMP_LTZ(3), avg_viewtime DOUBLE) WITH ('connector' = 'blackhole');";
    let insert = |sink: &str, size: &str| {
        format!(
            "INSERT INTO `{sink}` SELECT window_time, AVG(CAST(view_time AS DOUBLE)) AS avg_viewtime \
             FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(`$rowtime`), INTERVAL '1' {size})) GROUP BY window_start, window_end, window_time;"
        )
    };
    let script = format!(
        "{CLICKS}\n{sinks}\nEXPLAIN STATEMENT SET BEGIN\n{}\n{}\nEND;",
        insert("clicks_view_time_1m", "MINUTE"),
        insert("clicks_view_time_1h", "HOUR")
    );
    let text = explain(&script);
    // Confluent shares the node after its scan (`(reused) [2]`); so does weir, the watermark
    // assigner over the shared scan, as Flink reuses it.
    let expected = "StreamSink [8]
  +- StreamCalc [7]
    +- StreamGlobalWindowAggregate [6]
      +- StreamExchange [5]
        +- StreamLocalWindowAggregate [4]
          +- StreamCalc [3]
            +- StreamWatermarkAssigner [2]
              +- StreamTableSourceScan [1]

StreamSink [14]
  +- StreamCalc [13]
    +- StreamGlobalWindowAggregate [12]
      +- StreamExchange [11]
        +- StreamLocalWindowAggregate [10]
          +- StreamCalc [9]
            +- (reused) [2]";
    assert!(text.contains(expected), "{text}");
    assert!(
        text.contains("[14] StreamSink\nTable: `default_catalog`.`default_database`.`clicks_view_time_1h`\n"),
        "{text}"
    );
}

/// A.9 (7) and (8): the warnings of a join of two append-only inputs (state `high`, no TTL)
/// and of an upsert sink whose primary key is not the query's upsert key, verbatim.
#[test]
fn high_state_and_primary_key_warnings() {
    let tables = "CREATE TABLE transactions_faker (txn_id STRING, account_number STRING, amount DOUBLE) WITH ('connector' = 'datagen');
CREATE TABLE customers_pk (account_number STRING, city STRING, PRIMARY KEY (account_number) NOT ENFORCED) WITH ('connector' = 'datagen');
CREATE TABLE city_spend_report (city STRING, total_spent DOUBLE, transaction_count BIGINT, PRIMARY KEY (total_spent) NOT ENFORCED) WITH ('connector' = 'blackhole');";
    let query = "SELECT c.city, SUM(t.amount) AS total_spent, COUNT(t.txn_id) AS transaction_count
FROM transactions_faker AS t
JOIN customers_pk AS c ON t.account_number = c.account_number
GROUP BY c.city";
    let high = "Your query includes one or more highly state-intensive operators but does not set a time-to-live (TTL) value, which means that the system potentially needs to store an infinite amount of state. This can result in a DEGRADED statement and higher CFU consumption. If possible, change your query to use a different operator, or set a time-to-live (TTL) value. For more information, see https://cnfl.io/high_state_intensive_operators.";
    let text = explain(&format!("{tables}\nEXPLAIN {query};"));
    assert!(text.contains("StreamJoin [") && text.contains("\nState size: high\nState TTL: never\n"), "{text}");
    assert!(text.trim_end().ends_with(&format!("== Warnings ==\n\nCritical for entire query: {high}")), "{text}");
    // With a TTL, the join's state is bounded: no warning, and the TTL is shown.
    let ttl = explain(&format!("{tables}\nSET 'table.exec.state.ttl' = '12 h';\nEXPLAIN {query};"));
    assert!(!ttl.contains("== Warnings ==") && ttl.contains("State size: high\nState TTL: 12 h\n"), "{ttl}");

    let insert = format!("{tables}\nEXPLAIN INSERT INTO city_spend_report {query} ON CONFLICT DO DEDUPLICATE;");
    let text = explain(&insert);
    let sink =
        text.lines().find(|l| l.starts_with("StreamSink [")).unwrap().trim_start_matches("StreamSink ").to_string();
    let reference = "1. Critical for StreamSink [14]: The primary key does not match the upsert key derived from the query. If the primary key and upsert key don't match, the system needs to add a state-intensive operation for correction. Please revisit the query (upsert key: [city]) or the table declaration for `my_env`.`cluster_0`.`city_spend_report` (primary key: [total_spent]). Grouping, partitioning, and joining operations should reference the upsert keys of the source tables. For more information, see https://cnfl.io/primary_vs_upsert_key.
2. Critical for entire query: Your query includes one or more highly state-intensive operators but does not set a time-to-live (TTL) value, which means that the system potentially needs to store an infinite amount of state. This can result in a DEGRADED statement and higher CFU consumption. If possible, change your query to use a different operator, or set a time-to-live (TTL) value. For more information, see https://cnfl.io/high_state_intensive_operators.";
    let expected = adapted(
        reference,
        &[
            ("`my_env`.`cluster_0`", "`default_catalog`.`default_database`", "catalog"),
            ("[14]", &sink, "weir's numbering"),
        ],
    );
    assert!(text.trim_end().ends_with(&format!("== Warnings ==\n\n{expected}")), "{text}");
    let sink_details = format!(
        "{} StreamSink\nTable: `default_catalog`.`default_database`.`city_spend_report`\nPrimary key: (total_spent)\nChangelog mode: upsert\nUpsert key: (city)\nState size: high\nState TTL: never\n",
        sink
    );
    assert!(text.contains(&sink_details), "{text}");
}

/// A SESSION window without PARTITION BY runs on one task: EXPLAIN says so.
#[test]
fn a_session_window_without_partition_by_is_warned_about() {
    let query = |partition: &str, keys: &str| {
        format!(
            "{CLICKS}\nEXPLAIN SELECT {keys}window_start, window_end, COUNT(*) FROM TABLE(SESSION(TABLE clicks{partition}, \
             DESCRIPTOR(`$rowtime`), INTERVAL '1' MINUTE)) GROUP BY {keys}window_start, window_end"
        )
    };
    let text = explain(&query("", ""));
    assert!(text.contains(": Your query uses a SESSION window without a PARTITION BY clause. This results in all data being processed by a single, non-parallel task"), "{text}");
    let text = explain(&query(" PARTITION BY user_id", "user_id, "));
    assert!(!text.contains("SESSION window without a PARTITION BY"), "{text}");
}

/// Flink's format stays the default.
#[test]
fn flinks_format_is_the_default() {
    let mut session = Session::new(RuntimeConfig::default(), ConnectorRegistry::default(), Box::new(std::io::sink()));
    let text = session.explain_script(&format!("{CLICKS}\nEXPLAIN SELECT url FROM clicks;")).unwrap();
    assert!(text.starts_with("== Abstract Syntax Tree =="), "{text}");
}

/// A.9 (10): a deduplication written into a table keyed as the query is.
#[test]
fn deduplication_into_a_keyed_table() {
    let reference = "== Physical Plan ==

StreamSink [6]
  +- StreamCalc [5]
    +- StreamRank [4]
      +- StreamExchange [3]
        +- StreamCalc [2]
          +- StreamTableSourceScan [1]

== Physical Details ==

[1] StreamTableSourceScan
Table: `jb-prod-e4d5dd72`.`marketplace`.`orders`
Primary key: (order_id)
Changelog mode: append
Upsert key: (order_id)
State size: low
Startup mode: earliest-offset

[2] StreamCalc
Changelog mode: append
Upsert key: (order_id)

[3] StreamExchange
Changelog mode: append
Upsert key: (order_id)

[4] StreamRank
Changelog mode: append
Upsert key: (order_id)
State size: medium
State TTL: never

[5] StreamCalc
Changelog mode: append
Upsert key: (order_id)

[6] StreamSink
Table: `jb-prod-e4d5dd72`.`marketplace`.`unique_orders`
Primary key: (order_id)
Changelog mode: append
Upsert key: (order_id)
State size: low
";
    let script = "CREATE TABLE orders (order_id STRING, customer_id INT, product_id STRING, price DOUBLE,
  `$rowtime` AS PROCTIME(), PRIMARY KEY (order_id) NOT ENFORCED) WITH ('connector' = 'datagen');
CREATE TABLE unique_orders (order_id STRING, customer_id INT, product_id STRING, price DOUBLE,
  PRIMARY KEY (order_id) NOT ENFORCED) WITH ('connector' = 'blackhole');
EXPLAIN INSERT INTO unique_orders SELECT order_id, customer_id, product_id, price FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY `$rowtime` ASC) AS rn FROM orders) WHERE rn = 1;";
    let expected = adapted(
        reference,
        &[
            ("`jb-prod-e4d5dd72`.`marketplace`", "`default_catalog`.`default_database`", "catalog"),
            ("Startup mode: earliest-offset\n", "", "a Kafka source's option"),
            // Confluent's planner names a deduplication StreamRank; open-source Flink's name is Deduplicate.
            ("StreamRank", "StreamDeduplicate", "Confluent-only name"),
        ],
    );
    assert_text(&explain(script), &expected);
}

/// A.9 (1): the docs' basic example, an anti-join through LEFT JOIN … IS NULL. Confluent's
/// `clicks` carries system columns (`$rowtime`, …) that `c.*` leaves out, which its Calc [2]
/// projects away; this `clicks` has only the selected columns, so there is no Calc there and the
/// ids above it are one lower. Everything else, the join's `:` branch included, reads as
/// Confluent's.
#[test]
fn left_join_of_a_distinct_aggregate() {
    let script = "CREATE TABLE clicks (user_id INT, url STRING, user_agent STRING, view_time INT) WITH ('connector' = 'datagen');
CREATE TABLE orders (order_id INT, customer_id INT, product_id STRING, price DOUBLE) WITH ('connector' = 'datagen');
EXPLAIN
SELECT c.*
FROM clicks c
LEFT JOIN (
  SELECT DISTINCT customer_id
  FROM orders
) o ON c.user_id = o.customer_id
WHERE o.customer_id IS NULL;";
    let expected = "== Physical Plan ==

StreamSink [10]
  +- StreamCalc [9]
    +- StreamJoin [8]
      +- StreamExchange [2]
      :  +- StreamTableSourceScan [1]
      +- StreamExchange [7]
        +- StreamGroupAggregate [6]
          +- StreamExchange [5]
            +- StreamCalc [4]
              +- StreamTableSourceScan [3]

== Physical Details ==

[1] StreamTableSourceScan
Table: `default_catalog`.`default_database`.`clicks`
Changelog mode: append
State size: low

[3] StreamTableSourceScan
Table: `default_catalog`.`default_database`.`orders`
Changelog mode: append
State size: low

[6] StreamGroupAggregate
Changelog mode: retract
Upsert key: (customer_id)
State size: medium
State TTL: never

[7] StreamExchange
Changelog mode: retract
Upsert key: (customer_id)

[8] StreamJoin
Changelog mode: retract
State size: medium
State TTL: never

[9] StreamCalc
Changelog mode: retract

[10] StreamSink
Table: Foreground
Changelog mode: retract
State size: low
";
    assert_text(&explain(script), expected);
}
