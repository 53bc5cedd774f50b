//! What a running subtask knows of itself and of its source: which subtask of which vertex it is
//! ([`SubtaskInfo`]), which of its source's splits its rows came from ([`Splits`]) and how far
//! its source has read ([`SourceProgress`]). It sits below the operator contract
//! ([`crate::operator`]), so that chunks, metrics, timers and keyed state name these without it.

use crate::state::backend::StateBackend;

/// Flink's default number of key groups for a parallelism:
/// `min(max(next_power_of_two(p * 1.5), 128), 32768)`.
pub fn default_max_parallelism(parallelism: usize) -> usize {
    (parallelism + parallelism / 2).next_power_of_two().clamp(128, 32_768)
}

/// Which subtask of which vertex an operator instance runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubtaskInfo {
    /// The vertex name.
    pub vertex: String,
    /// 0-based subtask index.
    pub index: usize,
    /// Parallelism of the vertex.
    pub parallelism: usize,
    /// Key groups of the vertex's keyed state (`pipeline.max-parallelism`): a key belongs to
    /// the subtask its key group is assigned to, as the HASH exchange into the vertex routes it.
    pub max_parallelism: usize,
    /// Where the subtask's keyed state lives (`state.backend.type`).
    pub state_backend: StateBackend,
}

impl SubtaskInfo {
    /// Subtask `index` of `parallelism` of `vertex`, with Flink's default number of key groups
    /// for that parallelism.
    pub fn new(vertex: impl Into<String>, index: usize, parallelism: usize) -> Self {
        let max_parallelism = default_max_parallelism(parallelism);
        SubtaskInfo { vertex: vertex.into(), index, parallelism, max_parallelism, state_backend: StateBackend::heap() }
    }

    /// The same subtask keeping its keyed state in `backend`.
    pub fn with_state_backend(mut self, backend: StateBackend) -> Self {
        self.state_backend = backend;
        self
    }

    /// The same subtask with `max_parallelism` key groups (`None`: the default).
    pub fn with_max_parallelism(mut self, max_parallelism: Option<usize>) -> Self {
        if let Some(n) = max_parallelism {
            self.max_parallelism = n;
        }
        self
    }
}

/// How much of its input a source has read ([`crate::operator::Source::progress`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceProgress {
    /// Bytes read so far.
    pub bytes_read: u64,
    /// Bytes it reads in all (its share of the input, from where it started).
    pub bytes_total: u64,
}

/// Which of a source subtask's splits the rows of its last poll came from
/// ([`crate::operator::Source::splits`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Splits {
    /// The split of the last poll's rows.
    pub current: usize,
    /// Per split, whether it has rows still to read.
    pub open: Vec<bool>,
}
