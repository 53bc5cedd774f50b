//! The materializer of `INSERT … ON CONFLICT DO ERROR | DO NOTHING` (Flink's FLIP-558).
//!
//! [`WatermarkTimestampAssignerOperator`] runs before the key-by and appends the watermark each
//! row passed at as a last BIGINT column. [`WatermarkCompactingMaterializerOperator`] buffers the
//! rows of each primary key by that timestamp (a `+I`/`+U` and a `-U`/`-D` of the same row
//! cancel out) and, when the watermark passes a timestamp, applies the buffered changes on top
//! of the row it last wrote for the key. One row left: written (`+I`, or `+U` when it differs);
//! none: the key is deleted (`-D`); several distinct rows: a primary key conflict, which fails
//! the job (`DO ERROR`) or keeps the row already written, or the first one (`DO NOTHING`).
//! The keys are keyed value state ([`ValueState`]): a checkpoint holds every key's buffered
//! changes and last written row, a restore keeps the keys the subtask owns.

use std::collections::BTreeMap;

use weir_runtime::checkpoint::codec::{DecodeError, Decoder, Encoder};
use weir_runtime::checkpoint::{StateReader, StateWriter};
use weir_runtime::state::{StateValue, ValueState};
use weir_runtime::{Chunk, Error, Operator, OperatorContext, Output, Result, RowKind, Value};

/// Appends the operator's current watermark to every row; see the module documentation.
#[derive(Debug, Clone, Default)]
pub struct WatermarkTimestampAssignerOperator;

impl Operator for WatermarkTimestampAssignerOperator {
    fn name(&self) -> &str {
        "WatermarkTimestampAssigner"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        let stamp = Value::BigInt(ctx.current_watermark());
        let mut stamped = Chunk::with_capacity(chunk.arity() + 1, chunk.len());
        for (kind, row) in chunk.rows() {
            stamped.push_with(kind, |fields| {
                fields.extend_from_slice(row);
                fields.push(stamp.clone());
            });
        }
        stamped.set_origin_nanos(chunk.origin_nanos());
        out.collect(stamped);
        Ok(())
    }
}

/// What a primary key conflict does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnConflict {
    /// Fail the job.
    Error,
    /// Keep the row already written, or the first one.
    Nothing,
}

/// Buffered changes and the last written row of one primary key.
#[derive(Debug, Clone, Default)]
struct KeyState {
    buffer: BTreeMap<i64, Vec<(RowKind, Box<[Value]>)>>,
    written: Option<Box<[Value]>>,
}

/// The materializer's keyed state: per key, its last written row and buffered changes.
const KEYS: &str = "keys";
/// The section of the materializer's state that holds the width of its rows.
const ARITY: &str = "arity";

impl StateValue for KeyState {
    fn encode(&self, out: &mut Encoder) {
        out.u32(u32::from(self.written.is_some()));
        if let Some(row) = &self.written {
            out.values(row);
        }
        out.u32(self.buffer.len() as u32);
        for (timestamp, records) in &self.buffer {
            out.i64(*timestamp);
            out.u32(records.len() as u32);
            for (kind, row) in records {
                out.u32(u32::from(kind.to_byte()));
                out.values(row);
            }
        }
    }

    fn decode(input: &mut Decoder<'_>) -> std::result::Result<Self, DecodeError> {
        let written = if input.u32()? == 1 { Some(input.values()?) } else { None };
        let mut buffer = BTreeMap::new();
        for _ in 0..input.u32()? {
            let timestamp = input.i64()?;
            let records = (0..input.u32()?)
                .map(|_| Ok((kind_of(input)?, input.values()?)))
                .collect::<std::result::Result<Vec<_>, DecodeError>>()?;
            buffer.insert(timestamp, records);
        }
        Ok(KeyState { buffer, written })
    }
}

/// Reads a row kind [`KeyState::encode`] wrote; another value is a damaged state.
fn kind_of(input: &mut Decoder<'_>) -> std::result::Result<RowKind, DecodeError> {
    let code = input.u32()?;
    match u8::try_from(code).ok().and_then(RowKind::from_byte) {
        Some(kind) => Ok(kind),
        None => input.fail(&format!("a row kind (0 to 3), not {code}")),
    }
}

/// Compacts each key's changes per watermark; see the module documentation.
#[derive(Debug, Clone)]
pub struct WatermarkCompactingMaterializerOperator {
    primary_key: Vec<usize>,
    upsert_key: Option<Vec<usize>>,
    on_conflict: OnConflict,
    keys: ValueState<KeyState>,
    /// Scratch buffer for the primary key of the current row.
    key: Vec<Value>,
    /// Columns of a row without its timestamp, from the first chunk.
    arity: usize,
    name: String,
}

impl WatermarkCompactingMaterializerOperator {
    /// A materializer over rows stamped by [`WatermarkTimestampAssignerOperator`], for the sink's
    /// `primary_key`; rows are matched on the `upsert_key` when there is one, else on all values.
    pub fn new(
        primary_key: Vec<usize>,
        upsert_key: Option<Vec<usize>>,
        on_conflict: OnConflict,
        names: &[String],
    ) -> Self {
        let name = format!("SinkMaterializer(pk=[{}])", names.join(", "));
        WatermarkCompactingMaterializerOperator {
            primary_key,
            upsert_key,
            on_conflict,
            keys: ValueState::new(KEYS, None),
            key: Vec::new(),
            arity: 0,
            name,
        }
    }

    /// Writes the compacted changes of every key buffered up to `watermark`.
    fn compact(&mut self, watermark: i64, out: &mut Output) -> Result<()> {
        let mut emitted = Chunk::with_capacity(self.arity, 0);
        let Self { keys, upsert_key, on_conflict, name, .. } = self;
        let mut failure = None;
        keys.retain(0, |key, state| {
            if failure.is_some() || state.buffer.first_key_value().is_none_or(|(ts, _)| *ts > watermark) {
                return true;
            }
            let later = state.buffer.split_off(&watermark.saturating_add(1));
            let due = std::mem::replace(&mut state.buffer, later);
            let mut rows: Vec<Box<[Value]>> = state.written.iter().cloned().collect();
            for (kind, row) in due.into_values().flatten() {
                let found = rows.iter().position(|r| same_row(upsert_key.as_deref(), r, &row));
                match (kind.is_accumulate(), found) {
                    (true, Some(at)) if upsert_key.is_some() => rows[at] = row,
                    (true, _) => rows.push(row),
                    (false, Some(at)) => {
                        rows.remove(at);
                    }
                    (false, None) => tracing::info!(operator = %name, "retraction of a row never written dropped"),
                }
            }
            match (rows.len(), state.written.take()) {
                (0, Some(previous)) => emitted.push(RowKind::Delete, &previous),
                (0, None) => {}
                (1, previous) => {
                    let row = rows.pop().unwrap_or_default();
                    match previous {
                        None => emitted.push(RowKind::Insert, &row),
                        Some(p) if p != row => emitted.push(RowKind::UpdateAfter, &row),
                        Some(_) => {}
                    }
                    state.written = Some(row);
                }
                (_, previous) if *on_conflict == OnConflict::Error => {
                    let values: Vec<String> = key.iter().map(weir_runtime::print::value_to_string).collect();
                    failure = Some(Error::execution(format!(
                        "Primary key constraint violation: multiple distinct records with the same primary key \
                         detected. Conflicting key: [{}]. Use ON CONFLICT DO NOTHING to keep the first record.",
                        values.join(", ")
                    )));
                    state.written = previous;
                }
                (_, Some(previous)) => state.written = Some(previous),
                (_, None) => {
                    let first = rows.swap_remove(0);
                    emitted.push(RowKind::Insert, &first);
                    state.written = Some(first);
                }
            }
            state.written.is_some() || !state.buffer.is_empty()
        });
        out.collect(emitted);
        failure.map_or(Ok(()), Err)
    }
}

impl Operator for WatermarkCompactingMaterializerOperator {
    fn name(&self) -> &str {
        &self.name
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> Result<()> {
        self.arity = chunk.arity().saturating_sub(1);
        for (kind, stamped) in chunk.rows() {
            let (row, stamp) = stamped.split_at(stamped.len() - 1);
            let timestamp = stamp[0].as_i64().unwrap_or(i64::MIN);
            self.key.clear();
            self.key.extend(self.primary_key.iter().map(|&k| row[k].clone()));
            let Some(state) = self.keys.get_mut_or_insert_with(&self.key, 0, || Some(KeyState::default()))? else {
                continue;
            };
            let records = state.buffer.entry(timestamp).or_default();
            // A change and its opposite on the same row within one timestamp cancel out.
            let opposite = records.iter().position(|(k, r)| k.is_accumulate() != kind.is_accumulate() && **r == *row);
            match opposite {
                Some(at) => {
                    records.remove(at);
                }
                None => records.push((kind, row.into())),
            }
        }
        Ok(())
    }

    fn process_watermark(&mut self, watermark: i64, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.compact(watermark, out)?;
        out.emit_watermark(watermark);
        Ok(())
    }

    fn end_of_input(&mut self, _ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.compact(i64::MAX, out)
    }

    /// Every key's last written row and buffered changes, and the rows' width.
    fn snapshot_state(&mut self, _: u64, _: &mut OperatorContext, state: &mut StateWriter) -> Result<()> {
        state.section(ARITY).u32(self.arity as u32);
        self.keys.snapshot(state, 0);
        Ok(())
    }

    /// Keeps the keys this subtask owns now (its input is hashed on the primary key).
    fn restore_state(&mut self, ctx: &mut OperatorContext, states: &[StateReader]) -> Result<()> {
        for state in states {
            let Some(mut input) = state.section(ARITY) else { continue };
            let arity =
                input.u32().map_err(|e| Error::Restore(format!("the state of {} is malformed: {e}", self.name)))?;
            self.arity = self.arity.max(arity as usize);
        }
        self.keys.restore(states, ctx.subtask())
    }
}

/// Whether `a` and `b` are the same row: equal on the `upsert_key` when there is one, else on
/// all values.
fn same_row(upsert_key: Option<&[usize]>, a: &[Value], b: &[Value]) -> bool {
    match upsert_key {
        Some(key) => key.iter().all(|&k| a[k] == b[k]),
        None => a == b,
    }
}

/// The layout of this operator's state; bumped when the bytes it writes change.
const STATE_VERSION: u32 = 1;

impl crate::signature::StatefulSpec for WatermarkCompactingMaterializerOperator {
    /// The row arity; per primary key, the rows waiting for the watermark and the row emitted.
    fn state_signature(&self, inputs: &[&[weir_runtime::DataType]]) -> crate::signature::StateSignature {
        use crate::signature::{column_types, row_types, StateKind, StateSignature};
        let input = inputs.first().copied().unwrap_or_default();
        StateSignature::new("WatermarkCompactingSinkMaterializer", STATE_VERSION)
            .state(ARITY, StateKind::Raw, Vec::new(), vec!["INT (arity)".to_string()])
            .state(KEYS, StateKind::Value, column_types(input, &self.primary_key), row_types(input))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;
    use weir_runtime::harness::OperatorHarness;

    fn materializer(on_conflict: OnConflict) -> OperatorHarness {
        OperatorHarness::new(WatermarkCompactingMaterializerOperator::new(vec![0], None, on_conflict, &["k".into()]))
    }

    const HEADER: &str = "op | k INT | v STRING | ts BIGINT\n";

    #[test]
    fn an_update_within_one_watermark_is_no_conflict() {
        let mut h = materializer(OnConflict::Error);
        h.push(&format!("{HEADER}+I | 1 | a | 0\n-U | 1 | a | 0\n+U | 1 | b | 0\n+I | 2 | x | 0")).unwrap();
        assert!(h.take_lines().is_empty(), "nothing leaves before the watermark");
        h.watermark(0).unwrap();
        let mut lines = h.take_lines();
        assert_eq!(lines.pop().as_deref(), Some("watermark 0"));
        lines.sort();
        assert_eq!(lines, ["+I[1, b]", "+I[2, x]"]);
        // Later changes are written against what was written: an update, then a delete.
        h.push(&format!("{HEADER}-U | 1 | b | 5\n+U | 1 | c | 5\n-D | 2 | x | 5")).unwrap();
        h.end_input().unwrap();
        let mut lines = h.take_lines();
        lines.sort();
        assert_eq!(lines, ["+U[1, c]", "-D[2, x]"]);
    }

    #[test]
    fn two_rows_on_one_key_fail_or_keep_the_first() {
        let rows = format!("{HEADER}+I | 1 | a | 0\n+I | 1 | b | 0");
        let mut h = materializer(OnConflict::Error);
        h.push(&rows).unwrap();
        let error = h.watermark(0).unwrap_err().to_string();
        assert!(
            error.contains(
                "Primary key constraint violation: multiple distinct records with the same primary key detected. \
                 Conflicting key: [1]. Use ON CONFLICT DO NOTHING to keep the first record."
            ),
            "{error}"
        );
        let mut h = materializer(OnConflict::Nothing);
        h.push(&rows).unwrap();
        h.push(&format!("{HEADER}+I | 1 | c | 3")).unwrap();
        h.end_input().unwrap();
        assert_eq!(h.take_lines(), ["+I[1, a]"], "the first row stays; later ones conflict with it");
    }

    /// Materializers checkpointed and restored at random points, at random parallelisms (keys
    /// split by key group), write what one uninterrupted materializer writes.
    #[test]
    fn restored_materializers_go_on_as_if_never_stopped() {
        use weir_runtime::partition::{hash_key, subtask_for_hash};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(8);
        let owner = |k: i64, p: usize| subtask_for_hash(hash_key(&[Value::Int(k as i32)], &[0]), p);
        let build = |i, p| {
            let op = WatermarkCompactingMaterializerOperator::new(vec![0], None, OnConflict::Nothing, &["k".into()]);
            OperatorHarness::with_subtask(Box::new(op), i, p)
        };
        for round in 0..30 {
            let mut whole = build(0, 1);
            let mut parts = vec![build(0, 1)];
            let (mut expected, mut actual) = (Vec::new(), Vec::new());
            let mut live: Vec<(i64, i64)> = Vec::new();
            for step in 0..60i64 {
                let (kind, k, v) = if !live.is_empty() && rng.random_bool(0.4) {
                    let (k, v) = live.remove(rng.random_range(0..live.len()));
                    ("-D", k, v)
                } else {
                    let (k, v) = (rng.random_range(0..6), rng.random_range(0..3));
                    live.push((k, v));
                    ("+I", k, v)
                };
                let fixture = format!("{HEADER}{kind} | {k} | {v} | {}", step / 10);
                whole.push(&fixture).unwrap();
                let p = parts.len();
                parts[owner(k, p)].push(&fixture).unwrap();
                if step % 10 == 9 {
                    whole.watermark(step / 10).unwrap();
                    parts.iter_mut().for_each(|h| h.watermark(step / 10).unwrap());
                }
                if step % 7 == 6 {
                    let p = rng.random_range(1..5);
                    OperatorHarness::rescale(&mut parts, step as u64, p, build, &mut actual).unwrap();
                }
            }
            whole.end_input().unwrap();
            parts.iter_mut().for_each(|h| h.end_input().unwrap());
            expected.extend(whole.take_lines());
            parts.iter_mut().for_each(|h| actual.extend(h.take_lines()));
            let rows = |lines: &[String]| {
                let changes: Vec<&String> = lines.iter().filter(|l| !l.starts_with("watermark")).collect();
                weir_runtime::fixture::materialize_changelog(changes).unwrap()
            };
            assert_eq!(rows(&actual), rows(&expected), "round {round}");
        }
    }

    /// With one compaction at the end, each key ends as its alive rows say, recomputed from scratch.
    #[test]
    fn matches_a_recomputation_from_scratch_on_random_changelogs() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(21);
        for round in 0..40 {
            let mut live: Vec<(i64, i64)> = Vec::new();
            let mut input = String::from(HEADER);
            let mut alive: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
            for _ in 0..rng.random_range(1..30) {
                if !live.is_empty() && rng.random_bool(0.4) {
                    let (k, v) = live.remove(rng.random_range(0..live.len()));
                    input.push_str(&format!("-D | {k} | {v} | 0\n"));
                    let rows = alive.entry(k).or_default();
                    if let Some(at) = rows.iter().position(|&r| r == v) {
                        rows.remove(at);
                    }
                } else {
                    let (k, v) = (rng.random_range(0..4), rng.random_range(0..3));
                    live.push((k, v));
                    input.push_str(&format!("+I | {k} | {v} | 0\n"));
                    alive.entry(k).or_default().push(v);
                }
            }
            let conflict = alive.values().any(|rows| rows.len() > 1);
            let mut h = materializer(OnConflict::Error);
            h.push(input.trim_end()).unwrap();
            assert_eq!(h.end_input().is_err(), conflict, "round {round}: {input}");
            let mut h = materializer(OnConflict::Nothing);
            h.push(input.trim_end()).unwrap();
            h.end_input().unwrap();
            let mut got = h.take_lines();
            got.sort();
            let mut expected: Vec<String> =
                alive.iter().filter_map(|(k, rows)| rows.first().map(|v| format!("+I[{k}, {v}]"))).collect();
            expected.sort();
            assert_eq!(got, expected, "round {round}: {input}");
        }
    }
}
