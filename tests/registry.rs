//! The connector registry: option validation and its messages, print and blackhole.

use std::sync::Arc;

use parking_lot::Mutex;
use weir::connectors::{ConnectorRegistry, PrintTarget, TableDescriptor};
use weir::prelude::*;
use weir::runtime::parse::parse_schema;

fn schema(cols: &[(&str, &str)]) -> Schema {
    parse_schema(cols).unwrap()
}

fn source_error(cols: &[(&str, &str)], options: &[(&str, &str)]) -> String {
    let table = TableDescriptor::new("t", schema(cols), options);
    ConnectorRegistry::default().create_source(&table).err().map(|e| e.to_string()).unwrap_or_default()
}

fn sink_error(options: &[(&str, &str)]) -> String {
    let table = TableDescriptor::new("t", schema(&[("a", "INT")]), options);
    ConnectorRegistry::default().create_sink(&table).err().map(|e| e.to_string()).unwrap_or_default()
}

#[test]
fn an_unknown_option_lists_the_supported_ones_as_flink_does() {
    let err = source_error(&[("someString", "STRING")], &[("connector", "datagen"), ("redundant", "123")]);
    assert_eq!(
        err,
        "Unsupported options found for 'datagen'.\n\nUnsupported options:\n\nredundant\n\nSupported options:\n\n\
         connector\nfields.someString.kind\nfields.someString.length\nfields.someString.null-rate\n\
         fields.someString.var-len\nnumber-of-rows\nrows-per-second\nscan.parallelism"
    );
}

#[test]
fn connector_and_format_lookups_fail_clearly() {
    assert_eq!(
        source_error(&[("a", "INT")], &[("path", "x")]),
        "Table options do not contain an option key 'connector' for discovering a connector."
    );
    assert_eq!(
        source_error(&[("a", "INT")], &[("connector", "pulsar")]),
        "Could not find any factory for identifier 'pulsar'.\n\nAvailable factory identifiers are:\n\n\
         blackhole\ndatagen\nfilesystem\nhologres\njdbc\nkafka\nnexmark\nprint\nupsert-kafka"
    );
    assert_eq!(
        source_error(&[("a", "INT")], &[("connector", "filesystem"), ("path", "x"), ("format", "orc")]),
        "Could not find any format factory for identifier 'orc'.\n\nAvailable format identifiers are:\n\n\
         avro\ncanal-json\ncsv\ndebezium-json\njson\nmaxwell-json\nraw"
    );
    assert_eq!(
        source_error(&[("a", "INT")], &[("connector", "print")]),
        "Connector 'print' can only be used as a sink. It cannot be used as a source."
    );
    assert_eq!(
        sink_error(&[("connector", "datagen")]),
        "Connector 'datagen' can only be used as a source. It cannot be used as a sink."
    );
}

#[test]
fn missing_and_malformed_options_name_themselves() {
    assert_eq!(
        source_error(&[("a", "INT")], &[("connector", "filesystem")]),
        "One or more required options are missing.\n\nMissing required options are:\n\nformat\npath"
    );
    assert_eq!(
        source_error(&[("a", "INT")], &[("connector", "datagen"), ("rows-per-second", "fast")]),
        "Could not parse value 'fast' for key 'rows-per-second': expected a positive integer."
    );
    assert_eq!(
        source_error(&[("a", "INT")], &[("connector", "datagen"), ("fields.a.kind", "zipf")]),
        "Could not parse value 'zipf' for key 'fields.a.kind': expected one of 'random', 'sequence'."
    );
    assert_eq!(
        sink_error(&[("connector", "print"), ("standard-error", "maybe")]),
        "Could not parse value 'maybe' for key 'standard-error': expected 'true' or 'false'."
    );
    assert_eq!(
        sink_error(&[("connector", "print"), ("sink.parallelism", "0")]),
        "Invalid configured parallelism 0 for table 'default_catalog.default_database.t'."
    );
    assert_eq!(
        sink_error(&[("connector", "filesystem"), ("path", "out"), ("format", "csv"), ("csv.quote-character", "''")]),
        "Could not parse value '''' for key 'csv.quote-character': expected a single character."
    );
    assert!(sink_error(&[("connector", "filesystem"), ("path", "out"), ("format", "json"), ("csv.x", "1")])
        .starts_with("Unsupported options found for 'filesystem'.\n\nUnsupported options:\n\ncsv.x\n"));
}

#[test]
fn blackhole_takes_no_options_and_swallows_everything() {
    assert_eq!(
        sink_error(&[("connector", "blackhole"), ("sink.parallelism", "2")]),
        "Unsupported options found for 'blackhole'.\n\nUnsupported options:\n\nsink.parallelism\n\n\
         Supported options:\n\nconnector"
    );
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(2));
    let source = TableDescriptor::new(
        "src",
        schema(&[("a", "INT")]),
        &[("connector", "datagen"), ("number-of-rows", "1000"), ("rows-per-second", "1000000000")],
    );
    let sink = TableDescriptor::new("snk", schema(&[("a", "INT")]), &[("connector", "blackhole")]);
    pipeline.from_table(&source).unwrap().to_table(&sink).unwrap();
    assert_eq!(pipeline.run().unwrap(), JobStatus::Finished);
}

/// Runs rows of one source subtask into a print sink of `parallelism` with `options`.
fn print_lines(parallelism: usize, options: &[(&str, &str)]) -> Vec<String> {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let registry = ConnectorRegistry::with_print_target(PrintTarget::Buffer(Arc::clone(&buffer)));
    let pipeline = Pipeline::with_registry(RuntimeConfig::default().with_parallelism(parallelism), registry);
    let rows = (1..=6).map(|i| Row::insert(vec![Value::Int(i), Value::string("x")])).collect();
    let s = schema(&[("id", "INT"), ("s", "STRING")]);
    let sink = TableDescriptor::new("out", s.clone(), options);
    pipeline.from_rows("src", s, rows).key_by(&[0]).to_table(&sink).unwrap();
    pipeline.run().unwrap();
    let text = String::from_utf8(buffer.lock().clone()).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

#[test]
fn print_prefixes_follow_flink_at_parallelism_1_and_3() {
    let one = print_lines(1, &[("connector", "print"), ("print-identifier", "out")]);
    assert_eq!(one, (1..=6).map(|i| format!("out> +I[{i}, x]")).collect::<Vec<_>>());
    assert_eq!(print_lines(1, &[("connector", "print")])[0], "+I[1, x]");

    let three = print_lines(3, &[("connector", "print"), ("print-identifier", "out")]);
    assert_eq!(three.len(), 6);
    for line in &three {
        let (prefix, row) = line.split_once("> ").unwrap();
        let subtask: usize = prefix.strip_prefix("out:").unwrap().parse().unwrap();
        assert!((1..=3).contains(&subtask), "{line}");
        assert!(row.starts_with("+I["), "{line}");
    }
    let anonymous = print_lines(3, &[("connector", "print")]);
    assert!(anonymous.iter().all(|l| l.len() > 3 && l.as_bytes()[1] == b'>' && l.as_bytes()[0].is_ascii_digit()));

    // sink.parallelism overrides the default parallelism.
    let single = print_lines(3, &[("connector", "print"), ("print-identifier", "out"), ("sink.parallelism", "1")]);
    assert!(single.iter().all(|l| l.starts_with("out> ")), "{single:?}");
}

/// Prints two rows to the console; run alone in a child process by the test below (ignored
/// otherwise, as the other child-process helpers are).
#[test]
#[ignore = "a child process of print_writes_to_standard_output_or_standard_error"]
fn print_to_console_child() {
    let standard_error = std::env::var("WEIR_PRINT_CHILD").expect("WEIR_PRINT_CHILD: run by its parent test");
    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(1));
    let s = schema(&[("a", "INT")]);
    let rows = vec![Row::insert(vec![Value::Int(1)]), Row::insert(vec![Value::Int(2)])];
    let sink = TableDescriptor::new(
        "out",
        s.clone(),
        &[("connector", "print"), ("print-identifier", "console"), ("standard-error", &standard_error)],
    );
    pipeline.from_rows("src", s, rows).to_table(&sink).unwrap();
    pipeline.run().unwrap();
}

#[test]
fn print_writes_to_standard_output_or_standard_error() {
    for standard_error in [false, true] {
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "registry::print_to_console_child", "--ignored", "--nocapture", "--test-threads=1"])
            .env("WEIR_PRINT_CHILD", standard_error.to_string())
            .output()
            .unwrap();
        assert!(output.status.success());
        let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        let expected = "console> +I[1]\nconsole> +I[2]\n";
        let (written, silent) = if standard_error { (&stderr, &stdout) } else { (&stdout, &stderr) };
        assert!(written.contains(expected), "missing from the chosen stream: {written}");
        assert!(!silent.contains("console>"), "printed to the other stream: {silent}");
    }
}
