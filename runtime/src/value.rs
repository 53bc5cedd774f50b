//! Values of every SQL type, small enough to move by the million.
//!
//! A [`Value`] is 24 bytes: scalars inline, strings, bytes and nested values behind an
//! [`Arc`] so that cloning a row never copies text. DECIMAL keeps its unscaled integer and
//! scale inline; timestamps keep epoch milliseconds plus the nanoseconds within the
//! millisecond, as Flink's `TimestampData` does.
//!
//! Values have a total order and a hash that agree with equality (floats compare by
//! [`f64::total_cmp`]), so any row can be a state key or a timer key.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Position of strings in the order between values of different types (see `Value::rank`).
const STRING_RANK: u8 = 9;

/// Milliseconds in one day.
pub const MILLIS_PER_DAY: i64 = 86_400_000;

/// A point in time: milliseconds since the epoch plus nanoseconds within that millisecond.
///
/// Used for `TIMESTAMP(p)` (a local date-time, read as if in UTC) and `TIMESTAMP_LTZ(p)`
/// (an instant). `nanos_of_milli` is always below 1,000,000.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Timestamp {
    /// Milliseconds since 1970-01-01T00:00.
    pub millis: i64,
    /// Nanoseconds within the millisecond, 0..1_000_000.
    pub nanos_of_milli: u32,
}

impl Timestamp {
    /// A timestamp at a whole millisecond.
    pub fn from_millis(millis: i64) -> Self {
        Timestamp { millis, nanos_of_milli: 0 }
    }
}

/// A DECIMAL value: an unscaled integer and the number of digits after the point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decimal {
    /// The value times 10^scale.
    pub unscaled: i128,
    /// Digits after the point.
    pub scale: u8,
}

/// One SQL value. `Null` is the value of any nullable type.
#[derive(Debug, Clone, Default)]
pub enum Value {
    /// SQL `NULL`.
    #[default]
    Null,
    /// `BOOLEAN`
    Boolean(bool),
    /// `TINYINT`
    TinyInt(i8),
    /// `SMALLINT`
    SmallInt(i16),
    /// `INT`
    Int(i32),
    /// `BIGINT`
    BigInt(i64),
    /// `FLOAT`
    Float(f32),
    /// `DOUBLE`
    Double(f64),
    /// `DECIMAL(p, s)`, stored inline as the two halves of the unscaled i128 (keeps `Value`
    /// at 24 bytes); build it with [`Value::decimal`], read it with [`Value::as_decimal`].
    Decimal {
        /// Low 64 bits of the unscaled value.
        lo: u64,
        /// High 64 bits of the unscaled value.
        hi: i64,
        /// Digits after the point.
        scale: u8,
    },
    /// `CHAR` / `VARCHAR` / `STRING`
    String(Arc<str>),
    /// `BINARY` / `VARBINARY` / `BYTES`
    Binary(Arc<[u8]>),
    /// `DATE`: days since 1970-01-01.
    Date(i32),
    /// `TIME(p)`: nanoseconds since midnight.
    Time(i64),
    /// `TIMESTAMP(p)`
    Timestamp(Timestamp),
    /// `TIMESTAMP_LTZ(p)`
    TimestampLtz(Timestamp),
    /// `INTERVAL YEAR TO MONTH`: months.
    IntervalYearMonth(i32),
    /// `INTERVAL DAY TO SECOND`: milliseconds.
    IntervalDayTime(i64),
    /// `ARRAY<t>`
    Array(Arc<[Value]>),
    /// `MAP<k, v>`, entries in insertion order.
    Map(Arc<[(Value, Value)]>),
    /// `ROW<…>`
    Row(Arc<[Value]>),
}

impl Value {
    /// A DECIMAL value of `unscaled / 10^scale`.
    pub fn decimal(unscaled: i128, scale: u8) -> Self {
        Value::Decimal { lo: unscaled as u64, hi: (unscaled >> 64) as i64, scale }
    }

    /// A string value.
    pub fn string(s: &str) -> Self {
        Value::String(Arc::from(s))
    }

    /// Whether this is SQL `NULL`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The DECIMAL held, if this is one.
    pub fn as_decimal(&self) -> Option<Decimal> {
        match *self {
            Value::Decimal { lo, hi, scale } => Some(Decimal { unscaled: ((hi as i128) << 64) | lo as i128, scale }),
            _ => None,
        }
    }

    /// The integer held by any integer type, widened to i64.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::TinyInt(v) => Some(v.into()),
            Value::SmallInt(v) => Some(v.into()),
            Value::Int(v) => Some(v.into()),
            Value::BigInt(v) => Some(v),
            _ => None,
        }
    }

    /// The number held by any numeric type, as f64 (DECIMAL and BIGINT may round).
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Float(v) => Some(v.into()),
            Value::Double(v) => Some(v),
            Value::Decimal { .. } => self.as_decimal().map(|d| d.unscaled as f64 / 10f64.powi(d.scale.into())),
            _ => self.as_i64().map(|v| v as f64),
        }
    }

    /// The text held by a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean held, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Boolean(b) => Some(b),
            _ => None,
        }
    }

    /// Position of the variant in the total order between values of different types.
    fn rank(&self) -> u8 {
        match self {
            Value::Null => 0,
            Value::Boolean(_) => 1,
            Value::TinyInt(_) => 2,
            Value::SmallInt(_) => 3,
            Value::Int(_) => 4,
            Value::BigInt(_) => 5,
            Value::Float(_) => 6,
            Value::Double(_) => 7,
            Value::Decimal { .. } => 8,
            Value::String(_) => STRING_RANK,
            Value::Binary(_) => 10,
            Value::Date(_) => 11,
            Value::Time(_) => 12,
            Value::Timestamp(_) => 13,
            Value::TimestampLtz(_) => 14,
            Value::IntervalYearMonth(_) => 15,
            Value::IntervalDayTime(_) => 16,
            Value::Array(_) => 17,
            Value::Map(_) => 18,
            Value::Row(_) => 19,
        }
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Boolean(v)
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(v)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::BigInt(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Double(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::string(v)
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

impl PartialEq for Value {
    /// Equal when [`Ord`] says so; the common types of keys compare directly (hash-map
    /// lookups compare keys on every hit).
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::BigInt(a), Value::BigInt(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Date(a), Value::Date(b)) => a == b,
            (Value::Timestamp(a), Value::Timestamp(b)) => a == b,
            _ => self.cmp(other) == Ordering::Equal,
        }
    }
}

impl Eq for Value {}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Value {
    /// A total order: values of the same type by value (floats by `total_cmp`, DECIMALs
    /// by numeric value), values of different types by type, `NULL` first.
    fn cmp(&self, other: &Self) -> Ordering {
        use Value::*;
        match (self, other) {
            (Null, Null) => Ordering::Equal,
            (Boolean(a), Boolean(b)) => a.cmp(b),
            (TinyInt(a), TinyInt(b)) => a.cmp(b),
            (SmallInt(a), SmallInt(b)) => a.cmp(b),
            (Int(a), Int(b)) => a.cmp(b),
            (BigInt(a), BigInt(b)) => a.cmp(b),
            (Float(a), Float(b)) => a.total_cmp(b),
            (Double(a), Double(b)) => a.total_cmp(b),
            (Decimal { .. }, Decimal { .. }) => {
                let (a, b) = (self.as_decimal(), other.as_decimal());
                compare_decimals(a.unwrap_or(ZERO), b.unwrap_or(ZERO))
            }
            (String(a), String(b)) => a.cmp(b),
            (Binary(a), Binary(b)) => a.cmp(b),
            (Date(a), Date(b)) => a.cmp(b),
            (Time(a), Time(b)) => a.cmp(b),
            (Timestamp(a), Timestamp(b)) | (TimestampLtz(a), TimestampLtz(b)) => a.cmp(b),
            (IntervalYearMonth(a), IntervalYearMonth(b)) => a.cmp(b),
            (IntervalDayTime(a), IntervalDayTime(b)) => a.cmp(b),
            (Array(a), Array(b)) | (Row(a), Row(b)) => a.cmp(b),
            (Map(a), Map(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

const ZERO: Decimal = Decimal { unscaled: 0, scale: 0 };

/// Compares two decimals by numeric value, whatever their scales.
fn compare_decimals(a: Decimal, b: Decimal) -> Ordering {
    if a.scale == b.scale {
        return a.unscaled.cmp(&b.unscaled);
    }
    let (lo, hi, flipped) = if a.scale < b.scale { (a, b, false) } else { (b, a, true) };
    let factor = 10i128.checked_pow(u32::from(hi.scale - lo.scale));
    let ordering = match factor.and_then(|f| lo.unscaled.checked_mul(f)) {
        Some(widened) => widened.cmp(&hi.unscaled),
        // Widening overflows only when |lo| is far beyond anything hi can hold.
        None => lo.unscaled.signum().cmp(&0),
    };
    if flipped {
        ordering.reverse()
    } else {
        ordering
    }
}

/// Strips trailing zeros so that equal decimals of different scales hash the same.
fn normalized_decimal(d: Decimal) -> Decimal {
    let mut d = d;
    while d.scale > 0 && d.unscaled % 10 == 0 {
        d.unscaled /= 10;
        d.scale -= 1;
    }
    d
}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u8(self.rank());
        match self {
            Value::Null => {}
            Value::Boolean(v) => v.hash(state),
            Value::TinyInt(v) => v.hash(state),
            Value::SmallInt(v) => v.hash(state),
            Value::Int(v) => v.hash(state),
            Value::BigInt(v) => v.hash(state),
            Value::Float(v) => v.to_bits().hash(state),
            Value::Double(v) => v.to_bits().hash(state),
            Value::Decimal { .. } => normalized_decimal(self.as_decimal().unwrap_or(ZERO)).hash(state),
            Value::String(v) => v.hash(state),
            Value::Binary(v) => v.hash(state),
            Value::Date(v) => v.hash(state),
            Value::Time(v) => v.hash(state),
            Value::Timestamp(v) | Value::TimestampLtz(v) => v.hash(state),
            Value::IntervalYearMonth(v) => v.hash(state),
            Value::IntervalDayTime(v) => v.hash(state),
            Value::Array(v) | Value::Row(v) => v.hash(state),
            Value::Map(v) => v.hash(state),
        }
    }
}

/// Feeds `state` what hashing `Value::String(s)` feeds it, without building the value: a
/// column of strings hashes its cells as their values hash.
pub fn hash_str<H: Hasher>(s: &str, state: &mut H) {
    state.write_u8(STRING_RANK);
    s.hash(state);
}

/// Feeds `state` what hashing `Value::Null` feeds it.
pub fn hash_null<H: Hasher>(state: &mut H) {
    Value::Null.hash(state);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    #[test]
    fn a_string_hashes_as_its_value() {
        let mut a = DefaultHasher::new();
        hash_str("apple", &mut a);
        assert_eq!(a.finish(), hash_of(&Value::string("apple")));
    }

    fn hash_of(v: &Value) -> u64 {
        let mut h = DefaultHasher::new();
        v.hash(&mut h);
        h.finish()
    }

    #[test]
    fn value_stays_small() {
        assert_eq!(std::mem::size_of::<Value>(), 24);
    }

    #[test]
    fn decimal_round_trips_through_the_inline_halves() {
        for unscaled in [0i128, 1, -1, 41082, i128::MAX, i128::MIN, -(1 << 70)] {
            let v = Value::decimal(unscaled, 2);
            assert_eq!(v.as_decimal(), Some(Decimal { unscaled, scale: 2 }));
        }
    }

    #[test]
    fn equal_decimals_of_different_scale_compare_and_hash_equal() {
        let a = Value::decimal(1050, 2);
        let b = Value::decimal(105, 1);
        assert_eq!(a, b);
        assert_eq!(hash_of(&a), hash_of(&b));
        assert!(Value::decimal(-1, 0) < Value::decimal(5, 3));
        assert!(Value::decimal(2, 0) > Value::decimal(1999, 3));
    }

    #[test]
    fn order_is_total_with_null_first() {
        let mut vs = [Value::Double(f64::NAN), Value::Double(1.0), Value::Null, Value::Double(-0.5)];
        vs.sort();
        assert!(vs[0].is_null());
        assert_eq!(vs[1], Value::Double(-0.5));
        assert_eq!(vs[2], Value::Double(1.0));
    }
}
