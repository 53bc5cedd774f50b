//! Golden files pin what every stateful operator writes into checkpoints: for each one, a query
//! of the state compatibility examples is planned, and the state shapes of its job (what a
//! checkpoint records of each stateful operator: key, definition, kept rows, aggregates by
//! lineage, and the operator's state signature with its layout version) must equal
//! `tests/signatures/<Operator>.json`. A change to a state layout, a signature, an EXPLAIN text
//! or a Rust name that shapes read shows up here, in review; checkpoints written before such a
//! change are then matched against the new shape on restore (docs/compat.md).
//!
//! `WEIR_BLESS=1 cargo test --test integration state_signatures::` rewrites the files; review the diff, and
//! bump the operator's `STATE_VERSION` when the bytes it writes changed.

use std::collections::BTreeSet;
use std::path::Path;

use common::compat_scripts::{script, session};

use crate::common;

/// The stateful operators (their signature's name), each with a query that plans it and the
/// session options it needs.
const CASES: &[(&str, &str, &[(&str, &str)])] = &[
    ("GroupAggregate", "select a, sum(b), count(*) from MyTable group by a", &[]),
    ("GroupAggregate", "select a, max(c), count(distinct d), listagg(c) from MyTable group by a", &[]),
    ("GlobalGroupAggregate", "select a, sum(b), count(distinct d) from MyTable group by a", MINI_BATCH),
    (
        "WindowAggregate",
        "select a, window_start, sum(b), listagg(c) from table(tumble(table MyTable, descriptor(ts), interval '1' minute)) group by a, window_start, window_end",
        &[],
    ),
    (
        "WindowAggregate",
        "select a, window_end, count(*), max(b) from table(hop(table MyTable, descriptor(ts), interval '1' minute, interval '2' minute)) group by a, window_start, window_end",
        MINI_BATCH,
    ),
    (
        "SessionWindowAggregate",
        "select a, window_start, count(*) from table(session(table MyTable partition by a, descriptor(ts), interval '1' minute)) group by a, window_start, window_end",
        &[],
    ),
    (
        "SessionWindowTableFunction",
        "select a, b, window_start from table(session(table MyTable partition by a, descriptor(ts), interval '1' minute))",
        &[],
    ),
    (
        "WindowRank",
        "select * from (select a, b, window_start, window_end, row_number() over (partition by a, window_start, window_end order by b desc) as rn from table(tumble(table MyTable, descriptor(ts), interval '1' minute))) where rn <= 3",
        &[],
    ),
    (
        "WindowDeduplicate",
        "select * from (select a, b, ts, window_start, window_end, row_number() over (partition by a, window_start, window_end order by ts asc) as rn from table(tumble(table MyTable, descriptor(ts), interval '1' minute))) where rn = 1",
        &[],
    ),
    (
        "Rank",
        "select a, b, c from (select a, b, c, row_number() over (partition by a order by b desc) as rn from MyTable) where rn <= 2",
        &[],
    ),
    (
        "Deduplicate",
        "select a, b, c from (select a, b, c, row_number() over (partition by a order by proctime asc) as rn from MyTable) where rn = 1",
        &[],
    ),
    ("TemporalSort", "select a, b, ts from MyTable order by ts asc", &[]),
    (
        "OverAggregate",
        "select a, b, sum(b) over (partition by a order by ts rows between 2 preceding and current row) from MyTable",
        &[],
    ),
    ("Join", "select t.a, t.b, u.c from MyTable as t join MyTable2 as u on t.a = u.a", &[]),
    (
        "IntervalJoin",
        "select t.a, u.b from MyTable as t join MyTable2 as u on t.a = u.a and t.ts between u.ts - interval '1' minute and u.ts",
        &[],
    ),
    (
        "WindowJoin",
        "select l.a, r.b from (select * from table(tumble(table MyTable, descriptor(ts), interval '1' minute))) as l join (select * from table(tumble(table MyTable2, descriptor(ts), interval '1' minute))) as r on l.a = r.a and l.window_start = r.window_start and l.window_end = r.window_end",
        &[("table.optimizer.window-join-enabled", "true")],
    ),
    (
        "TemporalJoin",
        "select t.a, r.rate from MyTable as t join Rates for system_time as of t.ts as r on t.c = r.currency",
        &[],
    ),
];

const MINI_BATCH: &[(&str, &str)] = &[
    ("table.exec.mini-batch.enabled", "true"),
    ("table.exec.mini-batch.allow-latency", "1 s"),
    ("table.exec.mini-batch.size", "100"),
];

/// Operators that tables of their own plan: the sink materializers (a sink whose primary key
/// is not the query's upsert key) and the normalization of an upsert source.
const MATERIALIZERS: &[(&str, &str)] = &[
    (
        "ChangelogNormalize",
        "CREATE TABLE `upserts` (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',
           'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9', 'key.format' = 'csv', 'value.format' = 'json');
         CREATE TABLE `changes` (id BIGINT, v STRING) WITH ('connector' = 'print');
         INSERT INTO `changes` SELECT * FROM `upserts`;",
    ),
    (
        "SinkMaterializer",
        "CREATE TABLE `keyed` (a INT, total BIGINT, PRIMARY KEY (total) NOT ENFORCED) WITH ('connector' = 'blackhole');
         INSERT INTO `keyed` SELECT a, SUM(b) FROM MyTable GROUP BY a ON CONFLICT DO DEDUPLICATE;",
    ),
    (
        "WatermarkCompactingSinkMaterializer",
        "CREATE TABLE `keyed` (a INT, total BIGINT, PRIMARY KEY (total) NOT ENFORCED) WITH ('connector' = 'blackhole');
         INSERT INTO `keyed` SELECT a, SUM(b) FROM MyTable GROUP BY a ON CONFLICT DO NOTHING;",
    ),
];

/// The state shapes of the job of `script` whose signature names `operator`, as pretty JSON
/// without their ids (which hash the job graph).
fn shapes_of(script: &str, set: &[(&str, &str)], operator: &str) -> Vec<serde_json::Value> {
    let mut planning = session(set);
    let shape = planning.script_shape(script).unwrap_or_else(|e| panic!("{script}: {}", e.in_statement()));
    shape
        .operators
        .iter()
        .filter(|s| s.signature.as_ref().is_some_and(|sig| sig.operator == operator))
        .map(|s| {
            let mut value = serde_json::to_value(s).unwrap();
            value.as_object_mut().unwrap().remove("id");
            value
        })
        .collect()
}

#[test]
fn every_stateful_operator_has_the_state_its_golden_file_records() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/signatures");
    let bless = std::env::var_os("WEIR_BLESS").is_some();
    let mut by_operator: Vec<(&str, Vec<serde_json::Value>)> = Vec::new();
    let cases = CASES.iter().map(|(operator, query, set)| (*operator, script(query), *set)).chain(
        MATERIALIZERS
            .iter()
            .map(|(operator, insert)| (*operator, format!("{}{insert}", common::compat_scripts::TABLES), &[][..])),
    );
    for (operator, script, set) in cases {
        let shapes = shapes_of(&script, set, operator);
        assert!(!shapes.is_empty(), "no {operator} in the plan of:\n{script}");
        match by_operator.iter_mut().find(|(o, _)| *o == operator) {
            Some((_, all)) => all.extend(shapes),
            None => by_operator.push((operator, shapes)),
        }
    }
    let mut differing = Vec::new();
    for (operator, shapes) in &by_operator {
        let path = dir.join(format!("{operator}.json"));
        let text = serde_json::to_string_pretty(shapes).unwrap() + "\n";
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            differing.push(format!("{}:\n{text}", path.display()));
        }
    }
    assert!(
        differing.is_empty(),
        "state shapes differ from their golden files (WEIR_BLESS=1 rewrites):\n{}",
        differing.join("\n")
    );
    // No golden file is left without an operator that writes it.
    let covered: BTreeSet<String> = by_operator.iter().map(|(o, _)| format!("{o}.json")).collect();
    let files: BTreeSet<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    assert_eq!(files, covered, "golden files without a case, or cases without a file");
    // Every signature an operator declares (`StateSignature::new("…"`) has a case here.
    let declared = declared_signatures(&Path::new(env!("CARGO_MANIFEST_DIR")).join("operators/src"));
    let cased: BTreeSet<String> = by_operator.iter().map(|(o, _)| o.to_string()).collect();
    assert_eq!(declared, cased, "operators declaring a state signature without a golden-file case here");
}

/// The operator names of the `StateSignature::new("…"` calls in the sources below `dir`.
fn declared_signatures(dir: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for path in common::rust_sources(dir) {
        let text = std::fs::read_to_string(&path).unwrap();
        for part in text.split("StateSignature::new(\"").skip(1) {
            names.extend(part.split('"').next().map(str::to_string));
        }
    }
    names
}

/// A checkpoint whose operator wrote its state in another layout version is refused by the check
/// (and so by a restore), naming both versions; one without signatures (written before them) is
/// judged by its shape alone.
#[test]
fn a_state_of_another_layout_version_is_incompatible() {
    let script = script("select a, sum(b), count(*) from MyTable group by a");
    let new = session(&[]).script_shape(&script).unwrap_or_else(|e| panic!("{}", e.in_statement()));
    let mut old = new.clone();
    old.operators[0].signature.as_mut().unwrap().version = 0;
    let report = weir::planner::compat::check(&old, &new, Default::default());
    assert_eq!(report.verdict(), weir::planner::compat::Verdict::Incompatible, "{}", report.text());
    assert!(
        report
            .text()
            .contains("its state was written in layout version 0 of GroupAggregate, and this weir reads version 1"),
        "{}",
        report.text()
    );
    old.operators[0].signature = None;
    let report = weir::planner::compat::check(&old, &new, Default::default());
    assert_eq!(report.verdict(), weir::planner::compat::Verdict::FullyCompatible, "{}", report.text());
}
