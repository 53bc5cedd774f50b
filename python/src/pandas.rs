//! A pandas Python function (`func_type="pandas"`): one call per batch of rows (at most
//! `python.fn-execution.arrow.batch.size`), each argument a `pandas.Series` made from the Arrow
//! column weir holds, the result a Series of the same length turned back into an Arrow column.

use std::sync::Arc;

use arrow_array::{make_array, ArrayRef};
use arrow_pyarrow::{FromPyArrow, ToPyArrow};
use pyo3::prelude::*;
use pyo3::types::PyList;
use weir_operators::expr::functions::{Arity, Nulls, ScalarFunction};
use weir_operators::expr::ExprError;
use weir_runtime::columnar::{array_from_values, arrow_type, conform, value_at};
use weir_runtime::{DataType, Value};

use crate::general::Call;

/// A pandas Python scalar function as weir's expressions call it: the column kernel does the
/// work; a single row goes through it as a batch of one.
#[derive(Debug)]
pub struct PandasScalar {
    call: Arc<Call>,
    batch_size: usize,
    /// The error of the last batch call that failed, until the row path reports it: a pandas
    /// function sees whole batches, so a batch that failed is never run again row by row (a
    /// function whose result has the wrong length would pass on batches of one).
    failed: std::sync::Mutex<Option<ExprError>>,
}

impl PandasScalar {
    pub(crate) fn new(call: Arc<Call>, batch_size: usize) -> PandasScalar {
        PandasScalar { call, batch_size, failed: std::sync::Mutex::new(None) }
    }

    /// The result column for argument columns of `rows` rows, in batches of at most the batch
    /// size (none for no rows).
    fn evaluate(&self, args: &[ArrayRef], rows: usize, ty: &DataType) -> Result<ArrayRef, ExprError> {
        let result_type = arrow_type(ty);
        let parts = (0..rows)
            .step_by(self.batch_size)
            .map(|offset| {
                let length = self.batch_size.min(rows - offset);
                let batch: Vec<ArrayRef> = args.iter().map(|a| a.slice(offset, length)).collect();
                self.call_batch(&batch, &result_type)
            })
            .collect::<Result<Vec<_>, _>>()?;
        match &parts[..] {
            [] => Ok(arrow_array::new_empty_array(&result_type)),
            [one] => Ok(Arc::clone(one)),
            _ => {
                let refs: Vec<&dyn arrow_array::Array> = parts.iter().map(|p| p.as_ref()).collect();
                arrow_select::concat::concat(&refs)
                    .map_err(|e| ExprError(format!("Python function '{}': {e}", self.call.name)))
            }
        }
    }

    /// One call of the function on `batch`.
    fn call_batch(&self, batch: &[ArrayRef], result_type: &arrow_schema::DataType) -> Result<ArrayRef, ExprError> {
        let call = &self.call;
        let returned = Python::attach(|py| {
            let result = (|| -> PyResult<ArrayRef> {
                let arrays = batch.iter().map(|a| a.to_data().to_pyarrow(py)).collect::<PyResult<Vec<_>>>()?;
                let helper = crate::interpreter::pyflink(py)?.getattr("_weir_call_pandas")?;
                let returned = helper.call1((
                    call.callable.bind(py),
                    call.name.as_str(),
                    PyList::new(py, arrays)?,
                    result_type.to_pyarrow(py)?,
                ))?;
                Ok(make_array(arrow_data::ArrayData::from_pyarrow_bound(&returned)?))
            })();
            result.map_err(|err| call.failure(py, &err))
        })?;
        conform(&returned, result_type).ok_or_else(|| {
            ExprError(format!(
                "Python function '{}' returned a {} column, not one of its declared type {}",
                call.name,
                returned.data_type(),
                call.result
            ))
        })
    }
}

impl ScalarFunction for PandasScalar {
    fn name(&self) -> &str {
        &self.call.name
    }

    fn arity(&self) -> Arity {
        self.call.arity
    }

    fn return_type(&self, _args: &[&DataType]) -> Result<DataType, ExprError> {
        Ok(self.call.result.clone())
    }

    fn nulls(&self) -> Nulls {
        Nulls::Own
    }

    fn is_python(&self) -> bool {
        true
    }

    fn is_deterministic(&self) -> bool {
        self.call.deterministic
    }

    /// One row as a batch of one (where an expression is evaluated row by row); after the
    /// kernel failed on a batch, that batch's error.
    fn eval(&self, args: &[Value], ty: &DataType) -> Result<Value, ExprError> {
        if let Some(error) = self.failed.lock().map_or(None, |mut f| f.take()) {
            return Err(error);
        }
        let columns = args
            .iter()
            .map(|v| {
                let ty = weir_runtime::columnar::infer_type(&[v]);
                array_from_values(&ty, &[v]).map_err(|e| ExprError(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let result = self.evaluate(&columns, 1, ty)?;
        Ok(value_at(result.as_ref(), 0))
    }

    fn has_kernel(&self, _args: &[&DataType]) -> bool {
        true
    }

    /// On an error the kernel answers `None` and keeps the error: the row path, which comes
    /// next, reports it (as Flink fails the job) instead of calling the function row by row.
    fn eval_columns(&self, args: &[ArrayRef], ty: &DataType) -> Option<ArrayRef> {
        let rows = args.first().map_or(1, |a| a.len());
        match self.evaluate(args, rows, ty) {
            Ok(column) => Some(column),
            Err(error) => {
                if let Ok(mut failed) = self.failed.lock() {
                    *failed = Some(error);
                }
                None
            }
        }
    }
}
