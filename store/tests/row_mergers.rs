//! Fluss's merger and changelog vectors (`AggregateRowMergerTest`, `RowMergerCreateTest`,
//! `KvTabletTest`): engines, partial writes, deletes and the `+I/-U/+U` each write emits.

use std::collections::{BTreeMap, HashMap};

use weir_runtime::{DataType, Row, Value};
use weir_store::{Change, DeleteBehavior, MergeEngine, RowMerger};

fn options(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn columns(spec: &[(&str, DataType)]) -> Vec<(String, DataType)> {
    spec.iter().map(|(n, t)| (n.to_string(), t.clone())).collect()
}

/// A key-value table in memory that applies writes through `merger` and records the changelog.
struct Table {
    merger: RowMerger,
    rows: HashMap<Vec<Value>, Vec<Value>>,
    key: Vec<usize>,
}

impl Table {
    fn new(merger: RowMerger, key: Vec<usize>) -> Self {
        Table { merger, rows: HashMap::new(), key }
    }

    fn upsert(&mut self, row: Vec<Value>) -> Vec<String> {
        let key: Vec<Value> = self.key.iter().map(|&k| row[k].clone()).collect();
        let change = self.merger.upsert(self.rows.get(&key).map(Vec::as_slice), &row, None).unwrap();
        self.apply(key, change)
    }

    fn apply(&mut self, key: Vec<Value>, change: Change) -> Vec<String> {
        let lines = change.rows().into_iter().map(|(k, r)| Row::new(k, r.to_vec()).to_string()).collect();
        match change {
            Change::Insert(row) | Change::Update { after: row, .. } => {
                self.rows.insert(key, row);
            }
            Change::Delete(_) => {
                self.rows.remove(&key);
            }
            Change::None => {}
        }
        lines
    }
}

fn int(v: i32) -> Value {
    Value::Int(v)
}

fn big(v: i64) -> Value {
    Value::BigInt(v)
}

fn s(v: &str) -> Value {
    Value::string(v)
}

#[test]
fn aggregation_merges_fields_and_emits_updates() {
    // KvTabletTest.testAggregateMergeEngine
    let merger = RowMerger::new(
        columns(&[
            ("a", DataType::int()),
            ("count", DataType::bigint()),
            ("max_val", DataType::int()),
            ("name", DataType::string()),
        ]),
        vec![0],
        &options(&[
            ("table.merge-engine", "aggregation"),
            ("fields.count.agg", "sum"),
            ("fields.max_val.agg", "max"),
            ("fields.name.agg", "last_value"),
        ]),
    )
    .unwrap();
    assert_eq!(merger.delete_behavior(), DeleteBehavior::Ignore);
    assert_eq!(merger.changelog_mode(), "[I,UB,UA]");
    let mut t = Table::new(merger, vec![0]);
    let mut log = Vec::new();
    log.extend(t.upsert(vec![int(1), big(10), int(100), s("Alice")]));
    log.extend(t.upsert(vec![int(2), big(20), int(200), s("Bob")]));
    assert_eq!(log, ["+I[1, 10, 100, Alice]", "+I[2, 20, 200, Bob]"]);
    log.clear();
    log.extend(t.upsert(vec![int(1), big(15), int(150), s("Alice2")]));
    log.extend(t.upsert(vec![int(2), big(25), int(180), s("Bob2")]));
    assert_eq!(log, ["-U[1, 10, 100, Alice]", "+U[1, 25, 150, Alice2]", "-U[2, 20, 200, Bob]", "+U[2, 45, 200, Bob2]"]);
    assert_eq!(t.upsert(vec![int(3), big(30), int(300), s("Charlie")]), ["+I[3, 30, 300, Charlie]"]);
}

#[test]
fn basic_aggregation_and_nulls() {
    // AggregateRowMergerTest.testBasicAggregation / testNullValueHandling
    let merger = RowMerger::new(
        columns(&[
            ("id", DataType::int()),
            ("sum_count", DataType::bigint()),
            ("sum_total", DataType::double()),
            ("max_val", DataType::int()),
            ("min_val", DataType::int()),
            ("name", DataType::string()),
        ]),
        vec![0],
        &options(&[
            ("table.merge-engine", "AGGREGATION"),
            ("fields.sum_count.agg", "sum"),
            ("fields.sum_total.agg", "sum"),
            ("fields.max_val.agg", "max"),
            ("fields.min_val.agg", "min"),
        ]),
    )
    .unwrap();
    let first = vec![int(1), big(5), Value::Double(10.5), int(10), int(3), s("Alice")];
    assert_eq!(merger.upsert(None, &first, None).unwrap(), Change::Insert(first.clone()));
    let Change::Update { after, .. } =
        merger.upsert(Some(&first), &[int(1), big(3), Value::Double(7.5), int(15), int(1), s("Bob")], None).unwrap()
    else {
        panic!("an update")
    };
    assert_eq!(after, [int(1), big(8), Value::Double(18.0), int(15), int(1), s("Bob")]);
    let Change::Update { after, .. } =
        merger.upsert(Some(&after), &[int(1), big(0), Value::Double(0.0), int(0), int(0), Value::Null], None).unwrap()
    else {
        panic!("an update")
    };
    assert_eq!(after[5], s("Bob"), "the default function ignores NULLs");
    let with_null = vec![int(2), Value::Null, Value::Null, Value::Null, Value::Null, Value::Null];
    let Change::Update { after, .. } = merger
        .upsert(Some(&with_null), &[int(2), big(10), Value::Null, Value::Null, Value::Null, Value::Null], None)
        .unwrap()
    else {
        panic!("an update")
    };
    assert_eq!(after[1], big(10));
}

#[test]
fn partial_writes_merge_their_targets_and_keep_the_rest() {
    // AggregateRowMergerTest.testPartialUpdate and the partial delete scenarios
    let merger = RowMerger::new(
        columns(&[("id", DataType::int().not_null()), ("count", DataType::bigint()), ("total", DataType::double())]),
        vec![0],
        &options(&[("table.merge-engine", "aggregation"), ("fields.count.agg", "sum"), ("fields.total.agg", "sum")]),
    )
    .unwrap();
    merger.check_targets(&[0, 1]).unwrap();
    let old = vec![int(1), big(10), Value::Double(100.0)];
    let change = merger.upsert(Some(&old), &[int(1), big(5), Value::Double(50.0)], Some(&[0, 1])).unwrap();
    assert_eq!(change, Change::Update { before: old.clone(), after: vec![int(1), big(15), Value::Double(100.0)] });
    assert_eq!(
        merger.check_targets(&[1]).unwrap_err().to_string(),
        "The target write columns must contain the primary key columns [id]."
    );
    let not_null = RowMerger::new(
        columns(&[("id", DataType::int()), ("count", DataType::bigint().not_null())]),
        vec![0],
        &options(&[("table.merge-engine", "aggregation")]),
    )
    .unwrap();
    assert_eq!(
        not_null.check_targets(&[0]).unwrap_err().to_string(),
        "Partial aggregate requires all columns except primary key to be nullable, but column count is NOT NULL."
    );

    let allow = RowMerger::new(
        columns(&[
            ("id", DataType::int()),
            ("target_sum", DataType::bigint()),
            ("target_max", DataType::int()),
            ("other", DataType::string()),
            ("other_sum", DataType::bigint()),
        ]),
        vec![0],
        &options(&[("table.merge-engine", "aggregation"), ("table.delete.behavior", "allow")]),
    )
    .unwrap();
    assert_eq!(allow.changelog_mode(), "[I,UB,UA,D]");
    let stored = vec![int(1), big(100), int(50), s("keep"), big(200)];
    assert_eq!(
        allow.delete(Some(&stored), Some(&[0, 1, 2])).unwrap(),
        Change::Update { before: stored.clone(), after: vec![int(1), Value::Null, Value::Null, s("keep"), big(200)] }
    );
    let sparse = vec![int(1), big(100), Value::Null, Value::Null, Value::Null];
    assert_eq!(allow.delete(Some(&sparse), Some(&[0, 1])).unwrap(), Change::Delete(sparse.clone()));
    assert_eq!(allow.delete(Some(&stored), None).unwrap(), Change::Delete(stored.clone()));
}

#[test]
fn first_row_keeps_the_first_and_versioned_keeps_the_highest() {
    // KvTabletTest.testFirstRowMergeEngine
    let first = RowMerger::new(
        columns(&[("a", DataType::int()), ("b", DataType::string())]),
        vec![0],
        &options(&[("table.merge-engine", "first_row")]),
    )
    .unwrap();
    assert_eq!(first.changelog_mode(), "[I]");
    let mut t = Table::new(first, vec![0]);
    let mut log = Vec::new();
    for (k, v) in [(1, "v11"), (2, "v21"), (2, "v23")] {
        log.extend(t.upsert(vec![int(k), s(v)]));
    }
    assert_eq!(log, ["+I[1, v11]", "+I[2, v21]"]);
    assert_eq!(t.merger.delete(Some(&[int(1), s("v11")]), None).unwrap(), Change::None);
    assert_eq!(t.upsert(vec![int(3), s("v31")]), ["+I[3, v31]"]);

    // KvTabletTest.testVersionRowMergeEngine
    let versioned = RowMerger::new(
        columns(&[("a", DataType::int()), ("b", DataType::int())]),
        vec![0],
        &options(&[("table.merge-engine", "versioned"), ("table.merge-engine.versioned.ver-column", "b")]),
    )
    .unwrap();
    assert_eq!(versioned.engine(), &MergeEngine::Versioned(1));
    let mut t = Table::new(versioned, vec![0]);
    let mut log = Vec::new();
    for (k, v) in [(1, 1000), (2, 1000), (2, 1001)] {
        log.extend(t.upsert(vec![int(k), int(v)]));
    }
    assert_eq!(log, ["+I[1, 1000]", "+I[2, 1000]", "-U[2, 1000]", "+U[2, 1001]"]);
    assert!(t.upsert(vec![int(1), int(999)]).is_empty());
    assert!(t.upsert(vec![int(2), int(1000)]).is_empty());
    assert_eq!(t.upsert(vec![int(1), int(1001)]), ["-U[1, 1000]", "+U[1, 1001]"]);
    assert!(t.upsert(vec![int(1), Value::Null]).is_empty(), "a NULL version never wins over a stored one");
    assert_eq!(t.upsert(vec![int(3), int(1000)]), ["+I[3, 1000]"]);
}

#[test]
fn the_last_row_engine_replaces_and_partially_updates() {
    let merger = RowMerger::new(
        columns(&[("k", DataType::int()), ("v1", DataType::double()), ("v2", DataType::string())]),
        vec![0],
        &options(&[]),
    )
    .unwrap();
    assert_eq!(merger.delete_behavior(), DeleteBehavior::Allow);
    let mut t = Table::new(merger, vec![0]);
    t.upsert(vec![int(1), Value::Double(1.0), s("t1")]);
    assert_eq!(t.upsert(vec![int(1), Value::Double(1.0), s("t2")]), ["-U[1, 1.0, t1]", "+U[1, 1.0, t2]"]);
    t.upsert(vec![int(3), Value::Double(3.0), Value::Null]);
    let change = t
        .merger
        .upsert(t.rows.get(&vec![int(3)]).map(Vec::as_slice), &[int(3), Value::Null, s("t3")], Some(&[0, 2]))
        .unwrap();
    assert_eq!(t.apply(vec![int(3)], change), ["-U[3, 3.0, null]", "+U[3, 3.0, t3]"]);
}

#[test]
fn options_are_checked_with_flusss_messages() {
    let cols = || columns(&[("id", DataType::int()), ("v", DataType::string()), ("ts", DataType::timestamp(3))]);
    let error =
        |key: Vec<usize>, pairs: &[(&str, &str)]| RowMerger::new(cols(), key, &options(pairs)).unwrap_err().to_string();
    assert_eq!(
        error(vec![], &[("table.merge-engine", "first_row")]),
        "Merge engine is only supported in primary key table."
    );
    assert_eq!(
        error(vec![0], &[("table.merge-engine", "versioned")]),
        "'table.merge-engine.versioned.ver-column' must be set for versioned merge engine."
    );
    assert_eq!(
        error(vec![0], &[("table.merge-engine", "versioned"), ("table.merge-engine.versioned.ver-column", "nope")]),
        "The version column 'nope' for versioned merge engine doesn't exist in schema."
    );
    assert_eq!(
        error(vec![0], &[("table.merge-engine", "versioned"), ("table.merge-engine.versioned.ver-column", "v")]),
        "The version column 'v' for versioned merge engine must be one type of [INT, BIGINT, TIMESTAMP, TIMESTAMP_LTZ], but got STRING."
    );
    assert!(RowMerger::new(
        cols(),
        vec![0],
        &options(&[("table.merge-engine", "versioned"), ("table.merge-engine.versioned.ver-column", "ts")])
    )
    .is_ok());
    assert_eq!(
        error(vec![0], &[("table.merge-engine", "first_row"), ("table.delete.behavior", "allow")]),
        "Table with 'FIRST_ROW' merge engine does not support delete operations. The 'table.delete.behavior' config must be set to 'ignore' or 'disable', but got 'allow'."
    );
    assert_eq!(
        error(vec![0], &[("fields.v.agg", "max")]),
        "Aggregation function is only supported for aggregation merge engine table, but column 'v' has aggregation function 'max'."
    );
    assert!(error(vec![0], &[("table.merge-engine", "aggregation"), ("fields.v.agg", "sum")])
        .contains("Data type for sum column must be part of"));
    let listagg = RowMerger::new(
        cols(),
        vec![0],
        &options(&[
            ("table.merge-engine", "aggregation"),
            ("fields.v.agg", "listagg"),
            ("fields.v.listagg.delimiter", ";"),
        ]),
    )
    .unwrap();
    let Change::Update { after, .. } =
        listagg.upsert(Some(&[int(1), s("a"), Value::Null]), &[int(1), s("b"), Value::Null], None).unwrap()
    else {
        panic!("an update")
    };
    assert_eq!(after[1], s("a;b"));
    let disabled = RowMerger::new(cols(), vec![0], &options(&[("table.delete.behavior", "disable")])).unwrap();
    assert_eq!(
        disabled.delete(Some(&[int(1), s("a"), Value::Null]), None).unwrap_err().to_string(),
        "Delete operations are disabled for this table. The table.delete.behavior is set to 'disable'."
    );
}
