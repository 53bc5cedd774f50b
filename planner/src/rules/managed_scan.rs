//! Scans of managed tables (declared without `'connector'`): what they emit and how much they
//! read.
//!
//! - In streaming mode a scan follows the table, emitting the changes Fluss declares for it
//!   (`[I]` for `first_row`, `[I,UB,UA]`, or `[I,UB,UA,D]` when deletes are allowed); in batch
//!   mode it reads the current rows, insert-only.
//! - A filter that pins every primary key column to a constant (`WHERE id = 1`) makes the scan
//!   a point query: it reads that one row and ends, in either mode. The filter stays above the
//!   scan.

use weir_connectors::managed::{is_managed, scan_changes, ScanChanges};
use weir_operators::expr::{Expr, Function};
use weir_runtime::Value;

use crate::error::{Error, Result};
use crate::plan::{ChangelogMode, Node, Plan};

/// Sets the changelog and point key of every managed table scan in `plan`.
///
/// # Errors
/// A managed table whose options the merge engines reject.
pub fn managed_scans(plan: Plan, batch: bool) -> Result<Plan> {
    let Plan { node, fields } = plan;
    let node = match node {
        Node::Scan { table, projection, key, .. } if is_managed(&table) => {
            let changes = scan_changes(&table).map_err(|e| Error::Table(e.to_string()))?;
            let changelog = match changes {
                _ if batch || key.is_some() => ChangelogMode::INSERT_ONLY,
                ScanChanges::InsertOnly => ChangelogMode::INSERT_ONLY,
                ScanChanges::Updates => {
                    ChangelogMode { insert: true, update_before: true, update_after: true, delete: false }
                }
                ScanChanges::UpdatesAndDeletes => {
                    ChangelogMode { insert: true, update_before: true, update_after: true, delete: true }
                }
            };
            Node::Scan { table, projection, changelog, key }
        }
        Node::Calc { input, projections, condition } => {
            let input = match (input.node, &condition) {
                (Node::Scan { table, projection, changelog, key: None }, Some(condition)) if is_managed(&table) => {
                    let key = pinned_key(condition, &projection, &table.primary_key);
                    let scan = Plan { node: Node::Scan { table, projection, changelog, key }, fields: input.fields };
                    managed_scans(scan, batch)?
                }
                (node, _) => managed_scans(Plan { node, fields: input.fields }, batch)?,
            };
            Node::Calc { input: Box::new(input), projections, condition }
        }
        other => other.try_map_inputs(|input| managed_scans(input, batch))?,
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
