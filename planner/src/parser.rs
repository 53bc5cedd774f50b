//! Flink's SQL dialect on `sqlparser`: the statements of a script with their positions.
//!
//! Queries, INSERT, CREATE VIEW, DROP and SHOW go through `sqlparser`'s own parser. Flink's
//! own forms are read here on the same token stream: `CREATE TABLE` with computed columns,
//! `WATERMARK FOR`, `PRIMARY KEY (…) NOT ENFORCED` and `WITH ('k' = 'v')`; `SET 'k' = 'v'`;
//! `RESET`; `EXECUTE STATEMENT SET BEGIN … END`; `EXPLAIN [details] …`.

use std::collections::BTreeMap;

use sqlparser::ast::Spanned;
use sqlparser::ast::{self, ObjectName, Query};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};
use weir_runtime::DataType;

use crate::dialect::FlinkDialect;
use crate::error::{Error, Position, Result};
use crate::hints::{table_hints, TableHint};

/// A column of `CREATE TABLE`.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnDef {
    /// `name TYPE [NOT NULL]`
    Physical {
        /// Column name.
        name: String,
        /// Column type.
        data_type: DataType,
    },
    /// `name AS expression`
    Computed {
        /// Column name.
        name: String,
        /// The expression.
        expr: Box<ast::Expr>,
    },
    /// `name TYPE METADATA [FROM 'key'] [VIRTUAL]`
    Metadata {
        /// Column name.
        name: String,
        /// Column type.
        data_type: DataType,
        /// `FROM 'key'`; `None`: the column's name is the key.
        key: Option<String>,
        /// `VIRTUAL`: read only.
        is_virtual: bool,
    },
}

impl ColumnDef {
    /// The column's name.
    pub fn name(&self) -> &str {
        match self {
            ColumnDef::Physical { name, .. } | ColumnDef::Computed { name, .. } | ColumnDef::Metadata { name, .. } => {
                name
            }
        }
    }

    /// The column's definition after its name, as Flink's `SHOW CREATE TABLE` writes it
    /// (`INT`, `AS expr`, `TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL`).
    pub fn definition(&self) -> String {
        match self {
            ColumnDef::Physical { data_type, .. } => data_type.to_string(),
            ColumnDef::Computed { expr, .. } => format!("AS {expr}"),
            ColumnDef::Metadata { data_type, key, is_virtual, .. } => {
                let from = key.as_ref().map(|k| format!(" FROM '{}'", k.replace('\'', "''"))).unwrap_or_default();
                format!("{data_type} METADATA{from}{}", if *is_virtual { " VIRTUAL" } else { "" })
            }
        }
    }
}

/// `CREATE TABLE`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTable {
    /// The table's name (catalog and database stripped).
    pub name: String,
    /// Columns in order.
    pub columns: Vec<ColumnDef>,
    /// `PRIMARY KEY (…) NOT ENFORCED` columns.
    pub primary_key: Vec<String>,
    /// `WATERMARK FOR column AS expression`.
    pub watermark: Option<(String, ast::Expr)>,
    /// `PARTITIONED BY (…)` columns, in order; empty for a table without partitions.
    pub partition_keys: Vec<String>,
    /// `WITH (…)` options.
    pub options: BTreeMap<String, String>,
    /// Where each option's key is written, and where `WITH` is: errors about an option point there.
    pub option_positions: BTreeMap<String, Position>,
    /// `IF NOT EXISTS`
    pub if_not_exists: bool,
    /// `COMMENT '…'` of the table.
    pub comment: Option<String>,
    /// `COMMENT '…'` of its columns, by column name.
    pub column_comments: BTreeMap<String, String>,
    /// `LIKE source [(options)]`: the table whose definition this one starts from.
    pub like: Option<Like>,
    /// `AS query` (CREATE TABLE AS SELECT): the columns are the query's, its rows go in.
    pub query: Option<Box<Query>>,
}

/// How `CREATE TABLE … LIKE` takes a part of the source table's definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LikeMerge {
    /// `INCLUDING`: taken; the new table may not declare it again (options: no key twice).
    Including,
    /// `EXCLUDING`: left out.
    Excluding,
    /// `OVERWRITING`: taken, and what the new table declares wins.
    Overwriting,
}

/// `LIKE source (INCLUDING ALL | EXCLUDING OPTIONS | …)`, with Flink's defaults (all parts
/// included, options overwritten).
#[derive(Debug, Clone, PartialEq)]
pub struct Like {
    /// The source table.
    pub source: String,
    /// `CONSTRAINTS`: the primary key.
    pub constraints: LikeMerge,
    /// `GENERATED`: computed columns.
    pub generated: LikeMerge,
    /// `METADATA`: metadata columns.
    pub metadata: LikeMerge,
    /// `OPTIONS`: the `WITH` options.
    pub options: LikeMerge,
    /// `PARTITIONS`: `PARTITIONED BY`.
    pub partitions: LikeMerge,
    /// `WATERMARKS`: the watermark.
    pub watermarks: LikeMerge,
}

/// A change `ALTER TABLE` makes.
#[derive(Debug, Clone, PartialEq)]
pub enum AlterTable {
    /// `RENAME TO new_name`
    Rename(String),
    /// `SET ('key' = 'value', …)`
    Set(BTreeMap<String, String>),
    /// `RESET ('key', …)`
    Reset(Vec<String>),
    /// `ADD (column, …)` or `ADD column`, each with its comment.
    Add(Vec<(ColumnDef, Option<String>)>),
    /// `MODIFY (column, …)` or `MODIFY column`: new definitions of existing columns.
    Modify(Vec<(ColumnDef, Option<String>)>),
    /// `DROP (name, …)` or `DROP name`
    Drop(Vec<String>),
    /// `ADD WATERMARK FOR column AS expression` (`MODIFY` when `replace`).
    Watermark {
        /// The rowtime column and the watermark expression.
        watermark: Box<(String, ast::Expr)>,
        /// `MODIFY WATERMARK`: the table has one to replace.
        replace: bool,
    },
    /// `DROP WATERMARK`
    DropWatermark,
}

/// `INSERT INTO table [(columns)] query [ON CONFLICT DO …]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Insert {
    /// The sink table.
    pub table: String,
    /// The explicit target columns, if any.
    pub columns: Vec<String>,
    /// The rows to insert.
    pub source: Box<Query>,
    /// The `ON CONFLICT` clause, if any.
    pub on_conflict: Option<ConflictStrategy>,
}

/// Flink's `ON CONFLICT` clause: what an upsert sink does when rows of several query keys
/// meet on one primary key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictStrategy {
    /// `DO NOTHING`: keep the first row.
    Nothing,
    /// `DO ERROR`: fail the job.
    Error,
    /// `DO DEDUPLICATE`: the latest row wins, rolling back when it is retracted.
    Deduplicate,
}

impl ConflictStrategy {
    /// The name Flink prints in plans.
    pub fn name(self) -> &'static str {
        match self {
            ConflictStrategy::Nothing => "NOTHING",
            ConflictStrategy::Error => "ERROR",
            ConflictStrategy::Deduplicate => "DEDUPLICATE",
        }
    }
}

/// Takes the `ON CONFLICT DO NOTHING | ERROR | DEDUPLICATE` clauses out of a script's tokens
/// (`sqlparser` reads only PostgreSQL's form); returns the rest and where each clause stood.
fn take_conflict_clauses(tokens: Vec<TokenWithSpan>) -> (Vec<TokenWithSpan>, Vec<(Position, ConflictStrategy)>) {
    let word = |t: &TokenWithSpan| match &t.token {
        Token::Word(w) => Some(w.value.to_ascii_uppercase()),
        _ => None,
    };
    let mut kept = Vec::with_capacity(tokens.len());
    let mut clauses = Vec::new();
    let mut at = 0;
    while at < tokens.len() {
        // The next four words, skipping whitespace.
        let words: Vec<(usize, String)> = tokens[at..]
            .iter()
            .enumerate()
            .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)))
            .take(4)
            .map(|(i, t)| (at + i, word(t).unwrap_or_default()))
            .collect();
        let strategy = match words.iter().map(|(_, w)| w.as_str()).collect::<Vec<_>>()[..] {
            ["ON", "CONFLICT", "DO", "NOTHING"] => Some(ConflictStrategy::Nothing),
            ["ON", "CONFLICT", "DO", "ERROR"] => Some(ConflictStrategy::Error),
            ["ON", "CONFLICT", "DO", "DEDUPLICATE"] => Some(ConflictStrategy::Deduplicate),
            _ => None,
        };
        match strategy {
            Some(strategy) if words[0].0 == at => {
                let start = tokens[at].span.start;
                clauses.push((Position { line: start.line, column: start.column }, strategy));
                at = words[3].0 + 1;
            }
            _ => {
                kept.push(tokens[at].clone());
                at += 1;
            }
        }
    }
    (kept, clauses)
}

/// Gives each INSERT of `statement` the `ON CONFLICT` clause that follows its query; `false`
/// when a clause follows no INSERT.
fn attach_conflict_clauses(statement: &mut Statement, clauses: &[(Position, ConflictStrategy)]) -> bool {
    let inserts: Vec<&mut Insert> = match statement {
        Statement::Insert(insert) => vec![insert],
        Statement::StatementSet(inserts) => inserts.iter_mut().collect(),
        Statement::Explain { statement, .. } => return attach_conflict_clauses(statement, clauses),
        _ => return clauses.is_empty(),
    };
    let mut inserts: Vec<(Position, &mut Insert)> = inserts
        .into_iter()
        .map(|i| {
            let end = i.source.span().end;
            (Position { line: end.line, column: end.column }, i)
        })
        .collect();
    for (position, strategy) in clauses {
        let key = |p: &Position| (p.line, p.column);
        match inserts.iter_mut().rev().find(|(end, _)| key(end) <= key(position)) {
            Some((_, insert)) => insert.on_conflict = Some(*strategy),
            None => return false,
        }
    }
    true
}

/// A statement of a script.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    /// `CREATE [TEMPORARY] TABLE`
    CreateTable(Box<CreateTable>),
    /// `CREATE [TEMPORARY] VIEW name AS query`
    CreateView {
        /// The view's name.
        name: String,
        /// Its query.
        query: Box<Query>,
        /// `IF NOT EXISTS`
        if_not_exists: bool,
    },
    /// `DROP TABLE` / `DROP VIEW`
    Drop {
        /// The table or view.
        name: String,
        /// `IF EXISTS`
        if_exists: bool,
        /// Whether a view is dropped.
        view: bool,
    },
    /// `SET 'key' = 'value'`, or `SET` alone (`key` `None`) to list the options.
    Set {
        /// The option key.
        key: Option<String>,
        /// The value.
        value: String,
    },
    /// `RESET 'key'` or `RESET`.
    Reset(Option<String>),
    /// `CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] name AS 'class' [LANGUAGE …]`
    CreateFunction {
        /// The function's name (its last part, when qualified).
        name: String,
        /// The class that implements it.
        class: String,
        /// `JAVA` (the default), `SCALA` or `PYTHON`.
        language: String,
        /// `IF NOT EXISTS`
        if_not_exists: bool,
    },
    /// `DROP [TEMPORARY [SYSTEM]] FUNCTION [IF EXISTS] name`
    DropFunction {
        /// The function's name.
        name: String,
        /// `IF EXISTS`
        if_exists: bool,
    },
    /// `SHOW TABLES [FROM | IN [catalog.]database] [[NOT] LIKE 'pattern']`
    ShowTables {
        /// `FROM | IN [catalog.]database`: another database than the current one.
        database: Option<String>,
        /// The pattern, and whether it is negated.
        like: Option<(bool, String)>,
    },
    /// `SHOW CATALOGS [[NOT] LIKE 'pattern']`
    ShowCatalogs {
        /// The pattern, and whether it is negated.
        like: Option<(bool, String)>,
    },
    /// `SHOW DATABASES [FROM | IN catalog] [[NOT] LIKE 'pattern']`
    ShowDatabases {
        /// `FROM | IN catalog`: another catalog than the current one.
        catalog: Option<String>,
        /// The pattern, and whether it is negated.
        like: Option<(bool, String)>,
    },
    /// `SHOW CURRENT CATALOG` (`catalog`) or `SHOW CURRENT DATABASE`.
    ShowCurrent {
        /// Whether the catalog is asked for.
        catalog: bool,
    },
    /// `SHOW VIEWS [FROM | IN [catalog.]database] [[NOT] LIKE 'pattern']`
    ShowViews {
        /// `FROM | IN [catalog.]database`: another database than the current one.
        database: Option<String>,
        /// The pattern, and whether it is negated.
        like: Option<(bool, String)>,
    },
    /// `SHOW COLUMNS FROM | IN table [[NOT] LIKE 'pattern']`
    ShowColumns {
        /// The table.
        table: String,
        /// The pattern, and whether it is negated.
        like: Option<(bool, String)>,
    },
    /// `SHOW CREATE TABLE name` / `SHOW CREATE VIEW name`
    ShowCreate {
        /// The table or view.
        name: String,
        /// Whether a view is asked for.
        view: bool,
    },
    /// `SHOW [USER] FUNCTIONS [[NOT] LIKE 'pattern']`
    ShowFunctions {
        /// Only the functions created with `CREATE FUNCTION`.
        user: bool,
        /// The pattern, and whether it is negated.
        like: Option<(bool, String)>,
    },
    /// `USE [CATALOG] name`
    Use {
        /// The database (`catalog.database` or `database`), or the catalog.
        name: String,
        /// `USE CATALOG`
        catalog: bool,
    },
    /// `CREATE CATALOG [IF NOT EXISTS] name WITH (…)` or `CREATE DATABASE [IF NOT EXISTS]
    /// [catalog.]name [COMMENT …] [WITH (…)]`
    CreateNamespace {
        /// `CATALOG` or `DATABASE`.
        kind: String,
        /// Its name as written.
        name: String,
        /// `IF NOT EXISTS`
        if_not_exists: bool,
        /// The `WITH (…)` options.
        options: Vec<(String, String)>,
    },
    /// `DROP CATALOG [IF EXISTS] name` or `DROP DATABASE [IF EXISTS] [catalog.]name [RESTRICT |
    /// CASCADE]`
    DropNamespace {
        /// `CATALOG` or `DATABASE`.
        kind: String,
        /// Its name as written.
        name: String,
        /// `IF EXISTS`
        if_exists: bool,
        /// `CASCADE`: a database's tables and views go with it.
        cascade: bool,
    },
    /// `ALTER TABLE table change`
    AlterTable {
        /// The table.
        table: String,
        /// What changes.
        change: AlterTable,
    },
    /// `SHOW JOBS`: the jobs this session started.
    ShowJobs,
    /// `DESCRIBE JOB '<id>'`
    DescribeJob(String),
    /// `STOP JOB '<id>' [WITH SAVEPOINT] [WITH DRAIN]`
    StopJob {
        /// The job's id.
        id: String,
        /// `WITH SAVEPOINT`: take a savepoint first.
        savepoint: bool,
        /// `WITH DRAIN`: end the job's event time first (weir refuses it).
        drain: bool,
    },
    /// `DESCRIBE table`
    Describe(String),
    /// `INSERT INTO …`
    Insert(Insert),
    /// A query whose rows are printed.
    Query(Box<Query>),
    /// `DELETE FROM t [WHERE condition]`
    Delete {
        /// The table.
        table: String,
        /// The rows to delete; all without a condition.
        selection: Option<Box<ast::Expr>>,
    },
    /// `UPDATE t SET column = expression, … [WHERE condition]`
    Update {
        /// The table.
        table: String,
        /// The columns set and their new values, over the row's old values.
        assignments: Vec<(String, ast::Expr)>,
        /// The rows to update; all without a condition.
        selection: Option<Box<ast::Expr>>,
    },
    /// `EXECUTE STATEMENT SET BEGIN INSERT …; … END`
    StatementSet(Vec<Insert>),
    /// `EXPLAIN [PLAN FOR | details] statement`
    Explain {
        /// `CHANGELOG_MODE`, `JSON_EXECUTION_PLAN`, `ESTIMATED_COST`, … as written.
        details: Vec<String>,
        /// What is explained.
        statement: Box<Statement>,
    },
}

/// A statement and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    /// Where the statement starts.
    pub position: Position,
    /// The statement.
    pub statement: Statement,
    /// Its `/*+ OPTIONS(…) */` table hints.
    pub hints: Vec<TableHint>,
    /// Its `/*+ LOOKUP(…) */` and `/*+ STATE_TTL(…) */` query hints.
    pub query_hints: crate::hints::QueryHints,
    /// Where each of its join operators (`JOIN`, `LEFT JOIN`, `CROSS JOIN`, …) starts, in
    /// order: the syntax tree keeps only the joined table's place, and a refused join is
    /// reported at its operator.
    pub join_operators: Vec<Position>,
}

/// Where each join operator of `tokens` starts: its `JOIN` keyword or the first of the words
/// before it that qualify the join (`NATURAL`, `LEFT`, `FULL OUTER`, `CROSS`, …).
fn join_operators(tokens: &[TokenWithSpan]) -> Vec<Position> {
    let keyword = |t: &TokenWithSpan| match &t.token {
        Token::Word(w) => Some(w.keyword),
        _ => None,
    };
    let qualifies = |k: Keyword| {
        matches!(
            k,
            Keyword::NATURAL
                | Keyword::LEFT
                | Keyword::RIGHT
                | Keyword::FULL
                | Keyword::INNER
                | Keyword::OUTER
                | Keyword::CROSS
                | Keyword::SEMI
                | Keyword::ANTI
        )
    };
    let significant: Vec<&TokenWithSpan> = tokens.iter().filter(|t| !matches!(t.token, Token::Whitespace(_))).collect();
    let mut starts = Vec::new();
    for (i, token) in significant.iter().enumerate() {
        if keyword(token) != Some(Keyword::JOIN) {
            continue;
        }
        let mut first = i;
        while first > 0 && keyword(significant[first - 1]).is_some_and(qualifies) {
            first -= 1;
        }
        let start = significant[first].span.start;
        starts.push(Position { line: start.line, column: start.column });
    }
    starts
}

/// The position of a parser error, read from its message.
fn parse_error(e: ParserError) -> Error {
    let message = match e {
        ParserError::TokenizerError(m) | ParserError::ParserError(m) => m,
        ParserError::RecursionLimitExceeded => "the statement is nested too deeply".to_string(),
    };
    let number_after = |label: &str| {
        message.rfind(label).and_then(|i| {
            let digits: String = message[i + label.len()..].chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u64>().ok()
        })
    };
    let position =
        Position { line: number_after("Line: ").unwrap_or(1), column: number_after("Column: ").unwrap_or(1) };
    let message = message.split(" at Line: ").next().unwrap_or(&message).to_string();
    Error::Parse { position, message }
}

/// The last part of a possibly qualified name (`t.c` is `c`).
pub fn last_part(name: &ObjectName) -> String {
    name.0.last().and_then(|p| p.as_ident()).map_or_else(|| name.to_string(), |i| i.value.clone())
}

/// The parts of `name` as written, without quotes.
fn parts(name: &ObjectName) -> Vec<String> {
    name.0.iter().map(|p| p.as_ident().map_or_else(|| p.to_string(), |i| i.value.clone())).collect()
}

/// The name of a table, view or function as written: its parts joined with `.` (`t`,
/// `sales.t`, `mem.sales.t`). The catalog resolves it against the current catalog and database
/// (`Catalog::key`).
pub fn table_name(name: &ObjectName) -> String {
    parts(name).join(".")
}

/// The name a statement creates a table, view or function under, as written ([`table_name`]).
fn created_name(name: &ObjectName) -> Result<String, ParserError> {
    Ok(table_name(name))
}

/// The deepest nesting of parentheses a statement may have. Generated SQL nests deeply (Flink's
/// parser takes hundreds of levels); past this a statement is refused at once, naming where.
pub const MAX_NESTING: usize = 1000;

/// Refuses a script whose parentheses nest more than [`MAX_NESTING`] deep, before parsing: the
/// parser's own limit, reached inside it, would make it retry alternatives without end.
///
/// # Errors
/// [`Error::Parse`] at the parenthesis that goes one level too deep.
fn check_nesting(tokens: &[TokenWithSpan]) -> Result<()> {
    let mut depth = 0usize;
    for token in tokens {
        match token.token {
            Token::LParen => {
                depth += 1;
                if depth > MAX_NESTING {
                    let at = Position { line: token.span.start.line, column: token.span.start.column };
                    return Err(Error::Parse {
                        position: at,
                        message: format!(
                            "The statement nests more than {MAX_NESTING} levels of parentheses at line {}, column {}.",
                            at.line, at.column
                        ),
                    });
                }
            }
            Token::RParen => depth = depth.saturating_sub(1),
            Token::SemiColon => depth = 0,
            _ => {}
        }
    }
    Ok(())
}

/// Parses a whole script.
///
/// # Errors
/// [`Error::Parse`] at the first text that is not a statement weir reads.
pub fn parse_script(sql: &str) -> Result<Vec<Located>> {
    let dialect = FlinkDialect;
    let tokens = Tokenizer::new(&dialect, sql).tokenize_with_location().map_err(|e| parse_error(e.into()))?;
    check_nesting(&tokens)?;
    let joins = join_operators(&tokens);
    let mut hints = table_hints(&tokens)?.into_iter().peekable();
    let mut query_hints = crate::hints::QueryHints::of(&tokens)?;
    let (tokens, conflicts) = take_conflict_clauses(tokens);
    // Each level of parentheses takes a few of the parser's recursion steps.
    let mut parser =
        Parser::new(&dialect).with_recursion_limit(4 * MAX_NESTING + 64).with_tokens_with_locations(tokens);
    let mut statements = Vec::new();
    loop {
        while parser.consume_token(&Token::SemiColon) {}
        let next = parser.peek_token();
        if next.token == Token::EOF {
            return Ok(statements);
        }
        let position = Position { line: next.span.start.line, column: next.span.start.column };
        let mut statement = parse_statement(&mut parser).map_err(|e| {
            // Errors without a place of their own (an unsupported statement) are the statement's.
            let located =
                matches!(&e, ParserError::ParserError(m) | ParserError::TokenizerError(m) if m.contains(" at Line: "));
            match parse_error(e) {
                Error::Parse { message, .. } if !located => Error::Parse { position, message },
                other => other,
            }
        })?;
        // The statement's hints and clauses are those before the next token.
        let end = parser.peek_token().span.start;
        let in_statement = |p: &Position| {
            (p.line, p.column) >= (position.line, position.column)
                && ((p.line, p.column) < (end.line, end.column) || end.line == 0)
        };
        let own_clauses: Vec<(Position, ConflictStrategy)> =
            conflicts.iter().filter(|(p, _)| in_statement(p)).copied().collect();
        if !attach_conflict_clauses(&mut statement, &own_clauses) {
            return Err(Error::Parse {
                position: own_clauses[0].0,
                message: "Encountered \"ON CONFLICT\": only an INSERT takes an ON CONFLICT clause".into(),
            });
        }
        let before_end = |h: &TableHint| (h.position.line, h.position.column) < (end.line, end.column);
        let mut own = Vec::new();
        while let Some(hint) = hints.next_if(|h| before_end(h) || end.line == 0) {
            own.push(hint);
        }
        let own_query_hints = query_hints.take_before(Position { line: end.line, column: end.column });
        let join_operators = joins.iter().filter(|p| in_statement(p)).copied().collect();
        statements.push(Located { position, statement, hints: own, query_hints: own_query_hints, join_operators });
        if !parser.consume_token(&Token::SemiColon) && parser.peek_token().token != Token::EOF {
            let t = parser.peek_token();
            return Err(Error::Parse {
                position: Position { line: t.span.start.line, column: t.span.start.column },
                message: format!("Expected: end of statement, found: {}", t.token),
            });
        }
    }
}

/// `CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] name AS 'class' [LANGUAGE JAVA|SCALA|PYTHON]`
/// or `DROP [TEMPORARY [SYSTEM]] FUNCTION [IF EXISTS] name`, as Flink writes them; `None` for
/// other statements (nothing is consumed).
fn parse_function_statement(parser: &mut Parser) -> Result<Option<Statement>, ParserError> {
    let create = is_word(parser, 0, "CREATE");
    if !create && !is_word(parser, 0, "DROP") {
        return Ok(None);
    }
    let mut at = 1;
    if is_word(parser, at, "TEMPORARY") {
        at += 1;
        if is_word(parser, at, "SYSTEM") {
            at += 1;
        }
    }
    if !is_word(parser, at, "FUNCTION") {
        return Ok(None);
    }
    for _ in 0..=at {
        parser.next_token();
    }
    if create {
        let if_not_exists = parser.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
        let name = created_name(&parser.parse_object_name(false)?)?;
        parser.expect_keyword(Keyword::AS)?;
        let class = parser.parse_literal_string()?;
        let language = if parser.parse_keyword(Keyword::LANGUAGE) {
            parser.parse_identifier()?.value.to_ascii_uppercase()
        } else {
            "JAVA".to_string()
        };
        if !["JAVA", "SCALA", "PYTHON"].contains(&language.as_str()) {
            return parser.expected("JAVA, SCALA or PYTHON after LANGUAGE", parser.peek_token());
        }
        return Ok(Some(Statement::CreateFunction { name, class, language, if_not_exists }));
    }
    let if_exists = parser.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let name = table_name(&parser.parse_object_name(false)?);
    Ok(Some(Statement::DropFunction { name, if_exists }))
}

fn is_word(parser: &Parser, index: usize, word: &str) -> bool {
    matches!(&parser.peek_nth_token(index).token, Token::Word(w) if w.value.eq_ignore_ascii_case(word))
}

fn parse_statement(parser: &mut Parser) -> Result<Statement, ParserError> {
    if is_word(parser, 0, "SET") {
        parser.next_token();
        if matches!(parser.peek_token().token, Token::SemiColon | Token::EOF) {
            return Ok(Statement::Set { key: None, value: String::new() });
        }
        let key = parser.parse_literal_string()?;
        parser.expect_token(&Token::Eq)?;
        let value = parser.parse_literal_string()?;
        return Ok(Statement::Set { key: Some(key), value });
    }
    if is_word(parser, 0, "RESET") {
        parser.next_token();
        if matches!(parser.peek_token().token, Token::SemiColon | Token::EOF) {
            return Ok(Statement::Reset(None));
        }
        return Ok(Statement::Reset(Some(parser.parse_literal_string()?)));
    }
    if let Some(statement) = parse_function_statement(parser)? {
        return Ok(statement);
    }
    if let Some(statement) = parse_catalog_statement(parser)? {
        return Ok(statement);
    }
    if is_word(parser, 0, "SHOW") && is_word(parser, 1, "JOBS") {
        parser.next_token();
        parser.next_token();
        return Ok(Statement::ShowJobs);
    }
    if (is_word(parser, 0, "DESCRIBE") || is_word(parser, 0, "DESC")) && is_word(parser, 1, "JOB") {
        parser.next_token();
        parser.next_token();
        return Ok(Statement::DescribeJob(parser.parse_literal_string()?));
    }
    if is_word(parser, 0, "STOP") && is_word(parser, 1, "JOB") {
        parser.next_token();
        parser.next_token();
        let id = parser.parse_literal_string()?;
        let (mut savepoint, mut drain) = (false, false);
        while parser.parse_keyword(Keyword::WITH) {
            if is_word(parser, 0, "SAVEPOINT") {
                savepoint = true;
            } else if is_word(parser, 0, "DRAIN") {
                drain = true;
            } else {
                return parser.expected("SAVEPOINT or DRAIN after WITH", parser.peek_token());
            }
            parser.next_token();
        }
        return Ok(Statement::StopJob { id, savepoint, drain });
    }
    if is_word(parser, 0, "EXECUTE") && is_word(parser, 1, "STATEMENT") {
        parser.next_token();
        parser.next_token();
        return parse_statement_set(parser).map(Statement::StatementSet);
    }
    if is_word(parser, 0, "EXPLAIN") {
        parser.next_token();
        let mut details = Vec::new();
        if parser.parse_keywords(&[Keyword::PLAN, Keyword::FOR]) {
        } else {
            while let Token::Word(w) = &parser.peek_token().token {
                let detail = w.value.to_ascii_uppercase();
                if !["CHANGELOG_MODE", "JSON_EXECUTION_PLAN", "ESTIMATED_COST", "PLAN_ADVICE"]
                    .contains(&detail.as_str())
                {
                    break;
                }
                details.push(detail);
                parser.next_token();
                let _ = parser.consume_token(&Token::Comma);
            }
        }
        let statement = if is_word(parser, 0, "STATEMENT") {
            parser.next_token();
            Statement::StatementSet(parse_statement_set(parser)?)
        } else {
            parse_statement(parser)?
        };
        return Ok(Statement::Explain { details, statement: Box::new(statement) });
    }
    if is_word(parser, 0, "CREATE")
        && (is_word(parser, 1, "TABLE") || is_word(parser, 1, "TEMPORARY") && is_word(parser, 2, "TABLE"))
    {
        parser.next_token();
        let _temporary = parser.parse_keyword(Keyword::TEMPORARY);
        parser.next_token();
        return parse_create_table(parser).map(|t| Statement::CreateTable(Box::new(t)));
    }
    let statement = parser.parse_statement()?;
    convert(statement)
}

/// The SHOW, USE, CREATE CATALOG / DATABASE and ALTER TABLE statements of Flink's SQL client.
fn parse_catalog_statement(parser: &mut Parser) -> Result<Option<Statement>, ParserError> {
    let take = |parser: &mut Parser, words: &[&str]| {
        if words.iter().enumerate().all(|(i, w)| is_word(parser, i, w)) {
            words.iter().for_each(|_| {
                parser.next_token();
            });
            true
        } else {
            false
        }
    };
    let object = |parser: &mut Parser| parser.parse_object_name(false).map(|n| table_name(&n));
    let from = |parser: &mut Parser| -> Result<Option<String>, ParserError> {
        if take(parser, &["FROM"]) || take(parser, &["IN"]) {
            return Ok(Some(table_name(&parser.parse_object_name(false)?)));
        }
        Ok(None)
    };
    let like = |parser: &mut Parser| -> Result<Option<(bool, String)>, ParserError> {
        let negated = take(parser, &["NOT"]);
        if take(parser, &["LIKE"]) {
            return Ok(Some((negated, parser.parse_literal_string()?)));
        }
        if negated {
            return parser.expected("LIKE after NOT", parser.peek_token());
        }
        Ok(None)
    };
    if take(parser, &["SHOW", "CATALOGS"]) {
        return Ok(Some(Statement::ShowCatalogs { like: like(parser)? }));
    }
    if take(parser, &["SHOW", "DATABASES"]) {
        let catalog = from(parser)?;
        return Ok(Some(Statement::ShowDatabases { catalog, like: like(parser)? }));
    }
    if take(parser, &["SHOW", "TABLES"]) {
        let database = from(parser)?;
        return Ok(Some(Statement::ShowTables { database, like: like(parser)? }));
    }
    if take(parser, &["SHOW", "CURRENT", "CATALOG"]) {
        return Ok(Some(Statement::ShowCurrent { catalog: true }));
    }
    if take(parser, &["SHOW", "CURRENT", "DATABASE"]) {
        return Ok(Some(Statement::ShowCurrent { catalog: false }));
    }
    if take(parser, &["SHOW", "VIEWS"]) {
        let database = from(parser)?;
        return Ok(Some(Statement::ShowViews { database, like: like(parser)? }));
    }
    if take(parser, &["SHOW", "USER", "FUNCTIONS"]) {
        return Ok(Some(Statement::ShowFunctions { user: true, like: like(parser)? }));
    }
    if take(parser, &["SHOW", "FUNCTIONS"]) {
        return Ok(Some(Statement::ShowFunctions { user: false, like: like(parser)? }));
    }
    if take(parser, &["SHOW", "CREATE", "TABLE"]) {
        return Ok(Some(Statement::ShowCreate { name: object(parser)?, view: false }));
    }
    if take(parser, &["SHOW", "CREATE", "VIEW"]) {
        return Ok(Some(Statement::ShowCreate { name: object(parser)?, view: true }));
    }
    if take(parser, &["SHOW", "COLUMNS"]) {
        if !take(parser, &["FROM"]) && !take(parser, &["IN"]) {
            return parser.expected("FROM or IN", parser.peek_token());
        }
        let table = object(parser)?;
        let negated = take(parser, &["NOT"]);
        let like = if take(parser, &["LIKE"]) { Some((negated, parser.parse_literal_string()?)) } else { None };
        return Ok(Some(Statement::ShowColumns { table, like }));
    }
    if take(parser, &["USE", "CATALOG"]) {
        return Ok(Some(Statement::Use { name: parser.parse_identifier()?.value, catalog: true }));
    }
    if is_word(parser, 0, "USE") && !is_word(parser, 1, "MODULES") {
        parser.next_token();
        let name = parser.parse_object_name(false)?;
        let name = name.0.iter().filter_map(|p| p.as_ident()).map(|i| i.value.clone()).collect::<Vec<_>>().join(".");
        return Ok(Some(Statement::Use { name, catalog: false }));
    }
    for kind in ["CATALOG", "DATABASE"] {
        if take(parser, &["CREATE", kind]) {
            let if_not_exists = parser.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
            let name = table_name(&parser.parse_object_name(false)?);
            if parser.parse_keyword(Keyword::COMMENT) {
                parser.parse_literal_string()?;
            }
            let mut options = Vec::new();
            if parser.parse_keyword(Keyword::WITH) {
                parser.expect_token(&Token::LParen)?;
                options = parser.parse_comma_separated(|p| {
                    let key = p.parse_literal_string()?;
                    p.expect_token(&Token::Eq)?;
                    Ok((key, p.parse_literal_string()?))
                })?;
                parser.expect_token(&Token::RParen)?;
            }
            return Ok(Some(Statement::CreateNamespace { kind: kind.into(), name, if_not_exists, options }));
        }
        if take(parser, &["DROP", kind]) {
            let if_exists = parser.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
            let name = table_name(&parser.parse_object_name(false)?);
            let cascade = take(parser, &["CASCADE"]);
            if !cascade {
                take(parser, &["RESTRICT"]);
            }
            return Ok(Some(Statement::DropNamespace { kind: kind.into(), name, if_exists, cascade }));
        }
    }
    if take(parser, &["ALTER", "TABLE"]) {
        let _if_exists = parser.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
        let table = object(parser)?;
        let change = if take(parser, &["RENAME", "TO"]) {
            AlterTable::Rename(created_name(&parser.parse_object_name(false)?)?)
        } else if take(parser, &["SET"]) {
            parser.expect_token(&Token::LParen)?;
            let pairs = parser.parse_comma_separated(|p| {
                let key = p.parse_literal_string()?;
                p.expect_token(&Token::Eq)?;
                Ok((key, p.parse_literal_string()?))
            })?;
            parser.expect_token(&Token::RParen)?;
            AlterTable::Set(pairs.into_iter().collect())
        } else if take(parser, &["RESET"]) {
            parser.expect_token(&Token::LParen)?;
            let keys = parser.parse_comma_separated(Parser::parse_literal_string)?;
            parser.expect_token(&Token::RParen)?;
            AlterTable::Reset(keys)
        } else if (is_word(parser, 0, "ADD") || is_word(parser, 0, "MODIFY")) && is_word(parser, 1, "WATERMARK") {
            let replace = take(parser, &["MODIFY"]);
            if !replace {
                take(parser, &["ADD"]);
            }
            take(parser, &["WATERMARK"]);
            parser.expect_keyword(Keyword::FOR)?;
            let column = parser.parse_identifier()?.value;
            parser.expect_keyword(Keyword::AS)?;
            AlterTable::Watermark { watermark: Box::new((column, parser.parse_expr()?)), replace }
        } else if take(parser, &["DROP", "WATERMARK"]) {
            AlterTable::DropWatermark
        } else if take(parser, &["ADD"]) || is_word(parser, 0, "MODIFY") {
            let modify = take(parser, &["MODIFY"]);
            let parenthesized = parser.consume_token(&Token::LParen);
            let mut columns = Vec::new();
            loop {
                columns.push(parse_column(parser)?);
                if !parenthesized || !parser.consume_token(&Token::Comma) {
                    break;
                }
            }
            if parenthesized {
                parser.expect_token(&Token::RParen)?;
            }
            if modify {
                AlterTable::Modify(columns)
            } else {
                AlterTable::Add(columns)
            }
        } else if take(parser, &["DROP"]) {
            let names = if parser.consume_token(&Token::LParen) {
                let names = parser.parse_comma_separated(|p| p.parse_identifier())?;
                parser.expect_token(&Token::RParen)?;
                names
            } else {
                vec![parser.parse_identifier()?]
            };
            AlterTable::Drop(names.into_iter().map(|i| i.value).collect())
        } else {
            return parser.expected("RENAME TO, SET, RESET, ADD, MODIFY or DROP", parser.peek_token());
        };
        return Ok(Some(Statement::AlterTable { table, change }));
    }
    Ok(None)
}

/// A column definition of `ALTER TABLE … ADD | MODIFY`: `name type [COMMENT '…']` or
/// `name AS expression`.
fn parse_column(parser: &mut Parser) -> Result<(ColumnDef, Option<String>), ParserError> {
    let name = parser.parse_identifier()?.value;
    let column = if parser.parse_keyword(Keyword::AS) {
        ColumnDef::Computed { name, expr: Box::new(parser.parse_expr()?) }
    } else {
        ColumnDef::Physical { data_type: crate::column_type::parse_column_type(parser, &name)?, name }
    };
    let comment = if parser.parse_keyword(Keyword::COMMENT) { Some(parser.parse_literal_string()?) } else { None };
    let _ = is_word(parser, 0, "FIRST") && {
        parser.next_token();
        true
    };
    Ok((column, comment))
}

fn parse_statement_set(parser: &mut Parser) -> Result<Vec<Insert>, ParserError> {
    parser.expect_keyword(Keyword::SET)?;
    parser.expect_keyword(Keyword::BEGIN)?;
    let mut inserts = Vec::new();
    loop {
        while parser.consume_token(&Token::SemiColon) {}
        if parser.parse_keyword(Keyword::END) {
            return Ok(inserts);
        }
        match convert(parser.parse_statement()?)? {
            Statement::Insert(insert) => inserts.push(insert),
            other => {
                return Err(ParserError::ParserError(format!(
                    "Only INSERT statements belong in a statement set, found {}",
                    describe(&other)
                )))
            }
        }
    }
}

fn describe(statement: &Statement) -> &'static str {
    match statement {
        Statement::CreateTable(_) | Statement::CreateView { .. } => "CREATE",
        Statement::Query(_) => "SELECT",
        _ => "another statement",
    }
}

fn parse_create_table(parser: &mut Parser) -> Result<CreateTable, ParserError> {
    let if_not_exists = parser.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
    let name = created_name(&parser.parse_object_name(false)?)?;
    let mut table = CreateTable {
        name,
        columns: Vec::new(),
        primary_key: Vec::new(),
        watermark: None,
        partition_keys: Vec::new(),
        options: BTreeMap::new(),
        option_positions: BTreeMap::new(),
        if_not_exists,
        comment: None,
        column_comments: BTreeMap::new(),
        like: None,
        query: None,
    };
    // `CREATE TABLE t WITH (…) LIKE s` and `… AS SELECT` may leave the columns out.
    if parser.consume_token(&Token::LParen) {
        parse_table_elements(parser, &mut table)?;
    }
    parse_table_tail(parser, &mut table)?;
    Ok(table)
}

/// The columns and constraints between the parentheses of `CREATE TABLE name (…)`, and the
/// closing parenthesis.
fn parse_table_elements(parser: &mut Parser, table: &mut CreateTable) -> Result<(), ParserError> {
    loop {
        if is_word(parser, 0, "WATERMARK") {
            parser.next_token();
            parser.expect_keyword(Keyword::FOR)?;
            let column = parser.parse_identifier()?.value;
            parser.expect_keyword(Keyword::AS)?;
            table.watermark = Some((column, parser.parse_expr()?));
        } else if parser.parse_keyword(Keyword::CONSTRAINT) {
            parser.parse_identifier()?;
            parse_primary_key(parser, table)?;
        } else if matches!(parser.peek_token().token, Token::Word(ref w) if w.keyword == Keyword::PRIMARY) {
            parse_primary_key(parser, table)?;
        } else {
            let name = parser.parse_identifier()?.value;
            if parser.parse_keyword(Keyword::AS) {
                table.columns.push(ColumnDef::Computed { name, expr: Box::new(parser.parse_expr()?) });
            } else {
                let data_type = crate::column_type::parse_column_type(parser, &name)?;
                if parser.parse_keyword(Keyword::PRIMARY) {
                    parser.expect_keyword(Keyword::KEY)?;
                    parse_not_enforced(parser)?;
                    table.primary_key = vec![name.clone()];
                }
                if is_word(parser, 0, "METADATA") {
                    parser.next_token();
                    let key =
                        if parser.parse_keyword(Keyword::FROM) { Some(parser.parse_literal_string()?) } else { None };
                    let is_virtual = is_word(parser, 0, "VIRTUAL");
                    if is_virtual {
                        parser.next_token();
                    }
                    if parser.parse_keyword(Keyword::COMMENT) {
                        table.column_comments.insert(name.clone(), parser.parse_literal_string()?);
                    }
                    table.columns.push(ColumnDef::Metadata { name, data_type, key, is_virtual });
                    if !parser.consume_token(&Token::Comma) {
                        break;
                    }
                    continue;
                }
                if parser.parse_keyword(Keyword::COMMENT) {
                    table.column_comments.insert(name.clone(), parser.parse_literal_string()?);
                }
                table.columns.push(ColumnDef::Physical { name, data_type });
            }
        }
        if !parser.consume_token(&Token::Comma) {
            break;
        }
    }
    parser.expect_token(&Token::RParen)?;
    Ok(())
}

/// What follows the columns of `CREATE TABLE`: `COMMENT`, `PARTITIONED BY`, `WITH (…)`,
/// `LIKE source [(…)]` and `AS query`.
fn parse_table_tail(parser: &mut Parser, table: &mut CreateTable) -> Result<(), ParserError> {
    if parser.parse_keyword(Keyword::COMMENT) {
        table.comment = Some(parser.parse_literal_string()?);
    }
    if is_word(parser, 0, "PARTITIONED") {
        parser.next_token();
        parser.expect_keyword(Keyword::BY)?;
        parser.expect_token(&Token::LParen)?;
        table.partition_keys =
            parser.parse_comma_separated(|p| p.parse_identifier())?.into_iter().map(|i| i.value).collect();
        parser.expect_token(&Token::RParen)?;
    }
    let at = |token: &TokenWithSpan| Position { line: token.span.start.line, column: token.span.start.column };
    let with = at(&parser.peek_token());
    if parser.parse_keyword(Keyword::WITH) {
        table.option_positions.insert("WITH".to_string(), with);
        parser.expect_token(&Token::LParen)?;
        loop {
            let key_at = at(&parser.peek_token());
            let key = parser.parse_literal_string()?;
            table.option_positions.insert(key.clone(), key_at);
            parser.expect_token(&Token::Eq)?;
            let value = parser.parse_literal_string()?;
            table.options.insert(key, value);
            if !parser.consume_token(&Token::Comma) {
                break;
            }
        }
        parser.expect_token(&Token::RParen)?;
    }
    if parser.parse_keyword(Keyword::LIKE) {
        table.like = Some(parse_like(parser)?);
    }
    if parser.parse_keyword(Keyword::AS) {
        table.query = Some(parser.parse_query()?);
    }
    Ok(())
}

/// `LIKE source [( {INCLUDING | EXCLUDING | OVERWRITING} {ALL | CONSTRAINTS | GENERATED |
/// METADATA | OPTIONS | PARTITIONS | WATERMARKS}, … )]` after `LIKE`.
fn parse_like(parser: &mut Parser) -> Result<Like, ParserError> {
    let source = table_name(&parser.parse_object_name(false)?);
    let mut like = Like {
        source,
        constraints: LikeMerge::Including,
        generated: LikeMerge::Including,
        metadata: LikeMerge::Including,
        options: LikeMerge::Overwriting,
        partitions: LikeMerge::Including,
        watermarks: LikeMerge::Including,
    };
    if !parser.consume_token(&Token::LParen) {
        return Ok(like);
    }
    loop {
        let merge = if is_word(parser, 0, "INCLUDING") {
            LikeMerge::Including
        } else if is_word(parser, 0, "EXCLUDING") {
            LikeMerge::Excluding
        } else if is_word(parser, 0, "OVERWRITING") {
            LikeMerge::Overwriting
        } else {
            return parser.expected("INCLUDING, EXCLUDING or OVERWRITING", parser.peek_token());
        };
        parser.next_token();
        let Token::Word(w) = parser.next_token().token else {
            return parser.expected(
                "ALL, CONSTRAINTS, GENERATED, METADATA, OPTIONS, PARTITIONS or WATERMARKS",
                parser.peek_token(),
            );
        };
        match w.value.to_ascii_uppercase().as_str() {
            "ALL" => {
                like.constraints = merge;
                like.generated = merge;
                like.metadata = merge;
                like.options = merge;
                like.partitions = merge;
                like.watermarks = merge;
            }
            "CONSTRAINTS" => like.constraints = merge,
            "GENERATED" => like.generated = merge,
            "METADATA" => like.metadata = merge,
            "OPTIONS" => like.options = merge,
            "PARTITIONS" => like.partitions = merge,
            "WATERMARKS" => like.watermarks = merge,
            other => return Err(ParserError::ParserError(format!("Unsupported LIKE option: {other}"))),
        }
        // Flink separates the options by spaces; a comma is taken too.
        let _ = parser.consume_token(&Token::Comma);
        if parser.peek_token().token == Token::RParen {
            break;
        }
    }
    parser.expect_token(&Token::RParen)?;
    Ok(like)
}

fn parse_primary_key(parser: &mut Parser, table: &mut CreateTable) -> Result<(), ParserError> {
    parser.expect_keywords(&[Keyword::PRIMARY, Keyword::KEY])?;
    parser.expect_token(&Token::LParen)?;
    table.primary_key = parser.parse_comma_separated(|p| p.parse_identifier())?.into_iter().map(|i| i.value).collect();
    parser.expect_token(&Token::RParen)?;
    parse_not_enforced(parser)
}

fn parse_not_enforced(parser: &mut Parser) -> Result<(), ParserError> {
    if parser.parse_keyword(Keyword::NOT) {
        parser.expect_keyword(Keyword::ENFORCED)?;
        Ok(())
    } else {
        Err(ParserError::ParserError(
            "Flink doesn't support ENFORCED mode for PRIMARY KEY constraint. ENFORCED/NOT ENFORCED controls if the \
             constraint checks are performed on the incoming/outgoing data. Flink does not own the data therefore the \
             only supported mode is the NOT ENFORCED mode"
                .into(),
        ))
    }
}

/// Converts a statement `sqlparser` read into one of weir's.
fn convert(statement: ast::Statement) -> Result<Statement, ParserError> {
    let unsupported = |what: &str| Err(ParserError::ParserError(format!("Unsupported statement: {what}")));
    match statement {
        ast::Statement::Query(query) => Ok(Statement::Query(query)),
        ast::Statement::Insert(insert) => {
            let table = match &insert.table {
                ast::TableObject::TableName(name) => table_name(name),
                other => return unsupported(&other.to_string()),
            };
            let Some(source) = insert.source else { return unsupported("INSERT without rows") };
            let columns = insert.columns.iter().map(|c| c.value.clone()).collect();
            Ok(Statement::Insert(Insert { table, columns, source, on_conflict: None }))
        }
        ast::Statement::CreateView { name, query, if_not_exists, .. } => {
            Ok(Statement::CreateView { name: created_name(&name)?, query, if_not_exists })
        }
        ast::Statement::Drop { object_type, if_exists, names, .. } => {
            let view = object_type == ast::ObjectType::View;
            if !view && object_type != ast::ObjectType::Table {
                return unsupported(&format!("DROP {object_type}"));
            }
            let name = names.first().map(table_name).unwrap_or_default();
            Ok(Statement::Drop { name, if_exists, view })
        }
        ast::Statement::ShowTables { .. } => Ok(Statement::ShowTables { database: None, like: None }),
        ast::Statement::Delete(delete) => {
            let (ast::FromTable::WithFromKeyword(from) | ast::FromTable::WithoutKeyword(from)) = &delete.from;
            let table = match from.as_slice() {
                [ast::TableWithJoins { relation: ast::TableFactor::Table { name, .. }, joins }] if joins.is_empty() => {
                    table_name(name)
                }
                _ => return unsupported("DELETE from more than one table"),
            };
            Ok(Statement::Delete { table, selection: delete.selection.map(Box::new) })
        }
        ast::Statement::Update { table, assignments, from: None, selection, .. } => {
            let ast::TableWithJoins { relation: ast::TableFactor::Table { name, .. }, joins } = &table else {
                return unsupported("UPDATE of something other than a table");
            };
            if !joins.is_empty() {
                return unsupported("UPDATE with a join");
            }
            let assignments = assignments
                .into_iter()
                .map(|a| match a.target {
                    ast::AssignmentTarget::ColumnName(column) => Ok((last_part(&column), a.value)),
                    ast::AssignmentTarget::Tuple(_) => {
                        Err(ParserError::ParserError("Unsupported statement: UPDATE … SET (a, b) = …".into()))
                    }
                })
                .collect::<Result<_, _>>()?;
            Ok(Statement::Update { table: table_name(name), assignments, selection: selection.map(Box::new) })
        }
        ast::Statement::ExplainTable { table_name: name, .. } => Ok(Statement::Describe(table_name(&name))),
        other => unsupported(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_flink_ddl_with_its_extensions() {
        let script =
            "-- a comment\nCREATE TEMPORARY TABLE `orders` (id BIGINT NOT NULL, ts TIMESTAMP(3), proc AS PROCTIME(),\n\
                      WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, PRIMARY KEY (id) NOT ENFORCED)\n\
                      WITH ('connector' = 'datagen', 'number-of-rows' = '10');\nSET 'parallelism.default' = '2';";
        let statements = parse_script(script).unwrap();
        assert_eq!(statements.len(), 2);
        let Statement::CreateTable(t) = &statements[0].statement else { panic!() };
        assert_eq!(t.name, "orders");
        assert_eq!(t.primary_key, ["id"]);
        assert_eq!(t.columns.len(), 3);
        assert_eq!(t.watermark.as_ref().map(|w| w.0.as_str()), Some("ts"));
        assert_eq!(t.options["number-of-rows"], "10");
        assert_eq!(statements[1].position, Position { line: 5, column: 1 });
        assert_eq!(
            statements[1].statement,
            Statement::Set { key: Some("parallelism.default".into()), value: "2".into() }
        );
    }

    #[test]
    fn reads_statement_sets_and_explain() {
        let script = "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM t; INSERT INTO b SELECT * FROM t; END;\n\
                      EXPLAIN CHANGELOG_MODE, JSON_EXECUTION_PLAN SELECT * FROM t;\nEXPLAIN PLAN FOR SELECT 1";
        let statements = parse_script(script).unwrap();
        assert!(matches!(&statements[0].statement, Statement::StatementSet(s) if s.len() == 2));
        let Statement::Explain { details, .. } = &statements[1].statement else { panic!() };
        assert_eq!(details, &["CHANGELOG_MODE", "JSON_EXECUTION_PLAN"]);
        assert!(matches!(&statements[2].statement, Statement::Explain { details, .. } if details.is_empty()));
    }

    #[test]
    fn errors_carry_line_and_column() {
        let err = parse_script("SELECT 1;\nSELEC 2").unwrap_err();
        assert_eq!(err.position(), Some(Position { line: 2, column: 1 }));
        let err = parse_script("CREATE TABLE t (a INT PRIMARY KEY) WITH ('connector' = 'print')").unwrap_err();
        assert!(err.to_string().contains("NOT ENFORCED"), "{err}");
    }
}

#[cfg(test)]
mod script_tests {
    use super::*;

    /// Every script of the conformance and EXPLAIN suites parses, whatever weir plans yet.
    #[test]
    fn every_reference_script_parses() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests");
        let mut count = 0;
        for dir in ["conformance", "explain"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "sql") {
                    let sql = std::fs::read_to_string(&path).unwrap();
                    parse_script(&sql).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    count += 1;
                }
            }
        }
        assert!(count >= 30, "only {count} scripts found");
    }

    #[test]
    fn on_conflict_clauses_belong_to_the_insert_they_follow() {
        let script = "INSERT INTO a SELECT * FROM t ON CONFLICT DO DEDUPLICATE;\n\
                      EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM t; \
                      INSERT INTO b SELECT * FROM t on conflict do error; END;\n";
        let statements = parse_script(script).unwrap();
        let Statement::Insert(first) = &statements[0].statement else { panic!() };
        assert_eq!(first.on_conflict, Some(ConflictStrategy::Deduplicate));
        let Statement::StatementSet(set) = &statements[1].statement else { panic!() };
        assert_eq!(set[0].on_conflict, None);
        assert_eq!(set[1].on_conflict, Some(ConflictStrategy::Error));
        let error = parse_script("SELECT * FROM t\nON CONFLICT DO NOTHING;").unwrap_err().to_string();
        assert!(error.contains("only an INSERT takes an ON CONFLICT clause"), "{error}");
    }
}
