//! The planner's modules stand in layers, each using only its own layer and those below
//! (docs/architecture.md): plans, options, errors, the parser and the catalog at the bottom;
//! binding, rules, physical planning and translation above them; EXPLAIN and the state
//! compatibility check above those, reading plans; the planner's entry point and its settings on
//! top (the session that runs statements is a crate of its own, `weir-session`, above the
//! planner). A `crate::…` path to a higher layer fails here (doc comments and test modules
//! aside).

use std::path::Path;

use crate::common;

/// Each top-level module of `planner/src` and its layer.
const LAYERS: &[(&str, usize)] = &[
    ("error", 0),
    ("plan", 0),
    ("plan_text", 0),
    ("attributes", 0),
    ("options", 0),
    ("lookup_options", 0),
    ("hints", 0),
    ("dialect", 0),
    ("dialect_json", 0),
    ("parser", 0),
    ("catalog", 0),
    ("namespaces", 0),
    ("column_type", 0),
    ("conditions", 0),
    ("join_strategy", 0),
    ("resolve", 0),
    ("binder", 1),
    ("rules", 1),
    ("physical", 1),
    ("translate", 1),
    ("explain", 2),
    ("compat", 2),
    ("phases", 3),
    ("settings", 3),
    ("lib", 3),
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
}

#[test]
fn planner_modules_use_only_their_layer_and_those_below() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("planner/src");
    let mut upward = Vec::new();
    for file in common::rust_sources(&root) {
        let relative = file.strip_prefix(&root).unwrap().display().to_string();
        let module = relative.split('/').next().unwrap().trim_end_matches(".rs").to_string();
        let own = layer(&module).unwrap_or_else(|| panic!("planner/src/{relative}: {module} has no layer in LAYERS"));
        // The rules' snapshot fixture is compiled in tests only (`#[cfg(test)] mod testing`).
        if relative == "rules/testing.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (number, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for reference in line.split("crate::").skip(1) {
                let used: String = reference.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if layer(&used).is_some_and(|l| l > own) {
                    upward.push(format!("planner/src/{relative}:{}: {module} uses {used}", number + 1));
                }
            }
        }
    }
    assert!(upward.is_empty(), "modules using a higher layer:\n{}", upward.join("\n"));
}
