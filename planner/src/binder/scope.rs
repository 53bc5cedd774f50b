//! Name resolution: the columns a query part can see, with their table qualifiers.

use sqlparser::ast::{Ident, Spanned};
use weir_runtime::{DataType, Field};

use crate::error::{Error, Position, Result};

/// One visible column.
#[derive(Debug, Clone)]
pub struct ScopeColumn {
    /// The table or alias it comes from.
    pub qualifier: Option<String>,
    /// Its name.
    pub name: String,
    /// Its type.
    pub data_type: DataType,
}

/// The columns visible to an expression, in input order.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// The columns, by input position.
    pub columns: Vec<ScopeColumn>,
}

/// The position of an identifier in the script.
pub fn ident_position(ident: &Ident) -> Position {
    Position { line: ident.span.start.line.max(1), column: ident.span.start.column.max(1) }
}

/// The position of a syntax node in the script.
pub fn position_of(node: &impl Spanned) -> Position {
    let span = node.span();
    Position { line: span.start.line.max(1), column: span.start.column.max(1) }
}

impl Scope {
    /// A scope over `fields`, all qualified by `qualifier`.
    pub fn new(fields: &[Field], qualifier: Option<&str>) -> Self {
        Scope {
            columns: fields
                .iter()
                .map(|f| ScopeColumn {
                    qualifier: qualifier.map(str::to_string),
                    name: f.name.clone(),
                    data_type: f.data_type.clone(),
                })
                .collect(),
        }
    }

    /// Resolves `name` or `qualifier.name` to a column index and type.
    ///
    /// # Errors
    /// Flink's messages for a column that is not found or is ambiguous.
    pub fn resolve(&self, parts: &[Ident]) -> Result<(usize, DataType)> {
        let (qualifier, name) = match parts {
            [name] => (None, name),
            [.., q, name] => (Some(q), name),
            [] => return Err(Error::validation(Position::default(), "Empty column reference")),
        };
        let matches: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.name == name.value)
            .filter(|(_, c)| qualifier.is_none_or(|q| c.qualifier.as_deref() == Some(q.value.as_str())))
            .map(|(i, _)| i)
            .collect();
        match matches.as_slice() {
            [i] => Ok((*i, self.columns[*i].data_type.clone())),
            [] => {
                let message = match qualifier {
                    Some(q) if !self.columns.iter().any(|c| c.qualifier.as_deref() == Some(q.value.as_str())) => {
                        format!("Table '{}' not found", q.value)
                    }
                    Some(q) => format!("Column '{}' not found in table '{}'", name.value, q.value),
                    None => format!("Column '{}' not found in any table", name.value),
                };
                Err(Error::validation(ident_position(name), message))
            }
            _ => Err(Error::validation(ident_position(name), format!("Column '{}' is ambiguous", name.value))),
        }
    }
}
