//! A savepoint committed to the repository (`tests/fixtures/savepoint-v1/`, written by weir of
//! December 2026, checkpoint format 1) still restores: the job of `job.sql` restarted from it
//! reads the rest of its input and ends with the results of a run from the start. A change to a
//! state layout, a state signature or the checkpoint format that breaks old savepoints fails here.
//!
//! The fixture is the savepoint of its `job.sql` (a statement set over a CSV file) stopped mid-stream (`SIGTERM` after its first
//! checkpoint) and what its filesystem sinks had committed by then; the input is generated, the
//! same on every run. `cargo test --test integration -- --ignored committed_checkpoint::write_fixture`
//! writes a new fixture (only for a new format version: the old one must stay).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use common::events::{events, OnTimeWindows};

use crate::common;

const ROWS: u64 = 400_000;
const KEYS: u64 = 20;
const FIXTURE: &str = "tests/fixtures/savepoint-v1";

/// What the input makes when read whole.
#[derive(Default)]
struct Expected {
    kept: Vec<String>,
    joined: Vec<String>,
    /// Per key: the count and sum of v.
    totals: BTreeMap<u64, (u64, u64)>,
    /// Per window end, as the sink writes it: `end,count,sum` of the rows that are not late.
    wins: Vec<String>,
}

/// Writes `input.csv` (`id,k,v,ts`, from a fixed seed) and `names.csv` (a name per even key)
/// into `dir`; what they make.
fn write_input(dir: &Path) -> Expected {
    let mut text = String::with_capacity(ROWS as usize * 40);
    let mut expected = Expected::default();
    let mut windows = OnTimeWindows::default();
    for event in events(ROWS, KEYS, 0x2545_f491_4f6c_dd1d) {
        text.push_str(&event.line());
        windows.add(&event);
        if event.v < 1 {
            expected.kept.push(event.fields());
            if event.k % 2 == 0 {
                expected.joined.push(format!("{},name-{}", event.id, event.k));
            }
        }
        let total = expected.totals.entry(event.k).or_default();
        total.0 += 1;
        total.1 += event.v;
    }
    std::fs::write(dir.join("input.csv"), text).unwrap();
    let names: String = (0..KEYS).step_by(2).map(|k| format!("{k},name-{k}\n")).collect();
    std::fs::write(dir.join("names.csv"), names).unwrap();
    expected.wins = windows
        .windows
        .into_iter()
        .map(|(end, (n, s))| {
            let second = end / 1000 % 86_400;
            format!("2023-11-14 {:02}:{:02}:{:02},{n},{s}", second / 3600, second / 60 % 60, second % 60)
        })
        .collect();
    expected.wins.sort();
    expected.kept.sort();
    expected.joined.sort();
    expected
}

/// Copies the directory tree `from` into `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().map(Result::unwrap) {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn weir(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_weir"));
    command.arg("run").args(args).arg("job.sql").current_dir(dir);
    command
}

/// The last `[k, n, s]` the print sink wrote per key (`+I` or `+U`).
fn printed_totals(stdout: &str) -> BTreeMap<u64, (u64, u64)> {
    let mut totals = BTreeMap::new();
    for line in stdout.lines() {
        // At parallelism 2 a line starts with its subtask: `1> +I[…]`.
        let line = line.split_once("> ").map_or(line, |(_, row)| row);
        let Some(row) = line.strip_prefix("+I[").or_else(|| line.strip_prefix("+U[")) else { continue };
        let fields: Vec<u64> = row.trim_end_matches(']').split(", ").map(|f| f.parse().unwrap()).collect();
        totals.insert(fields[0], (fields[1], fields[2]));
    }
    totals
}

#[test]
fn a_savepoint_committed_to_the_repository_restores_to_the_whole_result() {
    let dir = tempfile::tempdir().unwrap();
    let expected = write_input(dir.path());
    copy_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE), dir.path());
    let restored_sinks = common::sink_rows(&dir.path().join("kept")).len();
    assert!(restored_sinks > 0 && restored_sinks < expected.kept.len(), "the fixture was taken mid-stream");
    let output = weir(dir.path(), &["--set", "execution.state-recovery.path=savepoint"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(common::sink_rows(&dir.path().join("kept")), expected.kept, "the filter's rows");
    assert_eq!(common::sink_rows(&dir.path().join("joined")), expected.joined, "the join's rows");
    assert_eq!(common::sink_rows(&dir.path().join("wins")), expected.wins, "the window aggregate's rows");
    let totals = printed_totals(&String::from_utf8_lossy(&output.stdout));
    assert_eq!(totals, expected.totals, "the group aggregate's last rows per key");
}

/// Writes a new fixture into `tests/fixtures/savepoint-v1` (see the file's header).
#[test]
#[ignore]
fn write_fixture() {
    let dir = tempfile::tempdir().unwrap();
    write_input(dir.path());
    // The job is the fixture's own `job.sql` (copy it into a new fixture directory first).
    let script = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE).join("job.sql")).unwrap();
    std::fs::write(dir.path().join("job.sql"), &script).unwrap();
    let child = weir(dir.path(), &[]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let checkpoints = dir.path().join("checkpoints").join("fixture");
    while !weir::runtime::checkpoint::storage::latest_checkpoint_of_runs(&checkpoints).is_ok_and(|c| c.is_some()) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let savepoint =
        dir.path().join(stderr.lines().find_map(|l| l.strip_prefix("Savepoint completed. Path: ")).unwrap());
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let _ = std::fs::remove_dir_all(&fixture);
    copy_tree(&savepoint, &fixture.join("savepoint"));
    for sink in ["kept", "joined", "wins"] {
        copy_tree(&dir.path().join(sink), &fixture.join(sink));
    }
    std::fs::write(fixture.join("job.sql"), script).unwrap();
}
