//! Filters pushed into scans, as Flink's `PushFilterIntoTableSourceScanRule` pushes them, by what
//! the connector offers ([`SourceAbilities`]): the filter stays above the scan in both cases.
//!
//! - A scan that takes filters (`accepts_filters`, the filesystem connector, which like Flink's
//!   keeps them all as remaining) records the filter's conjuncts; EXPLAIN shows them as
//!   `filter=[…]`, and only scans with equal filters are shared by a statement set.
//! - A scan that reads single keys (`point_reads`, the table store's tables) under a filter that
//!   pins every primary key column to a constant (`WHERE id = 1`) becomes a point query: it
//!   reads that one row and ends, in either mode.
//!
//! [`SourceAbilities`]: weir_connectors::SourceAbilities

use weir_connectors::{ScanContext, SourceTable};
use weir_operators::expr::{Expr, Function};
use weir_runtime::Value;

use crate::error::Result;
use crate::plan::{Node, PartitionPruning, Plan, ScanFilter};

/// Pushes filters into the scans of `plan` that take them; a partitioned table's scan under
/// conjuncts over its partition columns alone reads only the partitions they keep (listed now,
/// as Flink lists them when it plans), and those conjuncts leave the filter above: every row of
/// a kept partition passes them. A scan left with no partition is an empty `Values`.
///
/// # Errors
/// A table whose connector refuses its options, or whose partitions cannot be listed.
pub fn push_filter_into_scan(plan: Plan) -> Result<Plan> {
    let Plan { node, fields } = plan;
    let node = match node {
        Node::Calc { input, projections, condition: Some(condition) } => {
            let (input, condition) = match input.node {
                Node::Scan { table, projection, changelog, key: None, filter, projected } if filter.is_empty() => {
                    let offered = table.abilities(&ScanContext::default());
                    let key = if offered.point_reads {
                        pinned_key(&condition, &projection, &table.primary_key)
                    } else {
                        None
                    };
                    let taken = if offered.accepts_filters && key.is_none() {
                        table_conjuncts(&condition, &projection)
                    } else {
                        Vec::new()
                    };
                    let conjuncts: Vec<Expr> = taken.iter().map(|(_, c)| c.clone()).collect();
                    let partitions = partition_pruning(&table, &conjuncts)?;
                    // The conjuncts that chose partitions leave the filter above.
                    let chosen: Vec<usize> = match &partitions {
                        Some(p) => p.chosen_by.iter().map(|&k| taken[k].0).collect(),
                        None => Vec::new(),
                    };
                    // No partition left: no row either, whatever the Calc computes.
                    if partitions.as_ref().is_some_and(|p| p.kept.is_empty()) {
                        return Ok(Plan { node: Node::Values { rows: Vec::new() }, fields });
                    }
                    let condition = remaining_condition(&condition, &chosen);
                    let filter = ScanFilter { conjuncts, partitions };
                    let node = Node::Scan { table, projection, changelog, key, filter, projected };
                    (Plan { node, fields: input.fields }, condition)
                }
                node => (push_filter_into_scan(Plan { node, fields: input.fields })?, Some(condition)),
            };
            Node::Calc { input: Box::new(input), projections, condition }
        }
        other => other.try_map_inputs(push_filter_into_scan)?,
    };
    Ok(Plan { node, fields })
}

/// Whether conjuncts chose the partitions of a scan in `plan`.
pub fn chose_partitions(plan: &Plan) -> bool {
    match &plan.node {
        Node::Scan { filter, .. } => filter.partitions.is_some(),
        other => other.inputs().into_iter().any(chose_partitions),
    }
}

/// The deterministic conjuncts of `condition` (over the scan's columns) that Flink can hand to a
/// connector, over the table's columns (`projection` maps the one to the other), each with its
/// position among the condition's conjuncts.
fn table_conjuncts(condition: &Expr, projection: &[usize]) -> Vec<(usize, Expr)> {
    let mut conjuncts = Vec::new();
    split_and(condition, &mut conjuncts);
    let map: Vec<Option<usize>> = projection.iter().map(|&c| Some(c)).collect();
    conjuncts
        .into_iter()
        .enumerate()
        .filter(|(_, c)| c.is_deterministic() && is_expressible(c))
        .map(|(i, c)| (i, c.clone().remap(&map)))
        .collect()
}

/// `condition` without its conjuncts at the positions `gone`; `None` when none is left.
fn remaining_condition(condition: &Expr, gone: &[usize]) -> Option<Expr> {
    if gone.is_empty() {
        return Some(condition.clone());
    }
    let mut conjuncts = Vec::new();
    split_and(condition, &mut conjuncts);
    let left: Vec<Expr> =
        conjuncts.into_iter().enumerate().filter(|(i, _)| !gone.contains(i)).map(|(_, c)| c.clone()).collect();
    match left.len() {
        0 => None,
        1 => left.into_iter().next(),
        _ => Some(Expr::Call { function: Function::And, args: left, ty: condition.ty().clone() }),
    }
}

/// The partitions of a partitioned `table` the `conjuncts` (over the table's columns) keep, as
/// Flink prunes them: those over partition columns alone, evaluated on each listed partition's
/// values; a partition where one is FALSE or NULL holds no row the query keeps (one that fails
/// to evaluate is kept: the rows report the failure). `None` when no conjunct is over partition
/// columns alone, or the table lists no partitions.
///
/// # Errors
/// Partitions that cannot be listed.
fn partition_pruning(table: &SourceTable, conjuncts: &[Expr]) -> Result<Option<PartitionPruning>> {
    let fields = &table.schema.fields;
    let positions: Vec<usize> =
        table.partition_keys.iter().filter_map(|k| fields.iter().position(|f| &f.name == k)).collect();
    if positions.is_empty() || positions.len() != table.partition_keys.len() {
        return Ok(None);
    }
    let on_partitions = |conjunct: &Expr| {
        let mut used = vec![false; fields.len()];
        conjunct.mark_columns(&mut used);
        used.iter().enumerate().all(|(column, used)| !used || positions.contains(&column))
    };
    let chosen_by: Vec<usize> = (0..conjuncts.len()).filter(|&k| on_partitions(&conjuncts[k])).collect();
    if chosen_by.is_empty() {
        return Ok(None);
    }
    let Some(listed) = table.partitions()? else { return Ok(None) };
    let kept = listed
        .into_iter()
        .filter(|partition| {
            let mut row = vec![Value::Null; fields.len()];
            for (&column, value) in positions.iter().zip(&partition.values) {
                row[column] = value.clone();
            }
            chosen_by.iter().all(|&k| !matches!(conjuncts[k].eval(&row), Ok(Value::Boolean(false) | Value::Null)))
        })
        .collect();
    Ok(Some(PartitionPruning { kept, chosen_by }))
}

/// Whether Flink turns `expr` into a connector's filter expression: its converter has no form
/// for a subscript (`ITEM`), so such conjuncts stay above only (a ROW's field is pushed).
fn is_expressible(expr: &Expr) -> bool {
    match expr {
        Expr::Column { .. } | Expr::Literal { .. } => true,
        Expr::Call { function: Function::Scalar(f), .. } if f.name() == "ITEM" => false,
        Expr::Call { args, .. } => args.iter().all(is_expressible),
    }
}

/// The values `condition` pins every primary key column to (in key order), when its
/// conjuncts include `column = constant` for each; `projection` maps the scan's output columns
/// to the table's.
fn pinned_key(condition: &Expr, projection: &[usize], primary_key: &[usize]) -> Option<Vec<Value>> {
    if primary_key.is_empty() {
        return None;
    }
    let mut conjuncts = Vec::new();
    split_and(condition, &mut conjuncts);
    let mut pinned: Vec<(usize, Value)> = Vec::new();
    for conjunct in conjuncts {
        let Expr::Call { function: Function::Equals, args, .. } = conjunct else { continue };
        let (column, constant) = match args.as_slice() {
            [Expr::Column { index, ty }, other] | [other, Expr::Column { index, ty }] if is_constant(other) => {
                // The constant, as a value of the column's type (NULL pins nothing).
                let value = other.clone().cast_to(ty).eval(&[]).ok()?;
                (projection[*index], value)
            }
            _ => continue,
        };
        if matches!(constant, Value::Null) {
            return None;
        }
        pinned.push((column, constant));
    }
    primary_key.iter().map(|k| pinned.iter().find(|(c, _)| c == k).map(|(_, v)| v.clone())).collect()
}

/// The conjuncts of `expr` (itself when it is no AND), into `out`.
pub(crate) fn split_and<'a>(expr: &'a Expr, out: &mut Vec<&'a Expr>) {
    match expr {
        Expr::Call { function: Function::And, args, .. } => args.iter().for_each(|a| split_and(a, out)),
        other => out.push(other),
    }
}

/// Whether `expr` reads no column.
fn is_constant(expr: &Expr) -> bool {
    match expr {
        Expr::Column { .. } => false,
        Expr::Literal { .. } => true,
        Expr::Call { function, args, .. } => function.is_deterministic() && args.iter().all(is_constant),
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::prune_columns::prune_plan;
    use crate::rules::testing::{before_after, Fixture};

    const TABLES: &str = "CREATE TABLE files (id BIGINT, product STRING, qty INT) \
        WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv');
        CREATE TABLE store (id BIGINT, v INT, PRIMARY KEY (id) NOT ENFORCED);
        CREATE TABLE gen (id BIGINT, qty INT) WITH ('connector' = 'datagen');";

    fn pushed(sql: &str) -> String {
        let f = Fixture::new(TABLES);
        let before = prune_plan(f.bind(sql));
        let after = super::push_filter_into_scan(before.clone()).unwrap();
        before_after(&before, &after)
    }

    #[test]
    fn a_scan_that_takes_filters_records_the_filter_and_keeps_the_calc() {
        expect![[r#"
            before:
            LogicalProject(id=[$0])
            +- LogicalFilter(condition=[AND(>($2, 1), =($1, _UTF-16LE'a'))])
               +- LogicalTableScan(table=[[default_catalog, default_database, files]], project=[id, product, qty], changelogMode=[I])
            after:
            LogicalProject(id=[$0])
            +- LogicalFilter(condition=[AND(>($2, 1), =($1, _UTF-16LE'a'))])
               +- LogicalTableScan(table=[[default_catalog, default_database, files]], project=[id, product, qty], filter=[>(qty, 1), =(product, _UTF-16LE'a')], changelogMode=[I])
        "#]]
        .assert_eq(&pushed("SELECT id FROM files WHERE qty > 1 AND product = 'a';"));
    }

    #[test]
    fn a_filter_pinning_the_primary_key_makes_a_point_query() {
        expect![[r#"
            before:
            LogicalProject(v=[$1])
            +- LogicalFilter(condition=[=($0, 7)])
               +- LogicalTableScan(table=[[default_catalog, default_database, store]], project=[id, v], changelogMode=[I])
            after:
            LogicalProject(v=[$1])
            +- LogicalFilter(condition=[=($0, 7)])
               +- LogicalTableScan(table=[[default_catalog, default_database, store]], project=[id, v], key=[7], changelogMode=[I])
        "#]]
        .assert_eq(&pushed("SELECT v FROM store WHERE id = 7;"));
    }

    #[test]
    fn other_scans_and_partial_keys_take_nothing() {
        expect![[r#"
            before:
            LogicalProject(id=[$0])
            +- LogicalFilter(condition=[>($1, 1)])
               +- LogicalTableScan(table=[[default_catalog, default_database, gen]], project=[id, qty], changelogMode=[I])
            after:
            LogicalProject(id=[$0])
            +- LogicalFilter(condition=[>($1, 1)])
               +- LogicalTableScan(table=[[default_catalog, default_database, gen]], project=[id, qty], changelogMode=[I])
        "#]]
        .assert_eq(&pushed("SELECT id FROM gen WHERE qty > 1;"));
        expect![[r#"
            before:
            LogicalProject(v=[$1])
            +- LogicalFilter(condition=[>($0, 7)])
               +- LogicalTableScan(table=[[default_catalog, default_database, store]], project=[id, v], changelogMode=[I])
            after:
            LogicalProject(v=[$1])
            +- LogicalFilter(condition=[>($0, 7)])
               +- LogicalTableScan(table=[[default_catalog, default_database, store]], project=[id, v], changelogMode=[I])
        "#]]
        .assert_eq(&pushed("SELECT v FROM store WHERE id > 7;"));
    }
}
