//! The `csv` format, with Flink's options and defaults.
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `csv.field-delimiter` | `,` | one character between fields (`\t` for a tab) |
//! | `csv.quote-character` | `"` | encloses fields that contain delimiters, quotes or line breaks |
//! | `csv.disable-quote-character` | `false` | no quoting at all |
//! | `csv.allow-comments` | `false` | lines starting with `#` are skipped |
//! | `csv.ignore-parse-errors` | `false` | a field that cannot be read is NULL; a row of the wrong length is padded or cut |
//! | `csv.array-element-delimiter` | `;` | between the elements of an ARRAY field and the fields of a ROW |
//! | `csv.escape-character` | none | makes the next character literal |
//! | `csv.null-literal` | none | the text that stands for NULL |
//!
//! A quoted field may span lines. Without `csv.null-literal`, NULL is written as an empty
//! field, which reads back as an empty string or, for other types, as a parse error (as in Flink).

use std::sync::Arc;

use weir_runtime::columnar::{Cell, ColumnsBuilder};
use weir_runtime::{DataType, Field, LogicalType, Schema, Value};

use super::text::{parse_field, write_field, TimestampStandard};
use super::{DecodeError, Decoder, Encoder, Format, FormatFactory, Lines};
use crate::error::{Error, Result};
use crate::options::TableOptions;

/// Creates the `csv` format.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvFormatFactory;

/// The settings of a `csv` format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvOptions {
    /// `csv.field-delimiter`
    pub field_delimiter: char,
    /// `csv.quote-character`, `None` when `csv.disable-quote-character` is set.
    pub quote: Option<char>,
    /// `csv.allow-comments`
    pub allow_comments: bool,
    /// `csv.ignore-parse-errors`
    pub ignore_parse_errors: bool,
    /// `csv.array-element-delimiter`
    pub array_element_delimiter: String,
    /// `csv.escape-character`
    pub escape: Option<char>,
    /// `csv.null-literal`
    pub null_literal: Option<String>,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            field_delimiter: ',',
            quote: Some('"'),
            allow_comments: false,
            ignore_parse_errors: false,
            array_element_delimiter: ";".into(),
            escape: None,
            null_literal: None,
        }
    }
}

impl CsvOptions {
    /// Reads and validates the `csv.*` options.
    ///
    /// # Errors
    /// A value of the wrong form, naming the option.
    pub fn from_options(options: &mut TableOptions) -> Result<Self> {
        let defaults = CsvOptions::default();
        let field_delimiter = options.character("csv.field-delimiter")?.unwrap_or(defaults.field_delimiter);
        let disable_quote = options.boolean("csv.disable-quote-character", false)?;
        let quote_character = options.character("csv.quote-character")?;
        if disable_quote && quote_character.is_some() {
            return Err(Error::Validation(
                "Format cannot define a quote character and disabled quote character at the same time.".into(),
            ));
        }
        Ok(CsvOptions {
            field_delimiter,
            quote: if disable_quote { None } else { quote_character.or(defaults.quote) },
            allow_comments: options.boolean("csv.allow-comments", false)?,
            ignore_parse_errors: options.boolean("csv.ignore-parse-errors", false)?,
            array_element_delimiter: options
                .optional("csv.array-element-delimiter")
                .map_or(defaults.array_element_delimiter, str::to_string),
            escape: options.character("csv.escape-character")?,
            null_literal: options.optional("csv.null-literal").map(str::to_string),
        })
    }
}

/// The `csv` format for one schema.
#[derive(Debug, Clone)]
pub struct CsvFormat {
    fields: Arc<[Field]>,
    options: Arc<CsvOptions>,
}

impl CsvFormat {
    /// A format for `schema`.
    ///
    /// # Errors
    /// A column of a type CSV cannot carry (MAP, an ARRAY or ROW of nested values).
    pub fn new(schema: &Schema, options: CsvOptions) -> Result<Self> {
        for f in &schema.fields {
            let flat = |t: &DataType| {
                !matches!(
                    t.logical,
                    LogicalType::Array(_) | LogicalType::Map(..) | LogicalType::Multiset(_) | LogicalType::Row(_)
                )
            };
            let supported = match &f.data_type.logical {
                LogicalType::Map(..) | LogicalType::Multiset(_) => false,
                LogicalType::Array(element) => flat(element),
                LogicalType::Row(fields) => fields.iter().all(|f| flat(&f.data_type)),
                _ => true,
            };
            if !supported {
                return Err(Error::Validation(format!(
                    "The 'csv' format does not support column '{}' of type {}.",
                    f.name, f.data_type
                )));
            }
        }
        Ok(CsvFormat { fields: schema.fields.clone().into(), options: Arc::new(options) })
    }
}

impl FormatFactory for CsvFormatFactory {
    fn identifier(&self) -> &'static str {
        "csv"
    }

    fn create(&self, schema: &Schema, options: &mut TableOptions) -> Result<Arc<dyn Format>> {
        Ok(Arc::new(CsvFormat::new(schema, CsvOptions::from_options(options)?)?))
    }
}

impl Format for CsvFormat {
    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(CsvDecoder {
            format: self.clone(),
            record: String::new(),
            unquoted: String::new(),
            ranges_in_unquoted: false,
            ranges: Vec::new(),
        })
    }

    fn encoder(&self) -> Box<dyn Encoder> {
        Box::new(CsvEncoder { format: self.clone() })
    }
}

/// Splits records into fields and converts them.
struct CsvDecoder {
    format: CsvFormat,
    /// The record's text (several lines when a quoted field spans them).
    record: String,
    /// Field contents with quotes and escapes removed, when the record has any.
    unquoted: String,
    /// Whether `ranges` index `unquoted` (else `record`).
    ranges_in_unquoted: bool,
    /// Byte range of each field's text.
    ranges: Vec<(usize, usize)>,
}

impl CsvDecoder {
    /// Splits `self.record` into field ranges; returns `false` when a quoted field is still open.
    fn split(&mut self) -> bool {
        let o = &self.format.options;
        self.ranges.clear();
        let special = |c: char| Some(c) == o.quote || Some(c) == o.escape;
        if !self.record.contains(special) {
            // No quotes and no escapes: the fields are slices of the record itself.
            let base = self.record.as_ptr() as usize;
            for field in self.record.split(o.field_delimiter) {
                let start = field.as_ptr() as usize - base;
                self.ranges.push((start, start + field.len()));
            }
            self.ranges_in_unquoted = false;
            return true;
        }
        self.ranges_in_unquoted = true;
        self.unquoted.clear();
        let mut field_start = 0;
        let mut in_quotes = false;
        let mut at_field_start = true;
        let mut chars = self.record.chars().peekable();
        while let Some(c) = chars.next() {
            if Some(c) == o.escape {
                if let Some(next) = chars.next() {
                    self.unquoted.push(next);
                }
                at_field_start = false;
            } else if in_quotes {
                if Some(c) == o.quote {
                    if chars.peek().copied() == o.quote {
                        self.unquoted.push(c);
                        chars.next();
                    } else {
                        in_quotes = false;
                    }
                } else {
                    self.unquoted.push(c);
                }
            } else if c == o.field_delimiter {
                self.ranges.push((field_start, self.unquoted.len()));
                field_start = self.unquoted.len();
                at_field_start = true;
            } else if at_field_start && Some(c) == o.quote {
                in_quotes = true;
                at_field_start = false;
            } else {
                self.unquoted.push(c);
                at_field_start = false;
            }
        }
        self.ranges.push((field_start, self.unquoted.len()));
        !in_quotes
    }

    /// The text of field `i`.
    fn field(&self, i: usize) -> Option<&str> {
        let (start, end) = *self.ranges.get(i)?;
        let source = if self.ranges_in_unquoted { &self.unquoted } else { &self.record };
        Some(&source[start..end])
    }

    /// The cell of a field's `text` in a column of `ty`: text as it stands, other types parsed.
    fn cell<'t>(&self, text: &'t str, ty: &DataType) -> Result<Cell<'t>, String> {
        if self.format.options.null_literal.as_deref() == Some(text) {
            return Ok(Cell::Null);
        }
        match &ty.logical {
            LogicalType::Char(_) | LogicalType::Varchar(_) => Ok(Cell::Str(text)),
            _ => self.convert(text, ty).map(Cell::from_value),
        }
    }

    fn convert(&self, text: &str, ty: &DataType) -> Result<Value, String> {
        let o = &self.format.options;
        if o.null_literal.as_deref() == Some(text) {
            return Ok(Value::Null);
        }
        match &ty.logical {
            LogicalType::Array(element) => {
                let items: Result<Vec<Value>, String> = if text.is_empty() {
                    Ok(Vec::new())
                } else {
                    text.split(o.array_element_delimiter.as_str()).map(|item| self.convert(item, element)).collect()
                };
                items.map(|v| Value::Array(v.into()))
            }
            // A ROW's fields are separated as an ARRAY's elements are; missing ones are NULL.
            LogicalType::Row(fields) => {
                let parts: Vec<&str> =
                    if text.is_empty() { Vec::new() } else { text.split(o.array_element_delimiter.as_str()).collect() };
                if parts.len() > fields.len() {
                    return Err(format!("a ROW of {} fields, found {} values", fields.len(), parts.len()));
                }
                let values: Result<Vec<Value>, String> = fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| parts.get(i).map_or(Ok(Value::Null), |part| self.convert(part, &f.data_type)))
                    .collect();
                values.map(|v| Value::Row(v.into()))
            }
            _ => parse_field(text, ty),
        }
    }
}

impl Decoder for CsvDecoder {
    fn decode(&mut self, lines: &mut Lines, out: &mut ColumnsBuilder) -> Result<bool, DecodeError> {
        let io_error = |line: usize, e: std::io::Error| DecodeError {
            line,
            column: None,
            field: None,
            reason: format!("cannot read the file: {e}"),
        };
        let ignore = self.format.options.ignore_parse_errors;
        // Find the next record: skip blank lines and, when allowed, comments (and, ignoring
        // parse errors, lines that are not UTF-8).
        let message = lines.is_message();
        let start = loop {
            let next_number = lines.number() + 1;
            let line = match lines.next_line() {
                Ok(None) => return Ok(false),
                Ok(Some(l)) => l,
                Err(e) if ignore && super::is_not_utf8(&e) => continue,
                Err(e) => return Err(io_error(next_number, e)),
            };
            if line.is_empty() && message {
                // An empty message (a Kafka value or key) holds no row: Flink's decoder fails.
                if ignore {
                    return Ok(true);
                }
                return Err(DecodeError {
                    line: 1,
                    column: None,
                    field: None,
                    reason: "No content to map due to end-of-input: the message is empty".into(),
                });
            }
            if line.is_empty() || (self.format.options.allow_comments && line.starts_with('#')) {
                continue;
            }
            self.record.clear();
            self.record.push_str(line);
            break lines.number();
        };
        while !self.split() {
            let next_number = lines.number() + 1;
            let next = match lines.next_line() {
                // A record running on into a line that is not UTF-8 is skipped whole.
                Err(e) if ignore && super::is_not_utf8(&e) => return self.decode(lines, out),
                other => other.map_err(|e| io_error(next_number, e))?,
            };
            match next {
                Some(next) => {
                    self.record.push('\n');
                    self.record.push_str(next);
                }
                None => {
                    return Err(DecodeError {
                        line: start,
                        column: None,
                        field: None,
                        reason: "a quoted field is not closed before the end of the file".into(),
                    })
                }
            }
        }
        let arity = self.format.fields.len();
        if self.ranges.len() != arity && !ignore {
            return Err(DecodeError {
                line: start,
                column: None,
                field: None,
                reason: format!("Row length mismatch. {arity} fields expected but was {}.", self.ranges.len()),
            });
        }
        let rows = out.rows();
        for (i, field) in self.format.fields.iter().enumerate() {
            let cell = match self.field(i) {
                None => Cell::Null,
                Some(text) => match self.cell(text, &field.data_type) {
                    Ok(cell) => cell,
                    Err(_) if ignore => Cell::Null,
                    Err(reason) => {
                        out.truncate(rows);
                        return Err(DecodeError {
                            line: start,
                            column: Some(i + 1),
                            field: Some(field.name.clone()),
                            reason,
                        });
                    }
                },
            };
            if let Err(e) = out.column(i).push(cell) {
                out.truncate(rows);
                return Err(DecodeError {
                    line: start,
                    column: Some(i + 1),
                    field: Some(field.name.clone()),
                    reason: e.to_string(),
                });
            }
        }
        out.end_record();
        Ok(true)
    }
}

/// Writes rows as CSV records.
struct CsvEncoder {
    format: CsvFormat,
}

impl CsvEncoder {
    fn write_text(&self, text: &str, out: &mut String) {
        let o = &self.format.options;
        let needs_quotes = text.is_empty() && o.null_literal.is_none()
            || text.contains(|c: char| {
                c == o.field_delimiter || Some(c) == o.quote || c == '\n' || c == '\r' || Some(c) == o.escape
            })
            || (o.allow_comments && text.starts_with('#'));
        match o.quote {
            Some(q) if needs_quotes && !text.is_empty() => {
                out.push(q);
                for c in text.chars() {
                    if c == q {
                        out.push(q);
                    }
                    out.push(c);
                }
                out.push(q);
            }
            _ => match o.escape {
                Some(e) => {
                    for c in text.chars() {
                        if c == o.field_delimiter || c == e || c == '\n' || c == '\r' {
                            out.push(e);
                        }
                        out.push(c);
                    }
                }
                None => out.push_str(text),
            },
        }
    }

    fn write_value(&self, value: &Value, out: &mut String) {
        let o = &self.format.options;
        match value {
            Value::Null => {
                if let Some(null) = &o.null_literal {
                    out.push_str(null);
                }
            }
            Value::String(s) => self.write_text(s, out),
            Value::Array(items) | Value::Row(items) => {
                let mut joined = String::new();
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        joined.push_str(&o.array_element_delimiter);
                    }
                    match item {
                        Value::Null => joined.push_str(o.null_literal.as_deref().unwrap_or("")),
                        other => write_field(&mut joined, other, TimestampStandard::Sql),
                    }
                }
                self.write_text(&joined, out);
            }
            other => {
                let mut text = String::new();
                write_field(&mut text, other, TimestampStandard::Sql);
                self.write_text(&text, out);
            }
        }
    }
}

impl Encoder for CsvEncoder {
    fn encode_record(&mut self, cells: &[Cell<'_>], out: &mut String) {
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                out.push(self.format.options.field_delimiter);
            }
            match cell {
                Cell::Str(s) => self.write_text(s, out),
                other => self.write_value(&other.clone().into_value(), out),
            }
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(cols: &[(&str, &str)]) -> Schema {
        weir_runtime::parse::parse_schema(cols).unwrap()
    }

    fn decode_all(format: &CsvFormat, text: &str) -> Result<Vec<Vec<Value>>, DecodeError> {
        let schema = Schema::new(format.fields.to_vec());
        super::super::decode_rows(&mut *format.decoder(), &mut Lines::from_text(text.to_string()), &schema)
    }

    fn lines(format: &CsvFormat, text: &str) -> Vec<String> {
        decode_all(format, text).unwrap().into_iter().map(|r| weir_runtime::Row::insert(r).to_string()).collect()
    }

    fn orders() -> Schema {
        schema(&[
            ("id", "BIGINT"),
            ("user_id", "INT"),
            ("product", "STRING"),
            ("amount", "DECIMAL(10, 2)"),
            ("qty", "INT"),
            ("ts", "TIMESTAMP(3)"),
        ])
    }

    #[test]
    fn reads_the_conformance_data_as_flink_does() {
        let f = CsvFormat::new(&orders(), CsvOptions::default()).unwrap();
        let text = "1,4,apple,410.82,2,2024-01-01 10:00:00.331\n5,27,banana,270.8,5,2024-01-01 10:00:01.468\n";
        assert_eq!(
            lines(&f, text),
            [
                "+I[1, 4, apple, 410.82, 2, 2024-01-01T10:00:00.331]",
                "+I[5, 27, banana, 270.80, 5, 2024-01-01T10:00:01.468]"
            ]
        );
    }

    #[test]
    fn quoted_fields_may_hold_delimiters_quotes_and_line_breaks() {
        let f = CsvFormat::new(&schema(&[("a", "STRING"), ("b", "INT")]), CsvOptions::default()).unwrap();
        assert_eq!(lines(&f, "\"x,\"\"y\"\"\",1\n\"two\nlines\",2\n"), ["+I[x,\"y\", 1]", "+I[two\nlines, 2]"]);
    }

    #[test]
    fn a_malformed_field_names_its_line_and_column() {
        let f = CsvFormat::new(&orders(), CsvOptions::default()).unwrap();
        let err = decode_all(&f, "1,4,apple,410.82,2,2024-01-01 10:00:00\n2,x,pear,1.00,1,2024-01-01 10:00:00\n")
            .unwrap_err();
        assert_eq!(
            err,
            DecodeError {
                line: 2,
                column: Some(2),
                field: Some("user_id".into()),
                reason: "cannot parse 'x' as INT".into()
            }
        );
        let err = decode_all(&f, "1,4,apple\n").unwrap_err();
        assert_eq!(err.reason, "Row length mismatch. 6 fields expected but was 3.");
        let err = decode_all(&f, "1,4,\"apple,410.82,2,2024-01-01 10:00:00\n").unwrap_err();
        assert_eq!(err.reason, "a quoted field is not closed before the end of the file");
    }

    fn table_options(pairs: &[(&str, &str)]) -> TableOptions {
        TableOptions::new(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn options_change_how_records_read() {
        let options = CsvOptions::from_options(&mut table_options(&[
            ("csv.field-delimiter", "|"),
            ("csv.allow-comments", "true"),
            ("csv.ignore-parse-errors", "true"),
            ("csv.null-literal", "N/A"),
            ("csv.array-element-delimiter", "/"),
            ("csv.escape-character", "\\"),
            ("csv.quote-character", "'"),
        ]))
        .unwrap();
        let f = CsvFormat::new(&schema(&[("a", "STRING"), ("b", "INT"), ("c", "ARRAY<INT>")]), options).unwrap();
        let text = "# a comment\n'x|y'|1|1/2/3\na\\|b|oops|N/A\nN/A|7\n";
        assert_eq!(lines(&f, text), ["+I[x|y, 1, [1, 2, 3]]", "+I[a|b, null, null]", "+I[null, 7, null]"]);
    }

    #[test]
    fn quoting_can_be_disabled_but_not_while_a_quote_character_is_set() {
        let options = CsvOptions::from_options(&mut table_options(&[("csv.disable-quote-character", "true")])).unwrap();
        let f = CsvFormat::new(&schema(&[("a", "STRING"), ("b", "INT")]), options).unwrap();
        assert_eq!(lines(&f, "\"a\",1\n"), ["+I[\"a\", 1]"]);
        let err = CsvOptions::from_options(&mut table_options(&[
            ("csv.disable-quote-character", "true"),
            ("csv.quote-character", "'"),
        ]))
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Format cannot define a quote character and disabled quote character at the same time."
        );
        let err = CsvOptions::from_options(&mut table_options(&[("csv.field-delimiter", "ab")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Could not parse value 'ab' for key 'csv.field-delimiter': expected a single character."
        );
    }

    #[test]
    fn row_fields_are_separated_as_array_elements_are() {
        let row = DataType::new(LogicalType::Row(vec![
            Field::new("n", DataType::int()),
            Field::new("d", DataType::string()),
        ]));
        let s = Schema::new(vec![Field::new("id", DataType::int()), Field::new("r", row)]);
        let f = CsvFormat::new(&s, CsvOptions::default()).unwrap();
        assert_eq!(
            lines(
                &f,
                "1,2;phone
2,3
"
            ),
            ["+I[1, +I[2, phone]]", "+I[2, +I[3, null]]"]
        );
        let rows = decode_all(
            &f,
            "1,2;phone
",
        )
        .unwrap();
        let mut written = String::new();
        f.encoder().encode(&rows[0], &mut written);
        assert_eq!(
            written,
            "1,2;phone
"
        );
        assert!(decode_all(&f, "1,2;phone;extra\n").is_err());
        // A ROW holding a nested value is refused.
        let nested = DataType::new(LogicalType::Row(vec![Field::new(
            "a",
            DataType::new(LogicalType::Array(Box::new(DataType::int()))),
        )]));
        assert!(CsvFormat::new(&Schema::new(vec![Field::new("r", nested)]), CsvOptions::default()).is_err());
    }

    #[test]
    fn map_columns_are_refused() {
        let err = CsvFormat::new(&schema(&[("a", "INT")]), CsvOptions::default()).map(|_| ());
        assert!(err.is_ok());
        let map = DataType::new(LogicalType::Map(Box::new(DataType::string()), Box::new(DataType::int())));
        let err = CsvFormat::new(&Schema::new(vec![Field::new("m", map)]), CsvOptions::default()).unwrap_err();
        assert_eq!(err.to_string(), "The 'csv' format does not support column 'm' of type MAP<STRING, INT>.");
    }

    #[test]
    fn writes_what_it_reads() {
        let s = schema(&[("a", "STRING"), ("b", "DOUBLE"), ("c", "TIMESTAMP(3)"), ("d", "DECIMAL(10, 2)")]);
        let options = CsvOptions { null_literal: Some("\\N".into()), ..CsvOptions::default() };
        let f = CsvFormat::new(&s, options).unwrap();
        let text =
            "\"a,b\",1.0E7,2024-01-01 10:00:02.5,10.00\n\\N,\\N,\\N,\\N\n\"\"\"q\"\"\",0.5,2024-01-01 10:00:00,-1.05\n";
        let rows = decode_all(&f, text).unwrap();
        let mut e = f.encoder();
        let mut written = String::new();
        for r in &rows {
            e.encode(r, &mut written);
        }
        assert_eq!(written, text);
        // From arrays, under a selection: the same records.
        let mut chunk =
            weir_runtime::Chunk::with_types(&s.fields.iter().map(|f| f.data_type.clone()).collect::<Vec<_>>());
        for r in &rows {
            chunk.push(weir_runtime::RowKind::Insert, r);
        }
        chunk.columns();
        chunk.select(&[0, 2]);
        let mut from_arrays = String::new();
        e.encode_chunk(&chunk, &mut from_arrays);
        let kept: Vec<&str> = text.lines().enumerate().filter(|(i, _)| *i != 1).map(|(_, l)| l).collect();
        assert_eq!(from_arrays, format!("{}\n", kept.join("\n")));
    }

    /// A line that is not UTF-8 fails the read, naming its line; ignoring parse errors, it is
    /// skipped and the lines after it read on (a quoted record running into it goes whole).
    #[test]
    fn lines_that_are_not_utf8_fail_or_are_skipped() {
        let bytes = b"1,a\n2,\xff\xfe\n3,\"x\n\xc3\"\n4,d\n".to_vec();
        let read = |ignore: &str| {
            let options = CsvOptions::from_options(&mut table_options(&[("csv.ignore-parse-errors", ignore)])).unwrap();
            let format = CsvFormat::new(&schema(&[("id", "INT"), ("s", "STRING")]), options).unwrap();
            let schema = Schema::new(format.fields.to_vec());
            let mut lines = Lines::new(Box::new(std::io::Cursor::new(bytes.clone())));
            super::super::decode_rows(&mut *format.decoder(), &mut lines, &schema)
        };
        let error = read("false").unwrap_err();
        assert_eq!(error.line, 2);
        assert!(error.reason.contains("line 2 is not valid UTF-8"), "{}", error.reason);
        let rows = read("true").unwrap();
        assert_eq!(rows, vec![vec![Value::Int(1), Value::string("a")], vec![Value::Int(4), Value::string("d")]]);
    }
}
