//! Regular-expression functions: REGEXP_EXTRACT and REGEXP_REPLACE. A constant pattern is
//! compiled once, when the call is bound; a pattern read from a column is compiled per row.

use regex::Regex;
use weir_runtime::{DataType, Value};

use super::{expect, string, text, Arity, Entry, Nulls, ScalarFunction, ScalarRef};
use crate::expr::types::{is_integer, is_string};
use crate::expr::{Expr, ExprError};

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry { names: &["REGEXP_EXTRACT"], make: || ScalarRef::new(RegexpExtract { pattern: None }) },
        Entry { names: &["REGEXP_REPLACE"], make: || ScalarRef::new(RegexpReplace { pattern: None }) },
    ]
}

/// The pattern of a call's second argument when it is a constant, compiled.
fn constant_pattern(args: &[Expr]) -> Result<Option<Regex>, ExprError> {
    match args.get(1) {
        Some(Expr::Literal { value: Value::String(p), .. }) => compile(p).map(Some),
        _ => Ok(None),
    }
}

fn compile(pattern: &str) -> Result<Regex, ExprError> {
    Regex::new(pattern).map_err(|e| ExprError(format!("Invalid regular expression '{pattern}': {e}")))
}

/// The compiled constant (borrowed: a clone of a `Regex` starts with an empty matching cache,
/// which costs more than the match), or `pattern` compiled now.
fn pattern_for<'a>(compiled: &'a Option<Regex>, pattern: &str) -> Result<std::borrow::Cow<'a, Regex>, ExprError> {
    match compiled {
        Some(r) => Ok(std::borrow::Cow::Borrowed(r)),
        None => compile(pattern).map(std::borrow::Cow::Owned),
    }
}

/// `REGEXP_EXTRACT(s, regex[, group])`: the group (0 for the whole match) of the first match,
/// NULL when nothing matches.
#[derive(Debug, Clone)]
pub struct RegexpExtract {
    pattern: Option<Regex>,
}

impl ScalarFunction for RegexpExtract {
    fn name(&self) -> &str {
        "REGEXP_EXTRACT"
    }

    fn arity(&self) -> Arity {
        Arity::between(2, 3)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        let ok = is_string(types[0]) && is_string(types[1]) && types[2..].iter().all(|t| is_integer(t));
        expect(ok, self, types, "<CHARACTER>, <CHARACTER>[, <INTEGER>]")?;
        Ok(DataType::string())
    }

    fn nulls(&self) -> Nulls {
        // A NULL group means group 0.
        Nulls::Own
    }

    fn bind(&self, args: &[Expr]) -> Result<Option<ScalarRef>, ExprError> {
        Ok(constant_pattern(args)?.map(|pattern| ScalarRef::new(RegexpExtract { pattern: Some(pattern) })))
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        if args[..2].iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        let regex = pattern_for(&self.pattern, text(&args[1]))?;
        let group = args.get(2).and_then(Value::as_i64).unwrap_or(0) as usize;
        Ok(regex
            .captures(text(&args[0]))
            .and_then(|c| c.get(group))
            .map_or(Value::Null, |m| string(m.as_str().to_string())))
    }
}

/// `REGEXP_REPLACE(s, regex, replacement)`: every match replaced; `$1` in the replacement is a
/// group, as in Java.
#[derive(Debug, Clone)]
pub struct RegexpReplace {
    pattern: Option<Regex>,
}

impl ScalarFunction for RegexpReplace {
    fn name(&self) -> &str {
        "REGEXP_REPLACE"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(3)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        expect(types.iter().all(|t| is_string(t)), self, types, "<CHARACTER>, <CHARACTER>, <CHARACTER>")?;
        Ok(DataType::string())
    }

    fn bind(&self, args: &[Expr]) -> Result<Option<ScalarRef>, ExprError> {
        Ok(constant_pattern(args)?.map(|pattern| ScalarRef::new(RegexpReplace { pattern: Some(pattern) })))
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let regex = pattern_for(&self.pattern, text(&args[1]))?;
        let replacement = java_replacement(text(&args[2]));
        Ok(string(regex.replace_all(text(&args[0]), replacement.as_str()).into_owned()))
    }
}

/// A Java replacement string (`$1`, `\$`) as the `regex` crate writes it (`${1}`, `$$`).
fn java_replacement(replacement: &str) -> String {
    let mut out = String::new();
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('$') => out.push_str("$$"),
                Some(other) => out.push(other),
                None => {}
            },
            '$' => {
                let mut group = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    group.push(*d);
                    chars.next();
                }
                out.push_str(&format!("${{{group}}}"));
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_replacements_follow_java() {
        assert_eq!(java_replacement("<$1>"), "<${1}>");
        let extract = RegexpExtract { pattern: None };
        let args = [Value::string("foo123bar"), Value::string("([a-z]+)([0-9]+)"), Value::Int(2)];
        assert_eq!(extract.eval(&args, &DataType::string()).unwrap(), Value::string("123"));
        let replace = RegexpReplace { pattern: None };
        let args = [Value::string("a1b2"), Value::string("([0-9])"), Value::string("<$1>")];
        assert_eq!(replace.eval(&args, &DataType::string()).unwrap(), Value::string("a<1>b<2>"));
    }

    #[test]
    fn an_invalid_constant_pattern_is_refused_when_bound() {
        let args = [
            Expr::literal(Value::string("x"), DataType::string()),
            Expr::literal(Value::string("("), DataType::string()),
        ];
        let error = RegexpExtract { pattern: None }.bind(&args).unwrap_err();
        assert!(error.0.starts_with("Invalid regular expression '('"), "{error}");
    }
}
