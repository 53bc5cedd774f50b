//! Deduplication against a from-scratch recomputation: random rows over a few keys with random
//! rowtimes, for first and last row on processing and event time, with and without mini-batch
//! (flush markers at random) and compaction; after every step the materialized output equals the
//! first or last row of each key, and it still does across restores at random parallelisms.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use weir_runtime::fixture::materialize_changelog;
use weir_runtime::harness::OperatorHarness;
use weir_runtime::partition::{hash_key, subtask_for_hash};
use weir_runtime::{Chunk, Operator, RowKind, SubtaskInfo, Value};

use super::*;
use crate::aggregate::bundle::BundleTrigger;
use crate::spec::OperatorSpec;

/// A row: `[k INT, ts TIMESTAMP(3), id INT]`.
type Row = (i32, i64, i32);

/// A deduplication; `mini_batch`: its bundles flush on markers and, with a size, at that many rows.
fn spec(keep_last: bool, rowtime: bool, mini_batch: Option<Option<usize>>, compact_changes: bool) -> DeduplicateSpec {
    DeduplicateSpec {
        key: vec![0],
        keep_last,
        rowtime: rowtime.then_some(1),
        input_arity: 3,
        output_insert_only: false,
        update_before: true,
        mini_batch: mini_batch.map(|size| BundleTrigger { size, memory_budget: usize::MAX }),
        compact_changes,
        state_ttl: None,
    }
}

fn values(row: &Row) -> [Value; 3] {
    [Value::Int(row.0), Value::Timestamp(weir_runtime::value::Timestamp::from_millis(row.1)), Value::Int(row.2)]
}

/// The row each key keeps: first or last by arrival, or by rowtime (earliest, the first of equal
/// times; latest, the last of equal times).
fn from_scratch(spec: &DeduplicateSpec, rows: &[Row]) -> BTreeMap<String, i64> {
    let mut kept: BTreeMap<i32, Row> = BTreeMap::new();
    for row in rows {
        let replace = match kept.get(&row.0) {
            None => true,
            Some(_) if spec.rowtime.is_none() => spec.keep_last,
            Some(old) if spec.keep_last => row.1 >= old.1,
            Some(old) => row.1 < old.1,
        };
        if replace {
            kept.insert(row.0, *row);
        }
    }
    kept.values().map(|r| (text(r), 1)).collect()
}

fn text(row: &Row) -> String {
    let mut chunk = Chunk::with_capacity(3, 1);
    chunk.push(RowKind::Insert, &values(row));
    chunk.to_lines().remove(0)[2..].to_string()
}

/// The changes among `lines` (not watermarks or flush markers).
fn changes(lines: Vec<String>) -> Vec<String> {
    lines.into_iter().filter(|l| l.starts_with('+') || l.starts_with('-')).collect()
}

fn random_row(rng: &mut rand::rngs::SmallRng, id: &mut i32) -> Row {
    *id += 1;
    (rng.random_range(0..4), rng.random_range(0..8) * 1000, *id)
}

#[test]
fn every_mode_keeps_the_first_or_last_row_of_each_key() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
    for round in 0..320 {
        let (keep_last, rowtime, mini_batch, compact) = (round % 2 == 0, round % 4 < 2, round % 8 < 4, round % 16 < 8);
        // Mini-batch bundles flush on markers only, or also at three rows.
        let size = (round % 32 < 16).then_some(3);
        let spec = spec(keep_last, rowtime, mini_batch.then_some(size), compact);
        let mut h = OperatorHarness::new(spec.build(&SubtaskInfo::new("d", 0, 1)));
        let (mut rows, mut log, mut id) = (Vec::new(), Vec::new(), 0);
        for step in 0..rng.random_range(1..40) {
            let row = random_row(&mut rng, &mut id);
            rows.push(row);
            let mut chunk = Chunk::with_capacity(3, 1);
            chunk.push(RowKind::Insert, &values(&row));
            h.push_chunk(0, chunk).unwrap();
            if !mini_batch || rng.random_bool(0.3) {
                h.flush_marker(step).unwrap();
                log.extend(changes(h.take_lines()));
                let table = materialize_changelog(&log).unwrap();
                assert_eq!(table, from_scratch(&spec, &rows), "round {round} ({spec:?}), step {step}");
            }
        }
    }
}

/// Keeping the first row of insert-only input by rowtime emits inserts only: a key's row with
/// the earliest rowtime goes out once the watermark passes it; later rows of the key are dropped.
#[test]
fn the_insert_only_first_row_waits_for_the_watermark() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(13);
    for round in 0..100 {
        let spec = DeduplicateSpec { output_insert_only: true, ..spec(false, true, None, false) };
        let mut h = OperatorHarness::new(spec.build(&SubtaskInfo::new("d", 0, 1)));
        let (mut rows, mut id, mut watermark) = (Vec::new(), 0, i64::MIN);
        let mut emitted: BTreeMap<i32, Row> = BTreeMap::new();
        for _ in 0..rng.random_range(1..40) {
            let row = random_row(&mut rng, &mut id);
            rows.push(row);
            let mut chunk = Chunk::with_capacity(3, 1);
            chunk.push(RowKind::Insert, &values(&row));
            h.push_chunk(0, chunk).unwrap();
            if rng.random_bool(0.2) {
                watermark = watermark.max(rng.random_range(0..8) * 1000);
                h.watermark(watermark).unwrap();
            }
            for line in changes(h.take_lines()) {
                assert!(line.starts_with("+I"), "round {round}: {line} is no insert");
                let found = rows.iter().find(|r| text(r) == line[2..]).copied().expect("an input row");
                assert!(emitted.insert(found.0, found).is_none(), "round {round}: key {} emitted twice", found.0);
                assert!(found.1 <= watermark, "round {round}: {line} went out before the watermark passed it");
                // The earliest of the key's rows that came before it went out.
                let earliest = rows.iter().filter(|r| r.0 == found.0).map(|r| r.1).min();
                assert_eq!(Some(found.1), earliest, "round {round}: {line} is not its key's earliest row");
            }
        }
        h.watermark(i64::MAX).unwrap();
        changes(h.take_lines()).iter().for_each(|line| {
            let found = rows.iter().find(|r| text(r) == line[2..]).copied().expect("an input row");
            assert!(emitted.insert(found.0, found).is_none(), "round {round}: key {} emitted twice", found.0);
        });
        let keys: std::collections::BTreeSet<i32> = rows.iter().map(|r| r.0).collect();
        assert_eq!(emitted.keys().copied().collect::<std::collections::BTreeSet<_>>(), keys, "round {round}");
    }
}

#[test]
fn a_restored_deduplication_goes_on_as_if_never_stopped() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(17);
    let owner = |row: &Row, p: usize| subtask_for_hash(hash_key(&values(row), &[0]), p);
    for round in 0..80 {
        let spec = spec(round % 2 == 0, round % 4 < 2, None, false);
        let build = |i, p| {
            OperatorHarness::with_subtask(Box::new(spec.build(&SubtaskInfo::new("d", i, p))) as Box<dyn Operator>, i, p)
        };
        let mut parts = vec![build(0, 1)];
        let (mut rows, mut lines, mut id) = (Vec::new(), Vec::new(), 0);
        for step in 0..rng.random_range(1..50) {
            let row = random_row(&mut rng, &mut id);
            rows.push(row);
            let p = parts.len();
            for (i, part) in parts.iter_mut().enumerate() {
                let mut chunk = Chunk::with_capacity(3, 1);
                if owner(&row, p) == i {
                    chunk.push(RowKind::Insert, &values(&row));
                }
                part.push_chunk(0, chunk).unwrap();
            }
            if step % 7 == 6 {
                let p = rng.random_range(1..5);
                OperatorHarness::rescale(&mut parts, step as u64, p, build, &mut lines).unwrap();
            }
        }
        parts.iter_mut().for_each(|h| lines.extend(h.take_lines()));
        let table = materialize_changelog(changes(lines)).unwrap();
        assert_eq!(table, from_scratch(&spec, &rows), "round {round}");
    }
}

/// Over updating input, retracting the kept row deletes it.
#[test]
fn retracting_the_kept_row_deletes_it() {
    let spec = spec(true, false, None, false);
    let mut h = OperatorHarness::new(spec.build(&SubtaskInfo::new("d", 0, 1)));
    h.push("op | k INT | ts TIMESTAMP(3) | id INT\n+I | 1 | 2024-01-01 00:00:00 | 1\n+I | 1 | 2024-01-01 00:00:01 | 2\n-D | 1 | 2024-01-01 00:00:01 | 2").unwrap();
    assert_eq!(
        h.take_lines(),
        [
            "+I[1, 2024-01-01T00:00, 1]",
            "-U[1, 2024-01-01T00:00, 1]",
            "+U[1, 2024-01-01T00:00:01, 2]",
            "-D[1, 2024-01-01T00:00:01, 2]"
        ]
    );
}

/// Last row over an updating input (processing time): a key keeps its last inserted row; a
/// retraction of that row deletes it (the key has no row until the next insert); a retraction of
/// any other row changes nothing. Checked against that rule after every random change.
#[test]
fn the_last_row_follows_an_updating_input() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(29);
    for round in 0..200 {
        let spec = spec(true, false, (round % 2 == 0).then_some(None), false);
        let mut h = OperatorHarness::new(spec.build(&SubtaskInfo::new("d", 0, 1)));
        let (mut held, mut kept, mut log, mut id) = (Vec::<Row>::new(), BTreeMap::<i32, Row>::new(), Vec::new(), 0);
        for step in 0..rng.random_range(1..40) {
            let retract = !held.is_empty() && rng.random_bool(0.4);
            let (kind, row) = if retract {
                let row = held.remove(rng.random_range(0..held.len()));
                if kept.get(&row.0) == Some(&row) {
                    kept.remove(&row.0);
                }
                (if rng.random_bool(0.5) { RowKind::Delete } else { RowKind::UpdateBefore }, row)
            } else {
                let row = random_row(&mut rng, &mut id);
                held.push(row);
                kept.insert(row.0, row);
                (RowKind::Insert, row)
            };
            let mut chunk = Chunk::with_capacity(3, 1);
            chunk.push(kind, &values(&row));
            h.push_chunk(0, chunk).unwrap();
            h.flush_marker(step).unwrap();
            log.extend(changes(h.take_lines()));
            let table = materialize_changelog(&log).unwrap();
            let expected: BTreeMap<String, i64> = kept.values().map(|r| (text(r), 1)).collect();
            assert_eq!(table, expected, "round {round}, step {step}");
        }
    }
}

/// With mini-batch on event time, each row's change goes out unless changes are compacted, when
/// only the key's final change of the batch does.
#[test]
fn compaction_leaves_the_final_change_of_a_batch() {
    for (compact, expected) in [
        (true, vec!["+I[1, 1970-01-01T00:00:02, 3]"]),
        (
            false,
            vec![
                "+I[1, 1970-01-01T00:00, 1]",
                "-U[1, 1970-01-01T00:00, 1]",
                "+U[1, 1970-01-01T00:00:01, 2]",
                "-U[1, 1970-01-01T00:00:01, 2]",
                "+U[1, 1970-01-01T00:00:02, 3]",
            ],
        ),
    ] {
        let mut h = OperatorHarness::new(spec(true, true, Some(None), compact).build(&SubtaskInfo::new("d", 0, 1)));
        let mut chunk = Chunk::with_capacity(3, 3);
        [(1, 0, 1), (1, 1000, 2), (1, 2000, 3)].iter().for_each(|row| chunk.push(RowKind::Insert, &values(row)));
        h.push_chunk(0, chunk).unwrap();
        assert!(changes(h.take_lines()).is_empty(), "rows wait for the flush");
        h.flush_marker(1).unwrap();
        assert_eq!(changes(h.take_lines()), expected, "compact {compact}");
    }
}
