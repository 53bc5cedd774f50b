//! Physical plans: the operators that run, named as Flink names them, with the exchanges
//! between them, their parallelism and their changelog modes. EXPLAIN prints these; the job
//! graph is built from them.

use weir_connectors::TableDescriptor;
use weir_operators::aggregate::AggregateCall;
use weir_operators::expr::Expr;
use weir_runtime::{Field, ShipStrategy, Value};

use crate::plan::{Node, Plan};

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

/// What a physical node does.
#[derive(Debug, Clone)]
pub enum PhysicalKind {
    /// Reads a table.
    TableSourceScan {
        /// The table.
        table: TableDescriptor,
        /// The physical columns read.
        projection: Vec<usize>,
    },
    /// Constant rows.
    Values {
        /// The rows.
        rows: Vec<Vec<Value>>,
    },
    /// Filter and projection.
    Calc {
        /// Output expressions over the input.
        projections: Vec<Expr>,
        /// Rows where this is not TRUE are dropped.
        condition: Option<Expr>,
    },
    /// Watermarks from an expression.
    WatermarkAssigner {
        /// The rowtime column.
        rowtime: usize,
        /// The watermark of a row.
        watermark: Expr,
    },
    /// Redistributes rows among subtasks.
    Exchange {
        /// How.
        strategy: ShipStrategy,
    },
    /// A streaming group aggregate.
    GroupAggregate {
        /// Grouping columns of the input.
        keys: Vec<usize>,
        /// The aggregates.
        calls: Vec<AggregateCall>,
        /// Whether `-U` is emitted before `+U`.
        update_before: bool,
        /// Whether the input retracts rows.
        retracting: bool,
    },
    /// UNION ALL.
    Union,
    /// Writes into a table.
    Sink {
        /// The table.
        table: TableDescriptor,
        /// Primary key columns of the table.
        primary_key: Vec<usize>,
    },
}

/// A physical operator with its inputs.
#[derive(Debug, Clone)]
pub struct PhysicalNode {
    /// What it does.
    pub kind: PhysicalKind,
    /// Its inputs.
    pub inputs: Vec<PhysicalNode>,
    /// Its output columns.
    pub fields: Vec<Field>,
    /// The row kinds it emits.
    pub changelog: ChangelogMode,
}

impl PhysicalNode {
    /// A text that is equal for nodes that compute the same rows (scans of the same columns).
    pub fn reuse_digest(&self) -> Option<String> {
        match &self.kind {
            PhysicalKind::TableSourceScan { table, projection } => Some(format!("{}{projection:?}", table.name)),
            _ => None,
        }
    }

    /// Flink's name for the node.
    pub fn name(&self) -> &'static str {
        match self.kind {
            PhysicalKind::TableSourceScan { .. } => "TableSourceScan",
            PhysicalKind::Values { .. } => "Values",
            PhysicalKind::Calc { .. } => "Calc",
            PhysicalKind::WatermarkAssigner { .. } => "WatermarkAssigner",
            PhysicalKind::Exchange { .. } => "Exchange",
            PhysicalKind::GroupAggregate { .. } => "GroupAggregate",
            PhysicalKind::Union => "Union",
            PhysicalKind::Sink { .. } => "Sink",
        }
    }
}

/// Whether a sink wants `-U` rows: every sink but `blackhole` (which drops them, as Flink's does).
fn sink_wants_update_before(table: &TableDescriptor) -> bool {
    table.options.get("connector").map(String::as_str) != Some("blackhole")
}

/// Builds the physical plan of `plan` written into `table`.
pub fn physical_sink(plan: Plan, table: &TableDescriptor, primary_key: Vec<usize>) -> PhysicalNode {
    let input = physical(plan, sink_wants_update_before(table));
    PhysicalNode {
        fields: input.fields.clone(),
        kind: PhysicalKind::Sink { table: table.clone(), primary_key },
        inputs: vec![input],
        changelog: ChangelogMode::default(),
    }
}

/// Builds the physical plan of a query whose result is collected with every row kind.
pub fn physical_query(plan: Plan) -> PhysicalNode {
    physical(plan, true)
}

/// The physical plan of `plan`; `update_before` says whether the consumer needs `-U` rows.
fn physical(plan: Plan, update_before: bool) -> PhysicalNode {
    let Plan { node, fields } = plan;
    let leaf =
        |kind| PhysicalNode { kind, inputs: Vec::new(), fields: fields.clone(), changelog: ChangelogMode::INSERT_ONLY };
    match node {
        Node::Scan { table, projection } => leaf(PhysicalKind::TableSourceScan { table, projection }),
        Node::Values { rows } => leaf(PhysicalKind::Values { rows }),
        Node::Calc { input, projections, condition } => {
            let input = physical(*input, update_before);
            let changelog = input.changelog;
            PhysicalNode { kind: PhysicalKind::Calc { projections, condition }, inputs: vec![input], fields, changelog }
        }
        Node::WatermarkAssigner { input, rowtime, watermark } => {
            let input = physical(*input, update_before);
            let changelog = input.changelog;
            PhysicalNode {
                kind: PhysicalKind::WatermarkAssigner { rowtime, watermark },
                inputs: vec![input],
                fields,
                changelog,
            }
        }
        Node::Aggregate { input, keys, calls } => {
            // An aggregate retracts what it took back, so it needs its input's `-U` rows.
            let input = physical(*input, true);
            let retracting = !input.changelog.is_insert_only();
            let strategy = if keys.is_empty() { ShipStrategy::Single } else { ShipStrategy::Hash(keys.clone()) };
            let exchange = PhysicalNode {
                kind: PhysicalKind::Exchange { strategy },
                fields: input.fields.clone(),
                changelog: input.changelog,
                inputs: vec![input],
            };
            let changelog = ChangelogMode { insert: true, update_before, update_after: true, delete: retracting };
            PhysicalNode {
                kind: PhysicalKind::GroupAggregate { keys, calls, update_before, retracting },
                inputs: vec![exchange],
                fields,
                changelog,
            }
        }
        Node::Union { inputs } => {
            let inputs: Vec<PhysicalNode> = inputs.into_iter().map(|i| physical(i, update_before)).collect();
            let changelog = inputs.iter().fold(ChangelogMode::default(), |m, i| m.union(i.changelog));
            PhysicalNode { kind: PhysicalKind::Union, inputs, fields, changelog }
        }
    }
}
