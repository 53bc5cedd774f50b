//! Rows as bytes for the key-value store: one value after the other, each a presence byte
//! (0 for NULL) and, when present, its payload by column type — fixed-width little-endian
//! numbers, length-prefixed text and bytes, DECIMALs as 16-byte unscaled values at the
//! column's scale. Equal rows encode to equal bytes, so encoded keys can be compared.

use weir_runtime::{DataType, LogicalType, RowKind, Timestamp, Value};

use crate::error::{Error, Result};

/// Appends `row` (values of `types`) to `out`.
///
/// # Errors
/// A value of a type the store cannot hold (ARRAY, MAP, ROW) or that does not match its column.
pub fn encode(row: &[Value], types: &[DataType], out: &mut Vec<u8>) -> Result<()> {
    for (value, ty) in row.iter().zip(types) {
        if value.is_null() {
            out.push(0);
            continue;
        }
        out.push(1);
        match (value, &ty.logical) {
            (Value::Boolean(b), _) => out.push(u8::from(*b)),
            (Value::TinyInt(v), _) => out.push(*v as u8),
            (Value::SmallInt(v), _) => out.extend_from_slice(&v.to_le_bytes()),
            (Value::Int(v), _) | (Value::Date(v), _) | (Value::IntervalYearMonth(v), _) => {
                out.extend_from_slice(&v.to_le_bytes())
            }
            (Value::BigInt(v), _) | (Value::Time(v), _) | (Value::IntervalDayTime(v), _) => {
                out.extend_from_slice(&v.to_le_bytes())
            }
            (Value::Float(v), _) => out.extend_from_slice(&v.to_le_bytes()),
            (Value::Double(v), _) => out.extend_from_slice(&v.to_le_bytes()),
            (Value::Decimal { .. }, LogicalType::Decimal { scale, .. }) => {
                let d = value.as_decimal().unwrap_or(weir_runtime::Decimal { unscaled: 0, scale: *scale });
                let unscaled = match scale.cmp(&d.scale) {
                    std::cmp::Ordering::Equal => d.unscaled,
                    std::cmp::Ordering::Greater => d.unscaled * 10i128.pow(u32::from(scale - d.scale)),
                    std::cmp::Ordering::Less => d.unscaled / 10i128.pow(u32::from(d.scale - scale)),
                };
                out.extend_from_slice(&unscaled.to_le_bytes());
            }
            (Value::String(s), _) => {
                out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                out.extend_from_slice(s.as_bytes());
            }
            (Value::Binary(b), _) => {
                out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                out.extend_from_slice(b);
            }
            (Value::Timestamp(t), _) | (Value::TimestampLtz(t), _) => {
                out.extend_from_slice(&t.millis.to_le_bytes());
                out.extend_from_slice(&t.nanos_of_milli.to_le_bytes());
            }
            (other, _) => {
                return Err(Error::Validation(format!("the table store cannot hold {ty} values like {other:?}")))
            }
        }
    }
    Ok(())
}

/// The row of `types` encoded in `bytes`.
///
/// # Errors
/// Bytes that end early or hold text that is not UTF-8 (a damaged store).
pub fn decode(bytes: &[u8], types: &[DataType]) -> Result<Vec<Value>> {
    let damaged = || Error::Merge("a stored row is damaged".into());
    let mut at = 0usize;
    let mut take = |n: usize| -> Result<&[u8]> {
        let end = at.checked_add(n).filter(|&e| e <= bytes.len()).ok_or_else(damaged)?;
        let slice = &bytes[at..end];
        at = end;
        Ok(slice)
    };
    fn array<const N: usize>(b: &[u8]) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(b);
        a
    }
    let mut row = Vec::with_capacity(types.len());
    for ty in types {
        if take(1)?[0] == 0 {
            row.push(Value::Null);
            continue;
        }
        row.push(match ty.logical {
            LogicalType::Boolean => Value::Boolean(take(1)?[0] != 0),
            LogicalType::TinyInt => Value::TinyInt(take(1)?[0] as i8),
            LogicalType::SmallInt => Value::SmallInt(i16::from_le_bytes(array(take(2)?))),
            LogicalType::Int => Value::Int(i32::from_le_bytes(array(take(4)?))),
            LogicalType::Date => Value::Date(i32::from_le_bytes(array(take(4)?))),
            LogicalType::IntervalYearMonth => Value::IntervalYearMonth(i32::from_le_bytes(array(take(4)?))),
            LogicalType::BigInt => Value::BigInt(i64::from_le_bytes(array(take(8)?))),
            LogicalType::Time(_) => Value::Time(i64::from_le_bytes(array(take(8)?))),
            LogicalType::IntervalDayTime => Value::IntervalDayTime(i64::from_le_bytes(array(take(8)?))),
            LogicalType::Float => Value::Float(f32::from_le_bytes(array(take(4)?))),
            LogicalType::Double => Value::Double(f64::from_le_bytes(array(take(8)?))),
            LogicalType::Decimal { scale, .. } => Value::decimal(i128::from_le_bytes(array(take(16)?)), scale),
            LogicalType::Char(_) | LogicalType::Varchar(_) => {
                let n = u32::from_le_bytes(array(take(4)?)) as usize;
                Value::string(std::str::from_utf8(take(n)?).map_err(|_| damaged())?)
            }
            LogicalType::Binary(_) | LogicalType::Varbinary(_) => {
                let n = u32::from_le_bytes(array(take(4)?)) as usize;
                Value::Binary(take(n)?.into())
            }
            LogicalType::Timestamp(_) | LogicalType::TimestampLtz(_) => {
                let millis = i64::from_le_bytes(array(take(8)?));
                let nanos_of_milli = u32::from_le_bytes(array(take(4)?));
                let t = Timestamp { millis, nanos_of_milli };
                if matches!(ty.logical, LogicalType::Timestamp(_)) {
                    Value::Timestamp(t)
                } else {
                    Value::TimestampLtz(t)
                }
            }
            _ => return Err(Error::Validation(format!("the table store cannot hold {ty} values"))),
        });
    }
    Ok(row)
}

/// Rows with their kinds, kept encoded back to back: a buffer of writes that takes a few dozen
/// bytes per row instead of a `Value` per cell.
#[derive(Debug, Clone, Default)]
pub struct EncodedRows {
    types: Vec<DataType>,
    bytes: Vec<u8>,
    /// Per row: its kind and where its bytes end.
    rows: Vec<(RowKind, usize)>,
}

impl EncodedRows {
    /// An empty buffer of rows of `types`.
    pub fn new(types: Vec<DataType>) -> Self {
        EncodedRows { types, bytes: Vec::new(), rows: Vec::new() }
    }

    /// Adds a row.
    ///
    /// # Errors
    /// A value the store cannot hold (see [`encode`]).
    pub fn push(&mut self, kind: RowKind, row: &[Value]) -> Result<()> {
        encode(row, &self.types, &mut self.bytes)?;
        self.rows.push((kind, self.bytes.len()));
        Ok(())
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Removes every row.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.rows.clear();
    }

    /// The buffer as bytes, for a checkpoint: the number of rows (u32 LE), per row its kind
    /// (`0` +I, `1` -U, `2` +U, `3` -D) and where its bytes end (u32 LE), then the rows' bytes.
    /// [`EncodedRows::from_bytes`] reads it back.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 + self.rows.len() * 5 + self.bytes.len());
        out.extend_from_slice(&(self.rows.len() as u32).to_le_bytes());
        for &(kind, end) in &self.rows {
            out.push(kind.to_byte());
            out.extend_from_slice(&(end as u32).to_le_bytes());
        }
        out.extend_from_slice(&self.bytes);
        out
    }

    /// Rows of `types` from what [`EncodedRows::to_bytes`] wrote.
    ///
    /// # Errors
    /// Bytes that are not such a buffer (cut off, or with ends out of order).
    pub fn from_bytes(types: Vec<DataType>, bytes: &[u8]) -> Result<Self> {
        let bad = |what: &str| Error::Storage(format!("a buffer of encoded rows is damaged: {what}"));
        let count = bytes.get(..4).ok_or_else(|| bad("no row count"))?;
        let count = u32::from_le_bytes(count.try_into().map_err(|_| bad("no row count"))?) as usize;
        let header = count.checked_mul(5).and_then(|n| n.checked_add(4)).ok_or_else(|| bad("too many rows"))?;
        let index = bytes.get(4..header).ok_or_else(|| bad("cut off in its index"))?;
        let data = &bytes[header..];
        let mut rows = Vec::with_capacity(count);
        let mut last = 0;
        for entry in index.chunks_exact(5) {
            let kind = RowKind::from_byte(entry[0]).ok_or_else(|| bad("a row of unknown kind"))?;
            let end = u32::from_le_bytes([entry[1], entry[2], entry[3], entry[4]]) as usize;
            if end < last || end > data.len() {
                return Err(bad("row ends out of order"));
            }
            last = end;
            rows.push((kind, end));
        }
        if last != data.len() {
            return Err(bad("bytes after its last row"));
        }
        Ok(EncodedRows { types, bytes: data.to_vec(), rows })
    }

    /// The rows, decoded one at a time, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = Result<(RowKind, Vec<Value>)>> + '_ {
        let starts = std::iter::once(0).chain(self.rows.iter().map(|(_, end)| *end));
        self.rows
            .iter()
            .zip(starts)
            .map(|(&(kind, end), start)| Ok((kind, decode(&self.bytes[start..end], &self.types)?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_rows_give_back_their_rows_in_order() {
        let mut rows = EncodedRows::new(vec![DataType::int(), DataType::string()]);
        rows.push(RowKind::Insert, &[Value::Int(1), Value::string("a")]).unwrap();
        rows.push(RowKind::Delete, &[Value::Int(2), Value::Null]).unwrap();
        let back: Vec<(RowKind, Vec<Value>)> = rows.iter().collect::<Result<_>>().unwrap();
        assert_eq!(
            back,
            [
                (RowKind::Insert, vec![Value::Int(1), Value::string("a")]),
                (RowKind::Delete, vec![Value::Int(2), Value::Null])
            ]
        );
        let bytes = rows.to_bytes();
        let back = EncodedRows::from_bytes(vec![DataType::int(), DataType::string()], &bytes).unwrap();
        assert_eq!(back.iter().collect::<Result<Vec<_>>>().unwrap(), rows.iter().collect::<Result<Vec<_>>>().unwrap());
        assert!(EncodedRows::from_bytes(vec![DataType::int(), DataType::string()], &bytes[..bytes.len() - 1]).is_err());
        rows.clear();
        assert!(rows.is_empty());
    }

    #[test]
    fn rows_round_trip_and_equal_values_encode_equally() {
        let types = [
            DataType::int(),
            DataType::string(),
            DataType::decimal(10, 2),
            DataType::timestamp(3),
            DataType::double(),
            DataType::boolean(),
        ];
        let row = vec![
            Value::Int(-7),
            Value::string("héllo"),
            Value::decimal(30125, 2),
            Value::Timestamp(Timestamp { millis: 1_704_103_200_000, nanos_of_milli: 5 }),
            Value::Null,
            Value::Boolean(true),
        ];
        let mut bytes = Vec::new();
        encode(&row, &types, &mut bytes).unwrap();
        assert_eq!(decode(&bytes, &types).unwrap(), row);
        // 301.25 written at scale 1 more digit encodes as the column's scale says.
        let mut again = Vec::new();
        let rescaled = [&row[..2], &[Value::decimal(301250, 3)], &row[3..]].concat();
        encode(&rescaled, &types, &mut again).unwrap();
        assert_eq!(again, bytes);
        assert!(decode(&bytes[..bytes.len() - 1], &types).is_err());
    }
}
