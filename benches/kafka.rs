//! Kafka → weir → Kafka beside librdkafka alone on the same broker.
//!
//! Starts an Apache Kafka broker on loopback (`scripts/kafka-broker`, single-node KRaft;
//! `WEIR_KAFKA_BOOTSTRAP=host:port` uses a running cluster instead), writes
//! `RECORDS` CSV records into a topic of four partitions with librdkafka (the produce
//! ceiling), then at parallelism 1 and 2 reads them back with as many plain librdkafka consumers
//! (the consume ceiling) and runs two `weir run` jobs over the topic: a filter into a topic
//! (half the records) and a mini-batch GROUP BY into a topic in `debezium-json`. Reports
//! records per second for each (weir's from process start to exit), and weir's over the
//! slower ceiling of its path.
//!
//! `cargo bench --bench kafka [-- RECORDS]` (default 1 000 000).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};

const PARTITIONS: i32 = 4;

fn config(bootstrap: &str) -> ClientConfig {
    let mut config = ClientConfig::new();
    config.set("bootstrap.servers", bootstrap).set("log_level", "3");
    config
}

/// An Apache Kafka broker on a free loopback port, its data in a temporary directory, stopped
/// when `Broker` is dropped.
struct Broker {
    bootstrap: String,
    child: Option<std::process::Child>,
    _data: Option<tempfile::TempDir>,
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn start_broker() -> Broker {
    if let Ok(bootstrap) = std::env::var("WEIR_KAFKA_BOOTSTRAP") {
        return Broker { bootstrap, child: None, _data: None };
    }
    let data = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kafka-broker"))
        .arg(data.path())
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the broker starts");
    let broker = Broker { bootstrap: format!("127.0.0.1:{port}"), child: Some(child), _data: Some(data) };
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let consumer: BaseConsumer = config(&broker.bootstrap).create().unwrap();
        if consumer.fetch_metadata(None, Duration::from_secs(1)).is_ok_and(|m| !m.brokers().is_empty()) {
            return broker;
        }
        assert!(Instant::now() < deadline, "the broker did not start");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn create_topic(bootstrap: &str, topic: &str) {
    let admin: AdminClient<DefaultClientContext> = config(bootstrap).create().unwrap();
    let new = NewTopic::new(topic, PARTITIONS, TopicReplication::Fixed(1));
    let options = AdminOptions::new().operation_timeout(Some(Duration::from_secs(10)));
    for result in futures::executor::block_on(admin.create_topics([&new], &options)).unwrap() {
        result.unwrap();
    }
}

/// Writes `records` records round the partitions; returns the seconds it took and each
/// partition's record count.
fn produce(bootstrap: &str, topic: &str, records: usize) -> (f64, Vec<usize>) {
    let producer: BaseProducer =
        config(bootstrap).set("linger.ms", "20").set("batch.num.messages", "10000").create().unwrap();
    let started = Instant::now();
    let mut counts = vec![0; PARTITIONS as usize];
    let mut line = String::new();
    for i in 0..records {
        line.clear();
        use std::fmt::Write;
        write!(line, "{i},{},{},name-{}", i % 1000, i % 100, i % 37).unwrap();
        let partition = (i % PARTITIONS as usize) as i32;
        counts[partition as usize] += 1;
        let mut record: BaseRecord<'_, [u8], str> = BaseRecord::to(topic).payload(line.as_str()).partition(partition);
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((_, back)) => {
                    record = back;
                    producer.poll(Duration::from_millis(5));
                }
            }
        }
    }
    producer.flush(Duration::from_secs(120)).unwrap();
    (started.elapsed().as_secs_f64(), counts)
}

/// Reads every record of `topic` from the beginning with `consumers` consumers side by side
/// (consumer i takes partitions i, i + consumers, …; `counts` holds each partition's records);
/// the seconds it took.
fn consume(bootstrap: &str, topic: &str, counts: &[usize], consumers: usize) -> f64 {
    let started = Instant::now();
    std::thread::scope(|scope| {
        for i in 0..consumers {
            scope.spawn(move || {
                let consumer: BaseConsumer =
                    config(bootstrap).set("group.id", "bench-raw").set("enable.auto.commit", "false").create().unwrap();
                let mut list = TopicPartitionList::new();
                let mut records = 0;
                for p in (i..counts.len()).step_by(consumers) {
                    list.add_partition_offset(topic, p as i32, Offset::Beginning).unwrap();
                    records += counts[p];
                }
                consumer.assign(&list).unwrap();
                let mut read = 0;
                while read < records {
                    match consumer.poll(Duration::from_secs(5)) {
                        Some(Ok(_)) => read += 1,
                        Some(Err(e)) => panic!("consuming: {e}"),
                        None => panic!("no record for 5 s after {read}"),
                    }
                }
            });
        }
    });
    started.elapsed().as_secs_f64()
}

/// Runs `sql` with `weir run` at `parallelism`; the wall seconds.
fn weir(sql: &str, parallelism: usize) -> f64 {
    let dir = std::env::temp_dir().join(format!("weir-kafka-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("job.sql");
    std::fs::write(&file, sql).unwrap();
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_weir"))
        .arg("run")
        .arg(&file)
        .args(["--parallelism", &parallelism.to_string()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    started.elapsed().as_secs_f64()
}

fn main() {
    let records: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(1_000_000);
    let broker = start_broker();
    let b = broker.bootstrap.clone();
    let suffix = format!("{:08x}", rand::random::<u32>());
    let input = format!("bench-in-{suffix}");
    create_topic(&b, &input);
    let (produce_s, counts) = produce(&b, &input, records);
    // The end of each partition, as the scan's bound.
    let ends: Vec<String> = counts.iter().enumerate().map(|(p, n)| format!("partition:{p},offset:{n}")).collect();
    let source = format!(
        "CREATE TABLE src (id BIGINT, k INT, v INT, name STRING) WITH ('connector' = 'kafka', 'topic' = '{input}', \
         'properties.bootstrap.servers' = '{b}', 'scan.startup.mode' = 'earliest-offset', \
         'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = '{}', 'format' = 'csv');\n",
        ends.join(";")
    );
    let mut rows = vec![("librdkafka produce".to_string(), records as f64 / produce_s, String::new())];
    for parallelism in [1, 2] {
        // The ceiling of the path: librdkafka consuming with as many consumers as weir has
        // subtasks (weir's sinks write less than it reads).
        let consume_s = consume(&b, &input, &counts, parallelism);
        let ceiling = (records as f64 / produce_s).min(records as f64 / consume_s);
        rows.push((format!("librdkafka consume ×{parallelism}"), records as f64 / consume_s, String::new()));
        let filtered = format!("bench-filter-{suffix}-{parallelism}");
        let counted = format!("bench-agg-{suffix}-{parallelism}");
        create_topic(&b, &filtered);
        create_topic(&b, &counted);
        let filter = format!(
            "{source}CREATE TABLE out (id BIGINT, k INT, v INT, name STRING) WITH ('connector' = 'kafka', \
             'topic' = '{filtered}', 'properties.bootstrap.servers' = '{b}', 'format' = 'csv');\n\
             INSERT INTO out SELECT * FROM src WHERE v < 50;\n"
        );
        let seconds = weir(&filter, parallelism);
        let rate = records as f64 / seconds;
        rows.push((format!("weir filter p{parallelism}"), rate, format!("{:.2}", rate / ceiling)));
        let aggregate = format!(
            "SET 'table.exec.mini-batch.enabled' = 'true';\nSET 'table.exec.mini-batch.allow-latency' = '1 s';\n\
             SET 'table.exec.mini-batch.size' = '10000';\n{source}CREATE TABLE out (k INT, n BIGINT, total BIGINT) WITH ('connector' = 'kafka', \
             'topic' = '{counted}', 'properties.bootstrap.servers' = '{b}', 'format' = 'debezium-json');\n\
             INSERT INTO out SELECT k, COUNT(*), SUM(CAST(v AS BIGINT)) FROM src GROUP BY k;\n"
        );
        let seconds = weir(&aggregate, parallelism);
        let rate = records as f64 / seconds;
        rows.push((format!("weir group by p{parallelism}"), rate, format!("{:.2}", rate / ceiling)));
    }
    println!("{records} records, {PARTITIONS} partitions, broker {b}");
    println!("{:<24} {:>14} {:>18}", "path", "records/s", "× librdkafka");
    for (name, rate, ratio) in rows {
        println!("{name:<24} {rate:>14.0} {ratio:>18}");
    }
}
