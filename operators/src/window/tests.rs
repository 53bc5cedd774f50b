//! The window aggregates against a from-scratch recomputation on random, disordered input
//! with late rows, in one phase and in two (local, then global), and across restores.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use weir_runtime::harness::OperatorHarness;
use weir_runtime::partition::{hash_key, subtask_for_hash};
use weir_runtime::print::value_to_string;
use weir_runtime::{Chunk, DataType, RowKind, StreamElement, SubtaskInfo, Timestamp, Value};

use super::*;
use crate::aggregate::{AggregateCall, AggregateKind};
use crate::spec::OperatorSpec;

/// Rows `[k INT, v BIGINT, ts TIMESTAMP(3)]`: COUNT(*), SUM(v), MAX(v), COUNT(DISTINCT v) per k.
fn calls() -> Vec<AggregateCall> {
    vec![
        AggregateCall::new(AggregateKind::CountStar, None, DataType::bigint()),
        AggregateCall::new(AggregateKind::Sum, Some(1), DataType::bigint()),
        AggregateCall::new(AggregateKind::Max, Some(1), DataType::bigint()),
        AggregateCall::new(AggregateKind::Count, Some(1), DataType::bigint()).distinct(),
    ]
}

fn arg_types() -> Vec<Option<DataType>> {
    vec![None, Some(DataType::bigint()), Some(DataType::bigint()), Some(DataType::bigint())]
}

fn one_phase(window: WindowSpec) -> WindowAggregateSpec {
    WindowAggregateSpec {
        keys: vec![0],
        calls: calls(),
        arg_types: arg_types(),
        window,
        input: WindowAggregateInput::Rows { time_col: 2, processing_time: false },
        retracting: false,
        window_time: false,
        group_window: false,
    }
}

fn local(window: WindowSpec) -> LocalWindowAggregateSpec {
    LocalWindowAggregateSpec {
        keys: vec![0],
        calls: calls(),
        arg_types: arg_types(),
        window,
        time_col: 2,
        retracting: false,
    }
}

fn global(window: WindowSpec) -> WindowAggregateSpec {
    WindowAggregateSpec { input: WindowAggregateInput::Partials, ..one_phase(window) }
}

fn harness<S: OperatorSpec>(spec: &S) -> OperatorHarness {
    OperatorHarness::new(spec.build(&SubtaskInfo::new("w", 0, 1)))
}

fn chunk(rows: &[(i32, i64, i64)]) -> Chunk {
    let mut chunk = Chunk::with_capacity(3, rows.len());
    for &(k, v, ts) in rows {
        chunk.push(RowKind::Insert, &[Value::Int(k), Value::BigInt(v), Value::Timestamp(Timestamp::from_millis(ts))]);
    }
    chunk
}

pub(super) const SHAPES: [WindowSpec; 4] = [
    WindowSpec::new(WindowKind::Tumble { size: 10 }, 0),
    WindowSpec::new(WindowKind::Hop { size: 20, slide: 5 }, 0),
    WindowSpec::new(WindowKind::Cumulate { max_size: 20, step: 5 }, 0),
    WindowSpec::new(WindowKind::Tumble { size: 10 }, 3),
];

/// Random chunks of rows in disorder, each followed by the watermark `max ts - 3` when it rose.
pub(crate) fn random_input(rng: &mut rand::rngs::SmallRng) -> Vec<(Vec<(i32, i64, i64)>, Option<i64>)> {
    let (mut clock, mut watermark) = (100, i64::MIN);
    let mut steps = Vec::new();
    for _ in 0..rng.random_range(5..40) {
        let rows: Vec<(i32, i64, i64)> = (0..rng.random_range(0..8))
            .map(|_| {
                clock += rng.random_range(0..4);
                (rng.random_range(0..3), rng.random_range(0..5), clock - rng.random_range(0..16))
            })
            .collect();
        let next = rows.iter().map(|r| r.2 - 3).max().unwrap_or(i64::MIN).max(watermark);
        let emitted = (next > watermark).then_some(next);
        watermark = next;
        steps.push((rows, emitted));
    }
    steps
}

/// `shape` and `steps` scaled to minutes and moved into New York time around a change of its
/// clocks (spring or autumn, by round): windows over a TIMESTAMP_LTZ in that session time zone.
fn in_new_york(
    shape: WindowSpec,
    steps: Vec<(Vec<(i32, i64, i64)>, Option<i64>)>,
    round: usize,
) -> (WindowSpec, Vec<(Vec<(i32, i64, i64)>, Option<i64>)>) {
    const MINUTE: i64 = 60_000;
    // 2024-03-10T07:00Z (02:00 EST becomes 03:00 EDT), 2024-11-03T06:00Z (02:00 EDT becomes
    // 01:00 EST), less 250 minutes: the random times (100 to 400) straddle the change.
    let change = if round % 2 == 0 { 1_710_054_000_000 } else { 1_730_613_600_000 };
    let at = |t: i64| change - 250 * MINUTE + t * MINUTE;
    let kind = match shape.kind {
        WindowKind::Tumble { size } => WindowKind::Tumble { size: size * MINUTE },
        WindowKind::Hop { size, slide } => WindowKind::Hop { size: size * MINUTE, slide: slide * MINUTE },
        WindowKind::Cumulate { max_size, step } => {
            WindowKind::Cumulate { max_size: max_size * MINUTE, step: step * MINUTE }
        }
        session => session,
    };
    let zone = weir_runtime::time_zone::TimeZone::parse("America/New_York");
    let shape = WindowSpec { zone: WindowZone(zone), ..WindowSpec::new(kind, shape.offset * MINUTE) };
    let steps = steps
        .into_iter()
        .map(|(rows, watermark)| (rows.into_iter().map(|(k, v, ts)| (k, v, at(ts))).collect(), watermark.map(at)))
        .collect();
    (shape, steps)
}

/// What the windows must hold: each row counts in the windows of its time that had not fired
/// (end - 1 > watermark) when it arrived; rows in none are late.
fn recompute(spec: &WindowSpec, steps: &[(Vec<(i32, i64, i64)>, Option<i64>)]) -> (BTreeMap<String, i64>, u64) {
    let mut windows: BTreeMap<(i32, i64, i64), Vec<i64>> = BTreeMap::new();
    let (mut watermark, mut late) = (i64::MIN, 0);
    for (rows, emitted) in steps {
        for &(k, v, ts) in rows {
            let local = spec.zone.local(ts);
            let open: Vec<(i64, i64)> =
                spec.windows_of(local).into_iter().filter(|&(_, end)| !spec.zone.fired(end, watermark)).collect();
            late += u64::from(open.is_empty());
            open.into_iter().for_each(|(start, end)| windows.entry((k, start, end)).or_default().push(v));
        }
        watermark = emitted.unwrap_or(watermark);
    }
    let time = |t: i64| value_to_string(&Value::Timestamp(Timestamp::from_millis(t)));
    let mut expected = BTreeMap::new();
    for ((k, start, end), values) in windows {
        let distinct: std::collections::BTreeSet<&i64> = values.iter().collect();
        let line = format!(
            "+I[{k}, {}, {}, {}, {}, {}, {}]",
            values.len(),
            values.iter().sum::<i64>(),
            values.iter().max().unwrap_or(&0),
            distinct.len(),
            time(start),
            time(end)
        );
        *expected.entry(line).or_insert(0) += 1;
    }
    (expected, late)
}

pub(crate) fn counted(lines: impl IntoIterator<Item = String>) -> BTreeMap<String, i64> {
    let mut table = BTreeMap::new();
    lines.into_iter().filter(|l| l.starts_with('+')).for_each(|l| *table.entry(l).or_insert(0) += 1);
    table
}

/// Every result row comes out before the watermark that fires it, never earlier than its end - 1.
fn check_timing(lines: &[String]) {
    let mut pending = Vec::new();
    for line in lines {
        if let Some(w) = line.strip_prefix("watermark ") {
            let w: i64 = w.parse().unwrap();
            for end in pending.drain(..) {
                assert!(end - 1 <= w, "a window ending at {end} fired before watermark {w}");
            }
        } else if line.starts_with('+') {
            let end = line.trim_end_matches(']').rsplit(", ").next().unwrap().to_string();
            pending.push(parse_time(&end));
        }
    }
}

fn parse_time(text: &str) -> i64 {
    // 1970-01-01T00:00:00.123 (or without fraction): milliseconds of the first minutes.
    let (_, clock) = text.split_once('T').unwrap();
    let parts: Vec<&str> = clock.split(':').collect();
    let seconds: f64 = parts.get(2).map_or(0.0, |s| s.parse().unwrap());
    parts[0].parse::<i64>().unwrap() * 3_600_000
        + parts[1].parse::<i64>().unwrap() * 60_000
        + (seconds * 1000.0).round() as i64
}

#[test]
fn one_and_two_phases_match_a_recomputation_with_late_rows_counted() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    for round in 0..300 {
        // Every third round in New York time, across a change of its clocks.
        let (shape, steps) = if round % 3 == 2 {
            in_new_york(SHAPES[round % SHAPES.len()], random_input(&mut rng), round)
        } else {
            (SHAPES[round % SHAPES.len()], random_input(&mut rng))
        };
        let (expected, late) = recompute(&shape, &steps);
        // One phase.
        let mut one = harness(&one_phase(shape));
        // Two phases: the local phase's output fed to the global one as it comes.
        let (mut first, mut second) = (harness(&local(shape)), harness(&global(shape)));
        let relay = |first: &mut OperatorHarness, second: &mut OperatorHarness| {
            for element in first.take_output() {
                match element {
                    StreamElement::Chunk(c) => second.push_chunk(0, c).unwrap(),
                    StreamElement::Watermark(w) => second.watermark(w).unwrap(),
                    _ => {}
                }
            }
        };
        for (rows, watermark) in &steps {
            one.push_chunk(0, chunk(rows)).unwrap();
            first.push_chunk(0, chunk(rows)).unwrap();
            if let Some(w) = watermark {
                one.watermark(*w).unwrap();
                first.watermark(*w).unwrap();
            }
            relay(&mut first, &mut second);
        }
        let mut lines = one.take_lines();
        one.end_input().unwrap();
        lines.extend(one.take_lines());
        if shape.zone.0.is_none() {
            check_timing(&lines);
        }
        assert_eq!(counted(lines), expected, "one phase, round {round}, {shape:?}");
        assert_eq!(one.late_records_dropped(), late, "one phase, round {round}");
        first.end_input().unwrap();
        relay(&mut first, &mut second);
        second.end_input().unwrap();
        assert_eq!(counted(second.take_lines()), expected, "two phases, round {round}, {shape:?}");
    }
}

#[test]
fn late_rows_are_dropped_and_counted_not_lost_silently() {
    let spec = one_phase(SHAPES[0]);
    let mut h = harness(&spec);
    h.push_chunk(0, chunk(&[(1, 1, 1), (1, 2, 12)])).unwrap();
    h.watermark(9).unwrap();
    assert_eq!(h.take_lines(), ["+I[1, 1, 1, 1, 1, 1970-01-01T00:00, 1970-01-01T00:00:00.010]", "watermark 9"]);
    h.push_chunk(0, chunk(&[(1, 5, 3), (2, 5, 15)])).unwrap();
    assert_eq!(h.late_records_dropped(), 1, "the row of the fired window [0, 10)");
    h.end_input().unwrap();
    let mut lines = h.take_lines();
    lines.sort();
    assert_eq!(
        lines,
        [
            "+I[1, 1, 2, 2, 1, 1970-01-01T00:00:00.010, 1970-01-01T00:00:00.020]",
            "+I[2, 1, 5, 5, 1, 1970-01-01T00:00:00.010, 1970-01-01T00:00:00.020]",
        ]
    );
}

/// A window aggregate checkpointed and restored at random points, at a random new parallelism
/// (keys split by key group), ends with the same windows as one that never stopped.
#[test]
fn restored_window_aggregates_go_on_as_if_never_stopped() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(31);
    let owner = |k: i32, p: usize| subtask_for_hash(hash_key(&[Value::Int(k)], &[0]), p);
    for round in 0..50 {
        // Every fifth round aggregates sessions.
        let shape = SHAPES[round % SHAPES.len()];
        let (slicing, sessions) = (one_phase(shape), session(4 + round as i64 % 7));
        let operator = |i, p| -> Box<dyn weir_runtime::Operator> {
            let info = SubtaskInfo::new("w", i, p);
            if round % 5 == 4 {
                Box::new(sessions.build(&info))
            } else {
                Box::new(slicing.build(&info))
            }
        };
        let build = |i, p| OperatorHarness::with_subtask(operator(i, p), i, p);
        let mut whole = build(0, 1);
        let mut parts = vec![build(0, 1)];
        let mut actual = Vec::new();
        for (step, (rows, watermark)) in random_input(&mut rng).iter().enumerate() {
            whole.push_chunk(0, chunk(rows)).unwrap();
            let p = parts.len();
            for (i, part) in parts.iter_mut().enumerate() {
                let own: Vec<_> = rows.iter().copied().filter(|r| owner(r.0, p) == i).collect();
                part.push_chunk(0, chunk(&own)).unwrap();
            }
            if let Some(w) = watermark {
                whole.watermark(*w).unwrap();
                parts.iter_mut().for_each(|h| h.watermark(*w).unwrap());
            }
            if step % 5 == 4 {
                let p = rng.random_range(1..5);
                OperatorHarness::rescale(&mut parts, step as u64, p, build, &mut actual).unwrap();
            }
        }
        whole.end_input().unwrap();
        let expected = counted(whole.take_lines());
        for part in &mut parts {
            part.end_input().unwrap();
            actual.extend(part.take_lines());
        }
        assert_eq!(counted(actual), expected, "round {round}, {shape:?}");
    }
}

fn session(gap: i64) -> SessionWindowAggregateSpec {
    SessionWindowAggregateSpec {
        keys: vec![0],
        calls: calls()[..3].to_vec(),
        arg_types: arg_types()[..3].to_vec(),
        gap,
        time_col: 2,
        retracting: false,
        window_time: false,
        group_window: false,
        zone: WindowZone::default(),
    }
}

/// Sessions from scratch: per key, times in order, a new session wherever the next time is more
/// than `gap` after the one before; a session ends `gap` after its last row.
#[test]
fn sessions_match_a_recomputation_on_disordered_rows() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
    let time = |t: i64| value_to_string(&Value::Timestamp(Timestamp::from_millis(t)));
    for round in 0..100 {
        let gap = [3, 10, 25][round % 3];
        let rows: Vec<(i32, i64, i64)> = (0..rng.random_range(1..60))
            .map(|_| (rng.random_range(0..3), rng.random_range(0..5), 100 + rng.random_range(0..300)))
            .collect();
        let mut h = harness(&session(gap));
        for part in rows.chunks(7) {
            h.push_chunk(0, chunk(part)).unwrap();
        }
        h.end_input().unwrap();
        let mut expected = Vec::new();
        for k in 0..3 {
            let mut own: Vec<(i64, i64)> = rows.iter().filter(|r| r.0 == k).map(|r| (r.2, r.1)).collect();
            own.sort();
            let mut at = 0;
            while at < own.len() {
                let mut last = at;
                while last + 1 < own.len() && own[last + 1].0 - own[last].0 <= gap {
                    last += 1;
                }
                let values: Vec<i64> = own[at..=last].iter().map(|r| r.1).collect();
                expected.push(format!(
                    "+I[{k}, {}, {}, {}, {}, {}]",
                    values.len(),
                    values.iter().sum::<i64>(),
                    values.iter().max().unwrap(),
                    time(own[at].0),
                    time(own[last].0 + gap)
                ));
                at = last + 1;
            }
        }
        assert_eq!(counted(h.take_lines()), counted(expected), "round {round}, gap {gap}");
    }
}

#[test]
fn a_session_takes_late_rows_that_merge_into_it_and_drops_the_others() {
    let mut h = harness(&session(10));
    h.push_chunk(0, chunk(&[(1, 1, 100), (1, 1, 105)])).unwrap();
    h.watermark(110).unwrap();
    // Behind the watermark, but within the open session [100, 115): taken.
    h.push_chunk(0, chunk(&[(1, 2, 98)])).unwrap();
    // Behind it and alone: its window [50, 60) has passed.
    h.push_chunk(0, chunk(&[(1, 9, 50)])).unwrap();
    assert_eq!(h.late_records_dropped(), 1);
    h.watermark(200).unwrap();
    assert_eq!(
        h.take_lines(),
        ["watermark 110", "+I[1, 3, 4, 2, 1970-01-01T00:00:00.098, 1970-01-01T00:00:00.115]", "watermark 200"]
    );
}

/// Processing-time windows: each row joins the window of the clock when it arrives, and a
/// window fires once the clock reaches its end (the end of input fires the rest), against
/// a recomputation on random arrivals.
#[test]
fn processing_time_windows_follow_the_clock() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(23);
    for round in 0..100 {
        let shape = SHAPES[round % SHAPES.len()];
        let spec = WindowAggregateSpec {
            input: WindowAggregateInput::Rows { time_col: 2, processing_time: true },
            ..one_phase(shape)
        };
        let mut h = harness(&spec);
        let mut windows: BTreeMap<(i32, i64, i64), Vec<i64>> = BTreeMap::new();
        let mut lines = Vec::new();
        for _ in 0..rng.random_range(1..30) {
            let rows: Vec<(i32, i64, i64)> =
                (0..rng.random_range(0..5)).map(|_| (rng.random_range(0..3), rng.random_range(0..5), 0)).collect();
            let now = h.processing_time();
            for &(k, v, _) in &rows {
                shape.windows_of(now).into_iter().for_each(|(s, e)| windows.entry((k, s, e)).or_default().push(v));
            }
            h.push_chunk(0, chunk(&rows)).unwrap();
            h.advance_processing_time(rng.random_range(0..7)).unwrap();
            let clock = h.processing_time();
            for line in h.take_lines() {
                let end = parse_time(line.trim_end_matches(']').rsplit(", ").next().unwrap());
                assert!(end <= clock, "round {round}: {line} fired before {clock}");
                lines.push(line);
            }
        }
        // Every window that ended by the last clock fired then, not at the end of input.
        let ended = windows.keys().filter(|w| w.2 <= h.processing_time()).count();
        assert_eq!(lines.len(), ended, "round {round}: windows fired late");
        h.end_input().unwrap();
        lines.extend(h.take_lines());
        let time = |t: i64| value_to_string(&Value::Timestamp(Timestamp::from_millis(t)));
        let expected = windows.into_iter().map(|((k, s, e), values)| {
            let distinct: std::collections::BTreeSet<&i64> = values.iter().collect();
            format!(
                "+I[{k}, {}, {}, {}, {}, {}, {}]",
                values.len(),
                values.iter().sum::<i64>(),
                values.iter().max().unwrap(),
                distinct.len(),
                time(s),
                time(e)
            )
        });
        assert_eq!(counted(lines), counted(expected), "round {round}, {shape:?}");
    }
}

/// A restored processing-time window aggregate sets its timer again: its windows fire when the
/// clock passes their end, not only at the end of input.
#[test]
fn restored_processing_time_windows_fire_on_the_clock() {
    let spec = WindowAggregateSpec {
        input: WindowAggregateInput::Rows { time_col: 2, processing_time: true },
        ..one_phase(SHAPES[0])
    };
    let mut h = harness(&spec);
    h.advance_processing_time(3).unwrap();
    h.push_chunk(0, chunk(&[(1, 4, 0), (1, 5, 0)])).unwrap();
    let state = h.snapshot(1).unwrap();
    let mut restored = harness(&spec);
    restored.restore(vec![state]).unwrap();
    restored.advance_processing_time(9).unwrap();
    assert!(restored.take_lines().is_empty(), "the window [0, 10) is still open at 9");
    restored.advance_processing_time(1).unwrap();
    assert_eq!(restored.take_lines(), ["+I[1, 2, 9, 5, 2, 1970-01-01T00:00, 1970-01-01T00:00:00.010]"]);
}
