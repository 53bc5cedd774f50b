//! The jdbc and hologres connectors against a real PostgreSQL server (a throwaway one this
//! test binary starts): lookup joins, caches, timeouts, connection failures, scan and sink.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::postgres::server;
use common::Buffer;
use parking_lot::Mutex;
use weir::connectors::{ConnectorRegistry, PrintTarget, TableDescriptor};
use weir::runtime::{DataType, Field, LookupFunction, ManualClock, RuntimeConfig, Schema, Value};
use weir::session::Session;

/// Runs `script` at `parallelism`; returns the sorted changelog lines it printed, or the error.
fn run(script: &str, parallelism: usize) -> Result<Vec<String>, String> {
    let mut lines = run_in_order(script, parallelism)?;
    lines.sort();
    Ok(lines)
}

/// Runs `script` at `parallelism`; returns the lines it printed in order, or the error.
fn run_in_order(script: &str, parallelism: usize) -> Result<Vec<String>, String> {
    let printed = Arc::new(Mutex::new(Vec::new()));
    let registry = ConnectorRegistry::with_print_target(PrintTarget::Buffer(Arc::clone(&printed)));
    let out = Buffer::default();
    let mut session =
        Session::new(RuntimeConfig::default().with_parallelism(parallelism), registry, Box::new(out.clone()));
    session.set("sql-client.execution.result-mode", "changelog").unwrap();
    session.execute_script(script).map_err(|e| e.error.to_string())?;
    let mut text = String::from_utf8(printed.lock().clone()).unwrap();
    text.push_str(&String::from_utf8(out.0.lock().clone()).unwrap());
    Ok(text.lines().map(str::to_string).collect())
}

/// A users table named `name` with three rows.
fn users_table(name: &str) {
    server().psql(&format!(
        "DROP TABLE IF EXISTS {name}; CREATE TABLE {name} (user_id TEXT PRIMARY KEY, user_name VARCHAR(255) NOT NULL, age INT NOT NULL); \
         INSERT INTO {name} VALUES ('web', 'Ann', 31), ('app', 'Bob', 42), ('mail', 'Cy', 27);"
    ));
}

/// The DDL of a jdbc lookup table `name` over the PostgreSQL table `pg_table`.
fn jdbc_users(name: &str, pg_table: &str, extra: &str) -> String {
    format!(
        "CREATE TABLE {name} (user_id STRING, user_name VARCHAR(255), age INT, PRIMARY KEY (user_id) NOT ENFORCED) WITH \
         ('connector' = 'jdbc', 'url' = '{}', 'table-name' = '{pg_table}', 'username' = 'postgres'{extra});\n",
        server().url()
    )
}

/// A CSV file of bids and the DDL of a filesystem table over it with a processing-time column.
fn bid_file(rows: &[(i64, &str)]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bids.csv");
    let text: String = rows.iter().map(|(a, c)| format!("{a},{c}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let ddl = format!(
        "CREATE TABLE bid_source (auction BIGINT, channel STRING, proc_time AS PROCTIME()) WITH \
         ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n",
        path.display()
    );
    (dir, ddl)
}

const BIDS: &[(i64, &str)] = &[(1, "web"), (2, "app"), (3, "tv"), (4, "web"), (5, "mail")];

#[test]
fn inner_and_left_lookup_joins_enrich_rows_from_postgres() {
    users_table("users_join");
    let (_dir, source) = bid_file(BIDS);
    let users = jdbc_users("users", "users_join", "");
    for parallelism in [1, 2] {
        let inner = run(
            &format!(
                "{source}{users}SELECT b.auction, u.user_name, u.age FROM bid_source AS b \
                 JOIN users FOR SYSTEM_TIME AS OF b.proc_time AS u ON b.channel = u.user_id;"
            ),
            parallelism,
        )
        .unwrap();
        assert_eq!(inner, ["+I[1, Ann, 31]", "+I[2, Bob, 42]", "+I[4, Ann, 31]", "+I[5, Cy, 27]"]);
        let left = run(
            &format!(
                "{source}{users}SELECT b.auction, u.user_name FROM bid_source AS b \
                 LEFT JOIN users FOR SYSTEM_TIME AS OF b.proc_time AS u ON b.channel = u.user_id AND u.age > 30;"
            ),
            parallelism,
        )
        .unwrap();
        assert_eq!(left, ["+I[1, Ann]", "+I[2, Bob]", "+I[3, null]", "+I[4, Ann]", "+I[5, null]"]);
    }
}

#[test]
fn sync_lookups_through_the_hint_give_the_same_rows() {
    users_table("users_sync");
    let (_dir, source) = bid_file(BIDS);
    let users = jdbc_users("users", "users_sync", "");
    let rows = run(
        &format!(
            "{source}{users}SELECT /*+ LOOKUP('table'='u', 'async'='false') */ b.auction, u.age FROM bid_source AS b \
             JOIN users FOR SYSTEM_TIME AS OF b.proc_time AS u ON b.channel = u.user_id;"
        ),
        1,
    )
    .unwrap();
    assert_eq!(rows, ["+I[1, 31]", "+I[2, 42]", "+I[4, 31]", "+I[5, 27]"]);
}

#[test]
fn the_hologres_example_runs_against_postgres_in_key_ordered_mode() {
    server().psql(
        "DROP TABLE IF EXISTS holo_users; CREATE TABLE holo_users (user_id TEXT PRIMARY KEY, user_name VARCHAR(255) NOT NULL, age INT NOT NULL); \
         INSERT INTO holo_users VALUES ('web', 'Ann', 31), ('app', 'Bob', 42), ('mail', 'Cy', 27);",
    );
    let script = std::fs::read_to_string("examples/lookup_join_hologres.sql")
        .unwrap()
        .replace("'holo vpc endpoint'", &format!("'127.0.0.1:{}'", server().port))
        .replace("'holo db name'", "'postgres'")
        .replace("'schema_name.table_name'", "'public.holo_users'")
        .replace("'access id'", "'postgres'")
        .replace("'access key'", "''");
    let (ddl, set) = script.split_once("EXECUTE STATEMENT SET").unwrap();
    let explained = run(&format!("{ddl}EXPLAIN STATEMENT SET{set}"), 2).unwrap().join("\n");
    // Insert-only bids are looked up unordered; the updating channel rows key-ordered.
    assert!(explained.contains("async=[UNORDERED, KEY_ORDERED: false, 180000ms, 100]"), "{explained}");
    assert!(explained.contains("async=[ORDERED, KEY_ORDERED: true, 180000ms, 100]"), "{explained}");
    for parallelism in [1, 2, 4] {
        for mini_batch in [false, true] {
            let settings = if mini_batch {
                "SET 'table.exec.mini-batch.enabled' = 'true';\nSET 'table.exec.mini-batch.allow-latency' = '10 ms';\n"
            } else {
                ""
            };
            let printed = run_in_order(&format!("{settings}{script}"), parallelism).unwrap();
            assert_eq!(
                final_rows(&printed),
                ["[app, 2, 150, 42]", "[mail, 1, 80, 27]", "[web, 2, 130, 31]"],
                "parallelism {parallelism}, mini-batch {mini_batch}: {printed:?}"
            );
        }
    }
}

/// The final row of each key (the first column) of a printed changelog, in key order.
fn final_rows(printed: &[String]) -> Vec<String> {
    let mut last: std::collections::BTreeMap<String, String> = Default::default();
    for line in printed {
        // Print's subtask prefix (`2> `) goes first.
        let line = line.split_once("> ").map_or(line.as_str(), |(_, rest)| rest);
        let row = line.trim_start_matches(|c: char| c != '[');
        let key = row.trim_start_matches('[').split(',').next().unwrap_or_default().to_string();
        if line.starts_with("+I") || line.starts_with("+U") {
            last.insert(key, row.to_string());
        } else {
            last.remove(&key);
        }
    }
    last.into_values().collect()
}

/// A lookup function for `pg_table` through the registry, with `options` and a manual clock.
fn lookup_function(pg_table: &str, options: &[(&str, &str)], clock: &Arc<ManualClock>) -> Arc<dyn LookupFunction> {
    let schema = Schema::new(vec![
        Field::new("user_id", DataType::string()),
        Field::new("user_name", DataType::string()),
        Field::new("age", DataType::int()),
    ]);
    let url = server().url();
    let mut all =
        vec![("connector", "jdbc"), ("url", url.as_str()), ("table-name", pg_table), ("username", "postgres")];
    all.extend_from_slice(options);
    let table = TableDescriptor::new("users", schema, &all).with_primary_key(&["user_id"]);
    let source = ConnectorRegistry::default().create_lookup(&table, Arc::clone(clock) as _).unwrap();
    source.provider.lookup_function(&[0]).unwrap()
}

fn names(function: &Arc<dyn LookupFunction>, runtime: &tokio::runtime::Runtime, key: &str) -> Vec<String> {
    let rows = runtime.block_on(function.lookup(vec![Value::string(key)])).unwrap();
    rows.iter().map(|r| weir::runtime::print::value_to_string(&r[1])).collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

#[test]
fn a_partial_cache_answers_from_memory_until_entries_expire() {
    users_table("users_partial");
    let clock = Arc::new(ManualClock::new(0));
    let rt = runtime();
    let cached = lookup_function(
        "users_partial",
        &[("lookup.cache", "PARTIAL"), ("lookup.partial-cache.expire-after-write", "10 s")],
        &clock,
    );
    assert_eq!(names(&cached, &rt, "web"), ["Ann"]);
    server().psql("UPDATE users_partial SET user_name = 'Anna' WHERE user_id = 'web';");
    clock.advance(9_000);
    assert_eq!(names(&cached, &rt, "web"), ["Ann"], "a hit does not reach the database");
    clock.advance(1_000);
    assert_eq!(names(&cached, &rt, "web"), ["Anna"], "an expired entry is looked up again");
    let uncached = lookup_function("users_partial", &[], &clock);
    server().psql("UPDATE users_partial SET user_name = 'Annie' WHERE user_id = 'web';");
    assert_eq!(names(&uncached, &rt, "web"), ["Annie"]);

    let by_access = lookup_function(
        "users_partial",
        &[("lookup.cache", "PARTIAL"), ("lookup.partial-cache.expire-after-access", "5 s")],
        &clock,
    );
    assert_eq!(names(&by_access, &rt, "app"), ["Bob"]);
    server().psql("UPDATE users_partial SET user_name = 'Bobby' WHERE user_id = 'app';");
    for _ in 0..3 {
        clock.advance(4_000);
        assert_eq!(names(&by_access, &rt, "app"), ["Bob"], "each read keeps the entry");
    }
    clock.advance(5_000);
    assert_eq!(names(&by_access, &rt, "app"), ["Bobby"]);
}

#[test]
fn missing_keys_are_cached_unless_asked_not_to_be() {
    users_table("users_missing");
    let clock = Arc::new(ManualClock::new(0));
    let rt = runtime();
    let options = [("lookup.cache", "PARTIAL"), ("lookup.partial-cache.max-rows", "100")];
    let remembers = lookup_function("users_missing", &options, &clock);
    let mut forgetting = options.to_vec();
    forgetting.push(("lookup.partial-cache.cache-missing-key", "false"));
    let forgets = lookup_function("users_missing", &forgetting, &clock);
    assert!(names(&remembers, &rt, "tv").is_empty());
    assert!(names(&forgets, &rt, "tv").is_empty());
    server().psql("INSERT INTO users_missing VALUES ('tv', 'Dee', 50);");
    assert!(names(&remembers, &rt, "tv").is_empty(), "the miss is cached");
    assert_eq!(names(&forgets, &rt, "tv"), ["Dee"]);
}

#[test]
fn a_full_cache_loads_the_table_once_and_reloads_it_periodically() {
    users_table("users_full");
    let clock = Arc::new(ManualClock::new(0));
    let rt = runtime();
    let full = lookup_function(
        "users_full",
        &[("lookup.cache", "FULL"), ("lookup.full-cache.periodic-reload.interval", "1 min")],
        &clock,
    );
    assert_eq!(names(&full, &rt, "mail"), ["Cy"]);
    server().psql("UPDATE users_full SET user_name = 'Cyd' WHERE user_id = 'mail';");
    assert_eq!(names(&full, &rt, "mail"), ["Cy"], "served from the loaded copy");
    clock.advance(60_000);
    // The lookup past the interval starts a reload in the background and reads the old copy.
    assert_eq!(names(&full, &rt, "mail"), ["Cy"]);
    common::wait_until("the reload is installed", || names(&full, &rt, "mail") == ["Cyd"]);
}

#[test]
fn a_partial_cache_without_bounds_is_refused() {
    let schema = Schema::new(vec![Field::new("user_id", DataType::string())]);
    let table = TableDescriptor::new(
        "users",
        schema,
        &[
            ("connector", "jdbc"),
            ("url", "jdbc:postgresql://127.0.0.1:1/x"),
            ("table-name", "u"),
            ("lookup.cache", "PARTIAL"),
        ],
    );
    let error =
        ConnectorRegistry::default().create_lookup(&table, Arc::new(ManualClock::new(0))).err().unwrap().to_string();
    assert!(error.contains("Missing 'lookup.partial-cache.expire-after-access'"), "{error}");
}

#[test]
fn a_lookup_that_outlasts_the_timeout_fails_the_job_naming_table_and_key() {
    users_table("users_slow_base");
    server()
        .psql("CREATE OR REPLACE VIEW users_slow AS SELECT u.* FROM users_slow_base u CROSS JOIN pg_sleep(5) AS s;");
    let (_dir, source) = bid_file(&[(1, "web")]);
    let users = jdbc_users("users", "users_slow", "");
    let error = run(
        &format!(
            "{source}{users}SELECT /*+ LOOKUP('table'='u', 'timeout'='300ms') */ b.auction, u.age FROM bid_source AS b \
             JOIN users FOR SYSTEM_TIME AS OF b.proc_time AS u ON b.channel = u.user_id;"
        ),
        1,
    )
    .unwrap_err();
    assert!(
        error.contains("Lookup join on table 'default_catalog.default_database.users' timed out after 300 ms for key (user_id=web)"),
        "{error}"
    );
}

#[test]
fn a_connection_failure_is_retried_then_reported() {
    let (_dir, source) = bid_file(&[(1, "web")]);
    // Nothing listens on the server's port + 1... unless by chance; a closed port is reserved below.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let users = format!(
        "CREATE TABLE users (user_id STRING, age INT) WITH ('connector' = 'jdbc', \
         'url' = 'jdbc:postgresql://127.0.0.1:{port}/postgres', 'table-name' = 'users', 'lookup.max-retries' = '2');\n"
    );
    let started = std::time::Instant::now();
    let error = run(
        &format!(
            "{source}{users}SELECT b.auction, u.age FROM bid_source AS b \
             JOIN users FOR SYSTEM_TIME AS OF b.proc_time AS u ON b.channel = u.user_id;"
        ),
        1,
    )
    .unwrap_err();
    assert!(
        error.contains(
            "Execution of JDBC statement failed on table 'users' after 3 attempts ('lookup.max-retries' = 2)"
        ),
        "{error}"
    );
    assert!(error.contains(&format!("jdbc:postgresql://127.0.0.1:{port}/postgres")), "{error}");
    assert!(error.to_lowercase().contains("refused"), "{error}");
    // Retried after 0 s and 1 s.
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[test]
fn an_aggregate_upserts_into_postgres_and_a_scan_reads_it_back() {
    server().psql(
        "DROP TABLE IF EXISTS channel_counts; CREATE TABLE channel_counts (channel TEXT PRIMARY KEY, bids BIGINT NOT NULL);",
    );
    let (_dir, source) = bid_file(BIDS);
    let sink = format!(
        "CREATE TABLE counts (channel STRING, bids BIGINT, PRIMARY KEY (channel) NOT ENFORCED) WITH \
         ('connector' = 'jdbc', 'url' = '{}', 'table-name' = 'channel_counts', 'username' = 'postgres', \
         'sink.buffer-flush.max-rows' = '2');\n",
        server().url()
    );
    run(&format!("{source}{sink}INSERT INTO counts SELECT channel, COUNT(*) FROM bid_source GROUP BY channel;"), 2)
        .unwrap();
    let stored = server().psql("SELECT channel, bids FROM channel_counts ORDER BY channel;");
    assert_eq!(stored.lines().collect::<Vec<_>>(), ["app|1", "mail|1", "tv|1", "web|2"]);
    let scanned = run(&format!("{sink}SELECT * FROM counts;"), 1).unwrap();
    assert_eq!(scanned, ["+I[app, 1]", "+I[mail, 1]", "+I[tv, 1]", "+I[web, 2]"]);
}

/// A checkpoint's barrier waits for the jdbc sink to write what it buffered: with a buffer that
/// would otherwise hold every row until the end, rows reach PostgreSQL as checkpoints complete.
#[test]
fn a_checkpoint_writes_out_the_jdbc_buffer_before_it_completes() {
    server().psql("DROP TABLE IF EXISTS ticks; CREATE TABLE ticks (id BIGINT PRIMARY KEY, v BIGINT NOT NULL);");
    let checkpoints = tempfile::tempdir().unwrap();
    let script = format!(
        "SET 'execution.checkpointing.interval' = '100 ms';\n\
         SET 'execution.checkpointing.dir' = '{}';\n\
         CREATE TABLE gen (id BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '5000',\n\
           'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100000000');\n\
         CREATE TABLE ticks (id BIGINT, v BIGINT) WITH ('connector' = 'jdbc',\n\
           'url' = '{}', 'table-name' = 'ticks', 'username' = 'postgres',\n\
           'sink.buffer-flush.max-rows' = '100000000', 'sink.buffer-flush.interval' = '1 h');\n\
         INSERT INTO ticks SELECT id, v FROM gen;\n",
        checkpoints.path().display(),
        server().url()
    );
    let registry = ConnectorRegistry::default();
    let mut session = Session::new(RuntimeConfig::default().with_parallelism(1), registry, Box::new(Buffer::default()));
    // The script runs until its job is stopped; the rows are counted meanwhile.
    let stop = session.interrupter();
    let watcher = std::thread::spawn(move || {
        let written = || server().psql("SELECT count(*) FROM ticks;").trim().parse::<u64>().unwrap();
        let started = std::time::Instant::now();
        while written() == 0 && started.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let first = written();
        std::thread::sleep(Duration::from_millis(500));
        let then = written();
        stop();
        (first, then)
    });
    let ended = session.execute_script(&script).map_err(|e| e.error.to_string());
    let (first, then) = watcher.join().unwrap();
    assert!(ended.as_ref().is_err_and(|e| e.contains("cancel")), "{ended:?}");
    assert!(first > 0, "no row written after 30 s of checkpoints");
    assert!(then > first, "each checkpoint writes the rows buffered before it: {first}, then {then}");
}
