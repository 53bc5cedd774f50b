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

use weir_connectors::ScanContext;
use weir_operators::expr::{Expr, Function};
use weir_runtime::Value;

use crate::error::Result;
use crate::plan::{Node, Plan};

/// Pushes filters into the scans of `plan` that take them.
///
/// # Errors
/// A table whose connector refuses its options.
pub fn push_filter_into_scan(plan: Plan) -> Result<Plan> {
    let Plan { node, fields } = plan;
    let node = match node {
        Node::Calc { input, projections, condition: Some(condition) } => {
            let input = match input.node {
                Node::Scan { table, projection, changelog, key: None, filter, projected } if filter.is_empty() => {
                    let offered = table.abilities(&ScanContext::default());
                    let key = if offered.point_reads {
                        pinned_key(&condition, &projection, &table.primary_key)
                    } else {
                        None
                    };
                    let filter = if offered.accepts_filters && key.is_none() {
                        table_conjuncts(&condition, &projection)
                    } else {
                        Vec::new()
                    };
                    let node = Node::Scan { table, projection, changelog, key, filter, projected };
                    Plan { node, fields: input.fields }
                }
                node => push_filter_into_scan(Plan { node, fields: input.fields })?,
            };
            Node::Calc { input: Box::new(input), projections, condition: Some(condition) }
        }
        other => other.try_map_inputs(push_filter_into_scan)?,
    };
    Ok(Plan { node, fields })
}

/// The deterministic conjuncts of `condition` (over the scan's columns) that Flink can hand to a
/// connector, over the table's columns (`projection` maps the one to the other).
fn table_conjuncts(condition: &Expr, projection: &[usize]) -> Vec<Expr> {
    let mut conjuncts = Vec::new();
    split_and(condition, &mut conjuncts);
    let map: Vec<Option<usize>> = projection.iter().map(|&c| Some(c)).collect();
    conjuncts.into_iter().filter(|c| c.is_deterministic() && is_expressible(c)).map(|c| c.clone().remap(&map)).collect()
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
