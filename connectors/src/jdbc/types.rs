//! Values between weir and PostgreSQL, as text: the SQL type a parameter is cast to, the
//! text a value is sent as, and the value a column's text output reads as.

use weir_runtime::parse::parse_value;
use weir_runtime::print::value_to_string;
use weir_runtime::{DataType, LogicalType, Value};

use crate::error::{Error, Result};

/// The PostgreSQL type a parameter of type `ty` is cast to, so that comparisons use indexes.
pub fn pg_type(ty: &DataType) -> &'static str {
    match ty.logical {
        LogicalType::Boolean => "boolean",
        LogicalType::TinyInt | LogicalType::SmallInt => "smallint",
        LogicalType::Int => "integer",
        LogicalType::BigInt => "bigint",
        LogicalType::Float => "real",
        LogicalType::Double => "double precision",
        LogicalType::Decimal { .. } => "numeric",
        LogicalType::Date => "date",
        LogicalType::Time(_) => "time",
        LogicalType::Timestamp(_) => "timestamp",
        LogicalType::TimestampLtz(_) => "timestamptz",
        LogicalType::Binary(_) | LogicalType::Varbinary(_) => "bytea",
        _ => "text",
    }
}

/// `"a" = CAST($1 AS integer) AND "b" = CAST($2 AS text)` for the key columns `keys` of
/// `columns`, numbering parameters from 1 in key order.
pub fn key_conditions(columns: &[(String, DataType)], keys: &[usize]) -> String {
    keys.iter()
        .enumerate()
        .map(|(i, &k)| {
            let (name, ty) = &columns[k];
            format!("{} = CAST(${} AS {})", quote_identifier(name), i + 1, pg_type(ty))
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// `"name"`, with inner quotes doubled.
pub fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A table name as written in the options (`schema.table` or `table`), quoted part by part.
pub fn quote_table(name: &str) -> String {
    name.split('.').map(quote_identifier).collect::<Vec<_>>().join(".")
}

/// The text PostgreSQL reads `value` from (`None` for NULL).
pub fn to_text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::Binary(bytes) => Some(format!("\\x{}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>())),
        other => Some(value_to_string(other)),
    }
}

/// The value of a column of type `ty` from PostgreSQL's text output.
///
/// # Errors
/// Text that is not a value of the type, naming the column.
pub fn from_text(text: Option<&str>, ty: &DataType, column: &str) -> Result<Value> {
    let Some(text) = text else { return Ok(Value::Null) };
    let fail =
        |why: String| Error::Validation(format!("column '{column}' holds '{text}', not a {}: {why}", ty.logical));
    match &ty.logical {
        LogicalType::Boolean => match text {
            "t" | "true" => Ok(Value::Boolean(true)),
            "f" | "false" => Ok(Value::Boolean(false)),
            _ => Err(fail("expected t or f".into())),
        },
        LogicalType::Binary(_) | LogicalType::Varbinary(_) => {
            let hex = text.strip_prefix("\\x").ok_or_else(|| fail("expected \\x hex".into()))?;
            let bytes = (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16))
                .collect::<std::result::Result<Vec<u8>, _>>()
                .map_err(|e| fail(e.to_string()))?;
            Ok(Value::Binary(bytes.into()))
        }
        LogicalType::TimestampLtz(_) => {
            // The session's time zone is UTC: the text ends in `+00`.
            let local = text.trim_end_matches("+00").trim_end_matches("+00:00");
            parse_value(local, ty).map_err(|e| fail(e.to_string()))
        }
        _ => parse_value(text, ty).map_err(|e| fail(e.to_string())),
    }
}
