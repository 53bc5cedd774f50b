//! weir's SQL front end: Flink's dialect, the catalog and binder, logical and physical plans,
//! EXPLAIN, and the translation of plans into runtime job graphs.
//!
//! The planner is the only part of weir that knows both SQL and the runtime. It has no
//! public items yet: SQL support arrives on top of the runtime, operators and connectors.
