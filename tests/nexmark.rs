//! The `nexmark` connector: the stream it generates is pinned by the events the Nexmark
//! conformance cases read (`tests/conformance/data/nexmark/events.json`, compared with Apache
//! Flink's results there), and it is cut over subtasks as Flink's generator cuts it.

use std::path::Path;
use std::process::Command;

fn weir(dir: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_weir")).current_dir(dir).args(args).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The generator script writes exactly the committed events: the same ids, times and values in
/// every run.
#[test]
fn the_generator_writes_the_conformance_events() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::tempdir().unwrap();
    let script = std::fs::read_to_string(root.join("benches/nexmark/generate_events.sql")).unwrap();
    let out = work.path().join("events");
    let script = script.replace("'target/nexmark-events'", &format!("'{}'", out.display()));
    std::fs::write(work.path().join("generate.sql"), script).unwrap();
    weir(work.path(), &["run", "generate.sql", "--parallelism", "1"]);
    let files: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let written = std::fs::read_to_string(&files[0]).unwrap();
    let committed = std::fs::read_to_string(root.join("tests/conformance/data/nexmark/events.json")).unwrap();
    assert!(written == committed, "the generated events differ from tests/conformance/data/nexmark/events.json");
}

/// At any parallelism the event ids are Flink's (2 up to `events.num + 1`, types by `id % 50`)
/// and each subtask's clock runs at its share of the rate over the same span of event time.
#[test]
fn events_are_split_over_subtasks_as_flink_splits_them() {
    let work = tempfile::tempdir().unwrap();
    let table = "CREATE TABLE nx (
        event_type INT,
        person ROW<id BIGINT, name STRING, emailAddress STRING, creditCard STRING, city STRING, state STRING, `dateTime` TIMESTAMP(3), extra STRING>,
        auction ROW<id BIGINT, itemName STRING, description STRING, initialBid BIGINT, reserve BIGINT, `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra STRING>,
        bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, `dateTime` TIMESTAMP(3), extra STRING>
    ) WITH ('connector' = 'nexmark', 'events.num' = '1000', 'first-event.rate' = '1000', 'base-time' = '0');";
    let query = "SELECT event_type, COUNT(*), MIN(COALESCE(person.`dateTime`, auction.`dateTime`, bid.`dateTime`)), \
                 MAX(COALESCE(person.`dateTime`, auction.`dateTime`, bid.`dateTime`)), MIN(person.id), MAX(person.id), \
                 MIN(auction.id), MAX(auction.id) FROM nx GROUP BY event_type;";
    std::fs::write(
        work.path().join("count.sql"),
        format!("SET 'sql-client.execution.result-mode' = 'TABLEAU';\n{table}\n{query}"),
    )
    .unwrap();
    for p in [1, 2, 4] {
        let out = weir(
            work.path(),
            &["run", "count.sql", "--parallelism", &p.to_string(), "--set", "execution.runtime-mode=batch"],
        );
        let mut rows: Vec<Vec<String>> = out
            .lines()
            .filter(|l| l.starts_with('|') && !l.contains("event_type"))
            .map(|l| l.split('|').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect())
            .collect();
        rows.sort();
        // Ids 2..=1001: 20 people (ids 1001..=1020), 60 auctions (1001..=1060), 920 bids; at
        // any parallelism every split spans the same second of event time.
        let expected: Vec<Vec<String>> = [
            vec!["0", "20", "1970-01-01 00:00:00.049", "1970-01-01 00:00:00.999", "1001", "1020", "<NULL>", "<NULL>"],
            vec!["1", "60", "1970-01-01 00:00:00.001", "1970-01-01 00:00:01.000", "<NULL>", "<NULL>", "1001", "1060"],
            vec![
                "2",
                "920",
                "1970-01-01 00:00:00.003",
                "1970-01-01 00:00:00.998",
                "<NULL>",
                "<NULL>",
                "<NULL>",
                "<NULL>",
            ],
        ]
        .into_iter()
        .map(|row| row.into_iter().map(str::to_string).collect())
        .collect();
        if p == 1 {
            assert_eq!(rows, expected, "p={p}: {out}");
        } else {
            // The ids and counts do not depend on the parallelism; the times do (each split
            // starts its own clock at the base time), within the same second.
            for (row, want) in rows.iter().zip(&expected) {
                assert_eq!((&row[..2], &row[4..]), (&want[..2], &want[4..]), "p={p}: {out}");
                assert!(
                    row[2].starts_with("1970-01-01 00:00:0") && row[3].as_str() <= "1970-01-01 00:00:01.000",
                    "p={p}: {out}"
                );
            }
        }
    }
}

/// A table that does not declare the Nexmark schema is refused, naming it.
#[test]
fn another_schema_is_refused() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        work.path().join("bad.sql"),
        "CREATE TABLE nx (event_type INT) WITH ('connector' = 'nexmark');\nSELECT * FROM nx;",
    )
    .unwrap();
    let output =
        Command::new(env!("CARGO_BIN_EXE_weir")).current_dir(work.path()).args(["run", "bad.sql"]).output().unwrap();
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("must have the physical columns of Flink's Nexmark schema: `event_type` INT, `person` ROW<"),
        "{error}"
    );
}
