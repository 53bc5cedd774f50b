//! Integer columns read as 64-bit values, whatever their width.

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Int16Type, Int32Type, Int64Type, Int8Type};
use arrow_array::{Array, ArrowPrimitiveType};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_schema::DataType as ArrowType;

/// The values of an integer (or DATE) column widened to i64, with its nulls. A column of
/// BIGINT is read without a copy.
#[derive(Debug, Clone)]
pub struct IntColumn {
    /// One value per row (meaningless under a null).
    pub values: ScalarBuffer<i64>,
    /// Which rows are valid; `None` when all are.
    pub nulls: Option<NullBuffer>,
}

impl IntColumn {
    /// The column's values widened to i64; `None` for arrays of other types. An all-NULL
    /// array of Arrow's Null type reads as a column of NULLs.
    pub fn of(array: &dyn Array) -> Option<IntColumn> {
        fn widen<T: ArrowPrimitiveType>(a: &dyn Array) -> IntColumn
        where
            T::Native: Into<i64>,
        {
            let a = a.as_primitive::<T>();
            IntColumn { values: a.values().iter().map(|&v| v.into()).collect(), nulls: a.nulls().cloned() }
        }
        Some(match array.data_type() {
            ArrowType::Int64 => {
                let a = array.as_primitive::<Int64Type>();
                IntColumn { values: a.values().clone(), nulls: a.nulls().cloned() }
            }
            ArrowType::Int32 => widen::<Int32Type>(array),
            ArrowType::Int16 => widen::<Int16Type>(array),
            ArrowType::Int8 => widen::<Int8Type>(array),
            ArrowType::Date32 => widen::<Date32Type>(array),
            ArrowType::Null => {
                IntColumn { values: vec![0; array.len()].into(), nulls: Some(NullBuffer::new_null(array.len())) }
            }
            _ => return None,
        })
    }

    /// The value of row `i`, `None` when it is NULL.
    #[inline]
    pub fn get(&self, i: usize) -> Option<i64> {
        self.nulls.as_ref().is_none_or(|n| n.is_valid(i)).then(|| self.values[i])
    }
}

/// `v` wrapped into a signed integer of `bits` bits (8, 16, 32 or 64), as Flink's integer
/// arithmetic wraps.
#[inline]
pub fn wrap_to_bits(v: i64, bits: u8) -> i64 {
    match bits {
        8 => i64::from(v as i8),
        16 => i64::from(v as i16),
        32 => i64::from(v as i32),
        _ => v,
    }
}
