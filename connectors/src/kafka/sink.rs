//! Writing a `kafka` table: each row becomes a record of the key and value formats.
//!
//! - `none`: rows are handed to the client; a crash loses those not yet acknowledged.
//! - `at-least-once`: a checkpoint waits until every row before its barrier is acknowledged,
//!   so a restore writes again at most what came after it.
//! - `exactly-once`: the rows before a checkpoint's barrier are kept in that checkpoint and
//!   written in one Kafka transaction when the checkpoint completes. The same transaction
//!   commits a marker (the checkpoint's id as the offset of a consumer group named after the
//!   writer, `<sink.transactional-id-prefix>-<subtask>`), so a restore knows which of its
//!   checkpoints' transactions committed and writes the others again: every row exactly once in
//!   a `read_committed` view. Transactions a crashed run left open are aborted when the writer
//!   with the same transactional id starts (`init_transactions`). The rows after the last
//!   barrier, kept by the final state a writer reports when its input ends, are filed under the
//!   id after the last checkpoint it took part in: every checkpoint that holds them has that id
//!   or a later one, so they commit after the rows before them, and a restore that finds the
//!   marker below that id writes them again.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::{ClientContext, Offset};
use weir_runtime::checkpoint::codec::DecodeError as StateDecodeError;
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::columnar::{for_each_record, Cell};
use weir_runtime::{Chunk, Error as RuntimeError, Operator, OperatorContext, Output, Result as RuntimeResult, RowKind};

use super::client::{self, TopicPartition};
use super::options::{Connector, DeliveryGuarantee, KafkaOptions, Partitioner, Topics};
use super::record::{RecordEncoder, WrittenMeta};

/// The state section of an exactly-once writer's checkpoints not yet known committed.
const PENDING: &str = "pending";
/// The state section holding the id the writer's rows were last filed under.
const LATEST: &str = "latest";

/// How long a flush or a transaction's commit may take.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(60);

/// Hears of each record's delivery; keeps the first failure.
struct Deliveries {
    failure: Mutex<Option<String>>,
}

impl ClientContext for Deliveries {}

impl ProducerContext for Deliveries {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((error, _)) = result {
            self.failure.lock().get_or_insert_with(|| error.to_string());
        }
    }
}

/// One record to write; without a value, a tombstone (an upsert table's delete).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    /// The record's timestamp and headers (the `timestamp` and `headers` metadata columns).
    meta: WrittenMeta,
}

impl Record {
    /// Writes the record into an exactly-once writer's checkpoint.
    fn write(&self, out: &mut weir_runtime::checkpoint::codec::Encoder) {
        out.u32(u32::from(self.key.is_some()) | (u32::from(self.value.is_some()) << 1));
        out.bytes(self.key.as_deref().unwrap_or_default());
        out.bytes(self.value.as_deref().unwrap_or_default());
        out.i64(self.meta.timestamp.unwrap_or(i64::MIN));
        out.u32(self.meta.headers.len() as u32);
        for (k, v) in &self.meta.headers {
            out.str(k);
            out.bytes(v);
        }
    }

    /// Reads a record [`Record::write`] wrote.
    fn read(input: &mut weir_runtime::checkpoint::codec::Decoder<'_>) -> Result<Record, StateDecodeError> {
        let present = input.u32()?;
        let key = input.bytes()?.to_vec();
        let value = input.bytes()?.to_vec();
        let timestamp = Some(input.i64()?).filter(|&t| t != i64::MIN);
        let mut headers = Vec::new();
        for _ in 0..input.u32()? {
            let k = input.str()?.to_string();
            headers.push((k, input.bytes()?.to_vec()));
        }
        Ok(Record {
            key: (present & 1 != 0).then_some(key),
            value: (present & 2 != 0).then_some(value),
            meta: WrittenMeta { timestamp, headers },
        })
    }
}

/// A record to write, borrowed: a row's as just encoded, or a kept [`Record`].
#[derive(Debug, Clone, Copy)]
struct RecordView<'r> {
    key: Option<&'r [u8]>,
    value: Option<&'r [u8]>,
    meta: &'r WrittenMeta,
}

impl Record {
    fn view(&self) -> RecordView<'_> {
        RecordView { key: self.key.as_deref(), value: self.value.as_deref(), meta: &self.meta }
    }
}

/// The error of a Kafka sink of `table` that could not do `what` to `topic`.
fn sink_error(table: &str, topic: &str, what: &str, error: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::execution(format!("Kafka sink '{table}' could not {what} topic '{topic}': {error}"))
}

/// Hands `record` to `producer` for `topic` (and `partition`, when fixed), waiting while the
/// client's queue is full.
fn send(
    producer: &BaseProducer<Deliveries>,
    topic: &str,
    partition: Option<i32>,
    record: RecordView<'_>,
) -> Result<(), rdkafka::error::KafkaError> {
    loop {
        let mut out: BaseRecord<'_, [u8], [u8]> = BaseRecord::to(topic);
        if let Some(value) = record.value {
            out = out.payload(value);
        }
        if let Some(key) = record.key {
            out = out.key(key);
        }
        if let Some(partition) = partition {
            out = out.partition(partition);
        }
        if let Some(timestamp) = record.meta.timestamp {
            out = out.timestamp(timestamp);
        }
        if !record.meta.headers.is_empty() {
            let headers =
                record.meta.headers.iter().fold(OwnedHeaders::new(), |h, (key, value)| {
                    h.insert(Header { key, value: Some(value.as_slice()) })
                });
            out = out.headers(headers);
        }
        match producer.send(out) {
            Ok(()) => return Ok(()),
            Err((rdkafka::error::KafkaError::MessageProduction(rdkafka::types::RDKafkaErrorCode::QueueFull), _)) => {
                producer.poll(Duration::from_millis(50));
            }
            Err((e, _)) => return Err(e),
        }
    }
}

/// Writes rows to a topic.
pub struct KafkaSink {
    name: String,
    options: Arc<KafkaOptions>,
    topic: String,
    encoder: RecordEncoder,
    producer: Option<BaseProducer<Deliveries>>,
    /// `fixed`: the partition this subtask writes.
    partition: Option<i32>,
    /// Exactly-once: the rows since the last barrier.
    batch: Vec<Record>,
    /// Exactly-once: per checkpoint taken and not known committed, its rows.
    pending: BTreeMap<u64, Vec<Record>>,
    /// Exactly-once, after a restore: the checkpoints of old writers (by their subtask) this one took over.
    inherited: Vec<(usize, BTreeMap<u64, Vec<Record>>)>,
    /// The parallelism of the restored job (its transactional ids may have transactions left open).
    restored_parallelism: usize,
    /// Exactly-once: the highest checkpoint id the writer's rows were filed under (restored
    /// ones included); the final state files the last rows under the next id.
    latest: u64,
    /// The input has ended: the next state taken is the final one.
    ended: bool,
    subtask: usize,
    parallelism: usize,
    checkpointing: bool,
}

impl std::fmt::Debug for KafkaSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaSink").field("table", &self.name).field("topic", &self.topic).finish_non_exhaustive()
    }
}

impl KafkaSink {
    /// The sink of subtask `subtask` of `parallelism` for the table `options` describe.
    pub fn new(options: Arc<KafkaOptions>, subtask: usize, parallelism: usize) -> Self {
        let topic = match &options.topics {
            Topics::Names(names) => names[0].clone(),
            Topics::Pattern(pattern) => pattern.clone(),
        };
        KafkaSink {
            name: format!("Sink: {}", options.table),
            encoder: RecordEncoder::new(&options.layout),
            topic,
            producer: None,
            partition: None,
            batch: Vec::new(),
            pending: BTreeMap::new(),
            inherited: Vec::new(),
            restored_parallelism: 0,
            latest: 0,
            ended: false,
            subtask,
            parallelism,
            checkpointing: false,
            options,
        }
    }

    fn exactly_once(&self) -> bool {
        self.options.delivery == DeliveryGuarantee::ExactlyOnce
    }

    /// The transactional id of the writer of subtask `k`.
    fn transactional_id(&self, k: usize) -> String {
        format!("{}-{k}", self.options.transactional_id_prefix.as_deref().unwrap_or("weir"))
    }

    fn producer_for(&self, transactional_id: Option<&str>) -> crate::error::Result<BaseProducer<Deliveries>> {
        let mut fixed = vec![("partitioner", "murmur2_random")];
        if let Some(id) = transactional_id {
            fixed.push(("transactional.id", id));
        }
        client::create_with(&self.options, &fixed, |config| {
            config.create_with_context(Deliveries { failure: Mutex::new(None) })
        })
    }

    fn failed(&self, what: &str, error: impl std::fmt::Display) -> RuntimeError {
        sink_error(&self.options.table, &self.topic, what, error)
    }

    /// Hands `record` to the client, waiting while its queue is full.
    fn send(&self, producer: &BaseProducer<Deliveries>, record: RecordView<'_>) -> RuntimeResult<()> {
        send(producer, &self.topic, self.partition, record).map_err(|e| self.failed("write to", e))
    }

    fn check_deliveries(&self, producer: &BaseProducer<Deliveries>) -> RuntimeResult<()> {
        match producer.context().failure.lock().take() {
            Some(failure) => Err(self.failed("write to", failure)),
            None => Ok(()),
        }
    }

    fn flush(&self) -> RuntimeResult<()> {
        let Some(producer) = &self.producer else { return Ok(()) };
        producer.flush(FLUSH_TIMEOUT).map_err(|e| self.failed("flush its records to", e))?;
        self.check_deliveries(producer)
    }

    /// Writes `batches` (checkpoint id and rows, in order) in one transaction of `producer`
    /// that also moves writer `owner`'s marker to the last id.
    fn commit(
        &self,
        producer: &BaseProducer<Deliveries>,
        owner: usize,
        batches: &[(u64, &[Record])],
    ) -> RuntimeResult<()> {
        let Some(&(last, _)) = batches.last() else { return Ok(()) };
        producer.begin_transaction().map_err(|e| self.failed("begin a transaction on", e))?;
        for (_, records) in batches {
            for record in *records {
                self.send(producer, record.view())?;
            }
        }
        let marker = client::partition_list([(&self.marker_partition(), Offset::Offset(last as i64))])
            .map_err(RuntimeError::from)?;
        let group = self.marker_group(owner)?;
        let metadata = group.group_metadata().ok_or_else(|| self.failed("name the marker group of", "no group id"))?;
        producer
            .send_offsets_to_transaction(&marker, &metadata, FLUSH_TIMEOUT)
            .map_err(|e| self.failed("add its checkpoint marker to a transaction on", e))?;
        producer.commit_transaction(FLUSH_TIMEOUT).map_err(|e| self.failed("commit a transaction on", e))?;
        tracing::debug!(
            table = %self.options.table,
            subtask = self.subtask,
            owner,
            checkpoints = ?batches.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
            records = batches.iter().map(|(_, r)| r.len()).sum::<usize>(),
            "committed a transaction"
        );
        self.check_deliveries(producer)
    }

    fn marker_partition(&self) -> TopicPartition {
        TopicPartition { topic: self.topic.clone(), partition: 0 }
    }

    /// A consumer of writer `owner`'s marker group (it reads and names it; it consumes nothing).
    fn marker_group(&self, owner: usize) -> RuntimeResult<BaseConsumer> {
        let group = self.transactional_id(owner);
        Ok(client::create::<BaseConsumer>(
            &self.options,
            &[("group.id", group.as_str()), ("enable.auto.commit", "false")],
        )?)
    }

    /// The last checkpoint whose transaction writer `owner` committed.
    fn committed_marker(&self, owner: usize) -> RuntimeResult<Option<u64>> {
        let consumer = self.marker_group(owner)?;
        let list = client::partition_list([(&self.marker_partition(), Offset::Invalid)])?;
        let committed = consumer
            .committed_offsets(list, client::api_timeout(&self.options))
            .map_err(|e| self.failed("read the checkpoint marker of", e))?;
        Ok(client::offsets_of(&committed).into_values().flatten().next().map(|o| o as u64))
    }

    /// Encodes each row of `chunk` into a record, in order, and hands it to `write`; stops at
    /// the first error `write` returns. An upsert table's delete, and its update-before (a row a
    /// filter took away; a +U after it writes the key again), is a tombstone, as Flink's
    /// upsert-kafka sink writes them.
    fn each_record<'c>(
        encoder: &mut RecordEncoder,
        upsert: bool,
        chunk: &'c Chunk,
        mut write: impl FnMut(RecordView<'_>) -> RuntimeResult<()>,
    ) -> RuntimeResult<()> {
        let mut failed = None;
        let mut scratch: Vec<Cell<'c>> = Vec::new();
        let mut push = |kind: RowKind, cells: &[Cell<'c>]| {
            if failed.is_some() {
                return;
            }
            let tombstone = upsert && matches!(kind, RowKind::UpdateBefore | RowKind::Delete);
            let meta = encoder.meta(cells);
            let encoded = encoder.encode(kind, cells, tombstone, &mut scratch);
            if let Err(e) = write(RecordView { key: encoded.key, value: encoded.value, meta: &meta }) {
                failed = Some(e);
            }
        };
        if chunk.is_columnar() {
            for_each_record(chunk, |kind, cells| push(kind, cells));
        } else {
            let mut cells = Vec::new();
            for (kind, row) in chunk.rows() {
                cells.clear();
                cells.extend(row.iter().map(Cell::of));
                push(kind, &cells);
            }
        }
        failed.map_or(Ok(()), Err)
    }
}

impl Operator for KafkaSink {
    fn name(&self) -> &str {
        &self.name
    }

    fn open(&mut self, ctx: &mut OperatorContext) -> RuntimeResult<()> {
        self.checkpointing = ctx.checkpointing();
        let timeout = client::api_timeout(&self.options);
        if self.options.partitioner == Partitioner::Fixed {
            let probe: BaseConsumer = client::create(&self.options, &[("group.id", "weir-metadata")])?;
            let partitions = client::partitions(&probe, &self.options, timeout)?;
            self.partition = Some((self.subtask % partitions.len().max(1)) as i32);
        }
        if !self.exactly_once() {
            self.producer = Some(self.producer_for(None)?);
            return Ok(());
        }
        // Transactions that writers of the restored job left open under ids no writer has now.
        for old in (self.parallelism..self.restored_parallelism).filter(|k| k % self.parallelism == self.subtask) {
            let lingering = self.producer_for(Some(&self.transactional_id(old)))?;
            lingering.init_transactions(timeout).map_err(|e| self.failed("abort the transactions left on", e))?;
        }
        let producer = self.producer_for(Some(&self.transactional_id(self.subtask)))?;
        producer.init_transactions(timeout).map_err(|e| self.failed("start transactions on", e))?;
        // The restored checkpoints whose transactions did not commit before the crash.
        for (owner, batches) in std::mem::take(&mut self.inherited) {
            let marker = self.committed_marker(owner)?;
            let uncommitted: Vec<(u64, &[Record])> = batches
                .iter()
                .filter(|(id, _)| marker.is_none_or(|m| **id > m))
                .map(|(id, r)| (*id, r.as_slice()))
                .collect();
            tracing::info!(table = %self.options.table, owner, batches = uncommitted.len(), "rewriting restored transactions");
            self.commit(&producer, owner, &uncommitted)?;
        }
        self.producer = Some(producer);
        Ok(())
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> RuntimeResult<()> {
        let upsert = self.options.connector == Connector::Upsert;
        let Some(producer) = &self.producer else { return Ok(()) };
        if !self.exactly_once() {
            // Each record goes to the client from the encoder's buffers, which it copies.
            let (topic, partition) = (self.topic.as_str(), self.partition);
            let (table, encoder) = (&self.options.table, &mut self.encoder);
            Self::each_record(encoder, upsert, &chunk, |record| {
                send(producer, topic, partition, record).map_err(|e| sink_error(table, topic, "write to", e))
            })?;
            producer.poll(Duration::ZERO);
            return self.check_deliveries(producer);
        }
        // Exactly-once keeps each record until its checkpoint commits.
        let mut records = Vec::with_capacity(chunk.len());
        Self::each_record(&mut self.encoder, upsert, &chunk, |r| {
            let owned = |bytes: Option<&[u8]>| bytes.map(<[u8]>::to_vec);
            records.push(Record { key: owned(r.key), value: owned(r.value), meta: r.meta.clone() });
            Ok(())
        })?;
        if self.checkpointing {
            self.batch.extend(records);
            return Ok(());
        }
        // A job without checkpoints cannot be restored: each chunk is a transaction of its own.
        self.commit(producer, self.subtask, &[(0, &records)])
    }

    fn snapshot_state(
        &mut self,
        checkpoint: u64,
        _ctx: &mut OperatorContext,
        state: &mut StateWriter,
    ) -> RuntimeResult<()> {
        if !self.exactly_once() {
            return match self.options.delivery {
                DeliveryGuarantee::AtLeastOnce => self.flush(),
                DeliveryGuarantee::None | DeliveryGuarantee::ExactlyOnce => Ok(()),
            };
        }
        // The final state's checkpoint id is not known yet (the runtime passes 0); every
        // checkpoint that will hold it comes after the last one this writer took part in.
        let id = if self.ended { self.latest + 1 } else { checkpoint };
        self.latest = self.latest.max(id);
        self.pending.insert(id, std::mem::take(&mut self.batch));
        state.section(LATEST).u64(self.latest);
        let out = state.section(PENDING);
        out.u32(self.pending.len() as u32);
        for (id, records) in &self.pending {
            out.u64(*id);
            out.u32(records.len() as u32);
            for r in records {
                r.write(out);
            }
        }
        Ok(())
    }

    fn keeps_state_after_end(&self) -> bool {
        self.exactly_once()
    }

    fn notify_checkpoint_complete(
        &mut self,
        checkpoint: u64,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> RuntimeResult<()> {
        if !self.exactly_once() {
            return Ok(());
        }
        let later = self.pending.split_off(&(checkpoint + 1));
        let done = std::mem::replace(&mut self.pending, later);
        let Some(producer) = &self.producer else { return Ok(()) };
        let batches: Vec<(u64, &[Record])> = done.iter().map(|(id, r)| (*id, r.as_slice())).collect();
        self.commit(producer, self.subtask, &batches)
    }

    fn end_of_input(&mut self, _ctx: &mut OperatorContext, _out: &mut Output) -> RuntimeResult<()> {
        self.ended = true;
        match self.options.delivery {
            // The final checkpoint commits the last rows.
            DeliveryGuarantee::ExactlyOnce => Ok(()),
            DeliveryGuarantee::None | DeliveryGuarantee::AtLeastOnce => self.flush(),
        }
    }

    fn restore_state(&mut self, _ctx: &mut OperatorContext, states: &[StateReader]) -> RuntimeResult<()> {
        self.restored_parallelism = states.len();
        let name = self.options.table.clone();
        let malformed =
            |e: StateDecodeError| RuntimeError::Restore(format!("the state of Kafka sink '{name}' is malformed: {e}"));
        for state in states {
            if let Some(mut latest) = state.section(LATEST) {
                self.latest = self.latest.max(latest.u64().map_err(malformed)?);
            }
        }
        for (owner, state) in states.iter().enumerate().filter(|(k, _)| k % self.parallelism == self.subtask) {
            let Some(mut input) = state.section(PENDING) else { continue };
            let mut batches = BTreeMap::new();
            for _ in 0..input.u32().map_err(malformed)? {
                let id = input.u64().map_err(malformed)?;
                let mut records = Vec::new();
                for _ in 0..input.u32().map_err(malformed)? {
                    records.push(Record::read(&mut input).map_err(malformed)?);
                }
                self.latest = self.latest.max(id);
                batches.insert(id, records);
            }
            self.inherited.push((owner, batches));
        }
        Ok(())
    }
}
