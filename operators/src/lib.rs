//! weir's stream operators.
//!
//! Each operator is a plain state machine implementing [`weir_runtime::Operator`], one per
//! file, tested with [`weir_runtime::harness::OperatorHarness`]. This crate holds the
//! operators of the pipeline API (map, filter, union, keyed processing) and of SQL: Calc over
//! [`expr`] expressions (evaluated a column at a time), the streaming group aggregate with
//! Flink's aggregate functions (one phase, mini-batch, local/global), the sink's constraint
//! enforcer and materializers, and the [`lookup`] joins (sync, async ordered/unordered,
//! key-ordered) whose async work the runtime drives through `Operator::poll_async`, and the
//! event-time [`window`] operators (window table functions, window aggregation on slices).

pub mod aggregate;
pub mod calc;
pub mod changelog_normalize;
pub mod constraint_enforcer;
pub mod correlate;
pub mod count_by_key;
pub mod deduplicate;
pub mod expand;
pub mod expr;
pub mod filter;
pub mod final_rows;
pub mod global_group_aggregate;
pub mod group_aggregate;
pub mod join;
pub mod keyed_process;
pub mod local_group_aggregate;
pub mod lookup;
pub mod map;
pub mod minibatch_assigner;
pub mod over_aggregate;
pub mod rank;
pub mod ranking;
pub mod signature;
pub mod sink_upsert_materializer;
pub mod spec;
pub mod temporal_sort;
pub mod union;
pub mod watermark_assigner;
pub mod watermark_compacting_materializer;
pub mod window;

pub use aggregate::bundle::BundleTrigger;
pub use calc::{CalcOperator, CalcSpec};
pub use changelog_normalize::{ChangelogNormalizeOperator, ChangelogNormalizeSpec};
pub use constraint_enforcer::{ConstraintEnforcerOperator, LengthCheck, LengthEnforcement, NotNullEnforcement};
pub use correlate::{CorrelateOperator, CorrelateSpec, CorrelatedTable, TableFunctionCall, TableUdf};
pub use count_by_key::CountByKey;
pub use deduplicate::{DeduplicateOperator, DeduplicateSpec};
pub use expand::{ExpandOperator, ExpandProject, ExpandSpec};
pub use filter::FilterOperator;
pub use final_rows::{FinalRowsOperator, FinalRowsSpec};
pub use global_group_aggregate::{GlobalGroupAggregateOperator, GlobalGroupAggregateSpec};
pub use group_aggregate::{GroupAggregateOperator, GroupAggregateSpec};
pub use keyed_process::{KeyedProcessFunction, KeyedProcessOperator};
pub use local_group_aggregate::{LocalGroupAggregateOperator, LocalGroupAggregateSpec};
pub use lookup::{
    lookup_join_factory, AsyncLookupJoinOperator, AsyncLookupOptions, KeyOrderedLookupJoinOperator, LookupJoinSpec,
    LookupJoinType, LookupRetry,
};
pub use map::MapOperator;
pub use minibatch_assigner::{MiniBatchAssignerOperator, MiniBatchAssignerSpec, MiniBatchMode};
pub use over_aggregate::{OverAggregateOperator, OverAggregateSpec, OverFrame};
pub use rank::{RankOperator, RankSpec};
pub use sink_upsert_materializer::SinkUpsertMaterializerOperator;
pub use spec::OperatorSpec;
pub use temporal_sort::{TemporalSortOperator, TemporalSortSpec};
pub use union::UnionOperator;
pub use watermark_assigner::{WatermarkAssignerOperator, WatermarkAssignerSpec};
pub use watermark_compacting_materializer::{
    OnConflict, WatermarkCompactingMaterializerOperator, WatermarkTimestampAssignerOperator,
};
pub use window::{
    AttachedWindow, LocalWindowAggregateOperator, LocalWindowAggregateSpec, SessionTableFunctionOperator,
    SessionTableFunctionSpec, SessionWindowAggregateOperator, SessionWindowAggregateSpec, WindowAggregateInput,
    WindowAggregateOperator, WindowAggregateSpec, WindowDeduplicateOperator, WindowDeduplicateSpec, WindowKind,
    WindowRankOperator, WindowRankSpec, WindowSpec, WindowTableFunctionOperator, WindowTableFunctionSpec, WindowZone,
};
