//! OVER aggregates against a from-scratch recomputation: random disordered rows over a few
//! partitions with random watermarks, for bounded and unbounded ROWS and RANGE frames with SUM,
//! COUNT, MIN and MAX; each row that was not late comes out once with the aggregates of its frame
//! computed from the rows kept, late rows are counted, and a restore at another parallelism in
//! the middle changes nothing.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use weir_runtime::harness::OperatorHarness;
use weir_runtime::partition::{hash_key, subtask_for_hash};
use weir_runtime::value::Timestamp;
use weir_runtime::{Chunk, DataType, Operator, RowKind, SubtaskInfo, Value};

use super::*;
use crate::aggregate::{AggregateCall, AggregateKind};
use crate::spec::OperatorSpec;

/// A row: `[p INT, ts TIMESTAMP(3), x INT, id INT]`.
type Row = (i32, i64, i32, i32);

const FRAMES: [OverFrame; 4] =
    [OverFrame::Rows(Some(2)), OverFrame::Rows(None), OverFrame::Range(Some(300)), OverFrame::Range(None)];

fn spec(frame: OverFrame) -> OverAggregateSpec {
    let call = |kind, ty: DataType| AggregateCall::new(kind, Some(2), ty);
    OverAggregateSpec {
        partition: vec![0],
        time_col: 1,
        rowtime: true,
        frame,
        calls: vec![
            call(AggregateKind::Sum, DataType::int()),
            AggregateCall::new(AggregateKind::CountStar, None, DataType::bigint().not_null()),
            call(AggregateKind::Min, DataType::int()),
            call(AggregateKind::Max, DataType::int()),
        ],
        arg_types: vec![Some(DataType::int()), None, Some(DataType::int()), Some(DataType::int())],
        input_arity: 4,
        state_ttl: None,
    }
}

fn values(row: &Row) -> [Value; 4] {
    [Value::Int(row.0), Value::Timestamp(Timestamp::from_millis(row.1)), Value::Int(row.2), Value::Int(row.3)]
}

/// Each kept row with the SUM, COUNT, MIN and MAX of its frame: rows of its partition in time
/// order (arrival order within a time), as printed rows.
fn from_scratch(frame: OverFrame, kept: &[Row]) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    let mut partitions: BTreeMap<i32, Vec<Row>> = BTreeMap::new();
    kept.iter().for_each(|r| partitions.entry(r.0).or_default().push(*r));
    for rows in partitions.values_mut() {
        rows.sort_by_key(|r| r.1);
        for (i, row) in rows.iter().enumerate() {
            let in_frame: Vec<&Row> = match frame {
                OverFrame::Rows(n) => rows[i.saturating_sub(n.map_or(i, |n| n as usize))..=i].iter().collect(),
                OverFrame::Range(t) => {
                    rows.iter().filter(|r| r.1 <= row.1 && t.is_none_or(|t| r.1 >= row.1 - t)).collect()
                }
            };
            let xs: Vec<i32> = in_frame.iter().map(|r| r.2).collect();
            let text = format!(
                "[{}, {}, {}, {}, {}, {}, {}, {}]",
                row.0,
                weir_runtime::print::value_to_string(&Value::Timestamp(Timestamp::from_millis(row.1))),
                row.2,
                row.3,
                xs.iter().sum::<i32>(),
                xs.len(),
                xs.iter().min().expect("a frame holds its row"),
                xs.iter().max().expect("a frame holds its row"),
            );
            *out.entry(text).or_insert(0) += 1;
        }
    }
    out
}

/// The printed rows of the changes among `lines`, counted; all inserts.
fn inserted(lines: Vec<String>) -> Vec<String> {
    lines
        .into_iter()
        .filter(|l| !l.starts_with("watermark"))
        .map(|l| {
            assert!(l.starts_with("+I"), "{l} is no insert");
            l[2..].to_string()
        })
        .collect()
}

#[test]
fn every_frame_matches_a_recomputation() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(23);
    let owner = |row: &Row, p: usize| subtask_for_hash(hash_key(&values(row), &[0]), p);
    for round in 0..240 {
        let frame = FRAMES[round % 4];
        let spec = spec(frame);
        let build = |i, p| {
            OperatorHarness::with_subtask(Box::new(spec.build(&SubtaskInfo::new("o", i, p))) as Box<dyn Operator>, i, p)
        };
        let mut parts = vec![build(0, 1)];
        let (mut kept, mut lines, mut watermark, mut late, mut dropped) = (Vec::new(), Vec::new(), i64::MIN, 0u64, 0);
        // The last time computed per partition: a row not after it is late.
        let mut last: BTreeMap<i32, i64> = BTreeMap::new();
        let mut waiting: Vec<Row> = Vec::new();
        for step in 0..rng.random_range(1..60) {
            let row = (rng.random_range(0..3), rng.random_range(0..20) * 100, rng.random_range(-5..10), step);
            if last.get(&row.0).is_some_and(|&t| row.1 <= t) {
                late += 1;
            } else {
                kept.push(row);
                waiting.push(row);
            }
            let p = parts.len();
            for (i, part) in parts.iter_mut().enumerate() {
                let mut chunk = Chunk::with_capacity(4, 1);
                if owner(&row, p) == i {
                    chunk.push(RowKind::Insert, &values(&row));
                }
                part.push_chunk(0, chunk).unwrap();
            }
            if rng.random_bool(0.3) {
                watermark = watermark.max(rng.random_range(0..20) * 100);
                for part in &mut parts {
                    part.watermark(watermark).unwrap();
                }
                for row in waiting.iter().filter(|r| r.1 <= watermark) {
                    let t = last.entry(row.0).or_insert(i64::MIN);
                    *t = (*t).max(row.1);
                }
                waiting.retain(|r| r.1 > watermark);
            }
            if step % 11 == 10 {
                dropped += parts.iter().map(OperatorHarness::late_records_dropped).sum::<u64>();
                let p = rng.random_range(1..4);
                OperatorHarness::rescale(&mut parts, step as u64, p, build, &mut lines).unwrap();
            }
        }
        for part in &mut parts {
            part.watermark(i64::MAX).unwrap();
            lines.extend(part.take_lines());
        }
        dropped += parts.iter().map(OperatorHarness::late_records_dropped).sum::<u64>();
        let mut table = BTreeMap::new();
        inserted(lines).into_iter().for_each(|row| *table.entry(row).or_insert(0) += 1);
        assert_eq!(table, from_scratch(frame, &kept), "round {round} ({frame:?})");
        assert_eq!(dropped, late, "round {round}: late rows counted");
    }
}
