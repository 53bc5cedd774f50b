//! Errors of connectors and formats, worded as Flink words them where Flink has a message.

use std::fmt::Write;

/// What can go wrong creating or running a source or sink.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The table has no `'connector'` option.
    #[error("Table options do not contain an option key 'connector' for discovering a connector.")]
    MissingConnector,

    /// No connector has this identifier.
    #[error("Could not find any factory for identifier '{identifier}'.\n\nAvailable factory identifiers are:\n\n{}", available.join("\n"))]
    UnknownConnector {
        /// The identifier given.
        identifier: String,
        /// The identifiers weir knows.
        available: Vec<String>,
    },

    /// No format has this identifier.
    #[error("Could not find any format factory for identifier '{identifier}'.\n\nAvailable format identifiers are:\n\n{}", available.join("\n"))]
    UnknownFormat {
        /// The identifier given.
        identifier: String,
        /// The identifiers weir knows.
        available: Vec<String>,
    },

    /// Options no factory consumed.
    #[error("{}", unsupported_message(factory, unsupported, supported))]
    UnsupportedOptions {
        /// The connector identifier.
        factory: String,
        /// The options nobody understood, sorted.
        unsupported: Vec<String>,
        /// Every option the connector and its format accept, sorted.
        supported: Vec<String>,
    },

    /// Required options that were not given.
    #[error("One or more required options are missing.\n\nMissing required options are:\n\n{}", missing.join("\n"))]
    MissingOptions {
        /// The missing keys, sorted.
        missing: Vec<String>,
    },

    /// An option whose value has the wrong form.
    #[error("Could not parse value '{value}' for key '{key}': expected {expected}.")]
    InvalidOption {
        /// The option key.
        key: String,
        /// The value given.
        value: String,
        /// What the option accepts.
        expected: String,
    },

    /// An error about the connector or options of table `table`: it prints as `source` does;
    /// the table's name lets the planner point at the option in the table's `WITH` clause.
    #[error("{source}")]
    InTable {
        /// The table's name.
        table: String,
        /// What is wrong.
        source: Box<Error>,
    },

    /// Another validation failure, with its message.
    #[error("{0}")]
    Validation(String),

    /// A Parquet file could not be read or written.
    #[error("Parquet file '{file}': {reason}")]
    Parquet {
        /// The file.
        file: String,
        /// What went wrong.
        reason: String,
    },

    /// A record of a file could not be read.
    #[error("Failed to parse file '{file}', line {line}{}: {reason}", column_text(*column, field))]
    Parse {
        /// The file.
        file: String,
        /// 1-based line of the record (its first line when it spans several).
        line: usize,
        /// 1-based column (field position), when the failure is in one field.
        column: Option<usize>,
        /// The field's name, when the failure is in one field.
        field: Option<String>,
        /// What is wrong.
        reason: String,
    },

    /// A file could not be read or written.
    #[error("Cannot access '{path}': {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The operating system's error.
        source: std::io::Error,
    },
}

fn unsupported_message(factory: &str, unsupported: &[String], supported: &[String]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "Unsupported options found for '{factory}'.\n\nUnsupported options:\n\n{}\n\nSupported options:\n\n{}",
        unsupported.join("\n"),
        supported.join("\n")
    );
    s
}

fn column_text(column: Option<usize>, field: &Option<String>) -> String {
    match (column, field) {
        (Some(c), Some(f)) => format!(", column {c} ({f})"),
        (Some(c), None) => format!(", column {c}"),
        _ => String::new(),
    }
}

impl From<Error> for weir_runtime::Error {
    fn from(e: Error) -> Self {
        weir_runtime::Error::Execution(e.to_string())
    }
}

impl Error {
    /// The table the error is about, when the registry said ([`Error::InTable`]).
    pub fn table(&self) -> Option<&str> {
        match self {
            Error::InTable { table, .. } => Some(table),
            _ => None,
        }
    }

    /// The option the error is about: the key of a malformed value, the first unknown key,
    /// `connector` or `format` when that is unknown.
    pub fn option_key(&self) -> Option<&str> {
        match self {
            Error::InTable { source, .. } => source.option_key(),
            Error::InvalidOption { key, .. } => Some(key),
            Error::UnsupportedOptions { unsupported, .. } => unsupported.first().map(String::as_str),
            Error::UnknownConnector { .. } => Some("connector"),
            Error::UnknownFormat { .. } => Some("format"),
            // Only the filesystem connector reads a path before its job starts.
            Error::Io { .. } => Some("path"),
            _ => None,
        }
    }
}

/// The connectors' result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
