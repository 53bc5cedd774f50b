//! weir's SQL front end: Flink's dialect, the catalog and binder, plans, and the translation
//! of plans into runtime job graphs.
//!
//! The planner is the only part of weir that knows both SQL and the runtime:
//! [`parser`] reads scripts, [`binder`] turns queries into typed [`plan`]s against the
//! [`catalog`], [`translate`] turns plans into job graphs, and a [`session`] runs statements.

pub mod binder;
pub mod catalog;
pub mod dialect;
pub mod error;
pub mod explain;
pub mod hints;
pub mod lookup_options;
pub mod managed;
pub mod options;
pub mod parser;
pub mod physical;
pub mod plan;
pub mod prune;
pub mod reuse;
pub mod rules;
pub mod session;
pub mod settings;
pub mod tableau;
pub mod translate;

pub use error::{Error, Position, Result};
pub use session::{ScriptError, Session};
