//! The `avro` format, as Flink's: a record is the Avro binary encoding of the row under the
//! schema Flink derives from the table's columns (`AvroSchemaConverter`), without a container
//! header or a schema registry. A nullable column is the union `["null", type]`.
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `avro.encoding` | `binary` | `binary`, or `json` (Avro's JSON encoding) |
//! | `avro.timestamp_mapping.legacy` | `true` | accepted; TIMESTAMP and TIMESTAMP_LTZ are `timestamp-millis` (precision ≤ 3) or `timestamp-micros` either way |
//!
//! Types: BOOLEAN `boolean`; TINYINT, SMALLINT, INT `int`; BIGINT `long`; FLOAT `float`; DOUBLE
//! `double`; CHAR, VARCHAR `string`; BINARY, VARBINARY `bytes`; DECIMAL `bytes` (`decimal`);
//! DATE `int` (`date`); TIME `int` (`time-millis`); TIMESTAMP and TIMESTAMP_LTZ `long`
//! (`timestamp-millis` / `timestamp-micros`); ARRAY `array`; MAP with string keys `map`; ROW a
//! nested `record`. Avro lives in messages (Kafka); Flink's filesystem connector reads and
//! writes Avro container files, which weir does not.

use std::collections::HashMap;
use std::sync::Arc;

use apache_avro::types::Value as Avro;
use apache_avro::Schema as AvroSchema;
use serde_json::{json, Value as Json};
use weir_runtime::columnar::{Cell, ColumnsBuilder};
use weir_runtime::{DataType, Field, LogicalType, RowKind, Schema, Timestamp, Value};

use super::{DecodeError, Decoder, Encoder, Format, FormatFactory, Lines};
use crate::error::{Error, Result};
use crate::options::TableOptions;

/// Creates the `avro` format.
#[derive(Debug, Clone, Copy, Default)]
pub struct AvroFormatFactory;

/// The `avro` format for one schema.
#[derive(Debug, Clone)]
pub struct AvroFormat {
    fields: Arc<[Field]>,
    schema: Arc<AvroSchema>,
    json: bool,
}

impl FormatFactory for AvroFormatFactory {
    fn identifier(&self) -> &'static str {
        "avro"
    }

    fn create(&self, schema: &Schema, options: &mut TableOptions) -> Result<Arc<dyn Format>> {
        let json = options.one_of("avro.encoding", &["binary", "json"], "binary")? == "json";
        options.boolean("avro.timestamp_mapping.legacy", true)?;
        let row = json!({
            "type": "record",
            "name": "record",
            "namespace": "org.apache.flink.avro.generated",
            "fields": schema.fields.iter().map(|f| field_schema(f, "record")).collect::<Result<Vec<_>>>()?,
        });
        let parsed = AvroSchema::parse_str(&row.to_string())
            .map_err(|e| Error::Validation(format!("The 'avro' format cannot derive a schema: {e}")))?;
        Ok(Arc::new(AvroFormat { fields: schema.fields.clone().into(), schema: Arc::new(parsed), json }))
    }
}

/// A record field's schema: the column's type, a union with `null` when nullable.
fn field_schema(field: &Field, record: &str) -> Result<Json> {
    let ty = type_schema(&field.data_type, &format!("{record}_{}", field.name))?;
    Ok(if field.data_type.nullable {
        json!({ "name": field.name, "type": ["null", ty], "default": null })
    } else {
        json!({ "name": field.name, "type": ty })
    })
}

/// A type's Avro schema, as Flink's `AvroSchemaConverter` writes it.
fn type_schema(ty: &DataType, name: &str) -> Result<Json> {
    let nullable = |schema: Json, inner: &DataType| if inner.nullable { json!(["null", schema]) } else { schema };
    Ok(match &ty.logical {
        LogicalType::Boolean => json!("boolean"),
        LogicalType::TinyInt | LogicalType::SmallInt | LogicalType::Int => json!("int"),
        LogicalType::BigInt => json!("long"),
        LogicalType::Float => json!("float"),
        LogicalType::Double => json!("double"),
        LogicalType::Char(_) | LogicalType::Varchar(_) => json!("string"),
        LogicalType::Binary(_) | LogicalType::Varbinary(_) => json!("bytes"),
        LogicalType::Decimal { precision, scale } => {
            json!({ "type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale })
        }
        LogicalType::Date => json!({ "type": "int", "logicalType": "date" }),
        LogicalType::Time(_) => json!({ "type": "int", "logicalType": "time-millis" }),
        LogicalType::Timestamp(p) | LogicalType::TimestampLtz(p) if *p <= 3 => {
            json!({ "type": "long", "logicalType": "timestamp-millis" })
        }
        LogicalType::Timestamp(_) | LogicalType::TimestampLtz(_) => {
            json!({ "type": "long", "logicalType": "timestamp-micros" })
        }
        LogicalType::Array(element) => {
            json!({ "type": "array", "items": nullable(type_schema(element, name)?, element) })
        }
        LogicalType::Map(key, value) if matches!(key.logical, LogicalType::Char(_) | LogicalType::Varchar(_)) => {
            json!({ "type": "map", "values": nullable(type_schema(value, name)?, value) })
        }
        LogicalType::Row(fields) => json!({
            "type": "record",
            "name": name,
            "fields": fields.iter().map(|f| field_schema(f, name)).collect::<Result<Vec<_>>>()?,
        }),
        other => return Err(Error::Validation(format!("The 'avro' format does not support the type {other}."))),
    })
}

/// A decoded Avro value as a value of `ty`.
fn from_avro(value: Avro, ty: &DataType) -> std::result::Result<Value, String> {
    let timestamp = |micros: i64| Timestamp {
        millis: micros.div_euclid(1000),
        nanos_of_milli: (micros.rem_euclid(1000) * 1000) as u32,
    };
    Ok(match (value, &ty.logical) {
        (Avro::Null, _) => Value::Null,
        (Avro::Union(_, inner), _) => from_avro(*inner, ty)?,
        (Avro::Boolean(b), LogicalType::Boolean) => Value::Boolean(b),
        (Avro::Int(i), LogicalType::TinyInt) => Value::TinyInt(i as i8),
        (Avro::Int(i), LogicalType::SmallInt) => Value::SmallInt(i as i16),
        (Avro::Int(i), LogicalType::Int) => Value::Int(i),
        (Avro::Long(i), LogicalType::BigInt) => Value::BigInt(i),
        (Avro::Float(f), LogicalType::Float) => Value::Float(f),
        (Avro::Double(f), LogicalType::Double) => Value::Double(f),
        (Avro::String(s), LogicalType::Char(_) | LogicalType::Varchar(_)) => Value::string(&s),
        (Avro::Bytes(b) | Avro::Fixed(_, b), LogicalType::Binary(_) | LogicalType::Varbinary(_)) => {
            Value::Binary(Arc::from(b))
        }
        (Avro::Decimal(d), LogicalType::Decimal { scale, .. }) => {
            let bytes = <Vec<u8>>::try_from(d).map_err(|e| e.to_string())?;
            let mut unscaled: i128 = if bytes.first().is_some_and(|b| b & 0x80 != 0) { -1 } else { 0 };
            for b in bytes {
                unscaled = (unscaled << 8) | i128::from(b);
            }
            Value::decimal(unscaled, *scale)
        }
        (Avro::Date(d), LogicalType::Date) => Value::Date(d),
        (Avro::TimeMillis(t), LogicalType::Time(_)) => Value::Time(i64::from(t) * 1_000_000),
        (Avro::TimestampMillis(t) | Avro::LocalTimestampMillis(t), LogicalType::Timestamp(_)) => {
            Value::Timestamp(Timestamp::from_millis(t))
        }
        (Avro::TimestampMillis(t) | Avro::LocalTimestampMillis(t), LogicalType::TimestampLtz(_)) => {
            Value::TimestampLtz(Timestamp::from_millis(t))
        }
        (Avro::TimestampMicros(t) | Avro::LocalTimestampMicros(t), LogicalType::Timestamp(_)) => {
            Value::Timestamp(timestamp(t))
        }
        (Avro::TimestampMicros(t) | Avro::LocalTimestampMicros(t), LogicalType::TimestampLtz(_)) => {
            Value::TimestampLtz(timestamp(t))
        }
        (Avro::Array(items), LogicalType::Array(element)) => Value::Array(
            items.into_iter().map(|v| from_avro(v, element)).collect::<std::result::Result<Vec<_>, _>>()?.into(),
        ),
        (Avro::Map(entries), LogicalType::Map(_, value)) => {
            let mut entries: Vec<(String, Avro)> = entries.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Map(
                entries
                    .into_iter()
                    .map(|(k, v)| Ok((Value::string(&k), from_avro(v, value)?)))
                    .collect::<std::result::Result<Vec<_>, String>>()?
                    .into(),
            )
        }
        (Avro::Record(values), LogicalType::Row(fields)) => Value::Row(
            values
                .into_iter()
                .zip(fields.iter())
                .map(|((_, v), f)| from_avro(v, &f.data_type))
                .collect::<std::result::Result<Vec<_>, _>>()?
                .into(),
        ),
        (other, _) => return Err(format!("cannot read the Avro value {other:?} as {ty}")),
    })
}

/// A value of `ty` as the Avro value its schema takes (a union for a nullable type).
fn to_avro(value: &Value, ty: &DataType) -> Avro {
    let micros = |t: &Timestamp| t.millis * 1000 + i64::from(t.nanos_of_milli / 1000);
    let plain = match (value, &ty.logical) {
        (Value::Null, _) => return Avro::Union(0, Box::new(Avro::Null)),
        (Value::Boolean(b), _) => Avro::Boolean(*b),
        (v, LogicalType::TinyInt | LogicalType::SmallInt | LogicalType::Int) => {
            Avro::Int(v.as_i64().unwrap_or_default() as i32)
        }
        (v, LogicalType::BigInt) => Avro::Long(v.as_i64().unwrap_or_default()),
        (v, LogicalType::Float) => Avro::Float(v.as_f64().unwrap_or_default() as f32),
        (v, LogicalType::Double) => Avro::Double(v.as_f64().unwrap_or_default()),
        (Value::String(s), _) => Avro::String(s.to_string()),
        (Value::Binary(b), _) => Avro::Bytes(b.to_vec()),
        (v @ Value::Decimal { .. }, LogicalType::Decimal { .. }) => {
            let bytes = v.as_decimal().map_or(0, |d| d.unscaled).to_be_bytes();
            // The shortest two's-complement form, as Java's BigInteger#toByteArray writes it.
            let skip = (0..15)
                .take_while(|&i| {
                    (bytes[i] == 0 && bytes[i + 1] & 0x80 == 0) || (bytes[i] == 0xff && bytes[i + 1] & 0x80 != 0)
                })
                .count();
            Avro::Decimal(apache_avro::Decimal::from(&bytes[skip..]))
        }
        (Value::Date(d), _) => Avro::Date(*d),
        (Value::Time(nanos), _) => Avro::TimeMillis((nanos / 1_000_000) as i32),
        (Value::Timestamp(t) | Value::TimestampLtz(t), LogicalType::Timestamp(p) | LogicalType::TimestampLtz(p))
            if *p <= 3 =>
        {
            Avro::TimestampMillis(t.millis)
        }
        (Value::Timestamp(t) | Value::TimestampLtz(t), _) => Avro::TimestampMicros(micros(t)),
        (Value::Array(items), LogicalType::Array(element)) => {
            Avro::Array(items.iter().map(|v| to_avro(v, element)).collect())
        }
        (Value::Map(entries), LogicalType::Map(_, value)) => Avro::Map(
            entries
                .iter()
                .map(|(k, v)| {
                    let mut key = String::new();
                    weir_runtime::print::write_value(&mut key, k);
                    (key, to_avro(v, value))
                })
                .collect::<HashMap<_, _>>(),
        ),
        (Value::Row(values), LogicalType::Row(fields)) => Avro::Record(
            values.iter().zip(fields.iter()).map(|(v, f)| (f.name.clone(), to_avro(v, &f.data_type))).collect(),
        ),
        (other, _) => {
            let mut text = String::new();
            weir_runtime::print::write_value(&mut text, other);
            Avro::String(text)
        }
    };
    if ty.nullable {
        Avro::Union(1, Box::new(plain))
    } else {
        plain
    }
}

impl Format for AvroFormat {
    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(AvroDecoder { format: self.clone() })
    }

    fn encoder(&self) -> Box<dyn Encoder> {
        Box::new(AvroEncoder { format: self.clone() })
    }
}

struct AvroDecoder {
    format: AvroFormat,
}

impl Decoder for AvroDecoder {
    fn decode(&mut self, lines: &mut Lines, out: &mut ColumnsBuilder) -> std::result::Result<bool, DecodeError> {
        let fail =
            |line: usize, field: Option<String>, reason: String| DecodeError { line, column: None, field, reason };
        if !lines.is_message() {
            return Err(fail(
                1,
                None,
                "the 'avro' format is read from messages (Kafka); Avro container files are not supported".into(),
            ));
        }
        let bytes = match lines.next_bytes() {
            Ok(None) => return Ok(false),
            Ok(Some(bytes)) => bytes.to_vec(),
            Err(e) => return Err(fail(1, None, format!("cannot read: {e}"))),
        };
        let decoded = if self.format.json {
            let text = String::from_utf8(bytes).map_err(|e| fail(1, None, format!("not UTF-8: {e}")))?;
            let json: Json = serde_json::from_str(&text).map_err(|e| fail(1, None, format!("malformed JSON: {e}")))?;
            Avro::from(json).resolve(&self.format.schema)
        } else {
            decode_datum(&self.format.schema, &bytes).map_err(|reason| fail(1, None, reason))?
        };
        let Avro::Record(values) = decoded.map_err(|e| fail(1, None, format!("malformed Avro record: {e}")))? else {
            return Err(fail(1, None, "the Avro record is not a record".into()));
        };
        let rows = out.rows();
        for (i, ((_, value), field)) in values.into_iter().zip(self.format.fields.iter()).enumerate() {
            let pushed = from_avro(value, &field.data_type)
                .and_then(|v| out.column(i).push(Cell::from_value(v)).map_err(|e| e.to_string()));
            if let Err(reason) = pushed {
                out.truncate(rows);
                return Err(fail(1, Some(field.name.clone()), reason));
            }
        }
        out.end_record();
        Ok(true)
    }
}

/// Reads a datum's bytes and tells whether the decoder asked for more than there were.
struct Exact<'a> {
    bytes: &'a [u8],
    short: bool,
}

impl std::io::Read for Exact<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.bytes.len());
        self.short |= n < buf.len();
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

/// Decodes one Avro datum that must be exactly `bytes`: a datum cut short (which `apache-avro`
/// would read as nulls inside a union or a string) or followed by more bytes is an error, as it
/// is to Flink's decoder.
fn decode_datum(schema: &AvroSchema, bytes: &[u8]) -> std::result::Result<apache_avro::AvroResult<Avro>, String> {
    let mut reader = Exact { bytes, short: false };
    let decoded = apache_avro::from_avro_datum(schema, &mut reader, None);
    if reader.short {
        return Err(format!("malformed Avro record: the record ends early ({} bytes)", bytes.len()));
    }
    if decoded.is_ok() && !reader.bytes.is_empty() {
        return Err(format!(
            "malformed Avro record: {} bytes follow the record's {}",
            reader.bytes.len(),
            bytes.len() - reader.bytes.len()
        ));
    }
    Ok(decoded)
}

struct AvroEncoder {
    format: AvroFormat,
}

impl AvroEncoder {
    fn record(&self, cells: &[Cell<'_>]) -> Avro {
        Avro::Record(
            self.format
                .fields
                .iter()
                .zip(cells)
                .map(|(f, c)| (f.name.clone(), to_avro(&c.clone().into_value(), &f.data_type)))
                .collect(),
        )
    }
}

impl Encoder for AvroEncoder {
    /// A line of Avro's JSON encoding (a file has no room for binary records).
    fn encode_record(&mut self, cells: &[Cell<'_>], out: &mut String) {
        if let Ok(json) = Json::try_from(self.record(cells)) {
            out.push_str(&json.to_string());
        }
        out.push('\n');
    }

    fn encode_message(&mut self, _kind: RowKind, cells: &[Cell<'_>], out: &mut Vec<u8>) {
        let record = self.record(cells);
        if self.format.json {
            if let Ok(json) = Json::try_from(record) {
                out.extend_from_slice(json.to_string().as_bytes());
            }
            return;
        }
        match apache_avro::to_avro_datum(&self.format.schema, record) {
            Ok(bytes) => out.extend_from_slice(&bytes),
            Err(e) => tracing::error!(error = %e, "a row does not fit the table's Avro schema"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::parse::{parse_schema, parse_value};

    #[test]
    fn rows_round_trip_through_avro_binary_and_flinks_schema() {
        let schema = parse_schema(&[
            ("id", "BIGINT NOT NULL"),
            ("name", "STRING"),
            ("price", "DECIMAL(10, 2)"),
            ("day", "DATE"),
            ("ts", "TIMESTAMP(3)"),
            ("tags", "ARRAY<STRING>"),
            ("ok", "BOOLEAN"),
            ("n", "INT"),
        ])
        .unwrap();
        let format = AvroFormatFactory.create(&schema, &mut TableOptions::new(Default::default())).unwrap();
        let mut row: Vec<Value> = ["7", "apple", "-12.30", "2024-01-01", "2024-01-01 10:00:00.331", "", "true", ""]
            .iter()
            .zip(&schema.fields)
            .map(|(text, f)| if text.is_empty() { Value::Null } else { parse_value(text, &f.data_type).unwrap() })
            .collect();
        row[5] = Value::Array(vec![Value::string("a"), Value::Null].into());
        let cells: Vec<Cell<'_>> = row.iter().map(Cell::of).collect();
        let mut bytes = Vec::new();
        format.encoder().encode_message(RowKind::Insert, &cells, &mut bytes);
        // Avro binary: id 7 as a zig-zag long (14), then the union index of name (1 = string).
        assert_eq!(&bytes[..2], &[14, 2]);
        let rows =
            super::super::decode_rows(format.decoder().as_mut(), &mut Lines::from_bytes(&bytes), &schema).unwrap();
        assert_eq!(rows, vec![row]);
        let err = super::super::decode_rows(format.decoder().as_mut(), &mut Lines::from_bytes(&[1, 2, 3]), &schema)
            .unwrap_err();
        assert!(err.reason.contains("malformed Avro record"), "{}", err.reason);
        // Every cut of the record is an error, never a row with nulls; so are trailing bytes.
        for cut in 0..bytes.len() {
            let decoded =
                super::super::decode_rows(format.decoder().as_mut(), &mut Lines::from_bytes(&bytes[..cut]), &schema);
            match decoded {
                Err(e) => assert!(e.reason.contains("malformed Avro record"), "{cut} bytes: {}", e.reason),
                Ok(rows) => assert!(rows.is_empty() && cut == 0, "{cut} of {} bytes decoded as {rows:?}", bytes.len()),
            }
        }
        let mut longer = bytes.clone();
        longer.extend_from_slice(&[0, 0]);
        let err =
            super::super::decode_rows(format.decoder().as_mut(), &mut Lines::from_bytes(&longer), &schema).unwrap_err();
        assert!(err.reason.contains("2 bytes follow the record"), "{}", err.reason);
    }
}
