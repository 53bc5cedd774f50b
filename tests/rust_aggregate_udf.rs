//! Aggregate functions written in Rust and registered with `Session::register_aggregate_function`:
//! a weighted average (two arguments, a ROW accumulator, retraction) equals a recomputation over
//! random rows in GROUP BY at parallelism 1, 2 and 4 with mini-batch on and off, over updating
//! input and in a TUMBLE window; a function without `retract` over updating input and one in a
//! HOP window are refused with a message, and its accumulator survives a checkpoint's encoding.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::Buffer;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use weir::operators::expr::functions::wrong_types;
use weir::prelude::*;

/// `WAVG(value, weight)`: Σ value·weight / Σ weight over the rows where neither is NULL.
#[derive(Debug)]
struct WeightedAverage {
    retracts: bool,
}

impl WeightedAverage {
    fn sums(accumulator: &Value) -> (i64, i64) {
        match accumulator {
            Value::Row(fields) => (fields[0].as_i64().unwrap_or(0), fields[1].as_i64().unwrap_or(0)),
            _ => (0, 0),
        }
    }

    fn add(accumulator: &mut Value, args: &[Value], sign: i64) {
        let (Some(v), Some(w)) = (args[0].as_i64(), args[1].as_i64()) else { return };
        let (sum, weights) = Self::sums(accumulator);
        *accumulator =
            Value::Row(Arc::from(vec![Value::BigInt(sum + sign * v * w), Value::BigInt(weights + sign * w)]));
    }
}

impl AggregateUdf for WeightedAverage {
    fn name(&self) -> &str {
        "WAVG"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(2)
    }

    fn return_type(&self, args: &[&DataType]) -> Result<DataType, ExprError> {
        if args.iter().any(|t| t.integer_bits().is_none()) {
            return Err(wrong_types(self.name(), args, "<INTEGER>, <INTEGER>"));
        }
        Ok(DataType::double())
    }

    fn create_accumulator(&self) -> Result<Value, ExprError> {
        Ok(Value::Row(Arc::from(vec![Value::BigInt(0), Value::BigInt(0)])))
    }

    fn accumulate(&self, accumulator: &mut Value, args: &[Value]) -> Result<(), ExprError> {
        Self::add(accumulator, args, 1);
        Ok(())
    }

    fn retract(&self, accumulator: &mut Value, args: &[Value]) -> Result<(), ExprError> {
        if !self.retracts {
            return Err(ExprError("WAVG cannot take rows back".into()));
        }
        Self::add(accumulator, args, -1);
        Ok(())
    }

    fn get_value(&self, accumulator: &Value) -> Result<Value, ExprError> {
        Ok(match Self::sums(accumulator) {
            (_, 0) => Value::Null,
            (sum, weights) => Value::Double(sum as f64 / weights as f64),
        })
    }
}

fn new_session(out: &Buffer, parallelism: usize, retracts: bool) -> Session {
    let runtime = RuntimeConfig::default().with_parallelism(parallelism);
    let mut session = Session::new(runtime, ConnectorRegistry::default(), Box::new(out.clone()));
    session.set("sql-client.execution.result-mode", "changelog").unwrap();
    session.register_aggregate_function("wavg", Arc::new(WeightedAverage { retracts })).unwrap();
    session
}

/// Random rows `k, v, w, ts` (v and w NULL now and then) as CSV, and the rows.
fn random_rows(seed: u64, n: usize) -> (String, Vec<(i64, Option<i64>, Option<i64>, i64)>) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let rows: Vec<_> = (0..n)
        .map(|i| {
            let k = rng.random_range(0..20);
            let v = rng.random_bool(0.9).then(|| rng.random_range(-1000..1000));
            let w = rng.random_bool(0.9).then(|| rng.random_range(0..10));
            (k, v, w, i as i64 * 37)
        })
        .collect();
    let cell = |x: Option<i64>| x.map(|x| x.to_string()).unwrap_or_default();
    let csv = rows
        .iter()
        .map(|(k, v, w, ts)| {
            let (s, ms) = (ts / 1000, ts % 1000);
            format!("{k},{},{},2024-01-01 00:{:02}:{:02}.{ms:03}\n", cell(*v), cell(*w), s / 60, s % 60)
        })
        .collect();
    (csv, rows)
}

fn table(dir: &std::path::Path) -> String {
    format!(
        "CREATE TABLE t (k INT, v BIGINT, w INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (\
         'connector' = 'filesystem', 'path' = '{}', 'format' = 'csv', 'csv.null-literal' = '');\n",
        dir.join("rows.csv").display()
    )
}

/// A DOUBLE as weir prints it.
fn printed(x: f64) -> String {
    weir::runtime::print::value_to_string(&Value::Double(x))
}

fn expected_per_key(rows: &[(i64, Option<i64>, Option<i64>, i64)]) -> BTreeMap<String, String> {
    let mut groups: BTreeMap<i64, Vec<(Option<i64>, Option<i64>)>> = BTreeMap::new();
    for (k, v, w, _) in rows {
        groups.entry(*k).or_default().push((*v, *w));
    }
    groups
        .into_iter()
        .map(|(k, g)| {
            let (sum, weights) = g.iter().fold((0i64, 0i64), |(s, ws), (v, w)| match (v, w) {
                (Some(v), Some(w)) => (s + v * w, ws + w),
                _ => (s, ws),
            });
            let value = if weights == 0 { "null".to_string() } else { printed(sum as f64 / weights as f64) };
            (k.to_string(), value)
        })
        .collect()
}

#[test]
fn a_rust_aggregate_equals_a_recomputation_in_group_by() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, rows) = random_rows(0x0a99_0040, 2_000);
    std::fs::write(dir.path().join("rows.csv"), csv).unwrap();
    let expected = expected_per_key(&rows);
    for parallelism in [1, 2, 4] {
        for mini_batch in [false, true] {
            let out = Buffer::default();
            let mut session = new_session(&out, parallelism, true);
            let settings = if mini_batch { common::MINI_BATCH } else { "" };
            let script = format!("{settings}{}SELECT k, wavg(v, w) FROM t GROUP BY k;", table(dir.path()));
            session.execute_script(&script).unwrap_or_else(|e| panic!("{}", e.in_file("script")));
            assert_eq!(out.final_rows(), expected, "parallelism {parallelism}, mini-batch {mini_batch}");
        }
    }
}

#[test]
fn a_rust_aggregate_over_updating_input_retracts_and_one_that_cannot_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, rows) = random_rows(0x0a99_0041, 1_000);
    std::fs::write(dir.path().join("rows.csv"), csv).unwrap();
    // The weighted average of the per-key counts, each weighted 1: their mean.
    let mut counts: BTreeMap<i64, i64> = BTreeMap::new();
    for (k, ..) in &rows {
        *counts.entry(*k).or_default() += 1;
    }
    let mean = counts.values().sum::<i64>() as f64 / counts.len() as f64;
    let query = "SELECT 'all', wavg(n, 1) FROM (SELECT k, COUNT(*) AS n FROM t GROUP BY k);";
    let out = Buffer::default();
    let mut session = new_session(&out, 2, true);
    session.execute_script(&format!("{}{query}", table(dir.path()))).unwrap_or_else(|e| panic!("{}", e.in_file("s")));
    assert_eq!(out.final_rows().get("all"), Some(&printed(mean)));

    let out = Buffer::default();
    let mut session = new_session(&out, 2, false);
    let error = session.execute_script(&format!("{}{query}", table(dir.path()))).unwrap_err().in_file("script");
    assert!(error.contains("WAVG cannot take rows back"), "{error}");
}

#[test]
fn a_rust_aggregate_in_a_tumble_window_and_refused_in_a_hop_window() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, rows) = random_rows(0x0a99_0042, 3_000);
    std::fs::write(dir.path().join("rows.csv"), csv).unwrap();
    let mut windows: BTreeMap<i64, Vec<(Option<i64>, Option<i64>)>> = BTreeMap::new();
    for (_, v, w, ts) in &rows {
        windows.entry(ts / 10_000).or_default().push((*v, *w));
    }
    let expected: BTreeMap<String, String> = windows
        .into_iter()
        .map(|(window, g)| {
            let (sum, weights) = g.iter().fold((0i64, 0i64), |(s, ws), (v, w)| match (v, w) {
                (Some(v), Some(w)) => (s + v * w, ws + w),
                _ => (s, ws),
            });
            let value = if weights == 0 { "null".to_string() } else { printed(sum as f64 / weights as f64) };
            let seconds = window * 10;
            (format!("2024-01-01 00:{:02}:{:02}", seconds / 60, seconds % 60), value)
        })
        .collect();
    let out = Buffer::default();
    let mut session = new_session(&out, 2, false);
    let script = format!(
        "{}SELECT CAST(window_start AS STRING), wavg(v, w) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), \
         INTERVAL '10' SECOND)) GROUP BY window_start, window_end;",
        table(dir.path())
    );
    session.execute_script(&script).unwrap_or_else(|e| panic!("{}", e.in_file("script")));
    let got: BTreeMap<String, String> =
        out.final_rows().into_iter().map(|(k, v)| (k.trim_end_matches(".000").to_string(), v)).collect();
    assert_eq!(got, expected);

    let hop = "SELECT window_start, wavg(v, w) FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND, \
               INTERVAL '10' SECOND)) GROUP BY window_start, window_end;";
    let error = session.execute_script(hop).unwrap_err().in_file("script");
    assert!(error.contains("Could not find an implementation method 'merge' in function 'WAVG'"), "{error}");
}

#[test]
fn a_rust_aggregate_is_named_in_explain_and_refuses_wrong_calls() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rows.csv"), "").unwrap();
    let out = Buffer::default();
    let mut session = new_session(&out, 2, true);
    session.execute_script(&format!("{}EXPLAIN SELECT k, wavg(v, w) FROM t GROUP BY k;", table(dir.path()))).unwrap();
    let text = String::from_utf8_lossy(&out.0.lock()).into_owned();
    assert!(text.contains("GroupAggregate(groupBy=[k], select=[k, WAVG($f1) AS EXPR$1])"), "{text}");
    let arity = session.execute_script("SELECT wavg(1);").unwrap_err().in_file("s");
    assert!(arity.contains("Invalid number of arguments to function 'WAVG'"), "{arity}");
    let types = session.execute_script("SELECT wavg('a', 1);").unwrap_err().in_file("s");
    assert!(types.contains("Cannot apply 'WAVG'"), "{types}");
    let twice = session.register_aggregate_function("WAVG", Arc::new(WeightedAverage { retracts: true })).unwrap_err();
    assert_eq!(twice.to_string(), "Could not register function: function 'WAVG' already exists");
}

#[test]
fn a_rust_aggregate_in_an_over_window_equals_a_recomputation() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, rows) = random_rows(0x0a99_0043, 1_500);
    std::fs::write(dir.path().join("rows.csv"), csv).unwrap();
    let mut expected = Vec::new();
    let mut by_key: BTreeMap<i64, Vec<(Option<i64>, Option<i64>)>> = BTreeMap::new();
    for (k, v, w, ts) in &rows {
        let seen = by_key.entry(*k).or_default();
        seen.push((*v, *w));
        let (sum, weights) = seen.iter().rev().take(3).fold((0i64, 0i64), |(s, ws), (v, w)| match (v, w) {
            (Some(v), Some(w)) => (s + v * w, ws + w),
            _ => (s, ws),
        });
        let value = if weights == 0 { "null".to_string() } else { printed(sum as f64 / weights as f64) };
        let (seconds, millis) = (ts / 1000, ts % 1000);
        let time = format!("2024-01-01 00:{:02}:{:02}.{millis:03}", seconds / 60, seconds % 60);
        expected.push(format!("+I[{k}, {time}, {value}]"));
    }
    expected.sort();
    let out = Buffer::default();
    let mut session = new_session(&out, 2, true);
    let script = format!(
        "{}SELECT k, CAST(ts AS STRING), wavg(v, w) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING \
         AND CURRENT ROW) FROM t;",
        table(dir.path())
    );
    session.execute_script(&script).unwrap_or_else(|e| panic!("{}", e.in_file("script")));
    let text = String::from_utf8_lossy(&out.0.lock()).into_owned();
    let mut got: Vec<String> = text.lines().filter(|l| l.starts_with("+I")).map(str::to_string).collect();
    got.sort();
    assert_eq!(got, expected);
}
