//! Column pruning: every node computes only the columns its consumers use, so unused computed
//! columns (a `PROCTIME()` nobody reads) and projections that only pass columns on disappear.

use weir_operators::expr::Expr;

use crate::plan::{JoinStrategy, Node, Plan};

/// The plan with unused columns removed below its outputs (all of which are kept).
pub fn prune_plan(plan: Plan) -> Plan {
    let all = vec![true; plan.fields.len()];
    prune(plan, &all).0
}

/// `projections` and `condition` over `input`, a Calc `input` merged into them (Flink's
/// CalcMerge): what they then read, and the merged projections and condition.
pub(crate) fn merge_calcs(
    input: Plan,
    projections: Vec<Expr>,
    condition: Option<Expr>,
) -> (Plan, Vec<Expr>, Option<Expr>) {
    match input.node {
        Node::Calc { input: inner, projections: below, condition: below_condition } => {
            let projections = projections.into_iter().map(|p| p.substitute(&below)).collect();
            let condition = match (below_condition, condition.map(|c| c.substitute(&below))) {
                (Some(a), Some(b)) => Some(Expr::Call {
                    function: weir_operators::expr::Function::And,
                    args: vec![a, b],
                    ty: weir_runtime::DataType::boolean(),
                }),
                (a, b) => a.or(b),
            };
            (*inner, projections, condition)
        }
        node => (Plan { node, fields: input.fields }, projections, condition),
    }
}

fn identity(n: usize) -> Vec<Option<usize>> {
    (0..n).map(Some).collect()
}

/// A watermark assigner over `input` pruned to its `required` outputs (it keeps its rowtime and
/// what its watermark reads); a scan below reads the columns in `order` when given (the order a
/// projection above first reads them, then the rowtime), as Flink moves a projection past the
/// assigner into the scan.
fn prune_assigner(
    input: Plan,
    rowtime: usize,
    watermark: Expr,
    fields: Vec<weir_runtime::Field>,
    required: &[bool],
    order: Option<Vec<usize>>,
) -> (Plan, Vec<Option<usize>>) {
    let mut used = required.to_vec();
    used[rowtime] = true;
    watermark.mark_columns(&mut used);
    let (input, map) = match order {
        Some(mut order) => {
            order.push(rowtime);
            watermark.columns_in_order(&mut order);
            prune_in_order(input, &used, order)
        }
        None => prune(input, &used),
    };
    let new_fields = (0..fields.len())
        .filter_map(|i| map[i].map(|n| (n, fields[i].clone())))
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_values()
        .collect();
    let node = Node::WatermarkAssigner {
        rowtime: map[rowtime].unwrap_or(rowtime),
        watermark: watermark.remap(&map),
        input: Box::new(input),
    };
    let assigned = Plan { node, fields: new_fields };
    // Columns only the watermark needed are dropped right above it, as Flink does.
    let narrowed: Vec<usize> = (0..fields.len()).filter(|&i| required[i]).filter_map(|i| map[i]).collect();
    if narrowed.len() == assigned.fields.len() {
        return (assigned, map);
    }
    let projections: Vec<Expr> =
        narrowed.iter().map(|&i| Expr::column(i, assigned.fields[i].data_type.clone())).collect();
    let narrowed_fields = narrowed.iter().map(|&i| assigned.fields[i].clone()).collect();
    let mut mapping = vec![None; fields.len()];
    for (old, target) in map.iter().enumerate() {
        if let Some(t) = target {
            mapping[old] = narrowed.iter().position(|n| n == t);
        }
    }
    let node = Node::Calc { input: Box::new(assigned), projections, condition: None };
    (Plan { node, fields: narrowed_fields }, mapping)
}

/// `plan` pruned to its `required` outputs; a scan (or a scan below a watermark assigner) reads
/// the columns in `order` (each required column once: those `order` names first, in its
/// order), as Flink pushes a projection into a scan in the order it first reads them.
fn prune_in_order(plan: Plan, required: &[bool], mut order: Vec<usize>) -> (Plan, Vec<Option<usize>>) {
    order.retain(|&i| required[i]);
    let mut seen = Vec::new();
    order.retain(|i| {
        let first = !seen.contains(i);
        seen.push(*i);
        first
    });
    order.extend((0..required.len()).filter(|&i| required[i] && !seen.contains(&i)));
    prune_ordered(plan, required, Some(&order))
}

/// Projection push-down: the scan `plan` reading only its columns `kept`, in that order (at
/// least one); where each old output column went.
fn prune_scan(plan: Plan, mut kept: Vec<usize>) -> (Plan, Vec<Option<usize>>) {
    let Plan { node: Node::Scan { table, projection, changelog, key, filter, projected }, fields } = plan else {
        return (plan.clone(), identity(plan.fields.len()));
    };
    if kept.is_empty() {
        kept.push(0);
    }
    let mut mapping = vec![None; fields.len()];
    kept.iter().enumerate().for_each(|(new, &old)| mapping[old] = Some(new));
    let projection: Vec<usize> = kept.iter().map(|&i| projection[i]).collect();
    let projected = projected || !projection.iter().copied().eq(0..table.schema.fields.len());
    let node = Node::Scan { table, projection, changelog, key, filter, projected };
    (Plan { node, fields: kept.iter().map(|&i| fields[i].clone()).collect() }, mapping)
}

/// Prunes `plan` to the `required` outputs (it may keep more); returns the new plan and where
/// each old output column went.
fn prune(plan: Plan, required: &[bool]) -> (Plan, Vec<Option<usize>>) {
    prune_ordered(plan, required, None)
}

/// [`prune`], a scan below reading the columns in the order `order` of this plan's outputs
/// leads to (see [`prune_in_order`]).
fn prune_ordered(plan: Plan, required: &[bool], order: Option<&[usize]>) -> (Plan, Vec<Option<usize>>) {
    let Plan { node, fields } = plan;
    match node {
        Node::Calc { input, projections, condition } => {
            let kept: Vec<usize> = (0..projections.len()).filter(|i| required[*i]).collect();
            // The projections in the order the plan above reads them.
            let mut read: Vec<usize> = order.unwrap_or_default().iter().copied().filter(|&i| required[i]).collect();
            let rest: Vec<usize> = kept.iter().copied().filter(|i| !read.contains(i)).collect();
            read.extend(rest);
            let mut used = vec![false; input.fields.len()];
            kept.iter().for_each(|&i| projections[i].mark_columns(&mut used));
            if let Some(c) = &condition {
                c.mark_columns(&mut used);
            }
            // Below a projection, a scan reads the columns in the order the projection first
            // reads them, as Flink pushes a projection into a scan; below a filter, in the
            // table's order (Flink moves the projection past the filter by a set of columns).
            let (input, map) = if condition.is_none() {
                let mut order = Vec::new();
                read.iter().for_each(|&i| projections[i].columns_in_order(&mut order));
                prune_in_order(*input, &used, order)
            } else {
                prune(*input, &used)
            };
            let projections: Vec<Expr> = kept.iter().map(|&i| projections[i].clone().remap(&map)).collect();
            let condition = condition.map(|c| c.remap(&map));
            let (input, projections, condition) = merge_calcs(input, projections, condition);
            let new_fields: Vec<_> = kept.iter().map(|&i| fields[i].clone()).collect();
            let mut mapping = vec![None; fields.len()];
            kept.iter().enumerate().for_each(|(new, &old)| mapping[old] = Some(new));
            let is_identity = condition.is_none()
                && projections.len() == input.fields.len()
                && projections.iter().enumerate().all(|(i, p)| matches!(p, Expr::Column { index, .. } if *index == i));
            if is_identity {
                return (Plan { node: input.node, fields: new_fields }, mapping);
            }
            (Plan { node: Node::Calc { input: Box::new(input), projections, condition }, fields: new_fields }, mapping)
        }
        Node::WatermarkAssigner { input, rowtime, watermark } => {
            prune_assigner(*input, rowtime, watermark, fields, required, order.map(<[usize]>::to_vec))
        }
        Node::Aggregate { input, keys, calls } => {
            let (input, keys, calls, _) = prune_aggregate(*input, keys, calls, None);
            let n = fields.len();
            (Plan { node: Node::Aggregate { input: Box::new(input), keys, calls }, fields }, identity(n))
        }
        Node::Union { inputs } => {
            // Every input keeps all its columns so that they stay aligned.
            let inputs = inputs.into_iter().map(prune_plan).collect();
            let n = fields.len();
            (Plan { node: Node::Union { inputs }, fields }, identity(n))
        }
        node @ Node::Scan { .. } => {
            let mut kept: Vec<usize> = order.unwrap_or_default().iter().copied().filter(|&i| required[i]).collect();
            let rest: Vec<usize> = (0..fields.len()).filter(|i| required[*i] && !kept.contains(i)).collect();
            kept.extend(rest);
            prune_scan(Plan { node, fields }, kept)
        }
        Node::LookupJoin { input, table, alias, join_type, keys, dim_filter, join_condition } => {
            let probe_width = input.fields.len();
            let width = fields.len();
            let mut used = required[..probe_width].to_vec();
            keys.iter().for_each(|(_, k)| k.mark_columns(&mut used));
            if let Some(c) = &join_condition {
                let mut joined = vec![false; width];
                c.mark_columns(&mut joined);
                used.iter_mut().zip(&joined).for_each(|(u, j)| *u |= *j);
            }
            let (input, map) = prune(*input, &used);
            let new_width = input.fields.len();
            let mapping: Vec<Option<usize>> =
                (0..width).map(|i| if i < probe_width { map[i] } else { Some(i - probe_width + new_width) }).collect();
            let keys = keys.into_iter().map(|(d, k)| (d, k.remap(&map))).collect();
            let join_condition = join_condition.map(|c| c.remap(&mapping));
            let mut new_fields = input.fields.clone();
            new_fields.extend(fields[probe_width..].iter().cloned());
            let node =
                Node::LookupJoin { input: Box::new(input), table, alias, join_type, keys, dim_filter, join_condition };
            (Plan { node, fields: new_fields }, mapping)
        }
        // Flink's Correlate keeps every input column (`select=[id,meta,tags,attrs,f0]`), and so
        // does its input: only the columns above are pruned.
        Node::Correlate { input, table, left } => {
            let all = vec![true; input.fields.len()];
            let (input, map) = prune(*input, &all);
            let table = table.remap(&map);
            let n = fields.len();
            let node = Node::Correlate { input: Box::new(input), table, left };
            (Plan { node, fields }, identity(n))
        }
        // Every column of an Expand is a key or an argument of the aggregate above it.
        Node::Expand { input, projects } => {
            let all = vec![true; input.fields.len()];
            let (input, _) = prune(*input, &all);
            let n = fields.len();
            (Plan { node: Node::Expand { input: Box::new(input), projects }, fields }, identity(n))
        }
        // The window columns stay; of the input, what is required above and the time column.
        Node::WindowTableFunction { input, time_col, window, partition, group_window } => {
            let arity = input.fields.len();
            let mut used = required[..arity].to_vec();
            used[time_col] = true;
            partition.iter().for_each(|&p| used[p] = true);
            let (input, map) = prune(*input, &used);
            let new_arity = input.fields.len();
            let mapping: Vec<Option<usize>> =
                (0..fields.len()).map(|i| if i < arity { map[i] } else { Some(i - arity + new_arity) }).collect();
            let mut new_fields = input.fields.clone();
            new_fields.extend(fields[arity..].iter().cloned());
            let node = Node::WindowTableFunction {
                time_col: map[time_col].unwrap_or(time_col),
                partition: partition.iter().map(|&p| map[p].unwrap_or(p)).collect(),
                input: Box::new(input),
                window,
                group_window,
            };
            narrowed(Plan { node, fields: new_fields }, mapping, required)
        }
        Node::WindowAggregate { input, keys, calls, window, time_col, window_time, group_window } => {
            let (input, keys, calls, time_col) = prune_aggregate(*input, keys, calls, Some(time_col));
            let time_col = time_col.unwrap_or_default();
            let n = fields.len();
            let input = Box::new(input);
            let node = Node::WindowAggregate { input, keys, calls, window, time_col, window_time, group_window };
            (Plan { node, fields }, identity(n))
        }
        // Of the input, what is required above, the partition and the order; the rank only
        // when it is read above.
        Node::Rank { input, partition, order, rank_type, range, output_rank } => {
            let arity = input.fields.len();
            let mut used = required[..arity].to_vec();
            partition.iter().chain(order.iter().map(|k| &k.column)).for_each(|&c| used[c] = true);
            let (input, map) = prune_rank_input(*input, &used);
            let output_rank = output_rank && required[arity];
            let new_arity = input.fields.len();
            let mut mapping: Vec<Option<usize>> = map.clone();
            mapping.push(output_rank.then_some(new_arity));
            let mut new_fields = input.fields.clone();
            if output_rank {
                new_fields.push(fields[arity].clone());
            }
            let at = |c: usize| map[c].unwrap_or(c);
            let node = Node::Rank {
                input: Box::new(input),
                partition: partition.into_iter().map(at).collect(),
                order: order
                    .into_iter()
                    .map(|k| weir_operators::ranking::SortKey { column: at(k.column), ..k })
                    .collect(),
                rank_type,
                range,
                output_rank,
            };
            (Plan { node, fields: new_fields }, mapping)
        }
        // Rows pass as they are: what is required above, and the keys the node reads.
        Node::Deduplicate { input, partition, time_col, keep_last } => {
            let mut used = required.to_vec();
            partition.iter().chain([&time_col]).for_each(|&c| used[c] = true);
            let (input, map) = prune(*input, &used);
            let at = |c: usize| map[c].unwrap_or(c);
            let (partition, time_col) = (partition.into_iter().map(at).collect(), at(time_col));
            let fields = input.fields.clone();
            (Plan { node: Node::Deduplicate { input: Box::new(input), partition, time_col, keep_last }, fields }, map)
        }
        // A sort keeps the rowtime of a watermark assigner right below it, as Flink does; the
        // columns only it needed are dropped by a Calc above it.
        Node::Sort { input, order, offset, fetch } => {
            // A projection of columns between the sort and a watermark assigner goes above the
            // sort (Flink sorts the assigner's rows).
            if let Node::Calc { input: below, projections, condition: None } = &input.node {
                let columns: Option<Vec<usize>> = projections
                    .iter()
                    .map(|p| match p {
                        Expr::Column { index, .. } => Some(*index),
                        _ => None,
                    })
                    .collect();
                if let (Some(columns), Node::WatermarkAssigner { .. }) = (columns, &below.node) {
                    let order = order
                        .into_iter()
                        .map(|k| weir_operators::ranking::SortKey { column: columns[k.column], ..k })
                        .collect();
                    let below_fields = below.fields.clone();
                    let sort = Node::Sort { input: below.clone(), order, offset, fetch };
                    let sorted = Plan { node: sort, fields: below_fields };
                    let projections = projections.clone();
                    let calc = Node::Calc { input: Box::new(sorted), projections, condition: None };
                    return prune(Plan { node: calc, fields }, required);
                }
            }
            let mut used = required.to_vec();
            order.iter().for_each(|k| used[k.column] = true);
            if let Node::WatermarkAssigner { rowtime, .. } = &input.node {
                used[*rowtime] = true;
            }
            let (input, map) = prune(*input, &used);
            let order = order
                .into_iter()
                .map(|k| weir_operators::ranking::SortKey { column: map[k.column].unwrap_or(k.column), ..k })
                .collect();
            let sorted_fields = input.fields.clone();
            let sorted =
                Plan { node: Node::Sort { input: Box::new(input), order, offset, fetch }, fields: sorted_fields };
            narrowed(sorted, map, required)
        }
        // Of the input, what is required above, the partition, the time and the calls' columns.
        // Flink prunes nothing below when the columns would drop the rowtime of a watermark
        // assigner right below (a processing-time OVER).
        Node::OverAggregate { input, partition, time_col, frame, calls } => {
            let arity = input.fields.len();
            let mut used = required[..arity].to_vec();
            partition.iter().chain([&time_col]).for_each(|&c| used[c] = true);
            calls.iter().flat_map(|c| c.arg.into_iter().chain(c.filter)).for_each(|c| used[c] = true);
            if let Node::WatermarkAssigner { rowtime, .. } = &input.node {
                if !used[*rowtime] {
                    used.iter_mut().for_each(|u| *u = true);
                }
            }
            let (input, map) = prune(*input, &used);
            let at = |c: usize| map[c].unwrap_or(c);
            let calls = calls
                .into_iter()
                .map(|c| weir_operators::aggregate::AggregateCall { arg: c.arg.map(at), filter: c.filter.map(at), ..c })
                .collect::<Vec<_>>();
            let new_arity = input.fields.len();
            let mut mapping = map.clone();
            mapping.extend((0..calls.len()).map(|i| Some(new_arity + i)));
            let mut new_fields = input.fields.clone();
            new_fields.extend(fields[arity..].iter().cloned());
            let (partition, time_col) = (partition.into_iter().map(at).collect(), at(time_col));
            let node = Node::OverAggregate { input: Box::new(input), partition, time_col, frame, calls };
            (Plan { node, fields: new_fields }, mapping)
        }
        // Each side keeps what is required above of it and what the condition reads (window
        // joins are found after pruning; interval and temporal joins' time columns are remapped).
        Node::Join { left, right, join_type, condition, strategy, names } => {
            let left_width = left.fields.len();
            // A semi or anti join's rows are its left input's; its condition reads both.
            let mut used = required.to_vec();
            used.resize(left_width + right.fields.len(), false);
            condition.mark_columns(&mut used);
            // A temporal join reads both rowtimes and keeps its versioned table whole, as Flink.
            if let JoinStrategy::Temporal { times } = strategy {
                used[times[0]] = true;
                used[left_width..].iter_mut().for_each(|u| *u = true);
            }
            let (left, left_map) = prune(*left, &used[..left_width]);
            let (right, right_map) = prune(*right, &used[left_width..]);
            let new_left = left.fields.len();
            let mapping: Vec<Option<usize>> =
                left_map.iter().copied().chain(right_map.iter().map(|m| m.map(|i| i + new_left))).collect();
            let mut new_fields = Vec::new();
            for (old, target) in mapping.iter().enumerate().take(fields.len()) {
                if target.is_some() {
                    new_fields.push(fields[old].clone());
                }
            }
            let condition = condition.remap(&mapping);
            let at = |c: usize| mapping[c].unwrap_or(c);
            let times = |t: [usize; 2]| [at(t[0]), at(left_width + t[1]) - new_left];
            let strategy = match strategy {
                JoinStrategy::Temporal { times: t } => JoinStrategy::Temporal { times: times(t) },
                JoinStrategy::Interval { times: t, lower, upper, rowtime } => {
                    JoinStrategy::Interval { times: times(t), lower, upper, rowtime }
                }
                other => other,
            };
            let mapping = mapping.into_iter().take(fields.len()).collect();
            let node =
                Node::Join { condition, left: Box::new(left), right: Box::new(right), join_type, strategy, names };
            (Plan { node, fields: new_fields }, mapping)
        }
        // Planned after pruning: kept as they are.
        node @ (Node::WindowRank { .. } | Node::WindowDeduplicate { .. }) => {
            let n = fields.len();
            let node = node.try_map_inputs(|p| Ok::<_, std::convert::Infallible>(prune_plan(p)));
            let Ok(node) = node;
            (Plan { node, fields }, identity(n))
        }
        node @ Node::Values { .. } => {
            let n = fields.len();
            (Plan { node, fields }, identity(n))
        }
    }
}

/// `plan` (whose columns the old ones went to as `mapping` says) narrowed by a Calc to the
/// `required` old columns when it has more (a window function passes every column on; Flink
/// narrows right above it).
fn narrowed(plan: Plan, mapping: Vec<Option<usize>>, required: &[bool]) -> (Plan, Vec<Option<usize>>) {
    let kept: Vec<usize> = (0..mapping.len()).filter(|&i| required[i]).filter_map(|i| mapping[i]).collect();
    if kept.len() == plan.fields.len() {
        return (plan, mapping);
    }
    let projections = kept.iter().map(|&i| Expr::column(i, plan.fields[i].data_type.clone())).collect();
    let fields = kept.iter().map(|&i| plan.fields[i].clone()).collect();
    let mapping = mapping.iter().map(|m| m.and_then(|t| kept.iter().position(|&k| k == t))).collect();
    (Plan { node: Node::Calc { input: Box::new(plan), projections, condition: None }, fields }, mapping)
}

/// The input of a rank pruned to `required`, but for a window table function right below (or
/// below a Calc): Flink prunes no column through a window function under a ranking, so the
/// function's input keeps all its columns and only the Calc above it narrows.
fn prune_rank_input(input: Plan, required: &[bool]) -> (Plan, Vec<Option<usize>>) {
    let (function, projections, condition) = match input.node {
        Node::WindowTableFunction { .. } => {
            let identity = input.fields.iter().enumerate().map(|(i, f)| Expr::column(i, f.data_type.clone()));
            (input.clone(), identity.collect::<Vec<_>>(), None)
        }
        Node::Calc { input: function, projections, condition }
            if matches!(function.node, Node::WindowTableFunction { .. }) =>
        {
            (*function, projections, condition)
        }
        // Flink does not push a rank's projection below the watermark assigner: the rows come
        // whole out of it, narrowed by a Calc.
        node @ Node::WatermarkAssigner { .. } => {
            let whole = prune_plan(Plan { node, fields: input.fields });
            let kept: Vec<usize> = (0..whole.fields.len()).filter(|&i| required[i]).collect();
            let mut mapping = vec![None; whole.fields.len()];
            kept.iter().enumerate().for_each(|(new, &old)| mapping[old] = Some(new));
            if kept.len() == whole.fields.len() {
                return (whole, mapping);
            }
            let fields = kept.iter().map(|&i| whole.fields[i].clone()).collect();
            let projections = kept.iter().map(|&i| Expr::column(i, whole.fields[i].data_type.clone())).collect();
            return (
                Plan { node: Node::Calc { input: Box::new(whole), projections, condition: None }, fields },
                mapping,
            );
        }
        node => return prune(Plan { node, fields: input.fields }, required),
    };
    let kept: Vec<usize> = (0..projections.len()).filter(|&i| required[i]).collect();
    let mut mapping = vec![None; projections.len()];
    kept.iter().enumerate().for_each(|(new, &old)| mapping[old] = Some(new));
    let fields = kept.iter().map(|&i| input.fields[i].clone()).collect();
    let projections = kept.iter().map(|&i| projections[i].clone()).collect();
    let node = Node::Calc { input: Box::new(prune_plan(function)), projections, condition };
    (Plan { node, fields }, mapping)
}

/// The input of an aggregate pruned to its keys, its calls' arguments and filters and its time
/// column (a window aggregate's), with those renumbered.
fn prune_aggregate(
    input: Plan,
    keys: Vec<usize>,
    calls: Vec<weir_operators::aggregate::AggregateCall>,
    time_col: Option<usize>,
) -> (Plan, Vec<usize>, Vec<weir_operators::aggregate::AggregateCall>, Option<usize>) {
    let mut used = vec![false; input.fields.len()];
    keys.iter().chain(&time_col).for_each(|&k| used[k] = true);
    for c in &calls {
        c.arg.iter().chain(&c.filter).for_each(|&i| used[i] = true);
    }
    // The aggregate reads its keys, then its calls' arguments: a scan below reads them in that
    // order, as Flink pushes the aggregate's input projection into it.
    let mut order: Vec<usize> = keys.clone();
    for c in &calls {
        order.extend(c.arg.iter().chain(&c.filter));
    }
    order.extend(&time_col);
    let (input, map) = prune_in_order(input, &used, order);
    let at = |i: usize| map[i].unwrap_or(i);
    let keys = keys.into_iter().map(at).collect();
    let calls = calls
        .into_iter()
        .map(|mut c| {
            c.arg = c.arg.map(at);
            c.filter = c.filter.map(at);
            c
        })
        .collect();
    (input, keys, calls, time_col.map(at))
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{before_after, Fixture};

    #[test]
    fn scans_read_only_the_columns_used_above_them() {
        let f = Fixture::new(
            "CREATE TABLE orders (id BIGINT, product STRING, qty INT, proc AS PROCTIME()) \
             WITH ('connector' = 'datagen');",
        );
        let before = f.bind("SELECT id FROM orders WHERE qty > 1;");
        let after = super::prune_plan(before.clone());
        expect![[r#"
            before:
            LogicalProject(id=[$0])
            +- LogicalFilter(condition=[>($2, 1)])
               +- LogicalProject(id=[$0], product=[$1], qty=[$2], proc=[PROCTIME()])
                  +- LogicalTableScan(table=[[default_catalog, default_database, orders]], project=[id, product, qty], changelogMode=[I])
            after:
            LogicalProject(id=[$0])
            +- LogicalFilter(condition=[>($1, 1)])
               +- LogicalTableScan(table=[[default_catalog, default_database, orders]], project=[id, qty], changelogMode=[I])
        "#]]
        .assert_eq(&before_after(&before, &after));
    }
}
