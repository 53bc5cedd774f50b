//! A general Python function (`func_type="general"`): one call per row, arguments converted as
//! PyFlink converts them ([`crate::convert`]).

use std::fmt;

use arrow_array::ArrayRef;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use weir_operators::expr::functions::{Arity, Nulls, ScalarFunction};
use weir_operators::expr::ExprError;
use weir_runtime::columnar::{array_from_values, arrow_type, value_at};
use weir_runtime::{DataType, Value};

use crate::convert::{from_python, to_python};
use crate::interpreter::describe;

/// What calling a loaded Python function needs, shared by the general and the pandas kind.
pub struct Call {
    /// The SQL name.
    pub(crate) name: String,
    /// The wrapper `udf(...)` made (closed when the function is dropped).
    pub(crate) wrapper: Py<PyAny>,
    /// What is called: `eval` of a `ScalarFunction`, else the function.
    pub(crate) callable: Py<PyAny>,
    /// The declared result type.
    pub(crate) result: DataType,
    pub(crate) deterministic: bool,
    pub(crate) arity: Arity,
}

impl Call {
    /// The error a Python exception fails the job with: the function's name and the traceback,
    /// as Flink reports a failing Python function.
    pub(crate) fn failure(&self, py: Python<'_>, err: &PyErr) -> ExprError {
        ExprError(format!("Python function '{}' failed: {}", self.name, describe(py, err)))
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        let name = &self.name;
        Python::attach(|py| {
            if let Err(err) = self.wrapper.bind(py).call_method0("_close") {
                tracing::warn!(function = name, error = %describe(py, &err), "closing a Python function failed");
            }
        });
    }
}

impl fmt::Debug for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PythonFunction({} -> {})", self.name, self.result)
    }
}

/// A general Python scalar function as weir's expressions call it.
#[derive(Debug)]
pub struct PythonScalar(pub(crate) std::sync::Arc<Call>);

impl ScalarFunction for PythonScalar {
    fn name(&self) -> &str {
        &self.0.name
    }

    fn arity(&self) -> Arity {
        self.0.arity
    }

    /// The declared `result_type`, whatever the arguments: Python converts them itself.
    fn return_type(&self, _args: &[&DataType]) -> Result<DataType, ExprError> {
        Ok(self.0.result.clone())
    }

    /// A PyFlink function sees `None` for NULL and decides itself.
    fn nulls(&self) -> Nulls {
        Nulls::Own
    }

    fn is_python(&self) -> bool {
        true
    }

    fn is_deterministic(&self) -> bool {
        self.0.deterministic
    }

    fn eval(&self, args: &[Value], ty: &DataType) -> Result<Value, ExprError> {
        let call = &self.0;
        Python::attach(|py| call_row(py, call, args, ty).map_err(|err| call.failure(py, &err)))
    }

    fn has_kernel(&self, _args: &[&DataType]) -> bool {
        true
    }

    /// Every row of a chunk under one hold of the interpreter. On an exception it answers
    /// `None`, and the row path calls the function again row by row and reports the error with
    /// its row.
    fn eval_columns(&self, args: &[ArrayRef], ty: &DataType) -> Option<ArrayRef> {
        let rows = args.first().map_or(1, |a| a.len());
        let call = &self.0;
        let values = Python::attach(|py| {
            let mut row = vec![Value::Null; args.len()];
            let mut values = Vec::with_capacity(rows);
            for i in 0..rows {
                for (slot, column) in row.iter_mut().zip(args) {
                    *slot = value_at(column.as_ref(), i);
                }
                values.push(call_row(py, call, &row, ty).ok()?);
            }
            Some(values)
        })?;
        array_from_values(&arrow_type(ty), &values.iter().collect::<Vec<_>>()).ok()
    }
}

/// One call of the function on one row's values.
fn call_row(py: Python<'_>, call: &Call, args: &[Value], ty: &DataType) -> PyResult<Value> {
    let objects = args.iter().map(|a| to_python(py, a)).collect::<PyResult<Vec<_>>>()?;
    let returned = call.callable.bind(py).call1(PyTuple::new(py, objects)?)?;
    from_python(&returned, ty)
}
