//! weir's integration tests in one binary (one link of the whole engine instead of one per
//! file, which kept `target/` many gigabytes larger): each module is the tests of one part or
//! one concern, run as `cargo test --test integration MODULE::` (`slt::`, `conformance::`, …).
//! `tests/memory.rs` is a binary of its own: it counts this process's allocations.

mod common;

mod aggregate_planning;
mod checkpoint;
mod checkpoint_crash;
mod cli;
mod committed_checkpoint;
mod compat;
mod compat_restore;
mod conformance;
mod connector_construction;
mod dashboard;
mod datagen;
mod ddl;
mod exchange;
mod exhaustive_matches;
mod explain;
mod explain_confluent;
mod fault_tolerance;
mod filesystem;
mod functions;
mod fuzz;
mod kafka;
mod kafka_conformance;
mod kafka_crash;
mod kafka_faults;
mod kafka_flink;
mod late_rows;
mod lifecycle;
mod lookup_join;
mod lookup_planning;
mod managed_crash;
mod managed_tables;
mod nexmark;
mod parquet;
mod partitioned_files;
mod pipeline;
mod planner_layers;
mod postgres;
mod processing_time_windows;
mod python_udf;
mod registry;
mod rust_aggregate_udf;
mod rust_table_udf;
mod rust_udf;
mod shell;
mod sink;
mod slt;
mod sql;
mod state_signatures;
mod time;
mod web;

/// Every file of `tests/` is a module above (but `memory.rs`, a binary of its own): a file left
/// out would never run, and nothing else would say so.
#[test]
fn every_test_file_is_a_module_of_this_binary() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    let missing: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".rs").map(str::to_string))
        .filter(|name| name != "main" && name != "memory" && !main.contains(&format!("\nmod {name};\n")))
        .collect();
    assert!(missing.is_empty(), "tests/main.rs lacks `mod` lines for {missing:?}");
}
