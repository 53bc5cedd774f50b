//! weir's SQL front end: Flink's dialect, the catalog and binder, plans, and the translation
//! of plans into runtime job graphs.
//!
//! The planner turns SQL into what the runtime runs. [`phases`] is its
//! entry point: [`parser`] reads scripts, [`binder`] turns queries into typed [`plan`]s against
//! the [`catalog`], [`rules`] rewrite them, [`physical`] plans the operators and where they run,
//! and [`translate`] wires the job graph; [`explain`] and [`compat`] read plans. The session that
//! runs statements and jobs is `weir_session`'s.

pub(crate) mod attributes;
pub mod binder;
pub mod catalog;
pub mod column_type;
pub mod compat;
pub(crate) mod conditions;
pub mod dialect;
mod dialect_json;
pub mod error;
pub mod explain;
pub mod hints;
pub(crate) mod join_strategy;
pub mod lookup_options;
pub mod namespaces;
pub mod options;
pub mod parser;
pub mod phases;
pub mod physical;
pub mod plan;
pub(crate) mod plan_text;
pub mod resolve;
pub mod rules;
pub mod settings;
pub mod translate;

pub use error::{Error, Position, Result};
