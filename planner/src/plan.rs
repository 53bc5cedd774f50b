//! Logical plans: trees of relational nodes with typed outputs, built by the binder.

use weir_connectors::api::TablePartition;
use weir_connectors::{LookupTable, SourceTable};
use weir_operators::aggregate::AggregateCall;
use weir_operators::expr::Expr;
use weir_operators::join::JoinType;
use weir_operators::ranking::{RankRange, RankType, SortKey};
use weir_operators::{AttachedWindow, LookupJoinType, WindowSpec};
use weir_runtime::{Field, Value};

/// A node and the columns it produces.
#[derive(Debug, Clone)]
pub struct Plan {
    /// What the node computes.
    pub node: Node,
    /// Its output columns.
    pub fields: Vec<Field>,
}

/// How a join runs, as [`crate::rules::time_join`] decides from its condition and inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinStrategy {
    /// Flink's `Join`: each side's rows kept (until the state TTL), changes retracted.
    Regular,
    /// Flink's `IntervalJoin`: rows paired when the left time minus the right time is within
    /// `lower..=upper` (ms), each kept while the watermark allows a partner; inserts only.
    Interval {
        /// The rowtime column of each input.
        times: [usize; 2],
        /// Flink's `leftLowerBound`.
        lower: i64,
        /// Flink's `leftUpperBound`.
        upper: i64,
        /// Whether the times are rowtimes (else processing times: `ProcTimeIntervalJoin`).
        rowtime: bool,
    },
    /// Flink's `WindowJoin`: rows paired per window once it ends; inserts only.
    Window([AttachedWindow; 2]),
    /// Flink's `TemporalJoin` (event time): each left row joined with the right side's version
    /// of its key valid at its time; the right input is a versioned table, kept whole.
    Temporal {
        /// The rowtime column of each input.
        times: [usize; 2],
    },
}

impl JoinStrategy {
    /// Whether the join emits inserts only (all but the regular join, over inserting inputs).
    pub fn inserts_only(self) -> bool {
        !matches!(self, JoinStrategy::Regular)
    }
}

/// The relational operations weir plans.
#[derive(Debug, Clone)]
pub enum Node {
    /// Reads a table through its connector.
    Scan {
        /// The table.
        table: SourceTable,
        /// The physical columns read, in output order (projection push-down).
        projection: Vec<usize>,
        /// The changes the scan emits (a managed table followed in streaming mode updates).
        changelog: ChangelogMode,
        /// The values of the whole primary key when the query pins it (a point query: one
        /// row read once).
        key: Option<Vec<Value>>,
        /// What the connector took of the filter above (filter and partition push-down).
        filter: ScanFilter,
        /// Whether a projection was pushed into the scan: it reads fewer columns than the table
        /// has, or shares a scan with one that does. Flink prints `project=[…]` then only.
        projected: bool,
    },
    /// Constant rows.
    Values {
        /// The rows, each of the node's arity.
        rows: Vec<Vec<Value>>,
    },
    /// Filter then project (Flink's Calc).
    Calc {
        /// The input.
        input: Box<Plan>,
        /// One expression per output column, over the input's columns.
        projections: Vec<Expr>,
        /// Rows where this is not TRUE are dropped.
        condition: Option<Expr>,
    },
    /// GROUP BY the first `keys` input columns, computing aggregates.
    Aggregate {
        /// The input.
        input: Box<Plan>,
        /// Input columns grouped on.
        keys: Vec<usize>,
        /// The aggregates, after the keys in the output.
        calls: Vec<AggregateCall>,
    },
    /// Assigns watermarks from an expression over the row (`WATERMARK FOR col AS expr`).
    WatermarkAssigner {
        /// The input.
        input: Box<Plan>,
        /// The rowtime column.
        rowtime: usize,
        /// The watermark of a row.
        watermark: Expr,
    },
    /// `TABLE(TUMBLE | HOP | CUMULATE(TABLE input, DESCRIPTOR(time_col), …))`: each input row
    /// once per window it is in. Output: the input's columns, then `window_start`,
    /// `window_end` and `window_time` (a rowtime attribute).
    WindowTableFunction {
        /// The input.
        input: Box<Plan>,
        /// The time column (a rowtime attribute of the input).
        time_col: usize,
        /// The windows.
        window: WindowSpec,
        /// `PARTITION BY` columns (SESSION): sessions are per their values.
        partition: Vec<usize>,
        /// Written in the older syntax, `GROUP BY TUMBLE(ts, …)`: its aggregate is Flink's
        /// one-phase `GroupWindowAggregate`.
        group_window: bool,
    },
    /// `GROUP BY window_start, window_end, keys` over a window table function, merged into one
    /// node (Flink's window aggregate): each window's result once, when the watermark passes
    /// its end. Output: the keys, the aggregates, `window_start`, `window_end`, and
    /// `window_time` when `window_time` is set.
    WindowAggregate {
        /// The window function's input, with the columns the aggregate reads.
        input: Box<Plan>,
        /// Input columns grouped on (besides the window).
        keys: Vec<usize>,
        /// The aggregates.
        calls: Vec<AggregateCall>,
        /// The windows.
        window: WindowSpec,
        /// The input's time column.
        time_col: usize,
        /// Whether `window_time` is an output column.
        window_time: bool,
        /// Written in the older syntax (`GROUP BY TUMBLE(ts, …)`): one phase, as Flink's
        /// `GroupWindowAggregate`.
        group_window: bool,
    },
    /// A ranking function over partitions (`ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)`):
    /// the input's columns, then the rank (`w0$o0`) when `output_rank`. The binder leaves the
    /// range open; a filter on the rank above sets it ([`crate::rules::rank`]).
    Rank {
        /// The input.
        input: Box<Plan>,
        /// The partition columns.
        partition: Vec<usize>,
        /// The ORDER BY keys.
        order: Vec<SortKey>,
        /// Which function.
        rank_type: RankType,
        /// The ranks a filter above keeps, once known.
        range: Option<RankRange>,
        /// Whether the rank is an output column.
        output_rank: bool,
    },
    /// The first or last row per key by a time attribute (Flink's `Deduplicate`): a rank of
    /// ROW_NUMBER kept to rank 1, ordered by one time attribute, the rank not selected. The
    /// input's columns.
    Deduplicate {
        /// The input.
        input: Box<Plan>,
        /// The key columns.
        partition: Vec<usize>,
        /// The time attribute ordered by (a rowtime or a processing time).
        time_col: usize,
        /// Keep the last row (ordered descending) rather than the first.
        keep_last: bool,
    },
    /// `ORDER BY … [LIMIT n] [OFFSET m]` of a query (Calcite's `Sort`): the input's columns.
    /// Without a limit it is a temporal sort (the first key an ascending time attribute); with
    /// one, a Top-N of one partition.
    Sort {
        /// The input.
        input: Box<Plan>,
        /// The ORDER BY keys (none: `LIMIT` alone).
        order: Vec<SortKey>,
        /// The rows skipped (`OFFSET`).
        offset: u64,
        /// The rows kept after them (`LIMIT`, `FETCH`), when limited.
        fetch: Option<u64>,
    },
    /// Aggregates over a frame of preceding rows per partition, ordered by a time attribute
    /// (Flink's `OverAggregate`): the input's columns, then one column per call (`w0$o0`, …).
    OverAggregate {
        /// The input.
        input: Box<Plan>,
        /// The partition columns.
        partition: Vec<usize>,
        /// The time attribute ordered by.
        time_col: usize,
        /// The frame.
        frame: weir_operators::OverFrame,
        /// The calls, over the input's columns.
        calls: Vec<weir_operators::aggregate::AggregateCall>,
    },
    /// A rank partitioned by the window its input rows carry (window Top-N): each window's
    /// rows ranked once, when the watermark passes its end. Output as [`Node::Rank`]'s.
    WindowRank {
        /// The input, whose rows carry their window.
        input: Box<Plan>,
        /// The partition columns besides `window_start` and `window_end`.
        partition: Vec<usize>,
        /// The ORDER BY keys.
        order: Vec<SortKey>,
        /// Which function (only ROW_NUMBER runs).
        rank_type: RankType,
        /// The ranks kept.
        range: RankRange,
        /// Whether the rank is an output column.
        output_rank: bool,
        /// Where the rows carry their window.
        window: AttachedWindow,
    },
    /// The first or last row per key and window by event time (window deduplication): the
    /// input's columns, once per key and window when the watermark passes its end.
    WindowDeduplicate {
        /// The input, whose rows carry their window.
        input: Box<Plan>,
        /// The partition columns besides `window_start` and `window_end`.
        partition: Vec<usize>,
        /// The rowtime column ordered by.
        time_col: usize,
        /// Keep the last row (ordered descending) rather than the first.
        keep_last: bool,
        /// Where the rows carry their window.
        window: AttachedWindow,
    },
    /// A regular join: the left input's columns, then the right input's, for each pair the
    /// condition accepts (and, for an outer join, each row of an outer side without a match,
    /// padded with NULLs).
    Join {
        /// The left input.
        left: Box<Plan>,
        /// The right input.
        right: Box<Plan>,
        /// INNER, LEFT, RIGHT or FULL.
        join_type: JoinType,
        /// The ON condition, over the joined row.
        condition: Expr,
        /// How the join runs: regular until the rules find it joins times or windows.
        strategy: JoinStrategy,
        /// The name (table or alias) each input is known by, when it has one: `STATE_TTL`
        /// hints name inputs so.
        names: [Option<String>; 2],
    },
    /// UNION ALL of inputs with equal column types.
    Union {
        /// The inputs.
        inputs: Vec<Plan>,
    },
    /// `CROSS JOIN UNNEST(expr)` or `LATERAL TABLE(f(args))` (or their `LEFT JOIN … ON TRUE`):
    /// each input row joined with the rows its table gives for it. Output: the input's
    /// columns, then the table's: an UNNEST's element (an ARRAY of ROWs gives the ROW's fields;
    /// a MAP its key and value), named `f0`, `f1`, … as Flink's `$UNNEST_ROWS$1` names them; a
    /// table function's result fields.
    Correlate {
        /// The input.
        input: Box<Plan>,
        /// What each input row is joined with.
        table: weir_operators::CorrelatedTable,
        /// Whether an input row without rows is kept, with NULLs (`LEFT JOIN … ON TRUE`).
        left: bool,
    },
    /// Each input row once per grouping set (`GROUP BY GROUPING SETS | ROLLUP | CUBE`, as
    /// Flink's `Expand`): the input's columns, those a set leaves out NULL, then the set's id
    /// `$e` (BIGINT NOT NULL).
    Expand {
        /// The input.
        input: Box<Plan>,
        /// The sets, in the order their rows follow an input row.
        projects: Vec<weir_operators::ExpandProject>,
    },
    /// `JOIN dim FOR SYSTEM_TIME AS OF input.proc_time`: each input row joined with the rows
    /// of `table` found by looking up its key. Output: the input's columns, then the table's.
    LookupJoin {
        /// The probe side.
        input: Box<Plan>,
        /// The dimension table.
        table: Box<LookupTable>,
        /// The name the query gives the table (its alias, else its name).
        alias: String,
        /// INNER or LEFT.
        join_type: LookupJoinType,
        /// The lookup key: per key column of the table (its index), the expression over the
        /// input row giving its value.
        keys: Vec<(usize, Expr)>,
        /// Conditions on the table's columns alone, over the table's row.
        dim_filter: Option<Expr>,
        /// Other conditions, over the joined row.
        join_condition: Option<Expr>,
    },
}

impl Node {
    /// The node's inputs, in order.
    pub fn inputs(&self) -> Vec<&Plan> {
        match self {
            Node::Calc { input, .. }
            | Node::Aggregate { input, .. }
            | Node::WatermarkAssigner { input, .. }
            | Node::WindowTableFunction { input, .. }
            | Node::WindowAggregate { input, .. }
            | Node::Rank { input, .. }
            | Node::Deduplicate { input, .. }
            | Node::Sort { input, .. }
            | Node::OverAggregate { input, .. }
            | Node::WindowRank { input, .. }
            | Node::WindowDeduplicate { input, .. }
            | Node::Correlate { input, .. }
            | Node::Expand { input, .. }
            | Node::LookupJoin { input, .. } => vec![input],
            Node::Join { left, right, .. } => vec![left, right],
            Node::Union { inputs } => inputs.iter().collect(),
            Node::Scan { .. } | Node::Values { .. } => Vec::new(),
        }
    }

    /// The node with each of its inputs replaced by `f(input)`; scans and VALUES stay as they are.
    ///
    /// # Errors
    /// The first error `f` returns.
    pub fn try_map_inputs<E>(self, mut f: impl FnMut(Plan) -> Result<Plan, E>) -> Result<Node, E> {
        Ok(match self {
            Node::Calc { input, projections, condition } => {
                Node::Calc { input: Box::new(f(*input)?), projections, condition }
            }
            Node::WatermarkAssigner { input, rowtime, watermark } => {
                Node::WatermarkAssigner { input: Box::new(f(*input)?), rowtime, watermark }
            }
            Node::Aggregate { input, keys, calls } => Node::Aggregate { input: Box::new(f(*input)?), keys, calls },
            Node::WindowTableFunction { input, time_col, window, partition, group_window } => {
                Node::WindowTableFunction { input: Box::new(f(*input)?), time_col, window, partition, group_window }
            }
            Node::WindowAggregate { input, keys, calls, window, time_col, window_time, group_window } => {
                let input = Box::new(f(*input)?);
                Node::WindowAggregate { input, keys, calls, window, time_col, window_time, group_window }
            }
            Node::Rank { input, partition, order, rank_type, range, output_rank } => {
                Node::Rank { input: Box::new(f(*input)?), partition, order, rank_type, range, output_rank }
            }
            Node::Deduplicate { input, partition, time_col, keep_last } => {
                Node::Deduplicate { input: Box::new(f(*input)?), partition, time_col, keep_last }
            }
            Node::Sort { input, order, offset, fetch } => {
                Node::Sort { input: Box::new(f(*input)?), order, offset, fetch }
            }
            Node::OverAggregate { input, partition, time_col, frame, calls } => {
                Node::OverAggregate { input: Box::new(f(*input)?), partition, time_col, frame, calls }
            }
            Node::WindowRank { input, partition, order, rank_type, range, output_rank, window } => Node::WindowRank {
                input: Box::new(f(*input)?),
                partition,
                order,
                rank_type,
                range,
                output_rank,
                window,
            },
            Node::WindowDeduplicate { input, partition, time_col, keep_last, window } => {
                Node::WindowDeduplicate { input: Box::new(f(*input)?), partition, time_col, keep_last, window }
            }
            Node::Join { left, right, join_type, condition, strategy, names } => Node::Join {
                left: Box::new(f(*left)?),
                right: Box::new(f(*right)?),
                join_type,
                condition,
                strategy,
                names,
            },
            Node::Union { inputs } => Node::Union { inputs: inputs.into_iter().map(f).collect::<Result<_, E>>()? },
            Node::Correlate { input, table, left } => Node::Correlate { input: Box::new(f(*input)?), table, left },
            Node::Expand { input, projects } => Node::Expand { input: Box::new(f(*input)?), projects },
            Node::LookupJoin { input, table, alias, join_type, keys, dim_filter, join_condition } => Node::LookupJoin {
                input: Box::new(f(*input)?),
                table,
                alias,
                join_type,
                keys,
                dim_filter,
                join_condition,
            },
            leaf @ (Node::Scan { .. } | Node::Values { .. }) => leaf,
        })
    }
}

/// The columns `UNNEST` adds for a collection of type `collection`, named as Flink names them:
/// an ARRAY of ROWs gives the ROW's fields, an ARRAY of other values its element (`f0`, or
/// `EXPR$0` `WITH ORDINALITY`, which adds `ORDINALITY`), a MAP its key and value (`f0`, `f1`).
/// `None` for a type that is not an ARRAY or a MAP (Flink's code generator takes no UNNEST of a
/// MULTISET), and for a MAP `WITH ORDINALITY`.
pub fn unnested_fields(collection: &weir_runtime::DataType, ordinality: bool) -> Option<Vec<Field>> {
    use weir_runtime::{DataType, LogicalType};
    let mut fields = match &collection.logical {
        LogicalType::Array(element) => match &element.logical {
            LogicalType::Row(fields) => fields.clone(),
            _ if ordinality => vec![Field::new("EXPR$0", element.as_ref().clone())],
            _ => vec![Field::new("f0", element.as_ref().clone())],
        },
        LogicalType::Map(key, value) => {
            vec![Field::new("f0", key.as_ref().clone()), Field::new("f1", value.as_ref().clone())]
        }
        _ => return None,
    };
    if ordinality {
        fields.push(Field::new("ORDINALITY", DataType::int()));
    }
    Some(fields)
}

impl Plan {
    /// An Expand of `input` into the grouping sets `projects`: its columns (those some set
    /// leaves out now nullable), then the set id `$e`.
    pub fn expand(input: Plan, projects: Vec<weir_operators::ExpandProject>) -> Plan {
        let mut fields = input.fields.clone();
        for c in projects.iter().flat_map(|p| &p.nulled) {
            fields[*c].data_type.nullable = true;
        }
        fields.push(Field::new("$e", weir_runtime::DataType::bigint().not_null()));
        Plan { node: Node::Expand { input: Box::new(input), projects }, fields }
    }

    /// Whether the node only ever emits inserts (`+I`); a group aggregate emits updates.
    pub fn is_insert_only(&self) -> bool {
        match &self.node {
            Node::Scan { changelog, .. } => changelog.is_insert_only(),
            Node::Values { .. } => true,
            Node::Calc { input, .. }
            | Node::WatermarkAssigner { input, .. }
            | Node::LookupJoin { input, .. }
            | Node::WindowTableFunction { input, .. }
            | Node::Correlate { input, .. }
            | Node::Expand { input, .. }
            | Node::OverAggregate { input, .. }
            | Node::Sort { input, fetch: None, .. } => input.is_insert_only(),
            Node::Deduplicate { input, keep_last: false, .. } => input.is_insert_only(),
            Node::Aggregate { .. } | Node::Rank { .. } | Node::Deduplicate { .. } | Node::Sort { .. } => false,
            Node::WindowAggregate { .. } | Node::WindowRank { .. } | Node::WindowDeduplicate { .. } => true,
            Node::Union { inputs } => inputs.iter().all(Plan::is_insert_only),
            Node::Join { strategy, .. } if strategy.inserts_only() => true,
            Node::Join { left, right, join_type, .. } => {
                *join_type == JoinType::Inner && left.is_insert_only() && right.is_insert_only()
            }
        }
    }

    /// The name of the first node that emits updates, for error messages.
    pub fn updating_node(&self) -> Option<&'static str> {
        match &self.node {
            Node::Aggregate { .. } => Some("GroupAggregate"),
            Node::Rank { .. } | Node::Sort { fetch: Some(_), .. } => Some("Rank"),
            Node::Deduplicate { keep_last: true, .. } => Some("Deduplicate"),
            Node::Join { strategy, .. } if strategy.inserts_only() => None,
            Node::Join { join_type: weir_operators::join::JoinType::Inner, left, right, .. } => {
                left.updating_node().or_else(|| right.updating_node())
            }
            Node::Join { .. } => Some("Join"),
            Node::Scan { changelog, .. } if !changelog.is_insert_only() => Some("TableSourceScan"),
            Node::Calc { input, .. }
            | Node::WatermarkAssigner { input, .. }
            | Node::LookupJoin { input, .. }
            | Node::WindowTableFunction { input, .. }
            | Node::Correlate { input, .. }
            | Node::Expand { input, .. }
            | Node::Deduplicate { input, .. }
            | Node::OverAggregate { input, .. }
            | Node::Sort { input, .. } => input.updating_node(),
            Node::Union { inputs } => inputs.iter().find_map(Plan::updating_node),
            Node::Scan { .. }
            | Node::Values { .. }
            | Node::WindowAggregate { .. }
            | Node::WindowRank { .. }
            | Node::WindowDeduplicate { .. } => None,
        }
    }
}

/// The row kinds a node emits, as Flink abbreviates them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChangelogMode {
    /// Inserts (`+I`).
    pub insert: bool,
    /// Update-befores (`-U`).
    pub update_before: bool,
    /// Update-afters (`+U`).
    pub update_after: bool,
    /// Deletes (`-D`).
    pub delete: bool,
}

impl ChangelogMode {
    /// Inserts only.
    pub const INSERT_ONLY: ChangelogMode =
        ChangelogMode { insert: true, update_before: false, update_after: false, delete: false };

    /// Every kind either mode has.
    pub fn union(self, other: ChangelogMode) -> ChangelogMode {
        ChangelogMode {
            insert: self.insert || other.insert,
            update_before: self.update_before || other.update_before,
            update_after: self.update_after || other.update_after,
            delete: self.delete || other.delete,
        }
    }

    /// Whether only inserts are emitted.
    pub fn is_insert_only(self) -> bool {
        self == ChangelogMode::INSERT_ONLY
    }
}

impl std::fmt::Display for ChangelogMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kinds: Vec<&str> =
            [(self.insert, "I"), (self.update_before, "UB"), (self.update_after, "UA"), (self.delete, "D")]
                .iter()
                .filter(|(on, _)| *on)
                .map(|(_, k)| *k)
                .collect();
        if kinds.is_empty() {
            f.write_str("NONE")
        } else {
            f.write_str(&kinds.join(","))
        }
    }
}

/// What a scan took of the filter above it, over the table's columns.
#[derive(Debug, Clone, Default)]
pub struct ScanFilter {
    /// Conjuncts the connector took, in the filter's order (filter push-down, as Flink's
    /// `SupportsFilterPushDown`); those that did not choose partitions stay above the scan.
    pub conjuncts: Vec<Expr>,
    /// The partitions read, when conjuncts over partition columns alone chose them at planning
    /// (partition push-down, as Flink's `SupportsPartitionPushDown`); `None` reads them all.
    pub partitions: Option<PartitionPruning>,
}

/// The partitions a scan reads, and the conjuncts that chose them.
#[derive(Debug, Clone)]
pub struct PartitionPruning {
    /// The partitions kept, in their listing's order.
    pub kept: Vec<TablePartition>,
    /// Which of [`ScanFilter::conjuncts`] chose them (by position): gone from the filter
    /// above, as every row of a kept partition passes them.
    pub chosen_by: Vec<usize>,
}

impl ScanFilter {
    /// Whether the scan took nothing.
    pub fn is_empty(&self) -> bool {
        self.conjuncts.is_empty() && self.partitions.is_none()
    }

    /// The conjuncts that did not choose partitions: those the filter above keeps, and that
    /// EXPLAIN prints as `filter=[…]`.
    pub fn remaining(&self) -> impl Iterator<Item = &Expr> {
        let chosen = self.partitions.as_ref().map(|p| &p.chosen_by[..]).unwrap_or_default();
        self.conjuncts.iter().enumerate().filter(move |(i, _)| !chosen.contains(i)).map(|(_, c)| c)
    }
}
