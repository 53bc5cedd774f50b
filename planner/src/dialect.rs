//! Flink's SQL dialect for `sqlparser`.
//!
//! Identifiers are quoted with backquotes, aggregates take `FILTER (WHERE …)`, tables take
//! `FOR SYSTEM_TIME AS OF`, and `TABLE name` is an argument of window table functions
//! (`TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND))`); `MAP[k, v, …]` is a
//! call of `MAP`; `CAST(x AS ROW<…>)` and the other nested types are read as Flink's DDL reads
//! them.

use sqlparser::ast::{CastKind, DataType, Expr, Function, FunctionArguments, Ident, ObjectName, ObjectNamePart};
use sqlparser::dialect::{Dialect, GenericDialect};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// Flink SQL.
#[derive(Debug, Default, Clone, Copy)]
pub struct FlinkDialect;

/// The name under which a `TABLE name` argument is represented: a call of this function.
pub const TABLE_ARGUMENT: &str = "$TABLE";

impl FlinkDialect {
    /// `x [NOT] BETWEEN ASYMMETRIC a AND b` (plain BETWEEN) and `x [NOT] BETWEEN SYMMETRIC a AND b`,
    /// which Calcite expands to `(x BETWEEN a AND b) OR (x BETWEEN b AND a)` (negated whole with
    /// NOT); `None` when the tokens ahead are not such a BETWEEN.
    fn parse_symmetric_between(&self, parser: &mut Parser, expr: &Expr) -> Option<Result<Expr, ParserError>> {
        let word = |n: usize, keyword: Keyword| matches!(&parser.peek_nth_token(n).token, Token::Word(w) if w.keyword == keyword);
        let negated = word(0, Keyword::NOT);
        let at = usize::from(negated);
        let symmetric = match &parser.peek_nth_token(at + 1).token {
            Token::Word(w) if w.value.eq_ignore_ascii_case("SYMMETRIC") => true,
            Token::Word(w) if w.value.eq_ignore_ascii_case("ASYMMETRIC") => false,
            _ => return None,
        };
        if !word(at, Keyword::BETWEEN) {
            return None;
        }
        for _ in 0..at + 2 {
            parser.next_token();
        }
        let precedence = self.prec_value(sqlparser::dialect::Precedence::Between);
        let bounds = parser.parse_subexpr(precedence).and_then(|low| {
            parser.expect_keyword(Keyword::AND)?;
            Ok((low, parser.parse_subexpr(precedence)?))
        });
        Some(bounds.map(|(low, high)| {
            let between = |low: &Expr, high: &Expr, negated: bool| Expr::Between {
                expr: Box::new(expr.clone()),
                negated,
                low: Box::new(low.clone()),
                high: Box::new(high.clone()),
            };
            if !symmetric {
                return between(&low, &high, negated);
            }
            let either = Expr::BinaryOp {
                left: Box::new(between(&low, &high, false)),
                op: sqlparser::ast::BinaryOperator::Or,
                right: Box::new(between(&high, &low, false)),
            };
            let either = Expr::Nested(Box::new(either));
            if negated {
                Expr::UnaryOp { op: sqlparser::ast::UnaryOperator::Not, expr: Box::new(either) }
            } else {
                either
            }
        }))
    }
}

impl Dialect for FlinkDialect {
    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        GenericDialect.is_delimited_identifier_start(ch)
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        ch.is_alphabetic() || ch == '_'
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        ch.is_alphanumeric() || ch == '_' || ch == '$'
    }

    fn supports_filter_during_aggregation(&self) -> bool {
        true
    }

    fn supports_timestamp_versioning(&self) -> bool {
        true
    }

    /// `U&'\0041'`: a string of Unicode escapes, as Calcite reads it.
    fn supports_unicode_string_literal(&self) -> bool {
        true
    }

    /// `GROUPING SETS`, `ROLLUP` and `CUBE` are read by [`parse_grouping`], as Calcite reads
    /// them (`GROUPING SETS (a, (b, c), ())`: an element need not be parenthesized).
    fn supports_group_by_expr(&self) -> bool {
        false
    }

    /// `ARRAY_AGG(x IGNORE NULLS)`
    fn supports_window_function_null_treatment_arg(&self) -> bool {
        true
    }

    /// `x IS [NOT] JSON [VALUE | SCALAR | ARRAY | OBJECT]`, `x [NOT] BETWEEN [A]SYMMETRIC a AND b`
    fn parse_infix(&self, parser: &mut Parser, expr: &Expr, _precedence: u8) -> Option<Result<Expr, ParserError>> {
        if let Some(between) = self.parse_symmetric_between(parser, expr) {
            return Some(between);
        }
        crate::dialect_json::parse_is_json(parser, expr)
    }

    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        if let Some(kind) = cast_kind(parser) {
            return Some(parse_cast(parser, kind));
        }
        let is_object_agg =
            matches!(&parser.peek_token().token, Token::Word(w) if w.value.eq_ignore_ascii_case("JSON_OBJECTAGG"));
        if is_object_agg && parser.peek_nth_token(1).token == Token::LParen {
            return Some(parse_json_objectagg(parser));
        }
        // `MAP[k1, v1, …]`, Flink's map constructor: a call of the registry's `$MAP`.
        let is_map = matches!(&parser.peek_token().token, Token::Word(w) if w.value.eq_ignore_ascii_case("MAP"));
        if is_map && parser.peek_nth_token(1).token == Token::LBracket {
            parser.next_token();
            parser.next_token();
            return Some(parser.parse_comma_separated(Parser::parse_expr).and_then(|args| {
                parser.expect_token(&Token::RBracket)?;
                Ok(call(weir_operators::expr::functions::collection::MAP_CONSTRUCTOR, args))
            }));
        }
        if let Some(grouping) = parse_grouping(parser) {
            return Some(grouping);
        }
        if let Some(json) = crate::dialect_json::parse_json_call(parser) {
            return Some(json);
        }
        let is_table = matches!(&parser.peek_token().token, Token::Word(w) if w.keyword == Keyword::TABLE);
        let names_a_table = matches!(&parser.peek_nth_token(1).token, Token::Word(_));
        if !(is_table && names_a_table) {
            return None;
        }
        parser.next_token();
        Some(
            parser
                .parse_object_name(false)
                .and_then(|name| {
                    let mut args =
                        vec![Expr::CompoundIdentifier(name.0.iter().filter_map(|p| p.as_ident().cloned()).collect())];
                    // SESSION(TABLE t PARTITION BY k, …) or PARTITION BY (k1, k2): keys follow the table.
                    if parser.parse_keywords(&[Keyword::PARTITION, Keyword::BY]) {
                        if parser.consume_token(&Token::LParen) {
                            args.extend(parser.parse_comma_separated(|p| p.parse_identifier().map(Expr::Identifier))?);
                            parser.expect_token(&Token::RParen)?;
                        } else {
                            args.push(Expr::Identifier(parser.parse_identifier()?));
                        }
                    }
                    Ok(args)
                })
                .map(|args| call(TABLE_ARGUMENT, args)),
        )
    }
}

/// `GROUPING SETS (…)`, `ROLLUP (…)` or `CUBE (…)` when the next tokens open one. Each
/// element is an expression, a parenthesized list of them, or `()`; a grouping inside
/// `GROUPING SETS` is an expression of its own, as in Calcite.
fn parse_grouping(parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
    let word = |n: usize, name: &str| matches!(&parser.peek_nth_token(n).token, Token::Word(w) if w.value.eq_ignore_ascii_case(name));
    let (kind, words) = if word(0, "GROUPING") && word(1, "SETS") {
        ("SETS", 2)
    } else if word(0, "ROLLUP") {
        ("ROLLUP", 1)
    } else if word(0, "CUBE") {
        ("CUBE", 1)
    } else {
        return None;
    };
    if parser.peek_nth_token(words).token != Token::LParen {
        return None;
    }
    (0..words).for_each(|_| {
        parser.next_token();
    });
    let element = |p: &mut Parser| -> Result<Vec<Expr>, ParserError> {
        if !p.consume_token(&Token::LParen) {
            return Ok(vec![p.parse_expr()?]);
        }
        if p.consume_token(&Token::RParen) {
            return Ok(Vec::new());
        }
        let list = p.parse_comma_separated(Parser::parse_expr)?;
        p.expect_token(&Token::RParen)?;
        Ok(list)
    };
    Some((|| {
        parser.expect_token(&Token::LParen)?;
        let elements = parser.parse_comma_separated(element)?;
        parser.expect_token(&Token::RParen)?;
        Ok(match kind {
            "SETS" => Expr::GroupingSets(elements),
            "ROLLUP" => Expr::Rollup(elements),
            _ => Expr::Cube(elements),
        })
    })())
}

/// `CAST` or `TRY_CAST` when the next tokens open one.
fn cast_kind(parser: &Parser) -> Option<CastKind> {
    let Token::Word(w) = &parser.peek_token().token else { return None };
    let kind = match w.keyword {
        Keyword::CAST => CastKind::Cast,
        Keyword::TRY_CAST => CastKind::TryCast,
        _ => return None,
    };
    (parser.peek_nth_token(1).token == Token::LParen).then_some(kind)
}

/// `CAST(expr AS type)`, where the type may be one of Flink's nested types (`ROW<a INT>`,
/// `MAP<STRING, INT>`, `MULTISET<STRING>`, `ARRAY<ROW<…>>`), which `sqlparser` does not read:
/// those are kept as a custom type named as [`weir_runtime::DataType`] writes them.
fn parse_cast(parser: &mut Parser, kind: CastKind) -> Result<Expr, ParserError> {
    parser.next_token();
    parser.expect_token(&Token::LParen)?;
    let expr = parser.parse_expr()?;
    parser.expect_keyword_is(Keyword::AS)?;
    let nested = matches!(
        &parser.peek_token().token,
        Token::Word(w) if ["ROW", "MAP", "MULTISET", "ARRAY"].iter().any(|n| w.value.eq_ignore_ascii_case(n))
    );
    let data_type = if nested {
        let ty = crate::column_type::parse_cast_type(parser)?;
        DataType::Custom(ObjectName(vec![ObjectNamePart::Identifier(Ident::new(ty.to_string()))]), Vec::new())
    } else {
        parser.parse_data_type()?
    };
    parser.expect_token(&Token::RParen)?;
    Ok(Expr::Cast { kind, expr: Box::new(expr), data_type, format: None })
}

/// `JSON_OBJECTAGG([KEY] key VALUE value [NULL ON NULL | ABSENT ON NULL])`: a call of
/// `JSON_OBJECTAGG` with the key and the value, the clause kept as the call's clause.
fn parse_json_objectagg(parser: &mut Parser) -> Result<Expr, ParserError> {
    let name = parser.next_token();
    parser.expect_token(&Token::LParen)?;
    if matches!(&parser.peek_token().token, Token::Word(w) if w.keyword == Keyword::KEY) {
        parser.next_token();
    }
    let key = parser.parse_expr()?;
    parser.expect_keyword_is(Keyword::VALUE)?;
    let value = parser.parse_expr()?;
    let null_clause = if parser.parse_keywords(&[Keyword::NULL, Keyword::ON, Keyword::NULL]) {
        Some(sqlparser::ast::JsonNullClause::NullOnNull)
    } else if parser.parse_keywords(&[Keyword::ABSENT, Keyword::ON, Keyword::NULL]) {
        Some(sqlparser::ast::JsonNullClause::AbsentOnNull)
    } else {
        None
    };
    parser.expect_token(&Token::RParen)?;
    let Expr::Function(mut function) = call("JSON_OBJECTAGG", vec![key, value]) else {
        unreachable!("call builds a function call")
    };
    // Errors about the call point at its name.
    function.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::with_span(name.span, "JSON_OBJECTAGG"))]);
    if let (FunctionArguments::List(list), Some(clause)) = (&mut function.args, null_clause) {
        list.clauses.push(sqlparser::ast::FunctionArgumentClause::JsonNullClause(clause));
    }
    Ok(Expr::Function(function))
}

/// A call of function `name` with `args`, as the parser represents one.
fn call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function(Function {
        name: ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(sqlparser::ast::FunctionArgumentList {
            duplicate_treatment: None,
            args: args
                .into_iter()
                .map(|a| sqlparser::ast::FunctionArg::Unnamed(sqlparser::ast::FunctionArgExpr::Expr(a)))
                .collect(),
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    })
}
