//! HASH_CODE (the planner's bucket function for split DISTINCT aggregates) and RAND.

use std::cell::Cell;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use weir_runtime::java_random::JavaRandom;
use weir_runtime::{DataType, Value};

use super::{expect, nullable_if_any, Arity, Builtin, Entry, ScalarFunction, ScalarRef};
use crate::expr::types::is_integer;
use crate::expr::{Expr, ExprError};

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry { names: &["HASH_CODE"], make: || ScalarRef::new(HASH_CODE) },
        Entry { names: &["RAND"], make: || ScalarRef::new(Rand { sequence: None }) },
    ]
}

/// `HASH_CODE(x)`: Java's hash code of the value (`String.hashCode`, `Integer`, `Long`,
/// `Boolean`, `Double`), so that buckets fall as Flink's do.
pub const HASH_CODE: Builtin = Builtin::new(
    "HASH_CODE",
    Arity::exactly(1),
    |_, types| Ok(nullable_if_any(DataType::int(), types)),
    |args, _| Ok(Value::Int(java_hash(&args[0]))),
);

fn java_hash(v: &Value) -> i32 {
    match v {
        Value::String(s) => s.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c))),
        Value::Boolean(b) => {
            if *b {
                1231
            } else {
                1237
            }
        }
        Value::BigInt(n) => (*n ^ ((*n as u64) >> 32) as i64) as i32,
        Value::Double(d) => {
            let bits = d.to_bits();
            (bits ^ (bits >> 32)) as i32
        }
        other => other.as_i64().map_or(0, |n| n as i32),
    }
}

/// `RAND([seed])`: a DOUBLE in [0, 1). With a constant seed, the call draws the sequence Java's
/// `new Random(seed).nextDouble()` draws, as Flink's does (one sequence per call site, shared by
/// the subtasks that evaluate it); a seed read from a column starts a sequence per row.
#[derive(Debug, Clone)]
pub struct Rand {
    /// The generator's state for a constant seed.
    sequence: Option<Arc<AtomicU64>>,
}

thread_local! {
    /// The unseeded generator of this thread, seeded from the clock and the thread.
    static UNSEEDED: Cell<u64> = Cell::new({
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (std::time::SystemTime::now(), std::thread::current().id()).hash(&mut hasher);
        JavaRandom::new(hasher.finish() as i64).state()
    });
}

impl ScalarFunction for Rand {
    fn name(&self) -> &str {
        "RAND"
    }

    fn arity(&self) -> Arity {
        Arity::between(0, 1)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        expect(types.iter().all(|t| is_integer(t)), self, types, "[<INTEGER>]")?;
        Ok(nullable_if_any(DataType::double().not_null(), types))
    }

    fn is_deterministic(&self) -> bool {
        false
    }

    fn bind(&self, args: &[Expr]) -> Result<Option<ScalarRef>, ExprError> {
        Ok(match args.first() {
            Some(Expr::Literal { value, .. }) => value.as_i64().map(|seed| {
                ScalarRef::new(Rand { sequence: Some(Arc::new(AtomicU64::new(JavaRandom::new(seed).state()))) })
            }),
            _ => None,
        })
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let value = match (&self.sequence, args.first()) {
            (Some(sequence), _) => {
                let mut drawn = 0.0;
                // Java's Random advances its seed with compare-and-set; so does this.
                let _ = sequence.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |state| {
                    let mut random = JavaRandom::from_state(state);
                    drawn = random.next_double();
                    Some(random.state())
                });
                drawn
            }
            (None, Some(seed)) => JavaRandom::new(seed.as_i64().unwrap_or(0)).next_double(),
            (None, None) => UNSEEDED.with(|cell| {
                let mut random = JavaRandom::from_state(cell.get());
                let drawn = random.next_double();
                cell.set(random.state());
                drawn
            }),
        };
        Ok(Value::Double(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seeded_rand_draws_javas_sequence() {
        // new java.util.Random(42).nextDouble(), twice.
        let rand = Rand { sequence: None }.bind(&[Expr::literal(Value::Int(42), DataType::int())]).unwrap().unwrap();
        let ty = DataType::double();
        assert_eq!(rand.eval(&[Value::Int(42)], &ty).unwrap(), Value::Double(0.7275636800328681));
        assert_eq!(rand.eval(&[Value::Int(42)], &ty).unwrap(), Value::Double(0.6832234717598454));
        let unseeded = Rand { sequence: None }.eval(&[], &ty).unwrap().as_f64().unwrap();
        assert!((0.0..1.0).contains(&unseeded));
    }

    #[test]
    fn hash_codes_are_javas() {
        assert_eq!(java_hash(&Value::string("abc")), 96354);
        assert_eq!(java_hash(&Value::BigInt(1 << 32)), 1);
        assert_eq!(java_hash(&Value::Boolean(true)), 1231);
    }
}
