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
pub fn rewrite(
    checkpoint: &CompletedCheckpoint,
    old: &JobShape,
    new: &JobShape,
    report: &Report,
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
    let by_table =
        old.sinks.iter().map(|s| (&s.table, &s.id, new.sinks.iter().find(|n| n.table == s.table).map(|n| &n.id)));
    let sources =
        old.sources.iter().map(|s| (&s.table, &s.id, new.sources.iter().find(|n| n.table == s.table).map(|n| &n.id)));
    for (_, old_id, new_id) in by_table.chain(sources) {
        match new_id {
            Some(new_id) => {
                renamed.insert(old_id, (new_id, None));
            }
            None => dropped.push(old_id),
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
