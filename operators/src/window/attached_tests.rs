//! Window Top-N and window deduplication against a from-scratch recomputation on random,
//! disordered rows of TUMBLE, HOP and CUMULATE windows with late rows, and across restores at
//! random parallelisms.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use weir_runtime::harness::OperatorHarness;
use weir_runtime::partition::{hash_key, subtask_for_hash};
use weir_runtime::print::value_to_string;
use weir_runtime::{Chunk, Operator, RowKind, SubtaskInfo, Timestamp, Value};

use super::tests::{counted, random_input, SHAPES};
use super::*;
use crate::ranking::{RankRange, SortKey};
use crate::spec::OperatorSpec;

/// A window table function's row: `[k INT, v BIGINT, ts, window_start, window_end]`.
type Row = (i32, i64, i64, i64, i64);

/// Each raw row `(k, v, ts)` once per window of `shape` it is in, as the window table function
/// gives it; the steps keep their watermarks.
fn windowed(shape: &WindowSpec, steps: &[(Vec<(i32, i64, i64)>, Option<i64>)]) -> Vec<(Vec<Row>, Option<i64>)> {
    steps
        .iter()
        .map(|(rows, watermark)| {
            let rows = rows
                .iter()
                .flat_map(|&(k, v, ts)| shape.windows_of(ts).into_iter().map(move |(s, e)| (k, v, ts, s, e)))
                .collect();
            (rows, *watermark)
        })
        .collect()
}

fn time(millis: i64) -> Value {
    Value::Timestamp(Timestamp::from_millis(millis))
}

fn values(row: &Row) -> Vec<Value> {
    vec![Value::Int(row.0), Value::BigInt(row.1), time(row.2), time(row.3), time(row.4)]
}

fn chunk(rows: &[Row]) -> Chunk {
    let mut chunk = Chunk::with_capacity(5, rows.len());
    rows.iter().for_each(|r| chunk.push(RowKind::Insert, &values(r)));
    chunk
}

fn line(row: &Row, rank: Option<u64>) -> String {
    let mut fields: Vec<String> = values(row).iter().map(value_to_string).collect();
    fields.extend(rank.map(|r| r.to_string()));
    format!("+I[{}]", fields.join(", "))
}

fn attached(shape: WindowSpec) -> AttachedWindow {
    AttachedWindow { start: 3, end: 4, spec: shape }
}

/// Top-N per key and window by `v` descending, ties in arrival order.
fn rank_spec(shape: WindowSpec, range: RankRange, output_rank: bool) -> WindowRankSpec {
    WindowRankSpec {
        partition: vec![0],
        order: vec![SortKey::new(1, true)],
        range,
        output_rank,
        window: attached(shape),
        input_arity: 5,
    }
}

fn dedup_spec(shape: WindowSpec, keep_last: bool) -> WindowDeduplicateSpec {
    WindowDeduplicateSpec { partition: vec![0], time_col: 2, keep_last, window: attached(shape), input_arity: 5 }
}

/// Each window's rows per key, in arrival order, of the rows that came before the watermark
/// passed the window's end - 1; and how many did not (late).
fn windows_from_scratch(steps: &[(Vec<Row>, Option<i64>)]) -> (BTreeMap<(i32, i64, i64), Vec<Row>>, u64) {
    let (mut windows, mut late, mut watermark) = (BTreeMap::<_, Vec<Row>>::new(), 0, i64::MIN);
    for (rows, emitted) in steps {
        for row in rows {
            if row.4 - 1 <= watermark {
                late += 1;
            } else {
                windows.entry((row.0, row.3, row.4)).or_default().push(*row);
            }
        }
        watermark = emitted.unwrap_or(watermark);
    }
    (windows, late)
}

fn top_n(windows: &BTreeMap<(i32, i64, i64), Vec<Row>>, range: RankRange, output_rank: bool) -> Vec<String> {
    let mut lines = Vec::new();
    for rows in windows.values() {
        let mut sorted = rows.clone();
        // Stable: equal values keep their arrival order.
        sorted.sort_by_key(|row| std::cmp::Reverse(row.1));
        for (i, row) in sorted.iter().enumerate() {
            let rank = i as u64 + 1;
            if range.contains(rank) {
                lines.push(line(row, output_rank.then_some(rank)));
            }
        }
    }
    lines
}

fn deduplicated(windows: &BTreeMap<(i32, i64, i64), Vec<Row>>, keep_last: bool) -> Vec<String> {
    let pick = |rows: &Vec<Row>| {
        let mut kept = rows[0];
        for row in &rows[1..] {
            if (keep_last && row.2 >= kept.2) || (!keep_last && row.2 < kept.2) {
                kept = *row;
            }
        }
        line(&kept, None)
    };
    windows.values().map(pick).collect()
}

fn run(operator: Box<dyn Operator>, steps: &[(Vec<Row>, Option<i64>)]) -> (Vec<String>, u64) {
    let mut h = OperatorHarness::with_subtask(operator, 0, 1);
    let mut lines = Vec::new();
    for (rows, watermark) in steps {
        h.push_chunk(0, chunk(rows)).unwrap();
        if let Some(w) = watermark {
            h.watermark(*w).unwrap();
            // Nothing of a window fires before the watermark reaches its end - 1.
            for l in h.take_lines().into_iter().filter(|l| l.starts_with('+')) {
                let end = l.split(", ").nth(4).unwrap().to_string();
                assert!(parse_millis(&end) - 1 <= *w, "{l} fired at watermark {w}");
                lines.push(l);
            }
        }
    }
    h.end_input().unwrap();
    lines.extend(h.take_lines().into_iter().filter(|l| l.starts_with('+')));
    (lines, h.late_records_dropped())
}

/// Milliseconds of a printed time of the first hour (`1970-01-01T00:00:00.123`).
fn parse_millis(text: &str) -> i64 {
    let clock = text.trim_end_matches(']').split_once('T').unwrap().1;
    let parts: Vec<&str> = clock.split(':').collect();
    let seconds: f64 = parts.get(2).map_or(0.0, |s| s.parse().unwrap());
    parts[1].parse::<i64>().unwrap() * 60_000 + (seconds * 1000.0).round() as i64
}

#[test]
fn window_top_n_matches_a_recomputation_with_late_rows_counted() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
    for round in 0..300 {
        let shape = SHAPES[round % SHAPES.len()];
        let start = rng.random_range(1..3);
        let range = RankRange { start, end: start + rng.random_range(0..3) };
        let output_rank = rng.random_bool(0.5);
        let steps = windowed(&shape, &random_input(&mut rng));
        let (windows, late) = windows_from_scratch(&steps);
        let spec = rank_spec(shape, range, output_rank);
        let (lines, dropped) = run(Box::new(spec.build(&SubtaskInfo::new("w", 0, 1))), &steps);
        assert_eq!(counted(lines), counted(top_n(&windows, range, output_rank)), "round {round}: {spec:?}");
        assert_eq!(dropped, late, "round {round}");
    }
}

#[test]
fn window_deduplication_keeps_the_first_or_last_row_by_time() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(13);
    for round in 0..300 {
        let shape = SHAPES[round % SHAPES.len()];
        let keep_last = round % 2 == 1;
        let steps = windowed(&shape, &random_input(&mut rng));
        let (windows, late) = windows_from_scratch(&steps);
        let spec = dedup_spec(shape, keep_last);
        let (lines, dropped) = run(Box::new(spec.build(&SubtaskInfo::new("w", 0, 1))), &steps);
        assert_eq!(counted(lines), counted(deduplicated(&windows, keep_last)), "round {round}: {spec:?}");
        assert_eq!(dropped, late, "round {round}");
    }
}

/// Top-N and deduplication checkpointed and restored at random points, at random new
/// parallelisms (keys split by key group), end as if they had never stopped.
#[test]
fn restored_window_top_n_and_deduplication_go_on_as_if_never_stopped() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(17);
    let owner = |k: i32, p: usize| subtask_for_hash(hash_key(&[Value::Int(k)], &[0]), p);
    for round in 0..60 {
        let shape = SHAPES[round % SHAPES.len()];
        let (rank, dedup) = (rank_spec(shape, RankRange { start: 1, end: 2 }, true), dedup_spec(shape, false));
        let operator = |i, p| -> Box<dyn Operator> {
            let info = SubtaskInfo::new("w", i, p);
            if round % 2 == 0 {
                Box::new(rank.build(&info))
            } else {
                Box::new(dedup.build(&info))
            }
        };
        let build = |i, p| OperatorHarness::with_subtask(operator(i, p), i, p);
        let steps = windowed(&shape, &random_input(&mut rng));
        let (windows, _) = windows_from_scratch(&steps);
        let expected = if round % 2 == 0 { top_n(&windows, rank.range, true) } else { deduplicated(&windows, false) };
        let mut parts = vec![build(0, 1)];
        let mut actual = Vec::new();
        for (step, (rows, watermark)) in steps.iter().enumerate() {
            let p = parts.len();
            for (i, part) in parts.iter_mut().enumerate() {
                let own: Vec<Row> = rows.iter().copied().filter(|r| owner(r.0, p) == i).collect();
                part.push_chunk(0, chunk(&own)).unwrap();
            }
            if let Some(w) = watermark {
                parts.iter_mut().for_each(|h| h.watermark(*w).unwrap());
            }
            if step % 4 == 3 {
                let p = rng.random_range(1..5);
                OperatorHarness::rescale(&mut parts, step as u64, p, build, &mut actual).unwrap();
            }
        }
        for part in &mut parts {
            part.end_input().unwrap();
            actual.extend(part.take_lines());
        }
        assert_eq!(counted(actual), counted(expected), "round {round}, {shape:?}");
    }
}

#[test]
fn a_late_row_is_counted_and_an_update_refused() {
    let shape = SHAPES[0];
    let spec = rank_spec(shape, RankRange { start: 1, end: 1 }, false);
    let mut h = OperatorHarness::new(spec.build(&SubtaskInfo::new("w", 0, 1)));
    h.push_chunk(0, chunk(&[(1, 5, 3, 0, 10), (1, 7, 4, 0, 10)])).unwrap();
    h.watermark(9).unwrap();
    assert_eq!(
        h.take_lines(),
        ["+I[1, 7, 1970-01-01T00:00:00.004, 1970-01-01T00:00, 1970-01-01T00:00:00.010]", "watermark 9"]
    );
    h.push_chunk(0, chunk(&[(1, 9, 5, 0, 10)])).unwrap();
    assert_eq!(h.late_records_dropped(), 1);
    let mut update = Chunk::with_capacity(5, 1);
    update.push(RowKind::UpdateAfter, &values(&(1, 9, 15, 10, 20)));
    let error = h.push_chunk(0, update).unwrap_err().to_string();
    assert!(error.contains("WindowRank takes only inserts, but received a '+U' row."), "{error}");
}
