//! EXPLAIN as Confluent Cloud for Apache Flink prints it (`SET 'weir.explain.format' =
//! 'confluent'`): `== Physical Plan ==` (each node `Stream<Op> [id]`, ids in post-order across
//! the sinks, a node shared by several plans printed once and then as `(reused) [id]`),
//! `== Physical Details ==` (per node: table, primary key, changelog mode, upsert key, state
//! size, state TTL) and, when there are any, `== Warnings ==`.

use std::collections::HashMap;
use std::fmt::Write;

use weir_connectors::TableDescriptor;

use crate::catalog::Catalog;
use crate::physical::op::calc::Calc;
use crate::physical::op::sink::Sink;
use crate::physical::op::table_source_scan::TableSourceScan;
use crate::physical::op::StateSize;
use crate::physical::PhysicalNode;

/// A node of the printed tree: a plan node with its id, or a reference to one printed before.
enum Item<'a> {
    Node { id: usize, node: Node<'a>, inputs: Vec<Item<'a>> },
    Reused(usize),
}

/// What an id stands for: a plan node, or the sink of a SELECT's rows (`Table: Foreground`).
#[derive(Clone, Copy)]
enum Node<'a> {
    Plan(&'a PhysicalNode),
    Foreground(&'a PhysicalNode),
}

impl<'a> Node<'a> {
    fn name(&self) -> String {
        match self {
            Node::Plan(node) => format!("Stream{}", node.name()),
            Node::Foreground(_) => "StreamSink".to_string(),
        }
    }
}

/// Numbers the nodes of `roots` in post-order, sharing scans read by several plans.
struct Numbering<'a> {
    next: usize,
    shared: HashMap<String, usize>,
    nodes: Vec<(usize, Node<'a>)>,
}

impl<'a> Numbering<'a> {
    fn item(&mut self, node: &'a PhysicalNode) -> Item<'a> {
        let digest = node.reuse_digest();
        if let Some(id) = digest.as_ref().and_then(|d| self.shared.get(d)) {
            return Item::Reused(*id);
        }
        let inputs = node.inputs.iter().map(|i| self.item(i)).collect();
        let id = self.number(Node::Plan(node));
        if let Some(d) = digest {
            self.shared.insert(d, id);
        }
        Item::Node { id, node: Node::Plan(node), inputs }
    }

    fn number(&mut self, node: Node<'a>) -> usize {
        self.next += 1;
        self.nodes.push((self.next, node));
        self.next
    }
}

/// Draws `item` as Confluent does: every child under `+- `, two spaces a level, and a `:` below
/// a node that is not its parent's last input.
fn draw(out: &mut String, item: &Item<'_>, prefix: &str, root: bool, last: bool) {
    let label = match item {
        Item::Node { id, node, .. } => format!("{} [{id}]", node.name()),
        Item::Reused(id) => format!("(reused) [{id}]"),
    };
    if root {
        let _ = writeln!(out, "{label}");
    } else {
        let _ = writeln!(out, "{prefix}+- {label}");
    }
    let Item::Node { inputs, .. } = item else { return };
    let child_prefix = if root { "  ".to_string() } else { format!("{prefix}{}", if last { "  " } else { ":  " }) };
    for (i, input) in inputs.iter().enumerate() {
        draw(out, input, &child_prefix, false, i + 1 == inputs.len());
    }
}

/// `(a,b)`
fn key_list(names: &[String]) -> String {
    format!("({})", names.join(","))
}

/// `` `default_catalog`.`default_database`.`t` ``
pub(super) fn qualified_table(table: &TableDescriptor) -> String {
    Catalog::quoted_qualified(&table.name)
}

/// `append` (inserts only), `upsert` (updates without their before-images) or `retract` (every
/// other changelog: a row's removal is sent as the row itself).
fn changelog_text(node: &PhysicalNode) -> &'static str {
    // A sink writes what its input emits.
    let mode = if node.is::<Sink>() { node.inputs[0].changelog } else { node.changelog };
    if mode.is_insert_only() {
        "append"
    } else if mode.update_after && !mode.update_before {
        "upsert"
    } else {
        "retract"
    }
}

/// The columns that identify the row each change of `node` is about: a scan's primary key (when
/// it reads all of it), else what the planner derives ([`PhysicalNode::upsert_key`]).
fn unique_key(node: &PhysicalNode) -> Option<Vec<String>> {
    if node.is::<Sink>() {
        return unique_key(&node.inputs[0]);
    }
    Some(unique_columns(node)?.iter().map(|&c| node.fields[c].name.clone()).collect())
}

/// [`unique_key`] as column positions of `node`'s output.
fn unique_columns(node: &PhysicalNode) -> Option<Vec<usize>> {
    if let Some(scan) = node.op::<TableSourceScan>() {
        if !scan.table.primary_key.is_empty() {
            return scan.primary_key();
        }
    }
    if node.operator.forwards_rows() {
        return unique_columns(&node.inputs[0]);
    }
    match node.op::<Calc>() {
        Some(calc) => unique_columns(&node.inputs[0])?.into_iter().map(|k| calc.output_of(k)).collect(),
        None => node.upsert_key(),
    }
}

/// The upsert key of the rows a sink takes, by name.
pub(super) fn sink_upsert_key(sink: &PhysicalNode) -> Option<Vec<String>> {
    unique_key(&sink.inputs[0])
}

/// The state class of `node` (Confluent's "expensive operators"), `None` for a stateless one.
fn state_size(node: &PhysicalNode) -> Option<StateSize> {
    node.operator.state(node).size
}

/// What [`render`] needs besides the plans.
pub struct ConfluentOptions {
    /// `table.exec.state.ttl` in milliseconds (0: state is kept forever).
    pub state_ttl_millis: i64,
}

impl ConfluentOptions {
    /// The TTL as `State TTL` prints it: `never`, or the duration in its largest whole unit
    /// (`12 h`, `30 min`, `1500 ms`).
    fn state_ttl(&self) -> String {
        let ms = self.state_ttl_millis;
        let units = [(86_400_000, "d"), (3_600_000, "h"), (60_000, "min"), (1_000, "s")];
        match units.iter().find(|(unit, _)| ms % unit == 0) {
            _ if ms <= 0 => "never".to_string(),
            Some((unit, name)) => format!("{} {name}", ms / unit),
            None => format!("{ms} ms"),
        }
    }
}

/// A warning, about one node or the whole query.
struct Warning {
    node: Option<(usize, String)>,
    text: String,
}

/// The details block of `node` (`id`), or nothing for a stateless append-only node without keys.
fn details(id: usize, node: Node<'_>, options: &ConfluentOptions, out: &mut String) -> Option<StateSize> {
    let (plan, table) = match node {
        Node::Foreground(root) => (root, None),
        Node::Plan(plan) => (plan, plan.table()),
    };
    let size = match node {
        Node::Foreground(_) => Some(StateSize::Low),
        Node::Plan(plan) => state_size(plan),
    };
    let key = unique_key(plan);
    let changelog = changelog_text(plan);
    let foreground = matches!(node, Node::Foreground(_));
    if table.is_none() && !foreground && key.is_none() && changelog == "append" && size.is_none() {
        return None;
    }
    let _ = writeln!(out, "[{id}] {}", node.name());
    match table {
        Some(t) => {
            let _ = writeln!(out, "Table: {}", qualified_table(t));
            if !t.primary_key.is_empty() {
                let names: Vec<String> = t.primary_key.iter().map(|&k| t.schema.fields[k].name.clone()).collect();
                let _ = writeln!(out, "Primary key: {}", key_list(&names));
            }
        }
        None if foreground => out.push_str("Table: Foreground\n"),
        None => {}
    }
    let _ = writeln!(out, "Changelog mode: {changelog}");
    if let Some(key) = &key {
        let _ = writeln!(out, "Upsert key: {}", key_list(key));
    }
    if let Some(size) = size {
        let _ = writeln!(out, "State size: {}", format!("{size:?}").to_lowercase());
        if size >= StateSize::Medium {
            let _ = writeln!(out, "State TTL: {}", options.state_ttl());
        }
    }
    if let Some(t) = table {
        for (option, label) in [("scan.startup.mode", "Startup mode"), ("key.format", "Key format")] {
            if let Some(v) = t.options.get(option) {
                let _ = writeln!(out, "{label}: {v}");
            }
        }
        if let Some(v) = t.options.get("value.format").or_else(|| t.options.get("format")) {
            let _ = writeln!(out, "Value format: {v}");
        }
    }
    out.push('\n');
    size
}

/// The EXPLAIN text of `roots` (the plans of a statement's sinks; `foreground`: the plan of a
/// SELECT, whose rows go to the client).
pub fn render(roots: &[PhysicalNode], foreground: bool, options: &ConfluentOptions) -> String {
    let mut numbering = Numbering { next: 0, shared: HashMap::new(), nodes: Vec::new() };
    let mut trees = Vec::new();
    for root in roots {
        let item = numbering.item(root);
        trees.push(if foreground {
            let id = numbering.number(Node::Foreground(root));
            Item::Node { id, node: Node::Foreground(root), inputs: vec![item] }
        } else {
            item
        });
    }
    let mut out = String::from("== Physical Plan ==\n\n");
    for tree in &trees {
        draw(&mut out, tree, "", true, true);
        out.push('\n');
    }
    out.push_str("== Physical Details ==\n\n");
    let mut warnings = Vec::new();
    let mut high = false;
    for &(id, node) in &numbering.nodes {
        high |= details(id, node, options, &mut out) == Some(StateSize::High);
        if let Node::Plan(plan) = node {
            warnings.extend(
                super::advice::node_warnings(plan)
                    .into_iter()
                    .map(|text| Warning { node: Some((id, node.name())), text }),
            );
        }
    }
    if high && options.state_ttl_millis <= 0 {
        warnings.push(Warning { node: None, text: super::advice::HIGH_STATE_WITHOUT_TTL.to_string() });
    }
    if !warnings.is_empty() {
        out.push_str("== Warnings ==\n\n");
        let numbered = warnings.len() > 1;
        for (i, w) in warnings.iter().enumerate() {
            if numbered {
                let _ = write!(out, "{}. ", i + 1);
            }
            match &w.node {
                Some((id, name)) => {
                    let _ = writeln!(out, "Critical for {name} [{id}]: {}", w.text);
                }
                None => {
                    let _ = writeln!(out, "Critical for entire query: {}", w.text);
                }
            }
        }
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}
