//! When a filesystem sink closes its part files and when it declares a partition complete, as
//! Flink's streaming file sink does.
//!
//! **Rolling** (`sink.rolling-policy.*`): a part file is closed, and the next rows of its
//! partition go into a new one, once it holds more than `file-size` bytes, once it has been open
//! `rollover-interval`, or once nothing was written to it for `inactivity-interval`; the time
//! limits are checked every `check-interval`. A checkpoint closes every open file too.
//!
//! **Partition commit** (`sink.partition-commit.*`, for a partitioned table with
//! `sink.partition-commit.policy.kind`): every sink subtask reports, each time a checkpoint
//! completes (and once when its input has ended), the partitions it wrote since its last report
//! and its watermark. Once every subtask has reported a checkpoint, the [`PartitionCommitter`] of
//! the sink commits the partitions its trigger lets through: with `process-time`, those written
//! at least `delay` ago (all of them when the delay is 0); with `partition-time`, those whose time
//! (read from the partition values by `partition.time-extractor.*`) plus `delay` the slowest
//! subtask's watermark has passed. When every subtask's input has ended, every partition is
//! committed. Committing a partition runs its policies: `success-file` writes an empty file
//! (`_SUCCESS`) into the partition's directory; `metastore` is refused, as Flink refuses it
//! for a filesystem table.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use weir_runtime::time_zone::TimeZone;

use crate::error::{Error, Result};
use crate::options::{invalid, TableOptions};

use super::partition::{partition_spec, Partitioning};

/// When part files are closed (`sink.rolling-policy.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RollingPolicy {
    /// `file-size`: a file holding more bytes is closed before the next row.
    pub(crate) file_size: u64,
    /// `rollover-interval`: the longest a file stays open, in milliseconds.
    pub(crate) rollover_ms: i64,
    /// `inactivity-interval`: a file nothing was written to for this long is closed.
    pub(crate) inactivity_ms: i64,
    /// `check-interval`: how often the time limits are checked.
    pub(crate) check_ms: i64,
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl Default for RollingPolicy {
    /// Flink's defaults: 128 MB, 30 min, 30 min, checked every minute.
    fn default() -> Self {
        RollingPolicy { file_size: 128 << 20, rollover_ms: 1_800_000, inactivity_ms: 1_800_000, check_ms: 60_000 }
    }
}

impl RollingPolicy {
    /// Reads `sink.rolling-policy.*`, with Flink's defaults ([`RollingPolicy::default`]).
    ///
    /// # Errors
    /// A size or duration that does not read as one.
    pub(crate) fn read(options: &mut TableOptions) -> Result<Self> {
        let defaults = RollingPolicy::default();
        let key = "sink.rolling-policy.file-size";
        let file_size = match options.optional(key) {
            None => defaults.file_size,
            Some(v) => weir_runtime::settings::memory_size(v)
                .ok_or_else(|| invalid(key, v, "a memory size such as '128mb'"))?,
        };
        let mut duration = |key: &str, default: i64| -> Result<i64> {
            Ok(options.duration(&format!("sink.rolling-policy.{key}"))?.map_or(default, millis))
        };
        Ok(RollingPolicy {
            file_size,
            rollover_ms: duration("rollover-interval", defaults.rollover_ms)?,
            inactivity_ms: duration("inactivity-interval", defaults.inactivity_ms)?,
            check_ms: duration("check-interval", defaults.check_ms)?.max(1),
        })
    }
}

/// What decides that a partition is complete (`sink.partition-commit.trigger`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Trigger {
    /// `process-time`: `delay` after the partition was first written (at once when 0).
    ProcessTime,
    /// `partition-time`: once the watermark passes the partition's time plus `delay`.
    PartitionTime { extractor: TimeExtractor, watermark_zone: TimeZone },
}

/// How a partition's time is read from its values (`partition.time-extractor.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct TimeExtractor {
    /// `timestamp-pattern`: `$dt $hm:00`; without one, the first partition value.
    pattern: Option<String>,
    /// `timestamp-formatter`: a `yyyy`/`MM`/`dd`/`HH`/`mm`/`ss` pattern; without one,
    /// `yyyy-MM-dd[ HH:mm:ss[.fraction]]`.
    formatter: Option<Vec<FormatterPart>>,
}

/// A piece of a `timestamp-formatter` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FormatterPart {
    Literal(char),
    /// A field and its width in digits.
    Field(char, usize),
}

impl TimeExtractor {
    fn read(options: &mut TableOptions) -> Result<Self> {
        let kind = options.one_of("partition.time-extractor.kind", &["default", "custom"], "default")?;
        if kind == "custom" {
            return Err(Error::Validation(
                "'partition.time-extractor.kind' = 'custom' names a Java class (partition.time-extractor.class), \
                 which weir cannot load (not supported by weir: custom partition time extractors)."
                    .into(),
            ));
        }
        options.optional("partition.time-extractor.class");
        let pattern = options.optional("partition.time-extractor.timestamp-pattern").map(str::to_string);
        let key = "partition.time-extractor.timestamp-formatter";
        let formatter = match options.optional(key) {
            None => None,
            Some(text) => Some(formatter_parts(text).ok_or_else(|| {
                invalid(key, text, "a pattern of the letters yyyy, MM, dd, HH, mm, ss and literal characters")
            })?),
        };
        Ok(TimeExtractor { pattern, formatter })
    }

    /// The time of the partition with `spec` (keys and values), as epoch milliseconds of a
    /// local date-time; `None` when its text does not read as one.
    fn extract(&self, keys: &[String], spec: &[(String, String)]) -> Option<i64> {
        let value = |key: &str| spec.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        let text = match &self.pattern {
            None => value(keys.first()?)?.to_string(),
            Some(pattern) => {
                let mut text = pattern.clone();
                for key in keys {
                    if let Some(v) = value(key) {
                        text = text.replace(&format!("${key}"), v);
                    }
                }
                text
            }
        };
        match &self.formatter {
            None => weir_runtime::parse::parse_timestamp(text.trim()).map(|t| t.millis),
            Some(parts) => parse_with(parts, &text),
        }
    }
}

/// The pieces of a Java date-time pattern made of `yyyy`, `MM`, `dd`, `HH`, `mm`, `ss` and
/// literals (quoted or not); `None` for other letters.
fn formatter_parts(pattern: &str) -> Option<Vec<FormatterPart>> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let run = chars[i..].iter().take_while(|&&d| d == c).count();
        match c {
            'y' | 'M' | 'd' | 'H' | 'm' | 's' => parts.push(FormatterPart::Field(c, run)),
            '\'' => {
                let end = chars[i + 1..].iter().position(|&d| d == '\'')? + i + 1;
                parts.extend(chars[i + 1..end].iter().map(|&d| FormatterPart::Literal(d)));
                i = end + 1;
                continue;
            }
            c if c.is_ascii_alphabetic() => return None,
            c => parts.extend(std::iter::repeat_n(FormatterPart::Literal(c), run)),
        }
        i += run;
    }
    Some(parts)
}

/// Reads `text` with `parts`; a pattern without a time of day gives midnight.
fn parse_with(parts: &[FormatterPart], text: &str) -> Option<i64> {
    let mut fields = [1970i64, 1, 1, 0, 0, 0];
    let mut rest = text;
    for part in parts {
        match part {
            FormatterPart::Literal(c) => rest = rest.strip_prefix(*c)?,
            FormatterPart::Field(letter, width) => {
                let digits = rest.bytes().take(*width).take_while(u8::is_ascii_digit).count();
                if digits != *width {
                    return None;
                }
                let n: i64 = rest[..digits].parse().ok()?;
                rest = &rest[digits..];
                let slot = "yMdHms".find(*letter)?;
                fields[slot] = n;
            }
        }
    }
    if !rest.is_empty() {
        return None;
    }
    let [y, mo, d, h, mi, s] = fields;
    let date = format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}");
    weir_runtime::parse::parse_timestamp(&date).map(|t| t.millis)
}

/// A partitioned sink's commit rules (`sink.partition-commit.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommitPolicy {
    trigger: Trigger,
    /// `delay`, in milliseconds.
    delay_ms: i64,
    /// The success file's name with `success-file` among the policies.
    success_file: Option<String>,
}

impl CommitPolicy {
    /// Reads `sink.partition-commit.*` and `partition.time-extractor.*`: `None` when the table
    /// has no partitions or no `sink.partition-commit.policy.kind` (Flink then commits no
    /// partition either).
    ///
    /// # Errors
    /// A trigger, policy or extractor weir does not have, with the accepted values.
    pub(crate) fn read(options: &mut TableOptions, partitioned: bool) -> Result<Option<Self>> {
        let trigger =
            options.one_of("sink.partition-commit.trigger", &["process-time", "partition-time"], "process-time")?;
        let delay_ms = millis(options.duration("sink.partition-commit.delay")?.unwrap_or_default());
        let zone_key = "sink.partition-commit.watermark-time-zone";
        let zone_text = options.optional(zone_key).unwrap_or("UTC").to_string();
        let watermark_zone = TimeZone::parse(&zone_text)
            .ok_or_else(|| invalid(zone_key, &zone_text, "a time zone such as 'UTC' or 'Asia/Shanghai'"))?;
        let extractor = TimeExtractor::read(options)?;
        let success_name =
            options.optional("sink.partition-commit.success-file.name").unwrap_or("_SUCCESS").to_string();
        options.optional("sink.partition-commit.policy.class");
        let Some(kinds) = options.optional("sink.partition-commit.policy.kind").map(str::to_string) else {
            return Ok(None);
        };
        let mut success_file = None;
        for kind in kinds.split(',').map(str::trim) {
            match kind.to_ascii_lowercase().as_str() {
                "success-file" => success_file = Some(success_name.clone()),
                "metastore" => {
                    return Err(Error::Validation(
                        "Can not configure a 'metastore' partition commit policy for a file system table. You can \
                         only configure 'metastore' partition commit policy for a hive table."
                            .into(),
                    ))
                }
                "custom" => {
                    return Err(Error::Validation(
                        "'sink.partition-commit.policy.kind' = 'custom' names a Java class \
                         (sink.partition-commit.policy.class), which weir cannot load (not supported by weir: \
                         custom partition commit policies)."
                            .into(),
                    ))
                }
                _ => {
                    return Err(invalid(
                        "sink.partition-commit.policy.kind",
                        &kinds,
                        "a comma-separated list of 'metastore', 'success-file' and 'custom'",
                    ))
                }
            }
        }
        if !partitioned {
            return Ok(None);
        }
        let trigger = match trigger {
            "partition-time" => Trigger::PartitionTime { extractor, watermark_zone },
            _ => Trigger::ProcessTime,
        };
        Ok(Some(CommitPolicy { trigger, delay_ms, success_file }))
    }
}

/// One sink subtask's last report.
#[derive(Debug, Clone, Copy)]
struct Report {
    checkpoint: u64,
    watermark: i64,
    ended: bool,
}

/// Commits the partitions of one sink, shared by its subtasks (see the module docs).
#[derive(Debug)]
pub(crate) struct PartitionCommitter {
    policy: CommitPolicy,
    root: PathBuf,
    keys: Vec<String>,
    /// The last report of each subtask.
    reports: Vec<Option<Report>>,
    /// The checkpoint every subtask has reported, when the partitions were last looked at.
    done: Option<u64>,
    /// Partitions reported and not committed, with when they were first reported.
    pending: BTreeMap<String, i64>,
}

impl PartitionCommitter {
    /// The committer of a sink of `parallelism` subtasks writing partitions of `partitioning`
    /// below `root`.
    pub(crate) fn new(policy: CommitPolicy, root: PathBuf, partitioning: &Partitioning, parallelism: usize) -> Self {
        PartitionCommitter {
            policy,
            root,
            keys: partitioning.key_names(),
            reports: vec![None; parallelism.max(1)],
            done: None,
            pending: BTreeMap::new(),
        }
    }

    /// Whether `partition` was reported and is not committed yet.
    pub(crate) fn is_pending(&self, partition: &str) -> bool {
        self.pending.contains_key(partition)
    }

    /// Subtask `subtask` has committed its files up to `checkpoint` (`u64::MAX`: its input has
    /// ended, without checkpoints), with `watermark` at that checkpoint, and wrote `partitions`
    /// since its last report; commits what is due once every subtask has reported.
    ///
    /// # Errors
    /// A success file that cannot be written.
    pub(crate) fn report(
        &mut self,
        subtask: usize,
        checkpoint: u64,
        watermark: i64,
        ended: bool,
        partitions: impl IntoIterator<Item = String>,
        now: i64,
    ) -> Result<()> {
        for partition in partitions {
            self.pending.entry(partition).or_insert(now);
        }
        if let Some(slot) = self.reports.get_mut(subtask) {
            *slot = Some(Report { checkpoint, watermark, ended });
        }
        let Some(reports) = self.reports.iter().copied().collect::<Option<Vec<Report>>>() else { return Ok(()) };
        let done = reports.iter().map(|r| r.checkpoint).min().unwrap_or(0);
        if self.done.is_some_and(|d| d >= done) {
            return Ok(());
        }
        self.done = Some(done);
        let due: Vec<String> = if reports.iter().all(|r| r.ended) {
            self.pending.keys().cloned().collect()
        } else {
            let watermark = reports.iter().map(|r| r.watermark).min().unwrap_or(i64::MIN);
            self.pending
                .iter()
                .filter(|(p, created)| self.is_due(p, **created, watermark, now))
                .map(|(p, _)| p.clone())
                .collect()
        };
        for partition in due {
            self.commit(&partition)?;
            self.pending.remove(&partition);
        }
        Ok(())
    }

    fn is_due(&self, partition: &str, created: i64, watermark: i64, now: i64) -> bool {
        let delay = self.policy.delay_ms;
        match &self.policy.trigger {
            Trigger::ProcessTime => delay == 0 || now > created.saturating_add(delay),
            Trigger::PartitionTime { extractor, watermark_zone } => {
                let spec = partition_spec(std::path::Path::new(partition));
                match extractor.extract(&self.keys, &spec) {
                    Some(local) => watermark > watermark_zone.to_utc(local).saturating_add(delay),
                    None => {
                        tracing::warn!(
                            partition,
                            "the partition's time does not read as a timestamp; it is committed when the input ends"
                        );
                        false
                    }
                }
            }
        }
    }

    /// Runs the policies on `partition`.
    fn commit(&self, partition: &str) -> Result<()> {
        let dir = self.root.join(partition);
        tracing::info!(partition, table_path = %self.root.display(), "partition committed");
        if let Some(name) = &self.policy.success_file {
            let path = dir.join(name);
            std::fs::create_dir_all(&dir)
                .and_then(|()| std::fs::File::create(&path).map(drop))
                .map_err(|source| Error::Io { path: path.display().to_string(), source })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::TableDescriptor;
    use weir_runtime::Value;

    fn options(pairs: &[(&str, &str)]) -> TableOptions {
        TableOptions::new(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    fn partitioning() -> Partitioning {
        let schema = weir_runtime::parse::parse_schema(&[("a", "BIGINT"), ("dt", "STRING"), ("hm", "STRING")]).unwrap();
        let mut table = TableDescriptor::new("t", schema, &[]);
        table.partition_keys = vec!["dt".into(), "hm".into()];
        Partitioning::of(&table, &mut options(&[])).unwrap().unwrap()
    }

    fn millis_of(text: &str) -> i64 {
        weir_runtime::parse::parse_timestamp(text).unwrap().millis
    }

    #[test]
    fn the_partition_time_is_read_with_the_pattern_and_formatter() {
        let keys = vec!["dt".to_string(), "hm".to_string()];
        let dir = partitioning().directory(&[Value::string("2026-01-05"), Value::string("09:07")]);
        let spec = partition_spec(std::path::Path::new(&dir));
        let q10 = TimeExtractor { pattern: Some("$dt $hm:00".into()), formatter: None };
        assert_eq!(q10.extract(&keys, &spec), Some(millis_of("2026-01-05 09:07:00")));
        let first = TimeExtractor { pattern: None, formatter: None };
        assert_eq!(first.extract(&keys, &spec), Some(millis_of("2026-01-05")));
        let compact =
            TimeExtractor { pattern: Some("$dt".into()), formatter: Some(formatter_parts("yyyyMMdd").unwrap()) };
        let spec = vec![("dt".to_string(), "20260105".to_string())];
        assert_eq!(compact.extract(&keys, &spec), Some(millis_of("2026-01-05")));
        assert!(formatter_parts("yyyy-MM-dd'T'HH").unwrap().contains(&FormatterPart::Literal('T')));
        assert!(formatter_parts("yyyy-MM-ddTHH").is_none(), "an unquoted letter is a field Java would refuse");
        assert!(formatter_parts("yyyy-MM-dd EEE").is_none());
    }

    #[test]
    fn partitions_commit_when_every_subtask_passed_their_time() {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = options(&[
            ("sink.partition-commit.trigger", "partition-time"),
            ("sink.partition-commit.delay", "1 min"),
            ("sink.partition-commit.policy.kind", "success-file"),
            ("partition.time-extractor.timestamp-pattern", "$dt $hm:00"),
        ]);
        let policy = CommitPolicy::read(&mut opts, true).unwrap().unwrap();
        let p = partitioning();
        let mut committer = PartitionCommitter::new(policy, dir.path().to_path_buf(), &p, 2);
        let part = p.directory(&[Value::string("2026-01-05"), Value::string("09:00")]);
        let success = dir.path().join(&part).join("_SUCCESS");
        let after = |minutes: i64| millis_of("2026-01-05 09:00:00") + minutes * 60_000;
        committer.report(0, 1, after(5), false, [part.clone()], 0).unwrap();
        assert!(!success.exists(), "subtask 1 has not reported");
        committer.report(1, 1, after(1), false, [], 0).unwrap();
        assert!(!success.exists(), "subtask 1's watermark is not past the time plus the delay");
        committer.report(0, 2, after(6), false, [], 0).unwrap();
        committer.report(1, 2, after(1) + 1, false, [], 0).unwrap();
        assert!(success.exists());
        assert!(!committer.is_pending(&part));
    }

    #[test]
    fn every_partition_commits_when_every_input_has_ended() {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = options(&[
            ("sink.partition-commit.trigger", "process-time"),
            ("sink.partition-commit.delay", "1 h"),
            ("sink.partition-commit.policy.kind", "success-file"),
            ("sink.partition-commit.success-file.name", "_DONE"),
        ]);
        let policy = CommitPolicy::read(&mut opts, true).unwrap().unwrap();
        let p = partitioning();
        let mut committer = PartitionCommitter::new(policy, dir.path().to_path_buf(), &p, 1);
        let part = p.directory(&[Value::string("d"), Value::Null]);
        committer.report(0, 3, 0, false, [part.clone()], 0).unwrap();
        assert!(committer.is_pending(&part));
        committer.report(0, u64::MAX, i64::MAX, true, [], 1).unwrap();
        assert!(dir.path().join(&part).join("_DONE").exists());
    }

    #[test]
    fn flink_refusals_and_unknown_values() {
        let err = CommitPolicy::read(&mut options(&[("sink.partition-commit.policy.kind", "metastore")]), true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("for a hive table"), "{err}");
        let err = CommitPolicy::read(&mut options(&[("sink.partition-commit.trigger", "event-time")]), true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("'process-time', 'partition-time'"), "{err}");
        assert_eq!(CommitPolicy::read(&mut options(&[]), true).unwrap(), None);
        assert_eq!(
            RollingPolicy::read(&mut options(&[("sink.rolling-policy.file-size", "1kb")])).unwrap().file_size,
            1024
        );
    }
}
