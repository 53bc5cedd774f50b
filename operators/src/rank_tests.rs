//! Top-N against a from-scratch recomputation: random inserts and retractions (and insert-only
//! streams for the append-fast strategy) over a few partitions, for ROW_NUMBER, RANK and
//! DENSE_RANK, with and without the rank selected and with ties; after every change the
//! materialized output equals the ranks of what each partition holds, and it still does across
//! restores at random parallelisms.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use weir_runtime::fixture::materialize_changelog;
use weir_runtime::harness::OperatorHarness;
use weir_runtime::partition::{hash_key, subtask_for_hash};
use weir_runtime::{Chunk, Operator, RowKind, SubtaskInfo, Value};

use super::*;
use crate::ranking::{RankRange, RankType, SortKey};
use crate::spec::OperatorSpec;

/// A row: `[p INT, score INT, id INT]`; ties in score are common.
type Row = (i32, i32, i32);

const TYPES: [RankType; 3] = [RankType::RowNumber, RankType::Rank, RankType::DenseRank];

fn spec(rank_type: RankType, output_rank: bool, append_only: bool, range: RankRange) -> RankSpec {
    RankSpec {
        partition: vec![0],
        order: vec![SortKey::new(1, true)],
        rank_type,
        range,
        output_rank,
        input_arity: 3,
        append_only,
        update_before: true,
        state_ttl: None,
    }
}

fn values(row: &Row) -> [Value; 3] {
    [Value::Int(row.0), Value::Int(row.1), Value::Int(row.2)]
}

/// The rows each partition ranks in the range, as printed rows, counted; ties ranked by arrival
/// (ROW_NUMBER) as the operator keeps them.
fn from_scratch(spec: &RankSpec, rows: &[Row]) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    let mut partitions: BTreeMap<i32, Vec<Row>> = BTreeMap::new();
    rows.iter().for_each(|r| partitions.entry(r.0).or_default().push(*r));
    for rows in partitions.values_mut() {
        // Stable: equal scores keep arrival order.
        rows.sort_by_key(|r| std::cmp::Reverse(r.1));
        let mut rank = 0;
        for (i, row) in rows.iter().enumerate() {
            let tie = i > 0 && rows[i - 1].1 == row.1;
            rank = match spec.rank_type {
                RankType::RowNumber => i as u64 + 1,
                RankType::Rank if tie => rank,
                RankType::Rank => i as u64 + 1,
                RankType::DenseRank if tie => rank,
                RankType::DenseRank => rank + 1,
            };
            if spec.range.contains(rank) {
                let text = if spec.output_rank {
                    format!("[{}, {}, {}, {rank}]", row.0, row.1, row.2)
                } else {
                    format!("[{}, {}, {}]", row.0, row.1, row.2)
                };
                *out.entry(text).or_insert(0) += 1;
            }
        }
    }
    out
}

/// A random change: an insert, or (not append-only) the retraction of a row held.
fn change(rng: &mut rand::rngs::SmallRng, rows: &mut Vec<Row>, append_only: bool, id: &mut i32) -> (RowKind, Row) {
    if !append_only && !rows.is_empty() && rng.random_bool(0.35) {
        let at = rng.random_range(0..rows.len());
        // Retract the last equal row held, as the operator does.
        let row = rows[at];
        let last = rows.iter().rposition(|r| *r == row).expect("the row is held");
        rows.remove(last);
        return (if rng.random_bool(0.5) { RowKind::Delete } else { RowKind::UpdateBefore }, row);
    }
    *id += 1;
    let row = (rng.random_range(0..3), rng.random_range(0..6), *id % 4);
    rows.push(row);
    (if rng.random_bool(0.8) { RowKind::Insert } else { RowKind::UpdateAfter }, row)
}

#[test]
fn every_rank_type_matches_a_recomputation_after_every_change() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    for round in 0..300 {
        let (rank_type, output_rank, append_only) = (TYPES[round % 3], round % 2 == 0, round % 5 == 0);
        let start = rng.random_range(1..3);
        let range = RankRange { start, end: start + rng.random_range(0..4) };
        let spec = spec(rank_type, output_rank, append_only, range);
        let mut h = OperatorHarness::new(spec.build(&SubtaskInfo::new("r", 0, 1)));
        let (mut rows, mut log, mut id) = (Vec::new(), Vec::new(), 0);
        for step in 0..rng.random_range(1..50) {
            let (kind, row) = change(&mut rng, &mut rows, append_only, &mut id);
            let mut chunk = Chunk::with_capacity(3, 1);
            chunk.push(kind, &values(&row));
            h.push_chunk(0, chunk).unwrap();
            log.extend(h.take_lines());
            let table = materialize_changelog(&log).unwrap();
            assert_eq!(table, from_scratch(&spec, &rows), "round {round} ({spec:?}), step {step}");
        }
    }
}

#[test]
fn a_restored_rank_goes_on_as_if_never_stopped() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(9);
    let owner = |row: &Row, p: usize| subtask_for_hash(hash_key(&values(row), &[0]), p);
    for round in 0..60 {
        let spec = spec(TYPES[round % 3], round % 2 == 0, false, RankRange { start: 1, end: 3 });
        let build = |i, p| {
            OperatorHarness::with_subtask(Box::new(spec.build(&SubtaskInfo::new("r", i, p))) as Box<dyn Operator>, i, p)
        };
        let mut parts = vec![build(0, 1)];
        let (mut rows, mut lines, mut id) = (Vec::new(), Vec::new(), 0);
        for step in 0..rng.random_range(1..60) {
            let (kind, row) = change(&mut rng, &mut rows, false, &mut id);
            let p = parts.len();
            for (i, part) in parts.iter_mut().enumerate() {
                let mut chunk = Chunk::with_capacity(3, 1);
                if owner(&row, p) == i {
                    chunk.push(kind, &values(&row));
                }
                part.push_chunk(0, chunk).unwrap();
            }
            if step % 9 == 8 {
                let p = rng.random_range(1..5);
                OperatorHarness::rescale(&mut parts, step as u64, p, build, &mut lines).unwrap();
            }
        }
        parts.iter_mut().for_each(|h| lines.extend(h.take_lines()));
        let table = materialize_changelog(&lines).unwrap();
        assert_eq!(table, from_scratch(&spec, &rows), "round {round}");
    }
}

/// A replaced rank is `-U` and `+U` of that rank when the consumer wants update-befores, `+U`
/// alone when not.
#[test]
fn a_replaced_rank_is_an_update_of_that_rank() {
    for (update_before, expected) in [
        (true, vec!["+I[1, 5, 1, 1]", "-U[1, 5, 1, 1]", "+U[1, 9, 2, 1]", "+I[1, 5, 1, 2]"]),
        (false, vec!["+I[1, 5, 1, 1]", "+U[1, 9, 2, 1]", "+I[1, 5, 1, 2]"]),
    ] {
        let spec = RankSpec { update_before, ..spec(RankType::RowNumber, true, true, RankRange { start: 1, end: 2 }) };
        let mut h = OperatorHarness::new(spec.build(&SubtaskInfo::new("r", 0, 1)));
        h.push("op | p INT | score INT | id INT\n+I | 1 | 5 | 1\n+I | 1 | 9 | 2").unwrap();
        assert_eq!(h.take_lines(), expected);
    }
}
