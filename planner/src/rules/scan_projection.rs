//! Scans of tables whose connector takes no projection (Flink's sources without
//! `SupportsProjectionPushDown`, such as datagen) read every column: the projection column
//! pruning chose for them becomes a Calc right above the scan, merged into a Calc that was
//! already there, as Flink plans them. A watermark assigner right above such a scan takes the
//! scan's rows whole and the Calc goes above it, as Flink does not move a projection below a
//! watermark assigner.

use weir_connectors::ScanContext;
use weir_operators::expr::Expr;

use super::prune_columns::merge_calcs;
use crate::error::Result;
use crate::plan::{Node, Plan};

/// `plan` with every scan of a table that takes no projection reading all its columns.
///
/// # Errors
/// A table whose connector refuses its options.
pub fn unproject_scans(plan: Plan) -> Result<Plan> {
    let Plan { node, fields } = plan;
    let node = node.try_map_inputs(unproject_scans)?;
    let plan = Plan { node, fields };
    Ok(match plan.node {
        Node::Scan { ref table, ref projection, .. }
            if !projection.iter().copied().eq(0..table.schema.fields.len())
                && !table.abilities(&ScanContext::default()).accepts_projection =>
        {
            full_scan(plan)
        }
        Node::Calc { input, projections, condition } => merged(*input, projections, condition, plan.fields),
        Node::WatermarkAssigner { input, rowtime, watermark } => {
            below_projection(*input, rowtime, watermark, plan.fields)
        }
        node => Plan { node, fields: plan.fields },
    })
}

/// A Calc of `projections` and `condition` over `input`, merged into `input` when it is a Calc.
fn merged(input: Plan, projections: Vec<Expr>, condition: Option<Expr>, fields: Vec<weir_runtime::Field>) -> Plan {
    let (input, projections, condition) = merge_calcs(input, projections, condition);
    Plan { node: Node::Calc { input: Box::new(input), projections, condition }, fields }
}

/// A watermark assigner over `input`; when `input` is a projection of the columns of a whole
/// scan, the assigner goes between the scan and the projection (its rowtime and watermark
/// expression read the scan's columns).
fn below_projection(input: Plan, rowtime: usize, watermark: Expr, fields: Vec<weir_runtime::Field>) -> Plan {
    let columns = |calc: &Plan| match &calc.node {
        Node::Calc { input, projections, condition: None } if matches!(input.node, Node::Scan { .. }) => projections
            .iter()
            .map(|p| match p {
                Expr::Column { index, .. } => Some(*index),
                _ => None,
            })
            .collect::<Option<Vec<usize>>>(),
        _ => None,
    };
    let Some(columns) = columns(&input) else {
        let node = Node::WatermarkAssigner { input: Box::new(input), rowtime, watermark };
        return Plan { node, fields };
    };
    let Plan { node: Node::Calc { input: scan, projections, .. }, .. } = input else { unreachable!("a Calc") };
    let map: Vec<Option<usize>> = columns.iter().map(|&c| Some(c)).collect();
    // The scan's fields, the rowtime marked as the assigner marks it.
    let mut scan_fields = scan.fields.clone();
    scan_fields[columns[rowtime]] = fields[rowtime].clone();
    let assigner = Node::WatermarkAssigner { input: scan, rowtime: columns[rowtime], watermark: watermark.remap(&map) };
    let projections = projections
        .into_iter()
        .zip(&fields)
        .map(|(p, f)| match p {
            Expr::Column { index, .. } => Expr::column(index, f.data_type.clone()),
            other => other,
        })
        .collect();
    let assigned = Plan { node: assigner, fields: scan_fields };
    Plan { node: Node::Calc { input: Box::new(assigned), projections, condition: None }, fields }
}

/// The scan `plan` reading every column of its table, under a Calc that keeps what it read.
fn full_scan(plan: Plan) -> Plan {
    let Plan { node: Node::Scan { table, projection, changelog, key, filter, .. }, fields } = plan else {
        unreachable!("full_scan is called with a scan")
    };
    // The columns read keep their fields (time attributes marked); the others are the table's.
    let all_fields: Vec<weir_runtime::Field> = (0..table.schema.fields.len())
        .map(|c| match projection.iter().position(|&p| p == c) {
            Some(k) => fields[k].clone(),
            None => table.schema.fields[c].clone(),
        })
        .collect();
    let projections = projection.iter().map(|&c| Expr::column(c, all_fields[c].data_type.clone())).collect();
    let all: Vec<usize> = (0..table.schema.fields.len()).collect();
    let scan = Node::Scan { table, projection: all, changelog, key, filter, projected: false };
    Plan {
        node: Node::Calc { input: Box::new(Plan { node: scan, fields: all_fields }), projections, condition: None },
        fields,
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::prune_columns::prune_plan;
    use crate::rules::testing::{before_after, Fixture};

    /// A datagen scan takes no projection: it reads every column and a Calc above it keeps
    /// the ones the query uses; a filesystem scan keeps its projection.
    #[test]
    fn scans_without_projection_push_down_read_every_column() {
        let f = Fixture::new(
            "CREATE TABLE gen (a INT, b STRING, c BIGINT) WITH ('connector' = 'datagen');\n\
             CREATE TABLE files (a INT, b STRING, c BIGINT) \
             WITH ('connector' = 'filesystem', 'path' = 'files.csv', 'format' = 'csv');",
        );
        let plan = prune_plan(f.bind("SELECT c FROM gen"));
        expect![[r#"
            before:
            LogicalTableScan(table=[[default_catalog, default_database, gen]], project=[c], changelogMode=[I])
            after:
            LogicalProject(c=[$2])
            +- LogicalTableScan(table=[[default_catalog, default_database, gen]], project=[a, b, c], changelogMode=[I])
        "#]]
        .assert_eq(&before_after(&plan, &super::unproject_scans(plan.clone()).unwrap()));
        let plan = prune_plan(f.bind("SELECT c FROM files"));
        expect![[r#"
            before:
            LogicalTableScan(table=[[default_catalog, default_database, files]], project=[c], changelogMode=[I])
            after:
            LogicalTableScan(table=[[default_catalog, default_database, files]], project=[c], changelogMode=[I])
        "#]]
        .assert_eq(&before_after(&plan, &super::unproject_scans(plan.clone()).unwrap()));
    }
}
