//! What goes wrong in the store: a file that cannot be read or written, or one that is damaged.

use std::path::PathBuf;

/// An error of the store, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading, writing, linking or removing a file failed.
    #[error("state store file '{path}': {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A file's bytes are not what the store wrote (a checksum or a length does not match).
    #[error("state store file '{path}' is damaged: {reason}")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What does not match.
        reason: String,
    },
}

impl Error {
    /// An I/O error on `path`, for callers outside the store (a benchmark's directory).
    pub fn io_at(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        Error::io(path)
    }

    /// An I/O error on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }

    /// A damaged `path`.
    pub(crate) fn damaged(path: impl Into<PathBuf>, reason: impl Into<String>) -> Error {
        Error::Damaged { path: path.into(), reason: reason.into() }
    }
}

/// The result of a store operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;
