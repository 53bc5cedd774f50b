//! The changes each scan emits, as its connector declares them
//! ([`SourceAbilities::changes`], Flink's `ScanTableSource#getChangelogMode`): a table store
//! table's scan emits its merge engine's changes (`[I]` for `first_row`, `[I,UB,UA]`, or
//! `[I,UB,UA,D]` when deletes are allowed); a scan in batch mode, or of one key, reads current
//! rows and emits inserts only; a CDC format's scan (`debezium-json`, …) emits every change,
//! bounded or not.
//!
//! [`SourceAbilities::changes`]: weir_connectors::SourceAbilities::changes

use weir_connectors::{ScanChanges, ScanContext};

use crate::error::Result;
use crate::plan::{ChangelogMode, Node, Plan};

/// Sets the changelog of every scan in `plan`; `batch` for a job in batch mode.
///
/// # Errors
/// A table whose connector refuses its options.
pub fn scan_changelog(plan: Plan, batch: bool) -> Result<Plan> {
    let Plan { node, fields } = plan;
    let node = match node {
        Node::Scan { table, projection, key, filter, projected, .. } => {
            let offered = table.abilities(&ScanContext {
                batch,
                key: key.clone(),
                idle_timeout: None,
                partitions: None,
                job_starts: false,
            });
            let changelog = match offered.changes {
                ScanChanges::InsertOnly => ChangelogMode::INSERT_ONLY,
                ScanChanges::Updates => {
                    ChangelogMode { insert: true, update_before: true, update_after: true, delete: false }
                }
                // An upsert scan is normalized (ChangelogNormalize) into a full changelog.
                ScanChanges::UpdatesAndDeletes | ScanChanges::Upserts => {
                    ChangelogMode { insert: true, update_before: true, update_after: true, delete: true }
                }
            };
            Node::Scan { table, projection, changelog, key, filter, projected }
        }
        other => other.try_map_inputs(|input| scan_changelog(input, batch))?,
    };
    Ok(Plan { node, fields })
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{before_after, Fixture};

    #[test]
    fn scans_emit_what_their_connector_declares() {
        let f = Fixture::new(
            "CREATE TABLE last (id BIGINT, v INT, PRIMARY KEY (id) NOT ENFORCED);
             CREATE TABLE first (id BIGINT, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('table.merge-engine' = 'first_row');
             CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen');",
        );
        let before = f.bind("SELECT id FROM last UNION ALL SELECT id FROM first UNION ALL SELECT id FROM gen;");
        let streaming = super::scan_changelog(before.clone(), false).unwrap();
        expect![[r#"
            before:
            LogicalUnion(all=[true])
            :- LogicalUnion(all=[true])
            :  :- LogicalProject(id=[$0])
            :  :  +- LogicalTableScan(table=[[default_catalog, default_database, last]], project=[id, v], changelogMode=[I])
            :  +- LogicalProject(id=[$0])
            :     +- LogicalTableScan(table=[[default_catalog, default_database, first]], project=[id, v], changelogMode=[I])
            +- LogicalTableScan(table=[[default_catalog, default_database, gen]], project=[id], changelogMode=[I])
            after:
            LogicalUnion(all=[true])
            :- LogicalUnion(all=[true])
            :  :- LogicalProject(id=[$0])
            :  :  +- LogicalTableScan(table=[[default_catalog, default_database, last]], project=[id, v], changelogMode=[I,UB,UA,D])
            :  +- LogicalProject(id=[$0])
            :     +- LogicalTableScan(table=[[default_catalog, default_database, first]], project=[id, v], changelogMode=[I])
            +- LogicalTableScan(table=[[default_catalog, default_database, gen]], project=[id], changelogMode=[I])
        "#]]
        .assert_eq(&before_after(&before, &streaming));
        // In batch mode a scan reads current rows: inserts only, as every scan of `before` says.
        let batch = super::scan_changelog(before.clone(), true).unwrap();
        assert_eq!(crate::explain::logical_plan_text(&batch), crate::explain::logical_plan_text(&before));
    }
}
