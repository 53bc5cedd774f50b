//! The column kernels of [`VectorExpr`](super::VectorExpr): integer, float and DECIMAL
//! arithmetic, and comparisons (strings in byte order), each with the row path's semantics.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type};
use arrow_array::{Array, ArrayRef, BooleanArray, PrimitiveArray, StringArray};
use arrow_buffer::{BooleanBufferBuilder, NullBuffer, ScalarBuffer};
use arrow_schema::DataType as ArrowType;
use weir_runtime::columnar::IntColumn;
use weir_runtime::Value;

use super::{Arith, Datum};
use crate::expr::function::Cmp;
use crate::expr::ExprError;

/// An integer operand widened to 64 bits: a column, or a constant.
enum Ints {
    Column(IntColumn),
    Constant(Option<i64>),
}

fn ints(d: &Datum) -> Ints {
    match d {
        Datum::Scalar(v, _) => Ints::Constant(v.as_i64()),
        // An all-NULL column of another type reads as NULL.
        Datum::Array(a) => IntColumn::of(a.as_ref()).map_or(Ints::Constant(None), Ints::Column),
    }
}

/// A DECIMAL operand's unscaled values (an integer's are the integers): a column, or a constant.
enum Unscaled<'a> {
    Decimals(&'a PrimitiveArray<Decimal128Type>),
    Integers(IntColumn),
    Constant(Option<i128>),
}

impl Unscaled<'_> {
    fn of(d: &Datum) -> Option<Unscaled<'_>> {
        Some(match d {
            Datum::Scalar(v, _) if v.is_null() => Unscaled::Constant(None),
            Datum::Scalar(v, _) => {
                Unscaled::Constant(Some(v.as_decimal().map(|d| d.unscaled).or(v.as_i64().map(i128::from))?))
            }
            Datum::Array(a) => match a.data_type() {
                ArrowType::Decimal128(..) => Unscaled::Decimals(a.as_primitive::<Decimal128Type>()),
                _ => Unscaled::Integers(IntColumn::of(a.as_ref())?),
            },
        })
    }

    #[inline]
    fn get(&self, i: usize) -> Option<i128> {
        match self {
            Unscaled::Decimals(a) => a.is_valid(i).then(|| a.value(i)),
            Unscaled::Integers(c) => c.nulls.as_ref().is_none_or(|n| n.is_valid(i)).then(|| i128::from(c.values[i])),
            Unscaled::Constant(c) => *c,
        }
    }
}

/// `a × b` as DECIMAL(`precision`, `scale`) where the operands' scales add up to `scale`: NULL
/// where an operand is or where the product does not fit, as the row path gives. `None` for
/// operands of other types (the caller takes the row path).
pub(super) fn decimal_times(precision: u8, scale: u8, a: &Datum, b: &Datum, rows: usize) -> Option<ArrayRef> {
    let (x, y) = (Unscaled::of(a)?, Unscaled::of(b)?);
    let limit = 10u128.pow(u32::from(precision));
    let mut values = Vec::with_capacity(rows);
    let mut valid = BooleanBufferBuilder::new(rows);
    for i in 0..rows {
        let product = x.get(i).zip(y.get(i)).and_then(|(a, b)| a.checked_mul(b)).filter(|p| p.unsigned_abs() < limit);
        values.push(product.unwrap_or(0));
        valid.append(product.is_some());
    }
    let array = PrimitiveArray::<Decimal128Type>::new(values.into(), Some(NullBuffer::new(valid.finish())));
    Some(Arc::new(array.with_precision_and_scale(precision, scale as i8).ok()?))
}

/// `a op b` for DECIMAL (or integer) operands whose unscaled values are at `scales`: both
/// moved to the larger scale (saturating, as the row path moves them), NULL where either is.
pub(super) fn decimal_compare(op: Cmp, scales: (u8, u8), a: &Datum, b: &Datum, rows: usize) -> Option<BooleanArray> {
    let (x, y) = (Unscaled::of(a)?, Unscaled::of(b)?);
    let common = scales.0.max(scales.1);
    let (fx, fy) = (10i128.pow(u32::from(common - scales.0)), 10i128.pow(u32::from(common - scales.1)));
    let mut values = BooleanBufferBuilder::new(rows);
    let mut valid = BooleanBufferBuilder::new(rows);
    for i in 0..rows {
        let result = x.get(i).zip(y.get(i)).map(|(p, q)| op.holds(p.saturating_mul(fx).cmp(&q.saturating_mul(fy))));
        values.append(result.unwrap_or(false));
        valid.append(result.is_some());
    }
    Some(BooleanArray::new(values.finish(), Some(NullBuffer::new(valid.finish()))))
}

pub(super) fn arithmetic(op: Arith, bits: u8, a: &Datum, b: &Datum, rows: usize) -> Result<ArrayRef, ExprError> {
    let (x, y) = (ints(a), ints(b));
    let f = |x: i64, y: i64| match op {
        Arith::Plus => x.wrapping_add(y),
        Arith::Minus => x.wrapping_sub(y),
        Arith::Times => x.wrapping_mul(y),
        Arith::Divide => x.checked_div(y).unwrap_or_else(|| if y == 0 { 0 } else { x.wrapping_div(y) }),
        Arith::Modulo => x.checked_rem(y).unwrap_or(0),
    };
    let (values, nulls): (Vec<i64>, Option<NullBuffer>) = match (&x, &y) {
        (Ints::Constant(None), _) | (_, Ints::Constant(None)) => (vec![0; rows], Some(NullBuffer::new_null(rows))),
        (Ints::Column(x), Ints::Constant(Some(c))) => (x.values.iter().map(|&v| f(v, *c)).collect(), x.nulls.clone()),
        (Ints::Constant(Some(c)), Ints::Column(y)) => (y.values.iter().map(|&v| f(*c, v)).collect(), y.nulls.clone()),
        (Ints::Column(x), Ints::Column(y)) => (
            x.values.iter().zip(y.values.iter()).map(|(&a, &b)| f(a, b)).collect(),
            NullBuffer::union(x.nulls.as_ref(), y.nulls.as_ref()),
        ),
        (Ints::Constant(Some(a)), Ints::Constant(Some(b))) => (vec![f(*a, *b); rows], None),
    };
    if matches!(op, Arith::Divide | Arith::Modulo) {
        let zero_divisor = match &y {
            Ints::Constant(c) => *c == Some(0) && nulls.as_ref().is_none_or(|n| n.null_count() < rows),
            Ints::Column(y) => {
                y.values.iter().enumerate().any(|(i, &d)| d == 0 && nulls.as_ref().is_none_or(|n| n.is_valid(i)))
            }
        };
        if zero_divisor {
            return Err(ExprError("/ by zero".into()));
        }
    }
    Ok(match bits {
        8 => Arc::new(PrimitiveArray::<Int8Type>::new(values.iter().map(|&v| v as i8).collect(), nulls)),
        16 => Arc::new(PrimitiveArray::<Int16Type>::new(values.iter().map(|&v| v as i16).collect(), nulls)),
        32 => Arc::new(PrimitiveArray::<Int32Type>::new(values.iter().map(|&v| v as i32).collect(), nulls)),
        _ => Arc::new(PrimitiveArray::<Int64Type>::new(values.into(), nulls)),
    })
}

/// A comparison: strings in byte order (as Flink compares them), integers widened, floats as
/// the row path compares them.
pub(super) fn compare(op: Cmp, a: &Datum, b: &Datum, rows: usize) -> Option<BooleanArray> {
    let is_text = |d: &Datum| match d {
        Datum::Array(a) => a.data_type() == &ArrowType::Utf8,
        Datum::Scalar(v, _) => v.as_str().is_some(),
    };
    if is_text(a) || is_text(b) {
        return string_compare(op, a, b, rows);
    }
    let is_float = |d: &Datum| match d {
        Datum::Array(a) => matches!(a.data_type(), ArrowType::Float32 | ArrowType::Float64),
        Datum::Scalar(v, _) => matches!(v, Value::Float(_) | Value::Double(_)),
    };
    if is_float(a) || is_float(b) {
        return Some(float_compare(op, a, b, rows));
    }
    let f = |x: i64, y: i64| op.holds(x.cmp(&y));
    Some(match (ints(a), ints(b)) {
        (Ints::Constant(None), _) | (_, Ints::Constant(None)) => BooleanArray::new_null(rows),
        (Ints::Column(x), Ints::Constant(Some(c))) => {
            BooleanArray::new(x.values.iter().map(|&v| f(v, c)).collect(), x.nulls)
        }
        (Ints::Constant(Some(c)), Ints::Column(y)) => {
            BooleanArray::new(y.values.iter().map(|&v| f(c, v)).collect(), y.nulls)
        }
        (Ints::Column(x), Ints::Column(y)) => BooleanArray::new(
            x.values.iter().zip(y.values.iter()).map(|(&a, &b)| f(a, b)).collect(),
            NullBuffer::union(x.nulls.as_ref(), y.nulls.as_ref()),
        ),
        (Ints::Constant(Some(x)), Ints::Constant(Some(y))) => BooleanArray::from(vec![f(x, y); rows]),
    })
}

/// A comparison of strings: NULL where either side is; `None` when a side is not text.
fn string_compare(op: Cmp, a: &Datum, b: &Datum, rows: usize) -> Option<BooleanArray> {
    enum Text<'a> {
        Column(&'a StringArray),
        Constant(Option<&'a str>),
    }
    fn text(d: &Datum) -> Option<Text<'_>> {
        Some(match d {
            Datum::Array(a) => Text::Column(a.as_string_opt::<i32>()?),
            Datum::Scalar(v, _) => Text::Constant(v.as_str()),
        })
    }
    let compare = |x: &str, y: &str| op.holds(x.as_bytes().cmp(y.as_bytes()));
    Some(match (text(a)?, text(b)?) {
        (Text::Constant(None), _) | (_, Text::Constant(None)) => BooleanArray::new_null(rows),
        (Text::Column(x), Text::Constant(Some(c))) => {
            BooleanArray::new((0..rows).map(|i| compare(x.value(i), c)).collect(), x.nulls().cloned())
        }
        (Text::Constant(Some(c)), Text::Column(y)) => {
            BooleanArray::new((0..rows).map(|i| compare(c, y.value(i))).collect(), y.nulls().cloned())
        }
        (Text::Column(x), Text::Column(y)) => BooleanArray::new(
            (0..rows).map(|i| compare(x.value(i), y.value(i))).collect(),
            NullBuffer::union(x.nulls(), y.nulls()),
        ),
        (Text::Constant(Some(x)), Text::Constant(Some(y))) => BooleanArray::from(vec![compare(x, y); rows]),
    })
}

/// A float operand: a column's values and nulls read as f64, or a constant.
enum Floats {
    Column(ScalarBuffer<f64>, Option<NullBuffer>),
    Constant(Option<f64>),
}

fn floats(d: &Datum) -> Floats {
    match d {
        Datum::Scalar(v, _) => Floats::Constant(v.as_f64()),
        Datum::Array(a) => match a.data_type() {
            ArrowType::Float64 => {
                let a = a.as_primitive::<Float64Type>();
                Floats::Column(a.values().clone(), a.nulls().cloned())
            }
            ArrowType::Float32 => {
                let a = a.as_primitive::<Float32Type>();
                Floats::Column(a.values().iter().map(|&v| f64::from(v)).collect(), a.nulls().cloned())
            }
            _ => match IntColumn::of(a.as_ref()) {
                Some(c) => Floats::Column(c.values.iter().map(|&v| v as f64).collect(), c.nulls),
                None => Floats::Constant(None),
            },
        },
    }
}

/// `f` over two float operands, with the nulls of both; `None` when one is the NULL constant.
fn float_zip<T>(a: &Floats, b: &Floats, rows: usize, f: impl Fn(f64, f64) -> T) -> Option<(Vec<T>, Option<NullBuffer>)>
where
    T: Clone,
{
    Some(match (a, b) {
        (Floats::Constant(None), _) | (_, Floats::Constant(None)) => return None,
        (Floats::Column(x, xn), Floats::Constant(Some(c))) => (x.iter().map(|&v| f(v, *c)).collect(), xn.clone()),
        (Floats::Constant(Some(c)), Floats::Column(y, yn)) => (y.iter().map(|&v| f(*c, v)).collect(), yn.clone()),
        (Floats::Column(x, xn), Floats::Column(y, yn)) => {
            (x.iter().zip(y.iter()).map(|(&p, &q)| f(p, q)).collect(), NullBuffer::union(xn.as_ref(), yn.as_ref()))
        }
        (Floats::Constant(Some(p)), Floats::Constant(Some(q))) => (vec![f(*p, *q); rows], None),
    })
}

pub(super) fn float_arithmetic(op: Arith, single: bool, a: &Datum, b: &Datum, rows: usize) -> ArrayRef {
    let f = |x: f64, y: f64| match op {
        Arith::Plus => x + y,
        Arith::Minus => x - y,
        Arith::Times => x * y,
        Arith::Divide => x / y,
        Arith::Modulo => x % y,
    };
    let (values, nulls) =
        float_zip(&floats(a), &floats(b), rows, f).unwrap_or((vec![0.0; rows], Some(NullBuffer::new_null(rows))));
    if single {
        Arc::new(PrimitiveArray::<Float32Type>::new(values.iter().map(|&v| v as f32).collect(), nulls))
    } else {
        Arc::new(PrimitiveArray::<Float64Type>::new(values.into(), nulls))
    }
}

/// A float comparison as Flink's generated code makes it: a NaN on either side makes every
/// comparison false but `<>`, never NULL.
fn float_compare(op: Cmp, a: &Datum, b: &Datum, rows: usize) -> BooleanArray {
    let f = |x: f64, y: f64| op.holds_partial(x.partial_cmp(&y));
    match float_zip(&floats(a), &floats(b), rows, f) {
        None => BooleanArray::new_null(rows),
        Some((results, nulls)) => BooleanArray::new(results.into_iter().collect(), nulls),
    }
}
