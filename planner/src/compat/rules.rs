//! The rules: how a change of one stateful operator, and of the job around it, is judged.
//!
//! Per operator, in this order (the first that decides gives the verdict):
//!
//! 0. the state's layout version (its signature, `weir_operators::signature`) must stay;
//! 1. one phase and two phases of an aggregate keep different state: incompatible;
//! 2. the key: a group key must stay the same columns in the same order, a partition key the
//!    same columns in any order;
//! 3. the definition (window, ORDER BY, N, join type and condition, interval, frame) must stay;
//! 4. the filters before it: a changed one is incompatible unless
//!    `table.optimizer.state-compatibility.ignore-filter` is set (then it is one changed item);
//! 5. the rows it keeps: the same columns (Top-N, OVER, joins, rowtime sort), the same types
//!    (deduplication), or anything (first row on processing time);
//! 6. the aggregates: DISTINCT calls must stay as they are, in order; of the others, deleting or
//!    reordering is fully compatible, adding or changing partially (one changed item), deleting
//!    all of them, adding some where there were none, or replacing all of them incompatible.

use super::shape::{Aggregate, Column, JobShape, RowRule, StateShape};
use super::{CompatOptions, Judgement, Report, Verdict};

/// The verdict on a pair of operators.
pub(super) struct PairJudgement {
    pub verdict: Verdict,
    pub reason: String,
    /// The changed item VVR counts, if the change is one.
    pub item: Option<String>,
    /// For each new aggregate call, the old call it continues, when they differ.
    pub calls: Option<Vec<Option<usize>>>,
}

fn incompatible(reason: String) -> PairJudgement {
    PairJudgement { verdict: Verdict::Incompatible, reason, item: None, calls: None }
}

fn list(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}

fn columns(rows: &[Column]) -> String {
    let texts: Vec<String> = rows.iter().map(|c| c.lineage.clone()).collect();
    list(&texts)
}

/// Judges whether `new` can take the state of `old`.
pub(super) fn judge_pair(old: &StateShape, new: &StateShape, options: CompatOptions) -> PairJudgement {
    if let (Some(before), Some(after)) = (&old.signature, &new.signature) {
        if let Some(why) = before.incompatibility(after) {
            return incompatible(why);
        }
    }
    if old.operator != new.operator && old.class.ends_with("aggregate") {
        return incompatible(format!(
            "{} and {} keep their state differently (one phase or two: table.optimizer.agg-phase-strategy, \
             table.exec.mini-batch.enabled)",
            old.operator, new.operator
        ));
    }
    let key_changed = if old.key_ordered || new.key_ordered {
        old.key != new.key
    } else {
        let (mut a, mut b) = (old.key.clone(), new.key.clone());
        a.sort();
        b.sort();
        a != b
    };
    if key_changed {
        return incompatible(format!("its state is keyed by {}, the new one by {}", list(&old.key), list(&new.key)));
    }
    let changed_definition = new.definition.iter().find(|(what, value)| old.definition.get(*what) != Some(*value));
    if let Some((what, value)) = changed_definition {
        let before = old.definition.get(what).map_or("none", String::as_str);
        return incompatible(format!("its {what} changes from {before} to {value}"));
    }
    let mut item = None;
    if old.filters != new.filters {
        if !options.ignore_filter {
            return incompatible(format!(
                "the filter on its input changes from {} to {} (table.optimizer.state-compatibility.ignore-filter is false)",
                list(&old.filters),
                list(&new.filters)
            ));
        }
        item = Some(format!("the filter before {}", new.operator));
    }
    if let Some(reason) = rows_changed(old, new) {
        return incompatible(reason);
    }
    let mut judged = match (&old.aggregates, &new.aggregates) {
        (Some(before), Some(after)) => judge_aggregates(before, after),
        _ => PairJudgement {
            verdict: Verdict::FullyCompatible,
            reason: "it keeps the same state".into(),
            item: None,
            calls: None,
        },
    };
    if judged.verdict == Verdict::PartiallyCompatible {
        judged.item = Some(format!("the aggregates of {}", new.operator));
    }
    if item.is_some() {
        if judged.item.is_some() {
            return PairJudgement {
                verdict: Verdict::Unknown,
                reason: format!("{}; and its filter changes", judged.reason),
                ..judged
            };
        }
        judged.item = item;
        judged.reason = format!("{} (its input's filter changes, ignored)", judged.reason);
    }
    judged
}

/// Why the rows `new` keeps do not fit those `old` kept, if they do not.
fn rows_changed(old: &StateShape, new: &StateShape) -> Option<String> {
    let (Some(before), Some(after)) = (&old.rows, &new.rows) else {
        return (old.rows.is_some() != new.rows.is_some()).then(|| "it keeps rows in another way".to_string());
    };
    let fits = match new.row_rule {
        RowRule::Any => true,
        RowRule::Types => {
            before.len() == after.len() && before.iter().zip(after).all(|(a, b)| same_values(&a.ty, &b.ty))
        }
        RowRule::Lineage => {
            before.len() == after.len()
                && before.iter().zip(after).all(|(a, b)| a.lineage == b.lineage && same_values(&a.ty, &b.ty))
        }
    };
    (!fits).then(|| format!("the rows it keeps change from {} to {}", columns(before), columns(after)))
}

/// Whether columns of the types written `a` and `b` hold their values alike in state: the
/// same type, or character strings of any length (`CHAR(3)`, `VARCHAR(5)` and `STRING` hold the
/// same text; a literal was typed `STRING` before weir typed it `CHAR(n)`, as Flink does).
fn same_values(a: &str, b: &str) -> bool {
    a == b || any_length_string(a) == any_length_string(b)
}

/// `ty` with each `CHAR(n)` and `VARCHAR(n)` written `STRING`.
fn any_length_string(ty: &str) -> String {
    let mut out = String::with_capacity(ty.len());
    let mut rest = ty;
    while !rest.is_empty() {
        let at_word = out.chars().last().is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_');
        let prefix = ["VARCHAR(", "CHAR("].into_iter().find(|p| at_word && rest.starts_with(p));
        if let Some(prefix) = prefix {
            let digits = rest[prefix.len()..].chars().take_while(char::is_ascii_digit).count();
            if digits > 0 && rest[prefix.len() + digits..].starts_with(')') {
                out.push_str("STRING");
                rest = &rest[prefix.len() + digits + 1..];
                continue;
            }
        }
        let c = rest.chars().next().expect("rest is not empty");
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The verdict on a change of aggregate calls (see the module docs).
fn judge_aggregates(before: &[Aggregate], after: &[Aggregate]) -> PairJudgement {
    let distinct =
        |calls: &[Aggregate]| calls.iter().filter(|c| c.distinct).map(|c| c.text.clone()).collect::<Vec<_>>();
    let plain = |calls: &[Aggregate]| calls.iter().filter(|c| !c.distinct).map(|c| c.text.clone()).collect::<Vec<_>>();
    if distinct(before) != distinct(after) {
        return incompatible(format!(
            "its DISTINCT aggregates change from {} to {}: their order is part of the state's layout",
            list(&distinct(before)),
            list(&distinct(after))
        ));
    }
    let (old_plain, new_plain) = (plain(before), plain(after));
    // Each new call continues the first unused old call of the same text.
    let mut used = vec![false; before.len()];
    let calls: Vec<Option<usize>> = after
        .iter()
        .map(|call| {
            let found = before.iter().enumerate().position(|(i, c)| !used[i] && c == call);
            if let Some(i) = found {
                used[i] = true;
            }
            found
        })
        .collect();
    let identity = calls.len() == before.len() && calls.iter().enumerate().all(|(i, c)| *c == Some(i));
    let added: Vec<String> =
        after.iter().zip(&calls).filter(|(_, c)| c.is_none()).map(|(a, _)| a.text.clone()).collect();
    let deleted: Vec<String> = before.iter().zip(&used).filter(|(_, u)| !**u).map(|(a, _)| a.text.clone()).collect();
    let kept = calls.iter().flatten().count();
    let mapped = (!identity).then(|| calls.clone());
    if identity {
        return PairJudgement {
            verdict: Verdict::FullyCompatible,
            reason: "it keeps the same state".into(),
            item: None,
            calls: None,
        };
    }
    if !old_plain.is_empty() && new_plain.is_empty() {
        return incompatible("all its aggregates are deleted".into());
    }
    if old_plain.is_empty() && !new_plain.is_empty() {
        return incompatible(format!("it adds aggregates {} where there were none", list(&added)));
    }
    if kept == 0 {
        return incompatible(format!("its aggregates change entirely, from {} to {}", list(&deleted), list(&added)));
    }
    if added.is_empty() {
        let reason = if deleted.is_empty() {
            "its aggregates are reordered".to_string()
        } else {
            format!("it no longer computes {}: their state is dropped", list(&deleted))
        };
        return PairJudgement { verdict: Verdict::FullyCompatible, reason, item: None, calls: mapped };
    }
    let mut reason = format!("{} start from the restore", list(&added));
    if !deleted.is_empty() {
        reason.push_str(&format!("; the state of {} is dropped", list(&deleted)));
    }
    PairJudgement { verdict: Verdict::PartiallyCompatible, reason, item: None, calls: mapped }
}

/// Judges the job's own changes: weir's version, sources, sinks, options and parallelism.
pub(super) fn judge_job(old: &JobShape, new: &JobShape, options: CompatOptions, report: &mut Report) {
    let mut judge = |subject: String, verdict: Verdict, reason: String| {
        report.judgements.push(Judgement { subject, verdict, reason });
    };
    if old.weir_version != new.weir_version {
        judge(
            "weir".into(),
            Verdict::Unknown,
            format!("the state was written by weir {}, this is weir {}", old.weir_version, new.weir_version),
        );
    }
    for source in &new.sources {
        if let Some(before) = old.sources.iter().find(|s| s.table == source.table) {
            if before.connector != source.connector {
                judge(
                    format!("source {}", source.table),
                    Verdict::Incompatible,
                    format!("its connector changes from '{}' to '{}'", before.connector, source.connector),
                );
            }
        }
    }
    let mut sink_items = Vec::new();
    // A sink of the new script with no namesake in the old one replaces the old sinks left
    // alone, in order: a renamed sink is one change.
    let mut gone = old.sinks.iter().filter(|s| !new.sinks.iter().any(|n| n.table == s.table));
    for sink in &new.sinks {
        let before = old.sinks.iter().find(|s| s.table == sink.table);
        let change = match before {
            None => Some(match gone.next() {
                Some(renamed) => format!("it replaces sink {}", renamed.table),
                None => "a new sink".to_string(),
            }),
            Some(b) if b.connector != sink.connector => {
                Some(format!("its connector changes from '{}' to '{}'", b.connector, sink.connector))
            }
            Some(b) if b.options != sink.options => Some("its WITH options change".to_string()),
            Some(b) if b.columns != sink.columns => {
                // Its columns follow the query: no change of its own.
                if !options.ignore_sink {
                    let reason = format!("its columns change from {} to {}", list(&b.columns), list(&sink.columns));
                    sink_items.push((format!("sink {}", sink.table), reason));
                }
                None
            }
            Some(_) => None,
        };
        if let Some(change) = change {
            sink_items.push((format!("sink {}", sink.table), change));
        }
    }
    for sink in gone {
        sink_items.push((format!("sink {}", sink.table), "not in the new script".to_string()));
    }
    // VVR: a sink deleted while a source table's declaration changed is beyond its rules.
    let sink_deleted = sink_items.iter().any(|(_, change)| change == "not in the new script");
    let changed_source =
        new.sources.iter().find(|s| old.sources.iter().any(|o| o.table == s.table && o.definition != s.definition));
    if let (true, Some(source)) = (sink_deleted, changed_source) {
        judge(
            format!("source {}", source.table),
            Verdict::Unknown,
            "its declaration changes while a sink is deleted: the rules do not decide this pair of changes".into(),
        );
    }
    for (subject, change) in sink_items {
        if options.ignore_sink {
            judge(
                subject.clone(),
                Verdict::FullyCompatible,
                format!("{change} (sinks keep no state: table.optimizer.state-compatibility.ignore-sink is true)"),
            );
            report.items.push(subject);
        } else {
            judge(
                subject,
                Verdict::Incompatible,
                format!("{change} (table.optimizer.state-compatibility.ignore-sink is false)"),
            );
        }
    }
    for key in old.options.keys().chain(new.options.keys()).collect::<std::collections::BTreeSet<_>>() {
        let (before, after) = (old.options.get(key), new.options.get(key));
        if before == after {
            continue;
        }
        let show = |v: Option<&String>| v.map_or("its default".to_string(), |v| format!("'{v}'"));
        let aggregates = new.operators.iter().any(|o| o.class == "group aggregate");
        let (verdict, consequence) = if aggregates {
            (Verdict::Unknown, "whether a group aggregate's restored groups can be held so depends on how they were held when the savepoint was taken")
        } else {
            (Verdict::FullyCompatible, "restored state follows the new setting")
        };
        judge(key.clone(), verdict, format!("changes from {} to {}: {consequence}", show(before), show(after)));
    }
    if old.parallelism != new.parallelism {
        judge(
            "parallelism".into(),
            Verdict::FullyCompatible,
            format!(
                "changes from {} to {}: keyed state is redistributed by key group",
                old.parallelism, new.parallelism
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn strings_of_any_length_hold_their_values_alike() {
        assert!(super::same_values("STRING NOT NULL", "CHAR(1) NOT NULL"));
        assert!(super::same_values("ARRAY<VARCHAR(3) NOT NULL>", "ARRAY<STRING NOT NULL>"));
        assert!(!super::same_values("STRING NOT NULL", "STRING"));
        assert!(!super::same_values("STRING", "BINARY(3)"));
        assert!(!super::same_values("STRING", "INT"));
    }
}
