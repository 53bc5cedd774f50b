//! Rewrites of logical plans, each in its own file.

pub mod managed_scan;
pub mod split_distinct;
