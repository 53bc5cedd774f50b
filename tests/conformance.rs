//! The conformance suite: Flink SQL scripts from `tests/conformance/` run by the `weir`
//! binary at parallelism 1, 2 and 4, compared with Apache Flink 2.3's output by the rules of
//! `tests/conformance/README.md`: per print identifier, the changelog applied to a multiset of
//! row texts must end equal (and in the same order for `[ordered]` cases).
//!
//! Cases that need features weir does not have yet are expected to fail; the test prints which
//! cases pass and fails if an expected one does not.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::conformance::{compare, EXPECTED_TO_PASS};

/// Mini-batch settings a case also runs with: off, and on with bundles of 1, 100 and the
/// memory budget (the default size).
const MINI_BATCH: [&[&str]; 4] = [
    &[],
    &["table.exec.mini-batch.enabled=true", "table.exec.mini-batch.allow-latency=50ms", "table.exec.mini-batch.size=1"],
    &[
        "table.exec.mini-batch.enabled=true",
        "table.exec.mini-batch.allow-latency=50ms",
        "table.exec.mini-batch.size=100",
    ],
    &["table.exec.mini-batch.enabled=true", "table.exec.mini-batch.allow-latency=50ms"],
];

/// The on-disk state backend with a budget of a few kilobytes (entries leave the heap after the
/// first few dozen keys), with mini-batch off and on.
const ON_DISK: [&[&str]; 2] = [
    &["state.backend.type=rocksdb", "taskmanager.memory.managed.size=64 kb"],
    &[
        "state.backend.type=rocksdb",
        "taskmanager.memory.managed.size=64 kb",
        "table.exec.mini-batch.enabled=true",
        "table.exec.mini-batch.allow-latency=50ms",
        "table.exec.mini-batch.size=100",
    ],
];

fn run_case(dir: &Path, case: &str, parallelism: usize, settings: &[&str]) -> Result<(), String> {
    let mut args = vec!["run".to_string(), format!("{case}.sql"), "--parallelism".into(), parallelism.to_string()];
    for s in settings {
        args.push("--set".into());
        args.push((*s).to_string());
    }
    let output = Command::new(env!("CARGO_BIN_EXE_weir"))
        .current_dir(dir)
        .args(&args)
        .output()
        .map_err(|e| format!("cannot start weir: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_string());
    }
    // With mini-batch on, Flink's own output with mini-batch on where it differs (see README).
    let mini_batch = settings.contains(&"table.exec.mini-batch.enabled=true");
    let own = dir.join(format!("{case}.minibatch.flink.out"));
    let expected_file = if mini_batch && own.exists() { own } else { dir.join(format!("{case}.flink.out")) };
    let expected = std::fs::read_to_string(expected_file).map_err(|e| e.to_string())?;
    let script = std::fs::read_to_string(dir.join(format!("{case}.sql"))).map_err(|e| e.to_string())?;
    let ordered = script.lines().next().is_some_and(|l| l.contains("[ordered]"));
    compare(case, &String::from_utf8_lossy(&output.stdout), &expected, ordered)
        .map_err(|e| format!("{e} (parallelism {parallelism}, settings {settings:?})"))
}

#[test]
fn conformance_cases_match_flink() {
    run_cases(&MINI_BATCH, true);
}

/// Every case expected to pass also passes with its keyed state on disk.
#[test]
fn conformance_cases_match_flink_with_state_on_disk() {
    run_cases(&ON_DISK, false);
}

/// Runs the cases at parallelism 1, 2 and 4: those expected to pass with each of `settings`,
/// the others (when `report_others`) with the first, to report how they fail.
fn run_cases(settings: &[&[&str]], report_others: bool) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut cases: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".sql").map(str::to_string))
        .collect();
    cases.sort();
    // `WEIR_CASES=a,b` runs only those cases (while working on them).
    if let Ok(only) = std::env::var("WEIR_CASES") {
        cases.retain(|c| only.split(',').any(|o| o == c));
    }
    cases.retain(|case| report_others || EXPECTED_TO_PASS.contains(&case.as_str()));
    // Every run of every case, each a `weir run` process of its own, as many at once as the
    // machine has cores; reported case by case below.
    let runs: Vec<(&str, usize, &[&str])> = cases
        .iter()
        .flat_map(|case| {
            let expected = EXPECTED_TO_PASS.contains(&case.as_str());
            let settings: &[&[&str]] = if expected { settings } else { &settings[..1] };
            [1, 2, 4].into_iter().flat_map(move |p| settings.iter().map(move |s| (case.as_str(), p, *s)))
        })
        .collect();
    let outcomes = common::par_map(&runs, |&(case, p, s)| run_case(&dir, case, p, s));
    let mut failures = Vec::new();
    for case in &cases {
        let expected = EXPECTED_TO_PASS.contains(&case.as_str());
        let results: Vec<&Result<(), String>> =
            runs.iter().zip(&outcomes).filter(|((c, _, _), _)| c == case).map(|(_, outcome)| outcome).collect();
        let passed = results.iter().all(|r| r.is_ok());
        let first_error = results.iter().find_map(|r| r.as_ref().err()).cloned().unwrap_or_default();
        match (passed, expected) {
            (true, _) => println!("PASS {case}"),
            (false, true) => {
                println!("FAIL {case}: {first_error}");
                failures.push(format!("{case}: {first_error}"));
            }
            (false, false) => {
                let reason = first_error.lines().next().unwrap_or_default();
                println!("expected failure {case}: {reason}");
            }
        }
    }
    assert!(failures.is_empty(), "conformance failures:\n{}", failures.join("\n"));
}

#[test]
fn the_comparison_applies_changelogs_and_catches_differences() {
    let expected = "t:1> +I[a, 1]\nt:1> -U[a, 1]\nt:1> +U[a, 2]\nother> +I[x]\n";
    assert!(compare("c", "t> +I[a, 2]\nother> +I[x]\n", expected, false).is_ok());
    assert!(compare("c", "t:2> +I[a, 1]\nother> +I[x]\n", expected, false).is_err());
    assert!(compare("c", "t> -D[a, 2]\n", expected, false).unwrap_err().contains("not there"));
    assert!(compare("c", "other> +I[y]\nother> +I[x]\n", "other> +I[x]\nother> +I[y]\n", true).is_err());
}
