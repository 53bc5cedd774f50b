//! Dynamic table options: `t /*+ OPTIONS('key' = 'value', …) */` after a table name in `FROM`
//! or `INSERT INTO` overrides the table's `WITH` options for that statement, as in Flink.
//! Query hints (`/*+ LOOKUP(…) */`, `/*+ STATE_TTL(…) */`) are gathered per statement as
//! [`QueryHints`]. Other hints are ignored, as Flink ignores hints it does not know.

use std::collections::BTreeMap;

use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer, Whitespace};

use crate::dialect::FlinkDialect;
use crate::error::{Error, Position, Result};

/// An `OPTIONS` hint on one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableHint {
    /// The table the hint follows.
    pub table: String,
    /// The options it sets.
    pub options: BTreeMap<String, String>,
    /// Where the hint starts.
    pub position: Position,
}

/// The `OPTIONS` hints among a script's tokens, in order.
///
/// # Errors
/// [`Error::Parse`] for an `OPTIONS` hint that is not a list of `'key' = 'value'` pairs.
pub fn table_hints(tokens: &[TokenWithSpan]) -> Result<Vec<TableHint>> {
    let mut hints = Vec::new();
    for (at, body, position) in hint_comments(tokens) {
        let Some(options) = options_of(body, position)? else {
            continue;
        };
        let table = tokens[..at].iter().rev().find(|t| !matches!(t.token, Token::Whitespace(_)));
        if let Some(Token::Word(word)) = table.map(|t| &t.token) {
            hints.push(TableHint { table: word.value.clone(), options, position });
        }
    }
    Ok(hints)
}

/// The hint comments (`/*+ … */`) among a script's tokens: their index, body and position.
pub(crate) fn hint_comments(tokens: &[TokenWithSpan]) -> impl Iterator<Item = (usize, &str, Position)> {
    tokens.iter().enumerate().filter_map(|(at, token)| {
        let Token::Whitespace(Whitespace::MultiLineComment(text)) = &token.token else { return None };
        let body = text.strip_prefix('+')?;
        Some((at, body, Position { line: token.span.start.line, column: token.span.start.column }))
    })
}

/// The pairs of an `OPTIONS(…)` hint body; `None` for another hint.
fn options_of(body: &str, position: Position) -> Result<Option<BTreeMap<String, String>>> {
    hint_pairs(body, position, "OPTIONS")
}

/// The `'key' = 'value'` pairs of a hint body `NAME(…)`; `None` for a hint of another name.
///
/// # Errors
/// [`Error::Parse`] for a body that is not a list of quoted pairs.
pub(crate) fn hint_pairs(body: &str, position: Position, name: &str) -> Result<Option<BTreeMap<String, String>>> {
    let malformed = || Error::Parse {
        position,
        message: format!("Invalid {name} hint '{}': expected {name}('key' = 'value', …)", body.trim()),
    };
    let tokens = Tokenizer::new(&FlinkDialect, body).tokenize().map_err(|_| malformed())?;
    let mut tokens = tokens.into_iter().filter(|t| !matches!(t, Token::Whitespace(_)));
    match tokens.next() {
        Some(Token::Word(w)) if w.value.eq_ignore_ascii_case(name) => {}
        _ => return Ok(None),
    }
    if tokens.next() != Some(Token::LParen) {
        return Err(malformed());
    }
    let mut options = BTreeMap::new();
    loop {
        let key = match tokens.next() {
            Some(Token::SingleQuotedString(key)) => key,
            Some(Token::RParen) if options.is_empty() => break,
            _ => return Err(malformed()),
        };
        let (Some(Token::Eq), Some(Token::SingleQuotedString(value))) = (tokens.next(), tokens.next()) else {
            return Err(malformed());
        };
        options.insert(key, value);
        match tokens.next() {
            Some(Token::Comma) => continue,
            Some(Token::RParen) => break,
            _ => return Err(malformed()),
        }
    }
    Ok(Some(options))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints(sql: &str) -> Result<Vec<TableHint>> {
        table_hints(&Tokenizer::new(&FlinkDialect, sql).tokenize_with_location().unwrap())
    }

    #[test]
    fn reads_options_hints_after_table_names() {
        let found = hints(
            "INSERT INTO snk /*+ OPTIONS('sink.parallelism' = '3') */ SELECT * FROM src /*+ OPTIONS('a'='1', 'b'='2') */",
        )
        .unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].table, "snk");
        assert_eq!(found[0].options["sink.parallelism"], "3");
        assert_eq!(found[1].table, "src");
        assert_eq!(found[1].options.len(), 2);
        assert_eq!(found[1].position, Position { line: 1, column: 76 });
    }

    #[test]
    fn ignores_other_hints_and_comments_and_rejects_malformed_options() {
        assert!(hints("SELECT * FROM t /* a comment */ /*+ LOOKUP('table'='t') */").unwrap().is_empty());
        let error = hints("SELECT * FROM t /*+ OPTIONS('a' 'b') */").unwrap_err().to_string();
        assert!(error.contains("Invalid OPTIONS hint"), "{error}");
    }
}

/// A `STATE_TTL('name' = 'duration', …)` query hint: how long a join keeps the rows of the input
/// each name (a table's name or alias) stands for, over `table.exec.state.ttl`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateTtlHint {
    /// The TTL per input name.
    pub ttls: BTreeMap<String, std::time::Duration>,
    /// Where the hint starts.
    pub position: Position,
}

/// The query hints of one statement: `LOOKUP(…)` for lookup joins, `STATE_TTL(…)` for joins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryHints {
    /// The `LOOKUP` hints, in order.
    pub lookup: Vec<crate::lookup_options::LookupHint>,
    /// The `STATE_TTL` hints, in order.
    pub state_ttl: Vec<StateTtlHint>,
}

impl QueryHints {
    /// The query hints among a script's tokens, each with its position.
    ///
    /// # Errors
    /// A malformed hint (a `STATE_TTL` value that is not a duration names its key).
    pub fn of(tokens: &[TokenWithSpan]) -> Result<QueryHints> {
        let mut state_ttl = Vec::new();
        for (_, body, position) in hint_comments(tokens) {
            let Some(pairs) = hint_pairs(body, position, "STATE_TTL")? else { continue };
            let mut ttls = BTreeMap::new();
            for (name, value) in pairs {
                let ttl = weir_runtime::config::parse_duration(&name, &value)
                    .map_err(|e| Error::validation(position, format!("Invalid STATE_TTL hint: {e}")))?;
                ttls.insert(name, ttl);
            }
            state_ttl.push(StateTtlHint { ttls, position });
        }
        Ok(QueryHints { lookup: crate::lookup_options::lookup_hints(tokens)?, state_ttl })
    }

    /// The hints that start before `end` (all when `end` is at line 0), taken out of `self`.
    pub(crate) fn take_before(&mut self, end: Position) -> QueryHints {
        let before = |p: &Position| (p.line, p.column) < (end.line, end.column) || end.line == 0;
        let lookup_split = self.lookup.iter().position(|h| !before(&h.position)).unwrap_or(self.lookup.len());
        let ttl_split = self.state_ttl.iter().position(|h| !before(&h.position)).unwrap_or(self.state_ttl.len());
        let rest =
            QueryHints { lookup: self.lookup.split_off(lookup_split), state_ttl: self.state_ttl.split_off(ttl_split) };
        std::mem::replace(self, rest)
    }
}
