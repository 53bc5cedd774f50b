//! datagen a column at a time: each field fills its own Arrow array.
//!
//! Random integers, doubles, booleans and strings and integer sequences are written straight
//! into typed buffers; the other generators make values that become a column of the field's
//! type. The values are those [`FieldGenerator::generate`] makes, drawn in column order.

use std::sync::Arc;

use arrow_array::types::{Float64Type, Int16Type, Int32Type, Int64Type, Int8Type};
use arrow_array::{ArrayRef, ArrowPrimitiveType, BooleanArray, PrimitiveArray, StringArray};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use rand::rngs::SmallRng;
use rand::Rng;
use weir_runtime::columnar::{array_from_values, arrow_type, infer_type};
use weir_runtime::{DataType, LogicalType, Value};

use super::field::{push_random_hex, random_length, FieldGenerator, RandomKind};

impl FieldGenerator {
    /// The values of this field for rows `first..first + rows` at processing time `now`, as a
    /// column of `ty`'s Arrow type.
    pub(crate) fn generate_column(
        &self,
        rng: &mut SmallRng,
        first: u64,
        rows: usize,
        now: i64,
        ty: &DataType,
    ) -> ArrayRef {
        match self {
            FieldGenerator::Random { kind, null_rate } => {
                let mut nulls = Vec::new();
                let mut valid = |rng: &mut SmallRng| {
                    if *null_rate > 0.0 {
                        let is_null = rng.random::<f32>() < *null_rate;
                        nulls.push(!is_null);
                        !is_null
                    } else {
                        true
                    }
                };
                if let Some(array) = random_column(kind, rng, rows, &mut valid) {
                    let nulls = (!nulls.is_empty()).then(|| NullBuffer::from(nulls));
                    return match nulls {
                        None => array,
                        Some(nulls) => with_nulls(array, nulls),
                    };
                }
            }
            FieldGenerator::Sequence { start, ty: seq_ty, .. } => {
                let value = |i: usize| start.wrapping_add((first + i as u64) as i64);
                match seq_ty.logical {
                    LogicalType::TinyInt => return primitive::<Int8Type>(rows, |i| value(i) as i8),
                    LogicalType::SmallInt => return primitive::<Int16Type>(rows, |i| value(i) as i16),
                    LogicalType::Int => return primitive::<Int32Type>(rows, |i| value(i) as i32),
                    LogicalType::BigInt => return primitive::<Int64Type>(rows, value),
                    _ => {}
                }
            }
            FieldGenerator::Now(_) => {}
        }
        let values: Vec<Value> = (0..rows).map(|i| self.generate(rng, first + i as u64, now)).collect();
        let refs: Vec<&Value> = values.iter().collect();
        array_from_values(&arrow_type(ty), &refs)
            .or_else(|_| array_from_values(&infer_type(&refs), &refs))
            .unwrap_or_else(|e| panic!("datagen made a value its own column refuses: {e}"))
    }
}

fn primitive<T: ArrowPrimitiveType>(rows: usize, value: impl Fn(usize) -> T::Native) -> ArrayRef {
    Arc::new(PrimitiveArray::<T>::from_iter_values((0..rows).map(value)))
}

/// `array` with `nulls` as its validity (the values under a null are left as drawn).
fn with_nulls(array: ArrayRef, nulls: NullBuffer) -> ArrayRef {
    let data = array.to_data().into_builder().nulls(Some(nulls));
    // The null buffer has the array's length: building cannot fail.
    arrow_array::make_array(data.build().unwrap_or_else(|e| panic!("datagen nulls: {e}")))
}

/// A random column of `kind` drawn into typed buffers, `None` for the kinds made as values.
/// `valid` draws whether each row is non-null, before its value, as the row path does.
fn random_column(
    kind: &RandomKind,
    rng: &mut SmallRng,
    rows: usize,
    valid: &mut impl FnMut(&mut SmallRng) -> bool,
) -> Option<ArrayRef> {
    macro_rules! ints {
        ($t:ty, $native:ty, $min:expr, $max:expr) => {{
            let mut values = Vec::with_capacity(rows);
            for _ in 0..rows {
                values.push(if valid(rng) { rng.random_range($min..=$max) as $native } else { 0 });
            }
            Some(Arc::new(PrimitiveArray::<$t>::from(values)) as ArrayRef)
        }};
    }
    match kind {
        RandomKind::Integer { min, max, ty } => match ty.logical {
            LogicalType::TinyInt => ints!(Int8Type, i8, *min, *max),
            LogicalType::SmallInt => ints!(Int16Type, i16, *min, *max),
            LogicalType::Int => ints!(Int32Type, i32, *min, *max),
            LogicalType::BigInt => ints!(Int64Type, i64, *min, *max),
            _ => None,
        },
        RandomKind::Double { min, max } => {
            let mut values = Vec::with_capacity(rows);
            for _ in 0..rows {
                values.push(if valid(rng) { rng.random_range(*min..=*max) } else { 0.0 });
            }
            Some(Arc::new(PrimitiveArray::<Float64Type>::from(values)))
        }
        RandomKind::Boolean => {
            let mut values = Vec::with_capacity(rows);
            for _ in 0..rows {
                values.push(valid(rng) && rng.random::<bool>());
            }
            Some(Arc::new(BooleanArray::from(values)))
        }
        RandomKind::String { length, var_len } => {
            let mut bytes: Vec<u8> = Vec::with_capacity(rows * *length as usize);
            let mut lengths = Vec::with_capacity(rows);
            for _ in 0..rows {
                if !valid(rng) {
                    lengths.push(0);
                    continue;
                }
                let len = random_length(rng, *length, *var_len);
                push_random_hex(rng, len, &mut bytes);
                lengths.push(len);
            }
            let offsets = OffsetBuffer::from_lengths(lengths);
            // Hex digits are ASCII, so every offset is a character boundary.
            Some(Arc::new(StringArray::new(offsets, bytes.into(), None)))
        }
        _ => None,
    }
}
