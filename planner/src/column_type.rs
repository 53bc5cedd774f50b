//! Column types as Flink's DDL writes them, nested ones included: `ROW<name type, …>` (or
//! `ROW(name type, …)`), `ARRAY<type>`, `MAP<key, value>`, `MULTISET<type>`, each part with its
//! own `NOT NULL`.
//! The flat types are sqlparser's, read by [`weir_runtime::parse::read_type`].

use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;
use weir_runtime::parse::{read_type, TypeError};
use weir_runtime::types::{Field, LogicalType};
use weir_runtime::DataType;

/// Reads the type of column `column`, and the `NOT NULL` or `NULL` after it.
///
/// # Errors
/// A malformed type, or one weir does not have (`Unsupported type INTERVAL of column 'c'`).
pub fn parse_column_type(parser: &mut Parser, column: &str) -> Result<DataType, ParserError> {
    parse_type_of(parser, &format!("column '{column}'"))
}

/// Reads the type of a `CAST`, nested types included.
///
/// # Errors
/// As [`parse_column_type`], the message naming the CAST.
pub fn parse_cast_type(parser: &mut Parser) -> Result<DataType, ParserError> {
    parse_type_of(parser, "the CAST")
}

/// Reads a type written as [`DataType`]'s `Display` writes it (`ROW<`a` BIGINT> NOT NULL`).
pub fn read_written_type(text: &str) -> Option<DataType> {
    let dialect = crate::dialect::FlinkDialect;
    let mut parser = Parser::new(&dialect).try_with_sql(text).ok()?;
    let ty = parse_cast_type(&mut parser).ok()?;
    parser.expect_token(&Token::EOF).ok()?;
    Some(ty)
}

/// One type and what it belongs to (`owner`, for the messages).
fn parse_type_of(parser: &mut Parser, owner: &str) -> Result<DataType, ParserError> {
    let mut owed = false;
    let ty = parse_type(parser, owner, &mut owed)?;
    if owed {
        return Err(ParserError::ParserError(format!("Unexpected '>' after the type of {owner}")));
    }
    Ok(ty)
}

/// One type of `owner`. `owed` is set when a `>>` closed this type and one more `>` belongs to the type
/// around it (the tokenizer reads `ARRAY<ARRAY<INT>>` as ending in a shift).
fn parse_type(parser: &mut Parser, owner: &str, owed: &mut bool) -> Result<DataType, ParserError> {
    let word = match &parser.peek_token().token {
        Token::Word(w) => w.value.to_ascii_uppercase(),
        _ => String::new(),
    };
    let local_time_zone = match word.as_str() {
        "TIMESTAMP" => parser.maybe_parse(timestamp_with_local_time_zone)?,
        _ => None,
    };
    let logical = match word.as_str() {
        "ROW" => {
            parser.next_token();
            let angled = parser.consume_token(&Token::Lt);
            if !angled {
                parser.expect_token(&Token::LParen)?;
            }
            let mut fields = Vec::new();
            loop {
                let name = parser.parse_identifier()?.value;
                let ty = parse_type(parser, owner, owed)?;
                if !*owed && parser.parse_keyword(Keyword::COMMENT) {
                    parser.parse_literal_string()?;
                }
                fields.push(Field::new(name, ty));
                if *owed || !parser.consume_token(&Token::Comma) {
                    break;
                }
            }
            if angled {
                expect_closing_angle(parser, owed)?;
            } else {
                parser.expect_token(&Token::RParen)?;
            }
            let mut names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
            names.sort_unstable();
            let mut duplicates: Vec<&str> = names.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
            duplicates.dedup();
            if !duplicates.is_empty() {
                return Err(ParserError::ParserError(format!(
                    "Field names must be unique. Found duplicates: [{}]",
                    duplicates.join(", ")
                )));
            }
            LogicalType::Row(fields)
        }
        "ARRAY" | "MULTISET" => {
            parser.next_token();
            parser.expect_token(&Token::Lt)?;
            let element = Box::new(parse_type(parser, owner, owed)?);
            expect_closing_angle(parser, owed)?;
            if word == "ARRAY" {
                LogicalType::Array(element)
            } else {
                LogicalType::Multiset(element)
            }
        }
        "MAP" => {
            parser.next_token();
            parser.expect_token(&Token::Lt)?;
            let key = parse_type(parser, owner, owed)?;
            if *owed {
                return Err(ParserError::ParserError(format!("MAP needs a key and a value type ({owner})")));
            }
            parser.expect_token(&Token::Comma)?;
            let value = parse_type(parser, owner, owed)?;
            expect_closing_angle(parser, owed)?;
            LogicalType::Map(Box::new(key), Box::new(value))
        }
        // Flink's long spelling of TIMESTAMP_LTZ(p).
        "TIMESTAMP" if local_time_zone.is_some() => LogicalType::TimestampLtz(local_time_zone.unwrap_or(6)),
        // Types without parameters take none: Flink's parser stops at the `(`.
        "STRING" | "BYTES" | "INT" | "INTEGER" | "BIGINT" | "SMALLINT" | "TINYINT" | "BOOLEAN" | "FLOAT" | "DATE"
            if parser.peek_nth_token(1).token == Token::LParen =>
        {
            let at = parser.peek_nth_token(1).span.start;
            return Err(ParserError::ParserError(format!(
                "Encountered \"(\" at line {}, column {}.",
                at.line, at.column
            )));
        }
        _ => {
            let ast_type = parser.parse_data_type()?;
            let flat = read_type(&ast_type.to_string()).map_err(|e| {
                ParserError::ParserError(match e {
                    TypeError::InvalidParameters(message) => format!("{message} ({owner})"),
                    TypeError::NotAType => format!("Unsupported type {ast_type} of {owner}"),
                })
            })?;
            flat.logical
        }
    };
    let ty = DataType::new(logical);
    // `NOT NULL` right after a nested part belongs to it; after a `>>` it belongs further out.
    if !*owed && parser.parse_keywords(&[Keyword::NOT, Keyword::NULL]) {
        return Ok(ty.not_null());
    }
    if !*owed {
        let _nullable = parser.parse_keyword(Keyword::NULL);
    }
    Ok(ty)
}

/// `TIMESTAMP[(p)] WITH LOCAL TIME ZONE`: its precision (6 when not written).
fn timestamp_with_local_time_zone(parser: &mut Parser) -> Result<u8, ParserError> {
    parser.expect_keyword(Keyword::TIMESTAMP)?;
    let mut precision = 6;
    if parser.consume_token(&Token::LParen) {
        let written = parser.parse_literal_uint()?;
        if written > 9 {
            return Err(ParserError::ParserError(
                "Timestamp with local time zone precision must be between 0 and 9 (both inclusive).".into(),
            ));
        }
        precision = written as u8;
        parser.expect_token(&Token::RParen)?;
    }
    parser.expect_keywords(&[Keyword::WITH, Keyword::LOCAL, Keyword::TIME, Keyword::ZONE])?;
    Ok(precision)
}

/// The `>` that closes a nested type: a `>` owed by a `>>` inside, a `>`, or the first half of
/// a `>>` (the other half is then owed to the type around this one).
fn expect_closing_angle(parser: &mut Parser, owed: &mut bool) -> Result<(), ParserError> {
    if std::mem::take(owed) {
        return Ok(());
    }
    match parser.next_token().token {
        Token::Gt => Ok(()),
        Token::ShiftRight => {
            *owed = true;
            Ok(())
        }
        other => Err(ParserError::ParserError(format!("Expected: >, found: {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::FlinkDialect;

    fn parsed(text: &str) -> Result<String, ParserError> {
        let dialect = FlinkDialect;
        let mut parser = Parser::new(&dialect).try_with_sql(text)?;
        let ty = parse_column_type(&mut parser, "c")?;
        parser.expect_token(&Token::EOF)?;
        Ok(ty.to_string())
    }

    /// Spellings Flink's DDL takes, and those it refuses, with its messages.
    #[test]
    fn column_types_are_read_and_refused_as_flink_does() {
        assert_eq!(parsed("TIMESTAMP(3) WITH LOCAL TIME ZONE").unwrap(), "TIMESTAMP_LTZ(3)");
        assert_eq!(parsed("TIMESTAMP WITH LOCAL TIME ZONE NOT NULL").unwrap(), "TIMESTAMP_LTZ(6) NOT NULL");
        assert_eq!(parsed("TIMESTAMP(3)").unwrap(), "TIMESTAMP(3)");
        assert_eq!(parsed("DOUBLE PRECISION").unwrap(), "DOUBLE");
        for (ty, column) in [("STRING(5)", 7), ("INT(5)", 4), ("BYTES(3)", 6), ("FLOAT(60)", 6)] {
            let error = parsed(ty).unwrap_err().to_string();
            assert!(error.ends_with(&format!("Encountered \"(\" at line 1, column {column}.")), "{ty}: {error}");
        }
        let error = parsed("VARCHAR(2147483648)").unwrap_err().to_string();
        assert!(error.contains("Literal '2147483648' can not be parsed to type 'java.lang.Integer'"), "{error}");
        let error = parsed("ROW<a INT, b INT, a STRING>").unwrap_err().to_string();
        assert!(error.ends_with("Field names must be unique. Found duplicates: [a]"), "{error}");
    }

    #[test]
    fn nested_types_read_as_flink_writes_them() {
        assert_eq!(
            parsed("ROW<device STRING, os STRING NOT NULL>").unwrap(),
            "ROW<`device` STRING, `os` STRING NOT NULL>"
        );
        assert_eq!(parsed("ROW(a INT, b ARRAY<INT>)").unwrap(), "ROW<`a` INT, `b` ARRAY<INT>>");
        assert_eq!(parsed("ARRAY<ARRAY<INT>>").unwrap(), "ARRAY<ARRAY<INT>>");
        assert_eq!(parsed("ARRAY<ARRAY<INT>> NOT NULL").unwrap(), "ARRAY<ARRAY<INT>> NOT NULL");
        assert_eq!(parsed("MAP<STRING, ARRAY<BIGINT NOT NULL>>").unwrap(), "MAP<STRING, ARRAY<BIGINT NOT NULL>>");
        assert_eq!(parsed("ROW<a ROW<b INT COMMENT 'x'>>").unwrap(), "ROW<`a` ROW<`b` INT>>");
        assert_eq!(parsed("DECIMAL(10, 2)").unwrap(), "DECIMAL(10, 2)");
    }

    /// A CAST's nested type is kept as its written text and read back from it.
    #[test]
    fn written_types_read_back_as_themselves() {
        for text in
            ["ROW<a ROW<`b c` INT NOT NULL>, d MAP<STRING, MULTISET<INT>>>", "ARRAY<ROW<x DECIMAL(5, 2)>> NOT NULL"]
        {
            let dialect = FlinkDialect;
            let mut parser = Parser::new(&dialect).try_with_sql(text).unwrap();
            let ty = parse_cast_type(&mut parser).unwrap();
            assert_eq!(read_written_type(&ty.to_string()), Some(ty));
        }
        assert_eq!(read_written_type("ROW<a"), None);
    }

    #[test]
    fn malformed_nested_types_are_refused() {
        assert!(parsed("ARRAY<INT").is_err());
        assert!(parsed("MAP<STRING>").is_err());
        assert!(parsed("ROW<>").is_err());
        assert!(parsed("ARRAY<INT>>").is_err());
        assert_eq!(parsed("MULTISET<STRING NOT NULL>").unwrap(), "MULTISET<STRING NOT NULL>");
        assert!(parsed("MULTISET<INT, INT>").is_err());
    }
}
