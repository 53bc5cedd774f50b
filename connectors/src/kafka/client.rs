//! Building librdkafka clients from a table's `properties.*`, and the questions a source asks
//! the cluster before it reads: which partitions, and which offsets.
//!
//! Flink passes `properties.*` to the Java client, which ignores keys it does not know; librdkafka
//! refuses them. A script written for Flink may carry Java-only keys (`max.poll.records`,
//! `key.deserializer`, …): weir drops each key librdkafka does not know, with a warning naming it,
//! and fails on a known key with a bad value.

use std::collections::BTreeMap;
use std::time::Duration;

use rdkafka::config::{ClientConfig, FromClientConfig};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::{Offset, TopicPartitionList};

use super::options::{KafkaOptions, Topics};
use crate::error::{Error, Result};

/// How long a question to the cluster (metadata, offsets) may take when the table does not say
/// (`properties.default.api.timeout.ms`, Flink's Kafka client default).
pub const DEFAULT_API_TIMEOUT: Duration = Duration::from_secs(60);

/// The time the table's `properties.default.api.timeout.ms` (or `request.timeout.ms`) allows.
pub fn api_timeout(options: &KafkaOptions) -> Duration {
    ["default.api.timeout.ms", "request.timeout.ms"]
        .iter()
        .find_map(|k| options.property(k).and_then(|v| v.trim().parse::<u64>().ok()))
        .map_or(DEFAULT_API_TIMEOUT, Duration::from_millis)
}

/// Keys of Flink's Java client that librdkafka spells differently or not at all, and that
/// weir handles itself: they are never passed.
const HANDLED_BY_WEIR: &[&str] = &["key.deserializer", "value.deserializer", "key.serializer", "value.serializer"];

/// A client of type `T` with the table's properties over weir's `fixed` settings (which the
/// table cannot change).
///
/// # Errors
/// A property librdkafka knows with a value it refuses, naming the option.
pub fn create<T: FromClientConfig>(options: &KafkaOptions, fixed: &[(&str, &str)]) -> Result<T> {
    create_with(options, fixed, ClientConfig::create::<T>)
}

/// A client made by `make` from the table's properties over weir's `fixed` settings (a client
/// with a context of its own: a producer that hears of deliveries).
///
/// # Errors
/// A property librdkafka knows with a value it refuses, naming the option.
pub fn create_with<T>(
    options: &KafkaOptions,
    fixed: &[(&str, &str)],
    make: impl Fn(&ClientConfig) -> rdkafka::error::KafkaResult<T>,
) -> Result<T> {
    let mut properties: BTreeMap<String, String> =
        options.properties.iter().filter(|(k, _)| !HANDLED_BY_WEIR.contains(&k.as_str())).cloned().collect();
    for (k, v) in fixed {
        properties.insert(k.to_string(), v.to_string());
    }
    loop {
        let mut config = ClientConfig::new();
        for (k, v) in &properties {
            config.set(k, v);
        }
        match make(&config) {
            Ok(client) => return Ok(client),
            Err(KafkaError::ClientConfig(_, description, key, value)) => {
                if description.contains("No such configuration property") && properties.remove(&key).is_some() {
                    tracing::warn!(table = %options.table, option = %format!("properties.{key}"),
                        "librdkafka has no such property; the option is ignored");
                    continue;
                }
                return Err(Error::InvalidOption {
                    key: format!("properties.{key}"),
                    value,
                    expected: format!("a value the Kafka client takes ({description})"),
                });
            }
            Err(e) => return Err(Error::Validation(format!("Could not create the Kafka client: {e}"))),
        }
    }
}

/// The error of a question to the cluster that failed, naming the table and the brokers.
pub fn cluster_error(options: &KafkaOptions, what: &str, error: &KafkaError) -> Error {
    let servers = options.property("bootstrap.servers").unwrap_or("(no 'properties.bootstrap.servers')");
    let hint = match error {
        KafkaError::MetadataFetch(_) | KafkaError::OffsetFetch(_) => {
            " Is the broker at 'properties.bootstrap.servers' running and reachable?"
        }
        _ => "",
    };
    Error::Validation(format!("Kafka table '{}' could not {what} from '{servers}': {error}.{hint}", options.table))
}

/// One partition of a topic.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicPartition {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
}

impl std::fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

/// Every partition of the table's topics, sorted; a named topic the cluster does not have is
/// an error, as is a pattern no topic matches yet only when nothing at all can be read.
///
/// # Errors
/// A cluster that does not answer within `timeout`, or a missing topic.
pub fn partitions(consumer: &BaseConsumer, options: &KafkaOptions, timeout: Duration) -> Result<Vec<TopicPartition>> {
    let metadata = consumer
        .fetch_metadata(None, timeout)
        .map_err(|e| cluster_error(options, "fetch the metadata of its topics", &e))?;
    let mut found = Vec::new();
    match &options.topics {
        Topics::Names(names) => {
            for name in names {
                let topic = metadata.topics().iter().find(|t| t.name() == name.as_str());
                match topic {
                    Some(t) if t.error().is_none() && !t.partitions().is_empty() => found.extend(
                        t.partitions().iter().map(|p| TopicPartition { topic: name.clone(), partition: p.id() }),
                    ),
                    _ => {
                        return Err(Error::Validation(format!(
                            "Kafka table '{}' reads topic '{name}', which does not exist on '{}'.",
                            options.table,
                            options.property("bootstrap.servers").unwrap_or_default()
                        )))
                    }
                }
            }
        }
        Topics::Pattern(pattern) => {
            let regex = regex::Regex::new(&format!("^(?:{pattern})$"))
                .map_err(|e| Error::Validation(format!("'topic-pattern' is not a regular expression: {e}")))?;
            for t in metadata.topics().iter().filter(|t| regex.is_match(t.name()) && t.error().is_none()) {
                found.extend(
                    t.partitions().iter().map(|p| TopicPartition { topic: t.name().to_string(), partition: p.id() }),
                );
            }
        }
    }
    found.sort();
    Ok(found)
}

/// A list of partitions with one offset each.
pub fn partition_list<'a>(
    offsets: impl IntoIterator<Item = (&'a TopicPartition, Offset)>,
) -> Result<TopicPartitionList> {
    let mut list = TopicPartitionList::new();
    for (tp, offset) in offsets {
        list.add_partition_offset(&tp.topic, tp.partition, offset)
            .map_err(|e| Error::Validation(format!("Kafka partition {tp}: {e}")))?;
    }
    Ok(list)
}

/// The offsets `list` holds, by partition (`None` where the cluster has none: no committed
/// offset, no record at or after a timestamp).
pub fn offsets_of(list: &TopicPartitionList) -> BTreeMap<TopicPartition, Option<i64>> {
    list.elements()
        .iter()
        .map(|e| {
            let tp = TopicPartition { topic: e.topic().to_string(), partition: e.partition() };
            let offset = match e.offset() {
                Offset::Offset(o) => Some(o),
                _ => None,
            };
            (tp, offset)
        })
        .collect()
}
