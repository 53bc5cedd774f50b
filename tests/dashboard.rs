//! The dashboard in a real browser: headless Chromium (Debian's `chromium`, which
//! `scripts/ensure-chromium` installs) loads `/` of a running windowed job, runs its script
//! against the REST API, and the page it draws shows the job's graph: every vertex, its
//! parallelism, and records counted. A screenshot is kept in `target/tmp/dashboard.png`.

use crate::common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use common::http::get_json;
use weir::connectors::ConnectorRegistry;
use weir::runtime::RuntimeConfig;
use weir::session::Session;

/// The browser: `WEIR_CHROMIUM`, else `chromium` on the path.
fn chromium() -> PathBuf {
    if let Ok(path) = std::env::var("WEIR_CHROMIUM") {
        return PathBuf::from(path);
    }
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].into_iter().map(PathBuf::from).find(|p| p.exists());
    found.expect("no Chromium: run scripts/test (or scripts/ensure-chromium), which installs Debian's chromium")
}

/// Chromium's flags for a headless run on a machine without a network or a display.
fn browser(profile: &std::path::Path) -> Command {
    let mut command = Command::new(chromium());
    command.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1000",
        // The page's script runs (and fetches) for this much virtual time before the page is taken.
        "--virtual-time-budget=5000",
    ]);
    command.arg(format!("--user-data-dir={}", profile.display()));
    command
}

#[test]
fn the_dashboard_draws_a_running_jobs_graph_with_its_metrics() {
    let mut session = Session::new(
        RuntimeConfig::default().with_parallelism(2),
        ConnectorRegistry::default(),
        Box::new(std::io::sink()),
    );
    session.set("rest.port", "0").unwrap();
    session.detach_unbounded_jobs(true);
    session
        .execute_script(
            "CREATE TABLE bids (item INT, price INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
                 WITH ('connector' = 'datagen', 'rows-per-second' = '5000', 'fields.item.min' = '1', 'fields.item.max' = '20');
             CREATE TABLE counts (item INT, w TIMESTAMP(3), n BIGINT) WITH ('connector' = 'blackhole');
             INSERT INTO counts SELECT item, window_start, COUNT(*)
             FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY item, window_start, window_end;",
        )
        .unwrap();
    let at = session.rest_address().unwrap();
    let jid = session.take_submitted().pop().unwrap().to_string();
    // Rows have reached the second vertex before the browser looks.
    let deadline = Instant::now() + Duration::from_secs(60);
    let job = loop {
        let job = get_json(at, &format!("/jobs/{jid}"));
        if job["vertices"][1]["metrics"]["read-records"].as_u64().unwrap_or(0) > 0 {
            break job;
        }
        assert!(Instant::now() < deadline, "no rows reached the window vertex");
        std::thread::sleep(Duration::from_millis(100));
    };
    let url = format!("http://{at}/");
    let dir = tempfile::tempdir().unwrap();

    let dom = browser(&dir.path().join("dom")).arg("--dump-dom").arg(&url).output().unwrap();
    assert!(dom.status.success(), "chromium failed: {}", String::from_utf8_lossy(&dom.stderr));
    let dom = String::from_utf8_lossy(&dom.stdout).to_string();
    assert!(dom.contains(r#"data-ready="true""#), "the graph was not drawn:\n{dom}");
    for vertex in job["vertices"].as_array().unwrap() {
        let id = vertex["id"].as_str().unwrap();
        // A box in the graph and a row in the table for each vertex.
        assert!(dom.contains(&format!(r#"class="vertex" data-vertex="{id}""#)), "no box for vertex {id}");
        let row_start = dom.find(&format!(r#"<tr data-vertex="{id}">"#)).unwrap_or_else(|| panic!("no row for {id}"));
        let row = &dom[row_start..row_start + dom[row_start..].find("</tr>").unwrap()];
        let cells: Vec<&str> = row.split("<td>").skip(1).map(|c| c.trim_end_matches("</td>")).collect();
        assert_eq!(cells[1], "2", "parallelism of {id}: {row}");
        let records_in: u64 = cells[2].replace(',', "").parse().unwrap();
        assert!(records_in > 0, "no records counted for {id}: {row}");
    }
    assert_eq!(dom.matches("Parallelism: 2").count(), 2);
    assert!(dom.contains("HASH"), "the edge is labelled with its ship strategy");
    assert!(dom.contains("RUNNING"));

    // A link to a vertex opens its subtasks: one row each, records counted.
    let window = job["vertices"][1]["id"].as_str().unwrap();
    let linked = format!("{url}#job={jid}&vertex={window}");
    let dom = browser(&dir.path().join("linked")).arg("--dump-dom").arg(&linked).output().unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout).to_string();
    let table = &dom[dom.find(r#"<table id="subtasks">"#).expect("a subtasks table")..];
    let table = &table[..table.find("</table>").unwrap()];
    assert!(dom.contains("Subtasks of GlobalWindowAggregate"), "no subtasks title");
    assert_eq!(table.matches("<tr>").count(), 1 + 2, "a header and a row per subtask:\n{table}");

    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dashboard.png");
    let _ = std::fs::remove_file(&shot);
    let taken = browser(&dir.path().join("shot"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&linked)
        .output()
        .unwrap();
    assert!(taken.status.success(), "chromium failed: {}", String::from_utf8_lossy(&taken.stderr));
    assert!(std::fs::metadata(&shot).map(|m| m.len() > 10_000).unwrap_or(false), "no screenshot at {}", shot.display());
    drop(session);
}
