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

    /// The job could not start its threads.
    #[error("Could not start the job: {0}")]
    Startup(#[from] std::io::Error),

    /// The job was cancelled before it finished.
    #[error("The job was cancelled")]
    Cancelled,
}

impl Error {
    /// An execution error with the given message.
    pub fn execution(message: impl Into<String>) -> Self {
        Error::Execution(message.into())
    }
}

/// The runtime's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
