//! The `kafka` and `upsert-kafka` connectors: read and write Kafka topics through librdkafka,
//! with Flink's options, defaults and messages.
//!
//! An `upsert-kafka` table needs a primary key, which its key format (`key.format`, required)
//! carries; `value.format` (required) the value. Its scan reads each topic from the start: a
//! record is its key's new row (`+U`), a record without a value (a tombstone) its delete, and
//! the plan normalizes that into a full changelog (`ChangelogNormalize`, keyed on the primary
//! key). Its sink writes inserts and updates as records of their key, and deletes and
//! update-befores as tombstones, as Flink's does.
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `topic` | one of `topic`, `topic-pattern` | a topic, or several separated by `;` (a sink writes one) |
//! | `topic-pattern` | | a regular expression: every topic whose name it matches (sources) |
//! | `properties.bootstrap.servers` | required | the brokers |
//! | `properties.group.id` | | the consumer group (committed offsets, `group-offsets`) |
//! | `properties.*` | | passed to librdkafka without the prefix; keys it does not know are ignored with a warning |
//! | `properties.commit.offsets.on.checkpoint` | `true` | commit the offsets of each completed checkpoint to the group |
//! | `format` / `value.format` | required | the value's format (`csv`, `json`), with its `<format>.*` / `value.<format>.*` options |
//! | `key.format` | | the key's format, with `key.<format>.*` options; needs `key.fields` |
//! | `key.fields` | | the columns the key carries, `a;b` |
//! | `key.fields-prefix` | | the prefix of key columns' names, not part of the key format's field names |
//! | `value.fields-include` | `ALL` | `ALL` columns in the value, or `EXCEPT_KEY` |
//! | `scan.startup.mode` | `group-offsets` | `earliest-offset`, `latest-offset`, `group-offsets`, `timestamp`, `specific-offsets` |
//! | `scan.startup.timestamp-millis` | | for `timestamp` |
//! | `scan.startup.specific-offsets` | | for `specific-offsets`: `partition:0,offset:42;partition:1,offset:300` |
//! | `scan.bounded.mode` | `unbounded` | `unbounded`, `latest-offset`, `group-offsets`, `timestamp`, `specific-offsets`: where a bounded scan ends |
//! | `scan.bounded.timestamp-millis` | | for `timestamp` |
//! | `scan.bounded.specific-offsets` | | for `specific-offsets` |
//! | `scan.topic-partition-discovery.interval` | `5 min` | how often an unbounded scan looks for new partitions and topics (`0`: never) |
//! | `scan.watermark.idle-timeout` | | a partition without records this long holds no watermark back |
//! | `sink.partitioner` | `default` | `default` (by the key's murmur2 hash, as Kafka's Java client), `fixed` (subtask i to partition i mod n), `round-robin` |
//! | `sink.delivery-guarantee` | `at-least-once` | `none`, `at-least-once`, `exactly-once` |
//! | `sink.transactional-id-prefix` | | required for `exactly-once` |
//! | `sink.parallelism` | the input's | number of sink subtasks |

mod client;
mod options;
mod record;
mod sink;
mod source;

use std::sync::Arc;

pub use client::TopicPartition;
pub use options::{BoundedMode, Connector, DeliveryGuarantee, KafkaOptions, Partitioner, StartupMode, Topics};
pub use sink::KafkaSink;
pub use source::{owner, KafkaSource};

use crate::api::{
    ConnectorFactory, FactoryContext, MetadataKey, ScanChanges, ScanContext, SinkAbilities, SinkChangelogMode,
    SinkContext, SinkProvider, SourceAbilities, SourceProvider, TableDescriptor,
};
use crate::api::{ResolvedSink, ResolvedSource};
use crate::error::Result;
use crate::options::TableOptions;

/// Creates `kafka` and `upsert-kafka` sources and sinks.
#[derive(Debug, Clone, Copy)]
pub struct KafkaFactory(pub Connector);

impl ConnectorFactory for KafkaFactory {
    fn identifier(&self) -> &'static str {
        match self.0 {
            Connector::Kafka => "kafka",
            Connector::Upsert => "upsert-kafka",
        }
    }

    fn readable_metadata(&self) -> &'static [MetadataKey] {
        options::READABLE_METADATA
    }

    fn writable_metadata(&self) -> &'static [MetadataKey] {
        options::WRITABLE_METADATA
    }

    fn resolve_source(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSource>> {
        Ok(Arc::new(KafkaTable { options: Arc::new(options::read(table, options, ctx, self.0, true)?) }))
    }

    fn resolve_sink(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSink>> {
        Ok(Arc::new(KafkaTable { options: Arc::new(options::read(table, options, ctx, self.0, false)?) }))
    }
}

/// A `kafka` table resolved as a source or a sink.
struct KafkaTable {
    options: Arc<KafkaOptions>,
}

impl KafkaTable {
    fn bounded(&self) -> bool {
        self.options.bounded != BoundedMode::Unbounded
    }
}

impl KafkaTable {
    /// Whether the value format carries changes (`debezium-json`, …).
    fn changelog(&self) -> bool {
        self.options.layout.value.carries_changes()
    }
}

impl ResolvedSource for KafkaTable {
    /// A changelog format's scan emits every kind of change, bounded or not; an upsert
    /// table's scan emits upserts (normalized by the plan), reading every column (the key's
    /// are needed).
    fn abilities(&self, _scan: &ScanContext) -> SourceAbilities {
        let plain = SourceAbilities::plain(None, self.bounded());
        match (self.options.connector, self.changelog()) {
            (Connector::Upsert, _) => {
                SourceAbilities { changes: ScanChanges::Upserts, accepts_projection: false, ..plain }
            }
            (Connector::Kafka, true) => SourceAbilities { changes: ScanChanges::UpdatesAndDeletes, ..plain },
            (Connector::Kafka, false) => plain,
        }
    }

    fn create(&self, scan: &ScanContext) -> Result<SourceProvider> {
        let options = Arc::clone(&self.options);
        let idle_timeout = self.options.idle_timeout.or(scan.idle_timeout);
        Ok(SourceProvider {
            parallelism: None,
            bounded: self.bounded(),
            factory: Arc::new(move |info| Box::new(KafkaSource::new(Arc::clone(&options), info, idle_timeout))),
        })
    }
}

impl ResolvedSink for KafkaTable {
    fn abilities(&self, _sink: &SinkContext) -> Result<SinkAbilities> {
        let changelog_mode = match (self.options.connector, self.changelog()) {
            (Connector::Upsert, _) => SinkChangelogMode::Upsert,
            (Connector::Kafka, true) => SinkChangelogMode::Retract,
            (Connector::Kafka, false) => SinkChangelogMode::Append,
        };
        Ok(SinkAbilities { parallelism: self.options.sink_parallelism, changelog_mode })
    }

    fn create(&self, sink: &SinkContext) -> Result<SinkProvider> {
        let abilities = ResolvedSink::abilities(self, sink)?;
        let options = Arc::clone(&self.options);
        Ok(SinkProvider {
            parallelism: abilities.parallelism,
            changelog_mode: abilities.changelog_mode,
            factory: Arc::new(move |info| Box::new(KafkaSink::new(Arc::clone(&options), info.index, info.parallelism))),
        })
    }
}
