//! HASH_CODE (the planner's bucket function for split DISTINCT aggregates), RAND,
//! RAND_INTEGER, UUID, INET_ATON and INET_NTOA.

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
        Entry { names: &["RAND"], make: || ScalarRef::new(Rand { sequence: None, integer: false }) },
        Entry { names: &["RAND_INTEGER"], make: || ScalarRef::new(Rand { sequence: None, integer: true }) },
        Entry { names: &["UUID"], make: || ScalarRef::new(UUID) },
        Entry { names: &["INET_ATON"], make: || ScalarRef::new(INET_ATON) },
        Entry { names: &["INET_NTOA"], make: || ScalarRef::new(INET_NTOA) },
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
    /// `RAND_INTEGER([seed, ] bound)`: an INT in [0, bound), drawn as Java's `nextInt(bound)`.
    integer: bool,
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
        if self.integer {
            "RAND_INTEGER"
        } else {
            "RAND"
        }
    }

    fn arity(&self) -> Arity {
        if self.integer {
            Arity::between(1, 2)
        } else {
            Arity::between(0, 1)
        }
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        let forms = if self.integer { "[<INTEGER>, ]<INTEGER>" } else { "[<INTEGER>]" };
        expect(types.iter().all(|t| is_integer(t)), self, types, forms)?;
        let ty = if self.integer { DataType::int() } else { DataType::double() };
        Ok(nullable_if_any(ty.not_null(), types))
    }

    fn is_deterministic(&self) -> bool {
        false
    }

    fn bind(&self, args: &[Expr]) -> Result<Option<ScalarRef>, ExprError> {
        // The seed: RAND's argument, or RAND_INTEGER's first of two.
        let seeded = if self.integer { args.len() == 2 } else { !args.is_empty() };
        Ok(match args.first().filter(|_| seeded) {
            Some(Expr::Literal { value, .. }) => value.as_i64().map(|seed| {
                let sequence = Some(Arc::new(AtomicU64::new(JavaRandom::new(seed).state())));
                ScalarRef::new(Rand { sequence, integer: self.integer })
            }),
            _ => None,
        })
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let bound = if self.integer { args.last().and_then(Value::as_i64).map(|b| b as i32) } else { None };
        if bound.is_some_and(|b| b <= 0) {
            return Err(ExprError("bound must be positive".into()));
        }
        let draw = |random: &mut JavaRandom| match bound {
            Some(b) => Value::Int(random.next_int_below(b)),
            None => Value::Double(random.next_double()),
        };
        let seeded = if self.integer { args.len() == 2 } else { !args.is_empty() };
        Ok(match (&self.sequence, args.first().filter(|_| seeded)) {
            (Some(sequence), _) => {
                let mut drawn = Value::Null;
                // Java's Random advances its seed with compare-and-set; so does this.
                let _ = sequence.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |state| {
                    let mut random = JavaRandom::from_state(state);
                    drawn = draw(&mut random);
                    Some(random.state())
                });
                drawn
            }
            (None, Some(seed)) => draw(&mut JavaRandom::new(seed.as_i64().unwrap_or(0))),
            (None, None) => UNSEEDED.with(|cell| {
                let mut random = JavaRandom::from_state(cell.get());
                let drawn = draw(&mut random);
                cell.set(random.state());
                drawn
            }),
        })
    }
}

/// `UUID()`: a random (version 4) UUID as text.
pub const UUID: Builtin = Builtin::new(
    "UUID",
    Arity::exactly(0),
    |_, _| Ok(DataType::string().not_null()),
    |_, _| {
        let (high, low) = UNSEEDED.with(|cell| {
            let mut random = JavaRandom::from_state(cell.get());
            let drawn = (random.next_long() as u64, random.next_long() as u64);
            cell.set(random.state());
            drawn
        });
        let high = (high & !0xF000) | 0x4000;
        let low = (low & !(0xC << 60)) | (0x8 << 60);
        Ok(Value::String(Arc::from(format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            high >> 32,
            (high >> 16) & 0xFFFF,
            high & 0xFFFF,
            low >> 48,
            low & 0xFFFF_FFFF_FFFF
        ))))
    },
)
.nondeterministic();

/// `INET_ATON(text)`: a dotted IPv4 address as a BIGINT; NULL for text that is none.
pub const INET_ATON: Builtin = Builtin::new(
    "INET_ATON",
    Arity::exactly(1),
    |f, types| {
        f.expect(crate::expr::types::is_string(types[0]), types, "<CHARACTER>")?;
        let mut ty = DataType::bigint();
        ty.nullable = true;
        Ok(ty)
    },
    |args, _| {
        let octets: Option<Vec<u8>> = super::text(&args[0]).trim().split('.').map(|o| o.parse::<u8>().ok()).collect();
        Ok(match octets.as_deref() {
            Some([a, b, c, d]) => Value::BigInt(i64::from(u32::from_be_bytes([*a, *b, *c, *d]))),
            _ => Value::Null,
        })
    },
);

/// `INET_NTOA(n)`: a BIGINT in 0 to 2^32 - 1 as a dotted IPv4 address; NULL outside.
pub const INET_NTOA: Builtin = Builtin::new(
    "INET_NTOA",
    Arity::exactly(1),
    |f, types| {
        f.expect(is_integer(types[0]), types, "<INTEGER>")?;
        let mut ty = DataType::string();
        ty.nullable = true;
        Ok(ty)
    },
    |args, _| {
        Ok(match args[0].as_i64().and_then(|n| u32::try_from(n).ok()) {
            Some(n) => {
                let [a, b, c, d] = n.to_be_bytes();
                Value::String(Arc::from(format!("{a}.{b}.{c}.{d}")))
            }
            None => Value::Null,
        })
    },
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seeded_rand_draws_javas_sequence() {
        // new java.util.Random(42).nextDouble(), twice.
        let rand = Rand { sequence: None, integer: false }
            .bind(&[Expr::literal(Value::Int(42), DataType::int())])
            .unwrap()
            .unwrap();
        let ty = DataType::double();
        assert_eq!(rand.eval(&[Value::Int(42)], &ty).unwrap(), Value::Double(0.7275636800328681));
        assert_eq!(rand.eval(&[Value::Int(42)], &ty).unwrap(), Value::Double(0.6832234717598454));
        let unseeded = Rand { sequence: None, integer: false }.eval(&[], &ty).unwrap().as_f64().unwrap();
        assert!((0.0..1.0).contains(&unseeded));
    }

    #[test]
    fn hash_codes_are_javas() {
        assert_eq!(java_hash(&Value::string("abc")), 96354);
        assert_eq!(java_hash(&Value::BigInt(1 << 32)), 1);
        assert_eq!(java_hash(&Value::Boolean(true)), 1231);
    }

    #[test]
    fn addresses_and_uuids_have_their_forms() {
        let ty = DataType::bigint();
        assert_eq!(INET_ATON.eval(&[Value::string("192.168.0.1")], &ty).unwrap(), Value::BigInt(3_232_235_521));
        assert_eq!(INET_ATON.eval(&[Value::string("1.2.3")], &ty).unwrap(), Value::Null);
        assert_eq!(INET_NTOA.eval(&[Value::BigInt(3_232_235_521)], &ty).unwrap(), Value::string("192.168.0.1"));
        let uuid = UUID.eval(&[], &DataType::string()).unwrap();
        let text = uuid.as_str().unwrap();
        assert_eq!((text.len(), &text[14..15]), (36, "4"), "{text}");
    }
}
