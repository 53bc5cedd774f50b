//! weir's stream operators.
//!
//! Each operator is a plain state machine implementing [`weir_runtime::Operator`], one per
//! file, tested with [`weir_runtime::harness::OperatorHarness`]. This crate holds the
//! operators of the pipeline API (map, filter, union, keyed processing); SQL expressions,
//! aggregates and joins join them here.

pub mod count_by_key;
pub mod filter;
pub mod keyed_process;
pub mod map;
pub mod union;

pub use count_by_key::CountByKey;
pub use filter::FilterOperator;
pub use keyed_process::{KeyedProcessFunction, KeyedProcessOperator};
pub use map::MapOperator;
pub use union::UnionOperator;
