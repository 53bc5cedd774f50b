//! Errors of the table store, worded as Fluss words them where it has a message.

/// What went wrong.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// A table option or field function that is not valid, with the message for the user.
    #[error("{0}")]
    Validation(String),
    /// A value that cannot be merged (e.g. malformed bitmap bytes).
    #[error("{0}")]
    Merge(String),
    /// The storage under the tables failed (or is in use by another process).
    #[error("{0}")]
    Storage(String),
}

/// The store's results.
pub type Result<T> = std::result::Result<T, Error>;
