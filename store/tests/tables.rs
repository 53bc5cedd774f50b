//! Primary-key tables on disk: merged writes, reads after reopening, atomic batches, and a
//! second opener refused.

use std::collections::BTreeMap;
use std::sync::Arc;

use weir_runtime::types::MAX_LENGTH;
use weir_runtime::{DataType, LogicalType, Row, RowKind, Value};
use weir_store::{KvStore, PkTable, RedbStore, RowMerger};

fn sales_table(store: Arc<dyn KvStore>) -> PkTable {
    let columns: Vec<(String, DataType)> = vec![
        ("id".into(), DataType::bigint().not_null()),
        ("price".into(), DataType::double()),
        ("sales".into(), DataType::bigint()),
        ("tags".into(), DataType::string()),
        ("visitors".into(), DataType::new(LogicalType::Varbinary(MAX_LENGTH))),
    ];
    let options: BTreeMap<String, String> = [
        ("table.merge-engine", "aggregation"),
        ("fields.price.agg", "max"),
        ("fields.sales.agg", "sum"),
        ("fields.tags.agg", "listagg"),
        ("fields.visitors.agg", "rbm32"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let merger = RowMerger::new(columns.clone(), vec![0], &options).unwrap();
    PkTable::new("sales", columns, vec![0], merger, store)
}

fn bitmap(values: &[u32]) -> Value {
    Value::Binary(weir_store::bitmap32::encode(values.iter().copied().collect()).into())
}

fn row(id: i64, price: f64, sales: i64, tag: &str, visitors: &[u32]) -> (RowKind, Vec<Value>) {
    (
        RowKind::Insert,
        vec![Value::BigInt(id), Value::Double(price), Value::BigInt(sales), Value::string(tag), bitmap(visitors)],
    )
}

fn lines(changes: &[(RowKind, Vec<Value>)]) -> Vec<String> {
    changes.iter().map(|(k, r)| Row::new(*k, r.clone()).to_string().chars().take(40).collect()).collect()
}

#[test]
fn writes_merge_into_stored_rows_and_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store: Arc<dyn KvStore> = Arc::new(RedbStore::open(dir.path()).unwrap());
        let table = sales_table(store);
        let first = table.write(&[row(1, 23.0, 15, "developer", &[1, 2])], None).unwrap();
        assert_eq!(lines(&first), ["+I[1, 23.0, 15, developer, [58, 48, 0, 0"]);
        let second = table.write(&[row(1, 30.2, 20, "java", &[2, 3]), row(1, 25.0, 0, "flink", &[3])], None).unwrap();
        assert_eq!(second.len(), 4, "-U/+U per merge of an existing key");
        assert_eq!(second[0].0, RowKind::UpdateBefore);
        assert_eq!(second[3].0, RowKind::UpdateAfter);
    }
    let store: Arc<dyn KvStore> = Arc::new(RedbStore::open(dir.path()).unwrap());
    let table = sales_table(store);
    let stored = table.get(&[Value::BigInt(1)]).unwrap().unwrap();
    assert_eq!(stored[1], Value::Double(30.2));
    assert_eq!(stored[2], Value::BigInt(35));
    assert_eq!(stored[3], Value::string("developer,java,flink"));
    assert_eq!(stored[4], bitmap(&[1, 2, 3]));
    assert_eq!(table.scan().unwrap().len(), 1);
    assert_eq!(table.get(&[Value::BigInt(2)]).unwrap(), None);
}

#[test]
fn a_batch_with_a_row_that_cannot_merge_applies_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn KvStore> = Arc::new(RedbStore::open(dir.path()).unwrap());
    let table = sales_table(store);
    table.write(&[row(1, 1.0, 1, "a", &[1])], None).unwrap();
    let mut bad = row(1, 2.0, 2, "b", &[]);
    bad.1[4] = Value::Binary(vec![1, 2, 3].into());
    let error = table.write(&[row(2, 5.0, 5, "x", &[9]), bad], None).unwrap_err().to_string();
    assert!(
        error.starts_with("Cannot write the row with key (id=1) into table 'sales': Cannot merge column 'visitors': Unable to deserialize roaring bitmap"),
        "{error}"
    );
    assert_eq!(table.get(&[Value::BigInt(2)]).unwrap(), None, "the batch's earlier row is not kept");
    assert_eq!(table.get(&[Value::BigInt(1)]).unwrap().unwrap()[2], Value::BigInt(1));
}

#[test]
fn a_second_opener_of_the_same_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let _first = RedbStore::open(dir.path()).unwrap();
    let error = RedbStore::open(dir.path()).err().unwrap().to_string();
    assert!(error.contains("is in use by another process"), "{error}");
}
