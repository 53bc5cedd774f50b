//! A Python aggregate function (`udaf(...)` of a PyFlink `AggregateFunction`): weir's group
//! aggregates keep its accumulator per group as a value of its declared accumulator type (so it
//! is checkpointed as every accumulator is), and hand it to Python as PyFlink does — a `Row` or
//! list the function updates in place — for each row it accumulates or retracts.

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use weir_operators::aggregate::AggregateUdf;
use weir_operators::expr::functions::Arity;
use weir_operators::expr::ExprError;
use weir_runtime::{DataType, Value};

use crate::convert::{from_python, to_python};
use crate::general::Call;

/// A Python aggregate function as weir's aggregates call it.
#[derive(Debug)]
pub struct PythonAggregate {
    call: std::sync::Arc<Call>,
    /// The `AggregateFunction` object whose methods are called, looked up once.
    function: Py<PyAny>,
    /// The declared accumulator type: what an accumulator is kept as between calls.
    accumulator: DataType,
    /// Whether the function has `retract` (updating input needs it).
    retracts: bool,
}

impl PythonAggregate {
    /// The aggregate of `call` (whose callable is its `accumulate`), keeping accumulators as
    /// values of `accumulator`.
    pub(crate) fn new(call: std::sync::Arc<Call>, accumulator: DataType) -> Self {
        let (function, retracts) = Python::attach(|py| {
            let function = call.wrapper.bind(py).getattr("_func").unwrap_or_else(|_| py.None().into_bound(py));
            let retracts = function.hasattr("retract").unwrap_or(false);
            (function.unbind(), retracts)
        });
        PythonAggregate { call, function, accumulator, retracts }
    }

    /// Calls `method` (`accumulate` or `retract`) of the function with the accumulator and the
    /// row's arguments, and keeps the accumulator it updated.
    fn update(&self, method: &str, accumulator: &mut Value, args: &[Value]) -> Result<(), ExprError> {
        let call = &self.call;
        Python::attach(|py| -> PyResult<Value> {
            let function = self.function.bind(py);
            let held = to_python(py, accumulator)?;
            let mut objects = vec![held.clone()];
            for arg in args {
                objects.push(to_python(py, arg)?);
            }
            function.call_method1(method, PyTuple::new(py, objects)?)?;
            from_python(&held, &self.accumulator)
        })
        .map(|updated| *accumulator = updated)
        .map_err(|err| Python::attach(|py| call.failure(py, &err)))
    }
}

impl AggregateUdf for PythonAggregate {
    fn name(&self) -> &str {
        &self.call.name
    }

    fn arity(&self) -> Arity {
        self.call.arity
    }

    /// The declared result type, whatever the arguments: Python converts them itself.
    fn return_type(&self, _args: &[&DataType]) -> Result<DataType, ExprError> {
        Ok(self.call.result.clone())
    }

    /// `create_accumulator()` as a value of the accumulator type.
    fn create_accumulator(&self) -> Result<Value, ExprError> {
        let call = &self.call;
        Python::attach(|py| {
            self.function
                .bind(py)
                .call_method0("create_accumulator")
                .and_then(|acc| from_python(&acc, &self.accumulator))
                .map_err(|err| call.failure(py, &err))
        })
    }

    fn accumulate(&self, accumulator: &mut Value, args: &[Value]) -> Result<(), ExprError> {
        self.update("accumulate", accumulator, args)
    }

    fn retract(&self, accumulator: &mut Value, args: &[Value]) -> Result<(), ExprError> {
        if !self.retracts {
            return Err(ExprError(format!(
                "Python aggregate function '{}' has no method 'retract', which its updating input needs",
                self.call.name
            )));
        }
        self.update("retract", accumulator, args)
    }

    /// `get_value(accumulator)` as a value of the result type; a failure there, or a result the
    /// type cannot hold, fails the job.
    fn get_value(&self, accumulator: &Value) -> Result<Value, ExprError> {
        let call = &self.call;
        Python::attach(|py| {
            to_python(py, accumulator)
                .and_then(|acc| self.function.bind(py).call_method1("get_value", (acc,)))
                .and_then(|result| from_python(&result, &call.result))
                .map_err(|err| call.failure(py, &err))
        })
    }
}
