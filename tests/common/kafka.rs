//! Kafka brokers for the tests: a throwaway Apache Kafka broker (single-node KRaft, run by
//! `scripts/kafka-broker` in another process, on a free loopback port, stopped when the test
//! process exits), shared by the tests of one binary or owned by one test that kills and restarts
//! it; or librdkafka's in-process mock cluster. Helpers create topics, write lines and read a
//! topic back.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, Headers, Message, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};

/// A record as the tests write it and read it back whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub partition: i32,
    /// Milliseconds since the epoch (`CreateTime`).
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

/// A broker's address, and the broker's process when this test process runs it.
pub struct Broker {
    /// `host:port` for `properties.bootstrap.servers`.
    pub bootstrap: String,
    process: Option<Mutex<Process>>,
}

/// A broker this test process runs: its data directory (kept across restarts), its client port,
/// its extra configuration and the shell that watches it.
struct Process {
    dir: tempfile::TempDir,
    port: u16,
    settings: Vec<String>,
    watchdog: Option<std::process::Child>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap()
}

/// The broker of this test binary: the one at `WEIR_KAFKA_BOOTSTRAP` when set (a Kafka cluster
/// of one's own), else an Apache Kafka broker started on first use.
pub fn broker() -> &'static Broker {
    static BROKER: OnceLock<Broker> = OnceLock::new();
    BROKER.get_or_init(|| match std::env::var("WEIR_KAFKA_BOOTSTRAP") {
        Ok(bootstrap) => Broker::at(bootstrap),
        Err(_) => Broker::start(&[]),
    })
}

impl Process {
    fn pid_file(&self) -> PathBuf {
        self.dir.path().join("broker.pid")
    }

    fn log_file(&self) -> PathBuf {
        self.dir.path().join("broker.log")
    }

    /// Starts the broker (formatting its directory the first time) under a shell that stops it
    /// once this test process is gone.
    fn launch(&mut self) {
        let program = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/kafka-broker");
        let settings: Vec<String> = self.settings.iter().map(|s| format!("'{s}'")).collect();
        let script = format!(
            "{program} {dir} {port} {settings} >>{log} 2>&1 & b=$!; echo $b >{pid}; \
             while [ -d /proc/{me} ] && [ -d /proc/$b ]; do sleep 0.5; done; kill $b 2>/dev/null; wait $b",
            program = program.display(),
            dir = self.dir.path().join("broker").display(),
            port = self.port,
            settings = settings.join(" "),
            log = self.log_file().display(),
            pid = self.pid_file().display(),
            me = std::process::id(),
        );
        let _ = std::fs::remove_file(self.pid_file());
        let watchdog = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.watchdog = Some(watchdog);
    }

    /// Waits until the broker answers metadata requests with itself in them.
    fn wait_until_up(&self, bootstrap: &str) {
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let consumer: BaseConsumer =
                client_config(bootstrap).set("socket.connection.setup.timeout.ms", "1000").create().unwrap();
            if let Ok(metadata) = consumer.fetch_metadata(None, Duration::from_secs(1)) {
                if !metadata.brokers().is_empty() {
                    return;
                }
            }
            let log = std::fs::read_to_string(self.log_file()).unwrap_or_default();
            let exited = self.pid_file().exists() && self.pid().is_none();
            assert!(!exited, "the Kafka broker exited: {log}");
            assert!(Instant::now() < deadline, "the Kafka broker did not start in 90 s: {log}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The broker's process id while it runs.
    fn pid(&self) -> Option<u32> {
        let pid: u32 = std::fs::read_to_string(self.pid_file()).ok()?.trim().parse().ok()?;
        std::path::Path::new(&format!("/proc/{pid}")).exists().then_some(pid)
    }
}

/// Hands `record` to `producer`, waiting while its queue is full.
fn send(producer: &BaseProducer, mut record: BaseRecord<'_, [u8], [u8]>) {
    while let Err((_, back)) = producer.send(record) {
        record = back;
        producer.poll(Duration::from_millis(20));
    }
}

/// Waits until `producer` has delivered the `records` it was given for `topic`: a loaded
/// machine may take long, so it waits while deliveries go on, up to five minutes.
fn flush(producer: &BaseProducer, topic: &str, records: usize) {
    let deadline = Instant::now() + Duration::from_secs(300);
    while let Err(e) = producer.flush(Duration::from_secs(10)) {
        assert!(Instant::now() < deadline, "writing {records} records to {topic} did not finish: {e}");
    }
}

/// How often each value is in `values`.
pub fn copies<'a>(values: impl IntoIterator<Item = &'a String>) -> BTreeMap<String, usize> {
    let mut copies = BTreeMap::new();
    for value in values {
        *copies.entry(value.clone()).or_insert(0) += 1;
    }
    copies
}

/// Fails unless every `expected` value is in `copies` once and nothing else is.
pub fn assert_each_once(copies: &BTreeMap<String, usize>, expected: &[String]) {
    let twice: Vec<&String> = copies.iter().filter(|(_, n)| **n > 1).map(|(r, _)| r).take(3).collect();
    let missing: Vec<&String> = expected.iter().filter(|r| !copies.contains_key(*r)).take(3).collect();
    assert!(twice.is_empty() && missing.is_empty(), "written twice: {twice:?}; missing: {missing:?}");
    assert_eq!(copies.len(), expected.len(), "records that are not expected were written");
}

fn client_config(bootstrap: &str) -> ClientConfig {
    let mut config = ClientConfig::new();
    config.set("bootstrap.servers", bootstrap);
    config.set("log_level", "3");
    config
}

impl Broker {
    /// A broker at `bootstrap` that this process does not run (a mock cluster's).
    pub fn at(bootstrap: String) -> Broker {
        Broker { bootstrap, process: None }
    }

    /// Starts an Apache Kafka broker of this test process on a free loopback port, with
    /// `settings` (`name=value`) added to its configuration; it stops when dropped or when the
    /// test process exits.
    pub fn start(settings: &[&str]) -> Broker {
        let mut process = Process {
            dir: tempfile::Builder::new().prefix("weir-kafka-").tempdir().unwrap(),
            port: free_port(),
            settings: settings.iter().map(|s| s.to_string()).collect(),
            watchdog: None,
        };
        let bootstrap = format!("127.0.0.1:{}", process.port);
        process.launch();
        process.wait_until_up(&bootstrap);
        Broker { bootstrap, process: Some(Mutex::new(process)) }
    }

    /// Kills the broker with SIGKILL (as a crash would) and waits until it is gone.
    pub fn kill(&self) {
        let mut process = self.process.as_ref().expect("a broker this test process runs").lock().unwrap();
        if let Some(pid) = process.pid() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
        if let Some(mut watchdog) = process.watchdog.take() {
            let _ = watchdog.wait();
        }
    }

    /// Starts the killed broker again on the same port with the same data, and waits until it
    /// serves.
    pub fn restart(&self) {
        let mut process = self.process.as_ref().expect("a broker this test process runs").lock().unwrap();
        process.launch();
        process.wait_until_up(&self.bootstrap);
    }

    /// A client configuration for this broker.
    pub fn config(&self) -> ClientConfig {
        client_config(&self.bootstrap)
    }

    /// Creates `topic` with `partitions` partitions.
    pub fn create_topic(&self, topic: &str, partitions: i32) {
        let admin: AdminClient<DefaultClientContext> = self.config().create().unwrap();
        let new = NewTopic::new(topic, partitions, TopicReplication::Fixed(1));
        let options = AdminOptions::new().operation_timeout(Some(Duration::from_secs(10)));
        let results = futures::executor::block_on(admin.create_topics([&new], &options)).unwrap();
        for result in results {
            result.unwrap_or_else(|(t, e)| panic!("creating topic {t}: {e}"));
        }
    }

    /// Deletes `topic`.
    pub fn delete_topic(&self, topic: &str) {
        let admin: AdminClient<DefaultClientContext> = self.config().create().unwrap();
        let options = AdminOptions::new().operation_timeout(Some(Duration::from_secs(10)));
        let results = futures::executor::block_on(admin.delete_topics(&[topic], &options)).unwrap();
        for result in results {
            result.unwrap_or_else(|(t, e)| panic!("deleting topic {t}: {e}"));
        }
    }

    /// Writes `lines` to `topic`: line i (its bytes) to partition `partition_of(i)`, with no key.
    pub fn produce<L: AsRef<[u8]>>(&self, topic: &str, lines: &[L], partition_of: impl Fn(usize) -> i32) {
        let producer: BaseProducer = self.config().set("linger.ms", "5").create().unwrap();
        for (i, line) in lines.iter().enumerate() {
            send(&producer, BaseRecord::to(topic).payload(line.as_ref()).partition(partition_of(i)));
        }
        flush(&producer, topic, lines.len());
    }

    /// Writes `records` to `topic` as they are: partition, timestamp, key, value and headers.
    pub fn produce_records(&self, topic: &str, records: &[Record]) {
        let producer: BaseProducer = self.config().create().unwrap();
        for r in records {
            let mut headers = OwnedHeaders::new();
            for (key, value) in &r.headers {
                headers = headers.insert(Header { key, value: value.as_deref() });
            }
            let mut record: BaseRecord<'_, [u8], [u8]> =
                BaseRecord::to(topic).partition(r.partition).timestamp(r.timestamp).headers(headers);
            if let Some(key) = &r.key {
                record = record.key(key.as_slice());
            }
            if let Some(value) = &r.value {
                record = record.payload(value.as_slice());
            }
            send(&producer, record);
        }
        flush(&producer, topic, records.len());
    }

    /// Every record of `topic` whole, partition by partition in offset order, as a
    /// `read_committed` consumer sees them when `committed` is set.
    pub fn read_records(&self, topic: &str, committed: bool) -> Vec<Record> {
        let consumer: BaseConsumer = self
            .config()
            .set("group.id", "weir-tests-reader")
            .set("enable.auto.commit", "false")
            .set("enable.partition.eof", "true")
            .set("isolation.level", if committed { "read_committed" } else { "read_uncommitted" })
            .create()
            .unwrap();
        let metadata = consumer.fetch_metadata(Some(topic), Duration::from_secs(10)).unwrap();
        let mut out = Vec::new();
        for p in metadata.topics()[0].partitions().iter().map(|p| p.id()) {
            let (low, high) = consumer.fetch_watermarks(topic, p, Duration::from_secs(10)).unwrap();
            if high <= low {
                continue;
            }
            let mut list = TopicPartitionList::new();
            list.add_partition_offset(topic, p, Offset::Offset(low)).unwrap();
            consumer.assign(&list).unwrap();
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                assert!(Instant::now() < deadline, "reading {topic}-{p} did not reach offset {high}");
                match consumer.poll(Duration::from_millis(100)) {
                    Some(Ok(m)) => out.push(Record {
                        partition: m.partition(),
                        timestamp: m.timestamp().to_millis().unwrap_or(-1),
                        key: m.key().map(<[u8]>::to_vec),
                        value: m.payload().map(<[u8]>::to_vec),
                        headers: m
                            .headers()
                            .map(|h| h.iter().map(|h| (h.key.to_string(), h.value.map(<[u8]>::to_vec))).collect())
                            .unwrap_or_default(),
                    }),
                    Some(Err(rdkafka::error::KafkaError::PartitionEOF(_))) => break,
                    Some(Err(e)) => panic!("reading {topic}: {e}"),
                    None => {}
                }
            }
        }
        out
    }

    /// Every record of `topic` (key, value), partition by partition in offset order, as a
    /// `read_committed` consumer sees them when `committed` is set.
    pub fn read_all(&self, topic: &str, committed: bool) -> Vec<(Option<String>, String)> {
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        let records = self.read_records(topic, committed).into_iter();
        records.map(|r| (r.key.as_deref().map(text), text(r.value.as_deref().unwrap_or_default()))).collect()
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if self.process.is_some() {
            self.kill();
        }
    }
}
