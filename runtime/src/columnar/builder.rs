//! Columns built a cell at a time, as decoders read records: text goes straight into a string
//! column's bytes, numbers into typed buffers, and nothing becomes a [`Value`] on the way unless
//! its type has no buffer here (those columns collect values and are built by
//! [`array_from_values`] when finished).
//!
//! A record can be taken back ([`ColumnsBuilder::truncate`]) when it turns out to be malformed
//! half way, so that a decoder never leaves part of a record in the columns.

use std::sync::Arc;

use arrow_array::types::{
    Date32Type, Decimal128Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, TimestampMicrosecondType,
};
use arrow_array::{ArrayRef, ArrowPrimitiveType, BooleanArray, PrimitiveArray, StringArray};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType as ArrowType, TimeUnit};

use super::cells::Cell;
use super::to_arrow::{date_of, float64_of, int_of, misfit, rescaled, timestamp_micros_of};
use super::{array_from_values, ConversionError};
use crate::value::Value;

/// The buffer of one column.
#[derive(Debug)]
enum Slot {
    Boolean(Vec<bool>),
    Int8(Vec<i8>),
    Int16(Vec<i16>),
    Int32(Vec<i32>),
    Int64(Vec<i64>),
    Float64(Vec<f64>),
    Utf8 { offsets: Vec<i32>, bytes: Vec<u8> },
    Decimal { values: Vec<i128>, scale: i8 },
    Date32(Vec<i32>),
    Timestamp { micros: Vec<i64>, ltz: bool },
    Values(Vec<Value>),
}

/// Builds one column of a fixed Arrow type.
#[derive(Debug)]
pub struct ColumnBuilder {
    ty: ArrowType,
    slot: Slot,
    valid: Vec<bool>,
    nulls: usize,
}

impl ColumnBuilder {
    /// An empty column of type `ty`.
    pub fn new(ty: &ArrowType) -> Self {
        let slot = match ty {
            ArrowType::Boolean => Slot::Boolean(Vec::new()),
            ArrowType::Int8 => Slot::Int8(Vec::new()),
            ArrowType::Int16 => Slot::Int16(Vec::new()),
            ArrowType::Int32 => Slot::Int32(Vec::new()),
            ArrowType::Int64 => Slot::Int64(Vec::new()),
            ArrowType::Float64 => Slot::Float64(Vec::new()),
            ArrowType::Utf8 => Slot::Utf8 { offsets: vec![0], bytes: Vec::new() },
            ArrowType::Decimal128(_, scale) => Slot::Decimal { values: Vec::new(), scale: *scale },
            ArrowType::Date32 => Slot::Date32(Vec::new()),
            ArrowType::Timestamp(TimeUnit::Microsecond, zone) => {
                Slot::Timestamp { micros: Vec::new(), ltz: zone.is_some() }
            }
            _ => Slot::Values(Vec::new()),
        };
        ColumnBuilder { ty: ty.clone(), slot, valid: Vec::new(), nulls: 0 }
    }

    /// The number of cells pushed.
    pub fn len(&self) -> usize {
        self.valid.len()
    }

    /// Whether no cell was pushed.
    pub fn is_empty(&self) -> bool {
        self.valid.is_empty()
    }

    /// Appends `cell`.
    ///
    /// # Errors
    /// A cell the column's type cannot hold exactly (text in an INT column, 300 in a TINYINT
    /// one); the column is unchanged.
    #[inline]
    pub fn push(&mut self, cell: Cell<'_>) -> Result<(), ConversionError> {
        if cell == Cell::Null {
            self.push_null();
            return Ok(());
        }
        match (&mut self.slot, cell) {
            (Slot::Utf8 { offsets, bytes }, Cell::Str(s)) => {
                if !push_text(offsets, bytes, s) {
                    return Err(misfit(&Value::string(s), &self.ty));
                }
            }
            // The common pairs without a detour through a value.
            (Slot::Int64(v), Cell::Int(i)) => v.push(i),
            (Slot::Int32(v), Cell::Int(i)) if i32::try_from(i).is_ok() => v.push(i as i32),
            (Slot::Float64(v), Cell::Double(d)) => v.push(d),
            (Slot::Boolean(v), Cell::Boolean(b)) => v.push(b),
            (Slot::Date32(v), Cell::Date(d)) => v.push(d),
            (Slot::Decimal { values, scale }, Cell::Decimal(d)) if i16::from(d.scale) == i16::from(*scale) => {
                values.push(d.unscaled)
            }
            (slot, cell) => {
                let value = cell.into_value();
                let bad = || misfit(&value, &self.ty);
                match slot {
                    Slot::Boolean(v) => v.push(value.as_bool().ok_or_else(bad)?),
                    Slot::Int8(v) => v.push(int_of(&value).ok_or_else(bad)?),
                    Slot::Int16(v) => v.push(int_of(&value).ok_or_else(bad)?),
                    Slot::Int32(v) => v.push(int_of(&value).ok_or_else(bad)?),
                    Slot::Int64(v) => v.push(int_of(&value).ok_or_else(bad)?),
                    Slot::Float64(v) => v.push(float64_of(&value).ok_or_else(bad)?),
                    Slot::Utf8 { offsets, bytes } => {
                        if !push_text(offsets, bytes, value.as_str().ok_or_else(bad)?) {
                            return Err(bad());
                        }
                    }
                    Slot::Decimal { values, scale } => values.push(rescaled(&value, *scale).ok_or_else(bad)?),
                    Slot::Date32(v) => v.push(date_of(&value).ok_or_else(bad)?),
                    Slot::Timestamp { micros, ltz } => micros.push(timestamp_micros_of(&value, *ltz).ok_or_else(bad)?),
                    Slot::Values(v) => v.push(value),
                }
            }
        }
        self.valid.push(true);
        Ok(())
    }

    /// Appends a NULL.
    #[inline]
    pub fn push_null(&mut self) {
        match &mut self.slot {
            Slot::Boolean(v) => v.push(false),
            Slot::Int8(v) => v.push(0),
            Slot::Int16(v) => v.push(0),
            Slot::Int32(v) => v.push(0),
            Slot::Int64(v) => v.push(0),
            Slot::Float64(v) => v.push(0.0),
            Slot::Utf8 { offsets, bytes } => offsets.push(bytes.len() as i32),
            Slot::Decimal { values, .. } => values.push(0),
            Slot::Date32(v) => v.push(0),
            Slot::Timestamp { micros, .. } => micros.push(0),
            Slot::Values(v) => v.push(Value::Null),
        }
        self.valid.push(false);
        self.nulls += 1;
    }

    /// Keeps the first `len` cells.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len() {
            return;
        }
        match &mut self.slot {
            Slot::Boolean(v) => v.truncate(len),
            Slot::Int8(v) => v.truncate(len),
            Slot::Int16(v) => v.truncate(len),
            Slot::Int32(v) | Slot::Date32(v) => v.truncate(len),
            Slot::Int64(v) => v.truncate(len),
            Slot::Float64(v) => v.truncate(len),
            Slot::Utf8 { offsets, bytes } => {
                offsets.truncate(len + 1);
                bytes.truncate(offsets[len] as usize);
            }
            Slot::Decimal { values, .. } => values.truncate(len),
            Slot::Timestamp { micros, .. } => micros.truncate(len),
            Slot::Values(v) => v.truncate(len),
        }
        self.valid.truncate(len);
        self.nulls = self.valid.iter().filter(|v| !**v).count();
    }

    /// The column built so far; the builder starts again empty.
    ///
    /// # Errors
    /// A column that Arrow refuses (a collected value that does not fit the type).
    pub fn finish(&mut self) -> Result<ArrayRef, ConversionError> {
        // The next chunk is likely as long as this one: its buffers start with that room.
        let rows = self.valid.len();
        let valid = std::mem::replace(&mut self.valid, Vec::with_capacity(rows));
        let nulls = (self.nulls > 0).then(|| NullBuffer::from(valid));
        self.nulls = 0;
        fn take<T>(values: &mut Vec<T>) -> Vec<T> {
            let room = values.len();
            std::mem::replace(values, Vec::with_capacity(room))
        }
        fn primitive<T: ArrowPrimitiveType>(values: &mut Vec<T::Native>, nulls: Option<NullBuffer>) -> ArrayRef {
            Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(take(values)), nulls))
        }
        let refused = |ty: &ArrowType| ConversionError { value: String::new(), arrow_type: ty.to_string() };
        Ok(match &mut self.slot {
            Slot::Boolean(v) => Arc::new(BooleanArray::new(take(v).into(), nulls)),
            Slot::Int8(v) => primitive::<Int8Type>(v, nulls),
            Slot::Int16(v) => primitive::<Int16Type>(v, nulls),
            Slot::Int32(v) => primitive::<Int32Type>(v, nulls),
            Slot::Int64(v) => primitive::<Int64Type>(v, nulls),
            Slot::Float64(v) => primitive::<Float64Type>(v, nulls),
            Slot::Date32(v) => primitive::<Date32Type>(v, nulls),
            Slot::Utf8 { offsets, bytes } => {
                let mut next = Vec::with_capacity(offsets.len());
                next.push(0);
                let offsets = OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, next)));
                let array = StringArray::try_new(offsets, take(bytes).into(), nulls).map_err(|_| refused(&self.ty))?;
                Arc::new(array)
            }
            Slot::Decimal { values, .. } => {
                let ArrowType::Decimal128(precision, scale) = self.ty else { return Err(refused(&self.ty)) };
                let array = PrimitiveArray::<Decimal128Type>::new(ScalarBuffer::from(take(values)), nulls)
                    .with_precision_and_scale(precision, scale)
                    .map_err(|_| refused(&self.ty))?;
                Arc::new(array)
            }
            Slot::Timestamp { micros, .. } => {
                let ArrowType::Timestamp(_, zone) = &self.ty else { return Err(refused(&self.ty)) };
                let array = PrimitiveArray::<TimestampMicrosecondType>::new(ScalarBuffer::from(take(micros)), nulls)
                    .with_timezone_opt(zone.clone());
                Arc::new(array)
            }
            Slot::Values(v) => {
                let values = take(v);
                let refs: Vec<&Value> = values.iter().collect();
                array_from_values(&self.ty, &refs)?
            }
        })
    }
}

/// Appends `s` to a string column's buffers; `false` (nothing appended) when the column would
/// pass the 2 GiB its 32-bit offsets address.
fn push_text(offsets: &mut Vec<i32>, bytes: &mut Vec<u8>, s: &str) -> bool {
    let Ok(end) = i32::try_from(bytes.len() + s.len()) else { return false };
    bytes.extend_from_slice(s.as_bytes());
    offsets.push(end);
    true
}

/// Builds the columns of a chunk a record at a time.
#[derive(Debug)]
pub struct ColumnsBuilder {
    columns: Vec<ColumnBuilder>,
    rows: usize,
}

impl ColumnsBuilder {
    /// Empty columns of `types`.
    pub fn new(types: &[ArrowType]) -> Self {
        ColumnsBuilder { columns: types.iter().map(ColumnBuilder::new).collect(), rows: 0 }
    }

    /// Empty columns for Flink types `types`, in their Arrow types ([`arrow_type`](super::arrow_type)).
    pub fn for_types(types: &[crate::types::DataType]) -> Self {
        let arrow: Vec<ArrowType> = types.iter().map(super::arrow_type).collect();
        Self::new(&arrow)
    }

    /// The number of columns.
    pub fn arity(&self) -> usize {
        self.columns.len()
    }

    /// The number of whole records.
    #[inline]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Column `i`, to push the current record's cell into.
    ///
    /// # Panics
    /// `i` is not below [`arity`](Self::arity).
    #[inline]
    pub fn column(&mut self, i: usize) -> &mut ColumnBuilder {
        &mut self.columns[i]
    }

    /// Ends the current record: every column must have had one cell pushed for it.
    #[inline]
    pub fn end_record(&mut self) {
        debug_assert!(self.columns.iter().all(|c| c.len() == self.rows + 1), "a record must fill every column");
        self.rows += 1;
    }

    /// Takes back everything after the first `rows` records (a record given up half way).
    pub fn truncate(&mut self, rows: usize) {
        self.columns.iter_mut().for_each(|c| c.truncate(rows));
        self.rows = self.rows.min(rows);
    }

    /// The columns of the records so far; the builder starts again empty.
    ///
    /// # Errors
    /// A column Arrow refuses ([`ColumnBuilder::finish`]).
    pub fn finish(&mut self) -> Result<Vec<ArrayRef>, ConversionError> {
        self.rows = 0;
        self.columns.iter_mut().map(ColumnBuilder::finish).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::columnar::{arrow_type, value_at};
    use crate::types::{DataType, LogicalType};
    use crate::value::Timestamp;

    #[test]
    fn cells_build_the_column_array_from_values_builds() {
        let columns: Vec<(DataType, Vec<Value>)> = vec![
            (DataType::boolean(), vec![Value::Boolean(true), Value::Null, Value::Boolean(false)]),
            (DataType::new(LogicalType::TinyInt), vec![Value::TinyInt(-3), Value::Null, Value::TinyInt(127)]),
            (DataType::int(), vec![Value::Int(7), Value::Int(i32::MIN), Value::Null]),
            (DataType::bigint(), vec![Value::Null, Value::BigInt(i64::MAX), Value::BigInt(0)]),
            (DataType::double(), vec![Value::Double(0.5), Value::Null, Value::Double(-1e300)]),
            (DataType::string(), vec![Value::string("é"), Value::Null, Value::string("")]),
            (DataType::decimal(5, 2), vec![Value::decimal(-105, 2), Value::decimal(3, 1), Value::Null]),
            (DataType::new(LogicalType::Date), vec![Value::Date(-719_528), Value::Null, Value::Date(0)]),
            (DataType::timestamp(3), vec![Value::Timestamp(Timestamp::from_millis(-1)), Value::Null, Value::Null]),
            (
                DataType::new(LogicalType::TimestampLtz(6)),
                vec![Value::Null, Value::TimestampLtz(Timestamp::from_millis(5)), Value::Null],
            ),
            (DataType::new(LogicalType::Float), vec![Value::Float(0.5), Value::Null, Value::Float(1.0)]),
            (
                DataType::timestamp(9),
                vec![Value::Timestamp(Timestamp { millis: 1, nanos_of_milli: 7 }), Value::Null, Value::Null],
            ),
        ];
        for (ty, values) in columns {
            let mut builder = ColumnBuilder::new(&arrow_type(&ty));
            for v in &values {
                let cell = match v {
                    Value::String(s) => Cell::Str(s),
                    Value::Null => Cell::Null,
                    other => Cell::Other(other.clone()),
                };
                builder.push(cell).unwrap();
            }
            builder.push(Cell::Null).unwrap();
            builder.truncate(values.len());
            let array = builder.finish().unwrap();
            // Typed cells take the direct paths: the same column.
            let mut typed = ColumnBuilder::new(&arrow_type(&ty));
            for v in &values {
                typed.push(Cell::from_value(v.clone())).unwrap();
            }
            assert_eq!(typed.finish().unwrap().to_data(), array.to_data(), "{ty} from typed cells");
            assert_eq!(array.data_type(), &arrow_type(&ty), "{ty}");
            let back: Vec<Value> = (0..array.len()).map(|i| value_at(array.as_ref(), i)).collect();
            let expected: Vec<Value> = values
                .iter()
                .map(|v| if *v == Value::decimal(3, 1) { Value::decimal(30, 2) } else { v.clone() })
                .collect();
            assert_eq!(back, expected, "{ty}");
            assert!(builder.is_empty());
        }
    }

    #[test]
    fn a_cell_the_type_cannot_hold_is_refused_and_leaves_the_column_as_it_was() {
        let mut builder = ColumnBuilder::new(&ArrowType::Int8);
        builder.push(Cell::Int(5)).unwrap();
        assert!(builder.push(Cell::Int(300)).is_err());
        assert!(builder.push(Cell::Str("x")).is_err());
        assert_eq!(builder.len(), 1);
        let mut records = ColumnsBuilder::new(&[ArrowType::Utf8, ArrowType::Int32]);
        records.column(0).push(Cell::Str("kept")).unwrap();
        records.column(1).push(Cell::Int(1)).unwrap();
        records.end_record();
        records.column(0).push(Cell::Str("given up")).unwrap();
        records.truncate(records.rows());
        let arrays = records.finish().unwrap();
        assert_eq!(arrays[0].len(), 1);
        assert_eq!(value_at(arrays[0].as_ref(), 0), Value::string("kept"));
    }
}
