//! The changes each scan emits, as its connector declares them
//! ([`SourceAbilities::changes`], Flink's `ScanTableSource#getChangelogMode`): a table store
//! table's scan emits its merge engine's changes (`[I]` for `first_row`, `[I,UB,UA]`, or
//! `[I,UB,UA,D]` when deletes are allowed); a scan in batch mode, or of one key, reads current
//! rows and emits inserts only.
//!
//! [`SourceAbilities::changes`]: weir_connectors::SourceAbilities::changes

use weir_connectors::{ConnectorRegistry, ScanChanges, ScanContext};

use crate::error::Result;
use crate::plan::{ChangelogMode, Node, Plan};

/// Sets the changelog of every scan in `plan`; `batch` for a job in batch mode.
///
/// # Errors
/// A table whose connector refuses its options.
pub fn scan_changelog(plan: Plan, registry: &ConnectorRegistry, batch: bool) -> Result<Plan> {
    let Plan { node, fields } = plan;
    let node = match node {
        Node::Scan { table, projection, key, filter, .. } => {
            let offered = registry.source_abilities(&table, &ScanContext { batch, key: key.clone() })?;
            let changelog = match offered.changes {
                _ if offered.bounded => ChangelogMode::INSERT_ONLY,
                ScanChanges::InsertOnly => ChangelogMode::INSERT_ONLY,
                ScanChanges::Updates => {
                    ChangelogMode { insert: true, update_before: true, update_after: true, delete: false }
                }
                ScanChanges::UpdatesAndDeletes => {
                    ChangelogMode { insert: true, update_before: true, update_after: true, delete: true }
                }
            };
            Node::Scan { table, projection, changelog, key, filter }
        }
        other => other.try_map_inputs(|input| scan_changelog(input, registry, batch))?,
    };
    Ok(Plan { node, fields })
}
