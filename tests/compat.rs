//! The state compatibility check (`weir compat`), rule by rule: each example pair of
//! docs/compat.md gives its verdict, and the four temporal-sort examples of the rules' source
//! give theirs. `tests/compat_restore.rs` restores the compatible pairs from savepoints.

use common::compat_scripts::{script, session, TABLES};
use weir::planner::compat::Verdict;
use weir::session::check_scripts;

use crate::common;

/// The check of the script of `new` against the script of `old`, with the session options `set`
/// in both.
fn check(old: &str, new: &str, set: &[(&str, &str)]) -> weir::planner::compat::Report {
    check_scripts(&script(old), &script(new), || session(set))
        .unwrap_or_else(|(which, e)| panic!("the {which} script does not plan: {}", e.in_statement()))
}

#[track_caller]
fn assert_verdict(old: &str, new: &str, set: &[(&str, &str)], expected: Verdict, reason: &str) {
    let report = check(old, new, set);
    let text = report.text();
    assert_eq!(report.verdict(), expected, "{old}\n  ->\n{new}\n{text}");
    assert!(text.contains(reason), "expected '{reason}' in:\n{text}");
}

use Verdict::{FullyCompatible as Full, Incompatible, PartiallyCompatible as Partial, Unknown};

#[test]
fn the_four_temporal_sort_examples_give_the_documented_verdicts() {
    // proctime ascending: SELECT fields may change.
    assert_verdict(
        "select a, b, c from MyTable order by proctime asc",
        "select a, b, c, d from MyTable order by proctime asc",
        &[],
        Full,
        "TemporalSort(orderBy=[PROCTIME() ASC]): Fully compatible",
    );
    // The order key may leave the SELECT list.
    assert_verdict(
        "select a, b, ts from MyTable order by ts asc",
        "select a, b from MyTable order by ts asc",
        &[],
        Full,
        "TemporalSort(orderBy=[MyTable.ts ASC]): Fully compatible",
    );
    // rowtime: a field added to the SELECT list widens the rows the sort keeps.
    assert_verdict(
        "select a, b, c from MyTable order by ts asc",
        "select a, b, c, d from MyTable order by ts asc",
        &[],
        Incompatible,
        "the rows it keeps change from [MyTable.a, MyTable.b, MyTable.c, MyTable.ts] to [MyTable.a, MyTable.b, MyTable.c, MyTable.d, MyTable.ts]",
    );
    // ORDER BY fields or direction.
    assert_verdict(
        "select a, b, c from MyTable order by ts asc",
        "select a, b, c from MyTable order by ts asc, a desc",
        &[],
        Incompatible,
        "its order changes from MyTable.ts ASC to MyTable.ts ASC, MyTable.a DESC",
    );
}

const AGG: &str = "select a, sum(b), max(c) from MyTable group by a";

#[test]
fn group_aggregate_rules() {
    let full = [
        ("select a, max(c) from MyTable group by a", "[SUM(MyTable.b)]: their state is dropped"),
        ("select a, max(c), sum(b) from MyTable group by a", "its aggregates are reordered"),
        ("select a1, sum(b), max(c) from (select a as a1, b, c from MyTable) group by a1", "it keeps the same state"),
    ];
    for (new, reason) in full {
        assert_verdict(AGG, new, &[], Full, reason);
    }
    let partial = [
        ("select a, sum(b), max(c), count(c) from MyTable group by a", "[COUNT(MyTable.c)] start from the restore"),
        (
            "select a, sum(b), min(c) from MyTable group by a",
            "[MIN(MyTable.c)] start from the restore; the state of [MAX(MyTable.c)] is dropped",
        ),
        (
            "select a, sum(b), max(c) from (select a, b, substring(c, 1, 5) as c from MyTable) group by a",
            "[MAX(SUBSTRING(MyTable.c, 1, 5))] start from the restore",
        ),
    ];
    for (new, reason) in partial {
        assert_verdict(AGG, new, &[], Partial, reason);
    }
    let incompatible = [
        (
            "select a, d, sum(b), max(c) from MyTable group by a, d",
            "its state is keyed by [MyTable.a], the new one by [MyTable.a, MyTable.d]",
        ),
        ("select a + 1, sum(b), max(c) from MyTable group by a + 1", "the new one by [(MyTable.a + 1)]"),
        ("select a, sum(b), max(c), count(distinct c) from MyTable group by a", "its DISTINCT aggregates change"),
        ("select a from MyTable group by a", "all its aggregates are deleted"),
        ("select a, count(d) from MyTable group by a", "its aggregates change entirely"),
    ];
    for (new, reason) in incompatible {
        assert_verdict(AGG, new, &[], Incompatible, reason);
    }
    assert_verdict("select a from MyTable group by a", AGG, &[], Incompatible, "where there were none");
}

#[test]
fn filters_count_unless_ignored_and_two_changes_are_unknown() {
    let filtered = "select a, sum(b), max(c) from (select * from MyTable where a > 10) group by a";
    assert_verdict(AGG, filtered, &[], Incompatible, "the filter on its input changes from [] to [(MyTable.a > 10)]");
    let ignore = [("table.optimizer.state-compatibility.ignore-filter", "true")];
    assert_verdict(AGG, filtered, &ignore, Full, "its input's filter changes, ignored");
    let two = "select a, sum(b), min(c) from (select * from MyTable where a > 10) group by a";
    assert_verdict(AGG, two, &ignore, Unknown, "and its filter changes");
}

#[test]
fn sinks_are_stateless_unless_told_and_a_query_with_new_state_is_incompatible() {
    let renamed = |sql: String| sql.replace("`out`", "`out2`");
    let new = "select a, sum(b), min(c) from MyTable group by a";
    let report = check_scripts(&script(AGG), &renamed(script(new)), || session(&[])).unwrap_or_else(|_| panic!());
    assert_eq!(report.verdict(), Unknown, "{}", report.text());
    assert!(report.text().contains("sink out2: Fully compatible: it replaces sink out"), "{}", report.text());
    let report = check_scripts(&script(AGG), &renamed(script(AGG)), || session(&[])).unwrap_or_else(|_| panic!());
    assert_eq!(report.verdict(), Full, "{}", report.text());
    let strict = [("table.optimizer.state-compatibility.ignore-sink", "false")];
    let report = check_scripts(&script(AGG), &renamed(script(AGG)), || session(&strict)).unwrap_or_else(|_| panic!());
    assert_eq!(report.verdict(), Incompatible, "{}", report.text());
    assert_verdict("select a, b, c from MyTable", AGG, &[], Incompatible, "a query that adds state");
    assert_verdict(AGG, "select a, b, c from MyTable", &[], Full, "not in the new script: its state is dropped");
}

#[test]
fn window_aggregate_rules() {
    let base = "select a, sum(b), max(c) from table(tumble(table MyTable, descriptor(ts), interval '1' minute)) group by a, window_start, window_end";
    let with_start = "select a, sum(b), max(c), window_start from table(tumble(table MyTable, descriptor(ts), interval '1' minute)) group by a, window_start, window_end";
    assert_verdict(base, with_start, &[], Full, "it keeps the same state");
    let added = "select a, sum(b), max(c), count(c) from table(tumble(table MyTable, descriptor(ts), interval '1' minute)) group by a, window_start, window_end";
    assert_verdict(base, added, &[], Partial, "[COUNT(MyTable.c)] start from the restore");
    let resized = "select a, sum(b), max(c) from table(tumble(table MyTable, descriptor(ts), interval '2' minute)) group by a, window_start, window_end";
    assert_verdict(base, resized, &[], Incompatible, "its window changes");
}

#[test]
fn over_aggregate_rules() {
    let base = "select a, b, c, sum(b) over (partition by a order by ts), max(c) over (partition by a order by ts) from MyTable";
    let added = "select a, b, c, sum(b) over (partition by a order by ts), max(c) over (partition by a order by ts), count(c) over (partition by a order by ts) from MyTable";
    assert_verdict(base, added, &[], Partial, "[COUNT(MyTable.c)] start from the restore");
    let dropped = "select a, b, c, max(c) over (partition by a order by ts) from MyTable";
    assert_verdict(base, dropped, &[], Full, "their state is dropped");
    let wider = "select a, b, c, d, sum(b) over (partition by a order by ts), max(c) over (partition by a order by ts) from MyTable";
    assert_verdict(base, wider, &[], Incompatible, "the rows it keeps change");
}

#[test]
fn deduplication_rules() {
    let first = "select a, b, c from (select *, row_number() over (partition by a order by proctime asc) as rk from MyTable) where rk = 1";
    let more = "select a, b, c, d from (select *, row_number() over (partition by a order by proctime asc) as rk from MyTable) where rk = 1";
    assert_verdict(first, more, &[], Full, "Deduplicate(key=[MyTable.a]): Fully compatible");
    let keys = "select a, b, c from (select *, row_number() over (partition by a, b, c order by proctime asc) as rk from MyTable) where rk = 1";
    let reordered = "select a, b, c from (select *, row_number() over (partition by c, a, b order by proctime asc) as rk from MyTable) where rk = 1";
    assert_verdict(keys, reordered, &[], Full, "it keeps the same state");
    let other_key = "select a, b, c from (select *, row_number() over (partition by a, d order by proctime asc) as rk from MyTable) where rk = 1";
    assert_verdict(first, other_key, &[], Incompatible, "its state is keyed by [MyTable.a]");
    let last = "select a, b, c from (select *, row_number() over (partition by a order by ts desc) as rk from MyTable) where rk = 1";
    let last_more = "select a, b, c, d from (select *, row_number() over (partition by a order by ts desc) as rk from MyTable) where rk = 1";
    assert_verdict(last, last_more, &[], Incompatible, "the rows it keeps change");
    let last_same_types = "select a, b, substring(c, 1, 5) as c from (select *, row_number() over (partition by a order by ts desc) as rk from MyTable) where rk = 1";
    assert_verdict(last, last_same_types, &[], Full, "it keeps the same state");
    let asc = "select a, b, c from (select *, row_number() over (partition by a order by ts asc) as rk from MyTable) where rk = 1";
    assert_verdict(last, asc, &[], Incompatible, "its order changes");
}

#[test]
fn top_n_and_limit_rules() {
    let base = "select a, b, c from (select *, row_number() over (partition by a, b order by c) as rk from MyTable) where rk < 3";
    let reordered = "select a, b, c from (select *, row_number() over (partition by b, a order by c) as rk from MyTable) where rk < 3";
    assert_verdict(base, reordered, &[], Full, "Rank(key=[MyTable.b, MyTable.a]): Fully compatible");
    let with_rk = "select a, b, c, rk from (select *, row_number() over (partition by a, b order by c) as rk from MyTable) where rk < 3";
    assert_verdict(base, with_rk, &[], Full, "it keeps the same state");
    let n = "select a, b, c from (select *, row_number() over (partition by a, b order by c) as rk from MyTable) where rk < 5";
    assert_verdict(base, n, &[], Incompatible, "its rank range changes");
    let order = "select a, b, c from (select *, row_number() over (partition by a, b order by c desc) as rk from MyTable) where rk < 3";
    assert_verdict(base, order, &[], Incompatible, "its order changes");
    assert_verdict(
        "select a, b from MyTable limit 100",
        "select a, b from MyTable limit 200",
        &[],
        Incompatible,
        "its rank range changes",
    );
}

#[test]
fn join_rules() {
    let base = "select l.a, l.b, r.c from MyTable l join MyTable2 r on l.a = r.a";
    let left = "select l.a, l.b, r.c from MyTable l left join MyTable2 r on l.a = r.a";
    assert_verdict(base, left, &[], Incompatible, "its join type changes");
    let condition = "select l.a, l.b, r.c from MyTable l join MyTable2 r on l.a = r.a and l.b > r.b";
    assert_verdict(base, condition, &[], Incompatible, "its condition changes");
    // A condition on one input, filtered before the join.
    let pushed = "select l.a, l.b, r.c from MyTable l join (select * from MyTable2 where d > 5) r on l.a = r.a";
    assert_verdict(base, pushed, &[], Incompatible, "the filter on its input changes");
    let ignore = [("table.optimizer.state-compatibility.ignore-filter", "true")];
    assert_verdict(base, pushed, &ignore, Full, "its input's filter changes, ignored");
    let interval = |bound: &str| {
        format!("select l.a, r.b from MyTable l join MyTable2 r on l.a = r.a and l.ts between r.ts - interval {bound} and r.ts")
    };
    assert_verdict(&interval("'60' second"), &interval("'1' minute"), &[], Full, "IntervalJoin");
    assert_verdict(&interval("'60' second"), &interval("'2' minute"), &[], Incompatible, "120000:INTERVAL SECOND");
}

#[test]
fn union_all_rules() {
    let base =
        "select a, sum(b), max(c) from (select a, b, c from MyTable union all select a, b, c from MyTable2) group by a";
    let swapped =
        "select a, sum(b), max(c) from (select a, b, c from MyTable2 union all select a, b, c from MyTable) group by a";
    assert_verdict(base, swapped, &[], Full, "it keeps the same state");
    let more = "select a, sum(b), max(c) from (select a, b, c from MyTable union all select a, b, c from MyTable2 union all select a, b, c from MyTable where d > 1) group by a";
    assert_verdict(base, more, &[], Incompatible, "GroupAggregate");
}

#[test]
fn source_option_and_parallelism_rules() {
    // Another source table: no state of the savepoint is the aggregate's.
    assert_verdict(
        AGG,
        &AGG.replace("MyTable", "MyTable2"),
        &[],
        Incompatible,
        "it reads MyTable2 where the old GroupAggregate read MyTable",
    );
    // Another connector for the same table.
    let kafka = script(AGG).replacen(
        "'connector' = 'datagen'",
        "'connector' = 'filesystem', 'path' = '/nonexistent', 'format' = 'csv'",
        1,
    );
    let report = check_scripts(&script(AGG), &kafka, || session(&[])).unwrap_or_else(|_| panic!());
    assert_eq!(report.verdict(), Incompatible, "{}", report.text());
    assert!(report
        .text()
        .contains("source MyTable: Incompatible: its connector changes from 'datagen' to 'filesystem'"));
    // A column no operator keeps, another watermark.
    let wider =
        script(AGG).replacen("d int,", "d int, e int,", 1).replacen("interval '1' second", "interval '5' second", 1);
    let report = check_scripts(&script(AGG), &wider, || session(&[])).unwrap_or_else(|_| panic!());
    assert_eq!(report.verdict(), Full, "{}", report.text());
    // Parallelism: state is redistributed.
    let report = check_scripts(&script(AGG), &script(AGG), || session(&[("parallelism.default", "4")]));
    let old_p2 = check_scripts(&script(AGG), &script(AGG), || session(&[])).unwrap_or_else(|_| panic!());
    assert_eq!(old_p2.verdict(), Full);
    assert_eq!(report.unwrap_or_else(|_| panic!()).verdict(), Full);
    // A state TTL changes how a group aggregate holds its groups: the rules cannot tell.
    let ttl = format!("SET 'table.exec.state.ttl' = '1 h';\n{}", script(AGG));
    let report = check_scripts(&script(AGG), &ttl, || session(&[])).unwrap_or_else(|_| panic!());
    assert_eq!(report.verdict(), Unknown, "{}", report.text());
}

#[test]
fn one_phase_and_two_phases_keep_state_differently() {
    let two_phase = [
        ("table.exec.mini-batch.enabled", "true"),
        ("table.exec.mini-batch.allow-latency", "1 s"),
        ("table.exec.mini-batch.size", "1000"),
    ];
    let one = script(AGG);
    let two = format!(
        "{}{}",
        two_phase.iter().map(|(k, v)| format!("SET '{k}' = '{v}';\n")).collect::<String>(),
        script(AGG)
    );
    let report = check_scripts(&one, &two, || session(&[])).unwrap_or_else(|_| panic!());
    assert_eq!(report.verdict(), Incompatible, "{}", report.text());
    assert!(
        report.text().contains("GroupAggregate and GlobalGroupAggregate keep their state differently"),
        "{}",
        report.text()
    );
}

#[test]
fn statement_sets_lose_and_gain_inserts() {
    let tables = format!(
        "{TABLES}\nCREATE TABLE s1 (a INT, x BIGINT) WITH ('connector' = 'blackhole');\n\
         CREATE TABLE s2 (a INT, b BIGINT) WITH ('connector' = 'blackhole');\n"
    );
    let agg = "INSERT INTO s1 SELECT a, SUM(b) FROM MyTable GROUP BY a;";
    let plain = "INSERT INTO s2 SELECT a, b FROM MyTable;";
    let set = |inserts: &[&str]| format!("{tables}EXECUTE STATEMENT SET BEGIN\n{}\nEND;", inserts.join("\n"));
    // An INSERT deleted: its sink goes, the aggregate's state stays.
    let report = check_scripts(&set(&[agg, plain]), &set(&[agg]), || session(&[])).unwrap_or_else(|_| panic!());
    assert_eq!(report.verdict(), Full, "{}", report.text());
    assert!(report.text().contains("sink s2: Fully compatible: not in the new script"), "{}", report.text());
    // A stateless INSERT added.
    let report = check_scripts(&set(&[agg]), &set(&[agg, plain]), || session(&[])).unwrap_or_else(|_| panic!());
    assert_eq!(report.verdict(), Full, "{}", report.text());
    assert!(report.text().contains("sink s2: Fully compatible: a new sink"), "{}", report.text());
    // An INSERT deleted while the source table's declaration changes: beyond the rules.
    let redeclared = set(&[agg]).replacen("d int,", "d int, e int,", 1);
    let report = check_scripts(&set(&[agg, plain]), &redeclared, || session(&[])).unwrap_or_else(|_| panic!());
    assert_eq!(report.verdict(), Unknown, "{}", report.text());
    assert!(report
        .text()
        .contains("source MyTable: Compatibility unknown: its declaration changes while a sink is deleted"));
}

#[test]
fn state_written_by_another_weir_is_of_unknown_compatibility() {
    let mut planning = session(&[]);
    let shape = planning.script_shape(&script(AGG)).unwrap_or_else(|_| panic!());
    let older = weir::planner::compat::JobShape { weir_version: "0.0.1".into(), ..shape.clone() };
    let report = weir::planner::compat::check(&older, &shape, Default::default());
    assert_eq!(report.verdict(), Unknown, "{}", report.text());
    assert!(
        report.text().contains("weir: Compatibility unknown: the state was written by weir 0.0.1"),
        "{}",
        report.text()
    );
}
