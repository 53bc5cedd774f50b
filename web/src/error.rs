//! What can go wrong starting weir's web server.

/// An error of the web server.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The address cannot be bound (a port in use, an address not of this machine).
    #[error("Cannot start the REST endpoint on {address} ({option}): {source}")]
    Bind {
        /// The address asked for.
        address: String,
        /// The option that asked for it (`rest.port`, `metrics.reporter.prom.port`).
        option: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// The server's thread or runtime cannot start.
    #[error("Cannot start the web server: {0}")]
    Startup(#[from] std::io::Error),
}

/// This crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
