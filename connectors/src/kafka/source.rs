//! Reading Kafka partitions: each subtask is given partitions as Flink's Kafka source
//! enumerator gives them (a topic's partitions in turn from a start fixed by the topic's name),
//! reads them with an assigned (not subscribed) consumer, and reports the position of each in
//! its checkpoints. A restore at another parallelism reads every subtask's positions and keeps
//! those of the partitions it is given now.
//!
//! Each partition is a split ([`Source::splits`]): a poll emits the rows of one partition, so a
//! watermark assigner chained after the source keeps a watermark per partition and emits the
//! least, as Flink's per-partition watermarks do; a partition without records for the idle
//! timeout holds nothing back.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::Offset;
use weir_runtime::checkpoint::codec::DecodeError as StateDecodeError;
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::{
    Chunk, Error as RuntimeError, OperatorContext, Output, Result as RuntimeResult, Source, SourceStatus, Splits,
    SubtaskInfo,
};

use super::client::{self, TopicPartition};
use super::options::{BoundedMode, Connector, KafkaOptions, StartupMode};
use super::record::{RecordColumns, RecordMeta};
use crate::error::{Error, Result};

/// The section of a Kafka source's state: its partitions' positions.
const PARTITIONS: &str = "partitions";

/// How long a source with nothing to read waits before it polls again.
const IDLE_POLL: Duration = Duration::from_millis(5);

/// The subtask of `parallelism` that reads `tp`, as Flink's `KafkaSourceEnumerator` places splits:
/// a topic's partitions go round the subtasks from a start given by the hash of its name.
pub fn owner(tp: &TopicPartition, parallelism: usize) -> usize {
    // The topic name's Java `String#hashCode`.
    let hash = tp.topic.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)));
    let start = (hash.wrapping_mul(31) & 0x7FFF_FFFF) as usize % parallelism;
    (start + tp.partition as usize) % parallelism
}

/// One partition this subtask reads.
struct Partition {
    tp: TopicPartition,
    /// The offset of the next record to read.
    next: i64,
    /// The offset of the first record not yet emitted (read records wait in `rows` for the
    /// partition's turn): what a checkpoint records, so a restore reads those again.
    emitted: i64,
    /// The offset reading stops before, for a bounded scan.
    stop: Option<i64>,
    /// The records read and not yet emitted.
    rows: RecordColumns,
    /// When (processing time) the partition last had a record.
    last_record_at: i64,
    /// Whether the consumer reached the partition's end after its last record (librdkafka's
    /// end-of-partition event): only then can it be idle.
    at_end: bool,
}

impl Partition {
    fn finished(&self) -> bool {
        self.stop.is_some_and(|stop| self.next >= stop)
    }
}

/// Reads the partitions of a `kafka` table that subtask `info` is given.
pub struct KafkaSource {
    name: String,
    options: Arc<KafkaOptions>,
    subtask: usize,
    parallelism: usize,
    consumer: Option<BaseConsumer>,
    partitions: Vec<Partition>,
    /// The positions a restore handed over, by partition (next offset, stop offset).
    restored: Option<BTreeMap<TopicPartition, (i64, Option<i64>)>>,
    /// The partition the last poll emitted.
    turn: usize,
    /// The partition of the last message read.
    last_read: usize,
    /// Per checkpoint taken and not yet known complete, the positions it holds.
    uncommitted: BTreeMap<u64, Vec<(TopicPartition, i64)>>,
    idle_timeout: Option<Duration>,
    /// Per partition, whether it held the watermark back at the last poll (read and not idle).
    active: Vec<bool>,
    /// The partitions a discovery thread finds (`scan.topic-partition-discovery.interval`), and
    /// the sender whose drop (with the source) stops the thread.
    discovered: Option<(std::sync::mpsc::Receiver<Vec<TopicPartition>>, std::sync::mpsc::Sender<()>)>,
}

impl std::fmt::Debug for KafkaSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaSource").field("table", &self.name).field("subtask", &self.subtask).finish_non_exhaustive()
    }
}

impl KafkaSource {
    /// The source of subtask `info` of the table `options` describe; a partition without
    /// records for `idle_timeout` (when set) holds no watermark back.
    pub fn new(options: Arc<KafkaOptions>, info: &SubtaskInfo, idle_timeout: Option<Duration>) -> Self {
        KafkaSource {
            name: options.table.clone(),
            subtask: info.index,
            parallelism: info.parallelism.max(1),
            consumer: None,
            partitions: Vec::new(),
            restored: None,
            turn: 0,
            last_read: 0,
            uncommitted: BTreeMap::new(),
            active: Vec::new(),
            discovered: None,
            idle_timeout: idle_timeout.filter(|d| !d.is_zero()),
            options,
        }
    }

    fn consumer(&self) -> Result<BaseConsumer> {
        let group = self.options.group_id().map(str::to_string).unwrap_or_else(|| format!("weir-{}", self.name));
        let client_id = format!("{}-{}", self.name, self.subtask);
        client::create(
            &self.options,
            &[
                ("group.id", group.as_str()),
                ("client.id", client_id.as_str()),
                ("enable.auto.commit", "false"),
                ("enable.auto.offset.store", "false"),
                ("enable.partition.eof", "true"),
            ],
        )
    }

    /// Where each newly read partition starts and stops, as the startup and bounded modes say.
    fn positions(
        &self,
        consumer: &BaseConsumer,
        fresh: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, (i64, Option<i64>)>> {
        let timeout = client::api_timeout(&self.options);
        let opts = &self.options;
        let mut ends = BTreeMap::new();
        for tp in fresh {
            let (low, high) = consumer
                .fetch_watermarks(&tp.topic, tp.partition, timeout)
                .map_err(|e| client::cluster_error(opts, &format!("fetch the offsets of partition {tp}"), &e))?;
            ends.insert(tp.clone(), (low, high));
        }
        let committed = |consumer: &BaseConsumer| -> Result<BTreeMap<TopicPartition, Option<i64>>> {
            let list = client::partition_list(fresh.iter().map(|tp| (tp, Offset::Invalid)))?;
            let list = consumer
                .committed_offsets(list, timeout)
                .map_err(|e| client::cluster_error(opts, "fetch the group's committed offsets", &e))?;
            Ok(client::offsets_of(&list))
        };
        let at_time = |consumer: &BaseConsumer, millis: i64| -> Result<BTreeMap<TopicPartition, Option<i64>>> {
            let list = client::partition_list(fresh.iter().map(|tp| (tp, Offset::Offset(millis))))?;
            let list = consumer
                .offsets_for_times(list, timeout)
                .map_err(|e| client::cluster_error(opts, "look up offsets by timestamp", &e))?;
            Ok(client::offsets_of(&list))
        };
        let low = |tp: &TopicPartition| ends[tp].0;
        let high = |tp: &TopicPartition| ends[tp].1;
        let starts: BTreeMap<TopicPartition, i64> = match &opts.startup {
            StartupMode::Earliest => fresh.iter().map(|tp| (tp.clone(), low(tp))).collect(),
            StartupMode::Latest => fresh.iter().map(|tp| (tp.clone(), high(tp))).collect(),
            StartupMode::Timestamp(millis) => at_time(consumer, *millis)?
                .into_iter()
                .map(|(tp, o)| {
                    let o = o.unwrap_or_else(|| high(&tp));
                    (tp, o)
                })
                .collect(),
            StartupMode::GroupOffsets | StartupMode::SpecificOffsets(_) => {
                let reset = opts.property("auto.offset.reset").map(str::to_ascii_lowercase);
                let committed = committed(consumer)?;
                let mut starts = BTreeMap::new();
                for tp in fresh {
                    let specific = match &opts.startup {
                        StartupMode::SpecificOffsets(offsets) => offsets.get(&tp.partition).copied(),
                        _ => None,
                    };
                    let start = match (specific, committed.get(tp).copied().flatten(), reset.as_deref()) {
                        (Some(offset), _, _) => offset,
                        (None, Some(offset), _) => offset,
                        (None, None, _) if matches!(opts.startup, StartupMode::SpecificOffsets(_)) => low(tp),
                        (None, None, Some("earliest" | "smallest" | "beginning")) => low(tp),
                        (None, None, Some("latest" | "largest" | "end")) => high(tp),
                        (None, None, _) => {
                            return Err(Error::Validation(format!(
                                "Kafka table '{}': partition {tp} has no committed offset for group '{}' and \
                                 'scan.startup.mode' is 'group-offsets' without 'properties.auto.offset.reset' \
                                 ('earliest' or 'latest'): Undefined offset with no reset policy for partitions: [{tp}].",
                                opts.table,
                                opts.group_id().unwrap_or_default()
                            )))
                        }
                    };
                    starts.insert(tp.clone(), start);
                }
                starts
            }
        };
        let stops: BTreeMap<TopicPartition, Option<i64>> = match &opts.bounded {
            BoundedMode::Unbounded => fresh.iter().map(|tp| (tp.clone(), None)).collect(),
            BoundedMode::Latest => fresh.iter().map(|tp| (tp.clone(), Some(high(tp)))).collect(),
            BoundedMode::GroupOffsets => committed(consumer)?
                .into_iter()
                .map(|(tp, o)| {
                    let o = o.unwrap_or_else(|| high(&tp));
                    (tp, Some(o))
                })
                .collect(),
            BoundedMode::Timestamp(millis) => at_time(consumer, *millis)?
                .into_iter()
                .map(|(tp, o)| {
                    let o = o.unwrap_or_else(|| high(&tp));
                    (tp, Some(o))
                })
                .collect(),
            BoundedMode::SpecificOffsets(offsets) => fresh
                .iter()
                .map(|tp| (tp.clone(), Some(offsets.get(&tp.partition).copied().unwrap_or_else(|| high(tp)))))
                .collect(),
        };
        Ok(starts
            .into_iter()
            .map(|(tp, start)| {
                let stop = stops.get(&tp).copied().flatten();
                (tp, (start, stop))
            })
            .collect())
    }

    /// Reads what the consumer has now into the partitions' columns, up to `rows` records.
    fn read(&mut self, rows: usize, now: i64) -> RuntimeResult<()> {
        let Some(consumer) = &self.consumer else { return Ok(()) };
        let mut read = 0;
        while read < rows {
            let Some(polled) = consumer.poll(Duration::ZERO) else { break };
            let message = match polled {
                Ok(message) => message,
                Err(KafkaError::PartitionEOF(number)) => {
                    // The event names the partition's number, not its topic: every partition
                    // of that number is taken as read to its end (one that is not has records
                    // coming, which clear it again).
                    for p in self.partitions.iter_mut().filter(|p| p.tp.partition == number) {
                        p.at_end = true;
                    }
                    // A read_committed scan may end on transaction markers, which no record
                    // shows: the consumer's position tells how far it has come.
                    let positions = consumer.position().map_err(|e| RuntimeError::execution(e.to_string()))?;
                    for (tp, offset) in client::offsets_of(&positions) {
                        if let (Some(offset), Some(p)) = (offset, self.partitions.iter_mut().find(|p| p.tp == tp)) {
                            tracing::debug!(table = %self.name, subtask = self.subtask, partition = tp.partition, eof = number, next = p.next, position = offset, "end of partition");
                            p.next = p.next.max(offset);
                            if p.rows.rows() == 0 {
                                p.emitted = p.next;
                            }
                        }
                    }
                    continue;
                }
                Err(e) if is_fatal(&e) => {
                    let topics = &self.options.topics;
                    return Err(RuntimeError::execution(format!(
                        "Kafka source '{}' failed reading {topics}: {e}",
                        self.name
                    )));
                }
                Err(e) => {
                    tracing::warn!(table = %self.name, error = %e, "Kafka consumer error; retrying");
                    continue;
                }
            };
            read += 1;
            // Messages come in runs of one partition: the last one's is looked at first.
            let is_of = |p: &Partition| p.tp.partition == message.partition() && p.tp.topic == message.topic();
            if !self.partitions.get(self.last_read).is_some_and(is_of) {
                match self.partitions.iter().position(is_of) {
                    Some(k) => self.last_read = k,
                    None => continue,
                }
            }
            let Some(p) = self.partitions.get_mut(self.last_read) else {
                continue;
            };
            if p.finished() || message.offset() < p.next {
                continue;
            }
            p.last_record_at = now;
            p.at_end = false;
            let pushed = p.rows.push(message.key(), message.payload(), || record_meta(&message));
            p.next = message.offset() + 1;
            if let Err((part, e)) = pushed {
                let field = e.field.map(|f| format!(", field '{f}'")).unwrap_or_default();
                return Err(RuntimeError::execution(format!(
                    "Failed to deserialize the {} of the record of topic '{}', partition {}, offset {}{field}: {}",
                    part.name(),
                    p.tp.topic,
                    p.tp.partition,
                    message.offset(),
                    e.reason
                )));
            }
        }
        Ok(())
    }

    /// Starts reading the partitions discovery found that this subtask is given and does not
    /// read yet, from their beginning (as Flink's source reads discovered partitions).
    fn add_discovered(&mut self, now: i64) -> RuntimeResult<()> {
        let Some(found) = self.discovered.as_ref().and_then(|(r, _)| r.try_iter().last()) else { return Ok(()) };
        let new: Vec<TopicPartition> = found
            .into_iter()
            .filter(|tp| owner(tp, self.parallelism) == self.subtask && !self.partitions.iter().any(|p| &p.tp == tp))
            .collect();
        let Some(consumer) = &self.consumer else { return Ok(()) };
        if new.is_empty() {
            return Ok(());
        }
        // The whole assignment again: the partitions read go on from their next offset.
        let reading: Vec<(&TopicPartition, Offset)> = self
            .partitions
            .iter()
            .filter(|p| !p.finished())
            .map(|p| (&p.tp, Offset::Offset(p.next)))
            .chain(new.iter().map(|tp| (tp, Offset::Beginning)))
            .collect();
        let list = client::partition_list(reading)?;
        consumer
            .assign(&list)
            .map_err(|e| client::cluster_error(&self.options, "assign the partitions it discovered", &e))?;
        tracing::info!(table = %self.name, subtask = self.subtask, partitions = ?new, "reading discovered Kafka partitions");
        let upsert = self.options.connector == Connector::Upsert;
        self.partitions.extend(new.into_iter().map(|tp| Partition {
            tp,
            next: 0,
            emitted: 0,
            stop: None,
            rows: RecordColumns::new(&self.options.layout, upsert),
            last_record_at: now,
            at_end: false,
        }));
        Ok(())
    }

    /// Whether partition `k` takes part in the watermark: it has rows still to emit, or is
    /// still read and has had a record within the idle timeout or has not been read to its end.
    fn active(&self, k: usize, now: i64) -> bool {
        let p = &self.partitions[k];
        if p.rows.rows() > 0 {
            return true;
        }
        let idle = p.at_end && self.idle_timeout.is_some_and(|t| now - p.last_record_at >= t.as_millis() as i64);
        !p.finished() && !idle
    }
}

/// A thread that lists the table's partitions every `interval` and sends them to the source;
/// it ends as soon as the source is gone (the returned sender dropped). A listing that fails is
/// logged and tried again.
fn discover(
    options: Arc<KafkaOptions>,
    interval: Duration,
) -> (std::sync::mpsc::Receiver<Vec<TopicPartition>>, std::sync::mpsc::Sender<()>) {
    let (send, receive) = std::sync::mpsc::channel();
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let spawned = std::thread::Builder::new().name(format!("{}-discovery", options.table)).spawn(move || {
        let Ok(consumer) = client::create::<BaseConsumer>(&options, &[("group.id", "weir-discovery")]) else { return };
        while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
            match client::partitions(&consumer, &options, client::api_timeout(&options)) {
                Ok(found) => {
                    if send.send(found).is_err() {
                        return;
                    }
                }
                Err(e) => tracing::warn!(table = %options.table, error = %e, "Kafka partition discovery failed"),
            }
        }
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "no Kafka partition discovery: its thread could not start");
    }
    (receive, stop)
}

/// What a message carries for the metadata columns.
fn record_meta<'m>(message: &'m rdkafka::message::BorrowedMessage<'_>) -> RecordMeta<'m> {
    use rdkafka::message::Headers;
    let timestamp = match message.timestamp() {
        rdkafka::Timestamp::NotAvailable => None,
        rdkafka::Timestamp::CreateTime(t) => Some((t, "CreateTime")),
        rdkafka::Timestamp::LogAppendTime(t) => Some((t, "LogAppendTime")),
    };
    let headers = message
        .headers()
        .map(|h| h.iter().map(|h| (h.key.to_string(), h.value.unwrap_or_default().to_vec())).collect())
        .unwrap_or_default();
    RecordMeta {
        topic: message.topic(),
        partition: message.partition(),
        offset: message.offset(),
        timestamp,
        headers,
        // librdkafka's leader epoch is not offered by the Rust client: NULL, as Flink reads an
        // unknown one.
        leader_epoch: None,
    }
}

/// Errors after which reading cannot go on (the topic is gone, access is refused); librdkafka
/// retries the others (a broker down, a connection lost) itself.
fn is_fatal(error: &KafkaError) -> bool {
    matches!(
        error.rdkafka_error_code(),
        Some(
            RDKafkaErrorCode::UnknownTopicOrPartition
                | RDKafkaErrorCode::UnknownTopic
                | RDKafkaErrorCode::TopicAuthorizationFailed
                | RDKafkaErrorCode::Fatal
        )
    )
}

impl Source for KafkaSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn open(&mut self, ctx: &mut OperatorContext) -> RuntimeResult<()> {
        let consumer = self.consumer()?;
        let all = client::partitions(&consumer, &self.options, client::api_timeout(&self.options))?;
        let mine: Vec<TopicPartition> =
            all.into_iter().filter(|tp| owner(tp, self.parallelism) == self.subtask).collect();
        let restored = self.restored.take().unwrap_or_default();
        let fresh: Vec<TopicPartition> = mine.iter().filter(|tp| !restored.contains_key(*tp)).cloned().collect();
        let mut positions = self.positions(&consumer, &fresh)?;
        positions.extend(restored.into_iter().filter(|(tp, _)| mine.contains(tp)));
        let now = ctx.processing_time();
        self.partitions = positions
            .into_iter()
            .map(|(tp, (next, stop))| Partition {
                tp,
                next,
                emitted: next,
                stop,
                rows: RecordColumns::new(&self.options.layout, self.options.connector == Connector::Upsert),
                last_record_at: now,
                at_end: false,
            })
            .collect();
        let reading = client::partition_list(
            self.partitions.iter().filter(|p| !p.finished()).map(|p| (&p.tp, Offset::Offset(p.next))),
        )?;
        consumer.assign(&reading).map_err(|e| client::cluster_error(&self.options, "assign its partitions", &e))?;
        let ranges: Vec<String> = self
            .partitions
            .iter()
            .map(|p| format!("{}-{}: {}..{:?}", p.tp.topic, p.tp.partition, p.next, p.stop))
            .collect();
        tracing::debug!(table = %self.name, subtask = self.subtask, partitions = ?ranges, "Kafka source opened");
        self.consumer = Some(consumer);
        if let (Some(interval), BoundedMode::Unbounded) = (self.options.discovery_interval, &self.options.bounded) {
            self.discovered = Some(discover(Arc::clone(&self.options), interval));
        }
        Ok(())
    }

    fn poll_next(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> RuntimeResult<SourceStatus> {
        let now = ctx.processing_time();
        self.add_discovered(now)?;
        self.read(ctx.chunk_size(), now)?;
        let n = self.partitions.len();
        self.active = (0..n).map(|k| self.active(k, now)).collect();
        if let Some(k) = (1..=n).map(|i| (self.turn + i) % n).find(|&k| self.partitions[k].rows.rows() > 0) {
            self.turn = k;
            let p = &mut self.partitions[k];
            p.emitted = p.next;
            let (kinds, arrays) =
                p.rows.finish().map_err(|e| RuntimeError::execution(format!("{}: {e}", self.name)))?;
            out.collect(Chunk::from_arrays(kinds, arrays));
            return Ok(SourceStatus::Ready);
        }
        // A subtask without partitions waits for discovery to give it some, when it looks.
        let waiting = self.partitions.is_empty() && self.discovered.is_some();
        if !waiting && self.partitions.iter().all(Partition::finished) {
            return Ok(SourceStatus::Finished);
        }
        Ok(SourceStatus::Wait(IDLE_POLL))
    }

    /// Each partition's topic, number, next offset and stop offset (`-1`: none).
    fn snapshot_state(
        &mut self,
        checkpoint: u64,
        _: &mut OperatorContext,
        state: &mut StateWriter,
    ) -> RuntimeResult<()> {
        let out = state.section(PARTITIONS);
        out.u32(self.partitions.len() as u32);
        for p in &self.partitions {
            out.str(&p.tp.topic);
            out.u32(p.tp.partition as u32);
            out.i64(p.emitted);
            out.i64(p.stop.unwrap_or(-1));
        }
        if self.options.commit_offsets && self.options.group_id().is_some() {
            self.uncommitted.insert(checkpoint, self.partitions.iter().map(|p| (p.tp.clone(), p.emitted)).collect());
        }
        Ok(())
    }

    /// Commits the positions of `checkpoint` to the consumer group (without waiting), as
    /// Flink's source does with `commit.offsets.on.checkpoint`; a failed commit is logged, not
    /// fatal: the checkpoint, not the group, is what a restore reads.
    fn notify_checkpoint_complete(&mut self, checkpoint: u64, _ctx: &mut OperatorContext) -> RuntimeResult<()> {
        let Some(offsets) = self.uncommitted.remove(&checkpoint) else { return Ok(()) };
        self.uncommitted.retain(|&c, _| c > checkpoint);
        let (Some(consumer), false) = (&self.consumer, offsets.is_empty()) else { return Ok(()) };
        let list = client::partition_list(offsets.iter().map(|(tp, o)| (tp, Offset::Offset(*o))))?;
        if let Err(e) = consumer.commit(&list, rdkafka::consumer::CommitMode::Async) {
            tracing::warn!(table = %self.name, checkpoint, error = %e, "committing offsets to the Kafka group failed");
        }
        Ok(())
    }

    /// Reads the positions every subtask of the checkpointed job wrote: [`Source::open`] keeps
    /// those of the partitions this subtask is given now.
    fn restore_state(&mut self, _ctx: &mut OperatorContext, states: &[StateReader]) -> RuntimeResult<()> {
        let malformed = |e: StateDecodeError| {
            RuntimeError::Restore(format!("the state of Kafka source '{}' is malformed: {e}", self.name))
        };
        let mut restored = BTreeMap::new();
        for state in states {
            let Some(mut input) = state.section(PARTITIONS) else { continue };
            for _ in 0..input.u32().map_err(malformed)? {
                let topic = input.str().map_err(malformed)?.to_string();
                let partition = input.u32().map_err(malformed)? as i32;
                let next = input.i64().map_err(malformed)?;
                let stop = input.i64().map_err(malformed)?;
                restored.insert(TopicPartition { topic, partition }, (next, (stop >= 0).then_some(stop)));
            }
        }
        self.restored = Some(restored);
        Ok(())
    }

    /// Each partition is a split once the subtask reads more than one; an idle or finished
    /// one is not open.
    fn splits(&self) -> Option<Splits> {
        (self.partitions.len() > 1).then(|| Splits { current: self.turn, open: self.active.clone() })
    }

    /// Every partition is read to its end (or finished): the subtask may go idle.
    fn caught_up(&self) -> bool {
        self.partitions.iter().all(|p| p.at_end || p.finished())
    }

    /// Opened, given no partition and never to be given one (no partition discovery): the
    /// subtask emits nothing, which its receivers know before any row moves (the runtime opens
    /// sources before it starts subtasks), so that no other subtask's row waits on it to be
    /// seen late or on time.
    fn emits_nothing(&self) -> bool {
        self.consumer.is_some() && self.partitions.is_empty() && self.discovered.is_none()
    }

    /// A subtask given no partition (more subtasks than partitions) is idle until discovery
    /// gives it one, so the others' watermarks are not held back by it (without discovery it
    /// ends at its first poll); so is one whose every partition still read is idle by
    /// `scan.watermark.idle-timeout` (a subtask reading one partition has no splits to say so),
    /// until a record comes. (Partitions a bounded scan has finished make no subtask idle: it
    /// ends.)
    fn idle_now(&self) -> bool {
        // As of the last poll: every partition idle or finished (`active` is false for both),
        // and one at least idle.
        let timed_out = self.active.len() == self.partitions.len()
            && self.partitions.iter().any(|p| !p.finished())
            && self.active.iter().all(|active| !active);
        self.consumer.is_some() && (self.partitions.is_empty() || timed_out)
    }
}
