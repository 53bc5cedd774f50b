//! The binary encoding of state values in snapshots (format version 1).
//!
//! A value is a tag byte and its payload, little-endian: `0` NULL; `1` BOOLEAN (1 byte); `2`
//! TINYINT, `3` SMALLINT, `4` INT, `5` BIGINT (1, 2, 4, 8 bytes); `6` FLOAT, `7` DOUBLE (their
//! IEEE bits); `8` DECIMAL (16-byte unscaled, 1-byte scale); `9` STRING and `10` BYTES (u32
//! length, then UTF-8 or the bytes); `11` DATE (i32 days); `12` TIME (i64 nanoseconds);
//! `13` TIMESTAMP and `14` TIMESTAMP_LTZ (i64 milliseconds, u32 nanoseconds of the
//! millisecond); `15` INTERVAL YEAR TO MONTH (i32 months); `16` INTERVAL DAY TO SECOND (i64
//! milliseconds); `17` ARRAY and `19` ROW (u32 count, then the values); `18` MAP (u32 count,
//! then key and value of each entry). Integers outside values (counts, lengths) are u32 or u64
//! little-endian. The encoding is weir's own and changes only with the snapshot format version.

use std::sync::Arc;

use crate::value::{Timestamp, Value};

/// A malformed encoding: the snapshot is damaged or of another format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed state at byte {offset}: {what}")]
pub struct DecodeError {
    /// Where in the section the reader stopped.
    pub offset: usize,
    /// What it expected.
    pub what: String,
}

/// Writes values and integers into a growing byte buffer.
#[derive(Debug, Default, Clone)]
pub struct Encoder {
    bytes: Vec<u8>,
}

impl Encoder {
    /// An empty encoder.
    pub fn new() -> Self {
        Encoder::default()
    }

    /// An encoder writing into `buffer` (emptied first), keeping its capacity.
    pub fn from_buffer(mut buffer: Vec<u8>) -> Self {
        buffer.clear();
        Encoder { bytes: buffer }
    }

    /// How many bytes were written.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Makes room for `additional` more bytes at once (a writer that knows the size of what
    /// follows spares the buffer growing step by step).
    pub fn reserve(&mut self, additional: usize) {
        self.bytes.reserve(additional);
    }

    /// The bytes written so far.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Appends a u32.
    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// Overwrites the u32 written at byte `at` (a count written before what it counts is known).
    ///
    /// # Panics
    /// `at` is not followed by four bytes written earlier.
    pub fn patch_u32(&mut self, at: usize, v: u32) {
        self.bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    /// Appends a u64.
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// Appends an i64.
    pub fn i64(&mut self, v: i64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// Appends bytes another encoder wrote, as they are.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    /// Appends a length-prefixed byte string.
    pub fn bytes(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.bytes.extend_from_slice(v);
    }

    /// Appends a length-prefixed UTF-8 string.
    pub fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }

    /// Appends a count and the values (a key, a row).
    pub fn values(&mut self, values: &[Value]) {
        self.u32(values.len() as u32);
        values.iter().for_each(|v| self.value(v));
    }

    /// Appends a value.
    pub fn value(&mut self, v: &Value) {
        let b = &mut self.bytes;
        match v {
            Value::Null => b.push(0),
            Value::Boolean(x) => b.extend_from_slice(&[1, u8::from(*x)]),
            Value::TinyInt(x) => b.extend_from_slice(&[2, *x as u8]),
            Value::SmallInt(x) => {
                b.push(3);
                b.extend_from_slice(&x.to_le_bytes());
            }
            Value::Int(x) => {
                b.push(4);
                b.extend_from_slice(&x.to_le_bytes());
            }
            Value::BigInt(x) => {
                b.push(5);
                b.extend_from_slice(&x.to_le_bytes());
            }
            Value::Float(x) => {
                b.push(6);
                b.extend_from_slice(&x.to_bits().to_le_bytes());
            }
            Value::Double(x) => {
                b.push(7);
                b.extend_from_slice(&x.to_bits().to_le_bytes());
            }
            Value::Decimal { .. } => {
                let (unscaled, scale) = v.as_decimal().map_or((0, 0), |d| (d.unscaled, d.scale));
                b.push(8);
                b.extend_from_slice(&unscaled.to_le_bytes());
                b.push(scale);
            }
            Value::String(s) => {
                b.push(9);
                self.str(s);
            }
            Value::Binary(x) => {
                b.push(10);
                self.bytes(x);
            }
            Value::Date(x) => {
                b.push(11);
                b.extend_from_slice(&x.to_le_bytes());
            }
            Value::Time(x) => {
                b.push(12);
                b.extend_from_slice(&x.to_le_bytes());
            }
            Value::Timestamp(t) | Value::TimestampLtz(t) => {
                b.push(if matches!(v, Value::Timestamp(_)) { 13 } else { 14 });
                b.extend_from_slice(&t.millis.to_le_bytes());
                b.extend_from_slice(&t.nanos_of_milli.to_le_bytes());
            }
            Value::IntervalYearMonth(x) => {
                b.push(15);
                b.extend_from_slice(&x.to_le_bytes());
            }
            Value::IntervalDayTime(x) => {
                b.push(16);
                b.extend_from_slice(&x.to_le_bytes());
            }
            Value::Array(items) | Value::Row(items) => {
                b.push(if matches!(v, Value::Array(_)) { 17 } else { 19 });
                self.u32(items.len() as u32);
                items.iter().for_each(|item| self.value(item));
            }
            Value::Map(entries) => {
                b.push(18);
                self.u32(entries.len() as u32);
                for (k, x) in entries.iter() {
                    self.value(k);
                    self.value(x);
                }
            }
        }
    }
}

/// Reads what an [`Encoder`] wrote, failing with a [`DecodeError`] on damaged input.
#[derive(Debug)]
pub struct Decoder<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Decoder { bytes, offset: 0 }
    }

    /// Whether every byte has been read.
    pub fn is_at_end(&self) -> bool {
        self.offset == self.bytes.len()
    }

    /// An error at the current offset, saying what was expected there (for readers of their own
    /// encodings on top of this one).
    ///
    /// # Errors
    /// Always.
    pub fn fail<T>(&self, what: &str) -> Result<T, DecodeError> {
        Err(DecodeError { offset: self.offset, what: what.to_string() })
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        match self.bytes.get(self.offset..self.offset + N) {
            Some(slice) => {
                self.offset += N;
                Ok(slice.try_into().unwrap_or([0; N]))
            }
            None => self.fail(&format!("{N} more bytes")),
        }
    }

    /// Reads a u32.
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        self.take().map(u32::from_le_bytes)
    }

    /// Reads a u64.
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        self.take().map(u64::from_le_bytes)
    }

    /// Reads an i64.
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        self.take().map(i64::from_le_bytes)
    }

    /// Reads a length-prefixed byte string.
    pub fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.u32()? as usize;
        match self.bytes.get(self.offset..self.offset + len) {
            Some(slice) => {
                self.offset += len;
                Ok(slice)
            }
            None => self.fail(&format!("{len} bytes of a string")),
        }
    }

    /// Reads a length-prefixed UTF-8 string.
    pub fn str(&mut self) -> Result<&'a str, DecodeError> {
        let at = self.offset;
        let bytes = self.bytes()?;
        std::str::from_utf8(bytes).map_err(|_| DecodeError { offset: at, what: "UTF-8 text".into() })
    }

    /// Reads a count of items, refusing one larger than the bytes left could hold.
    fn count(&mut self) -> Result<usize, DecodeError> {
        let n = self.u32()? as usize;
        if n > self.bytes.len() - self.offset {
            return self.fail(&format!("{n} items in {} bytes", self.bytes.len() - self.offset));
        }
        Ok(n)
    }

    /// Reads what [`Encoder::values`] wrote, into any collection of values.
    pub fn values<C: FromIterator<Value>>(&mut self) -> Result<C, DecodeError> {
        let n = self.count()?;
        (0..n).map(|_| self.value()).collect()
    }

    /// Reads a value.
    pub fn value(&mut self) -> Result<Value, DecodeError> {
        let [tag] = self.take::<1>()?;
        Ok(match tag {
            0 => Value::Null,
            1 => Value::Boolean(self.take::<1>()?[0] != 0),
            2 => Value::TinyInt(self.take::<1>()?[0] as i8),
            3 => Value::SmallInt(i16::from_le_bytes(self.take()?)),
            4 => Value::Int(i32::from_le_bytes(self.take()?)),
            5 => Value::BigInt(i64::from_le_bytes(self.take()?)),
            6 => Value::Float(f32::from_bits(u32::from_le_bytes(self.take()?))),
            7 => Value::Double(f64::from_bits(u64::from_le_bytes(self.take()?))),
            8 => {
                let unscaled = i128::from_le_bytes(self.take()?);
                Value::decimal(unscaled, self.take::<1>()?[0])
            }
            9 => Value::String(Arc::from(self.str()?)),
            10 => Value::Binary(Arc::from(self.bytes()?)),
            11 => Value::Date(i32::from_le_bytes(self.take()?)),
            12 => Value::Time(self.i64()?),
            13 | 14 => {
                let millis = self.i64()?;
                let ts = Timestamp { millis, nanos_of_milli: u32::from_le_bytes(self.take()?) };
                if tag == 13 {
                    Value::Timestamp(ts)
                } else {
                    Value::TimestampLtz(ts)
                }
            }
            15 => Value::IntervalYearMonth(i32::from_le_bytes(self.take()?)),
            16 => Value::IntervalDayTime(self.i64()?),
            17 | 19 => {
                let n = self.count()?;
                let items = (0..n).map(|_| self.value()).collect::<Result<Vec<_>, _>>()?;
                if tag == 17 {
                    Value::Array(items.into())
                } else {
                    Value::Row(items.into())
                }
            }
            18 => {
                let n = self.count()?;
                let entries = (0..n).map(|_| Ok((self.value()?, self.value()?))).collect::<Result<Vec<_>, _>>()?;
                Value::Map(entries.into())
            }
            other => {
                self.offset -= 1;
                return self.fail(&format!("a value, not tag {other}"));
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn random_value(rng: &mut rand::rngs::SmallRng, depth: u32) -> Value {
        let kinds = if depth > 2 { 17 } else { 20 };
        match rng.random_range(0..kinds) {
            0 => Value::Null,
            1 => Value::Boolean(rng.random()),
            2 => Value::TinyInt(rng.random()),
            3 => Value::SmallInt(rng.random()),
            4 => Value::Int(rng.random()),
            5 => Value::BigInt(rng.random()),
            6 => Value::Float(rng.random()),
            7 => Value::Double(rng.random()),
            8 => Value::decimal(rng.random::<i64>() as i128 * 1_000_000, rng.random_range(0..38)),
            9 => Value::string(&format!("s{}é", rng.random::<u16>())),
            10 => Value::Binary((0..rng.random_range(0..5)).map(|_| rng.random()).collect::<Vec<u8>>().into()),
            11 => Value::Date(rng.random()),
            12 => Value::Time(rng.random_range(0..86_400_000_000_000)),
            13 => Value::Timestamp(Timestamp { millis: rng.random(), nanos_of_milli: rng.random_range(0..1_000_000) }),
            14 => Value::TimestampLtz(Timestamp::from_millis(rng.random())),
            15 => Value::IntervalYearMonth(rng.random()),
            16 => Value::IntervalDayTime(rng.random()),
            17 => Value::Array(
                (0..rng.random_range(0..4)).map(|_| random_value(rng, depth + 1)).collect::<Vec<_>>().into(),
            ),
            18 => Value::Map(
                (0..rng.random_range(0..3))
                    .map(|_| (random_value(rng, depth + 1), random_value(rng, depth + 1)))
                    .collect::<Vec<_>>()
                    .into(),
            ),
            _ => {
                Value::Row((0..rng.random_range(0..4)).map(|_| random_value(rng, depth + 1)).collect::<Vec<_>>().into())
            }
        }
    }

    /// Every value reads back as itself (compared by its encoding: NaN equals NaN there).
    #[test]
    fn random_values_read_back_as_written() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let values: Vec<Value> = (0..2_000).map(|_| random_value(&mut rng, 0)).collect();
        let mut e = Encoder::new();
        values.iter().for_each(|v| e.value(v));
        let bytes = e.into_bytes();
        let mut d = Decoder::new(&bytes);
        for v in &values {
            let read = d.value().unwrap();
            let (mut a, mut b) = (Encoder::new(), Encoder::new());
            a.value(v);
            b.value(&read);
            assert_eq!(a.into_bytes(), b.into_bytes(), "{v:?} read back as {read:?}");
        }
        assert!(d.is_at_end());
    }

    #[test]
    fn damaged_input_is_an_error_not_a_panic() {
        let mut e = Encoder::new();
        e.value(&Value::Array(vec![Value::string("abc"), Value::BigInt(5)].into()));
        let bytes = e.into_bytes();
        for cut in 0..bytes.len() {
            assert!(Decoder::new(&bytes[..cut]).value().is_err(), "cut at {cut}");
        }
        assert_eq!(Decoder::new(&[42]).value().unwrap_err().what, "a value, not tag 42");
        // A count far beyond the bytes is refused before anything is allocated for it.
        assert!(Decoder::new(&[17, 255, 255, 255, 255]).value().is_err());
    }
}
