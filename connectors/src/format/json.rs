//! The `json` format: one JSON object per line, fields by column name.
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `json.fail-on-missing-field` | `false` | a missing field fails instead of reading as NULL |
//! | `json.ignore-parse-errors` | `false` | a record that cannot be read is skipped |
//! | `json.timestamp-format.standard` | `SQL` | `SQL` (`2024-01-01 10:00:00`) or `ISO-8601` (`2024-01-01T10:00:00`) |
//!
//! As in Flink, the first two cannot both be `true`. Numbers keep all their digits (DECIMAL
//! reads exactly); any scalar may also be given as a string.

use std::sync::Arc;

use serde_json::{Map, Number, Value as Json};
use weir_runtime::columnar::{Cell, ColumnsBuilder};
use weir_runtime::{DataType, Field, LogicalType, Schema, Value};

use super::text::{parse_field, write_field, TimestampStandard};
use super::{DecodeError, Decoder, Encoder, Format, FormatFactory, Lines};
use crate::error::{Error, Result};
use crate::options::TableOptions;

/// Creates the `json` format.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonFormatFactory;

/// The settings of a `json` format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonOptions {
    /// `json.fail-on-missing-field`
    pub fail_on_missing_field: bool,
    /// `json.ignore-parse-errors`
    pub ignore_parse_errors: bool,
    /// `json.timestamp-format.standard`
    pub timestamp_standard: TimestampStandard,
}

impl JsonOptions {
    /// Reads and validates the `json.*` options.
    ///
    /// # Errors
    /// A value of the wrong form, or both `fail-on-missing-field` and `ignore-parse-errors`.
    pub fn from_options(options: &mut TableOptions) -> Result<Self> {
        let fail_on_missing_field = options.boolean("json.fail-on-missing-field", false)?;
        let ignore_parse_errors = options.boolean("json.ignore-parse-errors", false)?;
        if fail_on_missing_field && ignore_parse_errors {
            return Err(Error::Validation(
                "fail-on-missing-field and ignore-parse-errors shouldn't both be true.".into(),
            ));
        }
        let timestamp_standard = match options.one_of("json.timestamp-format.standard", &["SQL", "ISO-8601"], "SQL")? {
            "ISO-8601" => TimestampStandard::Iso8601,
            _ => TimestampStandard::Sql,
        };
        Ok(JsonOptions { fail_on_missing_field, ignore_parse_errors, timestamp_standard })
    }
}

/// The `json` format for one schema.
#[derive(Debug, Clone)]
pub struct JsonFormat {
    fields: Arc<[Field]>,
    options: JsonOptions,
}

impl JsonFormat {
    /// A format for `schema`.
    pub fn new(schema: &Schema, options: JsonOptions) -> Self {
        JsonFormat { fields: schema.fields.clone().into(), options }
    }
}

impl FormatFactory for JsonFormatFactory {
    fn identifier(&self) -> &'static str {
        "json"
    }

    fn create(&self, schema: &Schema, options: &mut TableOptions) -> Result<Arc<dyn Format>> {
        Ok(Arc::new(JsonFormat::new(schema, JsonOptions::from_options(options)?)))
    }
}

impl Format for JsonFormat {
    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(JsonDecoder { format: self.clone() })
    }

    fn encoder(&self) -> Box<dyn Encoder> {
        Box::new(JsonEncoder { format: self.clone() })
    }
}

struct JsonDecoder {
    format: JsonFormat,
}

/// A failure inside one field: its position and the reason.
pub(crate) type FieldError = (Option<(usize, String)>, String);

/// Parses `text` as one JSON object.
pub(crate) fn parse_object(text: &str) -> Result<Map<String, Json>, FieldError> {
    match serde_json::from_str(text).map_err(|e| (None, format!("malformed JSON: {e}")))? {
        Json::Object(object) => Ok(object),
        _ => Err((None, "a record must be a JSON object".into())),
    }
}

impl JsonFormat {
    /// Pushes the fields of `object` as one record into `out`; on an error, `out` may hold
    /// part of the record.
    pub(crate) fn push_object(&self, object: &Map<String, Json>, out: &mut ColumnsBuilder) -> Result<(), FieldError> {
        for (i, field) in self.fields.iter().enumerate() {
            let at = || Some((i, field.name.clone()));
            let cell = match object.get(&field.name) {
                None if self.options.fail_on_missing_field => {
                    return Err((at(), format!("Could not find field with name '{}'.", field.name)))
                }
                None | Some(Json::Null) => Cell::Null,
                Some(Json::String(s)) if is_text(&field.data_type) => Cell::Str(s),
                Some(json) => Cell::from_value(convert(json, &field.data_type).map_err(|reason| (at(), reason))?),
            };
            out.column(i).push(cell).map_err(|e| (at(), e.to_string()))?;
        }
        out.end_record();
        Ok(())
    }

    /// The JSON object of a row's `cells`, by field name.
    pub(crate) fn object_of(&self, cells: &[Cell<'_>]) -> Map<String, Json> {
        let encoder = JsonEncoder { format: self.clone() };
        let mut object = Map::new();
        for (field, cell) in self.fields.iter().zip(cells) {
            let json = match (cell, &field.data_type.logical) {
                (Cell::Str(s), _) => Json::String(s.to_string()),
                (other, _) => encoder.to_json(&other.clone().into_value(), &field.data_type),
            };
            object.insert(field.name.clone(), json);
        }
        object
    }
}

impl JsonDecoder {
    /// Pushes the fields of the record `text` into `out`; on an error, `out` may hold part of the record.
    fn record(&self, text: &str, out: &mut ColumnsBuilder) -> Result<(), FieldError> {
        self.format.push_object(&parse_object(text)?, out)
    }
}

fn is_text(ty: &DataType) -> bool {
    matches!(ty.logical, LogicalType::Char(_) | LogicalType::Varchar(_))
}

/// Converts one JSON value to a value of `ty`.
fn convert(json: &Json, ty: &DataType) -> Result<Value, String> {
    match (json, &ty.logical) {
        (Json::Null, _) => Ok(Value::Null),
        (Json::Bool(b), LogicalType::Boolean) => Ok(Value::Boolean(*b)),
        (Json::Array(items), LogicalType::Array(element)) => items
            .iter()
            .map(|item| convert(item, element))
            .collect::<Result<Vec<_>, _>>()
            .map(|v| Value::Array(v.into())),
        (Json::Object(entries), LogicalType::Map(key, value)) => entries
            .iter()
            .map(|(k, v)| Ok((parse_field(k, key)?, convert(v, value)?)))
            .collect::<Result<Vec<_>, String>>()
            .map(|v| Value::Map(v.into())),
        (Json::Object(entries), LogicalType::Multiset(element)) => entries
            .iter()
            .map(|(k, v)| Ok((parse_field(k, element)?, convert(v, &DataType::int())?)))
            .collect::<Result<Vec<_>, String>>()
            .map(|v| Value::Map(v.into())),
        (Json::Object(entries), LogicalType::Row(fields)) => fields
            .iter()
            .map(|f| entries.get(&f.name).map_or(Ok(Value::Null), |v| convert(v, &f.data_type)))
            .collect::<Result<Vec<_>, _>>()
            .map(|v| Value::Row(v.into())),
        (Json::String(s), LogicalType::Char(_) | LogicalType::Varchar(_)) => Ok(Value::String(Arc::from(s.as_str()))),
        (Json::String(s), _) => parse_field(s, ty),
        (Json::Number(n), _) => parse_field(&n.to_string(), ty),
        (Json::Bool(b), LogicalType::Char(_) | LogicalType::Varchar(_)) => Ok(Value::string(&b.to_string())),
        (other, LogicalType::Char(_) | LogicalType::Varchar(_)) => Ok(Value::string(&other.to_string())),
        (other, _) => Err(format!("cannot read {other} as {}", ty.logical)),
    }
}

impl Decoder for JsonDecoder {
    fn decode(&mut self, lines: &mut Lines, out: &mut ColumnsBuilder) -> Result<bool, DecodeError> {
        loop {
            let next_number = lines.number() + 1;
            let line = match lines.next_line() {
                Ok(None) => return Ok(false),
                Ok(Some(l)) => l.to_string(),
                Err(e) if super::is_not_utf8(&e) && self.format.options.ignore_parse_errors => continue,
                Err(e) => {
                    return Err(DecodeError {
                        line: next_number,
                        column: None,
                        field: None,
                        reason: format!("cannot read the file: {e}"),
                    })
                }
            };
            // A blank line of a file is passed over; a blank message (a Kafka value or key)
            // is not JSON, as Flink's decoder says.
            if line.trim().is_empty() && !lines.is_message() {
                continue;
            }
            let rows = out.rows();
            let result = self.record(&line, out);
            if result.is_err() {
                out.truncate(rows);
            }
            match result {
                Ok(()) => return Ok(true),
                Err(_) if self.format.options.ignore_parse_errors => {}
                Err((position, reason)) => {
                    return Err(DecodeError {
                        line: lines.number(),
                        column: position.as_ref().map(|(i, _)| i + 1),
                        field: position.map(|(_, name)| name),
                        reason,
                    })
                }
            }
        }
    }
}

struct JsonEncoder {
    format: JsonFormat,
}

impl JsonEncoder {
    /// `value` of type `ty` as JSON, as Flink's JSON format writes it: a ROW at any depth (in
    /// an ARRAY, a MAP or another ROW too) as an object of its fields by name.
    fn to_json(&self, value: &Value, ty: &DataType) -> Json {
        match (value, &ty.logical) {
            (Value::Array(items), LogicalType::Array(element)) => {
                Json::Array(items.iter().map(|v| self.to_json(v, element)).collect())
            }
            (Value::Map(entries), LogicalType::Map(_, value_type)) => self.object(entries, value_type),
            (Value::Map(entries), LogicalType::Multiset(_)) => self.object(entries, &DataType::int()),
            (Value::Row(values), LogicalType::Row(fields)) if values.len() == fields.len() => Json::Object(
                fields
                    .iter()
                    .zip(values.iter())
                    .map(|(f, v)| (f.name.clone(), self.to_json(v, &f.data_type)))
                    .collect(),
            ),
            (value, _) => self.untyped(value),
        }
    }

    /// A MAP (or MULTISET, with its counts) as an object keyed by the keys' text.
    fn object(&self, entries: &[(Value, Value)], value_type: &DataType) -> Json {
        let standard = self.format.options.timestamp_standard;
        let mut object = Map::new();
        for (k, v) in entries.iter() {
            let mut key = String::new();
            write_field(&mut key, k, standard);
            object.insert(key, self.to_json(v, value_type));
        }
        Json::Object(object)
    }

    /// A value whose type is not at hand (or does not match it) as JSON.
    fn untyped(&self, value: &Value) -> Json {
        let standard = self.format.options.timestamp_standard;
        match value {
            Value::Null => Json::Null,
            Value::Boolean(b) => Json::Bool(*b),
            Value::String(s) => Json::String(s.to_string()),
            Value::TinyInt(_) | Value::SmallInt(_) | Value::Int(_) | Value::BigInt(_) | Value::Decimal { .. } => {
                let mut text = String::new();
                write_field(&mut text, value, standard);
                text.parse::<Number>().map_or(Json::String(text), Json::Number)
            }
            Value::Float(_) | Value::Double(_) => {
                let mut text = String::new();
                write_field(&mut text, value, standard);
                // NaN and infinities are not JSON numbers: they travel as strings, as in Flink.
                text.parse::<Number>().map_or(Json::String(text), Json::Number)
            }
            Value::Array(items) => Json::Array(items.iter().map(|v| self.untyped(v)).collect()),
            Value::Map(entries) => {
                let mut object = Map::new();
                for (k, v) in entries.iter() {
                    let mut key = String::new();
                    write_field(&mut key, k, standard);
                    object.insert(key, self.untyped(v));
                }
                Json::Object(object)
            }
            Value::Row(fields) => Json::Array(fields.iter().map(|v| self.untyped(v)).collect()),
            other => {
                let mut text = String::new();
                write_field(&mut text, other, standard);
                Json::String(text)
            }
        }
    }
}

impl Encoder for JsonEncoder {
    fn encode_record(&mut self, cells: &[Cell<'_>], out: &mut String) {
        out.push_str(&Json::Object(self.format.object_of(cells)).to_string());
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(cols: &[(&str, &str)]) -> Schema {
        weir_runtime::parse::parse_schema(cols).unwrap()
    }

    fn options(pairs: &[(&str, &str)]) -> JsonOptions {
        JsonOptions::from_options(&mut TableOptions::new(
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ))
        .unwrap()
    }

    fn decode(format: &JsonFormat, text: &str) -> Result<Vec<String>, DecodeError> {
        let schema = Schema::new(format.fields.to_vec());
        let rows = super::super::decode_rows(&mut *format.decoder(), &mut Lines::from_text(text.to_string()), &schema)?;
        Ok(rows.into_iter().map(|row| weir_runtime::Row::insert(row).to_string()).collect())
    }

    fn orders() -> Schema {
        schema(&[("id", "BIGINT"), ("amount", "DECIMAL(10, 2)"), ("ts", "TIMESTAMP(3)"), ("tags", "ARRAY<STRING>")])
    }

    #[test]
    fn reads_objects_by_field_name() {
        let f = JsonFormat::new(&orders(), options(&[]));
        let text = r#"{"id": 1, "amount": 410.82, "ts": "2024-01-01 10:00:00.331", "tags": ["a", "b"]}
{"amount": "3", "id": "2"}"#;
        assert_eq!(
            decode(&f, text).unwrap(),
            ["+I[1, 410.82, 2024-01-01T10:00:00.331, [a, b]]", "+I[2, 3.00, null, null]"]
        );
    }

    #[test]
    fn missing_fields_and_parse_errors_follow_the_options() {
        let strict = JsonFormat::new(&orders(), options(&[("json.fail-on-missing-field", "true")]));
        let err = decode(&strict, "{\"id\": 1}").unwrap_err();
        assert_eq!((err.line, err.column), (1, Some(2)));
        assert_eq!(err.reason, "Could not find field with name 'amount'.");
        let f = JsonFormat::new(&orders(), options(&[]));
        let err = decode(&f, "{\"id\": 1}\n{\"id\": \"x\"}").unwrap_err();
        assert_eq!((err.line, err.column, err.field.as_deref()), (2, Some(1), Some("id")));
        assert_eq!(err.reason, "cannot parse 'x' as BIGINT");
        let lenient = JsonFormat::new(&orders(), options(&[("json.ignore-parse-errors", "true")]));
        assert_eq!(decode(&lenient, "{\"id\": \"x\"}\nnot json\n{\"id\": 3}").unwrap(), ["+I[3, null, null, null]"]);
        // A line that is not UTF-8 is a parse error like any other.
        let bytes = b"{\"id\": 1}\n{\"id\": 2, \"tags\": [\"\xff\"]}\n{\"id\": 3}\n".to_vec();
        let read = |format: &JsonFormat| {
            let mut lines = Lines::new(Box::new(std::io::Cursor::new(bytes.clone())));
            super::super::decode_rows(&mut *format.decoder(), &mut lines, &orders())
        };
        assert_eq!(read(&lenient).unwrap().len(), 2);
        let error = read(&f).unwrap_err();
        assert!(error.line == 2 && error.reason.contains("line 2 is not valid UTF-8"), "{error:?}");
        let both = JsonOptions::from_options(&mut TableOptions::new(
            [("json.fail-on-missing-field", "true"), ("json.ignore-parse-errors", "true")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ));
        assert_eq!(
            both.unwrap_err().to_string(),
            "fail-on-missing-field and ignore-parse-errors shouldn't both be true."
        );
    }

    #[test]
    fn writes_what_it_reads_in_both_timestamp_standards() {
        for (standard, ts) in [("SQL", "2024-01-01 10:00:02.5"), ("ISO-8601", "2024-01-01T10:00:02.5")] {
            let f = JsonFormat::new(&orders(), options(&[("json.timestamp-format.standard", standard)]));
            let text = format!("{{\"id\":7,\"amount\":10.00,\"ts\":\"{ts}\",\"tags\":[\"x\",null]}}\n");
            let rows =
                super::super::decode_rows(&mut *f.decoder(), &mut Lines::from_text(text.clone()), &orders()).unwrap();
            let mut written = String::new();
            f.encoder().encode(&rows[0], &mut written);
            assert_eq!(written, text);
            let mut chunk = weir_runtime::Chunk::with_types(
                &orders().fields.iter().map(|f| f.data_type.clone()).collect::<Vec<_>>(),
            );
            chunk.push(weir_runtime::RowKind::Insert, &rows[0]);
            let mut from_arrays = String::new();
            chunk.columns();
            f.encoder().encode_chunk(&chunk, &mut from_arrays);
            assert_eq!(from_arrays, text, "from arrays");
        }
    }

    /// A ROW inside an ARRAY, a MAP or another ROW is written as an object of its fields, as
    /// Flink writes it, and reads back.
    #[test]
    fn nested_rows_are_written_as_objects_and_read_back() {
        use weir_runtime::Field;
        let row = |fields: Vec<(&str, DataType)>| {
            DataType::new(LogicalType::Row(fields.into_iter().map(|(n, t)| Field::new(n, t)).collect()))
        };
        let xy = row(vec![("x", DataType::int()), ("y", DataType::string())]);
        let nested = Schema::new(vec![
            Field::new("id", DataType::int()),
            Field::new("items", DataType::new(LogicalType::Array(Box::new(xy)))),
            Field::new(
                "by_name",
                DataType::new(LogicalType::Map(
                    Box::new(DataType::string()),
                    Box::new(row(vec![("x", DataType::int())])),
                )),
            ),
            Field::new("outer", row(vec![("inner", row(vec![("z", DataType::boolean())])), ("n", DataType::int())])),
        ]);
        let f = JsonFormat::new(&nested, options(&[]));
        let text = concat!(
            r#"{"id":1,"items":[{"x":1,"y":"a"},{"x":2,"y":null}],"by_name":{"k":{"x":3}},"#,
            r#""outer":{"inner":{"z":true},"n":4}}"#,
            "\n"
        );
        let rows =
            super::super::decode_rows(&mut *f.decoder(), &mut Lines::from_text(text.to_string()), &nested).unwrap();
        assert_eq!(
            weir_runtime::Row::insert(rows[0].clone()).to_string(),
            "+I[1, [+I[1, a], +I[2, null]], {k=+I[3]}, +I[+I[true], 4]]"
        );
        let mut written = String::new();
        f.encoder().encode(&rows[0], &mut written);
        assert_eq!(written, text);
    }
}
