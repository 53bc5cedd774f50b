//! Criterion micro-benchmarks of the hot paths, one chunk (1024 rows) at a time:
//! routing through a HASH exchange, Calc evaluation (a filter, an arithmetic expression, a
//! string function, and all three together), group aggregate state updates, value printing
//! and CSV parsing. Chunks enter columnar, as sources hand them on.
//!
//! ```text
//! cargo bench --bench micro            # all of them
//! cargo bench --bench micro -- calc    # those whose name contains "calc"
//! ```

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::fmt::Write as _;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use weir::connectors::format::{csv::CsvFormatFactory, FormatFactory, Lines};
use weir::connectors::options::TableOptions;
use weir::operators::aggregate::{AggregateCall, AggregateKind};
use weir::operators::expr::{Expr, Function};
use weir::operators::{CalcOperator, GroupAggregateOperator};
use weir::runtime::element::StreamElement;
use weir::runtime::harness::OperatorHarness;
use weir::runtime::partition::Partitioner;
use weir::runtime::{Chunk, DataType, RowKind, ShipStrategy, Timestamp, Value};

const ROWS: usize = 1024;

/// `[n % 100000 BIGINT, n BIGINT, 'product-k' STRING, n / 100.0 DOUBLE]` rows.
fn chunk() -> Chunk {
    let mut chunk = Chunk::with_capacity(4, ROWS);
    for n in 0..ROWS as i64 {
        chunk.push(
            RowKind::Insert,
            &[
                Value::BigInt(n * 7919 % 100_000),
                Value::BigInt(n),
                Value::string(&format!("product-{}", n % 17)),
                Value::Double(n as f64 / 100.0),
            ],
        );
    }
    chunk
}

/// `chunk` with its Arrow arrays built, as a source or a columnar operator hands it on.
fn columnar(chunk: Chunk) -> Chunk {
    chunk.columns();
    chunk
}

/// Pushes a copy of `data` into `operator` per iteration.
fn push_chunks(b: &mut criterion::Bencher<'_>, operator: impl weir::runtime::Operator + 'static, data: &Chunk) {
    let mut harness = OperatorHarness::new(operator);
    b.iter_batched(
        || data.clone(),
        |chunk| {
            harness.push_chunk(0, chunk).unwrap();
            harness.take_output().len()
        },
        BatchSize::SmallInput,
    )
}

fn hash_exchange(c: &mut Criterion) {
    let mut group = c.benchmark_group("hash_exchange");
    group.throughput(Throughput::Elements(ROWS as u64));
    let data = columnar(chunk());
    group.bench_function("route_1024_rows_to_4", |b| {
        let mut partitioner = Partitioner::new(ShipStrategy::Hash(vec![0]), 0, 4);
        b.iter_batched(
            || StreamElement::Chunk(data.clone()),
            |element| {
                let mut rows = 0;
                partitioner.route(element, |_, e| {
                    if let StreamElement::Chunk(c) = e {
                        rows += c.len();
                    }
                });
                rows
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn calc(c: &mut Criterion) {
    let mut group = c.benchmark_group("calc");
    group.throughput(Throughput::Elements(ROWS as u64));
    let data = chunk();
    let column = |i, ty| Expr::column(i, ty);
    // SELECT a, b * 2 + 1, UPPER(c) WHERE d > 1.5
    let projections = vec![
        column(0, DataType::bigint()),
        Expr::call(
            Function::Plus,
            vec![
                Expr::call(
                    Function::Times,
                    vec![column(1, DataType::bigint()), Expr::literal(Value::BigInt(2), DataType::bigint())],
                )
                .unwrap(),
                Expr::literal(Value::BigInt(1), DataType::bigint()),
            ],
        )
        .unwrap(),
        Expr::call(Function::named("UPPER"), vec![column(2, DataType::string())]).unwrap(),
    ];
    let condition = Expr::call(
        Function::Greater,
        vec![column(3, DataType::double()), Expr::literal(Value::Double(1.5), DataType::double())],
    )
    .unwrap();
    let calc = CalcOperator::new(projections, Some(condition));
    group.bench_function("filter_project_1024_rows", |b| push_chunks(b, calc.clone(), &data));
    let data = columnar(chunk());
    let even = Expr::call(
        Function::Equals,
        vec![
            Expr::call(
                Function::Modulo,
                vec![column(1, DataType::bigint()), Expr::literal(Value::BigInt(2), DataType::bigint())],
            )
            .unwrap(),
            Expr::literal(Value::BigInt(0), DataType::bigint()),
        ],
    )
    .unwrap();
    let all_columns: Vec<Expr> = [DataType::bigint(), DataType::bigint(), DataType::string(), DataType::double()]
        .into_iter()
        .enumerate()
        .map(|(i, ty)| column(i, ty))
        .collect();
    // SELECT * WHERE b % 2 = 0
    let filter = CalcOperator::new(all_columns, Some(even));
    group.bench_function("filter_1024_rows", |b| push_chunks(b, filter.clone(), &data));
    // SELECT b * 2 + 1
    let arithmetic = CalcOperator::new(vec![projections_arithmetic()], None);
    group.bench_function("arithmetic_1024_rows", |b| push_chunks(b, arithmetic.clone(), &data));
    // SELECT UPPER(c)
    let upper = CalcOperator::new(
        vec![Expr::call(Function::named("UPPER"), vec![column(2, DataType::string())]).unwrap()],
        None,
    );
    group.bench_function("upper_1024_rows", |b| push_chunks(b, upper.clone(), &data));
    group.finish();
}

/// `b * 2 + 1` over the benchmark chunk.
fn projections_arithmetic() -> Expr {
    let times = Expr::call(
        Function::Times,
        vec![Expr::column(1, DataType::bigint()), Expr::literal(Value::BigInt(2), DataType::bigint())],
    )
    .unwrap();
    Expr::call(Function::Plus, vec![times, Expr::literal(Value::BigInt(1), DataType::bigint())]).unwrap()
}

fn aggregate(c: &mut Criterion) {
    let mut group = c.benchmark_group("group_aggregate");
    group.throughput(Throughput::Elements(ROWS as u64));
    let data = columnar(chunk());
    let types = [DataType::bigint(), DataType::bigint(), DataType::string(), DataType::double()];
    let calls = vec![
        AggregateCall::new(AggregateKind::Sum, Some(1), DataType::bigint()),
        AggregateCall::new(AggregateKind::CountStar, None, DataType::bigint().not_null()),
        AggregateCall::new(AggregateKind::Max, Some(1), DataType::bigint()),
    ];
    group.bench_function("sum_count_max_1024_rows_100k_keys", |b| {
        // Insert-only input, as the planner declares it for a GROUP BY over a source.
        let operator = GroupAggregateOperator::new(vec![0], calls.clone(), &types).with_retracting_input(false);
        push_chunks(b, operator, &data)
    });
    group.finish();
}

fn printing(c: &mut Criterion) {
    let mut group = c.benchmark_group("print");
    group.throughput(Throughput::Elements(ROWS as u64));
    let rows: Vec<Vec<Value>> = (0..ROWS as i64)
        .map(|n| {
            vec![
                Value::BigInt(n),
                Value::string(&format!("product-{}", n % 17)),
                Value::Double(n as f64 / 3.0),
                Value::decimal(i128::from(n) * 101, 2),
                Value::Timestamp(Timestamp::from_millis(1_704_103_200_000 + n * 1_001)),
            ]
        })
        .collect();
    group.bench_function("rows_as_flink_prints_them_1024", |b| {
        let mut out = String::with_capacity(64 * ROWS);
        b.iter(|| {
            out.clear();
            for row in &rows {
                weir::runtime::row::write_row(&mut out, RowKind::Insert, row);
                out.push('\n');
            }
            out.len()
        })
    });
    // The same rows from a columnar chunk, as the print sink writes chunks that arrive with arrays.
    let types =
        [DataType::bigint(), DataType::string(), DataType::double(), DataType::decimal(10, 2), DataType::timestamp(3)];
    let mut chunk = Chunk::with_types(&types);
    for row in &rows {
        chunk.push(RowKind::Insert, row);
    }
    let chunk = Chunk::from_arrays(chunk.kinds().to_vec(), chunk.columns().arrays().to_vec());
    group.bench_function("columns_as_flink_prints_them_1024", |b| {
        let mut out = String::with_capacity(64 * ROWS);
        b.iter(|| {
            out.clear();
            weir::runtime::columnar::print::write_lines(&mut out, "", &chunk);
            out.len()
        })
    });
    group.finish();
}

fn csv(c: &mut Criterion) {
    let mut group = c.benchmark_group("csv");
    let mut text = String::new();
    for i in 0..ROWS {
        let _ = writeln!(
            text,
            "{i},{},product-{},{}.{:02},2024-01-01 10:00:{:02}.{:03}",
            i % 50,
            i % 7,
            i % 500,
            i % 100,
            i % 60,
            i % 1000
        );
    }
    group.throughput(Throughput::Bytes(text.len() as u64));
    let schema = weir::runtime::parse::parse_schema(&[
        ("id", "BIGINT"),
        ("user_id", "INT"),
        ("product", "STRING"),
        ("amount", "DECIMAL(10, 2)"),
        ("ts", "TIMESTAMP(3)"),
    ])
    .unwrap();
    let format = CsvFormatFactory.create(&schema, &mut TableOptions::new(Default::default())).unwrap();
    group.bench_function("decode_1024_lines", |b| {
        let mut decoder = format.decoder();
        let mut columns = weir::runtime::columnar::ColumnsBuilder::for_types(
            &schema.fields.iter().map(|f| f.data_type.clone()).collect::<Vec<_>>(),
        );
        b.iter_batched(
            || Lines::from_text(text.clone()),
            |mut lines| {
                let mut decoded = 0;
                while decoder.decode(&mut lines, &mut columns).unwrap() {
                    decoded += 1;
                }
                columns.finish().unwrap();
                decoded
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, hash_exchange, calc, aggregate, printing, csv);
criterion_main!(benches);
