//! Handing a checkpoint's state to the subtasks of a starting job.
//!
//! A chain's state goes to the chain of the same name: every subtask is given what every old
//! subtask wrote, in old subtask order, and takes its share, at the same parallelism or
//! another: keyed state keeps the keys of its own key groups, a source or other operator state
//! takes the parts `k` with `k % parallelism == index` (at the same parallelism, its own). State of a chain the job no longer has fails the start, naming the
//! chain, unless `execution.state-recovery.ignore-unclaimed-state` is set, as in Flink; so does
//! a chain whose number of operators changed.

use std::collections::HashMap;

use super::coordinator::{CompletedCheckpoint, SubtaskState};
use super::state::StateReader;
use crate::error::{Error, Result};

/// The restored state of each chain, by chain name.
#[derive(Debug, Default)]
pub(crate) struct RestorePlan {
    by_chain: HashMap<String, Vec<SubtaskState>>,
}

impl RestorePlan {
    /// Checks `checkpoint` against the job's chains (`(name, operators)` each) and keeps what
    /// each will get.
    ///
    /// # Errors
    /// State no chain claims (unless `ignore_unclaimed`), or a chain of another shape.
    pub(crate) fn new(
        checkpoint: &CompletedCheckpoint,
        chains: &[(String, usize)],
        ignore_unclaimed: bool,
    ) -> Result<Self> {
        let mut by_chain: HashMap<String, Vec<SubtaskState>> = HashMap::new();
        for part in &checkpoint.subtasks {
            match chains.iter().find(|(name, _)| *name == part.vertex) {
                Some((name, operators)) if *operators != part.operators.len() => {
                    return Err(Error::Restore(format!(
                        "checkpoint {} holds the state of {} operators for '{name}', which now has {operators}",
                        checkpoint.id,
                        part.operators.len()
                    )))
                }
                Some(_) => by_chain.entry(part.vertex.clone()).or_default().push(part.clone()),
                None if ignore_unclaimed || part.operators.iter().all(StateReader::is_empty) => {}
                None => {
                    return Err(Error::Restore(format!(
                        "Cannot map checkpoint {} state for operator '{}' to the new program, because the \
                         operator is not available in the new program. Set \
                         'execution.state-recovery.ignore-unclaimed-state' = 'true' to skip it.",
                        checkpoint.id, part.vertex
                    )))
                }
            }
        }
        Ok(RestorePlan { by_chain })
    }

    /// What the subtasks of chain `name` restore: per operator of the chain, head first, the
    /// state every old subtask wrote, by old subtask index (an old subtask that had ended
    /// before the checkpoint left an empty state).
    pub(crate) fn states_for(&self, name: &str) -> Vec<Vec<StateReader>> {
        let Some(parts) = self.by_chain.get(name) else { return Vec::new() };
        let old_parallelism = parts.iter().map(|p| p.parallelism).max().unwrap_or(0);
        let operators = parts.first().map_or(0, |p| p.operators.len());
        (0..operators)
            .map(|op| {
                (0..old_parallelism)
                    .map(|k| parts.iter().find(|p| p.subtask == k).map(|p| p.operators[op].clone()).unwrap_or_default())
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::StateWriter;

    fn part(vertex: &str, subtask: usize, parallelism: usize, value: u64) -> SubtaskState {
        let mut state = StateWriter::new();
        state.section("v").u64(value);
        SubtaskState { vertex: vertex.into(), subtask, parallelism, operators: vec![state.into_reader()] }
    }

    fn values(states: &[Vec<StateReader>]) -> Vec<Vec<u64>> {
        // An old subtask without state reads as 0.
        states.iter().map(|op| op.iter().map(|s| s.section("v").unwrap().u64().unwrap()).collect()).collect()
    }

    #[test]
    fn every_subtask_is_given_every_old_part_in_order() {
        let checkpoint =
            CompletedCheckpoint { id: 3, timestamp: 0, subtasks: vec![part("Agg", 1, 2, 11), part("Agg", 0, 2, 10)] };
        let plan = RestorePlan::new(&checkpoint, &[("Agg".into(), 1)], false).unwrap();
        assert_eq!(values(&plan.states_for("Agg")), vec![vec![10, 11]]);
        assert!(plan.states_for("Other").is_empty());
    }

    #[test]
    fn state_no_chain_claims_is_refused_unless_allowed() {
        let checkpoint = CompletedCheckpoint { id: 3, timestamp: 0, subtasks: vec![part("Gone", 0, 1, 1)] };
        let error = RestorePlan::new(&checkpoint, &[("Agg".into(), 1)], false).unwrap_err().to_string();
        assert!(error.contains("operator 'Gone'") && error.contains("ignore-unclaimed-state"), "{error}");
        assert!(RestorePlan::new(&checkpoint, &[("Agg".into(), 1)], true).is_ok());
        let error = RestorePlan::new(&checkpoint, &[("Gone".into(), 2)], false).unwrap_err().to_string();
        assert!(error.contains("1 operators for 'Gone', which now has 2"), "{error}");
    }
}
