//! Temporal sort on random disordered rows and watermarks: the output is in time order, then by
//! the other key; every row comes out exactly once unless it was late (its rowtime not after the
//! last time that had gone out when it arrived), and late rows are counted; a restore in the
//! middle changes nothing.

use rand::{Rng, SeedableRng};
use weir_runtime::harness::OperatorHarness;
use weir_runtime::value::Timestamp;
use weir_runtime::{Chunk, Operator, RowKind, SubtaskInfo, Value};

use super::*;
use crate::ranking::SortKey;
use crate::spec::OperatorSpec;

/// A row: `[ts TIMESTAMP(3), k INT]`.
type Row = (i64, i32);

fn spec() -> TemporalSortSpec {
    TemporalSortSpec { time_col: 0, rowtime: true, order: vec![SortKey::new(1, true)], arity: 2 }
}

fn push(h: &mut OperatorHarness, row: Row) {
    let mut chunk = Chunk::with_capacity(2, 1);
    chunk.push(RowKind::Insert, &[Value::Timestamp(Timestamp::from_millis(row.0)), Value::Int(row.1)]);
    h.push_chunk(0, chunk).unwrap();
}

/// The rows among `elements`' output chunks.
fn rows_of(h: &mut OperatorHarness) -> Vec<Row> {
    let mut rows = Vec::new();
    for element in h.take_output() {
        if let weir_runtime::element::StreamElement::Chunk(chunk) = element {
            for (kind, row) in chunk.rows() {
                assert_eq!(kind, RowKind::Insert);
                let (Value::Timestamp(ts), Value::Int(k)) = (&row[0], &row[1]) else { panic!("a row of the input") };
                rows.push((ts.millis, *k));
            }
        }
    }
    rows
}

#[test]
fn rows_come_out_in_time_order_once_unless_late() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(19);
    for round in 0..200 {
        let build = || {
            OperatorHarness::with_subtask(
                Box::new(spec().build(&SubtaskInfo::new("s", 0, 1))) as Box<dyn Operator>,
                0,
                1,
            )
        };
        let mut h = build();
        let (mut out, mut kept, mut late, mut watermark) = (Vec::<Row>::new(), Vec::<Row>::new(), 0u64, i64::MIN);
        let mut dropped_before = 0;
        for step in 0..rng.random_range(1..60) {
            let row = (rng.random_range(0..20) * 100, rng.random_range(0..3));
            // Late when not after the last time that went out.
            let last_out = out.last().map_or(i64::MIN, |r| r.0);
            if row.0 <= last_out {
                late += 1;
            } else {
                kept.push(row);
            }
            push(&mut h, row);
            if rng.random_bool(0.3) {
                watermark = watermark.max(rng.random_range(0..20) * 100);
                h.watermark(watermark).unwrap();
            }
            out.extend(rows_of(&mut h));
            if step % 13 == 12 {
                let state = h.snapshot(step as u64).unwrap();
                dropped_before += h.late_records_dropped();
                h = build();
                h.restore(vec![state]).unwrap();
            }
        }
        h.watermark(i64::MAX).unwrap();
        out.extend(rows_of(&mut h));
        let sorted = out.windows(2).all(|w| w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 >= w[1].1));
        assert!(sorted, "round {round}: out of order: {out:?}");
        let (mut a, mut b) = (out.clone(), kept.clone());
        a.sort();
        b.sort();
        assert_eq!(a, b, "round {round}: the rows that were not late");
        assert_eq!(dropped_before + h.late_records_dropped(), late, "round {round}: late rows counted");
    }
}

/// On processing time, a row that comes in the same millisecond as a checkpoint, after its
/// barrier sent the held rows on, is not dropped as late: it goes out at the next tick.
#[test]
fn a_processing_time_row_after_a_barrier_in_the_same_millisecond_is_kept() {
    let spec = TemporalSortSpec { rowtime: false, ..spec() };
    let mut h =
        OperatorHarness::with_subtask(Box::new(spec.build(&SubtaskInfo::new("s", 0, 1))) as Box<dyn Operator>, 0, 1);
    push(&mut h, (500, 1));
    h.snapshot(1).unwrap();
    assert_eq!(rows_of(&mut h), [(500, 1)], "the barrier sends the held row on");
    push(&mut h, (400, 2));
    h.advance_processing_time(1).unwrap();
    assert_eq!(rows_of(&mut h), [(400, 2)], "the next tick sends the row of the barrier's millisecond");
}
