//! The `kafka` connector against a real broker (Apache Kafka, started by the tests on loopback):
//! scripts read topics and write them through the `weir` binary as users run them; options,
//! missing topics, unreachable brokers and records that do not decode fail with clear messages.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::kafka::broker;

/// Runs `sql` with `weir run` at `parallelism` in `dir`: `(succeeded, stdout, stderr)`.
fn run(dir: &Path, sql: &str, parallelism: usize, settings: &[&str]) -> (bool, String, String) {
    let script = dir.join(format!("script-{}.sql", rand::random::<u32>()));
    std::fs::write(&script, sql).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_weir"));
    command.current_dir(dir).arg("run").arg(&script).args(["--parallelism", &parallelism.to_string()]);
    for s in settings {
        command.args(["--set", s]);
    }
    let output = command.output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (output.status.success(), text(&output.stdout), text(&output.stderr))
}

/// A topic name no other test uses.
fn topic(name: &str) -> String {
    format!("{name}-{:08x}", rand::random::<u32>())
}

fn kafka_table(name: &str, columns: &str, topic: &str, bootstrap: &str, extra: &str) -> String {
    format!(
        "CREATE TABLE {name} ({columns}) WITH ('connector' = 'kafka', 'topic' = '{topic}', \
         'properties.bootstrap.servers' = '{bootstrap}', 'properties.group.id' = 'g-{topic}', \
         'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'csv'{extra});\n"
    )
}

const ORDERS: &str = "id BIGINT, user_id INT, product STRING, amount DECIMAL(10, 2), qty INT, ts TIMESTAMP(3)";

fn orders_lines() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/data/orders.csv");
    std::fs::read_to_string(path).unwrap().lines().map(str::to_string).collect()
}

/// The table a printed changelog leaves: row text to multiplicity, subtask prefixes dropped.
fn final_table(printed: &str) -> BTreeMap<String, i64> {
    let lines: Vec<&str> = printed.lines().map(|l| l.split_once("> ").map_or(l, |(_, r)| r)).collect();
    weir::runtime::fixture::materialize_changelog(&lines).unwrap()
}

/// The printed rows, sorted, without subtask prefixes.
fn printed(stdout: &str) -> Vec<String> {
    let mut rows: Vec<String> = stdout.lines().filter_map(|l| l.split_once("> ").map(|(_, r)| r.to_string())).collect();
    rows.sort();
    rows
}

#[test]
fn a_topic_reads_as_the_file_it_was_loaded_from_at_every_parallelism() {
    let broker = broker();
    let dir = tempfile::tempdir().unwrap();
    let topic = topic("orders");
    broker.create_topic(&topic, 3);
    let lines = orders_lines();
    broker.produce(&topic, &lines, |i| (i % 3) as i32);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/data/orders.csv");
    let query = "CREATE TABLE out (product STRING, cnt BIGINT, total DECIMAL(38, 2)) \
                 WITH ('connector' = 'print', 'print-identifier' = 'o');\n\
                 INSERT INTO out SELECT product, COUNT(*), SUM(amount) FROM orders GROUP BY product;\n";
    let from_file = format!(
        "CREATE TABLE orders ({ORDERS}) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n{query}",
        data.display()
    );
    let (ok, expected, err) = run(dir.path(), &from_file, 1, &[]);
    assert!(ok, "{err}");
    let expected = final_table(&expected);
    for p in [1, 2, 4] {
        let from_topic = format!("{}{query}", kafka_table("orders", ORDERS, &topic, &broker.bootstrap, ""));
        let (ok, out, err) = run(dir.path(), &from_topic, p, &[]);
        assert!(ok, "parallelism {p}: {err}");
        assert_eq!(final_table(&out), expected, "parallelism {p}");
    }
}

#[test]
fn a_sink_writes_every_row_and_a_source_reads_them_back() {
    let broker = broker();
    let dir = tempfile::tempdir().unwrap();
    let topic = topic("written");
    broker.create_topic(&topic, 2);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/data/orders.csv");
    let write = format!(
        "CREATE TABLE orders ({ORDERS}) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         CREATE TABLE sink (id BIGINT, product STRING, amount DECIMAL(10, 2)) WITH ('connector' = 'kafka', \
         'topic' = '{topic}', 'properties.bootstrap.servers' = '{}', 'key.format' = 'csv', 'key.fields' = 'id', \
         'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY');\n\
         INSERT INTO sink SELECT id, product, amount FROM orders;\n",
        data.display(),
        broker.bootstrap
    );
    let (ok, _, err) = run(dir.path(), &write, 2, &[]);
    assert!(ok, "{err}");
    let records = broker.read_all(&topic, false);
    assert_eq!(records.len(), orders_lines().len());
    let first = records.iter().find(|(k, _)| k.as_deref() == Some("1")).expect("the record of id 1");
    assert_eq!(first.1, r#"{"product":"apple","amount":410.82}"#);

    let read = format!(
        "CREATE TABLE t (id BIGINT, product STRING, amount DECIMAL(10, 2)) WITH ('connector' = 'kafka', \
         'topic' = '{topic}', 'properties.bootstrap.servers' = '{}', 'scan.startup.mode' = 'earliest-offset', \
         'scan.bounded.mode' = 'latest-offset', 'key.format' = 'csv', 'key.fields' = 'id', \
         'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY');\n\
         CREATE TABLE out (id BIGINT, product STRING, amount DECIMAL(10, 2)) WITH ('connector' = 'print');\n\
         INSERT INTO out SELECT * FROM t;\n",
        broker.bootstrap
    );
    let (ok, out, err) = run(dir.path(), &read, 1, &[]);
    assert!(ok, "{err}");
    let mut expected: Vec<String> = orders_lines()
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            format!("+I[{}, {}, {}]", f[0], f[2], f[3])
        })
        .collect();
    expected.sort();
    let mut got: Vec<String> = out.lines().map(str::to_string).collect();
    got.sort();
    // DECIMAL(10, 2) prints with its scale.
    let normalize = |rows: Vec<String>| -> Vec<String> {
        rows.into_iter()
            .map(|r| {
                let (head, amount) = r.trim_end_matches(']').rsplit_once(", ").unwrap();
                format!("{head}, {:.2}]", amount.parse::<f64>().unwrap())
            })
            .collect()
    };
    assert_eq!(normalize(got), normalize(expected));
}

#[test]
fn a_record_that_does_not_decode_names_topic_partition_offset_and_field() {
    let broker = broker();
    let dir = tempfile::tempdir().unwrap();
    let topic = topic("bad");
    broker.create_topic(&topic, 1);
    broker.produce(&topic, &["1,a", "2,b", "x,c"], |_| 0);
    let sql = format!(
        "{}CREATE TABLE out (id BIGINT, s STRING) WITH ('connector' = 'blackhole');\nINSERT INTO out SELECT * FROM t;\n",
        kafka_table("t", "id BIGINT, s STRING", &topic, &broker.bootstrap, "")
    );
    let (ok, _, err) = run(dir.path(), &sql, 1, &[]);
    assert!(!ok);
    assert!(err.contains(&format!("topic '{topic}', partition 0, offset 2")) && err.contains("field 'id'"), "{err}");
    // With csv.ignore-parse-errors the record is skipped.
    let lenient = format!(
        "{}CREATE TABLE out (id BIGINT, s STRING) WITH ('connector' = 'print');\nINSERT INTO out SELECT * FROM t;\n",
        kafka_table("t", "id BIGINT, s STRING", &topic, &broker.bootstrap, ", 'csv.ignore-parse-errors' = 'true'")
    );
    let (ok, out, err) = run(dir.path(), &lenient, 1, &[]);
    assert!(ok, "{err}");
    assert_eq!(printed(&out.replace("+I", "> +I")), vec!["+I[1, a]", "+I[2, b]", "+I[null, c]"]);
}

/// Values of no bytes and Avro values cut short or followed by more bytes, as Flink's decoders
/// see them: an error naming topic, partition and offset in json, csv and avro (a row with
/// the rest of the value NULL would be a wrong result); an empty string in `raw`; passed over
/// in `debezium-json` (Flink skips empty messages) and under `json.ignore-parse-errors`.
#[test]
fn empty_and_cut_values_fail_or_pass_over_as_flinks_decoders_do() {
    let broker = broker();
    let dir = tempfile::tempdir().unwrap();
    let read = |topic: &str, columns: &str, format: &str| {
        let sql = format!(
            "{}CREATE TABLE out ({columns}) WITH ('connector' = 'print');\nINSERT INTO out SELECT * FROM t;\n",
            kafka_table("t", columns, topic, &broker.bootstrap, &format!(", {format}"))
                .replace("'format' = 'csv', ", "")
        );
        run(dir.path(), &sql, 1, &[])
    };
    let values = |name: &str, values: &[&[u8]]| {
        let topic = topic(name);
        broker.create_topic(&topic, 1);
        broker.produce(&topic, values, |_| 0);
        topic
    };
    let failed_at = |(ok, _, err): (bool, String, String), topic: &str, what: &str| {
        assert!(!ok && err.contains(&format!("topic '{topic}', partition 0, offset 1")) && err.contains(what), "{err}");
    };
    let json = values("empty-json", &[br#"{"id":1}"#, b"", br#"{"id":2}"#]);
    failed_at(read(&json, "id BIGINT", "'format' = 'json'"), &json, "value");
    let (ok, out, err) = read(&json, "id BIGINT", "'format' = 'json', 'json.ignore-parse-errors' = 'true'");
    assert!(ok, "{err}");
    assert_eq!(out.lines().collect::<Vec<_>>(), ["+I[1]", "+I[2]"]);
    let csv = values("empty-csv", &[b"1", b"", b"2"]);
    failed_at(read(&csv, "id BIGINT", "'format' = 'csv'"), &csv, "No content to map due to end-of-input");
    let raw = values("empty-raw", &[b"a", b"", b"b"]);
    let (ok, out, err) = read(&raw, "s STRING", "'format' = 'raw'");
    assert!(ok, "{err}");
    assert_eq!(out.lines().collect::<Vec<_>>(), ["+I[a]", "+I[]", "+I[b]"]);
    let insert = |id: u32| format!(r#"{{"before":null,"after":{{"id":{id}}},"op":"c"}}"#);
    let cdc = values("empty-cdc", &[insert(1).as_bytes(), b"", insert(2).as_bytes()]);
    let (ok, out, err) = read(&cdc, "id BIGINT", "'format' = 'debezium-json'");
    assert!(ok, "{err}");
    assert_eq!(out.lines().collect::<Vec<_>>(), ["+I[1]", "+I[2]"]);
    // Avro: (id BIGINT NOT NULL, name STRING) is a long, then the union ["null", "string"].
    let record: &[u8] = &[6, 2, 4, b'n', b'3'];
    let avro = |name: &str, second: &[u8]| values(name, &[record, second]);
    for (name, second) in [("cut-avro", &record[..4]), ("long-avro", &[6, 2, 4, b'n', b'3', 0][..])] {
        let topic = avro(name, second);
        failed_at(
            read(&topic, "id BIGINT NOT NULL, name STRING", "'format' = 'avro'"),
            &topic,
            "malformed Avro record",
        );
    }
    let topic = avro("empty-avro", b"");
    failed_at(read(&topic, "id BIGINT NOT NULL, name STRING", "'format' = 'avro'"), &topic, "ends early");
}

#[test]
fn a_missing_topic_is_named() {
    let broker = broker();
    let dir = tempfile::tempdir().unwrap();
    let sql = format!(
        "{}CREATE TABLE out (id BIGINT) WITH ('connector' = 'blackhole');\nINSERT INTO out SELECT * FROM t;\n",
        kafka_table("t", "id BIGINT", "no-such-topic", &broker.bootstrap, "")
    );
    let (ok, _, err) = run(dir.path(), &sql, 1, &[]);
    assert!(!ok);
    assert!(err.contains("topic 'no-such-topic', which does not exist"), "{err}");
}

#[test]
fn an_unreachable_broker_fails_within_the_configured_timeout() {
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let sql = format!(
        "{}CREATE TABLE out (id BIGINT) WITH ('connector' = 'blackhole');\nINSERT INTO out SELECT * FROM t;\n",
        kafka_table(
            "t",
            "id BIGINT",
            "t",
            &format!("127.0.0.1:{port}"),
            ", 'properties.default.api.timeout.ms' = '2000'"
        )
    );
    let started = Instant::now();
    let (ok, _, err) = run(dir.path(), &sql, 1, &[]);
    assert!(!ok);
    assert!(started.elapsed() < Duration::from_secs(30), "took {:?}", started.elapsed());
    assert!(err.contains(&format!("could not fetch the metadata of its topics from '127.0.0.1:{port}'")), "{err}");
}

#[test]
fn options_are_checked_as_flink_checks_them() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("", "Either 'topic' or 'topic-pattern' must be set."),
        ("'topic' = 'a', 'topic-pattern' = 'a.*', ", "Option 'topic' and 'topic-pattern' shouldn't be set together."),
        ("'topic' = 'a', 'scan.startup.mode' = 'timestamp', ", "'scan.startup.timestamp-millis' is required in 'TIMESTAMP' startup mode but missing."),
        ("'topic' = 'a', 'scan.startup.mode' = 'sometime', ", "Could not parse value 'sometime' for key 'scan.startup.mode'"),
        ("'topic' = 'a', 'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = 'p0', ",
         "Invalid properties 'scan.startup.specific-offsets' should follow the format 'partition:0,offset:42;partition:1,offset:300', but is 'p0'."),
        ("'topic' = 'a', 'key.fields' = 'id', ", "The option 'key.fields' can only be declared if a key format is defined using 'key.format'."),
        ("'topic' = 'a', 'key.format' = 'csv', ", "A key format 'key.format' requires the declaration of one or more of key fields using 'key.fields'."),
        ("'topic' = 'a', 'key.format' = 'csv', 'key.fields' = 'nope', ", "Could not find the field 'nope' in the table schema for usage in the key format."),
        ("'topic' = 'a', 'sink.delivery-guarantee' = 'exactly-once', ", "sink.transactional-id-prefix must be specified when using DeliveryGuarantee.EXACTLY_ONCE."),
        ("'topic' = 'a', 'sink.partitioner' = 'com.acme.P', ", "Could not find and instantiate partitioner class 'com.acme.P'"),
        ("'topic' = 'a', 'scan.bounded.mode' = 'timestamp', ", "'scan.bounded.timestamp-millis' is required in 'TIMESTAMP' bounded mode but missing."),
        ("'topic' = 'a;b', ", "Flink Kafka sink currently only supports single topic, but got topic: a;b."),
        ("'topic' = 'a', 'scan.startup.mod' = 'x', ", "Unsupported options found for 'kafka'."),
    ];
    for (options, message) in cases {
        let sql = format!(
            "CREATE TABLE k (id BIGINT) WITH ('connector' = 'kafka', {options}'properties.bootstrap.servers' = '127.0.0.1:1', 'format' = 'csv');\n\
             CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\n\
             INSERT INTO k SELECT * FROM src;\n"
        );
        let (ok, _, err) = run(dir.path(), &sql, 1, &[]);
        assert!(!ok, "{options}");
        assert!(err.contains(message), "{options}: {err}");
    }
    let sql = "CREATE TABLE k (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'a', \
               'properties.bootstrap.servers' = '127.0.0.1:1');\n\
               CREATE TABLE out (id BIGINT) WITH ('connector' = 'blackhole');\nINSERT INTO out SELECT * FROM k;\n";
    let (ok, _, err) = run(dir.path(), sql, 1, &[]);
    assert!(!ok);
    assert!(err.contains("Could not find required scan format 'value.format'."), "{err}");
}

/// The exactly-once sink's transactions, in this process: every checkpoint's rows are written
/// once, in a transaction that also moves the writer's checkpoint marker.
#[test]
fn an_exactly_once_sink_writes_each_row_once_in_transactions() {
    use weir::connectors::ConnectorRegistry;
    use weir::runtime::RuntimeConfig;
    use weir::session::Session;

    let broker = broker();
    let (input, output) = (topic("eos-in"), topic("eos-out"));
    broker.create_topic(&input, 2);
    broker.create_topic(&output, 2);
    let lines: Vec<String> = (0..2000).map(|i| format!("{i},{}", i % 10)).collect();
    broker.produce(&input, &lines, |i| (i % 2) as i32);
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "SET 'execution.checkpointing.interval' = '100 ms';\n\
         SET 'execution.checkpointing.dir' = '{}';\n\
         CREATE TABLE src (id BIGINT, v INT) WITH ('connector' = 'kafka', 'topic' = '{input}',\n\
           'properties.bootstrap.servers' = '{b}', 'scan.startup.mode' = 'earliest-offset',\n\
           'scan.bounded.mode' = 'latest-offset', 'format' = 'csv');\n\
         CREATE TABLE out (id BIGINT, v INT) WITH ('connector' = 'kafka', 'topic' = '{output}',\n\
           'properties.bootstrap.servers' = '{b}', 'format' = 'csv',\n\
           'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'eos-{output}');\n\
         INSERT INTO out SELECT id, v FROM src WHERE v < 5;\n",
        dir.path().display(),
        b = broker.bootstrap
    );
    let runtime = RuntimeConfig::default().with_parallelism(2);
    let mut session = Session::new(runtime, ConnectorRegistry::default(), Box::new(common::Buffer::default()));
    session.execute_script(&script).unwrap();
    let mut written: Vec<String> = broker.read_all(&output, true).into_iter().map(|(_, v)| v).collect();
    written.sort();
    let mut expected: Vec<String> = lines.into_iter().filter(|l| l.ends_with(|c: char| c < '5')).collect();
    expected.sort();
    assert_eq!(written, expected);
}

/// A random history of inserts, updates and deletes of rows `(id, category, amount)` as
/// debezium-json records, and the table it leaves.
fn cdc_history(seed: u64, changes: usize) -> (Vec<(i64, String)>, BTreeMap<i64, (String, i64)>) {
    use rand::{Rng, SeedableRng};
    let mut random = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut table: BTreeMap<i64, (String, i64)> = BTreeMap::new();
    let mut records = Vec::new();
    let image = |id: i64, (category, amount): &(String, i64)| {
        format!(r#"{{"id":{id},"category":"{category}","amount":{amount}}}"#)
    };
    for _ in 0..changes {
        let id = random.random_range(0..60);
        let row = (format!("c{}", random.random_range(0..5)), random.random_range(-50..500));
        let record = match table.get(&id).cloned() {
            None => {
                let r = format!(r#"{{"before":null,"after":{},"op":"c"}}"#, image(id, &row));
                table.insert(id, row);
                r
            }
            Some(old) if random.random_bool(0.3) => {
                table.remove(&id);
                format!(r#"{{"before":{},"after":null,"op":"d"}}"#, image(id, &old))
            }
            Some(old) => {
                let r = format!(r#"{{"before":{},"after":{},"op":"u"}}"#, image(id, &old), image(id, &row));
                table.insert(id, row);
                r
            }
        };
        records.push((id, record));
    }
    (records, table)
}

#[test]
fn a_debezium_topic_feeds_a_group_by_that_equals_the_final_tables_aggregate() {
    let broker = broker();
    let dir = tempfile::tempdir().unwrap();
    for seed in [1, 2] {
        let topic = topic("cdc");
        broker.create_topic(&topic, 3);
        let (records, table) = cdc_history(seed, 1500);
        let lines: Vec<String> = records.iter().map(|(_, r)| r.clone()).collect();
        // The changes of one row stay in order: one partition per id.
        broker.produce(&topic, &lines, |i| (records[i].0 % 3) as i32);
        let mut expected: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        for (category, amount) in table.values() {
            let e = expected.entry(category.clone()).or_default();
            *e = (e.0 + 1, e.1 + amount);
        }
        let expected: BTreeMap<String, i64> =
            expected.into_iter().map(|(c, (n, s))| (format!("[{c}, {n}, {s}]"), 1)).collect();
        let sql = format!(
            "CREATE TABLE orders (id BIGINT, category STRING, amount BIGINT) WITH ('connector' = 'kafka', \
             'topic' = '{topic}', 'properties.bootstrap.servers' = '{}', 'scan.startup.mode' = 'earliest-offset', \
             'scan.bounded.mode' = 'latest-offset', 'format' = 'debezium-json');\n\
             CREATE TABLE out (category STRING, n BIGINT, total BIGINT) WITH ('connector' = 'print');\n\
             INSERT INTO out SELECT category, COUNT(*), SUM(amount) FROM orders GROUP BY category;\n",
            broker.bootstrap
        );
        for p in [1, 2, 4] {
            let (ok, out, err) = run(dir.path(), &sql, p, &[]);
            assert!(ok, "{err}");
            assert_eq!(final_table(&out), expected, "seed {seed}, parallelism {p}");
        }
    }
}

/// Runs `script` (unbounded) with `weir run` until it printed `rows` lines or `wait` passed,
/// then stops it: the lines, without subtask prefixes, sorted (with its error when it failed);
/// and whether it was still running.
fn run_until_rows(dir: &Path, script: &str, rows: usize, wait: Duration) -> (Vec<String>, bool) {
    let file = dir.join(format!("unbounded-{}.sql", rand::random::<u32>()));
    std::fs::write(&file, script).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_weir"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg(&file)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let receive = common::stdout_lines(&mut child);
    let mut lines = Vec::new();
    let deadline = Instant::now() + wait;
    while lines.len() < rows && Instant::now() < deadline {
        if let Ok(line) = receive.recv_timeout(Duration::from_millis(100)) {
            lines.push(line.split_once("> ").map_or(line.clone(), |(_, r)| r.to_string()));
        }
    }
    let running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    let stderr = child.wait_with_output().unwrap().stderr;
    if !running {
        lines.push(format!("failed: {}", String::from_utf8_lossy(&stderr)));
    }
    lines.sort();
    (lines, running)
}

/// The seed's key-ordered lookup script, unchanged but for the broker's and the lookup
/// table's addresses, reads the bids from a topic (written there by the loading example) and
/// looks users up in PostgreSQL: the rows equal the same script's over the CSV file.
#[test]
fn the_kafka_lookup_example_runs_against_the_broker_and_postgres() {
    let broker = broker();
    let pg = common::postgres::server();
    pg.psql(
        "DROP TABLE IF EXISTS kafka_users; CREATE TABLE kafka_users (user_id TEXT PRIMARY KEY, user_name VARCHAR(255) NOT NULL, age INT NOT NULL); \
         INSERT INTO kafka_users VALUES ('web', 'Ann', 31), ('app', 'Bob', 42), ('mail', 'Cy', 27);",
    );
    broker.create_topic("user_behavior", 1);
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let on_broker = |sql: String| sql.replace("'localhost:9092'", &format!("'{}'", broker.bootstrap));
    let load = on_broker(std::fs::read_to_string(examples.join("load_bids_into_kafka.sql")).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let loaded = Command::new(env!("CARGO_BIN_EXE_weir"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg({
            let f = dir.path().join("load.sql");
            std::fs::write(&f, load).unwrap();
            f
        })
        .output()
        .unwrap();
    assert!(loaded.status.success(), "{}", String::from_utf8_lossy(&loaded.stderr));
    let script = on_broker(std::fs::read_to_string(examples.join("lookup_join_kafka.sql")).unwrap())
        .replace("'localhost:5432'", &format!("'127.0.0.1:{}'", pg.port))
        .replace("'weir_examples'", "'postgres'")
        .replace("'public.users'", "'public.kafka_users'");
    // As written (a blackhole sink), the job runs on over the topic without failing.
    let (printed, running) = run_until_rows(dir.path(), &script, 1, Duration::from_secs(3));
    assert!(printed.is_empty() && running, "{printed:?}");
    // Printing its rows, it finds what the same lookups over the CSV file find.
    let printing = script.replace("'connector' = 'blackhole'", "'connector' = 'print'");
    let (from_topic, _) = run_until_rows(dir.path(), &printing, 5, Duration::from_secs(20));
    let kafka_source = printing.find("'connector' = 'kafka'").unwrap();
    let end = kafka_source + printing[kafka_source..].find(");").unwrap();
    let from_file_script = format!(
        "{}'connector' = 'filesystem', 'path' = 'examples/data/bids.csv', 'format' = 'csv'\n{}",
        &printing[..kafka_source],
        &printing[end..]
    );
    let (from_file, _) = run_until_rows(dir.path(), &from_file_script, 5, Duration::from_secs(20));
    assert_eq!(from_topic, from_file);
    assert_eq!(from_topic, ["+I[1001, 31]", "+I[1002, 42]", "+I[1004, 31]", "+I[1005, 27]", "+I[1006, 42]"]);
}

/// A changelog with inserts, updates and deletes (a debezium-json topic) written into an
/// `upsert-kafka` table and read back: the table read equals the changelog's final table, at
/// every parallelism; EXPLAIN shows the normalization Flink plans for an upsert source.
#[test]
fn upsert_kafka_round_trips_a_changelog() {
    let broker = broker();
    let dir = tempfile::tempdir().unwrap();
    let (records, table) = cdc_history(3, 1200);
    let expected: BTreeMap<String, i64> =
        table.iter().map(|(id, (category, amount))| (format!("[{id}, {category}, {amount}]"), 1)).collect();
    let lines: Vec<String> = records.iter().map(|(_, r)| r.clone()).collect();
    let changes = topic("changes");
    broker.create_topic(&changes, 3);
    broker.produce(&changes, &lines, |i| (records[i].0 % 3) as i32);
    let cdc = format!(
        "CREATE TABLE cdc (id BIGINT, category STRING, amount BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'kafka', \
         'topic' = '{changes}', 'properties.bootstrap.servers' = '{}', 'scan.startup.mode' = 'earliest-offset', \
         'scan.bounded.mode' = 'latest-offset', 'format' = 'debezium-json');\n",
        broker.bootstrap
    );
    for p in [1, 2, 4] {
        let topic = topic("upserts");
        broker.create_topic(&topic, 3);
        let upserts = |extra: &str| {
            format!(
                "CREATE TABLE upserts (id BIGINT, category STRING, amount BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH (\
                 'connector' = 'upsert-kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{}', \
                 'key.format' = 'csv', 'value.format' = 'json'{extra});\n",
                broker.bootstrap
            )
        };
        let write = format!("{cdc}{}INSERT INTO upserts SELECT * FROM cdc;\n", upserts(""));
        let (ok, _, err) = run(dir.path(), &write, p, &[]);
        assert!(ok, "{err}");
        assert!(broker.read_all(&topic, false).iter().any(|(_, v)| v.is_empty()), "no tombstone written");
        let read = format!(
            "{}CREATE TABLE out (id BIGINT, category STRING, amount BIGINT) WITH ('connector' = 'print');\n\
             INSERT INTO out SELECT * FROM upserts;\n",
            upserts(", 'scan.bounded.mode' = 'latest-offset'")
        );
        let (ok, out, err) = run(dir.path(), &read, p, &[]);
        assert!(ok, "{err}");
        assert_eq!(final_table(&out), expected, "parallelism {p}");
        if p == 2 {
            let explain = read.replace("INSERT INTO out", "EXPLAIN CHANGELOG_MODE INSERT INTO out");
            let (ok, out, err) = run(dir.path(), &explain, p, &[]);
            assert!(ok, "{err}");
            let physical = out.split("== Optimized Physical Plan ==").nth(1).unwrap();
            assert!(
                physical.contains("+- ChangelogNormalize(key=[id], changelogMode=[I,UB,UA,D])\n")
                    && physical.contains("+- Exchange(distribution=[hash[id]], changelogMode=[UA,D])\n")
                    && physical.contains("fields=[id, category, amount], changelogMode=[UA,D])\n"),
                "{physical}"
            );
        }
    }
}

/// A Kafka source checkpointed mid-way at one parallelism and restored at another reads on
/// from where each partition was, rows it had read but not yet sent included: every record
/// exactly once (on librdkafka's mock cluster, in this process).
#[test]
fn a_restored_kafka_source_reads_every_record_once() {
    use weir::connectors::TableDescriptor;
    use weir::runtime::parse::parse_schema;
    let cluster = rdkafka::mocking::MockCluster::new(1).unwrap();
    cluster.create_topic("numbers", 4, 1).unwrap();
    let mock = common::kafka::Broker::at(cluster.bootstrap_servers());
    let lines: Vec<String> = (0..2000).map(|i| i.to_string()).collect();
    mock.produce("numbers", &lines, |i| (i % 4) as i32);
    let table = TableDescriptor::new(
        "numbers",
        parse_schema(&[("n", "BIGINT")]).unwrap(),
        &[
            ("connector", "kafka"),
            ("topic", "numbers"),
            ("properties.bootstrap.servers", &mock.bootstrap),
            ("scan.startup.mode", "earliest-offset"),
            ("scan.bounded.mode", "latest-offset"),
            ("format", "csv"),
        ],
    );
    let provider = weir::connectors::ConnectorRegistry::default().create_source(&table).unwrap();
    let clock: std::sync::Arc<dyn weir::runtime::Clock> = std::sync::Arc::new(weir::runtime::SystemClock);
    // Chunks of 64 rows: a poll reads records of several partitions and sends one partition's.
    let context = |index: usize, parallelism: usize| {
        let info = weir::runtime::SubtaskInfo::new("numbers", index, parallelism);
        weir::runtime::OperatorContext::new(info, std::sync::Arc::clone(&clock), 64)
    };
    let expected: Vec<i64> = (0..2000).collect();
    for (before, after) in [(1, 1), (1, 3), (2, 1), (4, 2)] {
        let seen = common::checkpoint_and_restore(
            &provider.factory,
            context,
            (before, after),
            |_| 12,
            || std::thread::sleep(Duration::from_millis(15)),
        );
        assert_eq!(seen, expected, "{before} subtasks restored as {after}");
    }
}

/// The `raw` format reads each whole message as the column's value (line breaks included) and
/// writes the value's bytes back.
#[test]
fn raw_messages_are_read_and_written_whole() {
    let broker = broker();
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (topic("raw-in"), topic("raw-out"));
    broker.create_topic(&input, 1);
    broker.create_topic(&output, 1);
    broker.produce(&input, &["first line\nsecond line", "{\"not\": \"parsed\"}"], |_| 0);
    let table = |name: &str, topic: &str| {
        format!(
            "CREATE TABLE {name} (line STRING) WITH ('connector' = 'kafka', 'topic' = '{topic}', \
             'properties.bootstrap.servers' = '{}', 'scan.startup.mode' = 'earliest-offset', \
             'scan.bounded.mode' = 'latest-offset', 'format' = 'raw');\n",
            broker.bootstrap
        )
    };
    let sql = format!("{}{}INSERT INTO b SELECT UPPER(line) FROM a;\n", table("a", &input), table("b", &output));
    let (ok, _, err) = run(dir.path(), &sql, 1, &[]);
    assert!(ok, "{err}");
    let written: Vec<String> = broker.read_all(&output, false).into_iter().map(|(_, v)| v).collect();
    assert_eq!(written, ["FIRST LINE\nSECOND LINE", "{\"NOT\": \"PARSED\"}"]);
}

/// Metadata columns read a record's partition, offset, topic and timestamp, and write its
/// timestamp; unknown keys, wrong types and connectors without metadata are refused with
/// Flink's messages.
#[test]
fn metadata_columns_read_and_write_record_metadata() {
    let broker = broker();
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (topic("meta-in"), topic("meta-out"));
    broker.create_topic(&input, 2);
    broker.create_topic(&output, 1);
    let lines: Vec<String> = (0..6).map(|i| format!("{i},row {i}")).collect();
    broker.produce(&input, &lines, |i| (i % 2) as i32);
    let bounded = format!(
        "'properties.bootstrap.servers' = '{}', 'scan.startup.mode' = 'earliest-offset', \
         'scan.bounded.mode' = 'latest-offset', 'format' = 'csv'",
        broker.bootstrap
    );
    let sql = format!(
        "CREATE TABLE t (id BIGINT, `partition` INT METADATA VIRTUAL, s STRING, `offset` BIGINT METADATA VIRTUAL,\n\
           topic_name STRING METADATA FROM 'topic' VIRTUAL, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp')\n\
         WITH ('connector' = 'kafka', 'topic' = '{input}', {bounded});\n\
         CREATE TABLE out (id BIGINT, p INT, o BIGINT, same_topic BOOLEAN, has_time BOOLEAN, s STRING) WITH ('connector' = 'print');\n\
         INSERT INTO out SELECT id, `partition`, `offset`, topic_name = '{input}', ts IS NOT NULL, s FROM t;\n"
    );
    let (ok, out, err) = run(dir.path(), &sql, 2, &[]);
    assert!(ok, "{err}");
    let expected: Vec<String> = (0..6).map(|i| format!("+I[{i}, {}, {}, true, true, row {i}]", i % 2, i / 2)).collect();
    assert_eq!(printed(&out), expected);
    // A persisted `timestamp` column is written as the record's timestamp, and read back.
    let write = format!(
        "CREATE TABLE src (id BIGINT, s STRING) WITH ('connector' = 'kafka', 'topic' = '{input}', {bounded});\n\
         CREATE TABLE dst (id BIGINT, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp') WITH (\
           'connector' = 'kafka', 'topic' = '{output}', {bounded});\n\
         INSERT INTO dst SELECT id, TO_TIMESTAMP_LTZ(1700000000000 + id, 3) FROM src;\n"
    );
    let (ok, _, err) = run(dir.path(), &write, 1, &[]);
    assert!(ok, "{err}");
    let read = format!(
        "CREATE TABLE dst (id BIGINT, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp') WITH (\
           'connector' = 'kafka', 'topic' = '{output}', {bounded});\n\
         CREATE TABLE back (id BIGINT) WITH ('connector' = 'print');\n\
         INSERT INTO back SELECT id FROM dst WHERE ts = TO_TIMESTAMP_LTZ(1700000000000 + id, 3);\n"
    );
    let (ok, out, err) = run(dir.path(), &read, 1, &[]);
    assert!(ok, "{err}");
    let mut ids: Vec<&str> = out.lines().collect();
    ids.sort();
    assert_eq!(ids, ["+I[0]", "+I[1]", "+I[2]", "+I[3]", "+I[4]", "+I[5]"], "each record has the timestamp written");
    // What is refused.
    let refused = [
        (
            format!("CREATE TABLE t (id BIGINT, x INT METADATA FROM 'nope') WITH ('connector' = 'kafka', 'topic' = '{input}', {bounded});"),
            "Invalid metadata key 'nope' in column 'x' of table 'default_catalog.default_database.t'.",
        ),
        (
            format!("CREATE TABLE t (id BIGINT, p BIGINT METADATA FROM 'partition') WITH ('connector' = 'kafka', 'topic' = '{input}', {bounded});"),
            "Invalid data type for metadata column 'p' of table 'default_catalog.default_database.t'.",
        ),
        (
            "CREATE TABLE t (id BIGINT, p INT METADATA FROM 'partition') WITH ('connector' = 'datagen', 'number-of-rows' = '1');".to_string(),
            "declares metadata columns, but the underlying DynamicTableSource doesn't implement the SupportsReadingMetadata interface",
        ),
    ];
    for (ddl, message) in refused {
        let sql = format!(
            "{ddl}\nCREATE TABLE o (id BIGINT) WITH ('connector' = 'blackhole');\nINSERT INTO o SELECT id FROM t;\n"
        );
        let (ok, _, err) = run(dir.path(), &sql, 1, &[]);
        assert!(!ok && err.contains(message), "{ddl}: {err}");
    }
}

/// Rows written with the `avro` format read back the same (keys in `csv`, values in Avro).
#[test]
fn avro_values_round_trip() {
    let broker = broker();
    let dir = tempfile::tempdir().unwrap();
    let topic = topic("avro");
    broker.create_topic(&topic, 2);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/data/orders.csv");
    let table = |extra: &str| {
        format!(
            "CREATE TABLE avro_orders ({ORDERS}) WITH ('connector' = 'kafka', 'topic' = '{topic}', \
             'properties.bootstrap.servers' = '{}', 'key.format' = 'csv', 'key.fields' = 'id', \
             'value.format' = 'avro'{extra});\n",
            broker.bootstrap
        )
    };
    let write = format!(
        "CREATE TABLE orders ({ORDERS}) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n{}\
         INSERT INTO avro_orders SELECT * FROM orders;\n",
        data.display(),
        table("")
    );
    let (ok, _, err) = run(dir.path(), &write, 2, &[]);
    assert!(ok, "{err}");
    let query = "CREATE TABLE out (product STRING, n BIGINT, total DECIMAL(38, 2), last_ts TIMESTAMP(3)) \
                 WITH ('connector' = 'print');\nINSERT INTO out SELECT product, COUNT(*), SUM(amount), MAX(ts) FROM {T} GROUP BY product;\n";
    let from_file = format!(
        "CREATE TABLE orders ({ORDERS}) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n{}",
        data.display(),
        query.replace("{T}", "orders")
    );
    let read = format!(
        "{}{}",
        table(", 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'"),
        query.replace("{T}", "avro_orders")
    );
    let (ok, expected, err) = run(dir.path(), &from_file, 1, &[]);
    assert!(ok, "{err}");
    let (ok, got, err) = run(dir.path(), &read, 2, &[]);
    assert!(ok, "{err}");
    assert_eq!(final_table(&got), final_table(&expected));
}

/// With `topic-pattern`, a topic created while the job runs is found by partition discovery
/// and read from its beginning.
#[test]
fn partition_discovery_reads_a_topic_created_while_the_job_runs() {
    let broker = broker();
    let dir = tempfile::tempdir().unwrap();
    let prefix = format!("disc{:08x}", rand::random::<u32>());
    broker.create_topic(&format!("{prefix}-a"), 1);
    broker.produce(&format!("{prefix}-a"), &["1", "2"], |_| 0);
    let sql = format!(
        "CREATE TABLE t (n BIGINT) WITH ('connector' = 'kafka', 'topic-pattern' = '{prefix}-.*', \
         'properties.bootstrap.servers' = '{}', 'scan.startup.mode' = 'earliest-offset', \
         'scan.topic-partition-discovery.interval' = '300 ms', 'format' = 'csv');\n\
         CREATE TABLE out (n BIGINT) WITH ('connector' = 'print');\nINSERT INTO out SELECT * FROM t;\n",
        broker.bootstrap
    );
    let file = dir.path().join("discovery.sql");
    std::fs::write(&file, sql).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["run", file.to_str().unwrap(), "--parallelism", "2"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lines = common::stdout_lines(&mut child);
    let strip = |l: String| l.split_once("> ").map_or(l.clone(), |(_, r)| r.to_string());
    let mut got: Vec<String> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while got.len() < 2 && Instant::now() < deadline {
        got.extend(lines.recv_timeout(Duration::from_millis(100)).ok().map(strip));
    }
    broker.create_topic(&format!("{prefix}-b"), 2);
    broker.produce(&format!("{prefix}-b"), &["3", "4"], |i| i as i32);
    while got.len() < 4 && Instant::now() < deadline {
        got.extend(lines.recv_timeout(Duration::from_millis(100)).ok().map(strip));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    got.sort();
    assert_eq!(got, ["+I[1]", "+I[2]", "+I[3]", "+I[4]"]);
}
