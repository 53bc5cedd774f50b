//! How aggregates are planned: with `table.optimizer.distinct-agg.split.enabled` the two-level
//! distinct aggregation gives the same final table as a from-scratch recount of random input
//! (at every parallelism, with mini-batch on and off, over append-only and updating input), and
//! an aggregate over input already hashed on its keys gets no exchange and no local phase; the
//! grouping sets of a CUBE each equal a recount of their own GROUP BY.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::sync::Arc;

use parking_lot::Mutex;
use rand::{Rng, SeedableRng};
use weir::connectors::{ConnectorRegistry, PrintTarget};
use weir::runtime::fixture::materialize_changelog;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

/// Random orders `(user_id, product, qty)`, with product `a` much hotter than the others.
fn random_orders(seed: u64, count: usize) -> Vec<(i64, String, i64)> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let product =
                if rng.random_bool(0.6) { "a".to_string() } else { ["b", "c", "d"][rng.random_range(0..3)].into() };
            (rng.random_range(0..40), product, rng.random_range(1..10))
        })
        .collect()
}

/// The final rows of a printed changelog, as `row text -> count`.
fn materialize(printed: &str) -> BTreeMap<String, i64> {
    materialize_changelog(printed.lines()).unwrap()
}

/// Runs `script` with `settings`; returns what the print sinks wrote.
fn run(script: &str, parallelism: usize, settings: &[(&str, &str)]) -> String {
    let printed = Arc::new(Mutex::new(Vec::new()));
    let registry = ConnectorRegistry::with_print_target(PrintTarget::Buffer(Arc::clone(&printed)));
    let runtime = RuntimeConfig::default().with_parallelism(parallelism);
    let mut session = Session::new(runtime, registry, Box::new(std::io::sink()));
    for (key, value) in settings {
        session.set(key, value).unwrap();
    }
    session.execute_script(script).map_err(|e| e.error.to_string()).unwrap();
    let bytes = printed.lock().clone();
    String::from_utf8(bytes).unwrap()
}

const SPLIT: [(&str, &str); 2] =
    [("table.optimizer.distinct-agg.split.enabled", "true"), ("table.optimizer.distinct-agg.split.bucket-num", "4")];

fn script(dir: &std::path::Path, query: &str) -> String {
    format!(
        "CREATE TABLE orders (user_id BIGINT, product STRING, qty BIGINT) WITH \
         ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         CREATE TABLE result (product STRING, d BIGINT, c BIGINT, s BIGINT, lo BIGINT, hi BIGINT, \
         PRIMARY KEY (product) NOT ENFORCED) WITH ('connector' = 'print');\n\
         INSERT INTO result {query};\n",
        dir.join("orders.csv").display()
    )
}

/// Writes the orders as CSV and checks `query` against `expected` in every configuration.
fn check(query: &str, orders: &[(i64, String, i64)], expected: &BTreeMap<String, i64>) {
    let dir = tempfile::tempdir().unwrap();
    let mut file = std::fs::File::create(dir.path().join("orders.csv")).unwrap();
    for (user, product, qty) in orders {
        writeln!(file, "{user},{product},{qty}").unwrap();
    }
    drop(file);
    let script = script(dir.path(), query);
    let mini_batch = [
        ("table.exec.mini-batch.enabled", "true"),
        ("table.exec.mini-batch.allow-latency", "1 s"),
        ("table.exec.mini-batch.size", "7"),
    ];
    for parallelism in [1, 2, 4] {
        for with_mini_batch in [false, true] {
            let mut settings = SPLIT.to_vec();
            if with_mini_batch {
                settings.extend(mini_batch);
            }
            let got = materialize(&run(&script, parallelism, &settings));
            assert_eq!(&got, expected, "p{parallelism}, mini-batch {with_mini_batch}");
        }
    }
}

fn expected_rows(groups: BTreeMap<String, Vec<(i64, i64)>>) -> BTreeMap<String, i64> {
    groups
        .into_iter()
        .map(|(product, values)| {
            let distinct: BTreeSet<i64> = values.iter().map(|(d, _)| *d).collect();
            let sum: i64 = values.iter().map(|(_, v)| v).sum();
            let lo = values.iter().map(|(_, v)| *v).min().unwrap();
            let hi = values.iter().map(|(_, v)| *v).max().unwrap();
            (format!("[{product}, {}, {}, {sum}, {lo}, {hi}]", distinct.len(), values.len()), 1)
        })
        .collect()
}

#[test]
fn split_distinct_over_append_only_input_matches_a_recount() {
    let orders = random_orders(7, 2_000);
    let mut groups: BTreeMap<String, Vec<(i64, i64)>> = BTreeMap::new();
    for (user, product, qty) in &orders {
        groups.entry(product.clone()).or_default().push((*user, *qty));
    }
    let query = "SELECT product, COUNT(DISTINCT user_id), COUNT(*), SUM(qty), MIN(qty), MAX(qty) \
                 FROM orders GROUP BY product";
    check(query, &orders, &expected_rows(groups));
}

#[test]
fn split_distinct_over_updating_input_matches_a_recount() {
    let orders = random_orders(11, 2_000);
    let mut per_user: BTreeMap<(String, i64), i64> = BTreeMap::new();
    for (user, product, _) in &orders {
        *per_user.entry((product.clone(), *user)).or_default() += 1;
    }
    let mut groups: BTreeMap<String, Vec<(i64, i64)>> = BTreeMap::new();
    for ((product, _), count) in per_user {
        groups.entry(product).or_default().push((count, count));
    }
    let query = "SELECT product, COUNT(DISTINCT c), COUNT(*), SUM(c), MIN(c), MAX(c) \
                 FROM (SELECT user_id, product, COUNT(*) AS c FROM orders GROUP BY user_id, product) GROUP BY product";
    check(query, &orders, &expected_rows(groups));
}

/// Filtered DISTINCT calls share one set per argument column (Flink's `distinct$0` with a count
/// per filter); each call must still count only the values its filter's rows bring, and drop a
/// value when the last of them leaves.
fn filtered_distinct_rows<'a>(rows: impl Iterator<Item = (&'a str, i64, i64)>) -> BTreeMap<String, i64> {
    let mut groups: BTreeMap<&str, Vec<(i64, i64)>> = BTreeMap::new();
    for (product, user, qty) in rows {
        groups.entry(product).or_default().push((user, qty));
    }
    groups
        .into_iter()
        .map(|(product, rows)| {
            let users = |keep: &dyn Fn(i64) -> bool| {
                rows.iter().filter(|(_, q)| keep(*q)).map(|(u, _)| *u).collect::<BTreeSet<i64>>().len()
            };
            let quantities = |keep: &dyn Fn(i64, i64) -> bool| {
                rows.iter().filter(|(u, q)| keep(*u, *q)).map(|(_, q)| *q).collect::<BTreeSet<i64>>()
            };
            let (all, low, high) = (users(&|_| true), users(&|q| q < 5), users(&|q| q >= 5));
            let sum: i64 = quantities(&|u, _| u < 20).iter().sum();
            let above = quantities(&|_, q| q > 2).len();
            (format!("[{product}, {all}, {low}, {sum}, {high}, {above}]"), 1)
        })
        .collect()
}

const FILTERED_DISTINCT: &str = "COUNT(DISTINCT user_id), COUNT(DISTINCT user_id) FILTER (WHERE qty < 5), \
     SUM(DISTINCT qty) FILTER (WHERE user_id < 20), COUNT(DISTINCT user_id) FILTER (WHERE qty >= 5), \
     COUNT(DISTINCT qty) FILTER (WHERE qty > 2)";

#[test]
fn filtered_distinct_over_append_only_input_matches_a_recount() {
    let orders = random_orders(13, 2_000);
    let expected = filtered_distinct_rows(orders.iter().map(|(u, p, q)| (p.as_str(), *u, *q)));
    check(&format!("SELECT product, {FILTERED_DISTINCT} FROM orders GROUP BY product"), &orders, &expected);
}

/// Over an aggregate's updates a row moves between filters (its `qty`, the inner count, grows),
/// so values leave one filter's count while they stay in another's.
#[test]
fn filtered_distinct_over_updating_input_matches_a_recount() {
    let orders = random_orders(17, 2_000);
    let mut per_user: BTreeMap<(String, i64), i64> = BTreeMap::new();
    for (user, product, _) in &orders {
        *per_user.entry((product.clone(), *user)).or_default() += 1;
    }
    let expected = filtered_distinct_rows(per_user.iter().map(|((p, u), c)| (p.as_str(), *u, *c)));
    let query = format!(
        "SELECT product, {FILTERED_DISTINCT} FROM (SELECT user_id, product, COUNT(*) AS qty FROM orders \
         GROUP BY user_id, product) GROUP BY product"
    );
    check(&query, &orders, &expected);
}

/// The same filtered DISTINCT calls per ten-second tumbling window: the local window aggregate
/// sends each slice's sets on, the global one adds them up.
#[test]
fn filtered_distinct_in_windows_matches_a_recount() {
    let orders = random_orders(19, 2_000);
    let dir = tempfile::tempdir().unwrap();
    let mut file = std::fs::File::create(dir.path().join("orders.csv")).unwrap();
    // Ten rows a second; every tenth row late by up to three seconds, within the watermark's delay.
    for (i, (user, product, qty)) in orders.iter().enumerate() {
        let millis = i as i64 * 100 - if i % 10 == 0 { 3_000 } else { 0 };
        let ts = chrono_like(millis.max(0));
        writeln!(file, "{user},{product},{qty},{ts}").unwrap();
    }
    drop(file);
    let mut windows: BTreeMap<(i64, &str), Vec<(i64, i64)>> = BTreeMap::new();
    for (i, (user, product, qty)) in orders.iter().enumerate() {
        let millis = (i as i64 * 100 - if i % 10 == 0 { 3_000 } else { 0 }).max(0);
        windows.entry((millis / 10_000, product.as_str())).or_default().push((*user, *qty));
    }
    let mut expected = BTreeMap::new();
    for ((window, product), rows) in &windows {
        let per_window = filtered_distinct_rows(rows.iter().map(|(u, q)| (*product, *u, *q)));
        for (row, count) in per_window {
            // As Java prints a LocalDateTime: without seconds when they are zero.
            let seconds = window * 10;
            let start = match seconds % 60 {
                0 => format!("1970-01-01T{:02}:{:02}", seconds / 3600, seconds / 60 % 60),
                s => format!("1970-01-01T{:02}:{:02}:{s:02}", seconds / 3600, seconds / 60 % 60),
            };
            expected.insert(row.replacen('[', &format!("[{start}, "), 1), count);
        }
    }
    let script = format!(
        "CREATE TABLE orders (user_id BIGINT, product STRING, qty BIGINT, ts TIMESTAMP(3), \
         WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH \
         ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         CREATE TABLE result (window_start TIMESTAMP(3), product STRING, d BIGINT, c BIGINT, s BIGINT, \
         lo BIGINT, hi BIGINT) WITH ('connector' = 'print');\n\
         INSERT INTO result SELECT window_start, product, {FILTERED_DISTINCT} FROM \
         TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND)) \
         GROUP BY window_start, window_end, product;\n",
        dir.path().join("orders.csv").display()
    );
    let mini_batch = [("table.exec.mini-batch.enabled", "true"), ("table.exec.mini-batch.allow-latency", "1 s")];
    for parallelism in [1, 2, 4] {
        for settings in [&[][..], &mini_batch[..], &[("table.optimizer.agg-phase-strategy", "ONE_PHASE")][..]] {
            let got = materialize(&run(&script, parallelism, settings));
            assert_eq!(got, expected, "p{parallelism}, {settings:?}");
        }
    }
}

/// `1970-01-01 00:00:12.300` for 12 300 milliseconds.
fn chrono_like(millis: i64) -> String {
    let (seconds, millis) = (millis / 1000, millis % 1000);
    format!("1970-01-01 {:02}:{:02}:{:02}.{millis:03}", seconds / 3600, seconds / 60 % 60, seconds % 60)
}

#[test]
fn explain_shows_the_bucketed_levels() {
    let dir = tempfile::tempdir().unwrap();
    let query =
        "SELECT product, COUNT(DISTINCT user_id), COUNT(*), SUM(qty), MIN(qty), MAX(qty) FROM orders GROUP BY product";
    let script = script(dir.path(), query);
    let explain = |settings: &[(&str, &str)]| {
        let mut session =
            Session::new(RuntimeConfig::default(), ConnectorRegistry::default(), Box::new(std::io::sink()));
        for (key, value) in settings {
            session.set(key, value).unwrap();
        }
        session.explain_script(&script).unwrap()
    };
    let split = explain(&SPLIT);
    assert!(split.contains("Calc(select=[product, user_id, qty, MOD(HASH_CODE(user_id), 4) AS $bucket])"), "{split}");
    assert!(split.contains("GroupAggregate(groupBy=[product, $bucket]"), "{split}");
    assert!(split.contains("$SUM0($partial0)"), "{split}");
    let plain = explain(&[]);
    assert!(!plain.contains("$bucket"), "{plain}");
}

#[test]
fn a_bad_bucket_number_names_the_option() {
    let mut session = Session::new(RuntimeConfig::default(), ConnectorRegistry::default(), Box::new(std::io::sink()));
    let error = session.set("table.optimizer.distinct-agg.split.bucket-num", "0").unwrap_err().to_string();
    assert!(error.contains("table.optimizer.distinct-agg.split.bucket-num"), "{error}");
    assert!(error.contains("a positive number"), "{error}");
}

#[test]
fn an_aggregate_over_input_hashed_on_its_keys_has_no_exchange_or_local_phase() {
    let orders = random_orders(3, 500);
    let dir = tempfile::tempdir().unwrap();
    let mut file = std::fs::File::create(dir.path().join("orders.csv")).unwrap();
    for (user, product, qty) in &orders {
        writeln!(file, "{user},{product},{qty}").unwrap();
    }
    drop(file);
    let query = "SELECT product, COUNT(*), SUM(c), MIN(c), MAX(c), SUM(c) FROM \
                 (SELECT product, COUNT(*) AS c FROM orders GROUP BY product) GROUP BY product";
    let script = script(dir.path(), query);
    let mini_batch = [("table.exec.mini-batch.enabled", "true"), ("table.exec.mini-batch.allow-latency", "1 s")];
    let mut session = Session::new(RuntimeConfig::default(), ConnectorRegistry::default(), Box::new(std::io::sink()));
    for (key, value) in mini_batch {
        session.set(key, value).unwrap();
    }
    let plan = session.explain_script(&script).unwrap();
    let execution = plan.split("== Optimized Execution Plan ==").nth(1).unwrap();
    assert_eq!(execution.matches("Exchange(").count(), 1, "{execution}");
    assert_eq!(execution.matches("LocalGroupAggregate(").count(), 1, "{execution}");
    assert!(execution.contains("+- GroupAggregate(groupBy=[product]"), "{execution}");
    // The outer aggregate runs in the inner one's subtasks and still sees every change of a key.
    let mut counts: BTreeMap<String, i64> = BTreeMap::new();
    for (_, product, _) in &orders {
        *counts.entry(product.clone()).or_default() += 1;
    }
    let expected: BTreeMap<String, i64> =
        counts.iter().map(|(product, c)| (format!("[{product}, 1, {c}, {c}, {c}, {c}]"), 1)).collect();
    for parallelism in [1, 2, 4] {
        assert_eq!(materialize(&run(&script, parallelism, &mini_batch)), expected, "p{parallelism}");
        assert_eq!(materialize(&run(&script, parallelism, &[])), expected, "p{parallelism}");
    }
}

/// `rows` `(user_id, product, qty)` grouped by `CUBE (product, user_id % 3)`: per set, the
/// distinct users, the rows, the sum and maximum of `qty`, and `GROUPING_ID(product, user_id % 3)`.
fn cube_rows<'a>(rows: impl Iterator<Item = (i64, &'a str, i64)>) -> BTreeMap<String, i64> {
    type Group<'a> = (Option<&'a str>, Option<i64>, i64);
    let mut groups: BTreeMap<Group<'a>, Vec<(i64, i64)>> = BTreeMap::new();
    for (user, product, qty) in rows {
        for (by_product, by_bucket) in [(true, true), (true, false), (false, true), (false, false)] {
            let gid = (i64::from(!by_product) << 1) | i64::from(!by_bucket);
            let group = (by_product.then_some(product), by_bucket.then_some(user % 3), gid);
            groups.entry(group).or_default().push((user, qty));
        }
    }
    let text = |v: Option<String>| v.unwrap_or_else(|| "null".into());
    groups
        .into_iter()
        .map(|((product, bucket, gid), rows)| {
            let users: BTreeSet<i64> = rows.iter().map(|(u, _)| *u).collect();
            let sum: i64 = rows.iter().map(|(_, q)| q).sum();
            let max = rows.iter().map(|(_, q)| *q).max().unwrap();
            let (product, bucket) = (text(product.map(str::to_string)), text(bucket.map(|b| b.to_string())));
            (format!("[{product}, {bucket}, {}, {}, {sum}, {max}, {gid}]", users.len(), rows.len()), 1)
        })
        .collect()
}

/// Runs `CUBE (product, user_id % 3)` over `from` (a table expression over `orders`) and
/// compares it with `expected` at every parallelism, with mini-batch (two phases) on and off.
fn check_cube(orders: &[(i64, String, i64)], from: &str, expected: &BTreeMap<String, i64>) {
    let dir = tempfile::tempdir().unwrap();
    let mut file = std::fs::File::create(dir.path().join("orders.csv")).unwrap();
    for (user, product, qty) in orders {
        writeln!(file, "{user},{product},{qty}").unwrap();
    }
    drop(file);
    let script = format!(
        "CREATE TABLE orders (user_id BIGINT, product STRING, qty BIGINT) WITH \
         ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         CREATE TABLE result (product STRING, bucket BIGINT, users BIGINT, c BIGINT, s BIGINT, hi BIGINT, \
         gid BIGINT) WITH ('connector' = 'print');\n\
         INSERT INTO result SELECT product, user_id % 3, COUNT(DISTINCT user_id), COUNT(*), SUM(qty), MAX(qty), \
         GROUPING_ID(product, user_id % 3) FROM {from} GROUP BY CUBE (product, user_id % 3);\n",
        dir.path().join("orders.csv").display()
    );
    let mini_batch = [
        ("table.exec.mini-batch.enabled", "true"),
        ("table.exec.mini-batch.allow-latency", "1 s"),
        ("table.exec.mini-batch.size", "7"),
    ];
    for parallelism in [1, 2, 4] {
        for settings in [&[][..], &mini_batch[..]] {
            assert_eq!(&materialize(&run(&script, parallelism, settings)), expected, "p{parallelism}, {settings:?}");
        }
    }
}

/// Each grouping set of a CUBE gives what a GROUP BY of its keys alone gives, recounted from
/// scratch (rows where a left-out key is NULL, apart from rows whose key value is NULL).
#[test]
fn cube_over_append_only_input_matches_a_recount_per_set() {
    let orders = random_orders(23, 1_500);
    let expected = cube_rows(orders.iter().map(|(u, p, q)| (*u, p.as_str(), *q)));
    check_cube(&orders, "orders", &expected);
}

/// Over an aggregate's updates every retraction goes through the Expand once per set, and
/// MAX must give up a maximum that leaves.
#[test]
fn cube_over_updating_input_matches_a_recount_per_set() {
    let orders = random_orders(29, 1_500);
    let mut totals: BTreeMap<(i64, &str), i64> = BTreeMap::new();
    for (user, product, qty) in &orders {
        *totals.entry((*user, product.as_str())).or_default() += qty;
    }
    let expected = cube_rows(totals.iter().map(|((u, p), q)| (*u, *p, *q)));
    let from = "(SELECT user_id, product, SUM(qty) AS qty FROM orders GROUP BY user_id, product)";
    check_cube(&orders, from, &expected);
}
