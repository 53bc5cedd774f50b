//! Scan reuse across the statements of a statement set: a table read by several INSERTs is
//! read once. Its scan reads the union of the columns the statements need, and each statement
//! projects its own columns from it with a Calc (Flink's ScanReuser). Scans with different
//! pushed-down filters read different rows and are not shared.

use std::collections::{BTreeMap, BTreeSet};

use weir_operators::expr::Expr;

use crate::plan::{Node, Plan};

/// Scans of the same table with the same pushed filter read the same rows.
fn reuse_key(table: &str, filter: &crate::plan::ScanFilter) -> String {
    format!("{table}{filter:?}")
}

fn collect_scans(plan: &Plan, scans: &mut BTreeMap<String, (usize, BTreeSet<usize>, bool)>) {
    match &plan.node {
        // A point query reads its own row.
        Node::Scan { key: Some(_), .. } => {}
        Node::Scan { table, projection, filter, projected, .. } => {
            let entry = scans.entry(reuse_key(&table.name, filter)).or_default();
            entry.0 += 1;
            entry.1.extend(projection.iter().copied());
            entry.2 |= projected;
        }
        node => node.inputs().into_iter().for_each(|i| collect_scans(i, scans)),
    }
}

/// Rewrites `plans` so that every table scanned more than once is scanned with one shared
/// projection, each use narrowing it with a Calc.
pub fn share_scans(plans: Vec<Plan>) -> Vec<Plan> {
    let mut scans = BTreeMap::new();
    plans.iter().for_each(|p| collect_scans(p, &mut scans));
    let shared: BTreeMap<String, (Vec<usize>, bool)> = scans
        .into_iter()
        .filter(|(_, (count, _, _))| *count > 1)
        .map(|(table, (_, columns, projected))| (table, (columns.into_iter().collect(), projected)))
        .collect();
    if shared.is_empty() {
        return plans;
    }
    plans.into_iter().map(|p| rewrite(p, &shared)).collect()
}

/// `shared`: per reuse key, the union of the columns its scans read and whether any of them had
/// a projection pushed (the shared scan has one then).
fn rewrite(plan: Plan, shared: &BTreeMap<String, (Vec<usize>, bool)>) -> Plan {
    let Plan { node, fields } = plan;
    let node = match node {
        Node::Scan { table, projection, changelog, key: None, filter, projected } => {
            match shared.get(&reuse_key(&table.name, &filter)) {
                Some((union, any_projected)) if union != &projection => {
                    let scan_fields = union.iter().map(|&c| table.schema.fields[c].clone()).collect::<Vec<_>>();
                    let projections = projection
                        .iter()
                        .map(|c| {
                            let at = union.iter().position(|u| u == c).unwrap_or(0);
                            Expr::column(at, scan_fields[at].data_type.clone())
                        })
                        .collect();
                    let node = Node::Scan {
                        table,
                        projection: union.clone(),
                        changelog,
                        key: None,
                        filter,
                        projected: *any_projected,
                    };
                    let scan = Plan { node, fields: scan_fields };
                    Node::Calc { input: Box::new(scan), projections, condition: None }
                }
                Some((_, any_projected)) => Node::Scan {
                    table,
                    projection,
                    changelog,
                    key: None,
                    filter,
                    projected: projected || *any_projected,
                },
                None => Node::Scan { table, projection, changelog, key: None, filter, projected },
            }
        }
        // A Calc right above a shared scan reads the shared columns itself (no Calc between).
        Node::Calc { input, projections, condition } => match rewrite(*input, shared) {
            Plan { node: Node::Calc { input: scan, projections: narrowing, condition: None }, .. }
                if matches!(scan.node, Node::Scan { .. }) =>
            {
                Node::Calc {
                    input: scan,
                    projections: projections.into_iter().map(|p| p.substitute(&narrowing)).collect(),
                    condition: condition.map(|c| c.substitute(&narrowing)),
                }
            }
            input => Node::Calc { input: Box::new(input), projections, condition },
        },
        other => match other.try_map_inputs(|input| Ok::<Plan, std::convert::Infallible>(rewrite(input, shared))) {
            Ok(node) => node,
            Err(never) => match never {},
        },
    };
    Plan { node, fields }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::explain::logical_plan_text;
    use crate::rules::prune_columns::prune_plan;
    use crate::rules::push_filter_into_scan::push_filter_into_scan;
    use crate::rules::testing::Fixture;

    fn shared(queries: &[&str]) -> String {
        let f = Fixture::new(
            "CREATE TABLE orders (id BIGINT, product STRING, qty INT) \
             WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv');",
        );
        let plans = queries.iter().map(|q| push_filter_into_scan(prune_plan(f.bind(q))).unwrap()).collect();
        super::share_scans(plans).iter().map(logical_plan_text).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn statements_reading_one_table_share_one_scan_of_the_columns_they_need() {
        expect![[r#"
            LogicalProject(id=[$0], product=[$1])
            +- LogicalTableScan(table=[[default_catalog, default_database, orders]], project=[id, product, qty], changelogMode=[I])

            LogicalProject(id=[$0], qty=[$2])
            +- LogicalTableScan(table=[[default_catalog, default_database, orders]], project=[id, product, qty], changelogMode=[I])
        "#]]
        .assert_eq(&shared(&["SELECT id, product FROM orders;", "SELECT id, qty FROM orders;"]));
    }

    #[test]
    fn scans_share_only_equal_pushed_filters() {
        expect![[r#"
            LogicalProject(id=[$0])
            +- LogicalFilter(condition=[>($1, 1)])
               +- LogicalTableScan(table=[[default_catalog, default_database, orders]], project=[id, qty], filter=[>(qty, 1)], changelogMode=[I])

            LogicalProject(qty=[$0])
            +- LogicalFilter(condition=[<($0, 5)])
               +- LogicalTableScan(table=[[default_catalog, default_database, orders]], project=[qty], filter=[<(qty, 5)], changelogMode=[I])
        "#]]
        .assert_eq(&shared(&["SELECT id FROM orders WHERE qty > 1;", "SELECT qty FROM orders WHERE qty < 5;"]));
    }
}
