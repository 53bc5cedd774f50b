//! Load test of the connectors: datagen → blackhole throughput, CSV parse throughput, CSV and
//! Parquet file scans, and how closely datagen keeps its `rows-per-second` in real time.
//!
//! ```text
//! cargo bench --bench connectors                  # every scenario
//! cargo bench --bench connectors -- csv           # scenarios whose name contains "csv"
//! ```
//!
//! Timings on a shared machine are noisy: compare scenarios within one run.

use std::fmt::Write;
use std::time::Instant;

use weir::connectors::format::{csv::CsvFormatFactory, FormatFactory, Lines};
use weir::connectors::options::TableOptions;
use weir::connectors::TableDescriptor;
use weir::prelude::*;
use weir::runtime::parse::parse_schema;

fn schema(cols: &[(&str, &str)]) -> Schema {
    parse_schema(cols).unwrap()
}

/// Runs datagen (two INT fields) into blackhole on one worker thread.
fn datagen_blackhole(rows: u64) {
    let config = RuntimeConfig::default().with_parallelism(1).with_worker_threads(1);
    let pipeline = Pipeline::new(config);
    let s = schema(&[("a", "INT"), ("b", "INT")]);
    let count = rows.to_string();
    let source = TableDescriptor::new(
        "src",
        s.clone(),
        &[("connector", "datagen"), ("number-of-rows", &count), ("rows-per-second", "1000000000000")],
    );
    let sink = TableDescriptor::new("snk", s, &[("connector", "blackhole")]);
    pipeline.from_table(&source).unwrap().to_table(&sink).unwrap();
    let started = Instant::now();
    pipeline.run().unwrap();
    let wall = started.elapsed().as_secs_f64();
    println!("datagen_blackhole   {rows:>10} rows  {wall:>7.3} s  {:>12.0} rows/s", rows as f64 / wall);
}

fn orders_csv(rows: usize) -> String {
    let products = ["apple", "banana", "cherry", "durian", "elder", "fig", "grape"];
    let mut text = String::with_capacity(rows * 48);
    for i in 0..rows {
        let _ = writeln!(
            text,
            "{i},{},{},{}.{:02},{},2024-01-01 10:{:02}:{:02}.{:03}",
            i % 50,
            products[i % products.len()],
            i % 500,
            i % 100,
            i % 9 + 1,
            i / 60_000 % 60,
            i / 1000 % 60,
            i % 1000
        );
    }
    text
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

/// Decodes an in-memory CSV text with the `csv` format: the parser alone.
fn csv_parse(rows: usize) {
    let text = orders_csv(rows);
    let bytes = text.len();
    let format = CsvFormatFactory.create(&orders_schema(), &mut TableOptions::new(Default::default())).unwrap();
    let mut decoder = format.decoder();
    let mut lines = Lines::from_text(text);
    let mut columns = weir::runtime::columnar::ColumnsBuilder::for_types(
        &orders_schema().fields.iter().map(|f| f.data_type.clone()).collect::<Vec<_>>(),
    );
    let started = Instant::now();
    let mut decoded = 0;
    while decoder.decode(&mut lines, &mut columns).unwrap() {
        decoded += 1;
        if columns.rows() == 1024 {
            columns.finish().unwrap();
        }
    }
    let wall = started.elapsed().as_secs_f64();
    assert_eq!(decoded, rows);
    println!(
        "csv_parse           {rows:>10} rows  {wall:>7.3} s  {:>12.0} rows/s  {:>7.1} MB/s",
        rows as f64 / wall,
        bytes as f64 / wall / 1e6
    );
}

/// Reads a CSV file through the filesystem source into blackhole: file I/O, parsing, runtime.
fn csv_file_to_blackhole(rows: usize) {
    let dir = std::env::temp_dir().join(format!("weir-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("orders.csv");
    std::fs::write(&file, orders_csv(rows)).unwrap();
    let bytes = std::fs::metadata(&file).unwrap().len();
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(1));
    let path = file.display().to_string();
    let source = TableDescriptor::new(
        "orders",
        orders_schema(),
        &[("connector", "filesystem"), ("path", &path), ("format", "csv")],
    );
    let sink = TableDescriptor::new("snk", orders_schema(), &[("connector", "blackhole")]);
    pipeline.from_table(&source).unwrap().to_table(&sink).unwrap();
    let started = Instant::now();
    pipeline.run().unwrap();
    let wall = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "csv_file_blackhole  {rows:>10} rows  {wall:>7.3} s  {:>12.0} rows/s  {:>7.1} MB/s",
        rows as f64 / wall,
        bytes as f64 / wall / 1e6
    );
}

/// Reads the same rows from Parquet through the filesystem source into blackhole: the CSV file
/// written as Parquet by weir first (untimed), then read back whole.
fn parquet_file_to_blackhole(rows: usize) {
    let dir = std::env::temp_dir().join(format!("weir-bench-parquet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("orders.csv");
    std::fs::write(&csv, orders_csv(rows)).unwrap();
    let parquet = dir.join("orders");
    let (csv_path, parquet_path) = (csv.display().to_string(), parquet.display().to_string());
    let table = |path: &str, format: &str| {
        TableDescriptor::new(
            "orders",
            orders_schema(),
            &[("connector", "filesystem"), ("path", path), ("format", format)],
        )
    };
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(1));
    pipeline.from_table(&table(&csv_path, "csv")).unwrap().to_table(&table(&parquet_path, "parquet")).unwrap();
    pipeline.run().unwrap();
    let bytes: u64 = std::fs::read_dir(&parquet).unwrap().map(|f| f.unwrap().metadata().unwrap().len()).sum();
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(1));
    let sink = TableDescriptor::new("snk", orders_schema(), &[("connector", "blackhole")]);
    pipeline.from_table(&table(&parquet_path, "parquet")).unwrap().to_table(&sink).unwrap();
    let started = Instant::now();
    pipeline.run().unwrap();
    let wall = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "parquet_file_blackhole {rows:>7} rows  {wall:>7.3} s  {:>12.0} rows/s  {:>7.1} MB/s of Parquet ({:.1} MB)",
        rows as f64 / wall,
        bytes as f64 / wall / 1e6,
        bytes as f64 / 1e6
    );
}

/// Runs datagen at a fixed rate for about `seconds` and compares the achieved rate.
fn datagen_rate(rows_per_second: u64, seconds: u64, parallelism: usize) {
    let rows = rows_per_second * seconds;
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(parallelism));
    let (rate, count) = (rows_per_second.to_string(), rows.to_string());
    let source = TableDescriptor::new(
        "src",
        schema(&[("a", "INT")]),
        &[("connector", "datagen"), ("number-of-rows", &count), ("rows-per-second", &rate)],
    );
    let received = pipeline.from_table(&source).unwrap().discard();
    let started = Instant::now();
    pipeline.run().unwrap();
    let wall = started.elapsed().as_secs_f64();
    let achieved = received.load(std::sync::atomic::Ordering::Relaxed) as f64 / wall;
    println!(
        "datagen_rate        {rows_per_second:>10} rows/s asked at parallelism {parallelism}: {achieved:>10.0} rows/s in {wall:.3} s ({:+.2}%)",
        (achieved / rows_per_second as f64 - 1.0) * 100.0
    );
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with("--")).unwrap_or_default();
    let run = |name: &str| name.contains(&filter);
    if run("datagen_blackhole") {
        datagen_blackhole(50_000_000);
    }
    if run("csv_parse") {
        csv_parse(2_000_000);
    }
    if run("csv_file_blackhole") {
        csv_file_to_blackhole(2_000_000);
    }
    if run("parquet_file_blackhole") {
        parquet_file_to_blackhole(2_000_000);
    }
    if run("datagen_rate") {
        datagen_rate(10_000, 3, 1);
        datagen_rate(10_000, 3, 2);
        datagen_rate(1_000_000, 3, 2);
    }
}
