//! `CREATE FUNCTION name AS 'module.object' LANGUAGE PYTHON`: a function of a PyFlink file, run in
//! the interpreter weir embeds (`weir_python`), and the `python.*` settings that say where the
//! file and its packages are. Without the `python` feature the statement is refused, saying how
//! to build weir with it.

use weir_runtime::settings::Setting;

use super::Session;
#[cfg(feature = "python")]
use weir_planner::catalog::UserFunction;
use weir_planner::error::{Error, Position, Result};

/// `python.files`: the files, archives and directories Python functions import from.
pub static FILES: Setting<String> = Setting::text(
    "python.files",
    "",
    "files (.py, .zip, .egg, .whl) and directories, comma-separated, put on the Python path of the functions",
)
.shown_as("none");
/// `python.executable`: the interpreter whose installed packages Python functions import.
pub static EXECUTABLE: Setting<String> = Setting::text(
    "python.executable",
    "python",
    "the Python interpreter whose packages (its site-packages, a virtual environment's) functions import; \
     it must be of the Python version weir embeds",
);
/// `python.fn-execution.arrow.batch.size`: rows per call of a pandas function.
pub static ARROW_BATCH_SIZE: Setting<i64> = Setting::int(
    "python.fn-execution.arrow.batch.size",
    1000,
    "1000",
    |n| n > 0,
    "a positive integer",
    "the most rows one call of a pandas function gets",
);

impl Session {
    /// Registers `name` as the Python object `target` (`module.object`).
    pub(super) fn create_python_function(
        &mut self,
        name: &str,
        target: &str,
        if_not_exists: bool,
        position: Position,
    ) -> Result<()> {
        if if_not_exists && self.catalog.functions().contains(name) {
            return Ok(());
        }
        if !self.add_python_function(name, target, position)? {
            return Err(Error::validation(
                position,
                format!("Could not execute CREATE FUNCTION: function '{name}' already exists"),
            ));
        }
        Ok(())
    }

    /// Loads `target` and adds it as the function `name`; `false` when the name is taken.
    #[cfg(feature = "python")]
    fn add_python_function(&mut self, name: &str, target: &str, position: Position) -> Result<bool> {
        let files = self.settings.get(&FILES);
        let parameters = self.settings.text("pipeline.global-job-parameters").unwrap_or_default();
        let environment = weir_python::Environment {
            files: files.split(',').map(str::trim).filter(|f| !f.is_empty()).map(Into::into).collect(),
            executable: self.settings.get(&EXECUTABLE),
            executable_set: self.settings.is_set(EXECUTABLE.spec.key),
            arrow_batch_size: usize::try_from(self.settings.get(&ARROW_BATCH_SIZE)).unwrap_or(1),
            job_parameters: parameters
                .split(',')
                .filter_map(|pair| pair.split_once(':'))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect(),
        };
        let loaded = weir_python::load(name, target, &environment).map_err(|err| match err {
            weir_python::Error::Kind { .. } => Error::NotByWeir { position, feature: err.to_string() },
            _ => Error::validation(position, err.to_string()),
        })?;
        let Some(result) = weir_planner::column_type::read_written_type(loaded.result_type()) else {
            return Err(Error::validation(
                position,
                format!(
                    "Python function '{name}' declares the result type '{}', which weir cannot read",
                    loaded.result_type()
                ),
            ));
        };
        let accumulator = match loaded.accumulator_type() {
            None => None,
            Some(text) => Some(weir_planner::column_type::read_written_type(text).ok_or_else(|| {
                Error::validation(
                    position,
                    format!("Python function '{name}' declares the accumulator type '{text}', which weir cannot read"),
                )
            })?),
        };
        let functions = self.catalog.functions_mut();
        Ok(match loaded.into_function(result, accumulator) {
            weir_python::PythonFunction::Scalar(function) => functions.add(name, UserFunction::Scalar(function)),
            weir_python::PythonFunction::Table(function) => functions.add(name, UserFunction::Table(function)),
            weir_python::PythonFunction::Aggregate(function) => functions.add(name, UserFunction::Aggregate(function)),
        })
    }

    #[cfg(not(feature = "python"))]
    fn add_python_function(&mut self, name: &str, target: &str, position: Position) -> Result<bool> {
        Err(Error::NotByWeir {
            position,
            feature: format!(
                "the Python function '{name}' ('{target}'): this weir was built without Python \
                 (build it with `--features python` on a machine with Python 3 and its headers)"
            ),
        })
    }
}
