//! Kafka brokers for the tests: a throwaway tansu broker of the test binary (a real
//! Kafka-protocol server in another process, on a free loopback port, stopped when the test
//! process exits; its program comes from `scripts/ensure-kafka-broker`), or librdkafka's
//! in-process mock cluster for fault cases. Helpers create topics, write lines and read a
//! topic back.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};

/// A broker's address.
pub struct Broker {
    /// `host:port` for `properties.bootstrap.servers`.
    pub bootstrap: String,
    _watchdog: Option<std::process::Child>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap()
}

/// The broker program: `WEIR_KAFKA_BROKER`, else what `scripts/ensure-kafka-broker` built.
fn program() -> PathBuf {
    if let Ok(program) = std::env::var("WEIR_KAFKA_BROKER") {
        return PathBuf::from(program);
    }
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let cache = std::env::var("WEIR_TOOLS_CACHE").unwrap_or_else(|_| format!("{home}/.cache/weir-tools"));
    let program = PathBuf::from(cache).join("tansu-0.6.0/bin/tansu");
    assert!(
        program.exists(),
        "no Kafka broker at {}: run scripts/test (or scripts/ensure-kafka-broker)",
        program.display()
    );
    program
}

/// The broker of this test binary: the one at `WEIR_KAFKA_BOOTSTRAP` when set (a Kafka cluster
/// of one's own, for the tests tansu cannot serve), else a tansu broker started on first use.
pub fn broker() -> &'static Broker {
    static BROKER: OnceLock<Broker> = OnceLock::new();
    BROKER.get_or_init(|| match std::env::var("WEIR_KAFKA_BOOTSTRAP") {
        Ok(bootstrap) => Broker::at(bootstrap),
        Err(_) => start(),
    })
}

fn start() -> Broker {
    let port = free_port();
    let log = std::env::temp_dir().join(format!("weir-kafka-{}-{port}.log", std::process::id()));
    // The broker runs under a shell that stops it once this test process is gone.
    let script = format!(
        "{program} broker --storage-engine memory://tansu/ --listener-url tcp://127.0.0.1:{port} \
         --advertised-listener-url tcp://127.0.0.1:{port} >{log} 2>&1 & b=$!; \
         while [ -d /proc/{pid} ]; do sleep 0.5; done; kill $b; wait $b; rm -f {log}",
        program = program().display(),
        log = log.display(),
        pid = std::process::id(),
    );
    let watchdog = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let broker = Broker { bootstrap: format!("127.0.0.1:{port}"), _watchdog: Some(watchdog) };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let consumer: BaseConsumer = broker.config().create().unwrap();
        if consumer.fetch_metadata(None, Duration::from_secs(1)).is_ok() {
            break;
        }
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(Instant::now() < deadline, "the Kafka broker did not start: {text}");
        std::thread::sleep(Duration::from_millis(200));
    }
    broker
}

impl Broker {
    /// A broker at `bootstrap` that this process does not run (a mock cluster's).
    pub fn at(bootstrap: String) -> Broker {
        Broker { bootstrap, _watchdog: None }
    }

    /// A client configuration for this broker.
    pub fn config(&self) -> ClientConfig {
        let mut config = ClientConfig::new();
        config.set("bootstrap.servers", &self.bootstrap);
        config.set("log_level", "3");
        config
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

    /// Writes `lines` to `topic`: line i to partition `partition_of(i)`, with no key.
    ///
    /// Each record is a batch of its own: tansu 0.6 answers a partition's latest offset
    /// (ListOffsets) with the base offset of its last batch plus one, which is the true end only
    /// when that batch holds one record (its fetches report the true end); and a fetch from an
    /// offset inside a batch returns nothing, where Kafka returns the batch (a restored source
    /// starts at any offset).
    pub fn produce(&self, topic: &str, lines: &[String], partition_of: impl Fn(usize) -> i32) {
        let producer: BaseProducer = self.config().set("batch.num.messages", "1").create().unwrap();
        for (i, line) in lines.iter().enumerate() {
            let mut record: BaseRecord<'_, [u8], str> =
                BaseRecord::to(topic).payload(line.as_str()).partition(partition_of(i));
            loop {
                match producer.send(record) {
                    Ok(()) => break,
                    Err((_, back)) => {
                        record = back;
                        producer.poll(Duration::from_millis(20));
                    }
                }
            }
        }
        // A loaded machine may take long to deliver them all: wait while deliveries go on.
        let deadline = Instant::now() + Duration::from_secs(300);
        while let Err(e) = producer.flush(Duration::from_secs(10)) {
            assert!(Instant::now() < deadline, "writing {} records to {topic} did not finish: {e}", lines.len());
        }
    }

    /// Every record of `topic` (key, value), partition by partition in offset order, as a
    /// `read_committed` consumer sees them when `committed` is set.
    pub fn read_all(&self, topic: &str, committed: bool) -> Vec<(Option<String>, String)> {
        let consumer: BaseConsumer = self
            .config()
            .set("group.id", "weir-tests-reader")
            .set("enable.auto.commit", "false")
            .set("enable.partition.eof", "true")
            .set("isolation.level", if committed { "read_committed" } else { "read_uncommitted" })
            .create()
            .unwrap();
        let metadata = consumer.fetch_metadata(Some(topic), Duration::from_secs(10)).unwrap();
        let partitions: Vec<i32> = metadata.topics()[0].partitions().iter().map(|p| p.id()).collect();
        let mut out = Vec::new();
        for p in partitions {
            let (low, high) = consumer.fetch_watermarks(topic, p, Duration::from_secs(10)).unwrap();
            let mut list = TopicPartitionList::new();
            list.add_partition_offset(topic, p, Offset::Offset(low)).unwrap();
            consumer.assign(&list).unwrap();
            if high <= low {
                continue;
            }
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                assert!(Instant::now() < deadline, "reading {topic}-{p} did not reach offset {high}");
                match consumer.poll(Duration::from_millis(100)) {
                    Some(Ok(m)) => out.push((
                        m.key().map(|k| String::from_utf8_lossy(k).into_owned()),
                        String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned(),
                    )),
                    Some(Err(rdkafka::error::KafkaError::PartitionEOF(_))) => break,
                    Some(Err(e)) => panic!("reading {topic}: {e}"),
                    None => {}
                }
            }
        }
        out
    }
}
