//! `SHOW TABLES`, `DESCRIBE t` and `SHOW COLUMNS FROM t [[NOT] LIKE …]`, printed as Flink's SQL
//! client prints them.

use weir_runtime::types::TimeAttribute;

use super::Session;
use crate::tableau::text_table;
use weir_planner::catalog::{Catalog, CatalogEntry};
use weir_planner::error::{Error, Position, Result};
use weir_planner::parser::ColumnDef;

/// The names of `names` that match `like` (`%` any text, `_` one character), or do not when it
/// is negated; all of them without a pattern.
///
/// # Errors
/// A pattern that does not translate (an escape at its end).
pub(super) fn matching(names: Vec<String>, like: Option<&(bool, String)>, at: Position) -> Result<Vec<String>> {
    let Some((negated, pattern)) = like else { return Ok(names) };
    let regex = weir_operators::expr::like_regex(pattern).map_err(|e| Error::validation(at, e.0))?;
    Ok(names.into_iter().filter(|n| regex.is_match(n) != *negated).collect())
}

impl Session {
    /// `SHOW TABLES | VIEWS [FROM | IN [catalog.]database] [[NOT] LIKE 'pattern']`: a `table
    /// name` column of the tables and views (`view name` of the views alone, with `views`) of
    /// the current database or of the one named, sorted, those whose name matches the pattern.
    pub(super) fn show_tables(
        &mut self,
        database: Option<&str>,
        like: Option<&(bool, String)>,
        views: bool,
        at: Position,
    ) -> Result<()> {
        let (catalog, database) = self.database_named(database, at)?;
        let names: Vec<String> = self
            .catalog
            .names_in(&catalog, &database)
            .into_iter()
            .filter(|n| {
                !views || matches!(self.catalog.get(&format!("{catalog}.{database}.{n}")), Some(CatalogEntry::View(_)))
            })
            .collect();
        let names = matching(names, like, at)?;
        self.show_list(if views { "view name" } else { "table name" }, &names)
    }

    /// `DESCRIBE t`: per column its name, type (with `*ROWTIME*` or `*PROCTIME*`), nullability,
    /// primary key, computed expression and watermark.
    pub(super) fn describe(&mut self, name: &str, at: Position) -> Result<()> {
        self.show_columns(name, None, at)
    }

    /// `SHOW COLUMNS FROM t [[NOT] LIKE 'pattern']`: DESCRIBE's rows of the columns whose name
    /// matches (`%` any text, `_` one character), or does not with `NOT`.
    pub(super) fn show_columns(&mut self, name: &str, like: Option<&(bool, String)>, at: Position) -> Result<()> {
        let t = match self.catalog.get(name) {
            Some(CatalogEntry::Table(t)) => t,
            Some(CatalogEntry::View(query)) => {
                let query = query.clone();
                return self.describe_view(name, &query, like, at);
            }
            None => {
                return Err(Error::validation(
                    at,
                    format!(
                        "Tables or views with the identifier '{}' doesn't exist.",
                        Catalog::qualified(&self.catalog.key(name))
                    ),
                ))
            }
        };
        let plan = weir_planner::binder::table_plan(t, None)?;
        let key = (!t.primary_key.is_empty()).then(|| format!("PRI({})", t.primary_key.join(", ")));
        let mut rows = Vec::new();
        for column in &t.columns {
            let (column_name, extras) = match column {
                ColumnDef::Physical { name, .. } => (name, String::new()),
                ColumnDef::Computed { name, expr } => (name, format!("AS {}", quoted(expr))),
                ColumnDef::Metadata { name, key, is_virtual, .. } => {
                    let from = key.as_ref().map(|k| format!(" FROM '{k}'")).unwrap_or_default();
                    (name, format!("METADATA{from}{}", if *is_virtual { " VIRTUAL" } else { "" }))
                }
            };
            let Some(field) = plan.fields.iter().find(|f| &f.name == column_name) else { continue };
            let ty = &field.data_type;
            let type_text = described_type(ty);
            let watermark = match &t.watermark {
                Some(w) if &w.0 == column_name => quoted(&w.1),
                _ => String::new(),
            };
            let in_key = t.primary_key.contains(column_name);
            if let Some((negated, pattern)) = like {
                let matches = weir_operators::expr::like_regex(pattern)
                    .map_err(|e| Error::validation(at, e.0))?
                    .is_match(column_name);
                if matches == *negated {
                    continue;
                }
            }
            rows.push(vec![
                column_name.clone(),
                type_text,
                if ty.nullable { "TRUE" } else { "FALSE" }.to_string(),
                if in_key { key.clone().unwrap_or_default() } else { String::new() },
                extras,
                watermark,
            ]);
        }
        self.write_text(&text_table(&["name", "type", "null", "key", "extras", "watermark"], &rows))
    }

    /// DESCRIBE's rows of a view: its query's columns with their types (a view has no key,
    /// computed columns or watermark of its own), those matching `like` as in
    /// [`Session::show_columns`].
    fn describe_view(
        &mut self,
        name: &str,
        query: &sqlparser::ast::Query,
        like: Option<&(bool, String)>,
        at: Position,
    ) -> Result<()> {
        let key = self.catalog.key(name);
        let plan = {
            let planner = self.planner()?;
            self.catalog.within_namespace_of(&key, || planner.bind_query(query))?
        };
        let names = plan.fields.iter().map(|f| f.name.clone()).collect();
        let shown = matching(names, like, at)?;
        let rows = plan
            .fields
            .iter()
            .filter(|f| shown.contains(&f.name))
            .map(|f| {
                let null = if f.data_type.nullable { "TRUE" } else { "FALSE" };
                vec![
                    f.name.clone(),
                    described_type(&f.data_type),
                    null.to_string(),
                    String::new(),
                    String::new(),
                    String::new(),
                ]
            })
            .collect::<Vec<_>>();
        self.write_text(&text_table(&["name", "type", "null", "key", "extras", "watermark"], &rows))
    }
}

/// A column's type as DESCRIBE prints it: without its nullability (a column of its own), with
/// `*ROWTIME*` or `*PROCTIME*` on a time attribute.
fn described_type(ty: &weir_runtime::types::DataType) -> String {
    let mut plain = ty.clone();
    plain.nullable = true;
    plain.time_attribute = None;
    let text = plain.to_string();
    match ty.time_attribute {
        Some(TimeAttribute::Rowtime) => format!("{text} *ROWTIME*"),
        Some(TimeAttribute::Proctime) => format!("{text} *PROCTIME*"),
        None => text,
    }
}

/// `expression` with its column names in backquotes, as Flink prints a column's expression
/// (`` `id` + 1 ``, `` `ts` - INTERVAL '5' SECOND ``).
pub(super) fn quoted(expression: &sqlparser::ast::Expr) -> String {
    use sqlparser::ast::{visit_expressions_mut, Expr};
    let mut expression = expression.clone();
    let _ = visit_expressions_mut(&mut expression, |e| {
        match e {
            Expr::Identifier(ident) => ident.quote_style = Some('`'),
            Expr::CompoundIdentifier(parts) => parts.iter_mut().for_each(|p| p.quote_style = Some('`')),
            _ => {}
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    expression.to_string()
}
