//! Scalar functions written in Rust and registered with `Session::register_function`: called by
//! name (without case) in projections, filters and grouping keys, typed at planning time (a call
//! with wrong argument types fails before a job starts), NULLs handled as the function declares,
//! shadowing a built-in of the same name, and a second registration of a name refused.

use crate::common;

use common::Buffer;
use weir::operators::expr::functions::wrong_types;
use weir::operators::expr::types::is_string;
use weir::prelude::*;

/// `REVERSE_WORDS(s)`: the words of `s` in reverse order.
#[derive(Debug)]
struct ReverseWords(&'static str);

impl ScalarFunction for ReverseWords {
    fn name(&self) -> &str {
        self.0
    }

    fn arity(&self) -> Arity {
        Arity::exactly(1)
    }

    fn return_type(&self, args: &[&DataType]) -> Result<DataType, ExprError> {
        if !is_string(args[0]) {
            return Err(wrong_types(self.name(), args, "<CHARACTER>"));
        }
        Ok(DataType::string())
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let words: Vec<&str> = args[0].as_str().unwrap_or_default().split(' ').rev().collect();
        Ok(Value::string(&words.join(" ")))
    }
}

/// `NULL_AS_ZERO(n)`: `n`, or 0 for NULL: a function that sees NULL arguments itself.
#[derive(Debug)]
struct NullAsZero;

impl ScalarFunction for NullAsZero {
    fn name(&self) -> &str {
        "NULL_AS_ZERO"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(1)
    }

    fn return_type(&self, _: &[&DataType]) -> Result<DataType, ExprError> {
        Ok(DataType::bigint().not_null())
    }

    fn nulls(&self) -> Nulls {
        Nulls::Own
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        Ok(Value::BigInt(args[0].as_i64().unwrap_or(0)))
    }
}

fn session(out: &Buffer) -> Session {
    let mut session =
        Session::new(RuntimeConfig::default().with_parallelism(2), ConnectorRegistry::default(), Box::new(out.clone()));
    session.set("sql-client.execution.result-mode", "changelog").unwrap();
    session.register_function("reverse_words", ScalarRef::new(ReverseWords("REVERSE_WORDS"))).unwrap();
    session.register_function("null_as_zero", ScalarRef::new(NullAsZero)).unwrap();
    session
}

fn sorted_lines(out: &Buffer) -> Vec<String> {
    let text = String::from_utf8_lossy(&out.0.lock()).into_owned();
    let mut lines: Vec<String> = text.lines().filter(|l| l.starts_with(['+', '-'])).map(str::to_string).collect();
    lines.sort();
    lines
}

#[test]
fn registered_functions_run_in_projections_filters_and_grouping_keys() {
    let out = Buffer::default();
    let mut session = session(&out);
    session
        .execute_script(
            "SELECT Reverse_Words(s), NULL_AS_ZERO(n) FROM (VALUES ('a b c', 1), ('d e', CAST(NULL AS INT)), \
             (CAST(NULL AS STRING), 3)) AS t(s, n) WHERE null_as_zero(n) < 3;",
        )
        .unwrap();
    assert_eq!(sorted_lines(&out), ["+I[c b a, 1]", "+I[e d, 0]"]);

    out.0.lock().clear();
    session
        .execute_script(
            "SELECT reverse_words(s) AS r, COUNT(*) AS c FROM (VALUES ('x y'), ('x y'), ('z')) AS t(s) \
             GROUP BY reverse_words(s);",
        )
        .unwrap();
    assert_eq!(sorted_lines(&out), ["+I[y x, 1]", "+I[z, 1]", "+U[y x, 2]", "-U[y x, 1]"]);
}

#[test]
fn a_call_with_wrong_argument_types_fails_when_planned() {
    let out = Buffer::default();
    let mut session = session(&out);
    let error = session.execute_script("SELECT reverse_words(1);").unwrap_err().error.to_string();
    assert!(error.contains("Cannot apply 'REVERSE_WORDS' to arguments of type 'REVERSE_WORDS(<INTEGER>)'"), "{error}");
    assert!(sorted_lines(&out).is_empty());
}

#[test]
fn a_registered_function_shadows_a_built_in_and_a_name_is_registered_once() {
    let out = Buffer::default();
    let mut session = session(&out);
    session.register_function("UPPER", ScalarRef::new(ReverseWords("UPPER"))).unwrap();
    session.execute_script("SELECT upper('p q');").unwrap();
    assert_eq!(sorted_lines(&out), ["+I[q p]"]);

    let again = session.register_function("Reverse_Words", ScalarRef::new(NullAsZero)).unwrap_err();
    assert_eq!(again.to_string(), "Could not register function: function 'Reverse_Words' already exists");
    out.0.lock().clear();
    session.execute_script("SELECT REVERSE_WORDS('still reversed');").unwrap();
    assert_eq!(sorted_lines(&out), ["+I[reversed still]"]);
}
