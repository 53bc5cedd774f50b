//! Errors of the SQL front end, with the position of the offending text.

/// A position in the script: 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// What can go wrong between script text and a running job.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The text is not SQL weir can read.
    #[error("SQL parse failed. {message}")]
    Parse {
        /// Where.
        position: Position,
        /// What the parser expected or found.
        message: String,
    },

    /// The SQL is well formed but wrong: an unknown table or column, a type mismatch, …
    #[error("SQL validation failed. From {position}: {message}")]
    Validation {
        /// Where.
        position: Position,
        /// What is wrong.
        message: String,
    },

    /// The catalog has no such object (where Flink says so without a position), in Flink's words.
    #[error("{0}")]
    Catalog(String),

    /// Options that do not fit together, in Flink's words.
    #[error("{0}")]
    Configuration(String),

    /// A plan Flink rejects while translating it (its `TableException`), in Flink's words.
    #[error("{0}")]
    Table(String),

    /// A statement or feature weir does not plan yet.
    #[error("Not supported yet: {0}.")]
    Unsupported(String),

    /// A feature weir does not plan yet, at the clause that asks for it (the `JOIN`'s table,
    /// the `ORDER BY`, the window function).
    #[error("Not supported yet: {feature}.")]
    UnsupportedAt {
        /// Where the clause starts.
        position: Position,
        /// What is not planned.
        feature: String,
    },

    /// Something Flink accepts that weir cannot have (a Java class to run), at its clause.
    #[error("Not supported by weir: {feature}.")]
    NotByWeir {
        /// Where the clause starts.
        position: Position,
        /// What weir cannot do, and why.
        feature: String,
    },

    /// A table's connector or format refused its options.
    #[error(transparent)]
    Connector(#[from] weir_connectors::Error),

    /// A table's connector or format refused its options: at the option in the table's `WITH`
    /// clause.
    #[error("{source}")]
    ConnectorAt {
        /// Where the option (or the `WITH` clause) is written.
        position: Position,
        /// What the connector said.
        source: Box<weir_connectors::Error>,
    },

    /// The job failed.
    #[error(transparent)]
    Runtime(#[from] weir_runtime::Error),
}

impl Error {
    /// A validation error at `position`.
    pub fn validation(position: Position, message: impl Into<String>) -> Self {
        Error::Validation { position, message: message.into() }
    }

    /// Whether a job ended because the reader of its output went away
    /// ([`weir_runtime::Error::is_output_closed`]).
    pub fn is_output_closed(&self) -> bool {
        matches!(self, Error::Runtime(e) if e.is_output_closed())
    }

    /// The message without the position Flink writes into a validation message ("From line L,
    /// column C: "), for a caller that writes the position itself.
    pub fn message_without_position(&self) -> String {
        match self {
            Error::Validation { message, .. } => format!("SQL validation failed. {message}"),
            other => other.to_string(),
        }
    }

    /// Where the error is in the script, when known.
    pub fn position(&self) -> Option<Position> {
        match self {
            Error::Parse { position, .. }
            | Error::Validation { position, .. }
            | Error::UnsupportedAt { position, .. }
            | Error::NotByWeir { position, .. }
            | Error::ConnectorAt { position, .. } => Some(*position),
            _ => None,
        }
    }
}

/// The planner's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
