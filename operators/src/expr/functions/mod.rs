//! The function registry: every named scalar function (`UPPER`, `ROUND`, `DATE_FORMAT`, …) is one
//! [`ScalarFunction`] that keeps its SQL name, its type rule, its row evaluation and, where it has
//! one, its column kernel together. Adding a function means writing it in the family file it
//! belongs to (`string`, `regex`, `math`, `datetime`, `truth`, `misc`) and listing it in that file's
//! `entries`; the binder finds it by name through [`lookup`], EXPLAIN prints its name, the row
//! path calls [`ScalarFunction::eval`] and the vectorized path its kernel.
//!
//! Operators and special forms with syntax of their own (`+`, `=`, `AND`, `CASE`, `CAST`, `IN`,
//! `LIKE`, `COALESCE`, `IF`, `NULLIF`) are not here: they are variants of
//! [`Function`](super::Function), because the planner rewrites and prints them by what they are.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock};

use arrow_array::ArrayRef;
use weir_runtime::{DataType, Value};

use super::types::{calcite_family, calcite_name};
use super::{Expr, ExprError};

mod arrays;
pub mod calendar;
pub mod choice;
pub mod collection;
pub mod datetime;
mod hashing;
pub mod java_classes;
pub mod json;
pub mod math;
mod misc;
pub mod regex;
pub mod string;
mod string_ops;
mod trig;
pub mod truth;
pub mod zoned;

/// How a function treats NULL arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nulls {
    /// Any NULL argument gives NULL; [`ScalarFunction::eval`] only sees non-NULL arguments.
    Strict,
    /// The function looks at NULL arguments itself (`CONCAT_WS` skips them).
    Own,
}

/// How many arguments a function takes: `min..=max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arity {
    /// The fewest arguments.
    pub min: usize,
    /// The most arguments; `None` for no limit.
    pub max: Option<usize>,
}

impl Arity {
    /// Exactly `n` arguments.
    pub const fn exactly(n: usize) -> Arity {
        Arity { min: n, max: Some(n) }
    }

    /// From `min` to `max` arguments.
    pub const fn between(min: usize, max: usize) -> Arity {
        Arity { min, max: Some(max) }
    }

    /// At least `min` arguments.
    pub const fn at_least(min: usize) -> Arity {
        Arity { min, max: None }
    }

    /// Whether a call with `n` arguments fits.
    pub fn admits(self, n: usize) -> bool {
        n >= self.min && self.max.is_none_or(|max| n <= max)
    }
}

/// A named scalar function: its name, type rule and evaluation in one place.
///
/// Implementations must give the same value from [`eval`](Self::eval) and from
/// [`eval_columns`](Self::eval_columns) for every row; the tests of each family check that on
/// random columns.
pub trait ScalarFunction: fmt::Debug + Send + Sync {
    /// The SQL name, as EXPLAIN and error messages print it.
    fn name(&self) -> &str;

    /// How many arguments it takes; [`call_type`] refuses other counts before
    /// [`return_type`](Self::return_type) sees them.
    fn arity(&self) -> Arity;

    /// The result type for arguments of `args` (as many as [`arity`](Self::arity) admits).
    ///
    /// # Errors
    /// Argument types the function does not take, in Flink's words ([`wrong_types`]).
    fn return_type(&self, args: &[&DataType]) -> Result<DataType, ExprError>;

    /// How NULL arguments are treated.
    fn nulls(&self) -> Nulls {
        Nulls::Strict
    }

    /// Whether the same arguments always give the same result (not the clock, not a random number).
    fn is_deterministic(&self) -> bool {
        true
    }

    /// Whether it is a Python function (EXPLAIN prints its calls in a `PythonCalc`, as Flink's).
    fn is_python(&self) -> bool {
        false
    }

    /// The function specialised for these argument expressions, once, when the call is built:
    /// a constant regular expression compiled, a constant argument checked. `None` keeps `self`.
    ///
    /// # Errors
    /// A constant argument the function refuses (an invalid regular expression).
    fn bind(&self, _args: &[Expr]) -> Result<Option<ScalarRef>, ExprError> {
        Ok(None)
    }

    /// The value for one row's evaluated arguments (none NULL when [`Nulls::Strict`]), in the
    /// result type `ty`.
    ///
    /// # Errors
    /// Runtime failures Flink also fails on.
    fn eval(&self, args: &[Value], ty: &DataType) -> Result<Value, ExprError>;

    /// The call as EXPLAIN prints it, given its arguments' text: `NAME(a, b)`; `infix` for the
    /// execution plan, which Flink prints with operators between or after their operands.
    fn explain(&self, args: &[String], _infix: bool) -> String {
        format!("{}({})", self.name(), args.join(", "))
    }

    /// The field of its ROW argument the function reads, when it is a field access
    /// (`row.field`): a Calc leaves the other fields of a ROW it reads only this way out of
    /// the rows it copies.
    fn field_index(&self) -> Option<usize> {
        None
    }

    /// Whether [`eval_columns`](Self::eval_columns) has a kernel for arguments of these types.
    fn has_kernel(&self, _args: &[&DataType]) -> bool {
        false
    }

    /// The value for every row of argument columns (all of one length), or `None` when a column
    /// does not have the Arrow type the kernel reads (the caller then evaluates row by row).
    /// Only called when [`has_kernel`](Self::has_kernel) said yes; never fails.
    fn eval_columns(&self, _args: &[ArrayRef], _ty: &DataType) -> Option<ArrayRef> {
        None
    }
}

/// A shared handle on a registered function, as [`Function::Scalar`](super::Function::Scalar) holds it.
#[derive(Clone)]
pub struct ScalarRef(pub Arc<dyn ScalarFunction>);

impl ScalarRef {
    /// A handle on `function`.
    pub fn new(function: impl ScalarFunction + 'static) -> ScalarRef {
        ScalarRef(Arc::new(function))
    }
}

impl std::ops::Deref for ScalarRef {
    type Target = dyn ScalarFunction;

    fn deref(&self) -> &Self::Target {
        self.0.as_ref()
    }
}

impl fmt::Debug for ScalarRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The column kernel of a [`Builtin`]: which argument types it reads, and the kernel.
#[derive(Debug, Clone, Copy)]
pub struct Kernel {
    /// Whether the kernel reads arguments of these types.
    pub accepts: fn(&[&DataType]) -> bool,
    /// The kernel ([`ScalarFunction::eval_columns`]).
    pub eval: fn(&[ArrayRef], &DataType) -> Option<ArrayRef>,
}

/// A function without parameters of its own, written as a table row: most built-in functions.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    name: &'static str,
    arity: Arity,
    return_type: fn(&Builtin, &[&DataType]) -> Result<DataType, ExprError>,
    eval: fn(&[Value], &DataType) -> Result<Value, ExprError>,
    nulls: Nulls,
    deterministic: bool,
    kernel: Option<Kernel>,
    postfix: bool,
}

impl Builtin {
    /// A strict, deterministic function without a column kernel.
    pub const fn new(
        name: &'static str,
        arity: Arity,
        return_type: fn(&Builtin, &[&DataType]) -> Result<DataType, ExprError>,
        eval: fn(&[Value], &DataType) -> Result<Value, ExprError>,
    ) -> Builtin {
        Builtin {
            name,
            arity,
            return_type,
            eval,
            nulls: Nulls::Strict,
            deterministic: true,
            kernel: None,
            postfix: false,
        }
    }

    /// The same function, treating NULL arguments as `nulls` says.
    pub const fn with_nulls(self, nulls: Nulls) -> Builtin {
        Builtin { nulls, ..self }
    }

    /// The same function, marked as reading the clock or a random source.
    pub const fn nondeterministic(self) -> Builtin {
        Builtin { deterministic: false, ..self }
    }

    /// The same function, printed after its operand in the execution plan (`b IS TRUE`).
    pub const fn postfix(self) -> Builtin {
        Builtin { postfix: true, ..self }
    }

    /// The same function with a column kernel.
    pub const fn with_kernel(self, kernel: Kernel) -> Builtin {
        Builtin { kernel: Some(kernel), ..self }
    }

    /// Checks that `ok` holds, or gives [`wrong_types`] naming the `supported` forms.
    ///
    /// # Errors
    /// [`wrong_types`] when `ok` is false.
    pub fn expect(&self, ok: bool, types: &[&DataType], supported: &str) -> Result<(), ExprError> {
        expect(ok, self, types, supported)
    }
}

impl ScalarFunction for Builtin {
    fn name(&self) -> &str {
        self.name
    }

    fn arity(&self) -> Arity {
        self.arity
    }

    fn return_type(&self, args: &[&DataType]) -> Result<DataType, ExprError> {
        (self.return_type)(self, args)
    }

    fn nulls(&self) -> Nulls {
        self.nulls
    }

    fn is_deterministic(&self) -> bool {
        self.deterministic
    }

    fn eval(&self, args: &[Value], ty: &DataType) -> Result<Value, ExprError> {
        (self.eval)(args, ty)
    }

    fn explain(&self, args: &[String], infix: bool) -> String {
        if self.postfix && infix {
            format!("{} {}", args.join(", "), self.name)
        } else {
            format!("{}({})", self.name, args.join(", "))
        }
    }

    fn has_kernel(&self, args: &[&DataType]) -> bool {
        self.kernel.is_some_and(|k| (k.accepts)(args))
    }

    fn eval_columns(&self, args: &[ArrayRef], ty: &DataType) -> Option<ArrayRef> {
        (self.kernel?.eval)(args, ty)
    }
}

/// One registry entry: the names a function is called by and how to make it.
pub struct Entry {
    /// The SQL name and its aliases, upper case.
    pub names: &'static [&'static str],
    /// A fresh instance of the function.
    pub make: fn() -> ScalarRef,
}

static REGISTRY: LazyLock<HashMap<&'static str, fn() -> ScalarRef>> = LazyLock::new(|| {
    let families = [
        string::entries(),
        regex::entries(),
        math::entries(),
        datetime::entries(),
        misc::entries(),
        truth::entries(),
        collection::entries(),
        hashing::entries(),
        string_ops::entries(),
        trig::entries(),
        arrays::entries(),
        json::entries(),
        choice::entries(),
        calendar::entries(),
    ];
    let mut map = HashMap::new();
    for entry in families.into_iter().flatten() {
        for name in entry.names {
            let previous = map.insert(*name, entry.make);
            debug_assert!(previous.is_none(), "function {name} registered twice");
        }
    }
    map
});

/// The function called `name` (any case), if weir has it.
pub fn lookup(name: &str) -> Option<ScalarRef> {
    REGISTRY.get(name.to_ascii_uppercase().as_str()).map(|make| make())
}

/// Every registered name, sorted (for documentation and tests).
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = REGISTRY.keys().copied().collect();
    names.sort_unstable();
    names
}

/// The result type of `function` applied to arguments of `types`, the argument count checked first.
///
/// # Errors
/// A count the function does not take, or types it does not take, in Flink's words.
pub fn call_type(function: &dyn ScalarFunction, types: &[&DataType]) -> Result<DataType, ExprError> {
    let arity = function.arity();
    if !arity.admits(types.len()) {
        let name = function.name();
        return Err(match arity.max {
            Some(max) if max == arity.min => invalid_count(name, max),
            _ => no_match(name, types),
        });
    }
    function.return_type(types)
}

/// Calcite's message for a call with the wrong number of arguments ("1 arguments" included).
pub fn invalid_count(name: &str, expected: usize) -> ExprError {
    ExprError(format!("Invalid number of arguments to function '{name}'. Was expecting {expected} arguments"))
}

/// Calcite's message for a call no function of that name takes: `NAME(<T1>, <T2>)`.
pub fn no_match(name: &str, types: &[&DataType]) -> ExprError {
    let kinds: Vec<String> = types.iter().map(|t| format!("<{}>", calcite_family(&t.logical))).collect();
    ExprError(format!("No match found for function signature {name}({})", kinds.join(", ")))
}

/// Flink's message for arguments of the wrong types: what was given and the `supported` forms.
pub fn wrong_types(name: &str, types: &[&DataType], supported: &str) -> ExprError {
    let args: Vec<String> = types.iter().map(|t| format!("<{}>", calcite_name(&t.logical))).collect();
    ExprError(format!(
        "Cannot apply '{name}' to arguments of type '{name}({})'. Supported form(s): '{name}({supported})'",
        args.join(", ")
    ))
}

/// `ty`, nullable when any of `args` is: the result type of a strict function.
pub fn nullable_if_any(ty: DataType, args: &[&DataType]) -> DataType {
    let mut ty = ty;
    ty.nullable = args.iter().any(|t| t.nullable);
    ty
}

/// Checks that `ok` holds, or gives [`wrong_types`] for `function`.
pub(crate) fn expect(
    ok: bool,
    function: &dyn ScalarFunction,
    types: &[&DataType],
    supported: &str,
) -> Result<(), ExprError> {
    if ok {
        Ok(())
    } else {
        Err(wrong_types(function.name(), types, supported))
    }
}

/// The value of an integer constant argument: a literal, or a negated one (`-1`).
pub(crate) fn constant_integer(e: &Expr) -> Option<i64> {
    match e {
        Expr::Literal { value, .. } => value.as_i64(),
        Expr::Call { function: super::Function::Negate, args, .. } => constant_integer(args.first()?)?.checked_neg(),
        _ => None,
    }
}

/// A text argument (`""` for another kind of value, which the type rules rule out).
pub(crate) fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// A STRING value.
pub(crate) fn string(s: String) -> Value {
    Value::String(Arc::from(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_resolves_to_a_function_of_that_name_or_an_alias() {
        for name in names() {
            let function = lookup(name).unwrap();
            // The shorthands YEAR(t), HOUR(t), … are EXTRACT of a unit, which has syntax of its own;
            // the bracket constructors (`$ARRAY`, `$MAP`) print as ARRAY and MAP but are no calls.
            if function.name() != "EXTRACT" && !name.starts_with('$') {
                let canonical = lookup(function.name()).unwrap();
                assert_eq!(canonical.name(), function.name(), "{name}");
            }
        }
        assert!(lookup("upper").is_some());
        assert!(lookup("NO_SUCH_FUNCTION").is_none());
        // The names the planner spells itself (`Function::named`), for syntax of their own.
        for name in [
            "CEIL",
            "CONCAT",
            "FLOOR",
            "HASH_CODE",
            "POSITION",
            "SUBSTRING",
            "IS TRUE",
            "IS NOT TRUE",
            "IS FALSE",
            "IS NOT FALSE",
        ] {
            assert!(lookup(name).is_some(), "{name}");
        }
    }

    #[test]
    fn a_wrong_argument_count_is_refused_in_flinks_words() {
        let replace = lookup("REPLACE").unwrap();
        let s = DataType::string();
        assert_eq!(
            call_type(&*replace, &[&s, &s]).unwrap_err().0,
            "Invalid number of arguments to function 'REPLACE'. Was expecting 3 arguments"
        );
        let substring = lookup("SUBSTRING").unwrap();
        assert_eq!(
            call_type(&*substring, &[&s]).unwrap_err().0,
            "No match found for function signature SUBSTRING(<CHARACTER>)"
        );
        assert!(call_type(&*substring, &[&s, &DataType::int()]).is_ok());
    }
}
