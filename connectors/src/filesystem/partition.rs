//! Partitions of a filesystem table (`PARTITIONED BY (k1, k2)`): the rows of a partition live in
//! the directory `k1=v1/k2=v2/` below the table's path, and the files hold only the other
//! columns, as Flink (and Hive) lay them out.
//!
//! A partition value is written as Flink's `RowDataPartitionComputer` writes it: the text of the
//! field's internal value (strings as they are, numbers as Java prints them, a `TIMESTAMP` as
//! `2024-01-01T10:00`, a `DATE` as its number of days since 1970-01-01), a NULL or empty value as
//! `partition.default-name`, and the characters a path cannot hold escaped as `%XX`
//! (`09:00` is `09%3A00`). Reading turns the directory names back into values of the columns'
//! types, the default name into NULL.

use std::path::Path;

use weir_runtime::print::value_to_string;
use weir_runtime::{DataType, LogicalType, Schema, Value};

use crate::api::TableDescriptor;
use crate::error::{Error, Result};
use crate::options::TableOptions;

/// `partition.default-name`'s default: the directory of NULL and empty values.
const DEFAULT_PARTITION_NAME: &str = "__DEFAULT_PARTITION__";

/// Where a table's partition columns are and how their directories are named.
#[derive(Debug, Clone)]
pub(crate) struct Partitioning {
    /// Name, position in the table's schema and type of each partition column, in
    /// `PARTITIONED BY` order.
    keys: Vec<(String, usize, DataType)>,
    /// The positions of the other columns: what the files hold.
    data_columns: Vec<usize>,
    /// `partition.default-name`.
    default_name: String,
}

impl Partitioning {
    /// The partitioning of `table` (`None` without `PARTITIONED BY`), reading
    /// `partition.default-name`.
    ///
    /// # Errors
    /// A partition column of a type whose values cannot be a directory name.
    pub(crate) fn of(table: &TableDescriptor, options: &mut TableOptions) -> Result<Option<Self>> {
        let default_name = options.optional("partition.default-name").unwrap_or(DEFAULT_PARTITION_NAME).to_string();
        if table.partition_keys.is_empty() {
            return Ok(None);
        }
        let fields = &table.schema.fields;
        let mut keys = Vec::new();
        for name in &table.partition_keys {
            let position = fields.iter().position(|f| &f.name == name).ok_or_else(|| {
                Error::Validation(format!("Partition column '{name}' not defined in the table schema."))
            })?;
            let ty = fields[position].data_type.clone();
            let nested = matches!(
                ty.logical,
                LogicalType::Array(_) | LogicalType::Map(..) | LogicalType::Multiset(_) | LogicalType::Row(_)
            );
            if nested {
                return Err(Error::Validation(format!(
                    "Partition column '{name}' is of type {}, which weir cannot write as a directory name \
                     (not supported by weir: partitions by a nested type).",
                    ty.logical
                )));
            }
            keys.push((name.clone(), position, ty));
        }
        let data_columns = (0..fields.len()).filter(|i| !keys.iter().any(|(_, p, _)| p == i)).collect();
        Ok(Some(Partitioning { keys, data_columns, default_name }))
    }

    /// The columns the files hold: the table's without the partition columns.
    pub(crate) fn data_schema(&self, schema: &Schema) -> Schema {
        Schema { fields: self.data_columns.iter().map(|&i| schema.fields[i].clone()).collect() }
    }

    /// The positions of the columns the files hold, in the table's schema.
    pub(crate) fn data_columns(&self) -> &[usize] {
        &self.data_columns
    }

    /// The positions of the partition columns in the table's schema, in `PARTITIONED BY` order.
    pub(crate) fn key_columns(&self) -> Vec<usize> {
        self.keys.iter().map(|(_, p, _)| *p).collect()
    }

    /// The partition keys' names, in order.
    pub(crate) fn key_names(&self) -> Vec<String> {
        self.keys.iter().map(|(n, ..)| n.clone()).collect()
    }

    /// The directory of the partition whose key values are `values` (in `PARTITIONED BY`
    /// order), relative to the table's path: `k1=v1/k2=v2`.
    pub(crate) fn directory(&self, values: &[Value]) -> String {
        let mut dir = String::new();
        for ((name, _, _), value) in self.keys.iter().zip(values) {
            if !dir.is_empty() {
                dir.push('/');
            }
            let text = match value {
                Value::Null => String::new(),
                // Flink writes a DATE's internal value: days since the epoch.
                Value::Date(days) => days.to_string(),
                other => value_to_string(other),
            };
            let text = if text.is_empty() { self.default_name.clone() } else { text };
            dir.push_str(&escape(name));
            dir.push('=');
            dir.push_str(&escape(&text));
        }
        dir
    }

    /// The values of the partition keys of a file at `relative` (its path below the table's
    /// path), in `PARTITIONED BY` order.
    ///
    /// # Errors
    /// A path without a `key=value` directory for every key, or a value that is not of its
    /// column's type.
    pub(crate) fn values_of(&self, relative: &Path) -> Result<Vec<Value>> {
        let spec = partition_spec(relative);
        self.keys
            .iter()
            .map(|(name, _, ty)| {
                let Some((_, text)) = spec.iter().find(|(k, _)| k == name) else {
                    return Err(Error::Validation(format!(
                        "The file '{}' of a table partitioned by '{name}' is not in a '{name}=…' directory.",
                        relative.display()
                    )));
                };
                if *text == self.default_name {
                    return Ok(Value::Null);
                }
                weir_runtime::parse::parse_value(text, ty).map_err(|e| {
                    Error::Validation(format!(
                        "The partition value '{text}' of '{name}' in '{}': {e}",
                        relative.display()
                    ))
                })
            })
            .collect()
    }
}

/// The `key=value` directories of `relative`, unescaped, outermost first (Flink's
/// `extractPartitionSpecFromPath`).
pub(crate) fn partition_spec(relative: &Path) -> Vec<(String, String)> {
    relative
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .filter_map(|c| c.split_once('='))
        .map(|(k, v)| (unescape(k), unescape(v)))
        .collect()
}

/// Whether Hive (and so Flink) escapes `c` in a path name.
fn must_escape(c: char) -> bool {
    matches!(
        c,
        '\u{1}'
            ..='\u{1f}'
                | '"'
                | '#'
                | '%'
                | '\''
                | '*'
                | '/'
                | ':'
                | '='
                | '?'
                | '\\'
                | '\u{7f}'
                | '{'
                | '['
                | ']'
                | '^'
    )
}

/// `text` with every character a partition directory's name cannot hold as `%XX`.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if must_escape(c) {
            out.push_str(&format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Reverses [`escape`]: `%XX` (two hex digits) is the character; any other `%` stays.
pub(crate) fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
        match code {
            Some(code) => {
                out.push(char::from(code));
                rest = &rest[at + 3..];
            }
            None => {
                out.push('%');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::Timestamp;

    fn partitioning(columns: &[(&str, &str)], keys: &[&str]) -> Partitioning {
        let schema = weir_runtime::parse::parse_schema(columns).unwrap();
        let mut table = TableDescriptor::new("t", schema, &[]);
        table.partition_keys = keys.iter().map(|k| k.to_string()).collect();
        Partitioning::of(&table, &mut TableOptions::new(Default::default())).unwrap().unwrap()
    }

    #[test]
    fn directories_are_named_as_flink_names_them_and_read_back() {
        let p = partitioning(&[("a", "BIGINT"), ("dt", "STRING"), ("hm", "STRING")], &["dt", "hm"]);
        let values = [Value::string("2026-01-05"), Value::string("09:00")];
        let dir = p.directory(&values);
        assert_eq!(dir, "dt=2026-01-05/hm=09%3A00");
        assert_eq!(p.values_of(Path::new(&format!("{dir}/part-x-0-0"))).unwrap(), values);
        assert_eq!(p.data_columns(), &[0]);

        let nulls = [Value::Null, Value::string("")];
        assert_eq!(p.directory(&nulls), "dt=__DEFAULT_PARTITION__/hm=__DEFAULT_PARTITION__");
        assert_eq!(p.values_of(Path::new(&p.directory(&nulls))).unwrap(), vec![Value::Null, Value::Null]);
    }

    #[test]
    fn values_are_the_text_of_flink_internal_values() {
        let p = partitioning(
            &[("b", "BOOLEAN"), ("d", "DATE"), ("ts", "TIMESTAMP(3)"), ("x", "DOUBLE")],
            &["b", "d", "ts", "x"],
        );
        let values = [
            Value::Boolean(true),
            Value::Date(19_723),
            Value::Timestamp(Timestamp::from_millis(1_704_103_200_000)),
            Value::Double(1.0e7),
        ];
        assert_eq!(p.directory(&values), "b=true/d=19723/ts=2024-01-01T10%3A00/x=1.0E7");
    }

    #[test]
    fn escaping_round_trips_and_leaves_a_stray_percent() {
        let text = "a/b=c:d%e#f?\u{1}";
        assert_eq!(escape(text), "a%2Fb%3Dc%3Ad%25e%23f%3F%01");
        assert_eq!(unescape(&escape(text)), text);
        assert_eq!(unescape("100%"), "100%");
        assert_eq!(unescape("%zz"), "%zz");
    }

    #[test]
    fn a_file_outside_its_partition_directory_is_named() {
        let p = partitioning(&[("a", "BIGINT"), ("dt", "STRING")], &["dt"]);
        let err = p.values_of(Path::new("part-0")).unwrap_err().to_string();
        assert!(err.contains("not in a 'dt=…' directory"), "{err}");
        let q = partitioning(&[("a", "BIGINT"), ("n", "INT")], &["n"]);
        let err = q.values_of(Path::new("n=x/part-0")).unwrap_err().to_string();
        assert!(err.contains("'x'"), "{err}");
    }
}
