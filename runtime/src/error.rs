//! Errors of the runtime: operator failures, invalid graphs and options, cancellation.

/// What can go wrong while building or running a job.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An operator reported a failure while processing; the message is for the user.
    #[error("{0}")]
    Execution(String),

    /// An operator subtask failed; the job failed with it.
    #[error("Operator '{operator}' (subtask {subtask}/{parallelism}) failed: {source}")]
    OperatorFailed {
        /// Name of the failed operator.
        operator: String,
        /// 1-based subtask index, as Flink numbers subtasks.
        subtask: usize,
        /// Parallelism of the operator's vertex.
        parallelism: usize,
        /// What the operator reported.
        source: Box<Error>,
    },

    /// An operator subtask panicked; the job failed with it.
    #[error("Operator '{operator}' (subtask {subtask}/{parallelism}) panicked: {message}")]
    OperatorPanicked {
        /// Name of the failed operator.
        operator: String,
        /// 1-based subtask index.
        subtask: usize,
        /// Parallelism of the operator's vertex.
        parallelism: usize,
        /// The panic payload, when it was a string.
        message: String,
    },

    /// The process came within a tenth of its memory limit (see [`crate::memory`]).
    #[error(
        "out of memory: the process uses {used} of the memory limit of {limit} \
         ({source_of_limit}), {heap} of it on the heap; raise the limit or keep less state \
         (fewer keys, a shorter state TTL)"
    )]
    MemoryExceeded {
        /// What the process used, in the limit's measure.
        used: crate::memory::Bytes,
        /// The limit.
        limit: crate::memory::Bytes,
        /// Where the limit comes from, as the message names it.
        source_of_limit: String,
        /// What the heap held.
        heap: crate::memory::Bytes,
    },

    /// State could not grow: the allocation would have taken the process past its memory
    /// limit, or the system refused it (see [`crate::memory::fallible`]).
    #[error(
        "out of memory: the state cannot grow by {bytes} more with {heap} on the heap within {limit}; \
         raise the limit or keep less state (fewer keys, a shorter state TTL)"
    )]
    AllocationRefused {
        /// The allocation refused.
        bytes: crate::memory::Bytes,
        /// What the heap held.
        heap: crate::memory::Bytes,
        /// The limit, as the message names it.
        limit: String,
    },

    /// The job graph cannot run as built.
    #[error("Invalid job graph: {0}")]
    InvalidGraph(String),

    /// A configuration option has a value of the wrong form.
    #[error("Invalid value '{value}' for option '{key}': {expected}")]
    InvalidOption {
        /// The option key, e.g. `execution.worker-threads`.
        key: String,
        /// The value given.
        value: String,
        /// What the option accepts.
        expected: String,
    },

    /// A configuration key that weir does not know.
    #[error("Unknown option '{0}'")]
    UnknownOption(String),

    /// A job cannot start from the checkpoint it was given.
    #[error("Cannot restore the job: {0}")]
    Restore(String),

    /// The job could not start its threads.
    #[error("Could not start the job: {0}")]
    Startup(#[from] std::io::Error),

    /// The reader of the job's output has gone (a closed pipe: `weir run … | head`).
    #[error("the reader of {0} has gone")]
    OutputClosed(String),

    /// The job was cancelled before it finished.
    #[error("The job was cancelled")]
    Cancelled,
}

impl Error {
    /// An execution error with the given message.
    pub fn execution(message: impl Into<String>) -> Self {
        Error::Execution(message.into())
    }

    /// An error writing to `what` (`standard output`): [`Error::OutputClosed`] when its reader
    /// has gone, else an execution error naming it.
    pub fn writing(what: &str, error: &std::io::Error) -> Self {
        match error.kind() {
            std::io::ErrorKind::BrokenPipe => Error::OutputClosed(what.to_string()),
            _ => Error::Execution(format!("cannot write to {what}: {error}")),
        }
    }

    /// Whether the job ended because the reader of its output went away (a subtask's
    /// [`Error::OutputClosed`]): a command ends quietly then, as `yes | head` does.
    pub fn is_output_closed(&self) -> bool {
        match self {
            Error::OutputClosed(_) => true,
            Error::OperatorFailed { source, .. } => source.is_output_closed(),
            _ => false,
        }
    }
}

/// The runtime's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
