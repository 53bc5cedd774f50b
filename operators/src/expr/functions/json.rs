//! JSON functions with Flink's semantics: JSON_VALUE, JSON_QUERY and JSON_EXISTS over SQL/JSON
//! path expressions (`[lax | strict] $.key[0].*`), `IS JSON [VALUE | SCALAR | ARRAY | OBJECT]`,
//! the constructors JSON_OBJECT and JSON_ARRAY, JSON_STRING, JSON (a string taken as JSON
//! text by the constructors), JSON_QUOTE and JSON_UNQUOTE.
//!
//! The functions with clauses (`RETURNING`, `ON EMPTY`, `ON ERROR`, wrappers, `ON NULL`) are
//! values of their own types ([`JsonValue`], [`JsonQuery`], [`JsonExists`], [`JsonObject`],
//! [`JsonArray`]) that the binder builds from the clauses; JSON text is read with `serde_json`
//! (object keys kept in order, numbers kept as written) and written compactly, as Flink's
//! Jackson writes it.

use serde_json::Value as Json;
use weir_runtime::{DataType, LogicalType, Value};

use super::{nullable_if_any, string, text, Arity, Builtin, Entry, Nulls, ScalarFunction, ScalarRef};
use crate::expr::types::is_string;
use crate::expr::ExprError;

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry { names: &["JSON_STRING"], make: || ScalarRef::new(JsonString { arg_type: None }) },
        Entry { names: &["JSON"], make: || ScalarRef::new(JSON) },
        Entry { names: &["JSON_QUOTE"], make: || ScalarRef::new(JSON_QUOTE) },
        Entry { names: &["JSON_UNQUOTE"], make: || ScalarRef::new(JSON_UNQUOTE) },
        Entry { names: &[IS_JSON_NAME], make: || ScalarRef::new(IS_JSON) },
    ]
}

/// The registry name of `x IS JSON [kind]` (a call of two arguments: the text and the kind).
pub const IS_JSON_NAME: &str = "$IS_JSON";

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// `.key` or `."key"`
    Key(String),
    /// `.*`
    AnyKey,
    /// `[n]`
    Index(usize),
    /// `[*]`
    AnyIndex,
}

/// A SQL/JSON path: its mode and steps after `$`.
#[derive(Debug, Clone, PartialEq)]
struct Path {
    strict: bool,
    steps: Vec<Step>,
}

impl Path {
    /// Reads `[lax | strict] $ steps`.
    fn parse(text: &str) -> Result<Path, ExprError> {
        let invalid = || ExprError(format!("Invalid path spec '{text}'"));
        let trimmed = text.trim_start();
        // Without a mode the path is strict, as Flink 2.3 reads it.
        let (strict, rest) = if let Some(r) = trimmed.strip_prefix("strict ") {
            (true, r)
        } else if let Some(r) = trimmed.strip_prefix("lax ") {
            (false, r)
        } else {
            (true, trimmed)
        };
        let mut rest = rest.trim().strip_prefix('$').ok_or_else(invalid)?;
        let mut steps = Vec::new();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix(".*") {
                steps.push(Step::AnyKey);
                rest = after;
            } else if let Some(after) = rest.strip_prefix(".\"") {
                let end = after.find('"').ok_or_else(invalid)?;
                steps.push(Step::Key(after[..end].to_string()));
                rest = &after[end + 1..];
            } else if let Some(after) = rest.strip_prefix('.') {
                let end = after.find(['.', '[']).unwrap_or(after.len());
                let key = &after[..end];
                if key.is_empty() || !key.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                    return Err(invalid());
                }
                steps.push(Step::Key(key.to_string()));
                rest = &after[end..];
            } else if let Some(after) = rest.strip_prefix('[') {
                let end = after.find(']').ok_or_else(invalid)?;
                let inner = after[..end].trim();
                steps.push(if inner == "*" {
                    Step::AnyIndex
                } else {
                    Step::Index(inner.parse().map_err(|_| invalid())?)
                });
                rest = &after[end + 1..];
            } else {
                return Err(invalid());
            }
        }
        Ok(Path { strict, steps })
    }

    /// Whether the path can select several items (it has a wildcard): what it selects is then
    /// one JSON array of them, as Flink's JsonPath gives it.
    fn is_definite(&self) -> bool {
        !self.steps.iter().any(|s| matches!(s, Step::AnyKey | Step::AnyIndex))
    }

    /// What the path selects in `root` as the functions take it: the items of a definite path,
    /// one array of the items of an indefinite one (when it selects any).
    fn value_of(&self, root: &Json) -> Result<Vec<Json>, ExprError> {
        let items: Vec<Json> = self.select(root)?.into_iter().cloned().collect();
        Ok(if self.is_definite() { items } else { vec![Json::Array(items)] })
    }

    /// The items the path selects in `root`; in strict mode a missing key or index, or a step
    /// of the wrong kind, is an error.
    fn select<'a>(&self, root: &'a Json) -> Result<Vec<&'a Json>, ExprError> {
        let mut items = vec![root];
        // After a wildcard, an item a step does not fit is passed over, in either mode (an
        // indefinite path gathers what it finds).
        let mut after_wildcard = false;
        for step in &self.steps {
            let mut next = Vec::new();
            for item in items {
                if after_wildcard {
                    apply_lenient(step, item, &mut next);
                } else {
                    self.apply(step, item, &mut next)?;
                }
            }
            after_wildcard |= matches!(step, Step::AnyKey | Step::AnyIndex);
            items = next;
        }
        Ok(items)
    }

    fn apply<'a>(&self, step: &Step, item: &'a Json, out: &mut Vec<&'a Json>) -> Result<(), ExprError> {
        let structural = |what: &str| ExprError(format!("No results for path: {what}"));
        match (step, item) {
            (Step::Key(key), Json::Object(map)) => match map.get(key) {
                Some(v) => out.push(v),
                None if self.strict => return Err(structural(&format!("$['{key}']"))),
                None => {}
            },
            (Step::AnyKey, Json::Object(map)) => out.extend(map.values()),
            // Lax mode looks into arrays for keys.
            (Step::Key(_) | Step::AnyKey, Json::Array(elements)) if !self.strict => {
                for e in elements {
                    self.apply(step, e, out)?;
                }
            }
            (Step::Index(i), Json::Array(elements)) => match elements.get(*i) {
                Some(v) => out.push(v),
                None if self.strict => return Err(structural(&format!("$[{i}]"))),
                None => {}
            },
            (Step::AnyIndex, Json::Array(elements)) => out.extend(elements),
            // `[*]` on an object lists its values, as `.*` does.
            (Step::AnyIndex, Json::Object(map)) => out.extend(map.values()),
            // Lax mode takes a value that is no array as an array of it.
            (Step::Index(0) | Step::AnyIndex, other) if !self.strict => out.push(other),
            (Step::Index(_), _) if !self.strict => {}
            (Step::Key(_) | Step::AnyKey, _) if !self.strict => {}
            (_, _) => return Err(structural("a step of the wrong kind")),
        }
        Ok(())
    }
}

/// One step of a path after a wildcard: what fits, nothing for what does not.
fn apply_lenient<'a>(step: &Step, item: &'a Json, out: &mut Vec<&'a Json>) {
    match (step, item) {
        (Step::Key(key), Json::Object(map)) => out.extend(map.get(key)),
        (Step::AnyKey | Step::AnyIndex, Json::Object(map)) => out.extend(map.values()),
        (Step::Index(i), Json::Array(elements)) => out.extend(elements.get(*i)),
        (Step::AnyIndex, Json::Array(elements)) => out.extend(elements),
        _ => {}
    }
}

/// The JSON text of a document as Flink's JSON functions write it: compact, the keys of every
/// object sorted, numbers as Java's `BigDecimal` writes them (`-0.0` is `0.0`, `1e2` is `1E+2`,
/// `1.50` stays `1.50`).
fn json_text(v: &Json) -> String {
    let mut out = String::new();
    write_json_text(&mut out, v);
    out
}

fn write_json_text(out: &mut String, v: &Json) {
    match v {
        Json::Object(map) => {
            let mut entries: Vec<(&String, &Json)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(key).unwrap_or_default());
                out.push(':');
                write_json_text(out, value);
            }
            out.push('}');
        }
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_text(out, item);
            }
            out.push(']');
        }
        Json::Number(n) => {
            let text = n.to_string();
            out.push_str(&java_number_text(&text).unwrap_or(text));
        }
        other => out.push_str(&serde_json::to_string(other).unwrap_or_default()),
    }
}

/// A JSON number with a fraction or an exponent as Java's `BigDecimal.toString` writes it (an
/// integer stays as written, without a sign on zero); `None` when `text` is no number.
fn java_number_text(text: &str) -> Option<String> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(at) => (&body[..at], body[at + 1..].parse::<i64>().ok()?),
        None => (body, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if !(whole.chars().chain(fraction.chars()).all(|c| c.is_ascii_digit())) || whole.is_empty() {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    let coefficient = digits.trim_start_matches('0');
    let coefficient = if coefficient.is_empty() { "0" } else { coefficient };
    let scale = fraction.len() as i64 - exponent;
    let mut out = String::new();
    if negative && coefficient != "0" {
        out.push('-');
    }
    if fraction.is_empty() && exponent == 0 {
        out.push_str(coefficient);
        return Some(out);
    }
    let adjusted = -scale + (coefficient.len() as i64 - 1);
    if scale >= 0 && adjusted >= -6 {
        let scale = scale as usize;
        if scale == 0 {
            out.push_str(coefficient);
        } else if coefficient.len() > scale {
            out.push_str(&coefficient[..coefficient.len() - scale]);
            out.push('.');
            out.push_str(&coefficient[coefficient.len() - scale..]);
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', scale - coefficient.len()));
            out.push_str(coefficient);
        }
    } else {
        out.push_str(&coefficient[..1]);
        if coefficient.len() > 1 {
            out.push('.');
            out.push_str(&coefficient[1..]);
        }
        out.push('E');
        if adjusted >= 0 {
            out.push('+');
        }
        out.push_str(&adjusted.to_string());
    }
    Some(out)
}

/// What a function does when its path selects nothing, or fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// NULL.
    Null,
    /// The job fails.
    Error,
    /// The value of the call's DEFAULT expression (JSON_VALUE).
    Default,
    /// `[]` (JSON_QUERY).
    EmptyArray,
    /// `{}` (JSON_QUERY).
    EmptyObject,
}

/// The value of a fallback for the error `error`, with `default` the DEFAULT expression's value.
fn fall_back(fallback: Fallback, error: ExprError, default: &Value) -> Result<Value, ExprError> {
    match fallback {
        Fallback::Null => Ok(Value::Null),
        Fallback::Error => Err(error),
        Fallback::Default => Ok(default.clone()),
        Fallback::EmptyArray => Ok(string("[]".into())),
        Fallback::EmptyObject => Ok(string("{}".into())),
    }
}

/// `JSON_VALUE(json, path [RETURNING type] [… ON EMPTY] [… ON ERROR])`: arguments `json,
/// path, empty_default, error_default`.
#[derive(Debug, Clone)]
pub struct JsonValue {
    /// The `RETURNING` type (STRING without the clause).
    pub returning: DataType,
    /// `ON EMPTY` (NULL by default).
    pub on_empty: Fallback,
    /// `ON ERROR` (NULL by default).
    pub on_error: Fallback,
}

impl ScalarFunction for JsonValue {
    fn name(&self) -> &str {
        "JSON_VALUE"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(4)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        super::expect(is_string(types[0]) && is_string(types[1]), self, &types[..2], "<CHARACTER>, <CHARACTER>")?;
        let mut ty = self.returning.clone();
        ty.nullable = true;
        Ok(ty)
    }

    fn nulls(&self) -> Nulls {
        Nulls::Own
    }

    /// As Flink 2.3 runs it (a path without a mode is strict): a strict path that does not fit,
    /// or finds no single scalar, and text that is no JSON under a strict path take `ON ERROR`;
    /// a lax path that finds nothing or no scalar, and text that is no JSON under a lax path,
    /// take `ON EMPTY`. A scalar that is not of the `RETURNING` type (a string for INT, an
    /// integer for DOUBLE) fails the job, whatever the clauses say.
    fn eval(&self, args: &[Value], ty: &DataType) -> Result<Value, ExprError> {
        let (Some(document), Some(path)) = (args[0].as_str(), args[1].as_str()) else { return Ok(Value::Null) };
        let path = Path::parse(path)?;
        // A strict path that does not fit takes ON ERROR, and so does text that is no JSON
        // under a strict path (under a lax one it is empty).
        let root = match serde_json::from_str::<Json>(document) {
            Ok(root) => root,
            Err(e) if path.strict => {
                return fall_back(self.on_error, ExprError(format!("Invalid JSON text: {e}")), &args[3])
            }
            Err(e) => return fall_back(self.on_empty, ExprError(format!("Invalid JSON text: {e}")), &args[2]),
        };
        let selected = match path.value_of(&root) {
            Ok(selected) => selected,
            Err(e) => return fall_back(self.on_error, e, &args[3]),
        };
        let no_scalar = || ExprError("JSON_VALUE's path selects no single scalar value".into());
        match selected.as_slice() {
            [one @ (Json::String(_) | Json::Bool(_) | Json::Number(_))] => returning(one, ty),
            // A lax path that finds nothing, or finds no scalar, is empty; a strict one that
            // finds no scalar is an error.
            [] => fall_back(self.on_empty, no_scalar(), &args[2]),
            _ if !path.strict => fall_back(self.on_empty, no_scalar(), &args[2]),
            _ => fall_back(self.on_error, no_scalar(), &args[3]),
        }
    }
}

/// A JSON scalar as a value of `ty`: any scalar as text for a character type; a number for a
/// numeric type (an integer only for an integer type, a number with a fraction or exponent
/// only for DOUBLE, FLOAT and DECIMAL); a boolean for BOOLEAN. Anything else fails.
fn returning(scalar: &Json, ty: &DataType) -> Result<Value, ExprError> {
    let text = match scalar {
        Json::String(s) => s.clone(),
        other => json_text(other),
    };
    let integral = matches!(scalar, Json::Number(n) if !n.to_string().contains(['.', 'e', 'E']));
    let fits = match (&ty.logical, scalar) {
        (LogicalType::Char(_) | LogicalType::Varchar(_), _) => true,
        (LogicalType::TinyInt | LogicalType::SmallInt | LogicalType::Int | LogicalType::BigInt, Json::Number(_)) => {
            integral
        }
        (LogicalType::Float | LogicalType::Double, Json::Number(_)) => !integral,
        (LogicalType::Decimal { .. }, Json::Number(_)) => true,
        (LogicalType::Boolean, Json::Bool(_)) => true,
        _ => false,
    };
    if !fits {
        return Err(ExprError(format!("JSON_VALUE cannot return the JSON value {} as {ty}", json_text(scalar))));
    }
    crate::expr::cast::cast(&Value::String(text.into()), &DataType::string(), ty).map_err(ExprError)
}

/// How JSON_QUERY wraps what its path selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrapper {
    /// `WITHOUT [ARRAY] WRAPPER` (the default): one array or object, as it is.
    Without,
    /// `WITH CONDITIONAL [ARRAY] WRAPPER`: in an array unless it is one array or object.
    Conditional,
    /// `WITH [UNCONDITIONAL] [ARRAY] WRAPPER`: always in an array.
    Unconditional,
}

/// `JSON_QUERY(json, path [RETURNING type] [wrapper] [… ON EMPTY] [… ON ERROR])`: arguments
/// `json, path`.
#[derive(Debug, Clone)]
pub struct JsonQuery {
    /// The wrapper behaviour.
    pub wrapper: Wrapper,
    /// `ON EMPTY` (NULL by default).
    pub on_empty: Fallback,
    /// `ON ERROR` (NULL by default).
    pub on_error: Fallback,
    /// `RETURNING ARRAY<STRING>`: the selected array's elements as JSON texts.
    pub returning_array: bool,
}

impl ScalarFunction for JsonQuery {
    fn name(&self) -> &str {
        "JSON_QUERY"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(2)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        super::expect(types.iter().all(|t| is_string(t)), self, types, "<CHARACTER>, <CHARACTER>")?;
        let mut ty = if self.returning_array {
            DataType::new(LogicalType::Array(Box::new(DataType::string())))
        } else {
            DataType::string()
        };
        ty.nullable = true;
        Ok(ty)
    }

    /// As Flink 2.3 runs it: text that is no JSON and a strict path that does not fit take ON
    /// ERROR; a lax path that finds nothing takes ON EMPTY; without a wrapper, a scalar is an
    /// error in strict mode and empty in lax mode.
    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let path = Path::parse(text(&args[1]))?;
        let root = match serde_json::from_str::<Json>(text(&args[0])) {
            Ok(root) => root,
            Err(e) if path.strict => return self.fallback(self.on_error, ExprError(format!("Invalid JSON text: {e}"))),
            Err(e) => return self.fallback(self.on_empty, ExprError(format!("Invalid JSON text: {e}"))),
        };
        let selected = match path.value_of(&root) {
            Ok(s) => s,
            Err(e) => return self.fallback(self.on_error, e),
        };
        let structured = |v: &Json| matches!(v, Json::Array(_) | Json::Object(_));
        let empty = || ExprError("Empty result of JSON_QUERY function is not allowed".into());
        let result = match (self.wrapper, selected.as_slice()) {
            (_, []) => return self.fallback(self.on_empty, empty()),
            (Wrapper::Without | Wrapper::Conditional, [one]) if structured(one) => one.clone(),
            (Wrapper::Without, [one]) => {
                let error = ExprError(format!(
                    "Strict jsonpath mode requires array or object value, and the actual value is: '{}'",
                    json_text(one)
                ));
                let fallback = if path.strict { self.on_error } else { self.on_empty };
                return self.fallback(fallback, error);
            }
            (Wrapper::Without, _) => return self.fallback(self.on_error, empty()),
            (Wrapper::Conditional | Wrapper::Unconditional, all) => Json::Array(all.to_vec()),
        };
        Ok(self.output(&result))
    }
}

impl JsonQuery {
    fn output(&self, v: &Json) -> Value {
        match (self.returning_array, v) {
            (true, Json::Array(elements)) => Value::Array(
                elements
                    .iter()
                    .map(|e| match e {
                        Json::String(s) => string(s.clone()),
                        Json::Null => Value::Null,
                        other => string(json_text(other)),
                    })
                    .collect(),
            ),
            (true, _) => Value::Null,
            (false, v) => string(json_text(v)),
        }
    }

    fn fallback(&self, fallback: Fallback, error: ExprError) -> Result<Value, ExprError> {
        let empty = |v: Json| Ok(self.output(&v));
        match fallback {
            Fallback::EmptyArray => empty(Json::Array(Vec::new())),
            Fallback::EmptyObject => empty(Json::Object(serde_json::Map::new())),
            other => fall_back(other, error, &Value::Null),
        }
    }
}

/// What JSON_EXISTS gives when its JSON or strict path fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExistsOnError {
    /// `TRUE ON ERROR`
    True,
    /// `FALSE ON ERROR` (the default)
    False,
    /// `UNKNOWN ON ERROR`: NULL.
    Unknown,
    /// `ERROR ON ERROR`: the job fails.
    Error,
}

/// `JSON_EXISTS(json, path [… ON ERROR])`: whether the path selects anything.
#[derive(Debug, Clone)]
pub struct JsonExists {
    /// `ON ERROR`
    pub on_error: ExistsOnError,
}

impl ScalarFunction for JsonExists {
    fn name(&self) -> &str {
        "JSON_EXISTS"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(2)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        super::expect(types.iter().all(|t| is_string(t)), self, types, "<CHARACTER>, <CHARACTER>")?;
        Ok(nullable_if_any(DataType::boolean(), types))
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let path = Path::parse(text(&args[1]))?;
        let found = serde_json::from_str::<Json>(text(&args[0]))
            .map_err(|e| ExprError(format!("Invalid JSON text: {e}")))
            // A member whose value is JSON null does not exist, as in Flink.
            .and_then(|root| Ok(path.select(&root)?.iter().any(|v| !v.is_null())));
        match (found, self.on_error) {
            (Ok(found), _) => Ok(Value::Boolean(found)),
            (Err(_), ExistsOnError::True) => Ok(Value::Boolean(true)),
            (Err(_), ExistsOnError::False) => Ok(Value::Boolean(false)),
            (Err(_), ExistsOnError::Unknown) => Ok(Value::Null),
            (Err(e), ExistsOnError::Error) => Err(e),
        }
    }
}

/// A SQL value of type `ty` as a JSON value; `raw` strings are JSON text already (from
/// JSON_OBJECT, JSON_ARRAY or JSON()). A ROW is an object of its fields by name.
fn to_json(v: &Value, ty: &DataType, raw: bool) -> Json {
    let element = |ty: &DataType| match &ty.logical {
        LogicalType::Array(e) => (**e).clone(),
        _ => DataType::string(),
    };
    match v {
        Value::String(s) if raw => serde_json::from_str(s).unwrap_or_else(|_| Json::String(s.to_string())),
        Value::String(s) => Json::String(s.to_string()),
        Value::Null => Json::Null,
        Value::Boolean(b) => Json::Bool(*b),
        Value::Array(items) => {
            let element = element(ty);
            Json::Array(items.iter().map(|i| to_json(i, &element, false)).collect())
        }
        Value::Row(items) => match &ty.logical {
            LogicalType::Row(fields) => Json::Object(
                items.iter().zip(fields).map(|(i, f)| (f.name.clone(), to_json(i, &f.data_type, false))).collect(),
            ),
            _ => Json::Array(items.iter().map(|i| to_json(i, &DataType::string(), false)).collect()),
        },
        Value::Map(entries) => {
            let value_type = match &ty.logical {
                LogicalType::Map(_, v) => (**v).clone(),
                _ => DataType::string(),
            };
            Json::Object(
                entries
                    .iter()
                    .map(|(k, v)| {
                        let mut key = String::new();
                        weir_runtime::print::write_value(&mut key, k);
                        (key, to_json(v, &value_type, false))
                    })
                    .collect(),
            )
        }
        other => {
            let mut text = String::new();
            crate::aggregate::json::write_json(&mut text, other);
            serde_json::from_str(&text).unwrap_or(Json::String(text))
        }
    }
}

/// Refuses a type Flink cannot write as JSON (a DATE or TIME, also inside a collection).
fn check_jsonable(ty: &DataType) -> Result<(), ExprError> {
    let ok = match &ty.logical {
        LogicalType::Date | LogicalType::Time(_) => false,
        LogicalType::Array(e) | LogicalType::Multiset(e) => return check_jsonable(e),
        LogicalType::Map(k, v) => return check_jsonable(k).and_then(|()| check_jsonable(v)),
        LogicalType::Row(fields) => return fields.iter().try_for_each(|f| check_jsonable(&f.data_type)),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(ExprError(format!("Type '{ty}' is not scalar or cannot be converted into JSON.")))
    }
}

/// `JSON_OBJECT([KEY] k VALUE v, … [NULL | ABSENT ON NULL])`: arguments `k1, v1, k2, v2, …`.
#[derive(Debug, Clone)]
pub struct JsonObject {
    /// `ABSENT ON NULL`: an entry with a NULL value is left out (else written as `null`).
    pub absent_on_null: bool,
    /// For each value, whether it is JSON text already.
    pub raw: Vec<bool>,
    /// The type of each value.
    pub types: Vec<DataType>,
}

impl ScalarFunction for JsonObject {
    fn name(&self) -> &str {
        "JSON_OBJECT"
    }

    fn arity(&self) -> Arity {
        Arity::at_least(0)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        let keys_are_strings = types.iter().step_by(2).all(|t| is_string(t));
        super::expect(types.len() % 2 == 0 && keys_are_strings, self, types, "[[KEY] key VALUE value]*")?;
        types.iter().skip(1).step_by(2).try_for_each(|t| check_jsonable(t))?;
        Ok(DataType::string().not_null())
    }

    fn nulls(&self) -> Nulls {
        Nulls::Own
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let mut object = serde_json::Map::new();
        for (i, pair) in args.chunks(2).enumerate() {
            let Some(key) = pair[0].as_str() else {
                return Err(ExprError("JSON_OBJECT's key must not be NULL".into()));
            };
            if matches!(pair[1], Value::Null) && self.absent_on_null {
                continue;
            }
            let ty = self.types.get(i).cloned().unwrap_or_else(DataType::string);
            object.insert(key.to_string(), to_json(&pair[1], &ty, self.raw.get(i).copied().unwrap_or(false)));
        }
        Ok(string(json_text(&Json::Object(object))))
    }
}

/// `JSON_ARRAY(v, … [NULL | ABSENT ON NULL])`
#[derive(Debug, Clone)]
pub struct JsonArray {
    /// `ABSENT ON NULL` (the default): NULL values are left out (else written as `null`).
    pub absent_on_null: bool,
    /// For each value, whether it is JSON text already.
    pub raw: Vec<bool>,
    /// The type of each value.
    pub types: Vec<DataType>,
}

impl ScalarFunction for JsonArray {
    fn name(&self) -> &str {
        "JSON_ARRAY"
    }

    fn arity(&self) -> Arity {
        Arity::at_least(0)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        types.iter().try_for_each(|t| check_jsonable(t))?;
        Ok(DataType::string().not_null())
    }

    fn nulls(&self) -> Nulls {
        Nulls::Own
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let elements: Vec<Json> = args
            .iter()
            .enumerate()
            .filter(|(_, v)| !(matches!(v, Value::Null) && self.absent_on_null))
            .map(|(i, v)| {
                let ty = self.types.get(i).cloned().unwrap_or_else(DataType::string);
                to_json(v, &ty, self.raw.get(i).copied().unwrap_or(false))
            })
            .collect();
        Ok(string(json_text(&Json::Array(elements))))
    }
}

/// `JSON_STRING(x)`: `x` as JSON text (a ROW as an object of its fields); NULL for NULL.
#[derive(Debug, Clone)]
pub struct JsonString {
    /// The argument's type, once the call is built.
    arg_type: Option<DataType>,
}

impl ScalarFunction for JsonString {
    fn name(&self) -> &str {
        "JSON_STRING"
    }

    fn arity(&self) -> Arity {
        Arity::exactly(1)
    }

    fn return_type(&self, types: &[&DataType]) -> Result<DataType, ExprError> {
        check_jsonable(types[0])?;
        Ok(nullable_if_any(DataType::string(), types))
    }

    fn bind(&self, args: &[crate::expr::Expr]) -> Result<Option<ScalarRef>, ExprError> {
        Ok(Some(ScalarRef::new(JsonString { arg_type: Some(args[0].ty().clone()) })))
    }

    fn eval(&self, args: &[Value], _: &DataType) -> Result<Value, ExprError> {
        let ty = self.arg_type.clone().unwrap_or_else(DataType::string);
        Ok(string(json_text(&to_json(&args[0], &ty, false))))
    }
}

/// `JSON(s)`: the string, marked as JSON text for JSON_OBJECT and JSON_ARRAY; invalid JSON fails.
pub const JSON: Builtin = Builtin::new(
    "JSON",
    Arity::exactly(1),
    |f, types| {
        f.expect(is_string(types[0]), types, "<CHARACTER>")?;
        Ok(nullable_if_any(DataType::string(), types))
    },
    |args, _| {
        serde_json::from_str::<Json>(text(&args[0])).map_err(|e| ExprError(format!("Invalid JSON string: {e}")))?;
        Ok(args[0].clone())
    },
);

/// `JSON_QUOTE(s)`: `s` as a JSON string literal.
pub const JSON_QUOTE: Builtin = Builtin::new(
    "JSON_QUOTE",
    Arity::exactly(1),
    |f, types| {
        f.expect(is_string(types[0]), types, "<CHARACTER>")?;
        Ok(nullable_if_any(DataType::string(), types))
    },
    |args, _| Ok(string(json_text(&Json::String(text(&args[0]).to_string())))),
);

/// `JSON_UNQUOTE(s)`: a text in double quotes without them, its JSON escapes read (as Flink
/// reads them, also where the text is no valid JSON string); other text as it is.
pub const JSON_UNQUOTE: Builtin = Builtin::new(
    "JSON_UNQUOTE",
    Arity::exactly(1),
    |f, types| {
        f.expect(is_string(types[0]), types, "<CHARACTER>")?;
        Ok(nullable_if_any(DataType::string(), types))
    },
    |args, _| {
        let s = text(&args[0]);
        let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')).filter(|_| s.len() >= 2) else {
            return Ok(args[0].clone());
        };
        Ok(string(unescape_json(inner)))
    },
);

/// `IS_JSON(s, kind)`: whether `s` is JSON text of `kind` (`VALUE`, `SCALAR`, `ARRAY`,
/// `OBJECT`); FALSE for NULL.
pub const IS_JSON: Builtin = Builtin::new(
    "IS JSON",
    Arity::exactly(2),
    |f, types| {
        f.expect(is_string(types[0]), types, "<CHARACTER>")?;
        Ok(DataType::boolean().not_null())
    },
    |args, _| {
        let Some(s) = args[0].as_str() else { return Ok(Value::Boolean(false)) };
        let Ok(v) = serde_json::from_str::<Json>(s) else { return Ok(Value::Boolean(false)) };
        Ok(Value::Boolean(match text(&args[1]) {
            "SCALAR" => !matches!(v, Json::Array(_) | Json::Object(_)),
            "ARRAY" => matches!(v, Json::Array(_)),
            "OBJECT" => matches!(v, Json::Object(_)),
            _ => true,
        }))
    },
)
.with_nulls(Nulls::Own);

/// The characters JSON escapes in `s` stand for; an unknown escape keeps its character.
fn unescape_json(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                out.extend(u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32));
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn select(path: &str, document: &str) -> Result<Vec<String>, ExprError> {
        let root: Json = serde_json::from_str(document).unwrap();
        Ok(Path::parse(path)?.select(&root)?.into_iter().map(json_text).collect())
    }

    /// Numbers as Flink 2.3's JSON functions write them (`JSON_QUERY('[-0.0, 1.0, 1e2, 1.50]',
    /// '$')` is `[0.0,1.0,1E+2,1.50]`), keys sorted (`JSON_QUERY('{"b":1,"a":2}', '$')`).
    #[test]
    fn json_text_sorts_keys_and_writes_numbers_as_java_big_decimals() {
        let text = |doc: &str| json_text(&serde_json::from_str::<Json>(doc).unwrap());
        assert_eq!(text("[-0.0, 1.0, 1e2, 1.50]"), "[0.0,1.0,1E+2,1.50]");
        assert_eq!(text(r#"{"b": 1, "a": {"d": 2, "c": -0}}"#), r#"{"a":{"c":0,"d":2},"b":1}"#);
        for (number, java) in [("1.0E20", "1.0E+20"), ("1e-7", "1E-7"), ("0.00001", "0.00001"), ("-2.5e1", "-25")] {
            assert_eq!(java_number_text(number).unwrap(), java, "{number}");
        }
    }

    #[test]
    fn lax_paths_look_into_arrays_and_strict_paths_fail_on_what_is_missing() {
        let doc = r#"{"a": 1, "b": [1, 2, {"c": "x"}], "d": null}"#;
        assert_eq!(select("$.b[2].c", doc).unwrap(), ["\"x\""]);
        assert_eq!(select("lax $.b.c", doc).unwrap(), ["\"x\""]);
        assert_eq!(select("$.b[*]", doc).unwrap(), ["1", "2", "{\"c\":\"x\"}"]);
        assert!(select("lax $.missing", doc).unwrap().is_empty());
        assert!(select("strict $.missing", doc).is_err());
        // Without a mode a path is strict, as Flink reads it.
        assert!(select("$.missing", doc).is_err());
        assert_eq!(select("lax $.a[0]", doc).unwrap(), ["1"]);
        assert!(Path::parse("a.b").is_err());
    }
}
