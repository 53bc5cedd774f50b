//! The options of a `kafka` table, read and checked as Flink's `KafkaDynamicTableFactory` does,
//! with its messages: which topics, where a scan starts and ends, which columns the key and the
//! value carry, and how a sink writes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use weir_runtime::{DataType, Field, Schema};

use crate::api::{FactoryContext, MetadataKey, TableDescriptor};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::options::{invalid, TableOptions};

/// Which topics a table reads or writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Topics {
    /// `topic`: one or more names (`a;b`).
    Names(Vec<String>),
    /// `topic-pattern`: every topic whose whole name the regular expression matches (sources only).
    Pattern(String),
}

impl std::fmt::Display for Topics {
    /// `topic 'a'`, `topics 'a', 'b'` or `topics matching 'p.*'`, for messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Topics::Names(names) if names.len() == 1 => write!(f, "topic '{}'", names[0]),
            Topics::Names(names) => {
                let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
                write!(f, "topics {}", quoted.join(", "))
            }
            Topics::Pattern(pattern) => write!(f, "topics matching '{pattern}'"),
        }
    }
}

/// `scan.startup.mode`: where each partition is first read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartupMode {
    /// `earliest-offset`
    Earliest,
    /// `latest-offset`
    Latest,
    /// `group-offsets` (Flink's default): the group's committed offsets, else
    /// `properties.auto.offset.reset` (`earliest`, `latest`; without it, an error).
    GroupOffsets,
    /// `timestamp`: the first record at or after `scan.startup.timestamp-millis`.
    Timestamp(i64),
    /// `specific-offsets`: `partition:0,offset:42;…` of the one topic; other partitions as
    /// `group-offsets` with `earliest` reset.
    SpecificOffsets(BTreeMap<i32, i64>),
}

/// `scan.bounded.mode`: where each partition's reading ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundedMode {
    /// `unbounded` (the default): never.
    Unbounded,
    /// `latest-offset`: at the partition's end when the job starts.
    Latest,
    /// `group-offsets`: at the group's committed offset.
    GroupOffsets,
    /// `timestamp`: before the first record after `scan.bounded.timestamp-millis`.
    Timestamp(i64),
    /// `specific-offsets`: before the given offsets; other partitions at their end when the job starts.
    SpecificOffsets(BTreeMap<i32, i64>),
}

/// `sink.partitioner`: which partition a written row goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partitioner {
    /// `default`: by the key's hash when the row has a key, else spread by the client.
    Default,
    /// `fixed`: every row of sink subtask i to partition i modulo the partition count.
    Fixed,
    /// `round-robin`: spread by the client, ignoring any key.
    RoundRobin,
}

/// `sink.delivery-guarantee`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryGuarantee {
    /// `none`: rows are sent; a crash may lose the ones not yet acknowledged.
    None,
    /// `at-least-once` (the default): every checkpoint waits until its rows are acknowledged.
    AtLeastOnce,
    /// `exactly-once`: the rows of a checkpoint are written in a Kafka transaction committed
    /// when the checkpoint completes.
    ExactlyOnce,
}

/// The physical columns of a table that its record keys and values carry.
#[derive(Debug, Clone)]
pub struct RecordLayout {
    /// The table's physical columns.
    pub types: Vec<DataType>,
    /// The key's format and the table columns it carries, in key order; `None` without `key.format`.
    pub key: Option<(Arc<dyn Format>, Vec<usize>)>,
    /// The value's format.
    pub value: Arc<dyn Format>,
    /// The table columns the value carries, in value order.
    pub value_columns: Vec<usize>,
    /// The metadata columns: their table column and what they hold.
    pub metadata: Vec<(usize, Metadata)>,
}

/// The metadata of a Kafka record, as Flink's Kafka connector names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metadata {
    /// `topic` (STRING NOT NULL, read only)
    Topic,
    /// `partition` (INT NOT NULL, read only)
    Partition,
    /// `headers` (MAP<STRING, BYTES> NOT NULL)
    Headers,
    /// `leader-epoch` (INT, read only)
    LeaderEpoch,
    /// `offset` (BIGINT NOT NULL, read only)
    Offset,
    /// `timestamp` (TIMESTAMP_LTZ(3) NOT NULL)
    Timestamp,
    /// `timestamp-type` (STRING NOT NULL, read only): `NoTimestampType`, `CreateTime`, `LogAppendTime`
    TimestampType,
}

impl Metadata {
    fn of(key: &str) -> Option<Metadata> {
        Some(match key {
            "topic" => Metadata::Topic,
            "partition" => Metadata::Partition,
            "headers" => Metadata::Headers,
            "leader-epoch" => Metadata::LeaderEpoch,
            "offset" => Metadata::Offset,
            "timestamp" => Metadata::Timestamp,
            "timestamp-type" => Metadata::TimestampType,
            _ => return None,
        })
    }
}

/// The metadata a Kafka scan reads, with Flink's types.
pub const READABLE_METADATA: &[MetadataKey] = &[
    MetadataKey { key: "topic", data_type: "STRING NOT NULL" },
    MetadataKey { key: "partition", data_type: "INT NOT NULL" },
    MetadataKey { key: "headers", data_type: "MAP<STRING, BYTES> NOT NULL" },
    MetadataKey { key: "leader-epoch", data_type: "INT" },
    MetadataKey { key: "offset", data_type: "BIGINT NOT NULL" },
    MetadataKey { key: "timestamp", data_type: "TIMESTAMP_LTZ(3) NOT NULL" },
    MetadataKey { key: "timestamp-type", data_type: "STRING NOT NULL" },
];

/// The metadata a Kafka sink writes.
pub const WRITABLE_METADATA: &[MetadataKey] = &[
    MetadataKey { key: "headers", data_type: "MAP<STRING, BYTES>" },
    MetadataKey { key: "timestamp", data_type: "TIMESTAMP_LTZ(3)" },
];

/// The table's physical columns, by position.
fn physical_positions(table: &TableDescriptor) -> Vec<usize> {
    (0..table.schema.fields.len()).filter(|i| !table.metadata.iter().any(|m| m.position == *i)).collect()
}

/// The table's metadata columns (the registry checked their keys).
fn metadata_of(table: &TableDescriptor) -> Vec<(usize, Metadata)> {
    table.metadata.iter().filter_map(|m| Some((m.position, Metadata::of(&m.key)?))).collect()
}

/// The options a `kafka` table's source and sink share, and each one's own.
#[derive(Debug, Clone)]
pub struct KafkaOptions {
    /// `kafka` or `upsert-kafka`.
    pub connector: Connector,
    /// The table's name, for errors and the client's id.
    pub table: String,
    /// The topics.
    pub topics: Topics,
    /// `properties.*`, passed to the client without the prefix.
    pub properties: Vec<(String, String)>,
    /// How records map to columns.
    pub layout: RecordLayout,
    /// `scan.startup.mode`
    pub startup: StartupMode,
    /// `scan.bounded.mode`
    pub bounded: BoundedMode,
    /// `scan.topic-partition-discovery.interval` (default five minutes): how often an unbounded
    /// scan looks for new partitions (and, with `topic-pattern`, new topics); `None` when
    /// disabled (zero).
    pub discovery_interval: Option<Duration>,
    /// `scan.watermark.idle-timeout`: a partition without records for this long holds no
    /// watermark back; `None` when not given (the job's `table.exec.source.idle-timeout`).
    pub idle_timeout: Option<Duration>,
    /// `properties.commit.offsets.on.checkpoint` (default `true`, with a group id).
    pub commit_offsets: bool,
    /// `sink.partitioner`
    pub partitioner: Partitioner,
    /// `sink.delivery-guarantee`
    pub delivery: DeliveryGuarantee,
    /// `sink.transactional-id-prefix`
    pub transactional_id_prefix: Option<String>,
    /// `sink.parallelism`
    pub sink_parallelism: Option<usize>,
}

impl KafkaOptions {
    /// The value of client property `key` when the table gives one.
    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// `properties.group.id`, when given.
    pub fn group_id(&self) -> Option<&str> {
        self.property("group.id")
    }
}

/// Which connector a table is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    /// `kafka`: rows (or a CDC format's changes).
    Kafka,
    /// `upsert-kafka`: the key is the primary key; a record is its new row, a tombstone its delete.
    Upsert,
}

/// The message Flink gives an `upsert-kafka` table without a primary key.
const UPSERT_NEEDS_KEY: &str = "'upsert-kafka' tables require to define a PRIMARY KEY constraint. The PRIMARY KEY \
    specifies which columns should be read from or write to the Kafka message key. The PRIMARY KEY also defines \
    records in the 'upsert-kafka' table should update or delete on which keys.";

/// Reads every option of a `kafka` or `upsert-kafka` table; `source` says which role's checks
/// apply.
///
/// # Errors
/// Flink's validation messages for topics, startup and bounded modes, key and value formats
/// and the sink's partitioner and delivery guarantee.
pub fn read(
    table: &TableDescriptor,
    options: &mut TableOptions,
    ctx: &FactoryContext<'_>,
    connector: Connector,
    source: bool,
) -> Result<KafkaOptions> {
    if connector == Connector::Upsert && table.primary_key.is_empty() {
        return Err(Error::Validation(UPSERT_NEEDS_KEY.into()));
    }
    let topics = read_topics(options, source)?;
    let mut properties = options.prefixed("properties.");
    let commit_offsets = match properties.iter().position(|(k, _)| k == "commit.offsets.on.checkpoint") {
        Some(i) => {
            let (_, value) = properties.remove(i);
            let key = "properties.commit.offsets.on.checkpoint";
            value.trim().parse::<bool>().map_err(|_| invalid(key, &value, "'true' or 'false'"))?
        }
        None => true,
    };
    // An upsert table is read from its beginning: every key's last value.
    let startup = match connector {
        Connector::Kafka => read_startup(options, &topics)?,
        Connector::Upsert => StartupMode::Earliest,
    };
    let bounded = read_bounded(options, &topics)?;
    let discovery_interval = options.duration("scan.topic-partition-discovery.interval")?;
    let idle_timeout = options.duration("scan.watermark.idle-timeout")?;
    let layout = match connector {
        Connector::Kafka => read_layout(table, options, ctx)?,
        Connector::Upsert => read_upsert_layout(table, options, ctx)?,
    };
    let has_key_fields = options.contains("key.fields");
    let partitioner_option = match connector {
        Connector::Kafka => options.optional("sink.partitioner").map(str::trim),
        Connector::Upsert => None,
    };
    let partitioner = match partitioner_option {
        None | Some("default") => Partitioner::Default,
        Some("fixed") => Partitioner::Fixed,
        Some("round-robin") if has_key_fields => {
            return Err(Error::Validation(
                "Currently 'round-robin' partitioner only works when option 'key.fields' is not specified.".into(),
            ))
        }
        Some("round-robin") => Partitioner::RoundRobin,
        Some("") => return Err(Error::Validation("Option 'sink.partitioner' should be a non-empty string.".into())),
        Some(other) => {
            return Err(Error::Validation(format!(
                "Could not find and instantiate partitioner class '{other}': weir has no Java classes; \
                 'sink.partitioner' accepts 'default', 'fixed' and 'round-robin'."
            )))
        }
    };
    let delivery =
        match options.one_of("sink.delivery-guarantee", &["none", "at-least-once", "exactly-once"], "at-least-once")? {
            "none" => DeliveryGuarantee::None,
            "exactly-once" => DeliveryGuarantee::ExactlyOnce,
            _ => DeliveryGuarantee::AtLeastOnce,
        };
    let transactional_id_prefix = options.optional("sink.transactional-id-prefix").map(str::to_string);
    if !source && delivery == DeliveryGuarantee::ExactlyOnce && transactional_id_prefix.is_none() {
        return Err(Error::Validation(
            "sink.transactional-id-prefix must be specified when using DeliveryGuarantee.EXACTLY_ONCE.".into(),
        ));
    }
    let sink_parallelism = crate::api::sink_parallelism(options, table)?;
    Ok(KafkaOptions {
        connector,
        table: table.name.clone(),
        topics,
        properties,
        layout,
        startup,
        bounded,
        // Flink's default: every five minutes; zero turns it off.
        discovery_interval: discovery_interval.or(Some(Duration::from_secs(300))).filter(|d| !d.is_zero()),
        idle_timeout,
        commit_offsets,
        partitioner,
        delivery,
        transactional_id_prefix,
        sink_parallelism,
    })
}

fn read_topics(options: &mut TableOptions, source: bool) -> Result<Topics> {
    let topic = options.optional("topic").map(str::to_string);
    let pattern = options.optional("topic-pattern").map(str::to_string);
    match (topic, pattern) {
        (Some(_), Some(_)) => {
            Err(Error::Validation("Option 'topic' and 'topic-pattern' shouldn't be set together.".into()))
        }
        (None, None) => Err(Error::Validation("Either 'topic' or 'topic-pattern' must be set.".into())),
        (Some(topic), None) => {
            let names: Vec<String> =
                topic.split(';').map(str::trim).filter(|t| !t.is_empty()).map(str::to_string).collect();
            if names.is_empty() {
                return Err(invalid("topic", &topic, "one or more topic names separated by ';'"));
            }
            if !source && names.len() > 1 {
                return Err(Error::Validation(format!(
                    "Flink Kafka sink currently only supports single topic, but got topic: {}.",
                    names.join(";")
                )));
            }
            Ok(Topics::Names(names))
        }
        (None, Some(pattern)) if source => {
            regex::Regex::new(&format!("^(?:{pattern})$"))
                .map_err(|e| invalid("topic-pattern", &pattern, &format!("a regular expression ({e})")))?;
            Ok(Topics::Pattern(pattern))
        }
        (None, Some(_)) => Err(Error::Validation(
            "Flink Kafka sink currently only supports single topic, but got topic pattern.".into(),
        )),
    }
}

fn single_topic(topics: &Topics) -> bool {
    matches!(topics, Topics::Names(names) if names.len() == 1)
}

/// `partition:0,offset:42;partition:1,offset:300`, as Flink parses it.
fn specific_offsets(options: &mut TableOptions, key: &str) -> Result<BTreeMap<i32, i64>> {
    let text = options.optional(key).unwrap_or_default().to_string();
    let malformed = || {
        Error::Validation(format!(
            "Invalid properties '{key}' should follow the format 'partition:0,offset:42;partition:1,offset:300', \
             but is '{text}'."
        ))
    };
    let mut offsets = BTreeMap::new();
    for pair in text.split(';') {
        let (partition, offset) = pair.split_once(',').ok_or_else(malformed)?;
        let partition = partition.strip_prefix("partition:").and_then(|p| p.parse().ok()).ok_or_else(malformed)?;
        let offset = offset.strip_prefix("offset:").and_then(|o| o.parse().ok()).ok_or_else(malformed)?;
        offsets.insert(partition, offset);
    }
    Ok(offsets)
}

/// Where reading starts or ends, as `scan.<phase>.mode` and its options say.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Position {
    Earliest,
    Latest,
    GroupOffsets,
    Timestamp(i64),
    SpecificOffsets(BTreeMap<i32, i64>),
    Unbounded,
}

/// Reads `scan.<phase>.mode` (one of `modes`, `default` without it) with its
/// `scan.<phase>.timestamp-millis` and `scan.<phase>.specific-offsets`, with Flink's messages.
fn read_position(
    options: &mut TableOptions,
    topics: &Topics,
    phase: &str,
    modes: &[&'static str],
    default: &'static str,
) -> Result<Position> {
    let mode = options.one_of(&format!("scan.{phase}.mode"), modes, default)?;
    let timestamp_key = format!("scan.{phase}.timestamp-millis");
    let offsets_key = format!("scan.{phase}.specific-offsets");
    let timestamp = options.parse::<i64>(&timestamp_key, "a number of milliseconds")?;
    let specific = options.contains(&offsets_key);
    let missing =
        |key: &str, mode: &str| Error::Validation(format!("'{key}' is required in '{mode}' {phase} mode but missing."));
    Ok(match mode {
        "earliest-offset" => Position::Earliest,
        "latest-offset" => Position::Latest,
        "group-offsets" => Position::GroupOffsets,
        "timestamp" => Position::Timestamp(timestamp.ok_or_else(|| missing(&timestamp_key, "TIMESTAMP"))?),
        "specific-offsets" if !specific => return Err(missing(&offsets_key, "SPECIFIC_OFFSETS")),
        "specific-offsets" if !single_topic(topics) => {
            return Err(Error::Validation(
                "Currently Kafka source only supports specific offset for single topic.".into(),
            ))
        }
        "specific-offsets" => Position::SpecificOffsets(specific_offsets(options, &offsets_key)?),
        _ => Position::Unbounded,
    })
}

fn read_startup(options: &mut TableOptions, topics: &Topics) -> Result<StartupMode> {
    let modes = ["earliest-offset", "latest-offset", "group-offsets", "timestamp", "specific-offsets"];
    Ok(match read_position(options, topics, "startup", &modes, "group-offsets")? {
        Position::Earliest => StartupMode::Earliest,
        Position::Latest => StartupMode::Latest,
        Position::Timestamp(t) => StartupMode::Timestamp(t),
        Position::SpecificOffsets(offsets) => StartupMode::SpecificOffsets(offsets),
        Position::GroupOffsets | Position::Unbounded => StartupMode::GroupOffsets,
    })
}

fn read_bounded(options: &mut TableOptions, topics: &Topics) -> Result<BoundedMode> {
    let modes = ["unbounded", "latest-offset", "group-offsets", "timestamp", "specific-offsets"];
    Ok(match read_position(options, topics, "bounded", &modes, "unbounded")? {
        Position::Latest => BoundedMode::Latest,
        Position::GroupOffsets => BoundedMode::GroupOffsets,
        Position::Timestamp(t) => BoundedMode::Timestamp(t),
        Position::SpecificOffsets(offsets) => BoundedMode::SpecificOffsets(offsets),
        Position::Earliest | Position::Unbounded => BoundedMode::Unbounded,
    })
}

/// The columns `value.fields-include` puts in the value: every physical one (`ALL`, which a
/// key prefix forbids), or those not in the key (`EXCEPT_KEY`).
fn value_columns(options: &mut TableOptions, physical: &[usize], key: &[usize], prefix: &str) -> Result<Vec<usize>> {
    match options.one_of("value.fields-include", &["ALL", "EXCEPT_KEY"], "ALL")? {
        "ALL" if !prefix.is_empty() => Err(Error::Validation(
            "A key prefix is not allowed when option 'value.fields-include' is set to 'ALL'. Set it to \
             'EXCEPT_KEY' instead to avoid field overlaps."
                .into(),
        )),
        "ALL" => Ok(physical.to_vec()),
        _ => Ok(physical.iter().copied().filter(|i| !key.contains(i)).collect()),
    }
}

/// The schema a format sees: the table's `columns`, named without `strip` (the key prefix).
fn sub_schema(fields: &[Field], columns: &[usize], strip: &str) -> Schema {
    Schema {
        fields: columns
            .iter()
            .map(|&i| {
                let f = &fields[i];
                Field { name: f.name.strip_prefix(strip).unwrap_or(&f.name).to_string(), ..f.clone() }
            })
            .collect(),
    }
}

/// The columns `key.fields` names, checked as Flink's `createKeyFormatProjection` checks them:
/// physical columns, each with the key prefix, and only with a key format.
fn read_key_columns(
    options: &mut TableOptions,
    fields: &[Field],
    physical: &[usize],
    prefix: &str,
) -> Result<Vec<usize>> {
    const NEEDS_FIELDS: &str =
        "A key format 'key.format' requires the declaration of one or more of key fields using 'key.fields'.";
    let names: Option<Vec<String>> = options
        .optional("key.fields")
        .map(|f| f.split(';').map(str::trim).filter(|f| !f.is_empty()).map(str::to_string).collect());
    let names = match (names, options.contains("key.format")) {
        (None, false) => return Ok(Vec::new()),
        (Some(_), false) => {
            return Err(Error::Validation(
                "The option 'key.fields' can only be declared if a key format is defined using 'key.format'.".into(),
            ))
        }
        (names, true) => names.filter(|n| !n.is_empty()).ok_or_else(|| Error::Validation(NEEDS_FIELDS.into()))?,
    };
    let selectable = || physical.iter().map(|&i| fields[i].name.as_str()).collect::<Vec<_>>().join(", ");
    names
        .iter()
        .map(|name| {
            let position = physical.iter().copied().find(|&i| &fields[i].name == name).ok_or_else(|| {
                Error::Validation(format!(
                    "Could not find the field '{name}' in the table schema for usage in the key format. A key field \
                     must be a regular, physical column. The following columns can be selected in the 'key.fields' \
                     option:\n[{}]",
                    selectable()
                ))
            })?;
            if !name.starts_with(prefix) {
                return Err(Error::Validation(format!(
                    "All fields in 'key.fields' must be prefixed with '{prefix}' when option 'key.fields-prefix' is \
                     set but field '{name}' is not prefixed."
                )));
            }
            Ok(position)
        })
        .collect()
}

/// `key.format`, `key.fields`, `key.fields-prefix`, `value.format` (or `format`) and
/// `value.fields-include`, as Flink's `createKeyFormatProjection` and
/// `createValueFormatProjection` check them.
fn read_layout(table: &TableDescriptor, options: &mut TableOptions, ctx: &FactoryContext<'_>) -> Result<RecordLayout> {
    let fields = &table.schema.fields;
    let physical = physical_positions(table);
    let prefix = options.optional("key.fields-prefix").unwrap_or_default().to_string();
    let key_columns = read_key_columns(options, fields, &physical, &prefix)?;
    let value_columns = value_columns(options, &physical, &key_columns, &prefix)?;
    let key = ctx
        .format_under("key.", &sub_schema(fields, &key_columns, &prefix), options)?
        .map(|format| (format, key_columns));
    let value_schema = sub_schema(fields, &value_columns, "");
    let value = match (options.contains("format"), options.contains("value.format")) {
        (true, true) => {
            return Err(Error::Validation(
                "Option 'format' and 'value.format' shouldn't be set together; 'format' is the short form of \
                 'value.format'."
                    .into(),
            ))
        }
        (true, false) => ctx.format(&value_schema, options)?,
        (false, true) => ctx
            .format_under("value.", &value_schema, options)?
            .ok_or_else(|| Error::MissingOptions { missing: vec!["value.format".into()] })?,
        (false, false) => {
            options.optional("format");
            options.optional("value.format");
            return Err(Error::Validation("Could not find required scan format 'value.format'.".into()));
        }
    };
    if value.carries_changes() && key.as_ref().is_some_and(|(_, k)| k.iter().any(|c| !value_columns.contains(c))) {
        return Err(Error::Validation(
            "A key format may only carry columns the value carries too when the value format is a changelog \
             format (debezium-json, canal-json, maxwell-json): set 'value.fields-include' to 'ALL'."
                .into(),
        ));
    }
    let types = fields.iter().map(|f| f.data_type.clone()).collect();
    Ok(RecordLayout { types, key, value, value_columns, metadata: metadata_of(table) })
}

/// An `upsert-kafka` table's layout: the key format carries the primary key (`key.fields` is
/// not an option), `value.format` and `value.fields-include` the value, as Flink's
/// `UpsertKafkaDynamicTableFactory` reads them.
fn read_upsert_layout(
    table: &TableDescriptor,
    options: &mut TableOptions,
    ctx: &FactoryContext<'_>,
) -> Result<RecordLayout> {
    let fields = &table.schema.fields;
    let physical = physical_positions(table);
    let prefix = options.optional("key.fields-prefix").unwrap_or_default().to_string();
    let key_columns = table.primary_key.clone();
    let value_columns = value_columns(options, &physical, &key_columns, &prefix)?;
    options.required("key.format");
    options.required("value.format");
    let key = ctx.format_under("key.", &sub_schema(fields, &key_columns, &prefix), options)?;
    let value = ctx.format_under("value.", &sub_schema(fields, &value_columns, ""), options)?;
    let (Some(key), Some(value)) = (key, value) else {
        let missing = ["key.format", "value.format"].iter().filter(|k| !options.contains(k)).map(|k| k.to_string());
        return Err(Error::MissingOptions { missing: missing.collect() });
    };
    if value.carries_changes() {
        return Err(Error::Validation(
            "'upsert-kafka' connector doesn't support a changelog format as 'value.format': its records are \
             upserts already."
                .into(),
        ));
    }
    let types = fields.iter().map(|f| f.data_type.clone()).collect();
    Ok(RecordLayout { types, key: Some((key, key_columns)), value, value_columns, metadata: metadata_of(table) })
}
