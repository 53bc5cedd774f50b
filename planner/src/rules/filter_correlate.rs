//! Filters moved below a correlate, as Calcite's `FilterCorrelateRule` moves them: the
//! conjuncts of a `WHERE` above `CROSS JOIN UNNEST(…)` or `LATERAL TABLE(…)` that read only the
//! joined row's input columns filter that input instead, before its rows are multiplied (and
//! from there reach the scan's filter push-down). A `LEFT JOIN` keeps its filter above, where
//! it also sees the NULL generated columns.

use weir_operators::expr::{Expr, Function};

use super::push_filter_into_scan::split_and;
use crate::plan::{Node, Plan};

/// Moves filters below the correlates of `plan`.
pub fn filter_correlate(plan: Plan) -> Plan {
    let Plan { node, fields } = plan;
    let node = match node {
        Node::Calc { input, projections, condition: Some(condition) } => {
            let input = filter_correlate(*input);
            match input.node {
                Node::Correlate { input: below, table, left: false } => {
                    let width = below.fields.len();
                    let mut conjuncts = Vec::new();
                    split_and(&condition, &mut conjuncts);
                    let (pushed, kept): (Vec<Expr>, Vec<Expr>) =
                        conjuncts.into_iter().cloned().partition(|c| reads_only_below(c, width));
                    let below = if pushed.is_empty() { *below } else { filtered(*below, and(pushed)) };
                    let unnest = Plan {
                        node: Node::Correlate { input: Box::new(below), table, left: false },
                        fields: input.fields,
                    };
                    let condition = (!kept.is_empty()).then(|| and(kept));
                    Node::Calc { input: Box::new(unnest), projections, condition }
                }
                node => Node::Calc {
                    input: Box::new(Plan { node, fields: input.fields }),
                    projections,
                    condition: Some(condition),
                },
            }
        }
        other => other
            .try_map_inputs(|input| Ok::<_, std::convert::Infallible>(filter_correlate(input)))
            .unwrap_or_else(|e| match e {}),
    };
    Plan { node, fields }
}

fn and(mut conjuncts: Vec<Expr>) -> Expr {
    if conjuncts.len() == 1 {
        return conjuncts.remove(0);
    }
    Expr::Call { function: Function::And, args: conjuncts, ty: weir_runtime::DataType::boolean() }
}

/// Whether `condition` reads only columns below `width` (the UNNEST's input columns).
fn reads_only_below(condition: &Expr, width: usize) -> bool {
    let mut pending = vec![condition];
    while let Some(e) = pending.pop() {
        match e {
            Expr::Column { index, .. } if *index >= width => return false,
            Expr::Call { function, args, .. } => {
                if !function.is_deterministic() {
                    return false;
                }
                pending.extend(args);
            }
            _ => {}
        }
    }
    true
}

/// `plan` under `condition`, every column kept.
fn filtered(plan: Plan, condition: Expr) -> Plan {
    let projections = plan.fields.iter().enumerate().map(|(i, f)| Expr::column(i, f.data_type.clone())).collect();
    let fields = plan.fields.clone();
    Plan { node: Node::Calc { input: Box::new(plan), projections, condition: Some(condition) }, fields }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{before_after, Fixture};

    #[test]
    fn conjuncts_on_the_input_go_below_a_cross_join_unnest() {
        let f = Fixture::new("CREATE TABLE e (id INT, tags ARRAY<STRING>) WITH ('connector' = 'datagen');");
        let before = f.bind("SELECT id, tag FROM e CROSS JOIN UNNEST(tags) AS t(tag) WHERE id > 0 AND tag <> 'x';");
        let after = super::filter_correlate(before.clone());
        expect![[r#"
            before:
            LogicalProject(id=[$0], tag=[$2])
            +- LogicalFilter(condition=[AND(>($0, 0), <>($2, _UTF-16LE'x'))])
               +- LogicalCorrelate(correlation=[$cor0], joinType=[inner], requiredColumns=[{1}])
                  +- LogicalTableScan(table=[[default_catalog, default_database, e]], project=[id, tags], changelogMode=[I])
            after:
            LogicalProject(id=[$0], tag=[$2])
            +- LogicalFilter(condition=[<>($2, _UTF-16LE'x')])
               +- LogicalCorrelate(correlation=[$cor0], joinType=[inner], requiredColumns=[{1}])
                  +- LogicalProject(id=[$0], tags=[$1])
                     +- LogicalFilter(condition=[>($0, 0)])
                        +- LogicalTableScan(table=[[default_catalog, default_database, e]], project=[id, tags], changelogMode=[I])
        "#]].assert_eq(&before_after(&before, &after));
        // A LEFT JOIN UNNEST keeps its filter above.
        let left = f.bind("SELECT id, tag FROM e LEFT JOIN UNNEST(tags) AS t(tag) ON TRUE WHERE id > 0;");
        let kept = super::filter_correlate(left.clone());
        assert_eq!(crate::explain::logical_plan_text(&kept), crate::explain::logical_plan_text(&left));
    }
}
