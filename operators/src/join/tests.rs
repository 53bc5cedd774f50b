//! The regular join against a from-scratch recomputation: random inserts, updates and deletes on
//! both sides (NULL keys among them), for every join type (semi and anti too) with and without
//! an extra condition;
//! after every change the materialized output equals the join of what each side holds, and it
//! still does across restores at random parallelisms.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use weir_runtime::harness::OperatorHarness;
use weir_runtime::partition::{hash_key, subtask_for_hash};
use weir_runtime::{Chunk, DataType, Operator, RowKind, SubtaskInfo, Value};

use super::*;
use crate::expr::{Expr, Function};
use crate::spec::OperatorSpec;

/// A side's row: `[k INT (NULL when None), v INT]`.
type Row = (Option<i32>, i32);

const TYPES: [JoinType; 6] =
    [JoinType::Inner, JoinType::Left, JoinType::Right, JoinType::Full, JoinType::LeftSemi, JoinType::LeftAnti];

/// `left.v <= right.v + 1` over the joined row `[lk, lv, rk, rv]`.
fn condition() -> Expr {
    let column = |i| Expr::column(i, DataType::int());
    let right_plus_one =
        Expr::call(Function::Plus, vec![column(3), Expr::literal(Value::Int(1), DataType::int())]).unwrap();
    Expr::call(Function::LessOrEqual, vec![column(1), right_plus_one]).unwrap()
}

fn spec(join_type: JoinType, with_condition: bool) -> RegularJoinSpec {
    RegularJoinSpec {
        join_type,
        keys: [vec![0], vec![0]],
        arities: [2, 2],
        condition: with_condition.then(condition),
        sides: [JoinInputSideSpec::NoUniqueKey, JoinInputSideSpec::NoUniqueKey],
        state_ttl: [None, None],
    }
}

fn values(row: &Row) -> [Value; 2] {
    [row.0.map_or(Value::Null, Value::Int), Value::Int(row.1)]
}

fn text(row: Option<&Row>) -> String {
    match row {
        Some((k, v)) => format!("{}, {v}", k.map_or("null".to_string(), |k| k.to_string())),
        None => "null, null".to_string(),
    }
}

/// One random change of a side holding `rows`: an insert, an update (`-U` then `+U`) or a delete.
fn change(rng: &mut rand::rngs::SmallRng, rows: &mut Vec<Row>) -> Vec<(RowKind, Row)> {
    let fresh = |rng: &mut rand::rngs::SmallRng| {
        let k = if rng.random_bool(0.1) { None } else { Some(rng.random_range(0..3)) };
        (k, rng.random_range(0..4))
    };
    match rng.random_range(0..10) {
        0..=4 => {
            let row = fresh(rng);
            rows.push(row);
            vec![(RowKind::Insert, row)]
        }
        5..=7 if !rows.is_empty() => {
            let old = rows.swap_remove(rng.random_range(0..rows.len()));
            let new = fresh(rng);
            rows.push(new);
            vec![(RowKind::UpdateBefore, old), (RowKind::UpdateAfter, new)]
        }
        _ if !rows.is_empty() => vec![(RowKind::Delete, rows.swap_remove(rng.random_range(0..rows.len())))],
        _ => vec![],
    }
}

/// The join of what the sides hold, as counted output lines.
fn from_scratch(join_type: JoinType, with_condition: bool, sides: &[Vec<Row>; 2]) -> BTreeMap<String, i64> {
    let matches = |l: &Row, r: &Row| l.0.is_some() && l.0 == r.0 && (!with_condition || l.1 <= r.1 + 1);
    let mut out = BTreeMap::new();
    let mut add = |line: String| *out.entry(line).or_insert(0) += 1;
    if join_type.keeps_left_only() {
        let semi = join_type == JoinType::LeftSemi;
        for l in sides[0].iter().filter(|l| semi == sides[1].iter().any(|r| matches(l, r))) {
            add(format!("[{}]", text(Some(l))));
        }
        return out;
    }
    for l in &sides[0] {
        for r in sides[1].iter().filter(|r| matches(l, r)) {
            add(format!("[{}, {}]", text(Some(l)), text(Some(r))));
        }
        if join_type.is_outer(0) && !sides[1].iter().any(|r| matches(l, r)) {
            add(format!("[{}, {}]", text(Some(l)), text(None)));
        }
    }
    if join_type.is_outer(1) {
        for r in sides[1].iter().filter(|r| !sides[0].iter().any(|l| matches(l, r))) {
            add(format!("[{}, {}]", text(None), text(Some(r))));
        }
    }
    out
}

/// Applies printed changes (`+I[…]`, `-D[…]`, …) to a multiset; a removal of a row that is not
/// there fails.
fn apply(table: &mut BTreeMap<String, i64>, lines: Vec<String>) {
    for line in lines {
        let (kind, row) = line.split_at(2);
        let count = table.entry(row.to_string()).or_insert(0);
        match kind {
            "+I" | "+U" => *count += 1,
            _ => {
                assert!(*count > 0, "{line} retracts a row that is not there");
                *count -= 1;
            }
        }
    }
    table.retain(|_, n| *n != 0);
}

#[test]
fn every_join_type_matches_a_recomputation_after_every_change() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(41);
    for round in 0..240 {
        let (join_type, with_condition) = (TYPES[round % 6], round % 12 >= 6);
        let mut h = OperatorHarness::new(spec(join_type, with_condition).build(&SubtaskInfo::new("j", 0, 1)));
        let mut sides: [Vec<Row>; 2] = [Vec::new(), Vec::new()];
        let mut table = BTreeMap::new();
        for step in 0..rng.random_range(1..60) {
            let side = rng.random_range(0..2);
            let changes = change(&mut rng, &mut sides[side]);
            let mut chunk = Chunk::with_capacity(2, changes.len());
            changes.iter().for_each(|(kind, row)| chunk.push(*kind, &values(row)));
            h.push_chunk(side, chunk).unwrap();
            apply(&mut table, h.take_lines());
            assert_eq!(
                table,
                from_scratch(join_type, with_condition, &sides),
                "round {round} ({join_type:?}, condition {with_condition}), step {step}"
            );
        }
    }
}

#[test]
fn a_restored_join_goes_on_as_if_never_stopped() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(43);
    let owner = |row: &Row, p: usize| subtask_for_hash(hash_key(&values(row), &[0]), p);
    for round in 0..90 {
        let (join_type, with_condition) = (TYPES[round % 6], round % 4 == 0);
        let spec = spec(join_type, with_condition);
        let build = |i, p| {
            OperatorHarness::with_subtask(Box::new(spec.build(&SubtaskInfo::new("j", i, p))) as Box<dyn Operator>, i, p)
        };
        let mut parts = vec![build(0, 1)];
        let mut sides: [Vec<Row>; 2] = [Vec::new(), Vec::new()];
        let mut lines = Vec::new();
        for step in 0..rng.random_range(1..80) {
            let side = rng.random_range(0..2);
            let changes = change(&mut rng, &mut sides[side]);
            let p = parts.len();
            for (i, part) in parts.iter_mut().enumerate() {
                let mut chunk = Chunk::with_capacity(2, changes.len());
                changes
                    .iter()
                    .filter(|(_, row)| owner(row, p) == i)
                    .for_each(|(kind, row)| chunk.push(*kind, &values(row)));
                part.push_chunk(side, chunk).unwrap();
            }
            if step % 7 == 6 {
                let p = rng.random_range(1..5);
                OperatorHarness::rescale(&mut parts, step as u64, p, build, &mut lines).unwrap();
            }
        }
        parts.iter_mut().for_each(|h| lines.extend(h.take_lines()));
        let mut table = BTreeMap::new();
        apply(&mut table, lines);
        assert_eq!(table, from_scratch(join_type, with_condition, &sides), "round {round} ({join_type:?})");
    }
}
