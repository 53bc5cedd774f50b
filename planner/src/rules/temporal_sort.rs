//! A streaming `ORDER BY` without `LIMIT` is a temporal sort (Flink's
//! `StreamPhysicalTemporalSortRule`): its first key must be a time attribute in ascending order
//! and its input must only insert. Any other is refused with Flink's words.

use weir_runtime::types::TimeAttribute;

use crate::error::{Error, Result};
use crate::plan::{Node, Plan};

/// Checks every `ORDER BY` without a limit in `plan`.
///
/// # Errors
/// A sort on anything else than an ascending time attribute first; a sort of updating rows.
pub fn temporal_sort(plan: &Plan) -> Result<()> {
    if let Node::Sort { input, order, fetch: None, offset } = &plan.node {
        let on_time = order.first().is_some_and(|k| {
            !k.descending
                && matches!(
                    input.fields[k.column].data_type.time_attribute,
                    Some(TimeAttribute::Rowtime | TimeAttribute::Proctime)
                )
        });
        if !on_time || *offset > 0 {
            return Err(Error::Table("Sort on a non-time-attribute field is not supported.".into()));
        }
        if let Some(node) = input.updating_node() {
            return Err(Error::Table(format!(
                "TemporalSort doesn't support consuming update and delete changes which is produced by node {node}"
            )));
        }
    }
    plan.node.inputs().into_iter().try_for_each(temporal_sort)
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::Fixture;

    #[test]
    fn only_an_ascending_time_attribute_first_sorts_a_stream() {
        let f = Fixture::new(
            "CREATE TABLE clicks (user_id INT, url STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) \
             WITH ('connector' = 'datagen');",
        );
        for (query, ok) in [
            ("SELECT * FROM clicks ORDER BY ts", true),
            ("SELECT * FROM clicks ORDER BY ts, user_id DESC", true),
            ("SELECT * FROM clicks ORDER BY ts DESC", false),
            ("SELECT * FROM clicks ORDER BY user_id", false),
            ("SELECT * FROM clicks ORDER BY user_id LIMIT 3", true),
        ] {
            let result = super::temporal_sort(&f.bind(query));
            assert_eq!(result.is_ok(), ok, "{query}: {result:?}");
            if !ok {
                assert_eq!(result.unwrap_err().to_string(), "Sort on a non-time-attribute field is not supported.");
            }
        }
    }
}
