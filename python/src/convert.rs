//! SQL values to Python objects and back, as PyFlink converts them for a general function:
//! integers to `int`, FLOAT/DOUBLE to `float`, DECIMAL to `decimal.Decimal`, strings to `str`,
//! binary to `bytes`, DATE/TIME/TIMESTAMP to `datetime.date`/`time`/`datetime` (naive;
//! TIMESTAMP_LTZ as the UTC instant), DAY-TIME intervals to `timedelta`, YEAR-MONTH intervals to
//! a month count, ARRAY to `list`, MAP and MULTISET to `dict`, ROW to `Row`; NULL is `None`.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBytes, PyDate, PyDateAccess, PyDateTime, PyDelta, PyDeltaAccess, PyDict, PyList, PyTime, PyTimeAccess, PyTuple,
};
use weir_runtime::print::{civil_from_days, days_from_civil, value_to_string};
use weir_runtime::types::LogicalType;
use weir_runtime::value::{Timestamp, MILLIS_PER_DAY};
use weir_runtime::{DataType, Value};

const NANOS_PER_MILLI: i64 = 1_000_000;
const NANOS_PER_DAY: i64 = MILLIS_PER_DAY * NANOS_PER_MILLI;

/// `value` as the Python object a PyFlink function receives.
pub(crate) fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Boolean(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::TinyInt(v) => v.into_pyobject(py)?.into_any(),
        Value::SmallInt(v) => v.into_pyobject(py)?.into_any(),
        Value::Int(v) => v.into_pyobject(py)?.into_any(),
        Value::BigInt(v) => v.into_pyobject(py)?.into_any(),
        Value::Float(v) => f64::from(*v).into_pyobject(py)?.into_any(),
        Value::Double(v) => v.into_pyobject(py)?.into_any(),
        Value::Decimal { .. } => decimal_class(py)?.call1((value_to_string(value),))?,
        Value::String(s) => s.as_ref().into_pyobject(py)?.into_any(),
        Value::Binary(b) => PyBytes::new(py, b).into_any(),
        Value::Date(days) => date(py, i64::from(*days))?.into_any(),
        Value::Time(nanos) => time(py, *nanos)?.into_any(),
        Value::Timestamp(ts) | Value::TimestampLtz(ts) => datetime(py, *ts)?.into_any(),
        Value::IntervalYearMonth(months) => months.into_pyobject(py)?.into_any(),
        Value::IntervalDayTime(millis) => {
            let days = millis.div_euclid(MILLIS_PER_DAY);
            let rest = millis.rem_euclid(MILLIS_PER_DAY);
            PyDelta::new(py, narrow(days)?, narrow(rest / 1000)?, narrow(rest % 1000 * 1000)?, true)?.into_any()
        }
        Value::Array(items) => {
            PyList::new(py, items.iter().map(|v| to_python(py, v)).collect::<PyResult<Vec<_>>>()?)?.into_any()
        }
        Value::Map(entries) => {
            let dict = PyDict::new(py);
            for (k, v) in entries.iter() {
                dict.set_item(to_python(py, k)?, to_python(py, v)?)?;
            }
            dict.into_any()
        }
        Value::Row(fields) => {
            let values = fields.iter().map(|v| to_python(py, v)).collect::<PyResult<Vec<_>>>()?;
            crate::interpreter::pyflink(py)?.getattr("Row")?.call1(PyTuple::new(py, values)?)?
        }
    })
}

/// The result `object` of a function as a value of `ty`.
///
/// # Errors
/// A `TypeError` or `ValueError` naming what was returned and the declared type, when the object
/// is not of the type (a `str` for a BIGINT) or does not fit it (300 for a TINYINT).
pub(crate) fn from_python(object: &Bound<'_, PyAny>, ty: &DataType) -> PyResult<Value> {
    if object.is_none() {
        return Ok(Value::Null);
    }
    let py = object.py();
    let misfit = || {
        let shown = object.repr().map(|r| r.to_string()).unwrap_or_default();
        pyo3::exceptions::PyTypeError::new_err(format!("the result {shown} is not a value of the declared type {ty}"))
    };
    let int = |min: i64, max: i64| -> PyResult<i64> {
        let v: i64 = object.extract().map_err(|_| misfit())?;
        if v < min || v > max {
            return Err(misfit());
        }
        Ok(v)
    };
    Ok(match &ty.logical {
        LogicalType::Boolean => Value::Boolean(object.extract().map_err(|_| misfit())?),
        LogicalType::TinyInt => Value::TinyInt(int(i8::MIN.into(), i8::MAX.into())? as i8),
        LogicalType::SmallInt => Value::SmallInt(int(i16::MIN.into(), i16::MAX.into())? as i16),
        LogicalType::Int => Value::Int(int(i32::MIN.into(), i32::MAX.into())? as i32),
        LogicalType::BigInt => Value::BigInt(int(i64::MIN, i64::MAX)?),
        LogicalType::Float => Value::Float(object.extract::<f64>().map_err(|_| misfit())? as f32),
        LogicalType::Double => Value::Double(object.extract().map_err(|_| misfit())?),
        LogicalType::Decimal { precision, scale } => {
            // Rounded half up to the scale as PyFlink's coder does; NULL when it outgrows the
            // precision, as Flink's DecimalData does.
            let helper = crate::interpreter::pyflink(py)?.getattr("_weir_unscaled")?;
            let unscaled: Option<i128> = helper.call1((object, *scale, *precision))?.extract()?;
            unscaled.map_or(Value::Null, |u| Value::decimal(u, *scale))
        }
        LogicalType::Char(_) | LogicalType::Varchar(_) => {
            Value::String(Arc::from(object.extract::<String>().map_err(|_| misfit())?))
        }
        LogicalType::Binary(_) | LogicalType::Varbinary(_) => {
            Value::Binary(Arc::from(object.extract::<Vec<u8>>().map_err(|_| misfit())?))
        }
        LogicalType::Date => {
            let d = object.cast::<PyDate>().map_err(|_| misfit())?;
            Value::Date(narrow(days_from_civil(d.get_year().into(), d.get_month().into(), d.get_day().into()))?)
        }
        LogicalType::Time(_) => {
            let t = object.cast::<PyTime>().map_err(|_| misfit())?;
            Value::Time(nanos_of_day(t.get_hour(), t.get_minute(), t.get_second(), t.get_microsecond()))
        }
        LogicalType::Timestamp(_) => Value::Timestamp(timestamp(object).map_err(|_| misfit())?),
        LogicalType::TimestampLtz(_) => Value::TimestampLtz(timestamp(object).map_err(|_| misfit())?),
        LogicalType::IntervalYearMonth => Value::IntervalYearMonth(object.extract().map_err(|_| misfit())?),
        LogicalType::IntervalDayTime => {
            let d = object.cast::<PyDelta>().map_err(|_| misfit())?;
            let millis = i64::from(d.get_days()) * MILLIS_PER_DAY
                + i64::from(d.get_seconds()) * 1000
                + i64::from(d.get_microseconds()) / 1000;
            Value::IntervalDayTime(millis)
        }
        LogicalType::Array(element) => {
            let items = object.try_iter().map_err(|_| misfit())?;
            let values = items.map(|item| from_python(&item?, element)).collect::<PyResult<Vec<_>>>()?;
            Value::Array(Arc::from(values))
        }
        LogicalType::Map(key, value) => Value::Map(entries(object, key, value).map_err(|_| misfit())?),
        LogicalType::Multiset(element) => {
            Value::Map(entries(object, element, &DataType::int().not_null()).map_err(|_| misfit())?)
        }
        LogicalType::Row(fields) => {
            let items: Vec<Bound<'_, PyAny>> = object.try_iter().map_err(|_| misfit())?.collect::<PyResult<_>>()?;
            if items.len() != fields.len() {
                return Err(misfit());
            }
            let values = items.iter().zip(fields).map(|(item, f)| from_python(item, &f.data_type));
            Value::Row(Arc::from(values.collect::<PyResult<Vec<_>>>()?))
        }
    })
}

/// The entries of a dict as a MAP's.
fn entries(object: &Bound<'_, PyAny>, key: &DataType, value: &DataType) -> PyResult<Arc<[(Value, Value)]>> {
    let dict = object.cast::<PyDict>()?;
    let pairs = dict.iter().map(|(k, v)| Ok((from_python(&k, key)?, from_python(&v, value)?)));
    Ok(Arc::from(pairs.collect::<PyResult<Vec<_>>>()?))
}

/// `decimal.Decimal`, looked up once.
fn decimal_class(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static DECIMAL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    DECIMAL.import(py, "decimal", "Decimal")
}

fn date(py: Python<'_>, days: i64) -> PyResult<Bound<'_, PyDate>> {
    let (year, month, day) = civil_from_days(days);
    PyDate::new(py, narrow(year)?, month as u8, day as u8)
}

fn time(py: Python<'_>, nanos: i64) -> PyResult<Bound<'_, PyTime>> {
    let micros = nanos.rem_euclid(NANOS_PER_DAY) / 1000;
    let seconds = micros / 1_000_000;
    PyTime::new(
        py,
        (seconds / 3600) as u8,
        (seconds / 60 % 60) as u8,
        (seconds % 60) as u8,
        (micros % 1_000_000) as u32,
        None,
    )
}

fn datetime(py: Python<'_>, ts: Timestamp) -> PyResult<Bound<'_, PyDateTime>> {
    let days = ts.millis.div_euclid(MILLIS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let micros = ts.millis.rem_euclid(MILLIS_PER_DAY) * 1000 + i64::from(ts.nanos_of_milli) / 1000;
    let seconds = micros / 1_000_000;
    PyDateTime::new(
        py,
        narrow(year)?,
        month as u8,
        day as u8,
        (seconds / 3600) as u8,
        (seconds / 60 % 60) as u8,
        (seconds % 60) as u8,
        (micros % 1_000_000) as u32,
        None,
    )
}

/// A `datetime.datetime` as a timestamp: its wall-clock fields, or, when it carries a zone, the
/// UTC instant it names.
fn timestamp(object: &Bound<'_, PyAny>) -> PyResult<Timestamp> {
    let dt = object.cast::<PyDateTime>()?;
    let utc = if dt.getattr("tzinfo")?.is_none() {
        dt.clone()
    } else {
        let utc_zone = object.py().import("datetime")?.getattr("timezone")?.getattr("utc")?;
        dt.call_method1("astimezone", (utc_zone,))?.cast_into::<PyDateTime>()?
    };
    let days = days_from_civil(utc.get_year().into(), utc.get_month().into(), utc.get_day().into());
    let nanos = nanos_of_day(utc.get_hour(), utc.get_minute(), utc.get_second(), utc.get_microsecond());
    Ok(Timestamp {
        millis: days * MILLIS_PER_DAY + nanos / NANOS_PER_MILLI,
        nanos_of_milli: (nanos % NANOS_PER_MILLI) as u32,
    })
}

fn nanos_of_day(hour: u8, minute: u8, second: u8, micros: u32) -> i64 {
    ((i64::from(hour) * 60 + i64::from(minute)) * 60 + i64::from(second)) * 1_000_000_000 + i64::from(micros) * 1000
}

/// A number narrowed to the width Python's constructor takes, or Python's `OverflowError`.
fn narrow<T: TryFrom<i64>>(v: i64) -> PyResult<T> {
    T::try_from(v).map_err(|_| pyo3::exceptions::PyOverflowError::new_err(format!("{v} is out of range")))
}
