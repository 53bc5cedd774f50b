//! The CDC changelog formats, as Flink reads and writes them: each record is a change (an
//! insert, an update with its before and after images, a delete) of a row in the table's JSON
//! form, so a CDC topic feeds a GROUP BY or a join with correct retractions.
//!
//! | format | record | options (prefix = the format's name) |
//! |---|---|---|
//! | `debezium-json` | `{"before": …, "after": …, "op": "c" \| "r" \| "u" \| "d"}`, inside `"payload"` with `schema-include` | `schema-include` (`false`), `ignore-parse-errors` (`false`), `timestamp-format.standard` (`SQL`) |
//! | `canal-json` | `{"data": [...], "old": [...], "type": "INSERT" \| "UPDATE" \| "DELETE"}` | `ignore-parse-errors`, `timestamp-format.standard`, `database.include`, `table.include` (regular expressions) |
//! | `maxwell-json` | `{"data": {...}, "old": {...}, "type": "insert" \| "update" \| "delete"}` | `ignore-parse-errors`, `timestamp-format.standard` |
//!
//! An update becomes `-U before, +U after`; canal's and maxwell's `old` hold only the changed
//! fields, laid over the after image to make the before image. Written, an insert or update
//! after is a create (`"op": "c"`, `INSERT`, `insert`) and a delete or update before a delete,
//! as Flink writes them. Records of other kinds (canal's DDL) are passed over.

use std::sync::Arc;

use serde_json::{Map, Value as Json};
use weir_runtime::columnar::{Cell, ColumnsBuilder};
use weir_runtime::{RowKind, Schema};

use super::json::{parse_object, FieldError, JsonFormat, JsonOptions};
use super::text::TimestampStandard;
use super::{DecodeError, Decoder, Encoder, Format, FormatFactory, Lines};
use crate::error::Result;
use crate::options::TableOptions;

/// Which CDC format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// `debezium-json`
    Debezium,
    /// `canal-json`
    Canal,
    /// `maxwell-json`
    Maxwell,
}

impl Flavor {
    fn identifier(self) -> &'static str {
        match self {
            Flavor::Debezium => "debezium-json",
            Flavor::Canal => "canal-json",
            Flavor::Maxwell => "maxwell-json",
        }
    }
}

/// Creates one CDC format.
#[derive(Debug, Clone, Copy)]
pub struct CdcFormatFactory(pub Flavor);

impl FormatFactory for CdcFormatFactory {
    fn identifier(&self) -> &'static str {
        self.0.identifier()
    }

    fn create(&self, schema: &Schema, options: &mut TableOptions) -> Result<Arc<dyn Format>> {
        let name = self.0.identifier();
        let ignore_parse_errors = options.boolean(&format!("{name}.ignore-parse-errors"), false)?;
        let timestamp_standard =
            match options.one_of(&format!("{name}.timestamp-format.standard"), &["SQL", "ISO-8601"], "SQL")? {
                "ISO-8601" => TimestampStandard::Iso8601,
                _ => TimestampStandard::Sql,
            };
        let schema_include = match self.0 {
            Flavor::Debezium => options.boolean("debezium-json.schema-include", false)?,
            Flavor::Canal | Flavor::Maxwell => false,
        };
        let (database, table) = match self.0 {
            Flavor::Canal => (
                include_pattern(options, "canal-json.database.include")?,
                include_pattern(options, "canal-json.table.include")?,
            ),
            Flavor::Debezium | Flavor::Maxwell => (None, None),
        };
        let json = JsonOptions { fail_on_missing_field: false, ignore_parse_errors, timestamp_standard };
        Ok(Arc::new(CdcFormat {
            flavor: self.0,
            rows: JsonFormat::new(schema, json),
            ignore_parse_errors,
            schema_include,
            database,
            table,
        }))
    }
}

fn include_pattern(options: &mut TableOptions, key: &str) -> Result<Option<regex::Regex>> {
    let Some(pattern) = options.optional(key).map(str::to_string) else { return Ok(None) };
    regex::Regex::new(&format!("^(?:{pattern})$"))
        .map(Some)
        .map_err(|e| crate::options::invalid(key, &pattern, &format!("a regular expression ({e})")))
}

/// A CDC format for one schema.
#[derive(Debug, Clone)]
pub struct CdcFormat {
    flavor: Flavor,
    rows: JsonFormat,
    ignore_parse_errors: bool,
    schema_include: bool,
    database: Option<regex::Regex>,
    table: Option<regex::Regex>,
}

impl Format for CdcFormat {
    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(CdcDecoder { format: self.clone(), kinds: Vec::new() })
    }

    fn encoder(&self) -> Box<dyn Encoder> {
        Box::new(CdcEncoder { format: self.clone() })
    }

    fn carries_changes(&self) -> bool {
        true
    }
}

struct CdcDecoder {
    format: CdcFormat,
    /// The kinds [`Decoder::decode`] drops.
    kinds: Vec<RowKind>,
}

/// `after` with the fields of `old` laid over it: the before image of canal's and maxwell's
/// updates.
fn before_image(after: &Map<String, Json>, old: Option<&Json>) -> Map<String, Json> {
    let mut before = after.clone();
    if let Some(Json::Object(old)) = old {
        for (k, v) in old {
            before.insert(k.clone(), v.clone());
        }
    }
    before
}

fn object<'a>(json: Option<&'a Json>, what: &str) -> std::result::Result<&'a Map<String, Json>, FieldError> {
    match json {
        Some(Json::Object(o)) => Ok(o),
        _ => Err((None, format!("the \"{what}\" field is not a JSON object"))),
    }
}

impl CdcDecoder {
    /// Pushes the rows of the change `text` into `out` and their kinds into `kinds`.
    fn record(
        &self,
        text: &str,
        out: &mut ColumnsBuilder,
        kinds: &mut Vec<RowKind>,
    ) -> std::result::Result<(), FieldError> {
        let root = parse_object(text)?;
        let mut push = |row: &Map<String, Json>, kind: RowKind| -> std::result::Result<(), FieldError> {
            self.format.rows.push_object(row, out)?;
            kinds.push(kind);
            Ok(())
        };
        match self.format.flavor {
            Flavor::Debezium => {
                let payload = if self.format.schema_include { object(root.get("payload"), "payload")? } else { &root };
                let op = payload.get("op").and_then(Json::as_str).unwrap_or_default();
                match op {
                    "c" | "r" => push(object(payload.get("after"), "after")?, RowKind::Insert),
                    "u" => {
                        let before = payload.get("before").filter(|b| !b.is_null()).ok_or_else(|| {
                            (None, "The \"before\" field of UPDATE message is null, if you are using Debezium Postgres \
                                    Connector, please check the Postgres table has been set REPLICA IDENTITY to FULL level."
                                .to_string())
                        })?;
                        push(object(Some(before), "before")?, RowKind::UpdateBefore)?;
                        push(object(payload.get("after"), "after")?, RowKind::UpdateAfter)
                    }
                    "d" => {
                        let before = payload.get("before").filter(|b| !b.is_null()).ok_or_else(|| {
                            (None, "The \"before\" field of DELETE message is null, if you are using Debezium Postgres \
                                    Connector, please check the Postgres table has been set REPLICA IDENTITY to FULL level."
                                .to_string())
                        })?;
                        push(object(Some(before), "before")?, RowKind::Delete)
                    }
                    other => {
                        Err((None, format!("Unknown \"op\" value \"{other}\". The Debezium JSON message is '{text}'")))
                    }
                }
            }
            Flavor::Canal => {
                let pick = |key: &str, pattern: &Option<regex::Regex>| {
                    pattern.as_ref().is_none_or(|p| root.get(key).and_then(Json::as_str).is_some_and(|v| p.is_match(v)))
                };
                if !pick("database", &self.format.database) || !pick("table", &self.format.table) {
                    return Ok(());
                }
                if root.get("isDdl").and_then(Json::as_bool) == Some(true) {
                    return Ok(());
                }
                let kind = root.get("type").and_then(Json::as_str).unwrap_or_default();
                let data = match root.get("data") {
                    Some(Json::Array(rows)) => rows.as_slice(),
                    Some(Json::Null) | None if kind == "CREATE" => return Ok(()),
                    _ => return Err((None, "the \"data\" field is not a JSON array".into())),
                };
                match kind {
                    "INSERT" => data.iter().try_for_each(|row| push(object(Some(row), "data")?, RowKind::Insert)),
                    "DELETE" => data.iter().try_for_each(|row| push(object(Some(row), "data")?, RowKind::Delete)),
                    "UPDATE" => {
                        let old = match root.get("old") {
                            Some(Json::Array(rows)) => rows.as_slice(),
                            _ => return Err((None, "the \"old\" field of an UPDATE is not a JSON array".into())),
                        };
                        for (i, row) in data.iter().enumerate() {
                            let after = object(Some(row), "data")?;
                            push(&before_image(after, old.get(i)), RowKind::UpdateBefore)?;
                            push(after, RowKind::UpdateAfter)?;
                        }
                        Ok(())
                    }
                    "CREATE" => Ok(()),
                    other => {
                        Err((None, format!("Unknown \"type\" value \"{other}\". The Canal JSON message is '{text}'")))
                    }
                }
            }
            Flavor::Maxwell => {
                let kind = root.get("type").and_then(Json::as_str).unwrap_or_default();
                let data = object(root.get("data"), "data");
                match kind {
                    "insert" => push(data?, RowKind::Insert),
                    "delete" => push(data?, RowKind::Delete),
                    "update" => {
                        let after = data?;
                        push(&before_image(after, root.get("old")), RowKind::UpdateBefore)?;
                        push(after, RowKind::UpdateAfter)
                    }
                    other => {
                        Err((None, format!("Unknown \"type\" value \"{other}\". The Maxwell JSON message is '{text}'")))
                    }
                }
            }
        }
    }
}

impl Decoder for CdcDecoder {
    fn decode(&mut self, lines: &mut Lines, out: &mut ColumnsBuilder) -> std::result::Result<bool, DecodeError> {
        let mut kinds = std::mem::take(&mut self.kinds);
        let more = self.decode_changes(lines, out, &mut kinds);
        kinds.clear();
        self.kinds = kinds;
        more
    }

    fn decode_changes(
        &mut self,
        lines: &mut Lines,
        out: &mut ColumnsBuilder,
        kinds: &mut Vec<RowKind>,
    ) -> std::result::Result<bool, DecodeError> {
        loop {
            let next_number = lines.number() + 1;
            let line = match lines.next_line() {
                Ok(None) => return Ok(false),
                Ok(Some(l)) => l.to_string(),
                Err(e) if super::is_not_utf8(&e) && self.format.ignore_parse_errors => continue,
                Err(e) => {
                    return Err(DecodeError {
                        line: next_number,
                        column: None,
                        field: None,
                        reason: format!("cannot read the input: {e}"),
                    })
                }
            };
            // Blank lines of a file and empty messages (tombstones) are passed over, as Flink's
            // CDC decoders pass over a message of no bytes; a blank message of some bytes is not
            // JSON.
            if line.is_empty() || (line.trim().is_empty() && !lines.is_message()) {
                continue;
            }
            let (rows, kinds_before) = (out.rows(), kinds.len());
            match self.record(&line, out, kinds) {
                Ok(()) => return Ok(true),
                Err(_) if self.format.ignore_parse_errors => {
                    out.truncate(rows);
                    kinds.truncate(kinds_before);
                }
                Err((position, reason)) => {
                    out.truncate(rows);
                    kinds.truncate(kinds_before);
                    return Err(DecodeError {
                        line: lines.number(),
                        column: position.as_ref().map(|(i, _)| i + 1),
                        field: position.map(|(_, name)| name),
                        reason: format!("Corrupt {} message: {reason}", self.format.flavor.identifier()),
                    });
                }
            }
        }
    }
}

struct CdcEncoder {
    format: CdcFormat,
}

impl Encoder for CdcEncoder {
    fn encode_record(&mut self, cells: &[Cell<'_>], out: &mut String) {
        self.encode_change(RowKind::Insert, cells, out);
    }

    fn encode_change(&mut self, kind: RowKind, cells: &[Cell<'_>], out: &mut String) {
        let row = Json::Object(self.format.rows.object_of(cells));
        let added = matches!(kind, RowKind::Insert | RowKind::UpdateAfter);
        let mut record = Map::new();
        match self.format.flavor {
            Flavor::Debezium => {
                let (before, after) = if added { (Json::Null, row) } else { (row, Json::Null) };
                record.insert("before".into(), before);
                record.insert("after".into(), after);
                record.insert("op".into(), Json::String(if added { "c" } else { "d" }.into()));
            }
            Flavor::Canal => {
                record.insert("data".into(), Json::Array(vec![row]));
                record.insert("type".into(), Json::String(if added { "INSERT" } else { "DELETE" }.into()));
            }
            Flavor::Maxwell => {
                record.insert("data".into(), row);
                record.insert("type".into(), Json::String(if added { "insert" } else { "delete" }.into()));
            }
        }
        out.push_str(&Json::Object(record).to_string());
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::parse::parse_schema;
    use weir_runtime::Chunk;

    fn decode(flavor: Flavor, options: &[(&str, &str)], text: &str) -> std::result::Result<Vec<String>, DecodeError> {
        let schema = parse_schema(&[("id", "BIGINT"), ("name", "STRING"), ("n", "INT")]).unwrap();
        let mut opts = TableOptions::new(options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
        let format = CdcFormatFactory(flavor).create(&schema, &mut opts).unwrap();
        let mut decoder = format.decoder();
        let types: Vec<_> = schema.fields.iter().map(|f| f.data_type.clone()).collect();
        let mut columns = ColumnsBuilder::for_types(&types);
        let mut kinds = Vec::new();
        let mut lines = Lines::from_text(text.to_string());
        while decoder.decode_changes(&mut lines, &mut columns, &mut kinds)? {}
        let arrays = columns.finish().unwrap();
        let chunk = Chunk::from_arrays(kinds, arrays);
        Ok(chunk
            .rows()
            .map(|(kind, row)| {
                let mut text = String::new();
                weir_runtime::row::write_row(&mut text, kind, row);
                text
            })
            .collect())
    }

    #[test]
    fn debezium_changes_become_inserts_retractions_and_deletes() {
        let text = r#"{"before":null,"after":{"id":1,"name":"a","n":1},"op":"c"}
{"before":{"id":1,"name":"a","n":1},"after":{"id":1,"name":"a","n":2},"op":"u"}
{"before":{"id":1,"name":"a","n":2},"after":null,"op":"d"}
{"before":null,"after":{"id":2,"name":"b","n":5},"op":"r"}"#;
        assert_eq!(
            decode(Flavor::Debezium, &[], text).unwrap(),
            ["+I[1, a, 1]", "-U[1, a, 1]", "+U[1, a, 2]", "-D[1, a, 2]", "+I[2, b, 5]"]
        );
        let wrapped = r#"{"schema":{},"payload":{"before":null,"after":{"id":3,"name":"c","n":0},"op":"c"}}"#;
        assert_eq!(
            decode(Flavor::Debezium, &[("debezium-json.schema-include", "true")], wrapped).unwrap(),
            ["+I[3, c, 0]"]
        );
        let err = decode(Flavor::Debezium, &[], r#"{"before":null,"after":{"id":1},"op":"u"}"#).unwrap_err();
        assert!(err.reason.contains("REPLICA IDENTITY"), "{}", err.reason);
        let err = decode(Flavor::Debezium, &[], r#"{"op":"x"}"#).unwrap_err();
        assert!(err.reason.contains("Unknown \"op\" value \"x\""), "{}", err.reason);
        assert_eq!(
            decode(Flavor::Debezium, &[("debezium-json.ignore-parse-errors", "true")], "{\"op\":\"x\"}\nnot json")
                .unwrap(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn canal_and_maxwell_updates_lay_old_fields_over_the_after_image() {
        let canal = r#"{"data":[{"id":"1","name":"a","n":"1"},{"id":"2","name":"b","n":"2"}],"type":"INSERT","database":"d","table":"t"}
{"data":[{"id":"1","name":"a","n":"3"}],"old":[{"n":"1"}],"type":"UPDATE","database":"d","table":"t"}
{"data":[{"id":"2","name":"b","n":"2"}],"type":"DELETE","database":"d","table":"t"}
{"data":null,"type":"CREATE","isDdl":true,"database":"d","table":"t"}
{"data":[{"id":"9","name":"z","n":"9"}],"type":"INSERT","database":"other","table":"t"}"#;
        assert_eq!(
            decode(Flavor::Canal, &[("canal-json.database.include", "d")], canal).unwrap(),
            ["+I[1, a, 1]", "+I[2, b, 2]", "-U[1, a, 1]", "+U[1, a, 3]", "-D[2, b, 2]"]
        );
        let maxwell = r#"{"database":"d","table":"t","type":"insert","data":{"id":1,"name":"a","n":1}}
{"database":"d","table":"t","type":"update","data":{"id":1,"name":"x","n":1},"old":{"name":"a"}}
{"database":"d","table":"t","type":"delete","data":{"id":1,"name":"x","n":1}}"#;
        assert_eq!(
            decode(Flavor::Maxwell, &[], maxwell).unwrap(),
            ["+I[1, a, 1]", "-U[1, a, 1]", "+U[1, x, 1]", "-D[1, x, 1]"]
        );
    }

    #[test]
    fn changes_are_written_as_flink_writes_them() {
        let schema = parse_schema(&[("id", "BIGINT"), ("name", "STRING")]).unwrap();
        let mut text = String::new();
        for flavor in [Flavor::Debezium, Flavor::Canal, Flavor::Maxwell] {
            let mut opts = TableOptions::new(Default::default());
            let mut encoder = CdcFormatFactory(flavor).create(&schema, &mut opts).unwrap().encoder();
            for kind in [RowKind::Insert, RowKind::UpdateBefore, RowKind::UpdateAfter, RowKind::Delete] {
                encoder.encode_change(kind, &[Cell::Int(1), Cell::Str("a")], &mut text);
            }
        }
        let expected = r#"{"before":null,"after":{"id":1,"name":"a"},"op":"c"}
{"before":{"id":1,"name":"a"},"after":null,"op":"d"}
{"before":null,"after":{"id":1,"name":"a"},"op":"c"}
{"before":{"id":1,"name":"a"},"after":null,"op":"d"}
{"data":[{"id":1,"name":"a"}],"type":"INSERT"}
{"data":[{"id":1,"name":"a"}],"type":"DELETE"}
{"data":[{"id":1,"name":"a"}],"type":"INSERT"}
{"data":[{"id":1,"name":"a"}],"type":"DELETE"}
{"data":{"id":1,"name":"a"},"type":"insert"}
{"data":{"id":1,"name":"a"},"type":"delete"}
{"data":{"id":1,"name":"a"},"type":"insert"}
{"data":{"id":1,"name":"a"},"type":"delete"}
"#;
        assert_eq!(text, expected);
    }
}
