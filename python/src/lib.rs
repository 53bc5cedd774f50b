//! Python functions for weir's SQL, as PyFlink runs them: `CREATE TEMPORARY FUNCTION f AS
//! 'module.object' LANGUAGE PYTHON` names an object a PyFlink file made with `udf(...)`, and weir
//! calls it in the CPython it embeds (no JVM, no worker process).
//!
//! - **Files unchanged.** Before it imports a file, weir registers its own implementation of the
//!   part of PyFlink's API such a file uses (`pyflink.table.udf.udf`, `ScalarFunction`,
//!   `FunctionContext`, `DataTypes`, `pyflink.common.Row`: `src/pyflink.py`) under PyFlink's
//!   module names, so `from pyflink.table.udf import udf` works without PyFlink installed.
//! - **Where modules come from**: `python.files` (files, archives or directories, put on
//!   `sys.path` as PyFlink puts them on the `PYTHONPATH`), then the site-packages of the
//!   interpreter `python.executable` names (PyFlink's worker interpreter, `python` by default),
//!   whose Python version must be the embedded one's.
//! - **General functions** ([`general`]) get one row's arguments as PyFlink converts them (`int`,
//!   `float`, `decimal.Decimal`, `str`, `bytes`, `datetime.date/time/datetime`, `list`, `dict`,
//!   `Row`; NULL as `None`) and their result is converted back to the declared `result_type`.
//! - **Pandas functions** ([`pandas`], `func_type="pandas"`) get a `pandas.Series` per argument for
//!   a whole chunk of rows, handed over as Arrow arrays without copying through Python objects, and
//!   return a Series of the same length.
//!
//! - **Table functions** ([`table`], `udtf(result_types=...)` or a `TableFunction` class) get one
//!   row's arguments like general functions; each item they yield is a row (a tuple, list or
//!   `Row`, or the one value of a one-column row) of the columns `f0`, `f1`, … of `result_types`.
//!
//! - **Aggregate functions** ([`aggregate`], `udaf(...)` of an `AggregateFunction`) keep one
//!   accumulator per group, of their declared `accumulator_type`, which `accumulate` (and
//!   `retract`) update in place and `get_value` reads.
//!
//! A Python exception fails the job with its traceback, as in Flink. Pandas aggregate functions
//! (`udaf(..., func_type="pandas")`) are refused at `CREATE FUNCTION`.

pub mod aggregate;
mod convert;
pub mod general;
mod interpreter;
pub mod pandas;
pub mod table;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use weir_operators::aggregate::AggregateUdf;
use weir_operators::expr::functions::{Arity, ScalarRef};
use weir_operators::TableUdf;
use weir_runtime::DataType;

pub use interpreter::embedded_version;

/// What went wrong loading a Python function.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The object name is not `module.object`.
    #[error("Python function '{name}' must name its object as 'module.object', not '{target}'")]
    Target {
        /// The SQL name of the function.
        name: String,
        /// What `AS '…'` gave.
        target: String,
    },
    /// Importing the module or reading the object raised an exception.
    #[error("Instantiating python function '{target}' failed: {traceback}")]
    Import {
        /// `module.object`.
        target: String,
        /// The exception, as Python prints it.
        traceback: String,
    },
    /// The object is not a function made by `udf(...)`.
    #[error("Python object '{target}' is not a function made with pyflink.table.udf.udf (it is {found})")]
    NotAFunction {
        /// `module.object`.
        target: String,
        /// What it is instead.
        found: String,
    },
    /// A kind of function weir does not run (a pandas aggregate function).
    #[error("the Python {kind} function '{target}' (weir runs Python scalar, table and general aggregate functions)")]
    Kind {
        /// `module.object`.
        target: String,
        /// `aggregate`.
        kind: String,
    },
    /// A `python.files` entry that does not exist.
    #[error("python.files: '{path}' does not exist")]
    MissingFile {
        /// The entry, as given.
        path: String,
    },
    /// `python.executable` names an interpreter weir cannot use.
    #[error("python.executable '{executable}': {reason}")]
    Executable {
        /// The setting's value.
        executable: String,
        /// Why it cannot be used.
        reason: String,
    },
}

/// The result of loading a Python function.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where a session's Python functions come from: PyFlink's `python.*` settings.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    /// `python.files`: `.py` files (their directory goes on `sys.path`), archives (`.zip`, `.egg`,
    /// `.whl`, on `sys.path` themselves) and directories.
    pub files: Vec<PathBuf>,
    /// `python.executable`: the interpreter whose installed packages the functions import.
    pub executable: String,
    /// Whether `executable` was set by the user (an unusable one is then an error, not a warning).
    pub executable_set: bool,
    /// `python.fn-execution.arrow.batch.size`: the most rows one call of a pandas function gets.
    pub arrow_batch_size: usize,
    /// `pipeline.global-job-parameters`, for `FunctionContext.get_job_parameter`.
    pub job_parameters: Vec<(String, String)>,
}

/// How a loaded function is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionType {
    /// One row per call (`func_type="general"`).
    General,
    /// A batch of rows per call, as `pandas.Series` (`func_type="pandas"`).
    Pandas,
    /// One row per call, any number of rows out (`udtf`).
    Table,
    /// One accumulator per group, updated per row (`udaf` of an `AggregateFunction`).
    Aggregate,
}

/// A loaded Python function, ready for SQL to call.
#[derive(Debug)]
pub enum PythonFunction {
    /// A scalar function (general or pandas).
    Scalar(ScalarRef),
    /// A table function.
    Table(Arc<dyn TableUdf>),
    /// An aggregate function.
    Aggregate(Arc<dyn AggregateUdf>),
}

/// A Python function imported and opened, before its result type is read.
pub struct Loaded {
    /// The SQL name it was created as.
    name: String,
    /// The wrapper `udf(...)` made.
    wrapper: Py<PyAny>,
    /// What the function calls (`eval` of a `ScalarFunction`, else the function).
    callable: Py<PyAny>,
    /// Its declared result type, in Flink's SQL spelling (`DECIMAL(10, 2)`).
    result_type: String,
    /// An aggregate function's declared accumulator type, in the same spelling.
    accumulator_type: Option<String>,
    kind: FunctionType,
    deterministic: bool,
    arity: Arity,
    arrow_batch_size: usize,
}

impl fmt::Debug for Loaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loaded").field("name", &self.name).field("result_type", &self.result_type).finish()
    }
}

impl Loaded {
    /// The declared result type as SQL text, for the caller's type parser.
    pub fn result_type(&self) -> &str {
        &self.result_type
    }

    /// How the function is called.
    pub fn function_type(&self) -> FunctionType {
        self.kind
    }

    /// An aggregate function's declared accumulator type as SQL text.
    pub fn accumulator_type(&self) -> Option<&str> {
        self.accumulator_type.as_deref()
    }

    /// The function for SQL to call, returning values of `result` (the parsed
    /// [`result_type`](Self::result_type); a ROW of the columns for a table function); an
    /// aggregate function keeps its accumulators as values of `accumulator` (the parsed
    /// [`accumulator_type`](Self::accumulator_type)).
    pub fn into_function(self, result: DataType, accumulator: Option<DataType>) -> PythonFunction {
        let call = Arc::new(general::Call {
            name: self.name,
            wrapper: self.wrapper,
            callable: self.callable,
            result,
            deterministic: self.deterministic,
            arity: self.arity,
        });
        match self.kind {
            FunctionType::General => PythonFunction::Scalar(ScalarRef(Arc::new(general::PythonScalar(call)))),
            FunctionType::Pandas => {
                PythonFunction::Scalar(ScalarRef(Arc::new(pandas::PandasScalar::new(call, self.arrow_batch_size))))
            }
            FunctionType::Table => PythonFunction::Table(Arc::new(table::PythonTable(call))),
            FunctionType::Aggregate => {
                let accumulator =
                    accumulator.unwrap_or_else(|| DataType::new(weir_runtime::LogicalType::Row(Vec::new())));
                PythonFunction::Aggregate(Arc::new(aggregate::PythonAggregate::new(call, accumulator)))
            }
        }
    }
}

/// Imports `target` (`module.object`) for the SQL function `name`, opens it (`open` of a
/// `ScalarFunction` class) and reads what `udf(...)` declared.
///
/// # Errors
/// A target without a module, an import that raises (with its traceback), an object not made by
/// `udf` or `udtf`, an aggregate function, an unusable `python.executable`.
pub fn load(name: &str, target: &str, environment: &Environment) -> Result<Loaded> {
    let Some((module, object)) = target.rsplit_once('.').filter(|(m, o)| !m.is_empty() && !o.is_empty()) else {
        return Err(Error::Target { name: name.to_string(), target: target.to_string() });
    };
    Python::attach(|py| interpreter::load(py, name, module, object, environment))
}
