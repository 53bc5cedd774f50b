//! Regular-expression functions: REGEXP_EXTRACT, REGEXP_REPLACE, REGEXP, REGEXP_COUNT,
//! REGEXP_INSTR, REGEXP_SUBSTR and REGEXP_EXTRACT_ALL. A constant pattern is compiled once,
//! when the call is bound; a pattern read from a column is compiled per row. A pattern that
//! does not compile gives NULL (FALSE for REGEXP), as in Flink.

use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use regex::Regex;
use weir_runtime::columnar::IntColumn;
use weir_runtime::{DataType, Value};

use super::{expect, string, text, Arity, Entry, ScalarFunction, ScalarRef};
use crate::expr::types::{is_integer, is_string};
use crate::expr::{Expr, ExprError};

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry { names: &["REGEXP_EXTRACT"], make: || ScalarRef::new(RegexpExtract { pattern: None }) },
        Entry { names: &["REGEXP_REPLACE"], make: || ScalarRef::new(RegexpReplace { pattern: None }) },
        Entry { names: &["REGEXP"], make: || ScalarRef::new(RegexpSearch::new(Search::Matches)) },
        Entry { names: &["REGEXP_COUNT"], make: || ScalarRef::new(RegexpSearch::new(Search::Count)) },
        Entry { names: &["REGEXP_INSTR"], make: || ScalarRef::new(RegexpSearch::new(Search::Position)) },
        Entry { names: &["REGEXP_SUBSTR"], make: || ScalarRef::new(RegexpSearch::new(Search::First)) },
        Entry { names: &["REGEXP_EXTRACT_ALL"], make: || ScalarRef::new(RegexpSearch::new(Search::All)) },
    ]
}

/// The pattern of a call's second argument when it is a constant that compiles.
fn constant_pattern(args: &[Expr]) -> Result<Option<Regex>, ExprError> {
    match args.get(1) {
        Some(Expr::Literal { value: Value::String(p), .. }) => Ok(compile(p).ok()),
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

    fn bind(&self, args: &[Expr]) -> Result<Option<ScalarRef>, ExprError> {
        Ok(constant_pattern(args)?.map(|pattern| ScalarRef::new(RegexpExtract { pattern: Some(pattern) })))
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let Ok(regex) = pattern_for(&self.pattern, text(&args[1])) else { return Ok(Value::Null) };
        let group = match args.get(2) {
            None => 0,
            Some(Value::Null) => return Ok(Value::Null),
            Some(g) => g.as_i64().unwrap_or(0) as usize,
        };
        Ok(regex
            .captures(text(&args[0]))
            .and_then(|c| c.get(group))
            .map_or(Value::Null, |m| string(m.as_str().to_string())))
    }

    /// A constant pattern over a column of strings (and of groups).
    fn has_kernel(&self, args: &[&DataType]) -> bool {
        self.pattern.is_some() && is_string(args[0]) && args[2..].iter().all(|t| is_integer(t))
    }

    /// Each row matched with one set of capture slots, the group copied into the result.
    fn eval_columns(&self, args: &[ArrayRef], _: &DataType) -> Option<ArrayRef> {
        let regex = self.pattern.as_ref()?;
        let strings = args[0].as_string_opt::<i32>()?;
        let groups = args.get(2).map(|g| IntColumn::of(g.as_ref())).map_or(Some(None), |c| c.map(Some))?;
        let group = |i: usize| match &groups {
            Some(c) if c.nulls.as_ref().is_none_or(|n| n.is_valid(i)) => usize::try_from(c.values[i]).ok(),
            Some(_) => None,
            None => Some(0),
        };
        let mut slots = regex.capture_locations();
        let mut out = StringBuilder::with_capacity(strings.len(), strings.len() * 8);
        for i in 0..strings.len() {
            let found = strings.is_valid(i).then(|| {
                let s = strings.value(i);
                let (start, end) = regex.captures_read(&mut slots, s).and_then(|_| slots.get(group(i)?))?;
                Some(&s[start..end])
            });
            out.append_option(found.flatten());
        }
        Some(Arc::new(out.finish()))
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
        // Unlike the other functions, Flink's REGEXP_REPLACE fails on a pattern that does not compile.
        let regex = pattern_for(&self.pattern, text(&args[1]))?;
        let replacement = java_replacement(text(&args[2]));
        Ok(string(regex.replace_all(text(&args[0]), replacement.as_str()).into_owned()))
    }
}

/// What a [`RegexpSearch`] gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Search {
    /// `REGEXP(s, regex)`: whether the pattern is found (FALSE for an empty or invalid pattern).
    Matches,
    /// `REGEXP_COUNT(s, regex)`: how many times it is found.
    Count,
    /// `REGEXP_INSTR(s, regex)`: the 1-based character position of the first match, 0 for none.
    Position,
    /// `REGEXP_SUBSTR(s, regex)`: the first match, NULL for none.
    First,
    /// `REGEXP_EXTRACT_ALL(s, regex[, group])`: the group (1 by default) of every match.
    All,
}

/// REGEXP, REGEXP_COUNT, REGEXP_INSTR, REGEXP_SUBSTR and REGEXP_EXTRACT_ALL ([`Search`]).
#[derive(Debug, Clone)]
pub struct RegexpSearch {
    search: Search,
    pattern: Option<Regex>,
}

impl RegexpSearch {
    fn new(search: Search) -> Self {
        RegexpSearch { search, pattern: None }
    }
}

impl ScalarFunction for RegexpSearch {
    fn name(&self) -> &str {
        match self.search {
            Search::Matches => "REGEXP",
            Search::Count => "REGEXP_COUNT",
            Search::Position => "REGEXP_INSTR",
            Search::First => "REGEXP_SUBSTR",
            Search::All => "REGEXP_EXTRACT_ALL",
        }
    }

    fn arity(&self) -> Arity {
        if self.search == Search::All {
            Arity::between(2, 3)
        } else {
            Arity::exactly(2)
        }
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        let ok = is_string(types[0]) && is_string(types[1]) && types[2..].iter().all(|t| is_integer(t));
        let forms = if self.search == Search::All {
            "<CHARACTER>, <CHARACTER>[, <INTEGER>]"
        } else {
            "<CHARACTER>, <CHARACTER>"
        };
        expect(ok, self, types, forms)?;
        let ty = match self.search {
            Search::Matches => DataType::boolean(),
            Search::Count | Search::Position => DataType::int(),
            Search::First => DataType::string(),
            Search::All => DataType::new(weir_runtime::LogicalType::Array(Box::new(DataType::string()))),
        };
        let mut ty = ty;
        ty.nullable = true;
        Ok(ty)
    }

    fn bind(&self, args: &[Expr]) -> Result<Option<ScalarRef>, ExprError> {
        Ok(constant_pattern(args)?
            .map(|pattern| ScalarRef::new(RegexpSearch { search: self.search, pattern: Some(pattern) })))
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let (s, pattern) = (text(&args[0]), text(&args[1]));
        let regex = match pattern_for(&self.pattern, pattern) {
            Ok(r) if !(self.search == Search::Matches && pattern.is_empty()) => r,
            _ if self.search == Search::Matches => return Ok(Value::Boolean(false)),
            _ => return Ok(Value::Null),
        };
        Ok(match self.search {
            Search::Matches => Value::Boolean(regex.is_match(s)),
            Search::Count => Value::Int(regex.find_iter(s).count() as i32),
            Search::Position => Value::Int(regex.find(s).map_or(0, |m| s[..m.start()].chars().count() as i32 + 1)),
            Search::First => regex.find(s).map_or(Value::Null, |m| string(m.as_str().to_string())),
            Search::All => {
                let group = args.get(2).map_or(1, |g| g.as_i64().unwrap_or(-1));
                let Some(group) = usize::try_from(group).ok().filter(|&g| g < regex.captures_len()) else {
                    return Ok(Value::Null);
                };
                Value::Array(
                    regex
                        .captures_iter(s)
                        .map(|c| c.get(group).map_or(Value::Null, |m| string(m.as_str().to_string())))
                        .collect(),
                )
            }
        })
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
    fn the_extract_kernel_equals_the_row_path() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(10);
        let pieces = ["&", "channel_id=", "42", "x", "é", "&channel_id="];
        let strings: Vec<Option<String>> = (0..400)
            .map(|_| {
                rng.random_bool(0.9)
                    .then(|| (0..rng.random_range(0..6)).map(|_| pieces[rng.random_range(0..6)]).collect())
            })
            .collect();
        let groups: Vec<Option<i32>> =
            (0..400).map(|_| rng.random_bool(0.9).then(|| rng.random_range(-1..4))).collect();
        let pattern = Expr::literal(Value::string("(&|^)channel_id=([^&]*)"), DataType::string());
        let bound = RegexpExtract { pattern: None }.bind(&[pattern.clone(), pattern]).unwrap().unwrap();
        let types = [DataType::string(), DataType::string(), DataType::int()];
        assert!(bound.0.has_kernel(&types.iter().collect::<Vec<_>>()));
        let columns: [ArrayRef; 3] = [
            Arc::new(arrow_array::StringArray::from(strings.clone())),
            Arc::new(arrow_array::StringArray::from(vec!["unused"; 400])),
            Arc::new(arrow_array::Int32Array::from(groups.clone())),
        ];
        let out = bound.0.eval_columns(&columns, &DataType::string()).unwrap();
        for (i, got) in out.as_string::<i32>().iter().enumerate() {
            let s = strings[i].as_deref().map_or(Value::Null, Value::string);
            let group = groups[i].map_or(Value::Null, Value::Int);
            let expected = bound.0.eval(&[s, Value::string("unused"), group], &DataType::string()).unwrap();
            assert_eq!(
                got.map_or(Value::Null, Value::string),
                expected,
                "row {i}: {:?} group {:?}",
                strings[i],
                groups[i]
            );
        }
    }

    #[test]
    fn an_invalid_pattern_gives_null() {
        let args = [Value::string("x"), Value::string("("), Value::Int(1)];
        assert_eq!(RegexpExtract { pattern: None }.eval(&args, &DataType::string()).unwrap(), Value::Null);
        let regexp = RegexpSearch::new(Search::Matches);
        assert_eq!(regexp.eval(&args[..2], &DataType::boolean()).unwrap(), Value::Boolean(false));
    }
}
