//! A Python table function (`udtf(...)`, or a `TableFunction` class): one call per input row,
//! whose yielded rows weir joins with that row, as PyFlink's `PythonCorrelate` does.

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use weir_operators::correlate::TableRows;
use weir_operators::expr::functions::Arity;
use weir_operators::expr::ExprError;
use weir_operators::TableUdf;
use weir_runtime::{DataType, Field, LogicalType, Value};

use crate::convert::{from_python, to_python};
use crate::general::Call;

/// A Python table function as weir's correlate calls it. Its rows have the columns `f0`, `f1`,
/// … of the declared `result_types`.
#[derive(Debug)]
pub struct PythonTable(pub(crate) std::sync::Arc<Call>);

impl PythonTable {
    /// The ROW of the declared result types.
    fn row(&self) -> &[Field] {
        match &self.0.result.logical {
            LogicalType::Row(fields) => fields,
            _ => &[],
        }
    }
}

impl TableUdf for PythonTable {
    fn name(&self) -> &str {
        &self.0.name
    }

    fn arity(&self) -> Arity {
        self.0.arity
    }

    /// The declared `result_types`, whatever the arguments: Python converts them itself.
    fn result_fields(&self, _args: &[&DataType]) -> Result<Vec<Field>, ExprError> {
        Ok(self.row().to_vec())
    }

    fn eval(&self, args: &[Value], emit: &mut dyn FnMut(&[Value])) -> Result<(), ExprError> {
        for row in self.stream(args)? {
            emit(&row?);
        }
        Ok(())
    }

    fn is_python(&self) -> bool {
        true
    }

    /// A generator is run only as far as its rows are asked for.
    fn streams(&self) -> bool {
        true
    }

    fn stream(&self, args: &[Value]) -> Result<TableRows, ExprError> {
        let call = &self.0;
        let iterator = Python::attach(|py| -> PyResult<Py<PyAny>> {
            let objects = args.iter().map(|a| to_python(py, a)).collect::<PyResult<Vec<_>>>()?;
            let returned = call.callable.bind(py).call1(PyTuple::new(py, objects)?)?;
            let rows = crate::interpreter::pyflink(py)?.getattr("_weir_table_rows")?.call1((returned,))?;
            Ok(rows.unbind())
        })
        .map_err(|err| Python::attach(|py| call.failure(py, &err)))?;
        Ok(Box::new(Yielded { call: std::sync::Arc::clone(call), iterator: Some(iterator), ready: Vec::new() }))
    }
}

/// How many rows of a generator are taken per entry into the interpreter.
const ROWS_PER_ENTRY: usize = 64;

/// The rows a Python table function yields, taken from its iterator a few at a time.
struct Yielded {
    call: std::sync::Arc<Call>,
    /// `None` once it is exhausted or failed.
    iterator: Option<Py<PyAny>>,
    /// Rows taken and not yet asked for, last first.
    ready: Vec<Result<Vec<Value>, ExprError>>,
}

impl Iterator for Yielded {
    type Item = Result<Vec<Value>, ExprError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(row) = self.ready.pop() {
            return Some(row);
        }
        let iterator = self.iterator.take()?;
        let call = &self.call;
        let (taken, more) = Python::attach(|py| {
            let mut taken = Vec::new();
            let bound = iterator.bind(py);
            while taken.len() < ROWS_PER_ENTRY {
                let item = match bound.call_method0("__next__") {
                    Ok(item) => item,
                    Err(err) if err.is_instance_of::<pyo3::exceptions::PyStopIteration>(py) => return (taken, false),
                    Err(err) => {
                        taken.push(Err(call.failure(py, &err)));
                        return (taken, false);
                    }
                };
                let row = match from_python(&item, &call.result) {
                    Ok(Value::Row(values)) => Ok(values.to_vec()),
                    Ok(other) => {
                        Err(ExprError(format!("Python function '{}' yielded {other:?}, not a row", call.name)))
                    }
                    Err(err) => Err(call.failure(py, &err)),
                };
                let failed = row.is_err();
                taken.push(row);
                if failed {
                    return (taken, false);
                }
            }
            (taken, true)
        });
        if more {
            self.iterator = Some(iterator);
        }
        self.ready = taken;
        self.ready.reverse();
        self.ready.pop()
    }
}
