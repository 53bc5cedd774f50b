//! Accumulators against their encodings, Flink's results on fixed inputs, and a recomputation
//! on random accumulations, retractions and slice merges.

use super::*;

/// Every kind of accumulator, with values in it, reads back as itself from a checkpoint.
#[test]
fn accumulators_read_back_from_their_encoding() {
    let kinds = [
        (AggregateKind::CountStar, DataType::bigint(), DataType::bigint(), true),
        (AggregateKind::Sum, DataType::decimal(38, 2), DataType::decimal(10, 2), true),
        (AggregateKind::Min, DataType::bigint(), DataType::bigint(), true),
        (AggregateKind::Max, DataType::string(), DataType::string(), false),
        (AggregateKind::Avg, DataType::double(), DataType::double(), true),
        (AggregateKind::Avg, DataType::decimal(38, 6), DataType::decimal(10, 2), true),
        (AggregateKind::Avg, DataType::int(), DataType::int(), true),
        (AggregateKind::FirstValue, DataType::bigint(), DataType::bigint(), true),
        (AggregateKind::ListAgg { delimiter: ";".into() }, DataType::string(), DataType::string(), true),
        (AggregateKind::VarSamp, DataType::double(), DataType::double(), true),
        (AggregateKind::Collect, DataType::bigint(), DataType::bigint(), true),
        (AggregateKind::ArrayAgg { ignore_nulls: false }, DataType::bigint(), DataType::bigint(), true),
        (AggregateKind::JsonArrayAgg { null_on_null: true }, DataType::string(), DataType::bigint(), true),
    ];
    for (kind, result, arg, retracting) in kinds {
        let call = AggregateCall::new(kind.clone(), Some(0), result);
        let mut acc = Accumulator::new(&call, Some(&arg), retracting);
        let values: Vec<Value> = match &arg.logical {
            LogicalType::Decimal { .. } => vec![Value::decimal(150, 2), Value::decimal(-25, 2)],
            LogicalType::Double => vec![Value::Double(1.5), Value::Double(-0.25)],
            LogicalType::Int => vec![Value::Int(3), Value::Int(8)],
            LogicalType::Varchar(_) => vec![Value::string("b"), Value::string("a")],
            _ => vec![Value::BigInt(7), Value::BigInt(-2)],
        };
        values.iter().for_each(|v| acc.update(&call, v, 1).unwrap());
        let mut e = Encoder::new();
        acc.encode(&mut e);
        let bytes = e.into_bytes();
        let mut d = Decoder::new(&bytes);
        let read = Accumulator::decode(&mut d).unwrap();
        assert!(d.is_at_end());
        assert_eq!(read, acc, "{kind:?}");
        assert_eq!(read.result(&call), acc.result(&call), "{kind:?}");
    }
    assert!(Accumulator::decode(&mut Decoder::new(&[4, 99, 0, 0, 0])).is_err());
}

/// JSON_OBJECTAGG's entries read back from a checkpoint as themselves.
#[test]
fn object_entries_read_back_from_their_encoding() {
    let call = AggregateCall::new(AggregateKind::JsonObjectAgg { null_on_null: true }, Some(0), DataType::string());
    let mut acc = Accumulator::new(&call, None, true);
    for (k, v) in [("b", Value::Int(2)), ("a", Value::Null)] {
        acc.update(&call, &Value::Row(vec![Value::string(k), v].into()), 1).unwrap();
    }
    let mut e = Encoder::new();
    acc.encode(&mut e);
    let bytes = e.into_bytes();
    let read = Accumulator::decode(&mut Decoder::new(&bytes)).unwrap();
    assert_eq!(read, acc);
    assert_eq!(read.result(&call), Value::string(r#"{"a":null,"b":2}"#));
}

/// A function written in Rust that sums its arguments' lengths into a ROW accumulator.
#[derive(Debug)]
struct Lengths;

impl crate::aggregate::AggregateUdf for Lengths {
    fn name(&self) -> &str {
        "LENGTHS"
    }

    fn arity(&self) -> crate::expr::functions::Arity {
        crate::expr::functions::Arity::at_least(0)
    }

    fn return_type(&self, _: &[&DataType]) -> Result<DataType, crate::expr::ExprError> {
        Ok(DataType::bigint())
    }

    fn create_accumulator(&self) -> Result<Value, crate::expr::ExprError> {
        Ok(Value::Row(vec![Value::BigInt(0), Value::string("")].into()))
    }

    fn accumulate(&self, acc: &mut Value, args: &[Value]) -> Result<(), crate::expr::ExprError> {
        let Value::Row(fields) = acc else { return Ok(()) };
        let n = fields[0].as_i64().unwrap_or(0)
            + args.iter().filter_map(|a| a.as_str()).map(str::len).sum::<usize>() as i64;
        *acc = Value::Row(vec![Value::BigInt(n), Value::string("seen")].into());
        Ok(())
    }

    fn get_value(&self, acc: &Value) -> Result<Value, crate::expr::ExprError> {
        Ok(match acc {
            Value::Row(fields) => fields[0].clone(),
            _ => Value::Null,
        })
    }
}

/// A function written in Rust: its accumulator reads back from a checkpoint as itself, its
/// packed arguments arrive as the ROW's fields, and a retraction it does not implement is an
/// error, not a wrong result.
#[test]
fn a_user_aggregate_reads_back_from_its_encoding_and_refuses_what_it_lacks() {
    let user = crate::aggregate::UserAggregate { function: std::sync::Arc::new(Lengths), packed: true };
    let call = AggregateCall::new(AggregateKind::User(user), Some(0), DataType::bigint());
    let mut acc = Accumulator::new(&call, None, true);
    acc.update(&call, &Value::Row(vec![Value::string("ab"), Value::string("cde")].into()), 1).unwrap();
    acc.update(&call, &Value::Row(vec![Value::Null, Value::string("f")].into()), 1).unwrap();
    let mut e = Encoder::new();
    acc.encode(&mut e);
    let bytes = e.into_bytes();
    let read = Accumulator::decode(&mut Decoder::new(&bytes)).unwrap();
    assert_eq!(read, acc);
    assert_eq!(read.result(&call), Value::BigInt(6));
    let error = acc.update(&call, &Value::Row(vec![Value::string("ab")].into()), -1).unwrap_err();
    assert!(format!("{error:?}").contains("does not implement a method named 'retract'"), "{error:?}");
}

/// The collection and JSON aggregates over random accumulations and retractions (a
/// retraction removes one present value) equal a recomputation from the values present, in
/// arrival order with the earliest equal value retracted, as Flink's list views keep them.
#[test]
fn collection_aggregates_equal_a_recomputation_on_random_input() {
    use rand::{Rng, SeedableRng};
    let mut random = rand::rngs::SmallRng::seed_from_u64(36);
    let kinds = [
        AggregateKind::Collect,
        AggregateKind::ArrayAgg { ignore_nulls: false },
        AggregateKind::ArrayAgg { ignore_nulls: true },
        AggregateKind::JsonArrayAgg { null_on_null: false },
        AggregateKind::JsonArrayAgg { null_on_null: true },
        AggregateKind::ApproxCountDistinct,
    ];
    for round in 0..200 {
        let calls: Vec<AggregateCall> =
            kinds.iter().map(|k| AggregateCall::new(k.clone(), Some(0), DataType::bigint())).collect();
        let mut accs: Vec<Accumulator> =
            calls.iter().map(|c| Accumulator::new(c, Some(&DataType::bigint()), true)).collect();
        let mut present: Vec<Value> = Vec::new();
        for _ in 0..random.random_range(0..40) {
            let retract = !present.is_empty() && random.random_bool(0.3);
            let (value, sign) = if retract {
                (present[random.random_range(0..present.len())].clone(), -1)
            } else if random.random_bool(0.2) {
                (Value::Null, 1)
            } else {
                (Value::BigInt(random.random_range(0..6)), 1)
            };
            if sign > 0 {
                present.push(value.clone());
            } else if let Some(i) = present.iter().position(|v| *v == value) {
                present.remove(i);
            }
            for (acc, call) in accs.iter_mut().zip(&calls) {
                acc.update(call, &value, sign).unwrap();
            }
        }
        let non_null: Vec<Value> = present.iter().filter(|v| !v.is_null()).cloned().collect();
        let json = |values: &[Value]| {
            let items: Vec<String> = values
                .iter()
                .map(|v| if v.is_null() { "null".to_string() } else { weir_runtime::print::value_to_string(v) })
                .collect();
            Value::string(&format!("[{}]", items.join(",")))
        };
        let mut counts: BTreeMap<Value, i64> = BTreeMap::new();
        non_null.iter().for_each(|v| *counts.entry(v.clone()).or_insert(0) += 1);
        let array = |values: &[Value]| {
            if values.is_empty() {
                Value::Null
            } else {
                Value::Array(values.to_vec().into())
            }
        };
        let expected = [
            Value::Map(counts.iter().map(|(v, n)| (v.clone(), Value::Int(*n as i32))).collect()),
            array(&present),
            array(&non_null),
            json(&non_null),
            json(&present),
            Value::BigInt(counts.len() as i64),
        ];
        for ((acc, call), expected) in accs.iter().zip(&calls).zip(expected) {
            assert_eq!(acc.result(call), expected, "round {round}: {:?} over {present:?}", call.kind);
        }
    }
}

/// Merging the accumulator of a later slice into an earlier one's equals one accumulator
/// fed both slices' values in order, for every kind a window's slices merge (a variance to
/// the rounding of Welford's merge, as in Flink).
#[test]
fn merging_slices_equals_one_accumulator_over_both() {
    use rand::{Rng, SeedableRng};
    let mut random = rand::rngs::SmallRng::seed_from_u64(7);
    let kinds = [
        (AggregateKind::CountStar, DataType::bigint().not_null(), false),
        (AggregateKind::Sum, DataType::bigint(), false),
        (AggregateKind::Max, DataType::bigint(), false),
        (AggregateKind::Min, DataType::bigint(), true),
        (AggregateKind::Avg, DataType::bigint(), false),
        (AggregateKind::VarPop, DataType::double(), false),
        (AggregateKind::ListAgg { delimiter: ",".into() }, DataType::string(), false),
        (AggregateKind::ArrayAgg { ignore_nulls: false }, DataType::bigint(), false),
        (AggregateKind::Collect, DataType::bigint(), false),
    ];
    for round in 0..100 {
        let slices: [Vec<Value>; 2] =
            [0, 1].map(|_| (0..random.random_range(0..12)).map(|_| Value::BigInt(random.random_range(0..5))).collect());
        for (kind, result, retracting) in &kinds {
            let call = AggregateCall::new(kind.clone(), Some(0), result.clone());
            let fed = |values: &[&Vec<Value>]| {
                let mut acc = Accumulator::new(&call, Some(&DataType::bigint()), *retracting);
                values.iter().flat_map(|v| v.iter()).for_each(|v| acc.update(&call, v, 1).unwrap());
                acc
            };
            let mut merged = fed(&[&slices[0]]);
            merged.merge(&call, &fed(&[&slices[1]])).unwrap();
            let whole = fed(&[&slices[0], &slices[1]]);
            let (merged, whole) = (merged.result(&call), whole.result(&call));
            // Welford's merge (Flink's) rounds otherwise than adding the values one by one.
            if let (AggregateKind::VarPop, Some(m), Some(w)) = (kind, merged.as_f64(), whole.as_f64()) {
                assert!((m - w).abs() <= 1e-12 * w.abs().max(1.0), "round {round}: {m} vs {w} over {slices:?}");
                continue;
            }
            assert_eq!(merged, whole, "round {round}: {kind:?} over {slices:?}");
        }
    }
}

fn run(kind: AggregateKind, result: DataType, arg: DataType, ops: &[(i64, Value)]) -> Value {
    let call = AggregateCall::new(kind, Some(0), result);
    let mut acc = Accumulator::new(&call, Some(&arg), true);
    for (sign, v) in ops {
        acc.update(&call, v, *sign).unwrap();
    }
    acc.result(&call)
}

#[test]
fn sums_retract_to_null_and_sum0_to_zero() {
    let ops = [(1, Value::Int(3)), (1, Value::Null), (-1, Value::Int(3))];
    assert_eq!(run(AggregateKind::Sum, DataType::int(), DataType::int(), &ops), Value::Null);
    assert_eq!(run(AggregateKind::Sum0, DataType::int(), DataType::int(), &ops), Value::Int(0));
    let dec = [(1, Value::decimal(41082, 2)), (1, Value::decimal(4389, 2))];
    assert_eq!(
        run(AggregateKind::Sum, DataType::decimal(38, 2), DataType::decimal(10, 2), &dec),
        Value::decimal(45471, 2)
    );
}

#[test]
fn min_and_max_survive_retraction_of_the_extreme() {
    let ops = [(1, Value::Int(5)), (1, Value::Int(2)), (1, Value::Int(2)), (-1, Value::Int(2)), (1, Value::Int(9))];
    assert_eq!(run(AggregateKind::Min, DataType::int(), DataType::int(), &ops), Value::Int(2));
    let ops = [(1, Value::Int(5)), (1, Value::Int(9)), (-1, Value::Int(9))];
    assert_eq!(run(AggregateKind::Max, DataType::int(), DataType::int(), &ops), Value::Int(5));
}

#[test]
fn averages_follow_flinks_types() {
    let ints = [(1, Value::Int(2)), (1, Value::Int(7)), (1, Value::Int(4))];
    assert_eq!(run(AggregateKind::Avg, DataType::int(), DataType::int(), &ints), Value::Int(4));
    let doubles = [(1, Value::Double(5.0)), (1, Value::Double(3.0))];
    assert_eq!(run(AggregateKind::Avg, DataType::double(), DataType::double(), &doubles), Value::Double(4.0));
    let decimals = [(1, Value::decimal(100, 2)), (1, Value::decimal(200, 2)), (1, Value::decimal(201, 2))];
    assert_eq!(
        run(AggregateKind::Avg, DataType::decimal(38, 6), DataType::decimal(10, 2), &decimals),
        Value::decimal(1_670_000, 6)
    );
}

#[test]
fn first_last_and_listagg_keep_arrival_order() {
    let s = |t: &str| Value::string(t);
    let ops = [(1, s("a")), (1, Value::Null), (1, s("b")), (1, s("c")), (-1, s("a"))];
    assert_eq!(run(AggregateKind::FirstValue, DataType::string(), DataType::string(), &ops), s("b"));
    assert_eq!(run(AggregateKind::LastValue, DataType::string(), DataType::string(), &ops), s("c"));
    let list = AggregateKind::ListAgg { delimiter: ";".into() };
    assert_eq!(run(list, DataType::string(), DataType::string(), &ops), s("b;c"));
}

/// Welford's running variance as Flink 2.3 keeps it, cast to the argument's type: one value's
/// sample variance is NULL; an INT's variance truncates; a TINYINT's wraps; a retraction that
/// leaves `m2` a hair below zero gives NULL (Flink's `+U[null, …, 2]` after retracting 2 from
/// {2, 1, 1}); values whose squares overflow a DOUBLE give NULL.
#[test]
fn variances_follow_flinks_welford_accumulator() {
    let one = [(1, Value::Double(5.0))];
    let d = DataType::double;
    assert_eq!(run(AggregateKind::StddevPop, d(), d(), &one), Value::Double(0.0));
    assert_eq!(run(AggregateKind::VarSamp, d(), d(), &one), Value::Null);
    let two = [(1, Value::Double(5.0)), (1, Value::Double(3.0))];
    assert_eq!(run(AggregateKind::StddevPop, d(), d(), &two), Value::Double(1.0));
    assert_eq!(run(AggregateKind::VarSamp, d(), d(), &two), Value::Double(2.0));
    let tenths = [(1, Value::Double(0.1)), (1, Value::Double(0.2)), (1, Value::Double(0.3))];
    assert_eq!(run(AggregateKind::VarPop, d(), d(), &tenths), Value::Double(0.006666666666666664));
    let huge = [(1, Value::Double(1e308)), (1, Value::Double(-1e308))];
    assert_eq!(run(AggregateKind::VarPop, d(), d(), &huge), Value::Null);
    let ints: Vec<(i64, Value)> = (1..=4).map(|i| (1, Value::Int(i))).collect();
    assert_eq!(run(AggregateKind::VarSamp, DataType::int(), DataType::int(), &ints), Value::Int(1));
    let bytes = [(1, Value::TinyInt(127)), (1, Value::TinyInt(127)), (1, Value::TinyInt(-128))];
    let t = || DataType::new(weir_runtime::LogicalType::TinyInt);
    assert_eq!(run(AggregateKind::VarPop, t(), t(), &bytes), Value::TinyInt(114));
    assert_eq!(run(AggregateKind::VarSamp, t(), t(), &bytes), Value::TinyInt(-85));
    assert_eq!(run(AggregateKind::StddevSamp, t(), t(), &bytes), Value::TinyInt(-109));
    let b = DataType::bigint;
    let drift = [(1, 1), (-1, 1), (1, 2), (1, 1), (1, 1), (-1, 2)].map(|(s, v)| (s, Value::BigInt(v)));
    assert_eq!(run(AggregateKind::VarPop, b(), b(), &drift), Value::Null);
    assert_eq!(run(AggregateKind::VarPop, b(), b(), &drift[..5]), Value::BigInt(0));
}
