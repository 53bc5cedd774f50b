//! The order in which Java's `HashMap` iterates a map's keys.
//!
//! Flink's print connector turns a MAP or MULTISET into a `java.util.HashMap` (filled by `put`
//! in the map's own order) and prints its `toString`, so `{v=17, id=1}` comes out in the hash
//! table's bucket order, not in the order the map was built. Printing the same text means
//! reproducing that order: each key's Java `hashCode` (of the class Flink converts it to:
//! `String`, `Integer`, `Long`, `BigDecimal`, `LocalDateTime`, …), spread as `HashMap.hash`
//! spreads it, and the table's capacity after the puts (16, doubled whenever it is more than
//! three quarters full or a bucket grows past eight keys while it holds fewer than 64 buckets).
//!
//! Keys whose Java hash is not a function of the value (byte arrays, arrays and rows hash by
//! identity or by an enum's identity) have no reproducible order; the map is then printed in
//! its own order. A bucket Java turns into a tree (nine or more colliding keys in a table of
//! 64 buckets or more) is kept in put order here.

use crate::print::civil_from_days;
use crate::value::{Timestamp, Value, MILLIS_PER_DAY};

const INITIAL_CAPACITY: usize = 16;
/// A bucket longer than this is turned into a tree, or the table grows when it is small.
const TREEIFY_THRESHOLD: usize = 8;
const MIN_TREEIFY_CAPACITY: usize = 64;

/// The positions of `keys` in the order a `HashMap` filled with them (in order) iterates them;
/// `None` when some key's Java hash depends on more than its value.
pub fn hash_map_order<'a>(keys: impl ExactSizeIterator<Item = &'a Value>) -> Option<Vec<usize>> {
    let mut table = Table::new();
    for (position, key) in keys.enumerate() {
        table.put(spread(java_hash_code(key)?), position);
    }
    Some(table.buckets.into_iter().flatten().map(|(_, position)| position).collect())
}

/// `HashMap.hash`: the high half of the hash folded into the low half.
fn spread(hash: i32) -> u32 {
    let h = hash as u32;
    h ^ (h >> 16)
}

/// A hash table of positions, bucket by bucket, as `HashMap` lays out its nodes.
struct Table {
    buckets: Vec<Vec<(u32, usize)>>,
    size: usize,
}

impl Table {
    fn new() -> Self {
        Table { buckets: vec![Vec::new(); INITIAL_CAPACITY], size: 0 }
    }

    /// Adds a key (a map's keys are distinct, so it is always new).
    fn put(&mut self, hash: u32, position: usize) {
        let capacity = self.buckets.len();
        let bucket = &mut self.buckets[hash as usize & (capacity - 1)];
        let had = bucket.len();
        bucket.push((hash, position));
        if had >= TREEIFY_THRESHOLD && capacity < MIN_TREEIFY_CAPACITY {
            self.grow();
        }
        self.size += 1;
        if self.size > self.buckets.len() / 4 * 3 {
            self.grow();
        }
    }

    /// Doubles the table; each bucket splits in two, keeping its keys' order.
    fn grow(&mut self) {
        let capacity = self.buckets.len() * 2;
        let mut buckets = vec![Vec::new(); capacity];
        for (hash, position) in self.buckets.drain(..).flatten() {
            buckets[hash as usize & (capacity - 1)].push((hash, position));
        }
        self.buckets = buckets;
    }
}

/// `hashCode()` of the Java object Flink converts `value` to; `None` when it is not a function
/// of the value.
fn java_hash_code(value: &Value) -> Option<i32> {
    Some(match value {
        Value::Null => 0,
        Value::Boolean(b) => {
            if *b {
                1231
            } else {
                1237
            }
        }
        Value::TinyInt(v) => i32::from(*v),
        Value::SmallInt(v) => i32::from(*v),
        Value::Int(v) => *v,
        Value::BigInt(v) => long_hash(*v),
        Value::Float(v) => {
            let bits = if v.is_nan() { 0x7fc0_0000 } else { v.to_bits() };
            bits as i32
        }
        Value::Double(v) => {
            let bits = if v.is_nan() { 0x7ff8_0000_0000_0000 } else { v.to_bits() };
            long_hash(bits as i64)
        }
        Value::Decimal { .. } => {
            let d = value.as_decimal()?;
            big_decimal_hash(d.unscaled, d.scale)
        }
        Value::String(s) => s.encode_utf16().fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(i32::from(unit))),
        Value::Date(days) => local_date_hash(i64::from(*days)),
        Value::Time(nanos) => long_hash(*nanos),
        Value::Timestamp(ts) => local_date_time_hash(*ts),
        Value::TimestampLtz(ts) => {
            let seconds = ts.millis.div_euclid(1000);
            let nanos = ts.millis.rem_euclid(1000) * 1_000_000 + i64::from(ts.nanos_of_milli);
            long_hash(seconds).wrapping_add(51i32.wrapping_mul(nanos as i32))
        }
        Value::IntervalYearMonth(_)
        | Value::IntervalDayTime(_)
        | Value::Binary(_)
        | Value::Array(_)
        | Value::Map(_)
        | Value::Row(_) => return None,
    })
}

/// `Long.hashCode`.
fn long_hash(v: i64) -> i32 {
    (v ^ ((v as u64) >> 32) as i64) as i32
}

/// `BigDecimal.hashCode` of `unscaled` × 10^-`scale`: compact values (those that fit in a
/// `long`) hash their magnitude's two halves, others their `BigInteger`.
fn big_decimal_hash(unscaled: i128, scale: u8) -> i32 {
    let scale = i32::from(scale);
    match i64::try_from(unscaled) {
        Ok(compact) if compact != i64::MIN => {
            let magnitude = compact.unsigned_abs();
            let high = (magnitude >> 32) as i32;
            let temp = (i64::from(high.wrapping_mul(31)) + (magnitude & 0xffff_ffff) as i64) as i32;
            let signed = if compact < 0 { temp.wrapping_neg() } else { temp };
            signed.wrapping_mul(31).wrapping_add(scale)
        }
        _ => big_integer_hash(unscaled).wrapping_mul(31).wrapping_add(scale),
    }
}

/// `BigInteger.hashCode`: its magnitude's 32-bit words, most significant first, times its sign.
fn big_integer_hash(v: i128) -> i32 {
    let magnitude = v.unsigned_abs();
    let words = (0..4).rev().map(|i| (magnitude >> (32 * i)) as u32).skip_while(|w| *w == 0);
    let hash = words.fold(0i32, |h, w| (i64::from(h.wrapping_mul(31)) + i64::from(w)) as i32);
    hash.wrapping_mul(v.signum() as i32)
}

/// `LocalDate.hashCode` of the day `days` after 1970-01-01.
fn local_date_hash(days: i64) -> i32 {
    let (year, month, day) = civil_from_days(days);
    let year = year as i32;
    (year & 0xFFFF_F800u32 as i32) ^ ((year << 11) + ((month as i32) << 6) + day as i32)
}

/// `LocalDateTime.hashCode`: its date's hash and its time's (`LocalTime`, a `long` of nanoseconds).
fn local_date_time_hash(ts: Timestamp) -> i32 {
    let days = ts.millis.div_euclid(MILLIS_PER_DAY);
    let nanos_of_day = ts.millis.rem_euclid(MILLIS_PER_DAY) * 1_000_000 + i64::from(ts.nanos_of_milli);
    local_date_hash(days) ^ long_hash(nanos_of_day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(keys: &[&str]) -> Vec<Value> {
        keys.iter().map(|k| Value::string(k)).collect()
    }

    fn order(keys: &[Value]) -> Vec<usize> {
        hash_map_order(keys.iter()).unwrap()
    }

    /// Orders Flink 2.3's print connector printed for the same maps.
    #[test]
    fn string_keys_come_in_bucket_order() {
        // {v=17, id=1} for MAP['id', …, 'v', …]; {k1=-1, k2=7} for a map read as {"k2": …, "k1": …}.
        assert_eq!(order(&strings(&["id", "v"])), vec![1, 0]);
        assert_eq!(order(&strings(&["k2", "k1"])), vec![1, 0]);
        assert_eq!(order(&strings(&["a", "b"])), vec![0, 1]);
    }

    /// The hash codes Java gives, computed by hand from the JDK's definitions.
    #[test]
    fn hash_codes_are_javas() {
        assert_eq!(java_hash_code(&Value::string("id")), Some(3355));
        assert_eq!(java_hash_code(&Value::string("")), Some(0));
        assert_eq!(java_hash_code(&Value::BigInt(-1)), Some(0));
        assert_eq!(java_hash_code(&Value::BigInt(1 << 32)), Some(1));
        assert_eq!(java_hash_code(&Value::Boolean(true)), Some(1231));
        assert_eq!(java_hash_code(&Value::Double(1.0)), Some(1_072_693_248));
        // new BigDecimal("1.50").hashCode() == 31 * 150 + 2
        assert_eq!(java_hash_code(&Value::decimal(150, 2)), Some(4652));
        assert_eq!(java_hash_code(&Value::decimal(-150, 2)), Some(-4648));
        // LocalDate.of(2024, 1, 2).hashCode()
        assert_eq!(local_date_hash(19_724), (2024 & 0xFFFF_F800u32 as i32) ^ ((2024 << 11) + (1 << 6) + 2));
        assert_eq!(java_hash_code(&Value::Binary(std::sync::Arc::from(&[1u8][..]))), None);
    }

    #[test]
    fn the_table_grows_past_three_quarters_and_keeps_bucket_order() {
        // 16 and 0 share bucket 0 of 16 buckets, in put order; a thirteenth key makes the table
        // 32 buckets, where 16 comes after 0 to 10.
        let ints = |keys: &[i32]| keys.iter().map(|&i| Value::Int(i)).collect::<Vec<_>>();
        assert_eq!(order(&ints(&[16, 0, 1])), vec![0, 1, 2]);
        let thirteen = ints(&[16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 17]);
        assert_eq!(order(&thirteen), vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 12]);
    }
}
