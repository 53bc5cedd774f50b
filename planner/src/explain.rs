//! EXPLAIN: Flink's three sections over weir's plans, with Flink's node names, attributes and
//! tree drawing, changelog modes with `CHANGELOG_MODE`, and the execution plan as JSON with
//! `JSON_EXECUTION_PLAN`.

pub mod advice;
pub mod confluent;
mod python;
mod rank;
mod window;

use std::fmt::Write;

use weir_runtime::{Field, ShipStrategy};

pub(crate) use crate::attributes::{aggregate_text, expand_projects, names, partitions_attribute, table_path};
use crate::catalog::Catalog;
use crate::physical::op::exchange::Exchange;
use crate::physical::op::lookup_join::LookupJoin;
use crate::physical::op::sink::Sink;
use crate::physical::op::ExplainInput;
use crate::physical::{PhysicalNode, SinkStep};
use crate::plan::{Node, Plan};
pub(crate) use crate::plan_text::{calcite_type, literal, logical_expression};

/// What EXPLAIN prints besides the plans.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExplainDetails {
    /// `CHANGELOG_MODE`: each physical node's changelog mode.
    pub changelog_mode: bool,
    /// `JSON_EXECUTION_PLAN`: the execution plan as JSON.
    pub json_execution_plan: bool,
    /// `PLAN_ADVICE`: Flink's advice on the plan, with the settings it names.
    pub plan_advice: Option<crate::options::AdviceSettings>,
}

/// Draws a tree: `+- ` before the last child, `:- ` before the others, `:  ` to continue.
fn draw<T>(out: &mut String, node: &T, prefix: &str, label: &dyn Fn(&T) -> String, children: &dyn Fn(&T) -> Vec<&T>) {
    let _ = writeln!(out, "{}", label(node));
    let kids = children(node);
    for (i, child) in kids.iter().enumerate() {
        let last = i + 1 == kids.len();
        let _ = write!(out, "{prefix}{}", if last { "+- " } else { ":- " });
        let deeper = format!("{prefix}{}", if last { "   " } else { ":  " });
        draw(out, *child, &deeper, label, children);
    }
}

/// One physical node's line; `infix` for the execution plan, `changelog` to add its mode.
fn physical_label(node: &PhysicalNode, infix: bool, changelog: bool) -> String {
    // A join's expressions read its joined row: both inputs' columns, named unique.
    let input_fields: Vec<Field> = if node.inputs.len() > 1 {
        let mut joined: Vec<Field> = node.inputs.iter().flat_map(|i| i.fields.clone()).collect();
        crate::binder::uniquify(&mut joined);
        joined
    } else {
        node.inputs.first().map(|i| i.fields.clone()).unwrap_or_default()
    };
    let column = |i: usize| input_fields.get(i).map_or(format!("${i}"), |f| f.name.clone());
    let input = ExplainInput { column: &column, input_fields: &input_fields, infix };
    let mut text = node.operator.explain(node, &input);
    if changelog {
        text.pop();
        let _ = write!(text, ", changelogMode=[{}])", node.changelog);
    }
    text
}

/// One logical node's line, in Flink's AST notation with `$i` column references.
fn logical_label(plan: &Plan, detailed: bool) -> String {
    let dollar = |i: usize| format!("${i}");
    match &plan.node {
        Node::Scan { table, projection, changelog, key, filter, .. } if detailed => {
            let column = |i: usize| table.schema.fields[i].name.clone();
            let mut text = format!("LogicalTableScan(table=[{}]", table_path(&table.name, None));
            let _ =
                write!(text, ", project=[{}]", projection.iter().map(|&c| column(c)).collect::<Vec<_>>().join(", "));
            text.push_str(&partitions_attribute(filter));
            let parts: Vec<String> = filter.remaining().map(|c| logical_expression(c, &column)).collect();
            if !parts.is_empty() {
                let _ = write!(text, ", filter=[{}]", parts.join(", "));
            }
            if let Some(key) = key {
                let _ = write!(text, ", key=[{}]", key.iter().map(literal).collect::<Vec<_>>().join(", "));
            }
            let _ = write!(text, ", changelogMode=[{changelog}])");
            text
        }
        Node::Scan { table, .. } => format!("LogicalTableScan(table=[{}])", table_path(&table.name, None)),
        Node::Values { rows } => {
            let tuples: Vec<String> = rows
                .iter()
                .map(|r| format!("{{ {} }}", r.iter().map(literal).collect::<Vec<_>>().join(", ")))
                .collect();
            format!("LogicalValues(tuples=[[{}]])", tuples.join(", "))
        }
        Node::Calc { projections, .. } => {
            let items: Vec<String> = projections
                .iter()
                .zip(&plan.fields)
                .map(|(p, f)| format!("{}=[{}]", f.name, logical_expression(p, &dollar)))
                .collect();
            format!("LogicalProject({})", items.join(", "))
        }
        Node::WatermarkAssigner { input, rowtime, watermark } => format!(
            "LogicalWatermarkAssigner(rowtime=[{}], watermark=[{}])",
            input.fields.get(*rowtime).map_or(String::new(), |f| f.name.clone()),
            logical_expression(watermark, &dollar)
        ),
        Node::Aggregate { keys, calls, .. } => {
            let mut items =
                vec![format!("group=[{{{}}}]", keys.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", "))];
            for (c, f) in calls.iter().zip(&plan.fields[keys.len()..]) {
                items.push(format!("{}=[{}]", f.name, aggregate_text(c, &dollar).replace("(*)", "()")));
            }
            format!("LogicalAggregate({})", items.join(", "))
        }
        Node::Union { .. } => "LogicalUnion(all=[true])".to_string(),
        Node::WindowTableFunction { input, time_col, window, .. } => {
            window::logical_function_label(plan, input, *time_col, window)
        }
        Node::WindowAggregate { input, keys, calls, window, time_col, .. } => {
            window::logical_aggregate_label(plan, input, keys, calls, window, *time_col)
        }
        Node::Join { join_type, condition, .. } => {
            let kind = match join_type {
                weir_operators::join::JoinType::Inner => "inner",
                weir_operators::join::JoinType::Left => "left",
                weir_operators::join::JoinType::Right => "right",
                weir_operators::join::JoinType::Full => "full",
                weir_operators::join::JoinType::LeftSemi => "semi",
                weir_operators::join::JoinType::LeftAnti => "anti",
            };
            format!("LogicalJoin(condition=[{}], joinType=[{kind}])", logical_expression(condition, &dollar))
        }
        Node::Rank { rank_type, range, partition, order, .. } => {
            rank::logical_rank_label("LogicalRank", *rank_type, *range, partition, order)
        }
        Node::WindowRank { rank_type, range, partition, order, .. } => {
            rank::logical_rank_label("LogicalWindowRank", *rank_type, Some(*range), partition, order)
        }
        Node::Deduplicate { partition, time_col, keep_last, .. } => format!(
            "LogicalDeduplicate(keep=[{}], key=[{}], order=[${time_col}])",
            if *keep_last { "LastRow" } else { "FirstRow" },
            partition.iter().map(|p| format!("${p}")).collect::<Vec<_>>().join(", ")
        ),
        Node::Sort { order, offset, fetch, .. } => {
            let mut items: Vec<String> = Vec::new();
            for (i, k) in order.iter().enumerate() {
                items.push(format!("sort{i}=[${}]", k.column));
            }
            for (i, k) in order.iter().enumerate() {
                let nulls = if k.nulls_last { "last" } else { "first" };
                items.push(format!("dir{i}=[{}-nulls-{nulls}]", if k.descending { "DESC" } else { "ASC" }));
            }
            if *offset > 0 {
                items.push(format!("offset=[{offset}]"));
            }
            if let Some(fetch) = fetch {
                items.push(format!("fetch=[{fetch}]"));
            }
            format!("LogicalSort({})", items.join(", "))
        }
        Node::OverAggregate { partition, time_col, frame, calls, .. } => {
            let calls: Vec<String> = calls.iter().map(|c| aggregate_text(c, &dollar).replace("(*)", "()")).collect();
            format!(
                "LogicalOverAggregate(partitionBy=[{}], orderBy=[${time_col}], window=[{}], aggs=[{}])",
                partition.iter().map(|p| format!("${p}")).collect::<Vec<_>>().join(", "),
                frame.explain(),
                calls.join(", ")
            )
        }
        Node::WindowDeduplicate { partition, time_col, keep_last, .. } => format!(
            "LogicalWindowDeduplicate(keep=[{}], partitionKeys=[{}], orderKey=[${time_col}])",
            if *keep_last { "LastRow" } else { "FirstRow" },
            partition.iter().map(|p| format!("${p}")).collect::<Vec<_>>().join(", ")
        ),
        Node::LookupJoin { join_type, .. } => {
            let kind = match join_type {
                weir_operators::LookupJoinType::Inner => "inner",
                weir_operators::LookupJoinType::LeftOuter => "left",
            };
            format!("LogicalCorrelate(correlation=[$cor0], joinType=[{kind}], requiredColumns=[{{}}])")
        }
        Node::Expand { input, projects } => {
            let names = |i: usize| input.fields.get(i).map_or(format!("${i}"), |f| f.name.clone());
            format!("LogicalExpand(projects=[{}])", expand_projects(projects, input.fields.len(), &names))
        }
        Node::Correlate { input, table, left } => {
            let kind = if *left { "left" } else { "inner" };
            let mut reads = vec![false; input.fields.len()];
            table.mark_columns(&mut reads);
            let used: Vec<String> = (0..reads.len()).filter(|&c| reads[c]).map(|c| c.to_string()).collect();
            format!(
                "LogicalCorrelate(correlation=[$cor0], joinType=[{kind}], requiredColumns=[{{{}}}])",
                used.join(", ")
            )
        }
    }
}

/// A logical plan drawn as a tree; a Calc with a condition shows as a LogicalProject over a
/// LogicalFilter, as Flink's AST does.
fn draw_logical(out: &mut String, plan: &Plan, prefix: &str, detailed: bool) {
    let _ = writeln!(out, "{}", logical_label(plan, detailed));
    let children = plan.node.inputs();
    if let Node::Calc { condition: Some(c), input, .. } = &plan.node {
        let dollar = |i: usize| format!("${i}");
        let _ = writeln!(out, "{prefix}+- LogicalFilter(condition=[{}])", logical_expression(c, &dollar));
        let deeper = format!("{prefix}   ");
        let _ = write!(out, "{deeper}+- ");
        return draw_logical(out, input, &format!("{deeper}   "), detailed);
    }
    for (i, child) in children.iter().enumerate() {
        let last = i + 1 == children.len();
        let _ = write!(out, "{prefix}{}", if last { "+- " } else { ":- " });
        draw_logical(out, child, &format!("{prefix}{}", if last { "   " } else { ":  " }), detailed);
    }
}

fn physical_children(node: &PhysicalNode) -> Vec<&PhysicalNode> {
    node.inputs.iter().collect()
}

/// A logical plan as the Abstract Syntax Tree draws it, its scans with what the rules decided for
/// them (columns, pushed filter or key, changelog), for the rules' snapshot tests.
pub fn logical_plan_text(plan: &Plan) -> String {
    let mut out = String::new();
    draw_logical(&mut out, plan, "", true);
    out
}

/// A statement's logical plan and the sink it writes into (name and query columns), if any.
pub type LogicalStatement = (Option<(String, Vec<Field>)>, Plan);

/// The EXPLAIN text of statements planned as `logical` and `physical`.
pub fn explain(logical: &[LogicalStatement], physical: &[PhysicalNode], details: ExplainDetails) -> String {
    let split: Vec<PhysicalNode> = physical.iter().cloned().map(python::split_python_calcs).collect();
    let physical = &split[..];
    let mut out = String::from("== Abstract Syntax Tree ==\n");
    for (i, (sink, plan)) in logical.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match sink {
            Some((table, fields)) => {
                let _ = writeln!(out, "LogicalSink(table=[{}], fields=[{}])", Catalog::qualified(table), names(fields));
                out.push_str("+- ");
                draw_logical(&mut out, plan, "   ", false);
            }
            None => draw_logical(&mut out, plan, "", false),
        }
    }
    let advised = std::cell::RefCell::new(Vec::<String>::new());
    let label = |n: &PhysicalNode| {
        let text = physical_label(n, false, details.changelog_mode);
        let Some(advice) = details.plan_advice.as_ref().and_then(|s| advice::flink_advice(n, s)) else { return text };
        let mut advised = advised.borrow_mut();
        let id = match advised.iter().position(|a| *a == advice) {
            Some(i) => i + 1,
            None => {
                advised.push(advice);
                advised.len()
            }
        };
        text.replacen('(', &format!("(advice=[{id}], "), 1)
    };
    let title =
        if details.plan_advice.is_some() { "Optimized Physical Plan With Advice" } else { "Optimized Physical Plan" };
    let _ = write!(out, "\n== {title} ==\n");
    for (i, node) in physical.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        draw(&mut out, node, "", &label, &physical_children);
    }
    if details.plan_advice.is_some() {
        out.push('\n');
        let advised = advised.borrow();
        if advised.is_empty() {
            out.push_str("No available advice...\n");
        }
        for (i, advice) in advised.iter().enumerate() {
            let _ = writeln!(out, "advice[{}]: [ADVICE] {advice}", i + 1);
        }
    }
    out.push_str("\n== Optimized Execution Plan ==\n");
    // A scan shared by several statements prints once, first, and is referred to after; in a
    // plan of one statement, it prints where it first comes (as Flink dumps a tree).
    let mut counts: std::collections::HashMap<String, usize> = Default::default();
    let mut order: Vec<(String, &PhysicalNode)> = Vec::new();
    fn walk<'a>(
        node: &'a PhysicalNode,
        counts: &mut std::collections::HashMap<String, usize>,
        order: &mut Vec<(String, &'a PhysicalNode)>,
    ) {
        if let Some(d) = node.reuse_digest() {
            let n = counts.entry(d.clone()).or_insert(0);
            *n += 1;
            if *n > 1 {
                // What is under a reused node is printed with it, once.
                return;
            }
            order.push((d, node));
        }
        node.inputs.iter().for_each(|i| walk(i, counts, order));
    }
    physical.iter().for_each(|root| walk(root, &mut counts, &mut order));
    let reused: Vec<(String, &PhysicalNode)> = order.into_iter().filter(|(d, _)| counts[d] > 1).collect();
    let reuse_id =
        |node: &PhysicalNode| node.reuse_digest().and_then(|d| reused.iter().position(|(r, _)| *r == d)).map(|i| i + 1);
    let inline = physical.len() == 1;
    if !inline {
        for (i, (_, node)) in reused.iter().enumerate() {
            let _ = writeln!(out, "{}(reuse_id=[{}])\n", physical_label(node, true, false), i + 1);
        }
    }
    // How often each shared node has been met (inline: its first time prints it).
    let met = std::cell::RefCell::new(std::collections::HashMap::<usize, usize>::new());
    for (i, node) in physical.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        draw(
            &mut out,
            node,
            "",
            &|n| match reuse_id(n) {
                Some(id) if inline && *met.borrow_mut().entry(id).and_modify(|m| *m += 1).or_insert(1) == 1 => {
                    format!("{}(reuse_id=[{id}])", physical_label(n, true, false))
                }
                Some(id) => format!("Reused(reference_id=[{id}])"),
                None => physical_label(n, true, false),
            },
            &|n| match reuse_id(n) {
                Some(id) if inline && met.borrow().get(&id) == Some(&1) => physical_children(n),
                Some(_) => Vec::new(),
                None => physical_children(n),
            },
        );
    }
    if details.json_execution_plan {
        out.push_str("\n== Physical Execution Plan ==\n");
        out.push_str(&json_plan(physical));
    }
    out.push('\n');
    out
}

/// Flink's JSON execution plan: one entry per operator with its parallelism and predecessors.
fn json_plan(roots: &[PhysicalNode]) -> String {
    struct Entry {
        id: usize,
        kind: String,
        pact: &'static str,
        contents: String,
        parallelism: usize,
        predecessors: Vec<(usize, &'static str)>,
    }
    /// Adds `node`'s entry; returns its id, parallelism, and the strategy an exchange asks for.
    fn visit(
        node: &PhysicalNode,
        entries: &mut Vec<Entry>,
        skipped: &mut usize,
    ) -> (usize, usize, Option<ShipStrategy>) {
        if let Some(exchange) = node.op::<Exchange>() {
            let (id, p, _) = visit(&node.inputs[0], entries, skipped);
            // An exchange is a transformation of its own in Flink: it takes an id.
            *skipped += 1;
            return (id, p, Some(exchange.strategy.clone()));
        }
        let inputs: Vec<_> = node.inputs.iter().map(|i| visit(i, entries, skipped)).collect();
        let parallelism = node.parallelism;
        // The node's number in Flink's labels; a sink's transformations (enforcer, key-by
        // partition, materializer, writer) take their own ids but share it.
        let exec_id = entries.len() + *skipped + 1;
        let ship = |exchange: Option<&ShipStrategy>, from: usize, to: usize| {
            crate::physical::op::edge_strategy(exchange, from, to).flink_name()
        };
        if let Some(sink) = node.op::<Sink>() {
            let (mut from, mut from_parallelism, mut exchange) = inputs[0].clone();
            for step in sink.steps() {
                let (kind, contents, parallelism, pact) = match step {
                    SinkStep::KeyBy(strategy) => {
                        // The key-by partition is a transformation of its own.
                        *skipped += 1;
                        exchange = Some(strategy.clone());
                        continue;
                    }
                    SinkStep::Enforcer(e) => {
                        let name = weir_runtime::Operator::name(e).to_string();
                        ("ConstraintEnforcer".to_string(), name, from_parallelism, "Operator")
                    }
                    SinkStep::TimestampAssigner => {
                        let name = "WatermarkTimestampAssigner".to_string();
                        (name.clone(), name, from_parallelism, "Operator")
                    }
                    SinkStep::Materializer(m) => ("SinkMaterializer".to_string(), m.name(), parallelism, "Operator"),
                    SinkStep::Writer => (
                        format!("Sink: {}", sink.table.name),
                        physical_label(node, true, false),
                        parallelism,
                        "Data Sink",
                    ),
                };
                let id = entries.len() + *skipped + 1;
                let predecessors = vec![(from, ship(exchange.as_ref(), from_parallelism, parallelism))];
                let (kind, contents) = (format!("{kind}[{exec_id}]"), format!("[{exec_id}]:{contents}"));
                entries.push(Entry { id, kind, pact, contents, parallelism, predecessors });
                (from, from_parallelism, exchange) = (id, parallelism, None);
            }
            return (from, from_parallelism, None);
        }
        let mut predecessors: Vec<(usize, &'static str)> =
            inputs.iter().map(|(pid, pp, exchange)| (*pid, ship(exchange.as_ref(), *pp, parallelism))).collect();
        if let Some(lookup) = node.op::<LookupJoin>() {
            if lookup.execution.order_key().is_some() {
                // Key-ordered lookups are hashed on the update key by a "Partitioner" of their own.
                predecessors.iter_mut().for_each(|p| p.1 = "HASH");
                *skipped += 1;
            }
        }
        let id = entries.len() + *skipped + 1;
        let label = physical_label(node, true, false);
        let (kind, pact) = match node.operator.source_name() {
            Some(source) => (format!("Source: {source}[{id}]"), "Data Source"),
            None => (format!("{}[{id}]", node.name()), "Operator"),
        };
        let contents = format!("[{exec_id}]:{label}");
        entries.push(Entry { id, kind, pact, contents, parallelism, predecessors });
        (id, parallelism, None)
    }
    let mut entries = Vec::new();
    let mut skipped = 0;
    for root in roots {
        visit(root, &mut entries, &mut skipped);
    }
    let quote = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    let mut out = String::from("{\n  \"nodes\" : [ ");
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(
            out,
            "{{\n    \"id\" : {},\n    \"type\" : {},\n    \"pact\" : {},\n    \"contents\" : {},\n    \"parallelism\" : {}",
            e.id,
            quote(&e.kind),
            quote(e.pact),
            quote(&e.contents),
            e.parallelism
        );
        if !e.predecessors.is_empty() {
            out.push_str(",\n    \"predecessors\" : [ ");
            for (j, (id, strategy)) in e.predecessors.iter().enumerate() {
                if j > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{{\n      \"id\" : {id},\n      \"ship_strategy\" : \"{strategy}\",\n      \"side\" : \"second\"\n    }}");
            }
            out.push_str(" ]");
        }
        out.push_str("\n  }");
    }
    out.push_str(" ]\n}\n");
    out
}
