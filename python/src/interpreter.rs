//! The embedded interpreter, made ready for a session's functions: weir's `pyflink` module
//! registered under PyFlink's names, `python.files` and `python.executable`'s packages on
//! `sys.path`, and the function's module imported.

use std::collections::HashSet;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;

use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyModule};
use weir_operators::expr::functions::Arity;

use crate::{Environment, Error, FunctionType, Loaded, Result};

/// weir's implementation of the PyFlink API a function file uses.
const PYFLINK: &str = include_str!("pyflink.py");

/// The module names a PyFlink file imports its function API from.
const PYFLINK_MODULES: [&str; 6] = [
    "pyflink",
    "pyflink.table",
    "pyflink.table.udf",
    "pyflink.table.types",
    "pyflink.common",
    "pyflink.table.expressions",
];

/// The interpreters whose packages are on `sys.path` already.
static EXECUTABLES_ADDED: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// The embedded interpreter's version, `3.11.2`.
pub fn embedded_version() -> String {
    Python::attach(|py| {
        let v = py.version_info();
        format!("{}.{}.{}", v.major, v.minor, v.patch)
    })
}

/// weir's `pyflink` module, registered in `sys.modules` under [`PYFLINK_MODULES`] on first use.
pub(crate) fn pyflink(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let module = MODULE.get_or_try_init(py, || -> PyResult<Py<PyModule>> {
        let code = CString::new(PYFLINK).expect("the module's source has no NUL byte");
        let module = PyModule::from_code(py, &code, c"<weir>/pyflink.py", c"pyflink")?;
        let modules = py.import("sys")?.getattr("modules")?;
        for name in PYFLINK_MODULES {
            modules.set_item(name, &module)?;
        }
        Ok(module.unbind())
    })?;
    Ok(module.bind(py))
}

/// An exception as Python prints it: the traceback, then `Type: message`.
pub(crate) fn describe(py: Python<'_>, err: &PyErr) -> String {
    let formatted = py
        .import("traceback")
        .and_then(|tb| tb.call_method1("format_exception", (err.get_type(py), err.value(py), err.traceback(py))))
        .and_then(|lines| lines.extract::<Vec<String>>());
    match formatted {
        Ok(lines) => lines.concat().trim_end().to_string(),
        Err(_) => err.to_string(),
    }
}

/// Imports `module`, reads `object` and opens it as the SQL function `name`.
pub(crate) fn load(py: Python<'_>, name: &str, module: &str, object: &str, env: &Environment) -> Result<Loaded> {
    let target = format!("{module}.{object}");
    let failed = |err: PyErr| Error::Import { target: target.clone(), traceback: describe(py, &err) };
    pyflink(py).map_err(failed)?;
    add_executable_packages(py, env)?;
    add_files(py, &env.files)?.map_err(failed)?;
    let wrapper = py.import(module).and_then(|m| m.getattr(object)).map_err(failed)?;
    let wrapper_class = pyflink(py).and_then(|m| m.getattr("UserDefinedFunctionWrapper")).map_err(failed)?;
    if !wrapper.is_instance(&wrapper_class).map_err(failed)? {
        let found = wrapper.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "another object".into());
        return Err(Error::NotAFunction { target, found: format!("a {found}") });
    }
    let kind: String = wrapper.getattr("_kind").and_then(|k| k.extract()).map_err(failed)?;
    let read = || -> PyResult<_> {
        let result_type: String = wrapper.getattr("_result_type")?.call_method0("sql")?.extract()?;
        let func_type: String = wrapper.getattr("_func_type")?.extract()?;
        let deterministic: bool = wrapper.getattr("_deterministic")?.is_truthy()?;
        let (min, max): (usize, Option<usize>) = wrapper.call_method0("_arity")?.extract()?;
        Ok((result_type, func_type, deterministic, Arity { min, max }))
    };
    let (result_type, func_type, deterministic, arity) = read().map_err(failed)?;
    let function_type = match (kind.as_str(), func_type.as_str()) {
        ("scalar", "pandas") => FunctionType::Pandas,
        ("scalar", _) => FunctionType::General,
        ("table", _) => FunctionType::Table,
        ("aggregate", "general") => FunctionType::Aggregate,
        ("aggregate", _) => return Err(Error::Kind { target, kind: "pandas aggregate".into() }),
        _ => return Err(Error::Kind { target, kind }),
    };
    let accumulator_type = match function_type {
        FunctionType::Aggregate => Some(
            wrapper
                .getattr("_accumulator_type")
                .and_then(|t| t.call_method0("sql"))
                .and_then(|t| t.extract::<String>())
                .map_err(failed)?,
        ),
        FunctionType::General | FunctionType::Pandas | FunctionType::Table => None,
    };
    let parameters = PyDict::new(py);
    for (key, value) in &env.job_parameters {
        parameters.set_item(key, value).map_err(failed)?;
    }
    if func_type == "pandas" {
        // A pandas function needs both in the interpreter's packages: said at the statement,
        // not at the first batch.
        py.import("pandas").and_then(|_| py.import("pyarrow")).map_err(failed)?;
    }
    wrapper.call_method1("_open", (parameters,)).map_err(failed)?;
    let callable = wrapper.call_method0("_callable").map_err(failed)?;
    tracing::debug!(function = name, target, result_type, func_type, "python function loaded");
    Ok(Loaded {
        name: name.to_string(),
        wrapper: wrapper.unbind(),
        callable: callable.unbind(),
        result_type,
        accumulator_type,
        kind: function_type,
        deterministic,
        arity,
        arrow_batch_size: env.arrow_batch_size.max(1),
    })
}

/// Puts each of `python.files` on `sys.path` (first, in their order), as PyFlink puts them on the
/// `PYTHONPATH`: a `.py` file's directory, an archive or a directory itself.
fn add_files(py: Python<'_>, files: &[PathBuf]) -> Result<PyResult<()>> {
    let mut entries = Vec::with_capacity(files.len());
    for file in files {
        let absolute = std::path::absolute(file).unwrap_or_else(|_| file.clone());
        if !absolute.exists() {
            return Err(Error::MissingFile { path: file.display().to_string() });
        }
        let entry = match absolute.extension().and_then(|e| e.to_str()) {
            Some("py") => absolute.parent().map(Path::to_path_buf).unwrap_or(absolute),
            _ => absolute,
        };
        entries.push(entry.display().to_string());
    }
    Ok((|| {
        let sys_path = py.import("sys")?.getattr("path")?.cast_into::<PyList>()?;
        for entry in entries.iter().rev() {
            if !sys_path.contains(entry)? {
                sys_path.insert(0, entry)?;
            }
        }
        py.import("importlib")?.call_method0("invalidate_caches")?;
        Ok(())
    })())
}

/// Adds the module path of the interpreter `python.executable` names (its site-packages, a
/// virtual environment's included), once per interpreter. Its version must be the embedded
/// one's, since its compiled packages are built for it; an interpreter that is not there or of
/// another version is an error when the user named it and is passed over when it is the default.
fn add_executable_packages(py: Python<'_>, env: &Environment) -> Result<()> {
    let mut added = EXECUTABLES_ADDED.lock();
    let added = added.get_or_insert_with(HashSet::new);
    if env.executable.is_empty() || added.contains(&env.executable) {
        return Ok(());
    }
    let refuse = |reason: String| -> Result<()> {
        if env.executable_set {
            return Err(Error::Executable { executable: env.executable.clone(), reason });
        }
        tracing::debug!(executable = env.executable, reason, "default python.executable not used");
        Ok(())
    };
    let script = "import sys\nprint('%d.%d' % sys.version_info[:2])\nfor p in sys.path:\n    print(p)\n";
    let output = match Command::new(&env.executable).arg("-c").arg(script).output() {
        Ok(output) if output.status.success() => output,
        Ok(output) => return refuse(format!("it failed: {}", String::from_utf8_lossy(&output.stderr).trim())),
        Err(err) => return refuse(format!("it cannot be run: {err}")),
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let mut lines = text.lines();
    let version = lines.next().unwrap_or_default();
    let embedded = py.version_info();
    let embedded = format!("{}.{}", embedded.major, embedded.minor);
    if version != embedded {
        return refuse(format!(
            "it is Python {version}, and weir embeds Python {embedded}: its packages are built for another interpreter"
        ));
    }
    let append = || -> PyResult<()> {
        let sys_path = py.import("sys")?.getattr("path")?.cast_into::<PyList>()?;
        for entry in lines.filter(|l| !l.is_empty()) {
            if !sys_path.contains(entry)? {
                sys_path.append(entry)?;
            }
        }
        Ok(())
    };
    if let Err(err) = append() {
        return refuse(describe(py, &err));
    }
    added.insert(env.executable.clone());
    Ok(())
}
