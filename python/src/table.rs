//! A Python table function (`udtf(...)`, or a `TableFunction` class): one call per input row,
//! whose yielded rows weir joins with that row, as PyFlink's `PythonCorrelate` does.

use pyo3::prelude::*;
use pyo3::types::PyTuple;
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
        let call = &self.0;
        let rows = Python::attach(|py| -> PyResult<Vec<Value>> {
            let objects = args.iter().map(|a| to_python(py, a)).collect::<PyResult<Vec<_>>>()?;
            let returned = call.callable.bind(py).call1(PyTuple::new(py, objects)?)?;
            let rows = crate::interpreter::pyflink(py)?.getattr("_weir_table_rows")?.call1((returned,))?;
            rows.try_iter()?.map(|row| from_python(&row?, &call.result)).collect()
        })
        .map_err(|err| Python::attach(|py| call.failure(py, &err)))?;
        for row in rows {
            match row {
                Value::Row(values) => emit(&values),
                other => {
                    return Err(ExprError(format!("Python function '{}' yielded {other:?}, not a row", call.name)))
                }
            }
        }
        Ok(())
    }
}
