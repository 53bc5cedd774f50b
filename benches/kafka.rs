//! Kafka → weir → Kafka beside librdkafka alone on the same broker, and beside Apache Flink
//! 2.3 with its own Kafka connector on the same topics and queries.
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
//! Each weir run is also measured in CPU seconds (its whole process, from `/proc`), less its
//! start-up (the same job over an empty topic), as records per CPU second. `--flink PYTHON` (a
//! Python with PyFlink 2.3 and a JDK) runs the same two jobs on Flink too, with Flink's Kafka
//! connector (`scripts/ensure-flink-kafka-jars`), measured the same way (its JVM included).
//!
//! `cargo bench --bench kafka [-- RECORDS] [--flink PYTHON]` (default 1 000 000 records).

#[path = "common/measure.rs"]
mod measure;

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

/// An engine that runs the benchmark's scripts.
#[derive(Clone, Copy, PartialEq)]
enum Engine<'a> {
    Weir,
    /// Apache Flink through PyFlink: the Python, and `pipeline.jars` for its Kafka connector.
    Flink(&'a str, &'a str),
}

/// Runs `sql` on `engine` at `parallelism`: the wall seconds, and the CPU seconds and peak
/// memory of the whole process tree.
fn run(engine: Engine<'_>, sql: &str, parallelism: usize) -> (f64, measure::Measured) {
    let dir = std::env::temp_dir().join(format!("weir-kafka-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("job.sql");
    let command = match engine {
        Engine::Weir => {
            std::fs::write(&file, sql).unwrap();
            let mut command = Command::new(env!("CARGO_BIN_EXE_weir"));
            command.arg("run").arg(&file).args(["--parallelism", &parallelism.to_string()]);
            command
        }
        Engine::Flink(python, jars) => {
            std::fs::write(&file, format!("SET 'pipeline.jars' = '{jars}';\n{sql}")).unwrap();
            let mut command = Command::new(python);
            command.arg("benches/nexmark/flink/run_sql.py").arg(&file).arg(parallelism.to_string());
            command
        }
    };
    let started = Instant::now();
    let measured = measure::measure(command).unwrap_or_else(|e| panic!("the job failed: {e}"));
    (started.elapsed().as_secs_f64(), measured)
}

/// `scripts/ensure-flink-kafka-jars`' jars as `pipeline.jars` takes them.
fn flink_jars() -> String {
    let out = Command::new("scripts/ensure-flink-kafka-jars").output().expect("scripts/ensure-flink-kafka-jars");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let jars = String::from_utf8(out.stdout).unwrap();
    jars.trim().split(';').map(|j| format!("file://{j}")).collect::<Vec<_>>().join(";")
}

/// The filter and the mini-batch GROUP BY over `source` into topics named after `output`.
fn jobs(source: &str, b: &str, output: &str) -> [(&'static str, String); 2] {
    let filter = format!(
        "{source}CREATE TABLE sink_table (id BIGINT, k INT, v INT, name STRING) WITH ('connector' = 'kafka', \
         'topic' = '{output}-filter', 'properties.bootstrap.servers' = '{b}', 'format' = 'csv');\n\
         INSERT INTO sink_table SELECT * FROM src WHERE v < 50;\n"
    );
    let aggregate = format!(
        "SET 'table.exec.mini-batch.enabled' = 'true';\nSET 'table.exec.mini-batch.allow-latency' = '1 s';\n\
         SET 'table.exec.mini-batch.size' = '10000';\n{source}CREATE TABLE sink_table (k INT, n BIGINT, total BIGINT) \
         WITH ('connector' = 'kafka', 'topic' = '{output}-agg', 'properties.bootstrap.servers' = '{b}', \
         'format' = 'debezium-json');\n\
         INSERT INTO sink_table SELECT k, COUNT(*), SUM(CAST(v AS BIGINT)) FROM src GROUP BY k;\n"
    );
    [("filter", filter), ("group by", aggregate)]
}

/// A bounded scan of `topic` up to `counts` records per partition.
fn source(topic: &str, b: &str, counts: &[usize]) -> String {
    let ends: Vec<String> = counts.iter().enumerate().map(|(p, n)| format!("partition:{p},offset:{n}")).collect();
    format!(
        "CREATE TABLE src (id BIGINT, k INT, v INT, name STRING) WITH ('connector' = 'kafka', 'topic' = '{topic}', \
         'properties.bootstrap.servers' = '{b}', 'scan.startup.mode' = 'earliest-offset', \
         'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = '{}', 'format' = 'csv');\n",
        ends.join(";")
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let records: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(1_000_000);
    let python = args.iter().position(|a| a == "--flink").and_then(|i| args.get(i + 1)).cloned();
    let jars = python.as_ref().map(|_| flink_jars());
    let mut engines = vec![Engine::Weir];
    if let (Some(python), Some(jars)) = (&python, &jars) {
        engines.push(Engine::Flink(python, jars));
    }
    let broker = start_broker();
    let b = broker.bootstrap.clone();
    let suffix = format!("{:08x}", rand::random::<u32>());
    let input = format!("bench-in-{suffix}");
    let empty = format!("bench-empty-{suffix}");
    create_topic(&b, &input);
    create_topic(&b, &empty);
    let (produce_s, counts) = produce(&b, &input, records);
    let mut rows = vec![("librdkafka produce".to_string(), records as f64 / produce_s, String::new(), String::new())];
    let name = |engine: &Engine<'_>| if *engine == Engine::Weir { "weir" } else { "flink" };
    for parallelism in [1, 2] {
        // The ceiling of the path: librdkafka consuming with as many consumers as the job has
        // subtasks (the sinks write less than the jobs read).
        let consume_s = consume(&b, &input, &counts, parallelism);
        let ceiling = (records as f64 / produce_s).min(records as f64 / consume_s);
        rows.push((
            format!("librdkafka consume ×{parallelism}"),
            records as f64 / consume_s,
            String::new(),
            String::new(),
        ));
        for engine in &engines {
            let output = format!("bench-{suffix}-{}-{parallelism}", name(engine));
            create_topic(&b, &format!("{output}-filter"));
            create_topic(&b, &format!("{output}-agg"));
            let empty_jobs = jobs(&source(&empty, &b, &[0; PARTITIONS as usize]), &b, &output);
            for ((job, sql), (_, empty_sql)) in jobs(&source(&input, &b, &counts), &b, &output).iter().zip(&empty_jobs)
            {
                let startup = run(*engine, empty_sql, parallelism).1.cpu;
                let (seconds, measured) = run(*engine, sql, parallelism);
                let (rate, cpu, peak) = (records as f64 / seconds, measured.cpu, measured.peak_mb);
                let per_cpu = records as f64 / (cpu - startup).max(0.01);
                rows.push((
                    format!("{} {job} p{parallelism}", name(engine)),
                    rate,
                    format!("{:.2}", rate / ceiling),
                    format!("{per_cpu:.0} ({cpu:.1} − {startup:.1} s), {peak:.0} MB"),
                ));
            }
        }
    }
    println!("{records} records, {PARTITIONS} partitions, broker {b}");
    println!(
        "{:<26} {:>12} {:>13} {:>44}",
        "path", "records/s", "× librdkafka", "records per CPU s (CPU − start-up), peak RSS"
    );
    for (name, rate, ratio, per_cpu) in rows {
        println!("{name:<26} {rate:>12.0} {ratio:>13} {per_cpu:>44}");
    }
}
