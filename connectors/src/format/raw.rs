//! The `raw` format, as Flink's: a record is the value of the table's one column, as bytes.
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `raw.charset` | `UTF-8` | the charset of a string column: `UTF-8`, `US-ASCII` or `ISO-8859-1` |
//! | `raw.endianness` | `big-endian` | the byte order of numbers: `big-endian` or `little-endian` |
//!
//! Strings are the record's text; BYTES the record's bytes; BOOLEAN one byte; TINYINT,
//! SMALLINT, INT, BIGINT, FLOAT and DOUBLE their fixed-width binary form. A record without a
//! value (a Kafka tombstone) is NULL. From a file, each line is a record (as Flink reads a raw
//! file); from Kafka, each whole message.

use std::sync::Arc;

use weir_runtime::columnar::{Cell, ColumnsBuilder};
use weir_runtime::{DataType, LogicalType, RowKind, Schema, Value};

use super::{DecodeError, Decoder, Encoder, Format, FormatFactory, Lines};
use crate::error::{Error, Result};
use crate::options::TableOptions;

/// Creates the `raw` format.
#[derive(Debug, Clone, Copy, Default)]
pub struct RawFormatFactory;

/// The charsets `raw.charset` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Charset {
    Utf8,
    Ascii,
    Latin1,
}

/// The `raw` format for one column.
#[derive(Debug, Clone)]
pub struct RawFormat {
    ty: DataType,
    charset: Charset,
    big_endian: bool,
}

impl FormatFactory for RawFormatFactory {
    fn identifier(&self) -> &'static str {
        "raw"
    }

    fn create(&self, schema: &Schema, options: &mut TableOptions) -> Result<Arc<dyn Format>> {
        let charset = match options.optional("raw.charset").map(|c| c.trim().to_ascii_uppercase()) {
            None => Charset::Utf8,
            Some(c) if c == "UTF-8" || c == "UTF8" => Charset::Utf8,
            Some(c) if c == "US-ASCII" || c == "ASCII" => Charset::Ascii,
            Some(c) if c == "ISO-8859-1" || c == "LATIN1" => Charset::Latin1,
            Some(c) => return Err(crate::options::invalid("raw.charset", &c, "'UTF-8', 'US-ASCII' or 'ISO-8859-1'")),
        };
        let big_endian =
            options.one_of("raw.endianness", &["big-endian", "little-endian"], "big-endian")? == "big-endian";
        let [field] = schema.fields.as_slice() else {
            let columns: Vec<String> = schema.fields.iter().map(|f| format!("`{}` {}", f.name, f.data_type)).collect();
            return Err(Error::Validation(format!(
                "The 'raw' format only supports single physical column. However the defined schema contains \
                 multiple physical columns: [{}]",
                columns.join(", ")
            )));
        };
        match &field.data_type.logical {
            LogicalType::Char(_)
            | LogicalType::Varchar(_)
            | LogicalType::Binary(_)
            | LogicalType::Varbinary(_)
            | LogicalType::Boolean
            | LogicalType::TinyInt
            | LogicalType::SmallInt
            | LogicalType::Int
            | LogicalType::BigInt
            | LogicalType::Float
            | LogicalType::Double => {}
            other => {
                return Err(Error::Validation(format!("The 'raw' format doesn't supports '{other}' as column type.")))
            }
        }
        Ok(Arc::new(RawFormat { ty: field.data_type.clone(), charset, big_endian }))
    }
}

impl RawFormat {
    /// The value of one record's bytes.
    fn value_of(&self, bytes: &[u8]) -> std::result::Result<Value, String> {
        let fixed = |width: usize, name: &str| -> std::result::Result<[u8; 8], String> {
            if bytes.len() != width {
                return Err(format!(
                    "Size of the input bytes is not equal to the size of {name}: {} bytes.",
                    bytes.len()
                ));
            }
            let mut eight = [0u8; 8];
            if self.big_endian {
                eight[8 - width..].copy_from_slice(bytes);
            } else {
                eight[..width].copy_from_slice(bytes);
            }
            Ok(eight)
        };
        let int = |width: usize, name: &str| -> std::result::Result<i64, String> {
            let eight = fixed(width, name)?;
            let unsigned = if self.big_endian { u64::from_be_bytes(eight) } else { u64::from_le_bytes(eight) };
            // Sign-extend from `width` bytes.
            let shift = 64 - 8 * width as u32;
            Ok(((unsigned << shift) as i64) >> shift)
        };
        Ok(match &self.ty.logical {
            LogicalType::Char(_) | LogicalType::Varchar(_) => Value::String(Arc::from(self.text_of(bytes)?.as_str())),
            LogicalType::Binary(_) | LogicalType::Varbinary(_) => Value::Binary(Arc::from(bytes)),
            LogicalType::Boolean => Value::Boolean(int(1, "BOOLEAN")? != 0),
            LogicalType::TinyInt => Value::TinyInt(int(1, "TINYINT")? as i8),
            LogicalType::SmallInt => Value::SmallInt(int(2, "SMALLINT")? as i16),
            LogicalType::Int => Value::Int(int(4, "INT")? as i32),
            LogicalType::BigInt => Value::BigInt(int(8, "BIGINT")?),
            LogicalType::Float => Value::Float(f32::from_bits(int(4, "FLOAT")? as u32)),
            LogicalType::Double => Value::Double(f64::from_bits(int(8, "DOUBLE")? as u64)),
            other => return Err(format!("The 'raw' format doesn't supports '{other}' as column type.")),
        })
    }

    fn text_of(&self, bytes: &[u8]) -> std::result::Result<String, String> {
        match self.charset {
            Charset::Utf8 => String::from_utf8(bytes.to_vec()).map_err(|e| format!("the record is not UTF-8: {e}")),
            Charset::Ascii if !bytes.is_ascii() => Err("the record is not US-ASCII".into()),
            Charset::Ascii | Charset::Latin1 => Ok(bytes.iter().map(|&b| char::from(b)).collect()),
        }
    }

    /// The bytes of one value, in the column's type (a cell's integers come widened).
    fn bytes_of(&self, value: &Value, out: &mut Vec<u8>) {
        let int = |v: i64, width: usize, out: &mut Vec<u8>| {
            let bytes = if self.big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
            if self.big_endian {
                out.extend_from_slice(&bytes[8 - width..]);
            } else {
                out.extend_from_slice(&bytes[..width]);
            }
        };
        let float = |value: &Value| match value {
            Value::Float(v) => f64::from(*v),
            Value::Double(v) => *v,
            other => other.as_i64().unwrap_or_default() as f64,
        };
        match (value, &self.ty.logical) {
            (Value::Null, _) => {}
            (Value::String(s), _) => match self.charset {
                Charset::Utf8 => out.extend_from_slice(s.as_bytes()),
                Charset::Ascii | Charset::Latin1 => {
                    out.extend(s.chars().map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?')))
                }
            },
            (Value::Binary(b), _) => out.extend_from_slice(b),
            (Value::Boolean(b), _) => out.push(u8::from(*b)),
            (v, LogicalType::TinyInt) => int(v.as_i64().unwrap_or_default(), 1, out),
            (v, LogicalType::SmallInt) => int(v.as_i64().unwrap_or_default(), 2, out),
            (v, LogicalType::Int) => int(v.as_i64().unwrap_or_default(), 4, out),
            (v, LogicalType::BigInt) => int(v.as_i64().unwrap_or_default(), 8, out),
            (v, LogicalType::Float) => int(i64::from((float(v) as f32).to_bits()), 4, out),
            (v, LogicalType::Double) => int(float(v).to_bits() as i64, 8, out),
            (other, _) => {
                let mut text = String::new();
                weir_runtime::print::write_value(&mut text, other);
                out.extend_from_slice(text.as_bytes());
            }
        }
    }
}

impl Format for RawFormat {
    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(RawDecoder { format: self.clone() })
    }

    fn encoder(&self) -> Box<dyn Encoder> {
        Box::new(RawEncoder { format: self.clone() })
    }
}

struct RawDecoder {
    format: RawFormat,
}

impl Decoder for RawDecoder {
    fn decode(&mut self, lines: &mut Lines, out: &mut ColumnsBuilder) -> std::result::Result<bool, DecodeError> {
        let next = lines.number() + 1;
        let bytes = match lines.next_bytes() {
            Ok(None) => return Ok(false),
            Ok(Some(bytes)) => bytes.to_vec(),
            Err(e) => {
                return Err(DecodeError { line: next, column: None, field: None, reason: format!("cannot read: {e}") })
            }
        };
        // A file's line ends with its line break, which is not part of the record.
        let record = bytes.strip_suffix(b"\n").map_or(&bytes[..], |b| b.strip_suffix(b"\r").unwrap_or(b));
        let value = self.format.value_of(record).map_err(|reason| DecodeError {
            line: lines.number(),
            column: Some(1),
            field: None,
            reason,
        })?;
        out.column(0).push(Cell::from_value(value)).map_err(|e| DecodeError {
            line: lines.number(),
            column: Some(1),
            field: None,
            reason: e.to_string(),
        })?;
        out.end_record();
        Ok(true)
    }
}

struct RawEncoder {
    format: RawFormat,
}

impl Encoder for RawEncoder {
    /// In a file, a record is a line: strings and numbers as their bytes, then a line break.
    fn encode_record(&mut self, cells: &[Cell<'_>], out: &mut String) {
        let mut bytes = Vec::new();
        self.encode_message(RowKind::Insert, cells, &mut bytes);
        out.push_str(&String::from_utf8_lossy(&bytes));
        out.push('\n');
    }

    fn encode_message(&mut self, _kind: RowKind, cells: &[Cell<'_>], out: &mut Vec<u8>) {
        if let Some(cell) = cells.first() {
            self.format.bytes_of(&cell.clone().into_value(), out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::parse::parse_schema;

    fn format(ty: &str, options: &[(&str, &str)]) -> Result<Arc<dyn Format>> {
        let schema = parse_schema(&[("v", ty)]).unwrap();
        let mut opts = TableOptions::new(options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
        RawFormatFactory.create(&schema, &mut opts)
    }

    fn round_trip(ty: &str, options: &[(&str, &str)], value: Value) -> (Vec<u8>, Value) {
        let format = format(ty, options).unwrap();
        let mut bytes = Vec::new();
        format.encoder().encode_message(RowKind::Insert, &[Cell::of(&value)], &mut bytes);
        let schema = parse_schema(&[("v", ty)]).unwrap();
        let rows =
            super::super::decode_rows(format.decoder().as_mut(), &mut Lines::from_bytes(&bytes), &schema).unwrap();
        (bytes, rows[0][0].clone())
    }

    #[test]
    fn values_are_their_bytes_in_the_byte_order_asked_for() {
        assert_eq!(round_trip("INT", &[], Value::Int(258)), (vec![0, 0, 1, 2], Value::Int(258)));
        assert_eq!(
            round_trip("INT", &[("raw.endianness", "little-endian")], Value::Int(-2)),
            (vec![0xfe, 0xff, 0xff, 0xff], Value::Int(-2))
        );
        assert_eq!(round_trip("BIGINT", &[], Value::BigInt(-1)).1, Value::BigInt(-1));
        assert_eq!(round_trip("DOUBLE", &[], Value::Double(0.5)).1, Value::Double(0.5));
        assert_eq!(round_trip("SMALLINT", &[], Value::SmallInt(-300)).1, Value::SmallInt(-300));
        let text = "two\nlines é";
        assert_eq!(round_trip("STRING", &[], Value::string(text)), (text.as_bytes().to_vec(), Value::string(text)));
        assert_eq!(round_trip("BYTES", &[], Value::Binary(Arc::from(&[0u8, 255][..]))).0, vec![0, 255]);
    }

    #[test]
    fn one_column_of_a_supported_type_and_exact_widths() {
        let schema = parse_schema(&[("a", "INT"), ("b", "INT")]).unwrap();
        let err = RawFormatFactory.create(&schema, &mut TableOptions::new(Default::default())).unwrap_err();
        assert!(err.to_string().starts_with("The 'raw' format only supports single physical column."), "{err}");
        assert!(format("DATE", &[]).is_err());
        assert!(format("STRING", &[("raw.charset", "EBCDIC")]).is_err());
        let format = format("INT", &[]).unwrap();
        let schema = parse_schema(&[("v", "INT")]).unwrap();
        let err =
            super::super::decode_rows(format.decoder().as_mut(), &mut Lines::from_bytes(&[1, 2]), &schema).unwrap_err();
        assert!(err.reason.contains("Size of the input bytes is not equal to the size of INT"), "{}", err.reason);
    }
}
