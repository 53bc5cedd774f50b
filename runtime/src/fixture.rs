//! Text-table fixtures: chunks written as tables, for operator tests.
//!
//! ```text
//! op | id BIGINT | name STRING | ts TIMESTAMP(3)
//! +I | 1         | apple       | 2024-01-01 10:00:00
//! -U | 2         | null        | 2024-01-01 10:00:02.500
//! ```
//!
//! The header names the columns and their types (the name may be left out); each row starts
//! with its kind (`+I`, `-U`, `+U`, `-D`); `null` is SQL `NULL`; blank lines and lines
//! starting with `#` are skipped.

use crate::chunk::Chunk;
use crate::parse::{parse_type, parse_value, ParseError};
use crate::row::RowKind;
use crate::types::{Field, Schema};
use crate::value::Value;

/// Reads a fixture into its schema and a chunk of its rows.
///
/// # Errors
/// [`ParseError`] naming the line and column that could not be read.
pub fn parse_fixture(text: &str) -> Result<(Schema, Chunk), ParseError> {
    let mut lines =
        text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let (_, header) = lines.next().ok_or_else(|| ParseError("the fixture has no header line".into()))?;
    let mut columns = header.split('|').map(str::trim);
    if columns.next() != Some("op") {
        return Err(ParseError("the fixture header must start with 'op'".into()));
    }
    let mut fields = Vec::new();
    for (i, column) in columns.enumerate() {
        let (name, ty) = match column.split_once(' ') {
            Some((name, ty)) if parse_type(name).is_err() => (name.to_string(), ty),
            _ => (format!("f{i}"), column),
        };
        fields.push(Field::new(name, parse_type(ty)?));
    }
    let schema = Schema::new(fields);
    let mut chunk = Chunk::new(schema.arity());
    let mut row = Vec::with_capacity(schema.arity());
    for (line_no, line) in lines {
        let mut cells = line.split('|').map(str::trim);
        let op = cells.next().unwrap_or_default();
        let kind = RowKind::from_short_string(op)
            .ok_or_else(|| ParseError(format!("line {line_no}: '{op}' is not a row kind (+I, -U, +U, -D)")))?;
        row.clear();
        for (column, cell) in cells.enumerate() {
            let field = schema
                .fields
                .get(column)
                .ok_or_else(|| ParseError(format!("line {line_no}: more cells than columns")))?;
            let value = if cell == "null" {
                Value::Null
            } else {
                parse_value(cell, &field.data_type)
                    .map_err(|e| ParseError(format!("line {line_no}, column {}: {e}", field.name)))?
            };
            row.push(value);
        }
        if row.len() != schema.arity() {
            return Err(ParseError(format!("line {line_no}: {} cells for {} columns", row.len(), schema.arity())));
        }
        chunk.push(kind, &row);
    }
    Ok((schema, chunk))
}

/// The chunk of a fixture; for tests, where a malformed fixture is a bug in the test.
///
/// # Panics
/// Panics with the parse error when the fixture is malformed.
pub fn chunk(text: &str) -> Chunk {
    match parse_fixture(text) {
        Ok((_, chunk)) => chunk,
        Err(e) => panic!("malformed fixture: {e}"),
    }
}

/// Applies printed changes (`+I[1, a]`, `-U[…]`, optionally behind a `prefix> `) to a multiset
/// of row texts: the table a changelog ends as, row text → count.
///
/// # Errors
/// A line that is not a change, or a retraction of a row that is not in the table.
pub fn materialize_changelog<S: AsRef<str>>(
    lines: impl IntoIterator<Item = S>,
) -> Result<std::collections::BTreeMap<String, i64>, String> {
    let mut table = std::collections::BTreeMap::new();
    for line in lines {
        let line = line.as_ref();
        let change = line.split_once("> ").map_or(line, |(_, change)| change);
        let (kind, row) = change.split_at_checked(2).ok_or_else(|| format!("not a change: {line}"))?;
        let delta = match kind {
            "+I" | "+U" => 1,
            "-U" | "-D" => -1,
            _ => return Err(format!("not a change: {line}")),
        };
        let count = table.entry(row.to_string()).or_insert(0);
        *count += delta;
        if *count < 0 {
            return Err(format!("retracted a row that is not there: {line}"));
        }
    }
    table.retain(|_, n| *n != 0);
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changelogs_materialize_into_their_final_rows() {
        let table = materialize_changelog(["+I[a, 1]", "1> -U[a, 1]", "2> +U[a, 2]", "+I[b, 1]", "-D[b, 1]"]).unwrap();
        assert_eq!(table.into_iter().collect::<Vec<_>>(), [("[a, 2]".to_string(), 1)]);
        assert!(materialize_changelog(["-D[x]"]).unwrap_err().contains("retracted a row that is not there"));
        assert!(materialize_changelog(["hello"]).unwrap_err().contains("not a change"));
    }

    #[test]
    fn fixtures_read_as_tables() {
        let (schema, c) = parse_fixture(
            "op | id BIGINT | name STRING | ts TIMESTAMP(3)
             # a comment
             +I | 1 | apple | 2024-01-01 10:00:02.500
             -U | 2 | null  | 2024-01-01 10:00:00",
        )
        .unwrap();
        assert_eq!(schema.fields[1].name, "name");
        assert_eq!(c.to_lines(), ["+I[1, apple, 2024-01-01T10:00:02.500]", "-U[2, null, 2024-01-01T10:00]"]);
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse_fixture("op | id INT\n+I | x").unwrap_err();
        assert_eq!(e.to_string(), "line 2, column id: cannot parse 'x' as INT");
        let e = parse_fixture("op | INT\n+X | 1").unwrap_err();
        assert!(e.to_string().starts_with("line 2: '+X'"), "{e}");
    }
}
