//! The conformance suite's cases weir must pass, and printed changelogs compared as the suite
//! compares them (`tests/conformance/README.md`): per print identifier, the changelog applied
//! to a multiset of row texts must end equal, and in the same order for ordered cases.

use std::collections::BTreeMap;

/// Cases weir must pass.
pub const EXPECTED_TO_PASS: [&str; 60] = [
    "agg_basic",
    "agg_collections",
    "agg_global",
    "agg_retract",
    "agg_functions",
    "calc_functions",
    "cascaded_windows_minibatch",
    "variance",
    "watermark_interval",
    "correlated_subqueries",
    "distinct_subqueries",
    "functions_strings",
    "functions_math_time",
    "group_window_legacy",
    "grouping_sets",
    "grouping_sets_batch",
    "hop_cumulate_window",
    "interval_join",
    "interval_join_window",
    "ltz_window",
    "minibatch_agg",
    "order_by_batch",
    "nexmark_q0",
    "nexmark_q1",
    "nexmark_q2",
    "nexmark_q3",
    "nexmark_q4",
    "nexmark_q5",
    "nexmark_q7",
    "nexmark_q8",
    "nexmark_q11",
    "nexmark_q13",
    "nexmark_q14",
    "nexmark_q15",
    "nexmark_q16",
    "nexmark_q17",
    "nexmark_q18",
    "nexmark_q19",
    "nexmark_q20",
    "nexmark_q21",
    "nexmark_q22",
    "nested_types",
    "over_agg",
    "over_variants",
    "outer_time_joins",
    "regular_join",
    "session_tvf",
    "session_window",
    "sink_keyed_shuffle",
    "temporal_join",
    "temporal_sort",
    "topn_dedup",
    "topn_updating",
    "topn_variants",
    "tumble_window",
    "values_union",
    "window_collections",
    "window_grouping_sets",
    "window_join",
    "window_topn",
];

/// Final table per print identifier: row text to multiplicity; plus the rows in print order.
pub type Tables = BTreeMap<String, (BTreeMap<String, i64>, Vec<String>)>;

/// Applies the printed changelog of each print identifier with the runtime's materializer; fails
/// when a row is retracted that is not there. Lines that are not changes are skipped.
pub fn materialize(output: &str) -> Result<Tables, String> {
    let mut changes: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for line in output.lines() {
        let (ident, change) = match line.split_once("> ") {
            Some((prefix, rest)) if !prefix.contains(' ') && !prefix.contains('[') => {
                (prefix.split(':').next().unwrap_or(prefix).to_string(), rest)
            }
            _ => (String::new(), line),
        };
        let (kind, row) = change.split_at(change.len().min(2));
        if ["+I", "-U", "+U", "-D"].contains(&kind) && row.starts_with('[') && row.ends_with(']') {
            changes.entry(ident).or_default().push(change);
        }
    }
    changes
        .into_iter()
        .map(|(ident, lines)| {
            let table = weir::runtime::fixture::materialize_changelog(&lines).map_err(|e| format!("{ident}: {e}"))?;
            let order = lines.iter().filter(|l| l.starts_with('+')).map(|l| l[2..].to_string()).collect();
            Ok((ident, (table, order)))
        })
        .collect()
}

/// Compares weir's output with Flink's; `Err` says what differs.
pub fn compare(case: &str, actual: &str, expected: &str, ordered: bool) -> Result<(), String> {
    let (actual, expected) =
        (materialize(actual)?, materialize(expected).map_err(|e| format!("expected output: {e}"))?);
    for ident in actual.keys().chain(expected.keys()) {
        let empty = (BTreeMap::new(), Vec::new());
        let (a, b) = (actual.get(ident).unwrap_or(&empty), expected.get(ident).unwrap_or(&empty));
        if a.0 != b.0 {
            let missing: Vec<&String> = b.0.keys().filter(|r| a.0.get(*r) != b.0.get(*r)).take(3).collect();
            let extra: Vec<&String> = a.0.keys().filter(|r| a.0.get(*r) != b.0.get(*r)).take(3).collect();
            return Err(format!("{case}/{ident}: Flink has {missing:?}, weir has {extra:?}"));
        }
        if ordered && a.1 != b.1 {
            return Err(format!("{case}/{ident}: rows in another order"));
        }
    }
    Ok(())
}
