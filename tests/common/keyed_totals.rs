//! A pipeline built with the library API whose keyed function keeps state and timers per key:
//! `id` 1..=rows from a checkpointed datagen sequence, keyed by `id % KEYS`, each key's row
//! count and sum written once to a filesystem sink when the input ends.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use weir::connectors::TableDescriptor;
use weir::prelude::{KeyedProcessFunction, Pipeline};
use weir::runtime::checkpoint::{storage, CheckpointConfig, Restore};
use weir::runtime::{Chunk, OperatorContext, RowKind, RuntimeConfig, Timer, Value};

/// The keys the rows are spread over.
pub const KEYS: i64 = 7;

/// Sums each key's rows and writes `[key, rows, sum]` once, when the input ends (an event-time
/// timer at the end of time): state and timers a restore must bring back for the totals to
/// come out right.
#[derive(Clone, Copy)]
pub struct TotalsAtTheEnd;

impl KeyedProcessFunction for TotalsAtTheEnd {
    type State = (i64, i64);

    fn process(
        &mut self,
        key: &[Value],
        _kind: RowKind,
        row: &[Value],
        state: &mut Option<(i64, i64)>,
        ctx: &mut OperatorContext,
        _out: &mut Chunk,
    ) -> weir::runtime::Result<()> {
        if state.is_none() {
            ctx.register_event_time_timer(i64::MAX - 1, key.to_vec());
        }
        let (rows, sum) = state.unwrap_or((0, 0));
        *state = Some((rows + 1, sum + row[1].as_i64().unwrap_or(0)));
        Ok(())
    }

    fn on_timer(
        &mut self,
        timer: &Timer,
        state: &mut Option<(i64, i64)>,
        _ctx: &mut OperatorContext,
        out: &mut Chunk,
    ) -> weir::runtime::Result<()> {
        if let Some((rows, sum)) = state.take() {
            out.push(RowKind::Insert, &[timer.key[0].clone(), Value::BigInt(rows), Value::BigInt(sum)]);
        }
        Ok(())
    }
}

/// The pipeline at `parallelism`, checkpointing every 20 ms into `checkpoints`, started from
/// `restore`, writing into `out`.
pub fn pipeline(out: &Path, checkpoints: &Path, parallelism: usize, restore: Option<Restore>, rows: i64) -> Pipeline {
    let numbers = weir::runtime::parse::parse_schema(&[("id", "BIGINT")]).unwrap();
    let keyed = weir::runtime::parse::parse_schema(&[("k", "BIGINT"), ("id", "BIGINT")]).unwrap();
    let totals = weir::runtime::parse::parse_schema(&[("k", "BIGINT"), ("n", "BIGINT"), ("s", "BIGINT")]).unwrap();
    let end = rows.to_string();
    let source = TableDescriptor::new(
        "numbers",
        numbers,
        &[
            ("connector", "datagen"),
            ("rows-per-second", "30000"),
            ("fields.id.kind", "sequence"),
            ("fields.id.start", "1"),
            ("fields.id.end", end.as_str()),
        ],
    );
    let path = out.display().to_string();
    let sink = TableDescriptor::new(
        "totals",
        totals.clone(),
        &[("connector", "filesystem"), ("path", path.as_str()), ("format", "csv")],
    );
    let checkpointing = CheckpointConfig {
        interval: Some(Duration::from_millis(20)),
        dir: Some(checkpoints.to_path_buf()),
        restore,
        ..CheckpointConfig::default()
    };
    let config =
        RuntimeConfig::default().with_parallelism(parallelism).with_worker_threads(2).with_checkpointing(checkpointing);
    let pipeline = Pipeline::new(config);
    pipeline
        .from_table(&source)
        .unwrap()
        .map("Key", keyed, |row, out| {
            let id = row[0].as_i64().unwrap_or(0);
            out.push(Value::BigInt(id % KEYS));
            out.push(Value::BigInt(id));
        })
        .key_by(&[0])
        .process("TotalsAtTheEnd", totals, TotalsAtTheEnd)
        .to_table(&sink)
        .unwrap();
    pipeline
}

/// The newest checkpoint under `checkpoints`, to restore from; `None` when there is none.
pub fn latest(checkpoints: &Path) -> Option<Restore> {
    let path = storage::latest_checkpoint(checkpoints).unwrap()?;
    Some(Restore { checkpoint: Arc::new(storage::read_checkpoint(&path).unwrap()), ignore_unclaimed_state: false })
}

/// What the visible part files under `out` hold, by key; a key written twice fails the test.
pub fn written(out: &Path) -> BTreeMap<i64, (i64, i64)> {
    let mut written = BTreeMap::new();
    for entry in std::fs::read_dir(out).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        for line in std::fs::read_to_string(entry.path()).unwrap().lines() {
            let fields: Vec<i64> = line.split(',').map(|f| f.parse().unwrap()).collect();
            assert!(written.insert(fields[0], (fields[1], fields[2])).is_none(), "key {} written twice", fields[0]);
        }
    }
    written
}

/// Each key's row count and sum of ids, recomputed.
pub fn expected(rows: i64) -> BTreeMap<i64, (i64, i64)> {
    let mut expected = BTreeMap::new();
    for id in 1..=rows {
        let (n, s) = expected.entry(id % KEYS).or_insert((0, 0));
        *n += 1;
        *s += id;
    }
    expected
}
