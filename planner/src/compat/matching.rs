//! Pairing the stateful operators of the old and the new job.
//!
//! Two operators can share state when they are of one class (a group aggregate, a Top-N, a
//! regular join, …), read the same source tables and sit as deep below other stateful operators.
//! Among the operators of one such group, equal shapes pair first, then those of the same
//! stable id, then the rest in plan order. An old operator left alone is gone from the new script
//! (its state is dropped); a new one left alone adds state the savepoint does not have.

use super::rules::judge_pair;
use super::shape::{JobShape, StateShape};
use super::{CompatOptions, Judgement, Report, StateFate, Verdict};

/// Where an operator can find its partner.
fn group(shape: &StateShape) -> (&str, &[String], usize) {
    (&shape.class, &shape.sources, shape.depth)
}

/// Whether `a` and `b` keep the same state (their ids aside).
fn same(a: &StateShape, b: &StateShape) -> bool {
    StateShape { id: String::new(), ..a.clone() } == StateShape { id: String::new(), ..b.clone() }
}

/// The pairs of old and new operators, as `(old, new)` indices; unpaired ones alone.
fn pair(old: &[StateShape], new: &[StateShape]) -> Vec<(Option<usize>, Option<usize>)> {
    let mut old_taken = vec![false; old.len()];
    let mut new_taken = vec![false; new.len()];
    let mut pairs = Vec::new();
    let passes: [&dyn Fn(&StateShape, &StateShape) -> bool; 3] =
        [&|o, n| same(o, n), &|o, n| o.id == n.id, &|_, _| true];
    for fits in passes {
        for (n, new_op) in new.iter().enumerate() {
            if new_taken[n] {
                continue;
            }
            let partner = old
                .iter()
                .enumerate()
                .find(|(o, old_op)| !old_taken[*o] && group(old_op) == group(new_op) && fits(old_op, new_op));
            if let Some((o, _)) = partner {
                old_taken[o] = true;
                new_taken[n] = true;
                pairs.push((Some(o), Some(n)));
            }
        }
    }
    pairs.sort_by_key(|(_, n)| *n);
    pairs.extend((0..new.len()).filter(|&n| !new_taken[n]).map(|n| (None, Some(n))));
    pairs.extend((0..old.len()).filter(|&o| !old_taken[o]).map(|o| (Some(o), None)));
    pairs
}

/// Judges every stateful operator of `new` against its partner in `old`, and every old one
/// without a partner, into `report`.
pub(super) fn judge_operators(old: &JobShape, new: &JobShape, options: CompatOptions, report: &mut Report) {
    let pairs = pair(&old.operators, &new.operators);
    // Old operators of a class with no partner: a new one of that class reads other sources.
    let unpaired_old: Vec<&StateShape> =
        pairs.iter().filter(|(_, n)| n.is_none()).filter_map(|(o, _)| o.map(|o| &old.operators[o])).collect();
    for (o, n) in pairs {
        match (o.map(|o| &old.operators[o]), n.map(|n| &new.operators[n])) {
            (Some(o), Some(n)) => {
                let judged = judge_pair(o, n, options);
                report.items.extend(judged.item);
                let fate = if judged.verdict <= Verdict::PartiallyCompatible {
                    StateFate::Kept { old_id: o.id.clone(), new_id: n.id.clone(), calls: judged.calls }
                } else {
                    StateFate::Refused { old_id: o.id.clone(), subject: n.label(), reason: judged.reason.clone() }
                };
                report.fates.push(fate);
                report.judgements.push(Judgement {
                    subject: n.label(),
                    verdict: judged.verdict,
                    reason: judged.reason,
                });
            }
            (None, Some(n)) => {
                let before = unpaired_old.iter().find(|o| o.class == n.class);
                let reason = match before {
                    Some(o) if o.sources != n.sources => format!(
                        "it reads {} where the old {} read {}: no state of the savepoint is its",
                        n.sources.join(", "),
                        o.operator,
                        o.sources.join(", ")
                    ),
                    _ => "a query that adds state: the savepoint has none for it".to_string(),
                };
                report.judgements.push(Judgement { subject: n.label(), verdict: Verdict::Incompatible, reason });
            }
            (Some(o), None) => {
                report.fates.push(StateFate::Dropped { old_id: o.id.clone() });
                report.judgements.push(Judgement {
                    subject: o.label(),
                    verdict: Verdict::FullyCompatible,
                    reason: "not in the new script: its state is dropped".into(),
                });
            }
            (None, None) => {}
        }
    }
}
