//! Split distinct aggregation (`table.optimizer.distinct-agg.split.enabled`): a
//! `COUNT(DISTINCT x)` over a hot key is computed in two levels, as Flink's SplitAggregateRule
//! does. The first level groups by the keys and a bucket `MOD(HASH_CODE(x), bucket-num)`, so a
//! hot key's distinct values spread over many groups; the second level groups by the keys and
//! merges the buckets (`$SUM0` of the partial counts, `SUM` of sums, `MIN` of minimums, …).
//!
//! weir splits aggregates whose DISTINCT calls all take the same column and whose other calls
//! are COUNT, SUM, SUM0, MIN or MAX (without FILTER); others stay in one level.

use weir_operators::aggregate::AggregateCall;
use weir_operators::expr::{Expr, Function};
use weir_runtime::{DataType, Field, Value};

use crate::plan::{Node, Plan};

/// Applies the rewrite everywhere in `plan`.
pub fn split_aggregate(plan: Plan, buckets: i32) -> Plan {
    let Plan { node, fields } = plan;
    let node = match node {
        Node::Aggregate { input, keys, calls } => {
            let input = split_aggregate(*input, buckets);
            return split_one(input, keys, calls, fields, buckets);
        }
        Node::Calc { input, projections, condition } => {
            Node::Calc { input: Box::new(split_aggregate(*input, buckets)), projections, condition }
        }
        Node::WatermarkAssigner { input, rowtime, watermark } => {
            Node::WatermarkAssigner { input: Box::new(split_aggregate(*input, buckets)), rowtime, watermark }
        }
        Node::Union { inputs } => {
            Node::Union { inputs: inputs.into_iter().map(|i| split_aggregate(i, buckets)).collect() }
        }
        leaf => leaf,
    };
    Plan { node, fields }
}

fn splittable(calls: &[AggregateCall]) -> Option<usize> {
    let distinct: Vec<usize> = calls.iter().filter(|c| c.distinct).filter_map(|c| c.arg).collect();
    let column = *distinct.first()?;
    let same_column =
        distinct.iter().all(|&c| c == column) && calls.iter().filter(|c| c.distinct).all(|c| c.arg.is_some());
    let mergeable = calls.iter().all(|c| {
        let function = c.kind.function();
        c.filter.is_none() && function.splittable && (!c.distinct || function.split_distinct)
    });
    (same_column && mergeable).then_some(column)
}

/// `MOD(HASH_CODE(argument), buckets)`: the bucket of a distinct value.
fn bucket_of(argument: Expr, buckets: i32) -> Expr {
    let hash = Expr::Call { function: Function::named("HASH_CODE"), args: vec![argument], ty: DataType::int() };
    let modulus = Expr::literal(Value::Int(buckets), DataType::int().not_null());
    Expr::Call { function: Function::Modulo, args: vec![hash, modulus], ty: DataType::int() }
}

fn split_one(input: Plan, keys: Vec<usize>, calls: Vec<AggregateCall>, fields: Vec<Field>, buckets: i32) -> Plan {
    let Some(distinct_column) = splittable(&calls) else {
        return Plan { node: Node::Aggregate { input: Box::new(input), keys, calls }, fields };
    };
    // The input with a bucket column MOD(HASH_CODE(x), buckets), added to the input's own Calc
    // when it has one.
    let bucket_column = input.fields.len();
    let mut bucketed_fields = input.fields.clone();
    bucketed_fields.push(Field::new("$bucket", DataType::int()));
    let bucketed = match input.node {
        Node::Calc { input: below, mut projections, condition } => {
            let argument = projections[distinct_column].clone();
            projections.push(bucket_of(argument, buckets));
            Node::Calc { input: below, projections, condition }
        }
        node => {
            let input = Plan { node, fields: input.fields };
            let mut projections: Vec<Expr> =
                input.fields.iter().enumerate().map(|(i, f)| Expr::column(i, f.data_type.clone())).collect();
            projections.push(bucket_of(projections[distinct_column].clone(), buckets));
            Node::Calc { input: Box::new(input), projections, condition: None }
        }
    };
    let bucketed = Plan { node: bucketed, fields: bucketed_fields.clone() };
    // Level 1: the same aggregates per (keys, bucket).
    let mut partial_keys = keys.clone();
    partial_keys.push(bucket_column);
    let mut partial_fields: Vec<Field> = partial_keys.iter().map(|&k| bucketed_fields[k].clone()).collect();
    partial_fields
        .extend(calls.iter().enumerate().map(|(i, c)| Field::new(format!("$partial{i}"), c.result_type.clone())));
    let partial = Plan {
        node: Node::Aggregate { input: Box::new(bucketed), keys: partial_keys, calls: calls.clone() },
        fields: partial_fields,
    };
    // Level 2: merge the buckets per key.
    let key_count = keys.len();
    let final_calls = calls
        .iter()
        .enumerate()
        .map(|(i, c)| AggregateCall::new(c.kind.buckets_merged_as(), Some(key_count + 1 + i), c.result_type.clone()))
        .collect();
    Plan {
        node: Node::Aggregate { input: Box::new(partial), keys: (0..key_count).collect(), calls: final_calls },
        fields,
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{before_after, Fixture};

    #[test]
    fn distinct_counts_are_computed_in_two_levels_over_buckets() {
        let f = Fixture::new("CREATE TABLE orders (k STRING, u BIGINT, n INT) WITH ('connector' = 'datagen');");
        let before = f.bind("SELECT k, COUNT(DISTINCT u), SUM(n) FROM orders GROUP BY k;");
        let after = super::split_aggregate(before.clone(), 16);
        expect![[r#"
            before:
            LogicalAggregate(group=[{0}], EXPR$1=[COUNT(DISTINCT $1)], EXPR$2=[SUM($2)])
            +- LogicalTableScan(table=[[default_catalog, default_database, orders]], project=[k, u, n], changelogMode=[I])
            after:
            LogicalAggregate(group=[{0}], EXPR$1=[$SUM0($2)], EXPR$2=[SUM($3)])
            +- LogicalAggregate(group=[{0, 3}], $partial0=[COUNT(DISTINCT $1)], $partial1=[SUM($2)])
               +- LogicalProject(k=[$0], u=[$1], n=[$2], $bucket=[MOD(HASH_CODE($1), 16)])
                  +- LogicalTableScan(table=[[default_catalog, default_database, orders]], project=[k, u, n], changelogMode=[I])
        "#]]
        .assert_eq(&before_after(&before, &after));
    }

    #[test]
    fn aggregates_it_cannot_split_stay_in_one_level() {
        let f = Fixture::new("CREATE TABLE orders (k STRING, u BIGINT, n INT) WITH ('connector' = 'datagen');");
        let before = f.bind("SELECT k, COUNT(DISTINCT u), AVG(n) FROM orders GROUP BY k;");
        let after = super::split_aggregate(before.clone(), 16);
        assert_eq!(crate::explain::logical_plan_text(&before), crate::explain::logical_plan_text(&after));
    }
}
