//! A new operator kind cannot slip through a planning decision silently. A physical operator is
//! a `PhysicalOp` (`planner/src/physical/op.rs`), whose required methods the compiler asks of
//! every new one, in a file of its own under `physical/op/` that `op.rs` declares (an undeclared
//! file would not be compiled at all). No `match` over the logical node kinds (`Node`) or over
//! what an operator answers (`Runs`, `MiniBatchNeed`) has a `_ =>` arm anywhere in
//! `planner/src`, outside the binder and the logical rules (where a rule matches the one shape
//! it rewrites, as Flink's rule operands do). A question about one kind ("is this a sink?") is
//! an `if let`, not a `match`.
//!
//! The sources are parsed with `syn`: a `match` counts as one over a kind when one of its arms'
//! patterns names the enum (`Runs::Keyed { .. }`, `Node::Scan { .. }`).

use std::path::Path;

use crate::common;

use syn::visit::Visit;

/// Whether `pattern` names a variant of `enum_name` (at any depth of the pattern).
fn names_enum(pattern: &syn::Pat, enum_name: &str) -> bool {
    let of_path =
        |path: &syn::Path| path.segments.len() >= 2 && path.segments[path.segments.len() - 2].ident == enum_name;
    match pattern {
        syn::Pat::Path(p) => of_path(&p.path),
        syn::Pat::Struct(p) => of_path(&p.path),
        syn::Pat::TupleStruct(p) => of_path(&p.path),
        syn::Pat::Or(p) => p.cases.iter().any(|c| names_enum(c, enum_name)),
        syn::Pat::Reference(p) => names_enum(&p.pat, enum_name),
        syn::Pat::Ident(p) => p.subpat.as_ref().is_some_and(|(_, sub)| names_enum(sub, enum_name)),
        syn::Pat::Paren(p) => names_enum(&p.pat, enum_name),
        syn::Pat::Tuple(p) => p.elems.iter().any(|e| names_enum(e, enum_name)),
        _ => false,
    }
}

/// Whether `expr` is a path to a variant of `enum_name` (`AggregateKind::Count`).
fn is_variant_path(expr: &syn::Expr, enum_name: &str) -> bool {
    let syn::Expr::Path(p) = expr else { return false };
    let segments = &p.path.segments;
    segments.len() >= 2 && segments[segments.len() - 2].ident == enum_name
}

/// Where one file tells the kinds of `enum_name` apart: a `match` with an arm naming one, a
/// comparison with one (`kind == AggregateKind::Sum`), a `matches!` naming one.
struct Decisions<'a> {
    enum_name: &'a str,
    lines: Vec<usize>,
}

impl<'ast> Visit<'ast> for Decisions<'_> {
    fn visit_expr_match(&mut self, node: &'ast syn::ExprMatch) {
        if node.arms.iter().any(|arm| names_enum(&arm.pat, self.enum_name)) {
            self.lines.push(node.match_token.span.start().line);
        }
        syn::visit::visit_expr_match(self, node);
    }

    fn visit_expr_binary(&mut self, node: &'ast syn::ExprBinary) {
        let compares = matches!(node.op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_));
        for side in [&*node.left, &*node.right] {
            if let syn::Expr::Path(p) = side {
                if compares && is_variant_path(side, self.enum_name) {
                    self.lines.push(p.path.segments[0].ident.span().start().line);
                }
            }
        }
        syn::visit::visit_expr_binary(self, node);
    }

    fn visit_macro(&mut self, node: &'ast syn::Macro) {
        if node.path.is_ident("matches") && node.tokens.to_string().contains(&format!("{} ::", self.enum_name)) {
            self.lines.push(node.path.segments[0].ident.span().start().line);
        }
        syn::visit::visit_macro(self, node);
    }
}

/// The `match`es of one file over the enums asked about.
struct Matches<'a> {
    enums: &'a [&'a str],
    /// (enum, line, whether it has a `_ =>` arm)
    found: Vec<(&'a str, usize, bool)>,
}

impl<'ast> Visit<'ast> for Matches<'_> {
    fn visit_expr_match(&mut self, node: &'ast syn::ExprMatch) {
        for enum_name in self.enums {
            if node.arms.iter().any(|arm| names_enum(&arm.pat, enum_name)) {
                let wildcard = node.arms.iter().any(|arm| matches!(arm.pat, syn::Pat::Wild(_)));
                let line = node.match_token.span.start().line;
                self.found.push((enum_name, line, wildcard));
            }
        }
        syn::visit::visit_expr_match(self, node);
    }
}

/// `(file:line, enum, wildcard)` for every match over `enums` in the `.rs` files below `dir`.
fn matches_in(dir: &str, enums: &[&str]) -> Vec<(String, String, bool)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    for file in common::rust_sources(&root.join(dir)) {
        let text = std::fs::read_to_string(&file).unwrap();
        let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut visitor = Matches { enums, found: Vec::new() };
        visitor.visit_file(&parsed);
        let name = file.strip_prefix(root).unwrap().display().to_string();
        for (enum_name, line, wildcard) in visitor.found {
            all.push((format!("{name}:{line}"), enum_name.to_string(), wildcard));
        }
    }
    all
}

#[test]
fn no_match_over_node_kinds_has_a_wildcard_arm() {
    let found = matches_in("planner/src", &["Node", "Runs", "MiniBatchNeed"]);
    assert!(found.len() > 20, "the parse finds the planner's matches: {found:?}");
    let rule_of_one_shape = |at: &str, kind: &str| {
        kind == "Node" && (at.starts_with("planner/src/rules/") || at.starts_with("planner/src/binder/"))
    };
    let wildcards: Vec<String> = found
        .iter()
        .filter(|(at, kind, wildcard)| *wildcard && !rule_of_one_shape(at, kind))
        .map(|(at, kind, _)| format!("{at} ({kind})"))
        .collect();
    assert!(
        wildcards.is_empty(),
        "these matches over node kinds have a `_ =>` arm; name every kind instead:\n{}",
        wildcards.join("\n")
    );
}

#[test]
fn every_physical_operator_file_is_declared() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("planner/src/physical");
    let declared = std::fs::read_to_string(root.join("op.rs")).unwrap();
    let mut files = 0;
    for entry in std::fs::read_dir(root.join("op")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        let module = name.strip_suffix(".rs").unwrap_or_else(|| panic!("physical/op/{name} is not a Rust file"));
        assert!(declared.contains(&format!("pub mod {module};")), "physical/op/{name} is not declared in op.rs");
        files += 1;
    }
    assert!(files > 25, "every operator has its file: {files}");
}

#[test]
fn aggregate_kinds_are_told_apart_only_in_the_aggregate_registry() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut outside = Vec::new();
    let mut inside = 0;
    for dir in ["operators/src", "planner/src", "connectors/src", "runtime/src", "store/src", "src"] {
        for file in common::rust_sources(&root.join(dir)) {
            let text = std::fs::read_to_string(&file).unwrap();
            let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let mut visitor = Decisions { enum_name: "AggregateKind", lines: Vec::new() };
            visitor.visit_file(&parsed);
            let name = file.strip_prefix(root).unwrap().display().to_string();
            if name.starts_with("operators/src/aggregate/") {
                inside += visitor.lines.len();
            } else {
                outside.extend(visitor.lines.into_iter().map(|line| format!("{name}:{line}")));
            }
        }
    }
    assert!(inside > 5, "the parse finds the registry's own decisions");
    assert!(
        outside.is_empty(),
        "these places tell aggregate kinds apart outside operators/src/aggregate/; ask the registry \
         (`AggregateKind::function`) instead:\n{}",
        outside.join("\n")
    );
}
