//! Binding the SQL/JSON calls the dialect reads with their clauses ([`crate::dialect_json`]):
//! JSON_VALUE, JSON_QUERY, JSON_EXISTS, JSON_OBJECT and JSON_ARRAY become the functions of
//! `weir_operators::expr::functions::json` configured by their clauses.

use std::collections::HashMap;

use sqlparser::ast;
use weir_operators::expr::functions::json::{
    ExistsOnError, Fallback, JsonArray, JsonExists, JsonObject, JsonQuery, JsonValue, Wrapper,
};
use weir_operators::expr::functions::ScalarRef;
use weir_operators::expr::{Expr, Function};
use weir_runtime::{DataType, LogicalType};

use super::expr::ExprBinder;
use super::scope::position_of;
use crate::error::{Error, Result};

/// The positional arguments and the clauses (named `$…` arguments) of a call.
struct Parts<'a> {
    positional: Vec<&'a ast::Expr>,
    clauses: HashMap<String, &'a ast::Expr>,
}

impl<'a> Parts<'a> {
    fn of(f: &'a ast::Function) -> Result<Parts<'a>> {
        let mut parts = Parts { positional: Vec::new(), clauses: HashMap::new() };
        let ast::FunctionArguments::List(list) = &f.args else { return Ok(parts) };
        for arg in &list.args {
            match arg {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => parts.positional.push(e),
                ast::FunctionArg::Named { name, arg: ast::FunctionArgExpr::Expr(e), .. }
                    if name.value.starts_with('$') =>
                {
                    parts.clauses.insert(name.value.clone(), e);
                }
                other => return Err(Error::Unsupported(format!("The argument '{other}'"))),
            }
        }
        Ok(parts)
    }

    /// The text of clause `name` (`'NULL'`, `'DEFAULT'`, …), if given.
    fn clause(&self, name: &str) -> Option<String> {
        match self.clauses.get(name) {
            Some(ast::Expr::Value(v)) => match &v.value {
                ast::Value::SingleQuotedString(s) => Some(s.clone()),
                _ => None,
            },
            _ => None,
        }
    }
}

fn fallback(text: Option<String>) -> Fallback {
    match text.as_deref() {
        Some("ERROR") => Fallback::Error,
        Some("DEFAULT") => Fallback::Default,
        Some("EMPTY ARRAY") => Fallback::EmptyArray,
        Some("EMPTY OBJECT") => Fallback::EmptyObject,
        _ => Fallback::Null,
    }
}

/// Whether `e` gives JSON text that JSON_OBJECT and JSON_ARRAY insert as JSON, not as a string.
fn is_json_text(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Function(f) if ["JSON_OBJECT", "JSON_ARRAY", "JSON"]
        .iter()
        .any(|n| f.name.to_string().eq_ignore_ascii_case(n)))
}

/// The call `f` (named `name`, upper case) bound, when it is one of the SQL/JSON calls.
pub(super) fn bind(binder: &mut ExprBinder, name: &str, f: &ast::Function, node: &ast::Expr) -> Result<Option<Expr>> {
    if !matches!(name, "JSON_VALUE" | "JSON_QUERY" | "JSON_EXISTS" | "JSON_OBJECT" | "JSON_ARRAY") {
        return Ok(None);
    }
    let parts = Parts::of(f)?;
    let mut args = Vec::with_capacity(parts.positional.len());
    for e in &parts.positional {
        args.push(binder.bind_node(e)?);
    }
    let function: ScalarRef = match name {
        "JSON_OBJECT" => {
            let raw = parts.positional.iter().skip(1).step_by(2).map(|e| is_json_text(e)).collect();
            let types = args.iter().skip(1).step_by(2).map(|a| a.ty().clone()).collect();
            let absent_on_null = parts.clause("$on_null").as_deref() == Some("ABSENT");
            ScalarRef::new(JsonObject { absent_on_null, raw, types })
        }
        "JSON_ARRAY" => {
            let raw = parts.positional.iter().map(|e| is_json_text(e)).collect();
            let types = args.iter().map(|a| a.ty().clone()).collect();
            let absent_on_null = parts.clause("$on_null").as_deref() != Some("NULL");
            ScalarRef::new(JsonArray { absent_on_null, raw, types })
        }
        _ if args.len() != 2 => {
            return Err(Error::validation(
                position_of(node),
                format!("Invalid number of arguments to function '{name}'"),
            ));
        }
        "JSON_EXISTS" => {
            let on_error = match parts.clause("$on_error").as_deref() {
                Some("TRUE") => ExistsOnError::True,
                Some("UNKNOWN") => ExistsOnError::Unknown,
                Some("ERROR") => ExistsOnError::Error,
                _ => ExistsOnError::False,
            };
            ScalarRef::new(JsonExists { on_error })
        }
        "JSON_QUERY" => {
            let returning = parts.clauses.get("$returning").map(|r| binder.bind_node(r)).transpose()?;
            let returning_array = match returning.as_ref().map(|r| &r.ty().logical) {
                None | Some(LogicalType::Varchar(_) | LogicalType::Char(_)) => false,
                Some(LogicalType::Array(element)) if matches!(element.logical, LogicalType::Varchar(_)) => true,
                Some(_) => {
                    return Err(Error::validation(
                        position_of(node),
                        "Illegal return type of JSON_QUERY: only STRING and ARRAY<STRING> are supported",
                    ))
                }
            };
            let wrapper = match parts.clause("$wrapper").as_deref() {
                Some("CONDITIONAL") => Wrapper::Conditional,
                Some("UNCONDITIONAL") => Wrapper::Unconditional,
                _ => Wrapper::Without,
            };
            ScalarRef::new(JsonQuery {
                wrapper,
                on_empty: fallback(parts.clause("$on_empty")),
                on_error: fallback(parts.clause("$on_error")),
                returning_array,
            })
        }
        _ => {
            // JSON_VALUE: the defaults are arguments, cast to the RETURNING type.
            let returning = match parts.clauses.get("$returning") {
                Some(r) => binder.bind_node(r)?.ty().clone(),
                None => DataType::string(),
            };
            for which in ["$empty_default", "$error_default"] {
                let default = match (parts.clauses.get(which), parts.clauses.get("$returning")) {
                    (Some(d), Some(ast::Expr::Cast { data_type, .. })) => binder.bind_node(&ast::Expr::Cast {
                        kind: ast::CastKind::Cast,
                        expr: Box::new((*d).clone()),
                        data_type: data_type.clone(),
                        format: None,
                    })?,
                    (Some(d), _) => binder.bind_node(d)?,
                    (None, _) => Expr::literal(weir_runtime::Value::Null, returning.clone()),
                };
                args.push(default);
            }
            ScalarRef::new(JsonValue {
                returning,
                on_empty: fallback(parts.clause("$on_empty")),
                on_error: fallback(parts.clause("$on_error")),
            })
        }
    };
    binder.call(Function::Scalar(function), args, node).map(Some)
}
