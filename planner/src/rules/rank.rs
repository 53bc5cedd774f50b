//! A filter on the rank of a ranking function sets the range of ranks it keeps (Flink's
//! `FlinkLogicalRankRule`): `WHERE rn <= 3` over `ROW_NUMBER() OVER (…) AS rn` keeps ranks 1
//! to 3, and the comparisons on the rank leave the filter. Conjuncts that compare the rank
//! with a constant (`<`, `<=`, `=`, `>=`, `>`, either way round, and `BETWEEN`) make the range;
//! the others stay in the filter. A ranking function left without an upper bound is no Top-N:
//! it would be an OVER aggregate, which weir does not plan yet.

use weir_operators::expr::{Expr, Function};
use weir_operators::ranking::{RankRange, RankType};
use weir_runtime::{DataType, Value};

use crate::error::{Error, Result};
use crate::plan::{Node, Plan};

/// The plan with the range of every ranking function filtered on its rank set.
///
/// # Errors
/// A ranking function with no bound on its rank above it.
pub fn rank(plan: Plan) -> Result<Plan> {
    let plan = set_ranges(plan);
    check_ranges(&plan)?;
    Ok(plan)
}

fn set_ranges(plan: Plan) -> Plan {
    let Plan { node, fields } = plan;
    let Ok(node) = node.try_map_inputs(|p| Ok::<_, std::convert::Infallible>(set_ranges(p)));
    match node {
        Node::Calc { input, projections, condition: Some(condition) } => {
            match filtered_rank(&input, &projections, &condition) {
                Some(node) => Plan { node, fields },
                None => Plan { node: Node::Calc { input, projections, condition: Some(condition) }, fields },
            }
        }
        node => Plan { node, fields },
    }
}

/// `Calc(projections, condition)` over a rank with an open range (or over a projection of
/// one), its range set from `condition`: the Calc that is left, over the rank. `None` when the
/// condition does not bound the rank.
fn filtered_rank(input: &Plan, projections: &[Expr], condition: &Expr) -> Option<Node> {
    // The Calc over the rank itself: a projection between them folded into it.
    let (rank, projections, condition) = match &input.node {
        Node::Rank { range: None, .. } => (input, projections.to_vec(), condition.clone()),
        Node::Calc { input: below, projections: between, condition: None }
            if matches!(below.node, Node::Rank { range: None, .. }) =>
        {
            let substitute = |e: &Expr| e.clone().substitute(between);
            (below.as_ref(), projections.iter().map(substitute).collect(), substitute(condition))
        }
        _ => return None,
    };
    let Node::Rank { input: ranked, partition, order, rank_type, output_rank, .. } = &rank.node else { return None };
    let rank_column = ranked.fields.len();
    let (mut start, mut end) = (1_i64, None::<i64>);
    let mut rest = Vec::new();
    for conjunct in conjuncts(condition) {
        match bound(&conjunct, rank_column) {
            Some(Bound::Lower(b)) => start = start.max(b),
            Some(Bound::Upper(b)) => end = Some(end.map_or(b, |e| e.min(b))),
            Some(Bound::Both(low, high)) => {
                start = start.max(low);
                end = Some(end.map_or(high, |e| e.min(high)));
            }
            None => rest.push(conjunct),
        }
    }
    let end = end?;
    let range = RankRange { start: start.max(1) as u64, end: end.max(0) as u64 };
    let condition = rest.into_iter().reduce(|a, b| Expr::Call {
        function: Function::And,
        args: vec![a, b],
        ty: weir_runtime::DataType::boolean(),
    });
    // A ROW_NUMBER kept to one rank reads as that constant (Flink's RankNumberColumnRemoveRule).
    let constant_rank = *output_rank && *rank_type == RankType::RowNumber && range.start == range.end;
    let (mut projections, mut condition, mut fields) = (projections, condition, rank.fields.clone());
    if constant_rank {
        let mut columns: Vec<Expr> =
            ranked.fields.iter().enumerate().map(|(i, f)| Expr::column(i, f.data_type.clone())).collect();
        columns.push(Expr::literal(Value::BigInt(range.start as i64), DataType::bigint().not_null()));
        projections = projections.into_iter().map(|p| p.substitute(&columns)).collect();
        condition = condition.map(|c| c.substitute(&columns));
        fields.pop();
    }
    let node = Node::Rank {
        input: ranked.clone(),
        partition: partition.clone(),
        order: order.clone(),
        rank_type: *rank_type,
        range: Some(range),
        output_rank: *output_rank && !constant_rank,
    };
    let ranked = Plan { node, fields };
    Some(Node::Calc { input: Box::new(ranked), projections, condition })
}

/// The conjuncts of `condition`.
fn conjuncts(condition: Expr) -> Vec<Expr> {
    match condition {
        Expr::Call { function: Function::And, args, .. } => args.into_iter().flat_map(conjuncts).collect(),
        other => vec![other],
    }
}

/// What a conjunct says of the rank.
enum Bound {
    Lower(i64),
    Upper(i64),
    Both(i64, i64),
}

/// Whether `expr` is the rank column (through casts).
fn is_rank(expr: &Expr, rank_column: usize) -> bool {
    match expr {
        Expr::Column { index, .. } => *index == rank_column,
        Expr::Call { function: Function::Cast, args, .. } => is_rank(&args[0], rank_column),
        _ => false,
    }
}

/// The integer value of a constant expression.
fn constant(expr: &Expr) -> Option<i64> {
    fn reads_columns(expr: &Expr) -> bool {
        match expr {
            Expr::Column { .. } => true,
            Expr::Literal { .. } => false,
            Expr::Call { args, .. } => args.iter().any(reads_columns),
        }
    }
    if reads_columns(expr) {
        return None;
    }
    expr.eval(&[]).ok()?.as_i64()
}

/// The bound a conjunct puts on the rank, if it is a comparison of the rank with a constant.
fn bound(conjunct: &Expr, rank_column: usize) -> Option<Bound> {
    let Expr::Call { function, args, .. } = conjunct else { return None };
    if let (Function::Between, [x, low, high]) = (function, args.as_slice()) {
        return is_rank(x, rank_column).then_some(Bound::Both(constant(low)?, constant(high)?));
    }
    let [left, right] = args.as_slice() else { return None };
    // Written `rank op constant`, or the other way round with the comparison mirrored.
    let (function, value) = if is_rank(left, rank_column) {
        (function.clone(), constant(right)?)
    } else if is_rank(right, rank_column) {
        let mirrored = match function {
            Function::Less => Function::Greater,
            Function::LessOrEqual => Function::GreaterOrEqual,
            Function::Greater => Function::Less,
            Function::GreaterOrEqual => Function::LessOrEqual,
            other => other.clone(),
        };
        (mirrored, constant(left)?)
    } else {
        return None;
    };
    match function {
        Function::Less => Some(Bound::Upper(value - 1)),
        Function::LessOrEqual => Some(Bound::Upper(value)),
        Function::Equals => Some(Bound::Both(value, value)),
        Function::GreaterOrEqual => Some(Bound::Lower(value)),
        Function::Greater => Some(Bound::Lower(value + 1)),
        _ => None,
    }
}

/// Refuses a ranking function that no filter bounded: Flink plans it as an OVER aggregate,
/// which needs ordering on a time attribute (and weir does not plan yet).
fn check_ranges(plan: &Plan) -> Result<()> {
    if let Node::Rank { input, order, range: None, .. } = &plan.node {
        let on_time = order.first().is_some_and(|k| input.fields[k.column].data_type.time_attribute.is_some());
        if !on_time {
            return Err(Error::Table(
                "OVER windows' ordering in stream mode must be defined on a time attribute.".into(),
            ));
        }
        return Err(Error::Unsupported("A ranking function without a filter on its rank (an OVER aggregate)".into()));
    }
    plan.node.inputs().into_iter().try_for_each(check_ranges)
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{before_after, Fixture};

    #[test]
    fn comparisons_on_the_rank_become_its_range_and_leave_the_filter() {
        let f = Fixture::bids();
        let before = f.bind(
            "SELECT * FROM (SELECT item, price, ROW_NUMBER() OVER (PARTITION BY item ORDER BY price DESC) AS rn \
             FROM bids) WHERE 5 >= rn AND rn > 1 AND price > 10;",
        );
        let after = super::rank(before.clone()).unwrap();
        expect![[r#"
            before:
            LogicalProject(item=[$0], price=[$1], rn=[$2])
            +- LogicalFilter(condition=[AND(>=(5, $2), >($2, 1), >($1, 10))])
               +- LogicalProject(item=[$0], price=[$1], rn=[$3])
                  +- LogicalRank(rankType=[ROW_NUMBER], rankRange=[unbounded], partitionBy=[$0], orderBy=[$1 DESC])
                     +- LogicalWatermarkAssigner(rowtime=[ts], watermark=[$2])
                        +- LogicalTableScan(table=[[default_catalog, default_database, bids]], project=[item, price, ts], changelogMode=[I])
            after:
            LogicalProject(item=[$0], price=[$1], rn=[$3])
            +- LogicalFilter(condition=[>($1, 10)])
               +- LogicalRank(rankType=[ROW_NUMBER], rankRange=[rankStart=2, rankEnd=5], partitionBy=[$0], orderBy=[$1 DESC])
                  +- LogicalWatermarkAssigner(rowtime=[ts], watermark=[$2])
                     +- LogicalTableScan(table=[[default_catalog, default_database, bids]], project=[item, price, ts], changelogMode=[I])
        "#]]
        .assert_eq(&before_after(&before, &after));
    }

    #[test]
    fn a_rank_ordered_by_rowtime_keeping_the_first_row_in_each_window_deduplicates() {
        let f = Fixture::bids();
        let plan = f.bind(
            "SELECT window_start, item, price FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, \
             window_end, item ORDER BY ts DESC) AS rn FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), \
             INTERVAL '1' MINUTE))) WHERE rn = 1;",
        );
        let ranked = crate::rules::prune_columns::prune_plan(super::rank(plan).unwrap());
        let after = crate::rules::window_rank::window_rank(ranked).unwrap();
        expect![[r#"
            LogicalProject(window_start=[$3], item=[$0], price=[$1])
            +- LogicalWindowDeduplicate(keep=[LastRow], partitionKeys=[$0], orderKey=[$2])
               +- LogicalProject(item=[$0], price=[$1], ts=[$2], window_start=[$3], window_end=[$4])
                  +- LogicalTableFunctionScan(invocation=[TUMBLE(TABLE(#0), DESCRIPTOR(_UTF-16LE'ts'), 60000:INTERVAL MINUTE)], rowType=[RecordType(VARCHAR(2147483647) item, INTEGER price, TIMESTAMP(3) *ROWTIME* ts, TIMESTAMP(3) window_start, TIMESTAMP(3) window_end, TIMESTAMP(3) *ROWTIME* window_time)])
                     +- LogicalWatermarkAssigner(rowtime=[ts], watermark=[$2])
                        +- LogicalTableScan(table=[[default_catalog, default_database, bids]], project=[item, price, ts], changelogMode=[I])
        "#]]
        .assert_eq(&crate::explain::logical_plan_text(&after));
    }
}
