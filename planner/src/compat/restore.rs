//! A restore that follows the check's verdicts: the old checkpoint rewritten for the new job.
//!
//! Each old operator's state goes to the new operator the check paired it with (under the new
//! operator's stable id, with the map of its aggregate calls when they changed, so that kept
//! calls go on from their accumulators and new ones start empty); the state of an operator the
//! new script no longer has is dropped; state the new operator cannot use refuses the restore,
//! naming the operator, unless `execution.state-recovery.ignore-unclaimed-state` is set (then
//! the operator starts empty). Sources and sinks keep their state by table.

use std::collections::HashMap;

use weir_operators::aggregate::{encode_call_map, RESTORED_CALLS};
use weir_runtime::checkpoint::CompletedCheckpoint;

use super::{JobShape, Report, StateFate};

/// `checkpoint` as the new job takes it, after the check `report` of its plan `new` against
/// the plan `old` the checkpoint was written by.
///
/// # Errors
/// An operator whose state the new one cannot use, unless `ignore_unclaimed`: the message names it.
pub fn rewrite<'a>(
    checkpoint: &CompletedCheckpoint,
    old: &'a JobShape,
    new: &'a JobShape,
    report: &'a Report,
    ignore_unclaimed: bool,
) -> Result<CompletedCheckpoint, String> {
    let mut renamed: HashMap<&str, (&str, Option<Vec<u8>>)> = HashMap::new();
    let mut dropped: Vec<&str> = Vec::new();
    for fate in &report.fates {
        match fate {
            StateFate::Kept { old_id, new_id, calls } => {
                renamed.insert(old_id, (new_id, calls.as_deref().map(encode_call_map)));
            }
            StateFate::Dropped { old_id } => dropped.push(old_id),
            StateFate::Refused { old_id, subject, reason } => {
                if !ignore_unclaimed {
                    return Err(format!(
                        "The state of checkpoint {} cannot be restored into {subject}: {reason}. Set \
                         'execution.state-recovery.ignore-unclaimed-state' = 'true' to start it without state.",
                        checkpoint.id
                    ));
                }
                dropped.push(old_id);
            }
        }
    }
    // Sources and sinks keep their state by table; that of tables the new job does not read
    // or write is dropped.
    let sinks = |shape: &'a JobShape| shape.sinks.iter().map(|s| (s.table.as_str(), s.id.as_str())).collect();
    let sources = |shape: &'a JobShape| shape.sources.iter().map(|s| (s.table.as_str(), s.id.as_str())).collect();
    let pairs = pair_by_table(sinks(old), sinks(new)).into_iter().chain(pair_by_table(sources(old), sources(new)));
    for (old_id, new_id) in pairs {
        match new_id {
            Some(new_id) => {
                renamed.insert(old_id, (new_id, None));
            }
            None => dropped.push(old_id),
        }
    }
    // As Flink's: state no operator of the new job claims (an operator gone, the source or sink
    // of a table the job no longer reads or writes) refuses the restore unless it may go.
    if !ignore_unclaimed {
        let held =
            |id: &str| checkpoint.subtasks.iter().flat_map(|p| &p.operators).any(|o| o.id == id && !o.state.is_empty());
        if let Some(id) = dropped.iter().find(|id| held(id)) {
            if let Some(message) = sinks_merged(checkpoint.id, old, new, id) {
                return Err(message);
            }
            return Err(format!(
                "Cannot map checkpoint {} state for operator {} to the new program, because the operator is not \
                 available in the new program. Set 'execution.state-recovery.ignore-unclaimed-state' = 'true' to \
                 drop it.",
                checkpoint.id,
                label_of(old, id)
            ));
        }
    }
    let mut rewritten = checkpoint.clone();
    for part in &mut rewritten.subtasks {
        part.operators.retain(|o| !dropped.contains(&o.id.as_str()));
        for operator in &mut part.operators {
            if let Some((id, calls)) = renamed.get(operator.id.as_str()) {
                if let Some(calls) = calls {
                    operator.state = operator.state.with_section(RESTORED_CALLS, calls.clone());
                }
                operator.id = id.to_string();
            }
        }
    }
    Ok(rewritten)
}

/// Why the state of the old job's sink `id` finds no sink in the new job although the new job
/// writes its table: the old job wrote that table through more sinks (a statement set's INSERTs
/// into one table, each its own sink) than the new one does, and one sink's state (its pending
/// files or transactions) cannot be split or shared. `None` when `id` is no such sink.
fn sinks_merged(checkpoint: u64, old: &JobShape, new: &JobShape, id: &str) -> Option<String> {
    let table = &old.sinks.iter().find(|s| s.id == id)?.table;
    let count = |shape: &JobShape| shape.sinks.iter().filter(|s| &s.table == table).count();
    let (before, now) = (count(old), count(new));
    (now > 0).then(|| {
        format!(
            "Cannot map checkpoint {checkpoint} state for operator Sink: {table} to the new program: the checkpoint \
             wrote '{table}' through {before} sinks, the new program through {now}, and the state of a sink (what \
             it has not committed yet) cannot be merged into another's. Restore into a program that writes \
             '{table}' as the old one did, or set 'execution.state-recovery.ignore-unclaimed-state' = 'true' to \
             drop the state of the sinks left over."
        )
    })
}

/// How the old job's operator `id` is named in messages: its kind and key, or the table its
/// source or sink reads or writes.
fn label_of(old: &JobShape, id: &str) -> String {
    if let Some(operator) = old.operators.iter().find(|o| o.id == id) {
        return operator.label();
    }
    let source = old.sources.iter().find(|s| s.id == id).map(|s| format!("Source: {}", s.table));
    let sink = old.sinks.iter().find(|s| s.id == id).map(|s| format!("Sink: {}", s.table));
    source.or(sink).unwrap_or_else(|| format!("'{id}'"))
}

/// Pairs each old `(table, id)` with a new one of the same table: the one of the same id when
/// there is one, else the next of that table not paired yet, in plan order (a job may read one
/// table through several scans, one per filter, and each keeps its own position); `None` for
/// an old one the new job has no counterpart of.
fn pair_by_table<'a>(old: Vec<(&'a str, &'a str)>, new: Vec<(&'a str, &'a str)>) -> Vec<(&'a str, Option<&'a str>)> {
    let mut free: Vec<Option<(&str, &str)>> = new.into_iter().map(Some).collect();
    let take = |free: &mut Vec<Option<(&'a str, &'a str)>>, found: Option<usize>| {
        found.and_then(|i| free[i].take()).map(|(_, id)| id)
    };
    let mut paired: Vec<(&str, Option<&str>)> = Vec::with_capacity(old.len());
    let mut unmatched = Vec::new();
    for (table, id) in old {
        let same = free.iter().position(|n| n.is_some_and(|(t, i)| t == table && i == id));
        match take(&mut free, same) {
            Some(new_id) => paired.push((id, Some(new_id))),
            None => unmatched.push((table, id)),
        }
    }
    for (table, id) in unmatched {
        let next = free.iter().position(|n| n.is_some_and(|(t, _)| t == table));
        paired.push((id, take(&mut free, next)));
    }
    paired
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two scans of one table (one per filter) keep each its own state, also when the new plan
    /// numbers them otherwise.
    #[test]
    fn scans_of_one_table_keep_each_its_own_state() {
        let old = vec![("ev", "ev#a-0"), ("ev", "ev#a-1"), ("gone", "gone#b-0")];
        let same = pair_by_table(old.clone(), vec![("ev", "ev#a-1"), ("ev", "ev#a-0")]);
        assert_eq!(same, vec![("ev#a-0", Some("ev#a-0")), ("ev#a-1", Some("ev#a-1")), ("gone#b-0", None)]);
        let renamed = pair_by_table(old, vec![("ev", "ev#c-0"), ("ev", "ev#c-1")]);
        assert_eq!(renamed, vec![("ev#a-0", Some("ev#c-0")), ("ev#a-1", Some("ev#c-1")), ("gone#b-0", None)]);
    }
}
