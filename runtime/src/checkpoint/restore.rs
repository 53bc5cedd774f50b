//! Handing a checkpoint's state to the subtasks of a starting job.
//!
//! An operator's state goes to the operator of the same stable id
//! ([`crate::graph::JobGraph::operator_ids`]), wherever chaining puts it now: every subtask is
//! given what every old subtask wrote, in old subtask order, and takes its share, at the same
//! parallelism or another: keyed state keeps the keys of its own key groups, a source or other
//! operator state takes the parts `k` with `k % parallelism == index` (at the same parallelism,
//! its own). State of an operator the job no longer has fails the start, naming the operator,
//! unless `execution.state-recovery.ignore-unclaimed-state` is set, as in Flink.

use std::collections::{HashMap, HashSet};

use super::completed::CompletedCheckpoint;
use super::state::StateReader;
use crate::error::{Error, Result};

/// The restored state of each operator, by operator id.
#[derive(Debug, Default)]
pub(crate) struct RestorePlan {
    /// Per operator id: `(old subtask index, old parallelism, state)` of each old subtask.
    by_operator: HashMap<String, Vec<(usize, usize, StateReader)>>,
}

impl RestorePlan {
    /// Checks `checkpoint` against the ids of the job's operators and keeps what each will get.
    ///
    /// # Errors
    /// State no operator claims, unless `ignore_unclaimed`.
    pub(crate) fn new(checkpoint: &CompletedCheckpoint, operators: &[String], ignore_unclaimed: bool) -> Result<Self> {
        let known: HashSet<&str> = operators.iter().map(String::as_str).collect();
        let mut by_operator: HashMap<String, Vec<(usize, usize, StateReader)>> = HashMap::new();
        for part in &checkpoint.subtasks {
            for operator in &part.operators {
                if known.contains(operator.id.as_str()) {
                    let entry = by_operator.entry(operator.id.clone()).or_default();
                    entry.push((part.subtask, part.parallelism, operator.state.clone()));
                } else if !ignore_unclaimed && !operator.state.is_empty() {
                    return Err(Error::Restore(format!(
                        "Cannot map checkpoint {} state for operator '{}' (id {}) to the new program, because the \
                         operator is not available in the new program. Set \
                         'execution.state-recovery.ignore-unclaimed-state' = 'true' to skip it.",
                        checkpoint.id,
                        operator_name(&operator.id),
                        operator.id
                    )));
                }
            }
        }
        Ok(RestorePlan { by_operator })
    }

    /// What every subtask of the operator `id` restores: the state every old subtask wrote, by
    /// old subtask index (an old subtask that wrote none, an empty state); nothing for an
    /// operator the checkpoint does not hold.
    pub(crate) fn states_for(&self, id: &str) -> Vec<StateReader> {
        let Some(parts) = self.by_operator.get(id) else { return Vec::new() };
        let old_parallelism = parts.iter().map(|(_, p, _)| *p).max().unwrap_or(0);
        (0..old_parallelism)
            .map(|k| parts.iter().find(|(i, _, _)| *i == k).map(|(_, _, s)| s.clone()).unwrap_or_default())
            .collect()
    }
}

/// The operator's name in an operator id (`name#hash-n`).
fn operator_name(id: &str) -> &str {
    id.rsplit_once('#').map_or(id, |(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::completed::{OperatorState, SubtaskState};
    use crate::checkpoint::StateWriter;

    fn part(id: &str, subtask: usize, parallelism: usize, value: u64) -> SubtaskState {
        let mut state = StateWriter::new();
        state.section("v").u64(value);
        let operators = vec![OperatorState { id: id.into(), state: state.into_reader() }];
        SubtaskState { vertex: "chain".into(), subtask, parallelism, operators }
    }

    fn values(states: &[StateReader]) -> Vec<u64> {
        states.iter().map(|s| s.section("v").unwrap().u64().unwrap()).collect()
    }

    #[test]
    fn every_subtask_is_given_every_old_part_in_order() {
        let checkpoint = CompletedCheckpoint {
            id: 3,
            timestamp: 0,
            subtasks: vec![part("Agg#1", 1, 2, 11), part("Agg#1", 0, 2, 10)],
            plan: None,
        };
        let plan = RestorePlan::new(&checkpoint, &["Agg#1".into()], false).unwrap();
        assert_eq!(values(&plan.states_for("Agg#1")), vec![10, 11]);
        assert!(plan.states_for("Other#2").is_empty());
    }

    #[test]
    fn state_no_operator_claims_is_refused_unless_allowed() {
        let checkpoint =
            CompletedCheckpoint { id: 3, timestamp: 0, subtasks: vec![part("Gone#ab-0", 0, 1, 1)], plan: None };
        let error = RestorePlan::new(&checkpoint, &["Agg#1".into()], false).unwrap_err().to_string();
        assert!(
            error.contains("operator 'Gone' (id Gone#ab-0)") && error.contains("ignore-unclaimed-state"),
            "{error}"
        );
        assert!(RestorePlan::new(&checkpoint, &["Agg#1".into()], true).is_ok());
    }
}
