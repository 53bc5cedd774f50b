//! A GROUP BY over a window table function that groups by both `window_start` and `window_end`
//! becomes one window aggregate (Flink's `StreamPhysicalWindowAggregateRule` with the window
//! function merged into it): the aggregate reads the function's input and computes each
//! window's result once. Grouping by `window_start` alone (or `window_end` alone) stays a
//! regular aggregate over the window function, with updates, as in Flink. A window column
//! read by anything but the grouping (an argument, a filter) keeps the regular aggregate too.

use weir_operators::aggregate::AggregateCall;
use weir_operators::expr::Expr;
use weir_operators::{WindowKind, WindowSpec};
use weir_runtime::Field;

use crate::error::{Error, Result};
use crate::plan::{Node, Plan};

/// The plan with every window aggregate recognised.
///
/// # Errors
/// A HOP whose size is not a multiple of its slide, or a CUMULATE whose size is not a multiple
/// of its step (Flink's messages).
pub fn window_aggregate(plan: Plan) -> Result<Plan> {
    let plan = merge_aggregates(plan)?;
    check_sessions(&plan)?;
    Ok(plan)
}

/// Refuses a SESSION window function left on its own over processing time.
fn check_sessions(plan: &Plan) -> Result<()> {
    if let Node::WindowTableFunction {
        input,
        time_col,
        window: WindowSpec { kind: WindowKind::Session { .. }, .. },
        ..
    } = &plan.node
    {
        if input.fields[*time_col].data_type.time_attribute == Some(weir_runtime::types::TimeAttribute::Proctime) {
            return Err(Error::Unsupported("SESSION windows of processing time".into()));
        }
    }
    plan.node.inputs().into_iter().try_for_each(check_sessions)
}

fn merge_aggregates(plan: Plan) -> Result<Plan> {
    let Plan { node, fields } = plan;
    let node = node.try_map_inputs(merge_aggregates)?;
    match node {
        Node::Aggregate { input, keys, calls } => match merge(&input, &keys, &calls, &fields)? {
            Some(merged) => Ok(merged),
            None => Ok(Plan { node: Node::Aggregate { input, keys, calls }, fields }),
        },
        node => Ok(Plan { node, fields }),
    }
}

/// Which window column a projection is, if it is one: 0 start, 1 end, 2 time.
fn window_column(expr: &Expr, arity: usize) -> Option<usize> {
    match expr {
        Expr::Column { index, .. } if *index >= arity => Some(index - arity),
        _ => None,
    }
}

/// Whether `expr` reads a window column (of a window function over `arity` columns).
fn reads_window(expr: &Expr, arity: usize) -> bool {
    let mut used = vec![false; arity + 3];
    expr.mark_columns(&mut used);
    used[arity..].iter().any(|&u| u)
}

/// The window aggregate of `Aggregate { input, keys, calls }` (with `fields`), followed by a
/// Calc giving the aggregate's columns in its order; `None` when it is no window aggregate.
fn merge(input: &Plan, keys: &[usize], calls: &[AggregateCall], fields: &[Field]) -> Result<Option<Plan>> {
    // Grouping sets: an Expand of the sets between the aggregate and its input, its set id
    // `$e` (a key) after the input's columns. The window columns must be in every set.
    let (input, expand) = match &input.node {
        Node::Expand { input: below, projects } => (below.as_ref(), Some((projects, below.fields.len()))),
        _ => (input, None),
    };
    let set_id = expand.map(|(_, id)| id);
    // The aggregate's input: a window function, or a Calc over one.
    let (function, projections, condition) = match &input.node {
        Node::WindowTableFunction { .. } => {
            let identity = input.fields.iter().enumerate().map(|(i, f)| Expr::column(i, f.data_type.clone()));
            (input, identity.collect::<Vec<_>>(), None)
        }
        Node::Calc { input: below, projections, condition }
            if matches!(below.node, Node::WindowTableFunction { .. }) =>
        {
            (below.as_ref(), projections.clone(), condition.clone())
        }
        _ => return Ok(None),
    };
    let Node::WindowTableFunction { input: data, time_col, window, group_window, .. } = &function.node else {
        return Ok(None);
    };
    let arity = data.fields.len();
    let key_windows: Vec<Option<usize>> =
        keys.iter().map(|&k| if Some(k) == set_id { None } else { window_column(&projections[k], arity) }).collect();
    if !(key_windows.contains(&Some(0)) && key_windows.contains(&Some(1))) {
        return Ok(None);
    }
    if expand.is_some_and(|(projects, _)| {
        projects.iter().flat_map(|p| &p.nulled).any(|&c| window_column(&projections[c], arity).is_some())
    }) {
        return Ok(None);
    }
    let others_read_window = projections
        .iter()
        .enumerate()
        .any(|(i, p)| !(keys.contains(&i) && window_column(p, arity).is_some()) && reads_window(p, arity));
    if others_read_window || condition.as_ref().is_some_and(|c| reads_window(c, arity)) {
        return Ok(None);
    }
    check_slicing(window)?;
    let processing_time =
        data.fields[*time_col].data_type.time_attribute == Some(weir_runtime::types::TimeAttribute::Proctime);
    if processing_time && matches!(window.kind, WindowKind::Session { .. }) {
        return Err(Error::Unsupported("SESSION windows of processing time".into()));
    }
    if matches!(window.kind, WindowKind::Session { .. })
        && !calls.iter().all(|c| {
            weir_operators::aggregate::Accumulator::is_mergeable(&AggregateCall { distinct: false, ..c.clone() }, false)
                && c.filter.is_none()
        })
    {
        return Err(Error::Unsupported(
            "Aggregates over SESSION windows other than COUNT, SUM, $SUM0, AVG, MIN and MAX".into(),
        ));
    }
    // The aggregate's input without the window columns, then the time column.
    let mut kept: Vec<Expr> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut position = vec![None; projections.len()];
    for (i, p) in projections.iter().enumerate() {
        if window_column(p, arity).is_some() && keys.contains(&i) {
            continue;
        }
        position[i] = Some(kept.len());
        kept.push(p.clone());
        names.push(input.fields[i].name.clone());
    }
    kept.push(Expr::column(*time_col, data.fields[*time_col].data_type.clone()));
    names.push(data.fields[*time_col].name.clone());
    let new_time_col = kept.len() - 1;
    let inner_fields: Vec<Field> =
        kept.iter().zip(&names).map(|(e, n)| Field::new(n.clone(), e.ty().clone())).collect();
    let mut inner = Plan {
        node: Node::Calc { input: Box::new((**data).clone()), projections: kept, condition },
        fields: inner_fields,
    };
    if let Some((projects, _)) = expand {
        let projects = projects
            .iter()
            .map(|p| weir_operators::ExpandProject {
                nulled: p.nulled.iter().map(|&c| position[c].unwrap_or(c)).collect(),
                id: p.id,
            })
            .collect();
        inner = Plan::expand(inner, projects);
    }
    let new_set_id = inner.fields.len() - 1;
    let at = |i: usize| if Some(i) == set_id { new_set_id } else { position[i].unwrap_or(i) };
    let group: Vec<usize> = keys.iter().zip(&key_windows).filter(|(_, w)| w.is_none()).map(|(&k, _)| at(k)).collect();
    let calls: Vec<AggregateCall> =
        calls.iter().map(|c| AggregateCall { arg: c.arg.map(at), filter: c.filter.map(at), ..c.clone() }).collect();
    let window_time = key_windows.contains(&Some(2));
    // Output: the other keys, the aggregates, window_start, window_end (, window_time).
    let mut out_fields: Vec<Field> = group.iter().map(|&k| inner.fields[k].clone()).collect();
    out_fields.extend(fields[keys.len()..].iter().cloned());
    let window_field = |w: usize| fields[key_windows.iter().position(|&kw| kw == Some(w)).unwrap_or(0)].clone();
    out_fields.push(window_field(0));
    out_fields.push(window_field(1));
    if window_time {
        out_fields.push(window_field(2));
    }
    let (other_keys, call_count) = (group.len(), calls.len());
    let aggregate = Plan {
        node: Node::WindowAggregate {
            input: Box::new(inner),
            keys: group,
            calls,
            window: *window,
            time_col: new_time_col,
            window_time,
            group_window: *group_window,
        },
        fields: out_fields,
    };
    // The aggregate's columns in the order the query grouped them.
    let mut next_key = 0;
    let mut order: Vec<usize> = Vec::new();
    for w in &key_windows {
        order.push(match w {
            Some(w) => other_keys + call_count + w,
            None => {
                next_key += 1;
                next_key - 1
            }
        });
    }
    order.extend((0..call_count).map(|c| other_keys + c));
    let reorder: Vec<Expr> = order.iter().map(|&i| Expr::column(i, aggregate.fields[i].data_type.clone())).collect();
    Ok(Some(Plan {
        node: Node::Calc { input: Box::new(aggregate), projections: reorder, condition: None },
        fields: fields.to_vec(),
    }))
}

/// Flink's slicing needs a HOP's size to be a multiple of its slide and a CUMULATE's of its step.
fn check_slicing(window: &WindowSpec) -> Result<()> {
    match window.kind {
        WindowKind::Hop { size, slide } if size % slide != 0 => Err(Error::Table(format!(
            "HOP table function based aggregate requires size must be an integral multiple of slide, but got size \
             {size} ms and slide {slide} ms"
        ))),
        WindowKind::Cumulate { max_size, step } if max_size % step != 0 => Err(Error::Table(format!(
            "CUMULATE table function based aggregate requires maxSize must be an integral multiple of step, but got \
             maxSize {max_size} ms and step {step} ms"
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{before_after, Fixture};

    /// Grouping by both window columns makes one window aggregate over the function's input.
    #[test]
    fn grouping_by_window_start_and_end_is_a_window_aggregate() {
        let plan = Fixture::bids().bind(
            "SELECT item, window_start, SUM(price) FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) \
             GROUP BY item, window_start, window_end",
        );
        let after = super::window_aggregate(plan.clone()).unwrap();
        expect![[r#"
            before:
            LogicalProject(item=[$0], window_start=[$1], EXPR$2=[$3])
            +- LogicalAggregate(group=[{0, 1, 2}], EXPR$2=[SUM($3)])
               +- LogicalProject(item=[$0], window_start=[$3], window_end=[$4], price=[$1])
                  +- LogicalTableFunctionScan(invocation=[TUMBLE(TABLE(#0), DESCRIPTOR(_UTF-16LE'ts'), 60000:INTERVAL MINUTE)], rowType=[RecordType(VARCHAR(2147483647) item, INTEGER price, TIMESTAMP(3) *ROWTIME* ts, TIMESTAMP(3) window_start, TIMESTAMP(3) window_end, TIMESTAMP(3) *ROWTIME* window_time)])
                     +- LogicalWatermarkAssigner(rowtime=[ts], watermark=[$2])
                        +- LogicalTableScan(table=[[default_catalog, default_database, bids]], project=[item, price, ts], changelogMode=[I])
            after:
            LogicalProject(item=[$0], window_start=[$1], EXPR$2=[$3])
            +- LogicalProject(item=[$0], window_start=[$2], window_end=[$3], EXPR$2=[$1])
               +- LogicalWindowAggregate(group=[{0}], window=[TUMBLE(time_col=[ts], size=[1 min])], EXPR$2=[SUM($1)])
                  +- LogicalProject(item=[$0], price=[$1], ts=[$2])
                     +- LogicalWatermarkAssigner(rowtime=[ts], watermark=[$2])
                        +- LogicalTableScan(table=[[default_catalog, default_database, bids]], project=[item, price, ts], changelogMode=[I])
        "#]].assert_eq(&before_after(&plan, &after));
    }

    /// Grouping by `window_start` alone stays a regular aggregate over the window function.
    #[test]
    fn grouping_by_one_window_column_stays_a_regular_aggregate() {
        let plan = Fixture::bids().bind(
            "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) \
             GROUP BY window_start",
        );
        let after = super::window_aggregate(plan.clone()).unwrap();
        expect![[r#"
            before:
            LogicalAggregate(group=[{0}], EXPR$1=[COUNT()])
            +- LogicalProject(window_start=[$3])
               +- LogicalTableFunctionScan(invocation=[TUMBLE(TABLE(#0), DESCRIPTOR(_UTF-16LE'ts'), 60000:INTERVAL MINUTE)], rowType=[RecordType(VARCHAR(2147483647) item, INTEGER price, TIMESTAMP(3) *ROWTIME* ts, TIMESTAMP(3) window_start, TIMESTAMP(3) window_end, TIMESTAMP(3) *ROWTIME* window_time)])
                  +- LogicalWatermarkAssigner(rowtime=[ts], watermark=[$2])
                     +- LogicalTableScan(table=[[default_catalog, default_database, bids]], project=[item, price, ts], changelogMode=[I])
            after:
            LogicalAggregate(group=[{0}], EXPR$1=[COUNT()])
            +- LogicalProject(window_start=[$3])
               +- LogicalTableFunctionScan(invocation=[TUMBLE(TABLE(#0), DESCRIPTOR(_UTF-16LE'ts'), 60000:INTERVAL MINUTE)], rowType=[RecordType(VARCHAR(2147483647) item, INTEGER price, TIMESTAMP(3) *ROWTIME* ts, TIMESTAMP(3) window_start, TIMESTAMP(3) window_end, TIMESTAMP(3) *ROWTIME* window_time)])
                  +- LogicalWatermarkAssigner(rowtime=[ts], watermark=[$2])
                     +- LogicalTableScan(table=[[default_catalog, default_database, bids]], project=[item, price, ts], changelogMode=[I])
        "#]].assert_eq(&before_after(&plan, &after));
    }
}
