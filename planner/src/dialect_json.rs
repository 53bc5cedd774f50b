//! The SQL/JSON syntax of Flink's dialect: `JSON_VALUE`, `JSON_QUERY` and `JSON_EXISTS` with
//! their clauses, `JSON_OBJECT([KEY] k VALUE v, …)`, `JSON_ARRAY(…)` with `NULL | ABSENT ON
//! NULL`, and `x IS [NOT] JSON [kind]`.
//!
//! Each call is read into a function call of its name whose clauses are named arguments the
//! binder reads (names starting with `$`, which no user can write): `$returning => CAST(NULL AS
//! type)`, `$on_empty => 'DEFAULT'` with `$empty_default => expr`, `$on_error => …`,
//! `$wrapper => 'CONDITIONAL'`, `$on_null => 'ABSENT'`. `IS JSON` is a call of
//! [`weir_operators::expr::functions::json::IS_JSON_NAME`] with the kind as a string.

use sqlparser::ast::{
    CastKind, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgOperator, FunctionArgumentList,
    FunctionArguments, Ident, ObjectName, ObjectNamePart, UnaryOperator, Value,
};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// Whether the tokens from `n` on are the words `words` (any case).
fn words_at(parser: &Parser, n: usize, words: &[&str]) -> bool {
    words
        .iter()
        .enumerate()
        .all(|(i, w)| matches!(&parser.peek_nth_token(n + i).token, Token::Word(t) if t.value.eq_ignore_ascii_case(w)))
}

/// Consumes the words `words` when they come next.
fn take(parser: &mut Parser, words: &[&str]) -> bool {
    if !words_at(parser, 0, words) {
        return false;
    }
    words.iter().for_each(|_| {
        parser.next_token();
    });
    true
}

fn literal(text: &str) -> Expr {
    Expr::Value(Value::SingleQuotedString(text.to_string()).into())
}

fn named(name: &str, arg: Expr) -> FunctionArg {
    FunctionArg::Named {
        name: Ident::new(name),
        arg: FunctionArgExpr::Expr(arg),
        operator: FunctionArgOperator::RightArrow,
    }
}

fn call(name: Ident, args: Vec<FunctionArg>) -> Expr {
    Expr::Function(Function {
        name: ObjectName(vec![ObjectNamePart::Identifier(name)]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList { duplicate_treatment: None, args, clauses: Vec::new() }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    })
}

fn unnamed(e: Expr) -> FunctionArg {
    FunctionArg::Unnamed(FunctionArgExpr::Expr(e))
}

/// A JSON function call with its clauses, when the next tokens open one.
pub(crate) fn parse_json_call(parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
    let Token::Word(word) = &parser.peek_token().token else { return None };
    let name = word.value.to_ascii_uppercase();
    if !matches!(name.as_str(), "JSON_VALUE" | "JSON_QUERY" | "JSON_EXISTS" | "JSON_OBJECT" | "JSON_ARRAY")
        || parser.peek_nth_token(1).token != Token::LParen
    {
        return None;
    }
    let token = parser.next_token();
    parser.next_token();
    let ident = Ident::with_span(token.span, name.clone());
    Some((|| {
        let args = match name.as_str() {
            "JSON_OBJECT" => object_args(parser)?,
            "JSON_ARRAY" => array_args(parser)?,
            _ => query_args(parser, &name)?,
        };
        parser.expect_token(&Token::RParen)?;
        Ok(call(ident, args))
    })())
}

/// `[[KEY] k VALUE v, …] [NULL | ABSENT ON NULL]`
fn object_args(parser: &mut Parser) -> Result<Vec<FunctionArg>, ParserError> {
    let mut args = Vec::new();
    while parser.peek_token().token != Token::RParen {
        if let Some(clause) = on_null(parser) {
            args.push(clause);
            break;
        }
        take(parser, &["KEY"]);
        args.push(unnamed(parser.parse_expr()?));
        if !take(parser, &["VALUE"]) && !parser.consume_token(&Token::Colon) {
            return parser.expected("VALUE", parser.peek_token());
        }
        args.push(unnamed(parser.parse_expr()?));
        if !parser.consume_token(&Token::Comma) {
            args.extend(on_null(parser));
            break;
        }
    }
    Ok(args)
}

/// `[v, …] [NULL | ABSENT ON NULL]`
fn array_args(parser: &mut Parser) -> Result<Vec<FunctionArg>, ParserError> {
    let mut args = Vec::new();
    while parser.peek_token().token != Token::RParen {
        if let Some(clause) = on_null(parser) {
            args.push(clause);
            break;
        }
        args.push(unnamed(parser.parse_expr()?));
        if !parser.consume_token(&Token::Comma) {
            args.extend(on_null(parser));
            break;
        }
    }
    Ok(args)
}

fn on_null(parser: &mut Parser) -> Option<FunctionArg> {
    if take(parser, &["NULL", "ON", "NULL"]) {
        Some(named("$on_null", literal("NULL")))
    } else if take(parser, &["ABSENT", "ON", "NULL"]) {
        Some(named("$on_null", literal("ABSENT")))
    } else {
        None
    }
}

/// `json, path` and the clauses of JSON_VALUE, JSON_QUERY or JSON_EXISTS (`name`).
fn query_args(parser: &mut Parser, name: &str) -> Result<Vec<FunctionArg>, ParserError> {
    let mut args = vec![unnamed(parser.parse_expr()?)];
    parser.expect_token(&Token::Comma)?;
    args.push(unnamed(parser.parse_expr()?));
    while parser.peek_token().token != Token::RParen {
        if name != "JSON_EXISTS" && take(parser, &["RETURNING"]) {
            let data_type =
                if words_at(parser, 0, &["ARRAY"]) || words_at(parser, 0, &["ROW"]) || words_at(parser, 0, &["MAP"]) {
                    let ty = crate::column_type::parse_cast_type(parser)?;
                    sqlparser::ast::DataType::Custom(
                        ObjectName(vec![ObjectNamePart::Identifier(Ident::new(ty.to_string()))]),
                        Vec::new(),
                    )
                } else {
                    parser.parse_data_type()?
                };
            let null = Expr::Value(Value::Null.into());
            args.push(named(
                "$returning",
                Expr::Cast { kind: CastKind::Cast, expr: Box::new(null), data_type, format: None },
            ));
            continue;
        }
        if name == "JSON_QUERY" {
            let wrapper = if take(parser, &["WITHOUT"]) {
                Some("WITHOUT")
            } else if take(parser, &["WITH"]) {
                Some(if take(parser, &["CONDITIONAL"]) {
                    "CONDITIONAL"
                } else {
                    take(parser, &["UNCONDITIONAL"]);
                    "UNCONDITIONAL"
                })
            } else {
                None
            };
            if let Some(wrapper) = wrapper {
                take(parser, &["ARRAY"]);
                if !take(parser, &["WRAPPER"]) {
                    return parser.expected("WRAPPER", parser.peek_token());
                }
                args.push(named("$wrapper", literal(wrapper)));
                continue;
            }
        }
        let behaviour = if take(parser, &["EMPTY", "ARRAY"]) {
            "EMPTY ARRAY"
        } else if take(parser, &["EMPTY", "OBJECT"]) {
            "EMPTY OBJECT"
        } else if take(parser, &["DEFAULT"]) {
            let default = parser.parse_expr()?;
            let which = if words_at(parser, 0, &["ON", "EMPTY"]) { "$empty_default" } else { "$error_default" };
            args.push(named(which, default));
            "DEFAULT"
        } else {
            let Token::Word(w) = &parser.peek_token().token else {
                return parser.expected("a clause", parser.peek_token());
            };
            let word = w.value.to_ascii_uppercase();
            if !matches!(word.as_str(), "NULL" | "ERROR" | "TRUE" | "FALSE" | "UNKNOWN") {
                return parser.expected("a clause", parser.peek_token());
            }
            parser.next_token();
            match word.as_str() {
                "NULL" => "NULL",
                "ERROR" => "ERROR",
                "TRUE" => "TRUE",
                "FALSE" => "FALSE",
                _ => "UNKNOWN",
            }
        };
        let target = if take(parser, &["ON", "EMPTY"]) {
            "$on_empty"
        } else if take(parser, &["ON", "ERROR"]) {
            "$on_error"
        } else {
            return parser.expected("ON EMPTY or ON ERROR", parser.peek_token());
        };
        args.push(named(target, literal(behaviour)));
    }
    Ok(args)
}

/// `expr IS [NOT] JSON [VALUE | SCALAR | ARRAY | OBJECT]`, when the next tokens are one.
pub(crate) fn parse_is_json(parser: &mut Parser, expr: &Expr) -> Option<Result<Expr, ParserError>> {
    let negated = words_at(parser, 0, &["IS", "NOT", "JSON"]);
    if !negated && !words_at(parser, 0, &["IS", "JSON"]) {
        return None;
    }
    let is = parser.next_token();
    if negated {
        parser.next_token();
    }
    parser.next_token();
    let kind = ["VALUE", "SCALAR", "ARRAY", "OBJECT"].into_iter().find(|k| take(parser, &[k])).unwrap_or("VALUE");
    let name = Ident::with_span(is.span, weir_operators::expr::functions::json::IS_JSON_NAME);
    let test = call(name, vec![unnamed(expr.clone()), unnamed(literal(kind))]);
    Some(Ok(if negated { Expr::UnaryOp { op: UnaryOperator::Not, expr: Box::new(test) } } else { test }))
}
