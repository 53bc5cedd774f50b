//! Rewrites of logical plans, each in its own file.

pub mod split_distinct;
