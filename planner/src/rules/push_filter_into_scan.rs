//! A filter that pins every primary key column to a constant (`WHERE id = 1`) is pushed into a
//! scan whose connector reads single keys ([`SourceAbilities::point_reads`], the table store's
//! tables): the scan reads that one row and ends, in either mode. The filter stays above the
//! scan. Flink's `PushFilterIntoTableSourceScanRule`, for key filters.
//!
//! [`SourceAbilities::point_reads`]: weir_connectors::SourceAbilities::point_reads

use weir_connectors::{ConnectorRegistry, ScanContext};
use weir_operators::expr::{Expr, Function};
use weir_runtime::Value;

use crate::error::Result;
use crate::plan::{Node, Plan};

/// Pushes key filters into the scans of `plan` that take them.
///
/// # Errors
/// A table whose connector refuses its options.
pub fn push_filter_into_scan(plan: Plan, registry: &ConnectorRegistry) -> Result<Plan> {
    let Plan { node, fields } = plan;
    let node = match node {
        Node::Calc { input, projections, condition: Some(condition) } => {
            let input = match input.node {
                Node::Scan { table, projection, changelog, key: None }
                    if registry.source_abilities(&table, &ScanContext::default())?.point_reads =>
                {
                    let key = pinned_key(&condition, &projection, &table.primary_key);
                    Plan { node: Node::Scan { table, projection, changelog, key }, fields: input.fields }
                }
                node => push_filter_into_scan(Plan { node, fields: input.fields }, registry)?,
            };
            Node::Calc { input: Box::new(input), projections, condition: Some(condition) }
        }
        other => other.try_map_inputs(|input| push_filter_into_scan(input, registry))?,
    };
    Ok(Plan { node, fields })
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

fn split_and<'a>(expr: &'a Expr, out: &mut Vec<&'a Expr>) {
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
