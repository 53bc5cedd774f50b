//! Aggregate functions written in Rust: an [`AggregateUdf`] registered with the library API is
//! called by name in SQL like a built-in aggregate, in GROUP BY, window and OVER aggregates.
//!
//! Its accumulator is a [`Value`] (a ROW of several values, say), so that a checkpoint keeps it
//! as it keeps any value. It runs in one phase: weir does not split it into local and global
//! aggregates, and a HOP or CUMULATE window, whose slices merge, refuses it as Flink refuses a
//! function without `merge`.

use std::fmt;
use std::sync::Arc;

use weir_runtime::{DataType, Value};

use crate::expr::functions::Arity;
use crate::expr::ExprError;

/// An aggregate function written in Rust.
///
/// weir calls [`accumulate`](Self::accumulate) for each row of a group (NULL arguments
/// included: the function decides), [`retract`](Self::retract) for each row an update or delete
/// takes back, and [`get_value`](Self::get_value) for the group's result after each change.
pub trait AggregateUdf: fmt::Debug + Send + Sync {
    /// The SQL name, as EXPLAIN and error messages print it.
    fn name(&self) -> &str;

    /// How many arguments it takes.
    fn arity(&self) -> Arity;

    /// The result type for arguments of `args`.
    ///
    /// # Errors
    /// Argument types the function does not take, in Flink's words
    /// ([`wrong_types`](crate::expr::functions::wrong_types)).
    fn return_type(&self, args: &[&DataType]) -> Result<DataType, ExprError>;

    /// The accumulator of a group without rows.
    ///
    /// # Errors
    /// A failure that fails the job, in the function's words.
    fn create_accumulator(&self) -> Result<Value, ExprError>;

    /// Adds one row's arguments to `accumulator`.
    ///
    /// # Errors
    /// A failure that fails the job, in the function's words.
    fn accumulate(&self, accumulator: &mut Value, args: &[Value]) -> Result<(), ExprError>;

    /// Takes one row's arguments back out of `accumulator` (input that updates or deletes rows).
    ///
    /// # Errors
    /// By default: the function does not retract, as Flink refuses a function without `retract`
    /// over updating input.
    fn retract(&self, _accumulator: &mut Value, _args: &[Value]) -> Result<(), ExprError> {
        Err(ExprError(format!(
            "Function '{}' does not implement a method named 'retract', which its updating input needs",
            self.name()
        )))
    }

    /// The group's result for `accumulator`.
    ///
    /// # Errors
    /// A failure that fails the job (no result is emitted), in the function's words.
    fn get_value(&self, accumulator: &Value) -> Result<Value, ExprError>;
}

/// A registered aggregate function, as an [`AggregateKind::User`](super::AggregateKind::User)
/// call holds it. Two are the same when they are the same registration.
#[derive(Clone)]
pub struct UserAggregate {
    /// The function.
    pub function: Arc<dyn AggregateUdf>,
    /// Whether the call's arguments arrive packed in one ROW (any count but one).
    pub packed: bool,
}

impl UserAggregate {
    /// The row's arguments as the function takes them: the one argument, or the ROW's fields.
    pub(crate) fn arguments<'v>(&self, x: &'v Value) -> &'v [Value] {
        match (self.packed, x) {
            (true, Value::Row(fields)) => fields,
            (true, _) => &[],
            (false, x) => std::slice::from_ref(x),
        }
    }
}

impl PartialEq for UserAggregate {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.function, &other.function) && self.packed == other.packed
    }
}

impl Eq for UserAggregate {}

impl fmt::Debug for UserAggregate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UserAggregate({})", self.function.name())
    }
}
