//! Windows of processing time through SQL: rows join the window of the clock when they arrive,
//! windows fire as the clock passes their end while the job runs, and every row is counted once.

use crate::common;

use std::collections::BTreeSet;

use common::Buffer;
use weir::connectors::ConnectorRegistry;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

/// Runs `script` at parallelism 2 and returns the changelog it prints.
fn run(script: &str) -> Vec<String> {
    let out = Buffer::default();
    let runtime = RuntimeConfig::default().with_parallelism(2);
    let mut session = Session::new(runtime, ConnectorRegistry::default(), Box::new(out.clone()));
    session.execute_script(script).unwrap_or_else(|e| panic!("{}", e.error));
    let text = String::from_utf8(out.0.lock().clone()).unwrap();
    text.lines().filter(|l| l.starts_with('+') || l.starts_with('-')).map(str::to_string).collect()
}

const TABLE: &str = "SET 'sql-client.execution.result-mode' = 'changelog';\n\
    CREATE TABLE clicks (u INT, proc AS PROCTIME()) WITH ('connector' = 'datagen', 'number-of-rows' = '40', \
    'rows-per-second' = '40', 'fields.u.min' = '1', 'fields.u.max' = '3');\n";

/// The counts of `lines` (`+I[…, n]`), checking each window of each key comes once, as an insert.
fn total(lines: &[String], key_columns: usize) -> i64 {
    let mut windows = BTreeSet::new();
    let mut total = 0;
    for line in lines {
        let fields: Vec<&str> = line.trim_start_matches("+I[").trim_end_matches(']').split(", ").collect();
        assert!(line.starts_with("+I["), "{line}");
        assert!(windows.insert(fields[..key_columns].join(",")), "a window came twice: {line}");
        total += fields.last().unwrap().parse::<i64>().unwrap();
    }
    total
}

#[test]
fn processing_time_window_aggregates_count_every_row_once() {
    let lines = run(&format!(
        "{TABLE}SELECT u, window_start, window_end, COUNT(*) AS n \
         FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(proc), INTERVAL '0.25' SECOND)) GROUP BY u, window_start, window_end;"
    ));
    assert_eq!(total(&lines, 3), 40, "{lines:?}");
    // A second of rows at 40 a second, in quarter-second windows: more than one window.
    let windows: BTreeSet<&str> = lines.iter().map(|l| l.split(", ").nth(1).unwrap()).collect();
    assert!(windows.len() > 1, "{lines:?}");
}

#[test]
fn processing_time_group_windows_of_the_older_syntax_count_every_row_once() {
    let lines = run(&format!(
        "{TABLE}SELECT u, TUMBLE_START(proc, INTERVAL '1' SECOND) AS s, COUNT(*) AS n \
         FROM clicks GROUP BY TUMBLE(proc, INTERVAL '1' SECOND), u;"
    ));
    assert_eq!(total(&lines, 2), 40, "{lines:?}");
}
