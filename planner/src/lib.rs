//! weir's SQL front end: Flink's dialect, the catalog and binder, plans, and the translation
//! of plans into runtime job graphs.
//!
//! The planner is the only part of weir that knows both SQL and the runtime.

pub mod error;
pub mod parser;

pub use error::{Error, Position, Result};
