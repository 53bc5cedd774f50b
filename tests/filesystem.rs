//! The `filesystem` connector with the `csv` and `json` formats: reading Flink's test data,
//! round trips through the sink and the source, errors that name the file, line and column.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use rand::{Rng, SeedableRng};
use weir::connectors::TableDescriptor;
use weir::prelude::*;
use weir::runtime::parse::{parse_schema, parse_type};

fn schema(cols: &[(&str, &str)]) -> Schema {
    parse_schema(cols).unwrap()
}

fn orders_schema() -> Schema {
    schema(&[
        ("id", "BIGINT"),
        ("user_id", "INT"),
        ("product", "STRING"),
        ("amount", "DECIMAL(10, 2)"),
        ("qty", "INT"),
        ("ts", "TIMESTAMP(3)"),
    ])
}

fn table(schema: Schema, path: &Path, options: &[(&str, &str)]) -> TableDescriptor {
    let path = path.display().to_string();
    let mut all = vec![("connector", "filesystem"), ("path", path.as_str())];
    all.extend_from_slice(options);
    TableDescriptor::new("t", schema, &all)
}

/// Reads a table into memory at `parallelism`.
fn read(parallelism: usize, table: &TableDescriptor) -> Result<Vec<Row>> {
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(parallelism));
    let out = pipeline.from_table(table).map_err(Error::from)?.collect();
    pipeline.run()?;
    Ok(out.rows())
}

/// Writes `rows` into a table at `parallelism`.
fn write(parallelism: usize, s: &Schema, rows: Vec<Row>, table: &TableDescriptor) -> Result<JobStatus> {
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(parallelism));
    pipeline.from_rows("rows", s.clone(), rows).to_table(table).map_err(Error::from)?;
    pipeline.run()
}

fn multiset(rows: &[Row]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in rows {
        *m.entry(r.to_string()).or_insert(0) += 1;
    }
    m
}

#[test]
fn reads_flinks_conformance_data_as_flink_does() {
    let t = table(orders_schema(), Path::new("tests/conformance/data/orders.csv"), &[("format", "csv")]);
    let rows = read(2, &t).unwrap();
    assert_eq!(rows.len(), 2000);
    let lines = multiset(&rows);
    assert!(lines.contains_key("+I[1, 4, apple, 410.82, 2, 2024-01-01T10:00:00.331]"));
    assert!(lines.contains_key("+I[5, 27, banana, 270.80, 5, 2024-01-01T10:00:01.468]"));
    assert!(lines.contains_key("+I[2000, 20, durian, 100.49, 5, 2024-01-01T10:14:24.128]"));
}

/// Random rows over the types both formats carry, with NULLs.
fn random_rows(s: &Schema, count: usize, seed: u64) -> Vec<Row> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let text = ["plain", "with,comma", "with \"quotes\"", "two\nlines", "", "ünïcode", "#hash"];
    (0..count)
        .map(|i| {
            let values = s
                .fields
                .iter()
                .map(|f| {
                    if rng.random_bool(0.1) {
                        return Value::Null;
                    }
                    match f.data_type.to_string().as_str() {
                        "BIGINT" => Value::BigInt(rng.random()),
                        "INT" => Value::Int(i as i32),
                        "DOUBLE" => Value::Double(rng.random_range(-1e9..1e9)),
                        "BOOLEAN" => Value::Boolean(rng.random()),
                        "DECIMAL(10, 2)" => Value::decimal(rng.random_range(-99_999_999..99_999_999), 2),
                        "TIMESTAMP(3)" => {
                            Value::Timestamp(Timestamp::from_millis(rng.random_range(0..4_000_000_000_000)))
                        }
                        "DATE" => Value::Date(rng.random_range(-10_000..30_000)),
                        "BYTES" => {
                            Value::Binary((0..rng.random_range(0..6)).map(|_| rng.random()).collect::<Vec<u8>>().into())
                        }
                        "ARRAY<INT>" => Value::Array(
                            (0..rng.random_range(1..4)).map(|_| Value::Int(rng.random())).collect::<Vec<_>>().into(),
                        ),
                        _ => Value::string(text[rng.random_range(0..text.len())]),
                    }
                })
                .collect();
            Row::insert(values)
        })
        .collect()
}

fn round_trip_schema() -> Schema {
    schema(&[
        ("id", "INT"),
        ("big", "BIGINT"),
        ("s", "STRING"),
        ("d", "DOUBLE"),
        ("b", "BOOLEAN"),
        ("m", "DECIMAL(10, 2)"),
        ("ts", "TIMESTAMP(3)"),
        ("day", "DATE"),
        ("raw", "BYTES"),
        ("arr", "ARRAY<INT>"),
    ])
}

#[test]
fn csv_round_trips_through_the_sink_and_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let s = round_trip_schema();
    let rows = random_rows(&s, 1500, 1);
    let options = [("format", "csv"), ("csv.null-literal", "\\N"), ("sink.parallelism", "2")];
    let t = table(s.clone(), dir.path(), &options);
    assert_eq!(write(3, &s, rows.clone(), &t).unwrap(), JobStatus::Finished);
    let mut files: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    files.sort();
    assert_eq!(files.len(), 2, "one part file per sink subtask (sink.parallelism 2): {files:?}");
    assert!(files.iter().all(|f| f.starts_with("part-") && f.ends_with("-0")), "{files:?}");
    assert_eq!(multiset(&read(2, &t).unwrap()), multiset(&rows));
}

#[test]
fn json_round_trips_through_the_sink_and_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = round_trip_schema();
    s.fields.push(Field::new("mp", parse_type("MAP<STRING, INT>").unwrap()));
    let mut rows = random_rows(&s, 1000, 2);
    for (i, r) in rows.iter_mut().enumerate() {
        r.values[10] = Value::Map(vec![(Value::string("k"), Value::Int(i as i32))].into());
    }
    for standard in ["SQL", "ISO-8601"] {
        let t = table(
            s.clone(),
            &dir.path().join(standard),
            &[("format", "json"), ("json.timestamp-format.standard", standard)],
        );
        write(2, &s, rows.clone(), &t).unwrap();
        assert_eq!(multiset(&read(1, &t).unwrap()), multiset(&rows), "{standard}");
    }
}

#[test]
fn a_malformed_line_fails_the_job_naming_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("orders.csv");
    std::fs::write(&file, "1,4,apple,410.82,2,2024-01-01 10:00:00.331\n2,4,pear,1.5,x,2024-01-01 10:00:01\n").unwrap();
    let err = read(1, &table(orders_schema(), &file, &[("format", "csv")])).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "Operator 't' (subtask 1/1) failed: Failed to parse file '{}', line 2, column 5 (qty): cannot parse 'x' as INT",
            file.display()
        )
    );
    let lenient = table(orders_schema(), &file, &[("format", "csv"), ("csv.ignore-parse-errors", "true")]);
    let rows: Vec<String> = read(1, &lenient).unwrap().iter().map(Row::to_string).collect();
    assert_eq!(rows[1], "+I[2, 4, pear, 1.50, null, 2024-01-01T10:00:01]");

    std::fs::write(&file, "{\"id\": 1}\n{\"id\": 2, \"qty\": \"many\"}\n").unwrap();
    let err = read(1, &table(orders_schema(), &file, &[("format", "json")])).unwrap_err().to_string();
    assert!(err.ends_with("line 2, column 5 (qty): cannot parse 'many' as INT"), "{err}");
}

#[test]
fn a_directory_is_read_whole_skipping_hidden_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("nested")).unwrap();
    std::fs::write(dir.path().join("a.csv"), "1\n2\n").unwrap();
    std::fs::write(dir.path().join("nested/b.csv"), "3\n").unwrap();
    std::fs::write(dir.path().join("c.csv"), "4\n5\n6\n").unwrap();
    std::fs::write(dir.path().join(".hidden"), "100\n").unwrap();
    std::fs::write(dir.path().join("_SUCCESS"), "oops\n").unwrap();
    let t = table(schema(&[("n", "INT")]), dir.path(), &[("format", "csv")]);
    for parallelism in [1, 2, 4] {
        let mut ns: Vec<i64> = read(parallelism, &t).unwrap().iter().map(|r| r.values[0].as_i64().unwrap()).collect();
        ns.sort_unstable();
        assert_eq!(ns, [1, 2, 3, 4, 5, 6], "parallelism {parallelism}");
    }
}

#[test]
fn a_missing_path_is_an_error_naming_it() {
    let err = read(1, &table(orders_schema(), Path::new("no/such/dir"), &[("format", "csv")])).unwrap_err().to_string();
    assert!(err.ends_with("Cannot access 'no/such/dir': No such file or directory (os error 2)"), "{err}");
}

#[test]
fn the_sink_is_append_only() {
    let dir = tempfile::tempdir().unwrap();
    let s = schema(&[("n", "INT")]);
    let rows = vec![Row::insert(vec![Value::Int(1)]), Row::new(RowKind::UpdateBefore, vec![Value::Int(1)])];
    let err = write(1, &s, rows, &table(s.clone(), dir.path(), &[("format", "csv")])).unwrap_err().to_string();
    assert!(err.ends_with("The filesystem sink of table 't' is append-only: it cannot write a '-U' row."), "{err}");
    // Nothing half-written is visible: only the hidden in-progress file exists.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        assert!(entry.unwrap().file_name().to_string_lossy().starts_with('.'));
    }
}

/// Files checkpointed mid-way at one parallelism and restored at another are read on from
/// where each subtask was: every record exactly once, and errors still name their line.
#[test]
fn a_restored_file_source_reads_on_from_its_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    for f in 0..5 {
        let lines: String = (0..700).map(|i| format!("{},row {i} of file {f}\n", f * 1000 + i)).collect();
        std::fs::write(dir.path().join(format!("part-{f}.csv")), lines).unwrap();
    }
    let t = table(schema(&[("id", "BIGINT"), ("text", "STRING")]), dir.path(), &[("format", "csv")]);
    let provider = weir::connectors::ConnectorRegistry::default().create_source(&t).unwrap();
    let clock: std::sync::Arc<dyn weir::runtime::Clock> = std::sync::Arc::new(weir::runtime::ManualClock::new(0));
    let context = |index: usize, parallelism: usize| {
        let info = weir::runtime::SubtaskInfo::new("t", index, parallelism);
        weir::runtime::OperatorContext::new(info, std::sync::Arc::clone(&clock), 128)
    };
    let all: Vec<i64> = (0..5).flat_map(|f| (0..700).map(move |i| f * 1000 + i)).collect();
    for (before, after) in [(2, 2), (2, 3), (3, 1), (1, 4)] {
        let seen = common::checkpoint_and_restore(&provider.factory, context, (before, after), |i| 3 + i * 4, || {});
        let mut expected = all.clone();
        expected.sort_unstable();
        assert_eq!(seen, expected, "{before} subtasks restored as {after}");
    }
    // A record that goes bad after the restore is reported at its own line.
    std::fs::write(dir.path().join("part-0.csv"), "1,a\n2,b\n3,c\nx,d\n").unwrap();
    for f in 1..5 {
        std::fs::remove_file(dir.path().join(format!("part-{f}.csv"))).unwrap();
    }
    let mut ctx = context(0, 1);
    let mut source = (provider.factory)(ctx.subtask());
    source.open(&mut ctx).unwrap();
    let mut out = weir::runtime::Output::new();
    let mut state = weir::runtime::checkpoint::StateWriter::new();
    // A chunk of two rows, then the checkpoint after line 2.
    let mut small = weir::runtime::OperatorContext::new(
        weir::runtime::SubtaskInfo::new("t", 0, 1),
        std::sync::Arc::clone(&clock),
        2,
    );
    source.poll_next(&mut small, &mut out).unwrap();
    source.snapshot_state(2, &mut ctx, &mut state).unwrap();
    let mut restored = (provider.factory)(ctx.subtask());
    restored.restore_state(&mut ctx, &[state.into_reader()]).unwrap();
    restored.open(&mut ctx).unwrap();
    let error = restored.poll_next(&mut ctx, &mut out).unwrap_err().to_string();
    assert!(error.contains("part-0.csv") && error.contains("line 4"), "{error}");
}
