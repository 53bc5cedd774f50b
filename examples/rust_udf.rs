//! Scalar, aggregate and table functions written in Rust, called from SQL: `cargo run --example
//! rust_udf`.
//!
//! A scalar function is a type implementing [`ScalarFunction`]: its name, how many arguments it
//! takes, the result type for the argument types of a call (checked when the statement is
//! planned, so a wrong call fails before the job starts, with Flink's "Cannot apply …" message),
//! and the value for one row. [`Session::register_function`] makes it callable by the session's
//! statements, like `CREATE TEMPORARY SYSTEM FUNCTION` in Flink. An aggregate function implements
//! [`AggregateUdf`]: an accumulator (a value), how a row goes in and comes back out, and the
//! result; [`Session::register_aggregate_function`] registers it. A table function implements
//! [`TableUdf`]: the columns of its rows for the argument types of a call, and the rows for one
//! row's arguments; [`Session::register_table_function`] registers it, and `LATERAL TABLE(…)`
//! joins each row with the rows it gives.

use std::io::Write;

use weir::operators::expr::functions::wrong_types;
use weir::operators::expr::types::{is_numeric, is_string};
use weir::prelude::*;

/// `MASK_EMAIL(address)`: the address with its local part hidden after the first character
/// (`a****@example.com`); an address without `@` is returned unchanged. NULL gives NULL.
#[derive(Debug)]
struct MaskEmail;

impl ScalarFunction for MaskEmail {
    fn name(&self) -> &str {
        "MASK_EMAIL"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(1)
    }

    fn return_type(&self, args: &[&DataType]) -> std::result::Result<DataType, ExprError> {
        if !is_string(args[0]) {
            return Err(wrong_types(self.name(), args, "<CHARACTER>"));
        }
        Ok(DataType::string())
    }

    fn eval(&self, args: &[Value], _: &DataType) -> std::result::Result<Value, ExprError> {
        let address = args[0].as_str().unwrap_or_default();
        let masked = match address.split_once('@') {
            Some((local, domain)) => {
                let first: String = local.chars().take(1).collect();
                format!("{first}{}@{domain}", "*".repeat(local.chars().count().saturating_sub(1)))
            }
            None => address.to_string(),
        };
        Ok(Value::string(&masked))
    }
}

/// `HAVERSINE_KM(lat1, lon1, lat2, lon2)`: the great-circle distance in kilometres between two
/// points given in degrees. Any NULL argument gives NULL.
#[derive(Debug)]
struct HaversineKm;

impl ScalarFunction for HaversineKm {
    fn name(&self) -> &str {
        "HAVERSINE_KM"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(4)
    }

    fn return_type(&self, args: &[&DataType]) -> std::result::Result<DataType, ExprError> {
        if !args.iter().all(|t| is_numeric(t)) {
            return Err(wrong_types(self.name(), args, "<NUMERIC>, <NUMERIC>, <NUMERIC>, <NUMERIC>"));
        }
        Ok(DataType::double())
    }

    fn eval(&self, args: &[Value], _: &DataType) -> std::result::Result<Value, ExprError> {
        let degrees: Vec<f64> = args.iter().map(|v| v.as_f64().unwrap_or_default()).collect();
        let [lat1, lon1, lat2, lon2] = [degrees[0], degrees[1], degrees[2], degrees[3]].map(f64::to_radians);
        let a = ((lat2 - lat1) / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * ((lon2 - lon1) / 2.0).sin().powi(2);
        Ok(Value::Double(2.0 * 6371.0 * a.sqrt().asin()))
    }
}

/// `RANGE_OF(x)`: the largest value of a group minus its smallest (NULLs skipped); its
/// accumulator counts each value present, so that updating input can take rows back.
#[derive(Debug)]
struct RangeOf;

impl RangeOf {
    fn counts(accumulator: &Value) -> Vec<(Value, Value)> {
        match accumulator {
            Value::Map(entries) => entries.to_vec(),
            _ => Vec::new(),
        }
    }

    fn add(accumulator: &mut Value, x: &Value, sign: i64) {
        if x.is_null() {
            return;
        }
        let mut counts = Self::counts(accumulator);
        match counts.iter().position(|(v, _)| v == x) {
            Some(i) => {
                let n = counts[i].1.as_i64().unwrap_or(0) + sign;
                if n == 0 {
                    counts.remove(i);
                } else {
                    counts[i].1 = Value::BigInt(n);
                }
            }
            None => counts.push((x.clone(), Value::BigInt(sign))),
        }
        *accumulator = Value::Map(counts.into());
    }
}

impl AggregateUdf for RangeOf {
    fn name(&self) -> &str {
        "RANGE_OF"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(1)
    }

    fn return_type(&self, args: &[&DataType]) -> std::result::Result<DataType, ExprError> {
        if !is_numeric(args[0]) {
            return Err(wrong_types(self.name(), args, "<NUMERIC>"));
        }
        Ok(DataType::double())
    }

    fn create_accumulator(&self) -> std::result::Result<Value, ExprError> {
        Ok(Value::Map(Vec::new().into()))
    }

    fn accumulate(&self, accumulator: &mut Value, args: &[Value]) -> std::result::Result<(), ExprError> {
        Self::add(accumulator, &args[0], 1);
        Ok(())
    }

    fn retract(&self, accumulator: &mut Value, args: &[Value]) -> std::result::Result<(), ExprError> {
        Self::add(accumulator, &args[0], -1);
        Ok(())
    }

    fn get_value(&self, accumulator: &Value) -> std::result::Result<Value, ExprError> {
        let values: Vec<f64> = Self::counts(accumulator).iter().filter_map(|(v, _)| v.as_f64()).collect();
        Ok(match (values.iter().copied().reduce(f64::min), values.iter().copied().reduce(f64::max)) {
            (Some(least), Some(most)) => Value::Double(most - least),
            _ => Value::Null,
        })
    }
}

/// `TAGS(text)`: a row (tag, position) per `#word` in `text`, positions from 1; none for NULL.
#[derive(Debug)]
struct Tags;

impl TableUdf for Tags {
    fn name(&self) -> &str {
        "TAGS"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(1)
    }

    fn result_fields(&self, args: &[&DataType]) -> std::result::Result<Vec<Field>, ExprError> {
        if !is_string(args[0]) {
            return Err(wrong_types(self.name(), args, "<CHARACTER>"));
        }
        Ok(vec![Field::new("tag", DataType::string().not_null()), Field::new("position", DataType::int().not_null())])
    }

    fn eval(&self, args: &[Value], emit: &mut dyn FnMut(&[Value])) -> std::result::Result<(), ExprError> {
        let tags = args[0].as_str().unwrap_or_default().split_whitespace().filter_map(|w| w.strip_prefix('#'));
        for (position, tag) in tags.filter(|t| !t.is_empty()).enumerate() {
            emit(&[Value::string(tag), Value::Int(position as i32 + 1)]);
        }
        Ok(())
    }
}

const SCRIPT: &str = "
SET 'sql-client.execution.result-mode' = 'tableau';
SELECT MASK_EMAIL(email) AS who, ROUND(HAVERSINE_KM(lat, lon, 52.52, 13.405), 1) AS km_to_berlin
FROM (VALUES
    ('ada@example.com', 51.5074, -0.1278),
    ('linus@example.org', 60.1699, 24.9384),
    (CAST(NULL AS STRING), 48.8566, 2.3522)
) AS visits(email, lat, lon);
SET 'execution.runtime-mode' = 'batch';
SELECT city, RANGE_OF(temperature) AS spread
FROM (VALUES ('Oslo', -3.5), ('Oslo', 4.0), ('Lima', 18.25), ('Lima', 22.0), ('Lima', CAST(NULL AS DOUBLE)))
    AS readings(city, temperature)
GROUP BY city;
SELECT id, tag, position
FROM (VALUES (1, 'new #rust #sql release'), (2, 'no tags'), (3, '#streaming'))
    AS posts(id, body)
    LEFT JOIN LATERAL TABLE(TAGS(body)) AS t(tag, position) ON TRUE;
";

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let mut session = Session::new(RuntimeConfig::default(), ConnectorRegistry::default(), Box::new(std::io::stdout()));
    session.register_function("mask_email", ScalarRef::new(MaskEmail))?;
    session.register_function("haversine_km", ScalarRef::new(HaversineKm))?;
    session.register_aggregate_function("range_of", std::sync::Arc::new(RangeOf))?;
    session.register_table_function("tags", std::sync::Arc::new(Tags))?;
    if let Err(e) = session.execute_script(SCRIPT) {
        writeln!(std::io::stderr(), "{}", e.in_file("rust_udf.rs"))?;
        std::process::exit(1);
    }
    Ok(())
}
