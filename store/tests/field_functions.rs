//! Fluss's own test vectors for the aggregation merge engine's field functions
//! (`FieldAggregatorParameterizedTest`): `merge(stored, incoming)` per function and type.

use weir_runtime::types::MAX_LENGTH;
use weir_runtime::{DataType, LogicalType, Value};
use weir_store::{AggFunction, Error};

fn merge<const N: usize>(f: &str, ty: &DataType, values: &[Value; N]) -> Value {
    let function = AggFunction::parse("value", f).unwrap();
    function.check_type("value", ty).unwrap();
    values[1..].iter().fold(values[0].clone(), |acc, v| function.merge(&acc, v, ty).unwrap())
}

fn tinyint() -> DataType {
    DataType::new(LogicalType::TinyInt)
}
fn smallint() -> DataType {
    DataType::new(LogicalType::SmallInt)
}
fn float() -> DataType {
    DataType::new(LogicalType::Float)
}
fn bytes() -> DataType {
    DataType::new(LogicalType::Varbinary(MAX_LENGTH))
}

fn dec(unscaled: i128) -> Value {
    Value::decimal(unscaled, 2)
}

fn decimal() -> DataType {
    DataType::decimal(10, 2)
}

#[test]
fn sum_and_product_per_type() {
    let cases = [
        (tinyint(), Value::TinyInt(5), Value::TinyInt(3), Value::TinyInt(8), Value::TinyInt(15)),
        (smallint(), Value::SmallInt(100), Value::SmallInt(200), Value::SmallInt(300), Value::SmallInt(20000)),
        (DataType::int(), Value::Int(1000), Value::Int(2000), Value::Int(3000), Value::Int(2_000_000)),
        (
            DataType::bigint(),
            Value::BigInt(10000),
            Value::BigInt(20000),
            Value::BigInt(30000),
            Value::BigInt(200_000_000),
        ),
        (float(), Value::Float(1.5), Value::Float(2.5), Value::Float(4.0), Value::Float(3.75)),
        (DataType::double(), Value::Double(10.5), Value::Double(20.5), Value::Double(31.0), Value::Double(215.25)),
        (decimal(), dec(10050), dec(20075), dec(30125), dec(2017538)),
    ];
    for (ty, a, b, sum, product) in cases {
        assert_eq!(merge("sum", &ty, &[a.clone(), b.clone()]), sum, "{ty} sum");
        assert_eq!(merge("product", &ty, &[a, b]), product, "{ty} product");
    }
    // Fluss's own product rows.
    assert_eq!(merge("product", &tinyint(), &[Value::TinyInt(5), Value::TinyInt(3)]), Value::TinyInt(15));
    assert_eq!(merge("product", &smallint(), &[Value::SmallInt(10), Value::SmallInt(20)]), Value::SmallInt(200));
    assert_eq!(merge("product", &DataType::int(), &[Value::Int(100), Value::Int(200)]), Value::Int(20000));
    assert_eq!(merge("product", &DataType::double(), &[Value::Double(2.5), Value::Double(4.0)]), Value::Double(10.0));
    assert_eq!(merge("product", &decimal(), &[dec(250), dec(400)]), dec(1000));
    assert_eq!(
        merge("product", &DataType::double(), &[Value::Double(0.9), Value::Double(0.8)]),
        Value::Double(0.7200000000000001)
    );
    // NULL on either side is skipped.
    for (ty, v) in [
        (tinyint(), Value::TinyInt(10)),
        (smallint(), Value::SmallInt(100)),
        (DataType::int(), Value::Int(1000)),
        (DataType::bigint(), Value::BigInt(10000)),
        (float(), Value::Float(5.5)),
        (DataType::double(), Value::Double(10.5)),
    ] {
        assert_eq!(merge("sum", &ty, &[Value::Null, v.clone()]), v);
        assert_eq!(merge("sum", &ty, &[v.clone(), Value::Null]), v);
    }
    // Integers wrap; a decimal product beyond its precision is NULL.
    assert_eq!(merge("sum", &DataType::int(), &[Value::Int(i32::MAX), Value::Int(1)]), Value::Int(i32::MIN));
    assert_eq!(merge("product", &decimal(), &[dec(99_999_999), dec(100_000)]), Value::Null);
}

#[test]
fn max_and_min_per_type() {
    let ts = |s: &str| Value::Timestamp(weir_runtime::parse::parse_timestamp(s).unwrap());
    let ltz = |s: &str| Value::TimestampLtz(weir_runtime::parse::parse_timestamp(s).unwrap());
    let date = |s: &str| Value::Date(weir_runtime::parse::parse_date(s).unwrap() as i32);
    let time = |s: &str| Value::Time(weir_runtime::parse::parse_time(s).unwrap());
    let cases = [
        (tinyint(), Value::TinyInt(5), Value::TinyInt(10)),
        (tinyint(), Value::TinyInt(-10), Value::TinyInt(-5)),
        (smallint(), Value::SmallInt(100), Value::SmallInt(200)),
        (DataType::int(), Value::Int(1000), Value::Int(2000)),
        (DataType::bigint(), Value::BigInt(10000), Value::BigInt(20000)),
        (float(), Value::Float(1.5), Value::Float(2.5)),
        (DataType::double(), Value::Double(10.5), Value::Double(20.5)),
        (decimal(), dec(10050), dec(20075)),
        (DataType::string(), Value::string("apple"), Value::string("banana")),
        (DataType::string(), Value::string(""), Value::string("test")),
        (DataType::new(LogicalType::Date), date("2025-01-01"), date("2025-12-31")),
        (DataType::new(LogicalType::Time(0)), time("10:00:00"), time("14:30:00")),
        (DataType::timestamp(3), ts("2025-01-10 12:00:00"), ts("2025-12-31 23:59:59")),
        (DataType::new(LogicalType::TimestampLtz(3)), ltz("2025-01-10 12:00:00"), ltz("2025-12-31 23:59:59")),
    ];
    for (ty, low, high) in cases {
        for order in [[low.clone(), high.clone()], [high.clone(), low.clone()]] {
            assert_eq!(merge("max", &ty, &order), high, "{ty} max");
            assert_eq!(merge("min", &ty, &order), low, "{ty} min");
        }
    }
}

#[test]
fn first_and_last_values() {
    let triples = [
        (DataType::int(), [Value::Int(1), Value::Int(2), Value::Int(3)]),
        (DataType::string(), [Value::string("a"), Value::string("b"), Value::string("c")]),
        (DataType::boolean(), [Value::Boolean(true), Value::Boolean(false), Value::Boolean(true)]),
        (
            bytes(),
            [
                Value::Binary(vec![1, 2, 3].into()),
                Value::Binary(vec![4, 5, 6].into()),
                Value::Binary(vec![7, 8, 9].into()),
            ],
        ),
    ];
    for (ty, values) in triples {
        assert_eq!(merge("last_value", &ty, &values), values[2]);
        assert_eq!(merge("last_value", &ty, &[values[0].clone(), Value::Null]), Value::Null);
        assert_eq!(merge("last_value_ignore_nulls", &ty, &[values[0].clone(), Value::Null]), values[0]);
        assert_eq!(merge("first_value", &ty, &values), values[0]);
        assert_eq!(merge("first_value_ignore_nulls", &ty, &[Value::Null, values[1].clone()]), values[1]);
        // Fluss's code: a stored NULL gives way to the next value under first_value too.
        assert_eq!(merge("first_value", &ty, &[Value::Null, values[1].clone()]), values[1]);
    }
}

#[test]
fn booleans_and_listagg() {
    let b = Value::Boolean;
    let ty = DataType::boolean();
    assert_eq!(merge("bool_and", &ty, &[b(true), b(true)]), b(true));
    assert_eq!(merge("bool_and", &ty, &[b(true), b(false)]), b(false));
    assert_eq!(merge("bool_and", &ty, &[Value::Null, b(true)]), b(true));
    assert_eq!(merge("bool_or", &ty, &[b(false), b(false)]), b(false));
    assert_eq!(merge("bool_or", &ty, &[b(true), b(false)]), b(true));
    assert_eq!(merge("bool_or", &ty, &[Value::Null, b(false)]), b(false));
    let s = Value::string;
    let ty = DataType::string();
    assert_eq!(merge("listagg", &ty, &[s("apple"), s("banana")]), s("apple,banana"));
    assert_eq!(merge("listagg", &ty, &[s("apple"), s("banana"), s("cherry")]), s("apple,banana,cherry"));
    assert_eq!(merge("listagg", &ty, &[s("a"), Value::Null, s("b")]), s("a,b"));
    assert_eq!(merge("listagg", &ty, &[s("a"), s("")]), s("a,"));
    let piped = AggFunction::parse("tags", "string_agg").unwrap().with_parameter("delimiter", "|").unwrap();
    let joined = [s("b"), s("c")].iter().fold(s("a"), |acc, v| piped.merge(&acc, v, &ty).unwrap());
    assert_eq!(joined, s("a|b|c"));
}

#[test]
fn names_parameters_and_types_are_checked_with_flusss_messages() {
    assert_eq!(AggFunction::parse("f", "LAST-VALUE-IGNORE-NULLS").unwrap(), AggFunction::LastValueIgnoreNulls);
    let unknown = AggFunction::parse("price", "median").unwrap_err().to_string();
    assert!(unknown.starts_with("Invalid aggregation function configuration for column 'price': Unknown aggregation function for column 'price': median\nSupported functions: bool_and, bool_or,"), "{unknown}");
    assert!(AggFunction::parse("price", " ")
        .unwrap_err()
        .to_string()
        .ends_with("Empty aggregation function name for column 'price'"));
    assert_eq!(
        AggFunction::Sum.with_parameter("delimiter", ";").unwrap_err(),
        Error::Validation(
            "Parameter 'delimiter' is not supported for aggregation function 'sum'. Supported parameters: none".into()
        )
    );
    assert!(AggFunction::parse("t", "listagg").unwrap().with_parameter("delimiter", "").is_err());
    assert_eq!(
        AggFunction::Sum.check_type("name", &DataType::string()).unwrap_err().to_string(),
        "Invalid aggregation function for column 'name': Data type for sum column must be part of \
         [TINYINT, SMALLINT, INTEGER, BIGINT, FLOAT, DOUBLE, DECIMAL] but was 'STRING'."
    );
    assert!(AggFunction::BoolOr.check_type("b", &DataType::int()).is_err());
    assert!(AggFunction::Max.check_type("b", &DataType::boolean()).is_err());
    assert!(AggFunction::LastValue.check_type("b", &DataType::boolean()).is_ok());
}

#[test]
fn bitmaps_union_as_fluss_does() {
    let rbm32 = |hex: &str| {
        Value::Binary(
            (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
                .collect::<Vec<u8>>()
                .into(),
        )
    };
    let ty = bytes();
    assert_eq!(
        merge(
            "rbm32",
            &ty,
            &[rbm32("3A30000001000000000001001000000001000200"), rbm32("3A30000001000000000001001000000002000300")]
        ),
        rbm32("3A300000010000000000020010000000010002000300")
    );
    assert_eq!(
        merge(
            "rbm64",
            &ty,
            &[
                rbm32("01010000000000000004000000000000000000000000000000000001000000FE010000000102020000000A00140001000000000000000000000000000000"),
                rbm32("01010000000000000004000000000000000000000000000000000001000000FE0100000001020200000014001E0001000000000000000000000000000000")
            ]
        ),
        rbm32("01010000000000000004000000000000000000000000000000000001000000FE010000000102030000000A0014001E0001000000000000000000000000000000")
    );
    let bad =
        AggFunction::Rbm32.merge(&Value::Binary(vec![1].into()), &Value::Binary(vec![2].into()), &ty).unwrap_err();
    assert!(bad.to_string().contains("Unable to deserialize roaring bitmap"), "{bad}");
}
