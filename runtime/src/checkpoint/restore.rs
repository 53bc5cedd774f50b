//! Handing a checkpoint's state to the subtasks of a starting job.
//!
//! A chain's state goes to the chain of the same name. At the parallelism the checkpoint was
//! taken with, subtask `i` gets what subtask `i` wrote; at another one, every subtask gets what
//! every old subtask wrote, and keyed state keeps the keys of its own key groups (sources share
//! out their positions). State of a chain the job no longer has fails the start, naming the
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

    /// What subtask `index` of `parallelism` of chain `name` restores: per operator of the
    /// chain, head first, the states of the old subtasks it takes over.
    pub(crate) fn states_for(&self, name: &str, index: usize, parallelism: usize) -> Vec<Vec<StateReader>> {
        let Some(parts) = self.by_chain.get(name) else { return Vec::new() };
        let same_parallelism = parts.iter().all(|p| p.parallelism == parallelism);
        let taken: Vec<&SubtaskState> = parts.iter().filter(|p| !same_parallelism || p.subtask == index).collect();
        let operators = parts.first().map_or(0, |p| p.operators.len());
        (0..operators).map(|op| taken.iter().map(|p| p.operators[op].clone()).collect()).collect()
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
        states.iter().map(|op| op.iter().map(|s| s.section("v").unwrap().u64().unwrap()).collect()).collect()
    }

    #[test]
    fn each_subtask_gets_its_own_part_or_all_at_another_parallelism() {
        let checkpoint =
            CompletedCheckpoint { id: 3, timestamp: 0, subtasks: vec![part("Agg", 0, 2, 10), part("Agg", 1, 2, 11)] };
        let plan = RestorePlan::new(&checkpoint, &[("Agg".into(), 1)], false).unwrap();
        assert_eq!(values(&plan.states_for("Agg", 1, 2)), vec![vec![11]]);
        assert_eq!(values(&plan.states_for("Agg", 0, 3)), vec![vec![10, 11]]);
        assert!(plan.states_for("Other", 0, 1).is_empty());
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
