//! `CREATE FUNCTION name AS 'class'` and `DROP FUNCTION name`: functions a script registers by
//! class name. weir runs no JVM: a Java class is accepted when weir implements it natively
//! (`weir_operators::expr::functions::java_classes`), anything else is refused at the statement,
//! saying which classes weir has. `LANGUAGE PYTHON` functions are `super::python`'s.

use weir_operators::expr::functions::java_classes::{java_class, java_classes};
use weir_operators::expr::functions::ScalarRef;

use super::Session;
use weir_planner::catalog::UserFunction;
use weir_planner::error::{Error, Position, Result};

impl Session {
    /// Registers `name` as the function of `class` (in `language`).
    pub(super) fn create_function(
        &mut self,
        name: &str,
        class: &str,
        language: &str,
        if_not_exists: bool,
        position: Position,
    ) -> Result<()> {
        if language == "PYTHON" {
            return self.create_python_function(name, class, if_not_exists, position);
        }
        let Some(function) = java_class(class, name) else {
            return Err(Error::NotByWeir {
                position,
                feature: format!(
                    "the {} class '{class}' of function '{name}' (weir runs no JVM; the classes it implements are {})",
                    language.to_ascii_lowercase(),
                    java_classes().collect::<Vec<_>>().join(", ")
                ),
            });
        };
        let added = self.catalog.functions_mut().add(name, UserFunction::Scalar(function));
        if !added && !if_not_exists {
            return Err(Error::validation(
                position,
                format!("Could not execute CREATE FUNCTION: function '{name}' already exists"),
            ));
        }
        Ok(())
    }

    /// Registers a scalar function written in Rust as `name`, for this session's statements to
    /// call, as `CREATE TEMPORARY SYSTEM FUNCTION` registers one in Flink: the name compares
    /// without case and shadows a built-in of the same name. The function's
    /// [`ScalarFunction::return_type`](weir_operators::expr::functions::ScalarFunction::return_type)
    /// types each call at planning time, its `eval` runs on every row.
    ///
    /// # Errors
    /// Flink's message when a function called `name` exists already.
    pub fn register_function(&mut self, name: &str, function: ScalarRef) -> Result<()> {
        self.register(name, UserFunction::Scalar(function))
    }

    /// Registers an aggregate function written in Rust as `name`, for this session's statements
    /// to call like a built-in aggregate (GROUP BY, window and OVER aggregates), as `CREATE
    /// TEMPORARY SYSTEM FUNCTION` registers one in Flink: its
    /// [`return_type`](weir_operators::aggregate::AggregateUdf::return_type) types each call at
    /// planning time; it runs in one phase (no local/global split, refused in HOP and CUMULATE
    /// windows), and its accumulator is checkpointed as a value.
    ///
    /// # Errors
    /// Flink's message when a function called `name` exists already.
    pub fn register_aggregate_function(
        &mut self,
        name: &str,
        function: std::sync::Arc<dyn weir_operators::aggregate::AggregateUdf>,
    ) -> Result<()> {
        self.register(name, UserFunction::Aggregate(function))
    }

    /// Registers a table function written in Rust as `name`, for this session's statements to
    /// call in `LATERAL TABLE(name(args))` (after a comma, `CROSS JOIN`, `JOIN … ON TRUE` or `LEFT
    /// JOIN … ON TRUE`) or `TABLE(name(args))`, as `CREATE TEMPORARY SYSTEM FUNCTION` registers
    /// one in Flink: its [`result_fields`](weir_operators::TableUdf::result_fields) type each
    /// call at planning time, its `eval` runs on every input row.
    ///
    /// # Errors
    /// Flink's message when a function called `name` exists already.
    pub fn register_table_function(
        &mut self,
        name: &str,
        function: std::sync::Arc<dyn weir_operators::TableUdf>,
    ) -> Result<()> {
        self.register(name, UserFunction::Table(function))
    }

    /// Adds `function` as `name` for the library API, with Flink's message for a taken name.
    fn register(&mut self, name: &str, function: UserFunction) -> Result<()> {
        if self.catalog.functions_mut().add(name, function) {
            return Ok(());
        }
        Err(Error::Catalog(format!("Could not register function: function '{name}' already exists")))
    }

    /// Drops the function `name`.
    pub(super) fn drop_function(&mut self, name: &str, if_exists: bool, position: Position) -> Result<()> {
        if !self.catalog.functions_mut().remove(name) && !if_exists {
            return Err(Error::validation(
                position,
                format!("Could not execute DROP FUNCTION: function '{name}' does not exist"),
            ));
        }
        Ok(())
    }
}
