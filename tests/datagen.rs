//! The `datagen` connector: every option, every type, sequences, and the rate limit on an
//! injected clock.

use crate::common;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::wait_until;
use weir::connectors::{ConnectorRegistry, TableDescriptor};
use weir::prelude::*;
use weir::runtime::parse::parse_schema;
use weir::runtime::ManualClock;

fn schema(cols: &[(&str, &str)]) -> Schema {
    parse_schema(cols).unwrap()
}

const FAST: (&str, &str) = ("rows-per-second", "1000000000");

/// Runs a datagen table into memory at `parallelism` and returns its rows.
fn generate(parallelism: usize, cols: &[(&str, &str)], options: &[(&str, &str)]) -> Vec<Row> {
    let mut all = vec![("connector", "datagen")];
    all.extend_from_slice(options);
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(parallelism));
    let out = pipeline.from_table(&TableDescriptor::new("gen", schema(cols), &all)).unwrap().collect();
    assert_eq!(pipeline.run().unwrap(), JobStatus::Finished);
    out.rows()
}

fn error(cols: &[(&str, &str)], options: &[(&str, &str)]) -> String {
    let mut all = vec![("connector", "datagen")];
    all.extend_from_slice(options);
    let table = TableDescriptor::new("gen", schema(cols), &all);
    ConnectorRegistry::default().create_source(&table).err().map(|e| e.to_string()).unwrap_or_default()
}

#[test]
fn a_sequence_at_parallelism_4_yields_each_value_exactly_once() {
    let rows = generate(
        4,
        &[("id", "BIGINT"), ("s", "STRING")],
        &[FAST, ("fields.id.kind", "sequence"), ("fields.id.start", "1"), ("fields.id.end", "10000")],
    );
    let ids: Vec<i64> = rows.iter().map(|r| r.values[0].as_i64().unwrap()).collect();
    let distinct: BTreeSet<i64> = ids.iter().copied().collect();
    assert_eq!(ids.len(), 10_000);
    assert_eq!(distinct, (1..=10_000).collect());
    // number-of-rows cuts the sequence short, still without gaps.
    let rows = generate(
        4,
        &[("id", "INT")],
        &[
            FAST,
            ("number-of-rows", "503"),
            ("fields.id.kind", "sequence"),
            ("fields.id.start", "-3"),
            ("fields.id.end", "100000"),
        ],
    );
    let ids: BTreeSet<i64> = rows.iter().map(|r| r.values[0].as_i64().unwrap()).collect();
    assert_eq!((rows.len(), ids), (503, (-3..500).collect()));
}

#[test]
fn sequences_of_strings_decimals_and_bytes_count_too() {
    let rows = generate(
        1,
        &[("s", "STRING"), ("d", "DECIMAL(6, 2)"), ("b", "BYTES"), ("f", "DOUBLE")],
        &[
            FAST,
            ("fields.s.kind", "sequence"),
            ("fields.s.start", "7"),
            ("fields.s.end", "9"),
            ("fields.d.kind", "sequence"),
            ("fields.d.start", "1"),
            ("fields.d.end", "10"),
            ("fields.b.kind", "sequence"),
            ("fields.b.start", "1"),
            ("fields.b.end", "3"),
            ("fields.f.kind", "sequence"),
            ("fields.f.start", "0"),
            ("fields.f.end", "5"),
        ],
    );
    let lines: Vec<String> = rows.iter().map(Row::to_string).collect();
    assert_eq!(
        lines,
        [
            "+I[7, 1.00, [0, 0, 0, 0, 0, 0, 0, 1], 0.0]",
            "+I[8, 2.00, [0, 0, 0, 0, 0, 0, 0, 2], 1.0]",
            "+I[9, 3.00, [0, 0, 0, 0, 0, 0, 0, 3], 2.0]"
        ]
    );
}

#[test]
fn random_values_respect_min_max_length_var_len_and_null_rate() {
    let rows = generate(
        2,
        &[
            ("i", "INT"),
            ("b", "BIGINT"),
            ("d", "DOUBLE"),
            ("m", "DECIMAL(5, 2)"),
            ("s", "STRING"),
            ("v", "STRING"),
            ("n", "INT"),
            ("h", "INT"),
        ],
        &[
            FAST,
            ("number-of-rows", "2000"),
            ("fields.i.min", "-5"),
            ("fields.i.max", "5"),
            ("fields.b.min", "1000000000000"),
            ("fields.b.max", "1000000000002"),
            ("fields.d.min", "0.5"),
            ("fields.d.max", "0.75"),
            ("fields.m.min", "-10"),
            ("fields.m.max", "10"),
            ("fields.s.length", "10"),
            ("fields.v.length", "10"),
            ("fields.v.var-len", "true"),
            ("fields.n.null-rate", "1.0"),
            ("fields.h.null-rate", "0.5"),
        ],
    );
    assert_eq!(rows.len(), 2000);
    let mut var_lengths = BTreeSet::new();
    let mut half_nulls = 0;
    for r in &rows {
        let v = &r.values;
        assert!((-5..=5).contains(&v[0].as_i64().unwrap()), "{r}");
        assert!((1_000_000_000_000..=1_000_000_000_002).contains(&v[1].as_i64().unwrap()), "{r}");
        assert!((0.5..=0.75).contains(&v[2].as_f64().unwrap()), "{r}");
        let m = v[3].as_decimal().unwrap();
        assert!(m.scale == 2 && (-1000..=1000).contains(&m.unscaled), "{r}");
        let s = v[4].as_str().unwrap();
        assert!(s.len() == 10 && s.bytes().all(|c| c.is_ascii_hexdigit()), "{r}");
        let len = v[5].as_str().unwrap().len();
        assert!((1..10).contains(&len), "{r}");
        var_lengths.insert(len);
        assert!(v[6].is_null());
        half_nulls += usize::from(v[7].is_null());
    }
    assert!(var_lengths.len() > 3, "var-len lengths: {var_lengths:?}");
    assert!((500..1500).contains(&half_nulls), "{half_nulls} of 2000 NULLs at null-rate 0.5");
}

#[test]
fn every_type_generates_values_of_its_type() {
    let cols = [
        ("bo", "BOOLEAN"),
        ("ti", "TINYINT"),
        ("si", "SMALLINT"),
        ("i", "INT"),
        ("bi", "BIGINT"),
        ("f", "FLOAT"),
        ("d", "DOUBLE"),
        ("de", "DECIMAL(10, 3)"),
        ("c", "CHAR(4)"),
        ("vc", "VARCHAR(7)"),
        ("bin", "BINARY(3)"),
        ("vb", "BYTES"),
        ("da", "DATE"),
        ("t", "TIME"),
        ("ts", "TIMESTAMP(3)"),
        ("ltz", "TIMESTAMP_LTZ(3)"),
        ("arr", "ARRAY<INT>"),
        ("mp", "MAP<STRING, BIGINT>"),
        ("bag", "MULTISET<INT>"),
    ];
    let rows = generate(
        1,
        &cols,
        &[
            FAST,
            ("number-of-rows", "20"),
            ("fields.arr.length", "4"),
            ("fields.mp.key.length", "8"),
            ("fields.bag.element.min", "1"),
            ("fields.bag.element.max", "2"),
        ],
    );
    assert_eq!(rows.len(), 20);
    for r in &rows {
        let v = &r.values;
        assert!(matches!(v[0], Value::Boolean(_)));
        assert!(matches!(v[1], Value::TinyInt(_)) && matches!(v[2], Value::SmallInt(_)));
        assert!(matches!(v[3], Value::Int(_)) && matches!(v[4], Value::BigInt(_)));
        assert!(matches!(v[5], Value::Float(_)) && matches!(v[6], Value::Double(_)));
        assert_eq!(v[7].as_decimal().unwrap().scale, 3);
        assert_eq!((v[8].as_str().unwrap().len(), v[9].as_str().unwrap().len()), (4, 7));
        assert!(matches!(&v[10], Value::Binary(b) if b.len() == 3));
        assert!(matches!(&v[11], Value::Binary(b) if b.len() == 100));
        assert!(matches!(v[12], Value::Date(_)) && matches!(v[13], Value::Time(_)));
        assert!(matches!(v[14], Value::Timestamp(_)) && matches!(v[15], Value::TimestampLtz(_)));
        assert!(matches!(&v[16], Value::Array(a) if a.len() == 4 && matches!(a[0], Value::Int(_))));
        assert!(matches!(&v[17], Value::Map(m) if !m.is_empty() && m[0].0.as_str().unwrap().len() == 8));
        // A bag counts each distinct element from 0 to 10, as Flink's generator does.
        let Value::Map(bag) = &v[18] else { panic!("a bag is a map of counts: {:?}", v[18]) };
        assert!((1..=2).contains(&bag.len()), "{bag:?}");
        for (element, count) in bag.iter() {
            assert!(matches!(element, Value::Int(1 | 2)) && matches!(count, Value::Int(0..=10)), "{bag:?}");
        }
    }
}

#[test]
fn times_come_from_the_job_clock_and_max_past_reaches_back() {
    let now = 1_704_103_200_000; // 2024-01-01T10:00
    let clock = Arc::new(ManualClock::new(now));
    let config = RuntimeConfig::default().with_parallelism(1).with_clock(Arc::clone(&clock) as _);
    let pipeline = Pipeline::new(config);
    let table = TableDescriptor::new(
        "gen",
        schema(&[("ts", "TIMESTAMP(3)"), ("past", "TIMESTAMP(3)"), ("d", "DATE")]),
        &[("connector", "datagen"), FAST, ("number-of-rows", "500"), ("fields.past.max-past", "1 min")],
    );
    let out = pipeline.from_table(&table).unwrap().collect();
    let job = pipeline.start().unwrap();
    // The first row comes at once; the others are due a millisecond later.
    wait_until("the first row", || !out.rows().is_empty());
    clock.advance(1);
    job.wait().unwrap();
    let rows = out.rows();
    assert_eq!(rows.len(), 500);
    for (i, r) in rows.iter().enumerate() {
        let at = if i == 0 { now } else { now + 1 };
        assert_eq!(r.values[0], Value::Timestamp(Timestamp::from_millis(at)));
        let Value::Timestamp(past) = r.values[1] else { panic!("{r}") };
        assert!((at - 60_000..=at).contains(&past.millis), "{r}");
        assert_eq!(r.to_string().split(", ").nth(2), Some("2024-01-01]"));
    }
}

#[test]
fn the_rate_limit_follows_the_injected_clock() {
    for parallelism in [1, 2] {
        let clock = Arc::new(ManualClock::new(0));
        let config = RuntimeConfig::default().with_parallelism(parallelism).with_clock(Arc::clone(&clock) as _);
        let pipeline = Pipeline::new(config);
        let table = TableDescriptor::new(
            "gen",
            schema(&[("i", "INT")]),
            &[("connector", "datagen"), ("rows-per-second", "100"), ("number-of-rows", "300")],
        );
        let out = pipeline.from_table(&table).unwrap().collect();
        let job = pipeline.start().unwrap();
        // Each subtask emits its first row at once, then 100 / p rows per second.
        let p = parallelism;
        for (millis, expected) in [(0, p), (500, 50 + p), (1_000, 100 + p), (2_000, 200 + p)] {
            clock.set(millis);
            wait_until(&format!("{expected} rows at {millis} ms"), || out.rows().len() >= expected);
            assert_eq!(out.rows().len(), expected, "parallelism {parallelism} at {millis} ms");
        }
        clock.set(3_000);
        job.wait().unwrap();
        assert_eq!(out.rows().len(), 300);
    }
}

#[test]
fn scan_parallelism_sets_the_source_parallelism() {
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(1));
    let table = TableDescriptor::new(
        "gen",
        schema(&[("i", "INT")]),
        &[("connector", "datagen"), FAST, ("number-of-rows", "90"), ("scan.parallelism", "3")],
    );
    let out = pipeline.from_table(&table).unwrap().collect();
    assert_eq!(pipeline.job_graph().vertices()[0].parallelism, 3);
    pipeline.run().unwrap();
    assert_eq!(out.rows().len(), 90);
}

#[test]
fn invalid_field_options_are_explained() {
    assert_eq!(
        error(&[("id", "INT")], &[("fields.id.kind", "sequence"), ("fields.id.end", "5")]),
        "Could not find required property 'fields.id.start' for sequence generator."
    );
    assert_eq!(
        error(&[("id", "INT")], &[("fields.id.kind", "sequence"), ("fields.id.start", "9"), ("fields.id.end", "5")]),
        "The value of 'fields.id.start' (9) must not be greater than 'fields.id.end' (5)."
    );
    assert_eq!(
        error(
            &[("id", "TINYINT")],
            &[("fields.id.kind", "sequence"), ("fields.id.start", "0"), ("fields.id.end", "500")]
        ),
        "The sequence of 'fields.id' (0 to 500) does not fit in TINYINT."
    );
    assert_eq!(error(&[("a", "ARRAY<INT>")], &[("fields.a.kind", "sequence")]), "Unsupported type: ARRAY<INT>");
    assert_eq!(
        error(&[("i", "INT")], &[("fields.i.min", "10"), ("fields.i.max", "1")]),
        "The value of 'fields.i.min' (10) must not be greater than 'fields.i.max' (1)."
    );
    assert_eq!(
        error(&[("i", "TINYINT")], &[("fields.i.max", "1000")]),
        "Could not parse value '1000' for key 'fields.i.max': expected an integer between -128 and 127."
    );
    assert_eq!(
        error(&[("i", "INT")], &[("fields.i.null-rate", "2")]),
        "Could not parse value '2' for key 'fields.i.null-rate': expected a number between 0 and 1."
    );
    assert_eq!(
        error(&[("s", "STRING")], &[("fields.s.length", "-1")]),
        "Could not parse value '-1' for key 'fields.s.length': expected a positive integer."
    );
    assert_eq!(
        error(&[("t", "TIMESTAMP(3)")], &[("fields.t.max-past", "yesterday")]),
        "Could not parse value 'yesterday' for key 'fields.t.max-past': expected a duration such as '500 ms', '10 s' or '1 min'."
    );
    assert_eq!(
        error(&[("i", "INT")], &[("number-of-rows", "-5")]),
        "Could not parse value '-5' for key 'number-of-rows': expected a non-negative integer."
    );
    // A string field takes no min; an INT field takes no length.
    assert!(error(&[("s", "STRING")], &[("fields.s.min", "1")]).contains("Unsupported options:\n\nfields.s.min\n"));
    assert!(error(&[("i", "INT")], &[("fields.i.length", "1")]).contains("Unsupported options:\n\nfields.i.length\n"));
}

#[test]
fn an_unbounded_datagen_runs_until_cancelled() {
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(2));
    let table = TableDescriptor::new("gen", schema(&[("i", "INT")]), &[("connector", "datagen"), FAST]);
    let rows = pipeline.from_table(&table).unwrap().discard();
    let job = pipeline.start().unwrap();
    wait_until("rows flow", || rows.load(std::sync::atomic::Ordering::Relaxed) > 100_000);
    job.cancel();
    assert_eq!(job.wait().unwrap(), JobStatus::Cancelled);
}

/// A sequence checkpointed mid-way at one parallelism and restored at others yields every value
/// exactly once: what the old subtasks had not sent is shared out among the new ones.
#[test]
fn a_restored_sequence_goes_on_without_loss_or_repeat_at_any_parallelism() {
    let table = TableDescriptor::new(
        "gen",
        schema(&[("id", "BIGINT")]),
        &[
            ("connector", "datagen"),
            FAST,
            ("fields.id.kind", "sequence"),
            ("fields.id.start", "1"),
            ("fields.id.end", "10000"),
        ],
    );
    let provider = ConnectorRegistry::default().create_source(&table).unwrap();
    let clock = Arc::new(ManualClock::new(0));
    let context = |index: usize, parallelism: usize| {
        let info = weir::runtime::SubtaskInfo::new("gen", index, parallelism);
        weir::runtime::OperatorContext::new(info, Arc::clone(&clock) as _, 100)
    };
    for (before, after) in [(3, 3), (3, 2), (2, 5), (4, 1)] {
        let seen = common::checkpoint_and_restore(
            &provider.factory,
            context,
            (before, after),
            |i| i + 2,
            || clock.advance(1_000),
        );
        assert_eq!(seen, (1..=10_000).collect::<Vec<i64>>(), "{before} subtasks restored as {after}");
    }
}
