//! The interval and window joins against from-scratch recomputations: random rows on both sides
//! (NULL keys among them), out of order, with watermarks that make some of them late, for every
//! join type, with and without an extra condition; also across restores at random parallelisms.
//!
//! The recomputations state the semantics directly, from the whole history of arrivals:
//! - interval join: two rows pair when their keys are equal and not NULL, their times are within
//!   the bounds, the condition accepts them, and the one that came first had not expired when
//!   the second came (a row at `t` on side `a` expires once the watermark reaches `t + reach(a)`);
//!   a row of an outer side that paired with none goes out padded;
//! - window join: a row whose window end - 1 the watermark had reached when it came is dropped;
//!   the others are joined per key and window, as a batch join of each window's rows.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use weir_runtime::harness::OperatorHarness;
use weir_runtime::partition::{hash_key, subtask_for_hash};
use weir_runtime::value::Timestamp;
use weir_runtime::{Chunk, DataType, Operator, RowKind, SubtaskInfo, Value};

use super::*;
use crate::expr::{Expr, Function};
use crate::spec::OperatorSpec;
use crate::window::{AttachedWindow, WindowKind, WindowSpec, WindowZone};

const OUTER: [JoinType; 4] = [JoinType::Inner, JoinType::Left, JoinType::Right, JoinType::Full];
const ALL: [JoinType; 6] =
    [JoinType::Inner, JoinType::Left, JoinType::Right, JoinType::Full, JoinType::LeftSemi, JoinType::LeftAnti];

/// A row: `[k INT (NULL when None), t TIMESTAMP(3) (the window end for window joins), v INT]`.
#[derive(Debug, Clone, Copy)]
struct Row {
    side: usize,
    key: Option<i32>,
    time: i64,
    v: i32,
}

impl Row {
    fn values(&self) -> [Value; 3] {
        [
            self.key.map_or(Value::Null, Value::Int),
            Value::Timestamp(Timestamp::from_millis(self.time)),
            Value::Int(self.v),
        ]
    }
}

/// What happens next: a row arrives, or the watermark moves.
#[derive(Debug, Clone, Copy)]
enum Event {
    Row(Row),
    Watermark(i64),
}

/// `left.v <= right.v + 1` over the joined row `[lk, lt, lv, rk, rt, rv]`.
fn condition() -> Expr {
    let column = |i| Expr::column(i, DataType::int());
    let right_plus_one =
        Expr::call(Function::Plus, vec![column(5), Expr::literal(Value::Int(1), DataType::int())]).unwrap();
    Expr::call(Function::LessOrEqual, vec![column(2), right_plus_one]).unwrap()
}

fn accepts(with_condition: bool, l: &Row, r: &Row) -> bool {
    l.key.is_some() && l.key == r.key && (!with_condition || l.v <= r.v + 1)
}

/// Random arrivals: times advance with disorder up to `disorder`, the watermark trails the
/// largest time seen by a random lag (sometimes less than the disorder: late rows).
fn events(rng: &mut rand::rngs::SmallRng, align: i64) -> Vec<Event> {
    let (mut now, mut watermark, mut out) = (1_000i64, i64::MIN, Vec::new());
    for _ in 0..rng.random_range(1..70) {
        if rng.random_bool(0.2) {
            let w = now - rng.random_range(0..400);
            if w > watermark {
                watermark = w;
                out.push(Event::Watermark(w));
            }
            continue;
        }
        now += rng.random_range(0..60);
        let time = now - rng.random_range(0..300);
        let time = if align > 0 { (time.div_euclid(align) + 1) * align } else { time };
        let key = if rng.random_bool(0.1) { None } else { Some(rng.random_range(0..3)) };
        out.push(Event::Row(Row { side: rng.random_range(0..2), key, time, v: rng.random_range(0..4) }));
    }
    out.push(Event::Watermark(i64::MAX));
    out
}

fn line(left: Option<&Row>, right: Option<&Row>, left_only: bool) -> String {
    let mut chunk = Chunk::with_capacity(if left_only { 3 } else { 6 }, 1);
    let nulls = [Value::Null, Value::Null, Value::Null];
    let mut values: Vec<Value> = left.map_or(nulls.clone(), |r| r.values()).to_vec();
    if !left_only {
        values.extend(right.map_or(nulls, |r| r.values()));
    }
    chunk.push(RowKind::Insert, &values);
    chunk.to_lines().remove(0)
}

fn count(lines: impl IntoIterator<Item = String>) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for line in lines.into_iter().filter(|l| l.starts_with('+') || l.starts_with('-')) {
        *out.entry(line).or_insert(0) += 1;
    }
    out
}

fn interval_spec(join_type: JoinType, with_condition: bool) -> IntervalJoinSpec {
    IntervalJoinSpec {
        join_type,
        keys: [vec![0], vec![0]],
        arities: [3, 3],
        times: [1, 1],
        lower: -100,
        upper: 30,
        condition: with_condition.then(condition),
        rowtime: true,
    }
}

/// The interval join of `events`, recomputed; see the module documentation.
fn interval_from_scratch(spec: &IntervalJoinSpec, with_condition: bool, events: &[Event]) -> BTreeMap<String, usize> {
    let mut arrived: Vec<(Row, i64)> = Vec::new();
    let mut watermark = i64::MIN;
    for event in events {
        match event {
            Event::Watermark(w) => watermark = *w,
            Event::Row(row) => arrived.push((*row, watermark)),
        }
    }
    let reach = |side: usize| if side == 0 { -spec.lower } else { spec.upper };
    let mut lines = Vec::new();
    let mut paired = vec![false; arrived.len()];
    for j in 0..arrived.len() {
        for i in 0..j {
            let ((first, _), (second, seen_at)) = (arrived[i], arrived[j]);
            if first.side == second.side || first.time + reach(first.side) <= seen_at {
                continue;
            }
            let (l, r) = if first.side == 0 { (first, second) } else { (second, first) };
            let gap = l.time - r.time;
            if gap < spec.lower || gap > spec.upper || !accepts(with_condition, &l, &r) {
                continue;
            }
            (paired[i], paired[j]) = (true, true);
            lines.push(line(Some(&l), Some(&r), false));
        }
    }
    for ((row, _), paired) in arrived.iter().zip(paired) {
        if !paired && spec.join_type.is_outer(row.side) {
            let (l, r) = if row.side == 0 { (Some(row), None) } else { (None, Some(row)) };
            lines.push(line(l, r, false));
        }
    }
    count(lines)
}

fn window() -> AttachedWindow {
    let spec = WindowSpec { kind: WindowKind::Tumble { size: 100 }, offset: 0, zone: WindowZone::default() };
    AttachedWindow { start: 1, end: 1, spec }
}

fn window_spec(join_type: JoinType, with_condition: bool) -> WindowJoinSpec {
    WindowJoinSpec {
        join_type,
        keys: [vec![0], vec![0]],
        arities: [3, 3],
        windows: [window(), window()],
        condition: with_condition.then(condition),
    }
}

/// The window join of `events`, recomputed; see the module documentation.
fn window_from_scratch(join_type: JoinType, with_condition: bool, events: &[Event]) -> (BTreeMap<String, usize>, u64) {
    let (mut watermark, mut late) = (i64::MIN, 0);
    let mut windows: BTreeMap<(i64, Option<i32>), [Vec<Row>; 2]> = BTreeMap::new();
    for event in events {
        match event {
            Event::Watermark(w) => watermark = *w,
            Event::Row(row) if row.time - 1 <= watermark => late += 1,
            Event::Row(row) => windows.entry((row.time, row.key)).or_default()[row.side].push(*row),
        }
    }
    let left_only = join_type.keeps_left_only();
    let mut lines = Vec::new();
    for [left, right] in windows.values() {
        let pairs = |l: &Row| right.iter().filter(|r| accepts(with_condition, l, r)).count();
        for l in left {
            match join_type {
                JoinType::LeftSemi if pairs(l) > 0 => lines.push(line(Some(l), None, true)),
                JoinType::LeftAnti if pairs(l) == 0 => lines.push(line(Some(l), None, true)),
                JoinType::LeftSemi | JoinType::LeftAnti => {}
                _ => {
                    for r in right.iter().filter(|r| accepts(with_condition, l, r)) {
                        lines.push(line(Some(l), Some(r), false));
                    }
                    if join_type.is_outer(0) && pairs(l) == 0 {
                        lines.push(line(Some(l), None, false));
                    }
                }
            }
        }
        if join_type.is_outer(1) && !left_only {
            for r in right.iter().filter(|r| !left.iter().any(|l| accepts(with_condition, l, r))) {
                lines.push(line(None, Some(r), false));
            }
        }
    }
    (count(lines), late)
}

/// Runs `events` through `parts` (one harness per subtask, rows routed by key), rescaling to a
/// random parallelism now and then; returns every line emitted and the late rows counted.
fn run(
    rng: &mut rand::rngs::SmallRng,
    events: &[Event],
    build: impl Fn(usize, usize) -> OperatorHarness,
    rescale: bool,
) -> (Vec<String>, u64) {
    let mut parts = vec![build(0, 1)];
    let (mut lines, mut late, mut watermark) = (Vec::new(), 0, None);
    for (step, event) in events.iter().enumerate() {
        match event {
            Event::Row(row) => {
                let p = parts.len();
                let owner = subtask_for_hash(hash_key(&row.values(), &[0]), p);
                let mut chunk = Chunk::with_capacity(3, 1);
                chunk.push(RowKind::Insert, &row.values());
                parts[owner].push_chunk(row.side, chunk).unwrap();
            }
            Event::Watermark(w) => {
                watermark = Some(*w);
                parts.iter_mut().for_each(|h| h.watermark(*w).unwrap());
            }
        }
        if rescale && step % 9 == 8 {
            late += parts.iter().map(OperatorHarness::late_records_dropped).sum::<u64>();
            let p = rng.random_range(1..5);
            OperatorHarness::rescale(&mut parts, step as u64, p, &build, &mut lines).unwrap();
            // The sources send the watermark again after a restart.
            if let Some(w) = watermark {
                parts.iter_mut().for_each(|h| h.watermark(w).unwrap());
            }
        }
    }
    late += parts.iter().map(OperatorHarness::late_records_dropped).sum::<u64>();
    parts.iter_mut().for_each(|h| lines.extend(h.take_lines()));
    (lines, late)
}

fn harness(operator: impl Operator + 'static, i: usize, p: usize) -> OperatorHarness {
    OperatorHarness::with_subtask(Box::new(operator), i, p)
}

#[test]
fn the_interval_join_matches_a_recomputation_with_disorder_and_late_rows() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(47);
    for round in 0..400 {
        let (join_type, with_condition, rescale) = (OUTER[round % 4], round % 8 >= 4, round % 3 == 0);
        let spec = interval_spec(join_type, with_condition);
        let events = events(&mut rng, 0);
        let build = |i, p| harness(spec.build(&SubtaskInfo::new("ij", i, p)), i, p);
        let (lines, _) = run(&mut rng, &events, build, rescale);
        assert_eq!(
            count(lines),
            interval_from_scratch(&spec, with_condition, &events),
            "round {round} ({join_type:?}, condition {with_condition}, rescaled {rescale}): {events:?}"
        );
    }
}

#[test]
fn the_interval_join_holds_its_output_watermark_back_by_the_interval() {
    let spec = interval_spec(JoinType::Inner, false);
    let mut h = OperatorHarness::new(spec.build(&SubtaskInfo::new("ij", 0, 1)));
    h.watermark(1_000).unwrap();
    assert_eq!(h.take_lines(), vec!["watermark 900".to_string()], "delayed by max(100, 30)");
    h.watermark(i64::MAX).unwrap();
    assert_eq!(h.take_lines(), vec![format!("watermark {}", i64::MAX)], "the end of time is not delayed");
}

#[test]
fn the_interval_join_refuses_updates() {
    let mut h = OperatorHarness::new(interval_spec(JoinType::Inner, false).build(&SubtaskInfo::new("ij", 0, 1)));
    let mut chunk = Chunk::with_capacity(3, 1);
    chunk.push(RowKind::Delete, &Row { side: 0, key: Some(1), time: 5, v: 1 }.values());
    let error = h.push_chunk(0, chunk).unwrap_err().to_string();
    assert!(error.contains("IntervalJoin doesn't support consuming update and delete changes"), "{error}");
}

#[test]
fn the_window_join_matches_a_recomputation_with_disorder_and_late_rows() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(53);
    for round in 0..480 {
        let (join_type, with_condition, rescale) = (ALL[round % 6], round % 12 >= 6, round % 3 == 0);
        let spec = window_spec(join_type, with_condition);
        let events = events(&mut rng, 100);
        let build = |i, p| harness(spec.build(&SubtaskInfo::new("wj", i, p)), i, p);
        let (lines, late) = run(&mut rng, &events, build, rescale);
        let (expected, expected_late) = window_from_scratch(join_type, with_condition, &events);
        let context = format!("round {round} ({join_type:?}, condition {with_condition}, rescaled {rescale})");
        assert_eq!(count(lines), expected, "{context}: {events:?}");
        assert_eq!(late, expected_late, "{context}: late rows are counted");
    }
}

/// What `table.optimizer.window-join-enabled` changes with late rows present, as the seed
/// describes it: the window join drops (and counts) a row whose window has already fired, the
/// regular join that runs the same statement when the option is off joins it all the same.
#[test]
fn a_late_row_is_dropped_by_the_window_join_and_joined_by_the_regular_join() {
    let rows = [
        Row { side: 0, key: Some(1), time: 100, v: 1 },
        Row { side: 1, key: Some(1), time: 100, v: 2 },
        Row { side: 0, key: Some(2), time: 200, v: 3 },
        Row { side: 1, key: Some(2), time: 200, v: 4 },
    ];
    let late = Row { side: 1, key: Some(1), time: 100, v: 5 };
    let regular = RegularJoinSpec {
        join_type: JoinType::Inner,
        keys: [vec![0, 1], vec![0, 1]],
        arities: [3, 3],
        condition: None,
        sides: [JoinInputSideSpec::NoUniqueKey, JoinInputSideSpec::NoUniqueKey],
        state_ttl: [None, None],
    };
    let mut outputs = Vec::new();
    for mut h in [
        OperatorHarness::new(window_spec(JoinType::Inner, false).build(&SubtaskInfo::new("wj", 0, 1))),
        OperatorHarness::new(regular.build(&SubtaskInfo::new("j", 0, 1))),
    ] {
        for row in rows.iter().take(2) {
            let mut chunk = Chunk::with_capacity(3, 1);
            chunk.push(RowKind::Insert, &row.values());
            h.push_chunk(row.side, chunk).unwrap();
        }
        // The watermark passes the end of the first window (100), then a row of it comes.
        h.watermark(150).unwrap();
        for row in rows.iter().skip(2).chain([&late]) {
            let mut chunk = Chunk::with_capacity(3, 1);
            chunk.push(RowKind::Insert, &row.values());
            h.push_chunk(row.side, chunk).unwrap();
        }
        h.watermark(i64::MAX).unwrap();
        let late_dropped = h.late_records_dropped();
        outputs.push((count(h.take_lines()), late_dropped));
    }
    let pair = |l: &Row, r: &Row| line(Some(l), Some(r), false);
    let on_time = count([pair(&rows[0], &rows[1]), pair(&rows[2], &rows[3])]);
    let with_late = count([pair(&rows[0], &rows[1]), pair(&rows[2], &rows[3]), pair(&rows[0], &late)]);
    assert_eq!(outputs[0], (on_time, 1), "the window join drops the late row and counts it");
    assert_eq!(outputs[1], (with_late, 0), "the regular join joins it");
}

/// A change of the versioned side: its kind and row `[k, t, v]`.
type VersionEvent = (RowKind, Row);

/// The temporal join of `events` (no row late: which versions a late row still finds depends on
/// when versions were dropped, in Flink as here), recomputed: each left row, once the
/// watermark reaches its time, takes the version of its key valid then among the versions
/// received so far: the one with the latest time at or before the row's (the later arrival at
/// equal times), joined when it is a row the condition accepts, padded for a LEFT join else.
fn temporal_from_scratch(
    join_type: JoinType,
    with_condition: bool,
    events: &[(Option<VersionEvent>, Option<Row>, Option<i64>)],
) -> BTreeMap<String, usize> {
    let mut lines = Vec::new();
    for (at, (_, left, _)) in events.iter().enumerate() {
        let Some(l) = left else { continue };
        let fired = (at..events.len()).find(|&i| events[i].2.is_some_and(|w| w >= l.time)).unwrap();
        let version = events[..fired]
            .iter()
            .filter_map(|(v, _, _)| v.as_ref())
            .filter(|(_, r)| l.key.is_some() && r.key == l.key && r.time <= l.time)
            .fold(None::<&VersionEvent>, |best, v| match best {
                Some(b) if b.1.time > v.1.time => Some(b),
                _ => Some(v),
            });
        match version {
            Some((kind, r)) if kind.is_accumulate() && (!with_condition || l.v <= r.v + 1) => {
                lines.push(line(Some(l), Some(r), false))
            }
            _ if join_type == JoinType::Left => lines.push(line(Some(l), None, false)),
            _ => {}
        }
    }
    count(lines)
}

#[test]
fn the_temporal_join_matches_a_recomputation_with_disorder() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(59);
    for round in 0..300 {
        let (join_type, with_condition, rescale) =
            ([JoinType::Inner, JoinType::Left][round % 2], round % 4 >= 2, round % 3 == 0);
        let spec = TemporalJoinSpec {
            join_type,
            keys: [vec![0], vec![0]],
            arities: [3, 3],
            times: [1, 1],
            condition: with_condition.then(condition),
        };
        // Versions per key: each change inserts, updates (-U then +U) or deletes the key's row.
        let (mut now, mut watermark) = (1_000i64, i64::MIN);
        let mut current: BTreeMap<i32, Row> = BTreeMap::new();
        let mut events: Vec<(Option<VersionEvent>, Option<Row>, Option<i64>)> = Vec::new();
        for _ in 0..rng.random_range(1..60) {
            now += rng.random_range(0..40);
            match rng.random_range(0..10) {
                0..=1 => {
                    let w = now - rng.random_range(0..200);
                    if w > watermark {
                        watermark = w;
                        events.push((None, None, Some(w)));
                    }
                }
                2..=5 => {
                    let key = if rng.random_bool(0.1) { None } else { Some(rng.random_range(0..3)) };
                    let time = (now - rng.random_range(0..150)).max(watermark + 1);
                    events.push((None, Some(Row { side: 0, key, time, v: rng.random_range(0..4) }), None));
                }
                _ => {
                    let k = rng.random_range(0..3);
                    let time = (now - rng.random_range(0..100)).max(watermark + 1);
                    let new = Row { side: 1, key: Some(k), time, v: rng.random_range(0..4) };
                    match (current.get(&k).copied(), rng.random_range(0..3)) {
                        (None, _) => {
                            current.insert(k, new);
                            events.push((Some((RowKind::Insert, new)), None, None));
                        }
                        (Some(old), 0) => {
                            current.remove(&k);
                            events.push((Some((RowKind::Delete, Row { time, ..old })), None, None));
                        }
                        (Some(old), _) => {
                            current.insert(k, new);
                            events.push((Some((RowKind::UpdateBefore, Row { time, ..old })), None, None));
                            events.push((Some((RowKind::UpdateAfter, new)), None, None));
                        }
                    }
                }
            }
        }
        events.push((None, None, Some(i64::MAX)));
        let build = |i, p| harness(spec.build(&SubtaskInfo::new("tj", i, p)), i, p);
        let mut parts = vec![build(0, 1)];
        let (mut lines, mut last) = (Vec::new(), None);
        for (step, (version, left, w)) in events.iter().enumerate() {
            let p = parts.len();
            let mut push = |side: usize, kind: RowKind, row: &Row| {
                let mut chunk = Chunk::with_capacity(3, 1);
                chunk.push(kind, &row.values());
                parts[subtask_for_hash(hash_key(&row.values(), &[0]), p)].push_chunk(side, chunk).unwrap();
            };
            if let Some((kind, row)) = version {
                push(1, *kind, row);
            }
            if let Some(row) = left {
                push(0, RowKind::Insert, row);
            }
            if let Some(w) = w {
                last = Some(*w);
                parts.iter_mut().for_each(|h| h.watermark(*w).unwrap());
            }
            if rescale && step % 7 == 6 {
                let p = rng.random_range(1..5);
                OperatorHarness::rescale(&mut parts, step as u64, p, build, &mut lines).unwrap();
                if let Some(w) = last {
                    parts.iter_mut().for_each(|h| h.watermark(w).unwrap());
                }
            }
        }
        parts.iter_mut().for_each(|h| lines.extend(h.take_lines()));
        assert_eq!(
            count(lines),
            temporal_from_scratch(join_type, with_condition, &events),
            "round {round} ({join_type:?}, condition {with_condition}, rescaled {rescale}): {events:?}"
        );
    }
}

/// On processing time a row's time is when it arrives and processing-time timers expire the
/// rows: the same recomputation holds with each row's time its arrival and the clock's moves as
/// the watermark (the clock ends far ahead, so that every row expires).
#[test]
fn the_processing_time_interval_join_matches_a_recomputation() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(61);
    for round in 0..200 {
        let (join_type, with_condition) = (OUTER[round % 4], round % 8 >= 4);
        let spec = IntervalJoinSpec { rowtime: false, ..interval_spec(join_type, with_condition) };
        let mut h = OperatorHarness::new(spec.build(&SubtaskInfo::new("ij", 0, 1)));
        let (mut clock, mut timeline) = (0i64, Vec::new());
        for event in events(&mut rng, 0) {
            let Event::Row(row) = event else { continue };
            let now = clock.max(row.time);
            if now > clock {
                h.advance_processing_time(now - clock).unwrap();
                clock = now;
                timeline.push(Event::Watermark(clock));
            }
            let row = Row { time: clock, ..row };
            let mut chunk = Chunk::with_capacity(3, 1);
            chunk.push(RowKind::Insert, &row.values());
            h.push_chunk(row.side, chunk).unwrap();
            timeline.push(Event::Row(row));
        }
        h.advance_processing_time(1_000_000).unwrap();
        timeline.push(Event::Watermark(clock + 1_000_000));
        assert_eq!(
            count(h.take_lines()),
            interval_from_scratch(&spec, with_condition, &timeline),
            "round {round} ({join_type:?}, condition {with_condition}): {timeline:?}"
        );
    }
}
