//! Kafka records to columns and back: the key format reads and writes the key's columns, the
//! value format the value's, and a row is put together in the table's column order.

use arrow_array::ArrayRef;
use weir_runtime::columnar::{Cell, ColumnsBuilder};
use weir_runtime::{DataType, RowKind, Value};

use super::options::{Metadata, RecordLayout};
use crate::format::{DecodeError, Decoder, Encoder, Lines};

/// Which part of a record could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The record's key.
    Key,
    /// The record's value.
    Value,
}

impl Part {
    /// `key` or `value`, as error messages say.
    pub fn name(self) -> &'static str {
        match self {
            Part::Key => "key",
            Part::Value => "value",
        }
    }
}

/// What a record carries besides its key and value, for the metadata columns.
pub struct RecordMeta<'a> {
    /// The topic.
    pub topic: &'a str,
    /// The partition.
    pub partition: i32,
    /// The offset.
    pub offset: i64,
    /// The timestamp (milliseconds) and its type's name, when the record has one.
    pub timestamp: Option<(i64, &'static str)>,
    /// The headers.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The leader epoch, when known.
    pub leader_epoch: Option<i32>,
}

impl RecordMeta<'_> {
    fn value(&self, metadata: Metadata) -> Value {
        match metadata {
            Metadata::Topic => Value::string(self.topic),
            Metadata::Partition => Value::Int(self.partition),
            Metadata::Offset => Value::BigInt(self.offset),
            Metadata::Timestamp => {
                Value::TimestampLtz(weir_runtime::Timestamp::from_millis(self.timestamp.map_or(-1, |(t, _)| t)))
            }
            Metadata::TimestampType => Value::string(self.timestamp.map_or("NoTimestampType", |(_, kind)| kind)),
            Metadata::LeaderEpoch => self.leader_epoch.map_or(Value::Null, Value::Int),
            Metadata::Headers => Value::Map(
                self.headers
                    .iter()
                    .map(|(k, v)| (Value::string(k), Value::Binary(std::sync::Arc::from(v.as_slice()))))
                    .collect::<Vec<_>>()
                    .into(),
            ),
        }
    }
}

/// Records decoded into the columns of one chunk.
pub struct RecordColumns {
    /// The key's decoder and columns, when the key carries columns the value does not.
    key: Option<(Box<dyn Decoder>, ColumnsBuilder, Vec<usize>)>,
    value: (Box<dyn Decoder>, ColumnsBuilder),
    value_columns: Vec<usize>,
    arity: usize,
    /// The kind of each row decoded (a changelog format's records are changes).
    kinds: Vec<RowKind>,
    /// An upsert table's records: the key is decoded always and its columns win over the
    /// value's; a record is its key's new row (`+U`), a tombstone its delete (`-D`).
    upsert: bool,
    /// The metadata columns: their columns, and what they hold.
    metadata: Option<(ColumnsBuilder, Vec<(usize, Metadata)>)>,
    /// The key's and the value's bytes, as the formats read them (reused record to record).
    key_lines: Lines,
    value_lines: Lines,
}

impl RecordColumns {
    /// Empty columns for `layout`; `upsert` for an `upsert-kafka` table.
    pub fn new(layout: &RecordLayout, upsert: bool) -> Self {
        let types_of =
            |columns: &[usize]| -> Vec<DataType> { columns.iter().map(|&i| layout.types[i].clone()).collect() };
        // A key whose columns the value carries too adds nothing: the value's are taken, as
        // Flink's projection sets the value's fields after the key's.
        let key = layout
            .key
            .as_ref()
            .filter(|(_, columns)| upsert || columns.iter().any(|c| !layout.value_columns.contains(c)));
        RecordColumns {
            key: key.map(|(format, columns)| {
                (format.decoder(), ColumnsBuilder::for_types(&types_of(columns)), columns.clone())
            }),
            value: (layout.value.decoder(), ColumnsBuilder::for_types(&types_of(&layout.value_columns))),
            value_columns: layout.value_columns.clone(),
            arity: layout.types.len(),
            kinds: Vec::new(),
            upsert,
            metadata: (!layout.metadata.is_empty()).then(|| {
                let positions: Vec<usize> = layout.metadata.iter().map(|(p, _)| *p).collect();
                (ColumnsBuilder::for_types(&types_of(&positions)), layout.metadata.clone())
            }),
            key_lines: Lines::from_bytes(&[]),
            value_lines: Lines::from_bytes(&[]),
        }
    }

    /// The number of rows decoded.
    pub fn rows(&self) -> usize {
        self.value.1.rows()
    }

    /// Decodes one record (with `meta`, asked only when the table has metadata columns); a
    /// record the format skips (`ignore-parse-errors`) adds no row, nor
    /// does a record without a value (a tombstone) but in an upsert table, where it is the
    /// delete of its key.
    ///
    /// # Errors
    /// The part and place the format could not read; the columns then hold the rows before.
    pub fn push<'m>(
        &mut self,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        meta: impl FnOnce() -> RecordMeta<'m>,
    ) -> Result<(), (Part, DecodeError)> {
        let rows = self.rows();
        let pushed = self.push_record(key, value);
        let added = self.rows() - rows;
        if let (Some((columns, metadata)), true) = (&mut self.metadata, added > 0) {
            let meta = meta();
            for _ in 0..added {
                for (i, (_, m)) in metadata.iter().enumerate() {
                    let pushed = columns.column(i).push(Cell::from_value(meta.value(*m)));
                    pushed.map_err(|e| {
                        (Part::Value, DecodeError { line: 1, column: None, field: None, reason: e.to_string() })
                    })?;
                }
                columns.end_record();
            }
        }
        pushed
    }

    fn push_record(&mut self, key: Option<&[u8]>, value: Option<&[u8]>) -> Result<(), (Part, DecodeError)> {
        if value.is_none() && !self.upsert {
            return Ok(());
        }
        let rows = self.rows();
        if let Some((decoder, columns, _)) = &mut self.key {
            match key {
                Some(key) => {
                    self.key_lines.set_message(key);
                    let decoded = decoder.decode(&mut self.key_lines, columns).map_err(|e| (Part::Key, e))?;
                    if !decoded || columns.rows() == rows {
                        return Ok(());
                    }
                }
                None => {
                    for i in 0..columns.arity() {
                        columns.column(i).push_null();
                    }
                    columns.end_record();
                }
            }
        }
        let (decoder, columns) = &mut self.value;
        let kinds = self.kinds.len();
        let Some(value) = value else {
            // A tombstone: the key's delete, its other columns NULL.
            for i in 0..columns.arity() {
                columns.column(i).push_null();
            }
            columns.end_record();
            self.kinds.push(RowKind::Delete);
            return Ok(());
        };
        self.value_lines.set_message(value);
        let decoded = decoder.decode_changes(&mut self.value_lines, columns, &mut self.kinds);
        if self.upsert {
            self.kinds[kinds..].iter_mut().for_each(|k| *k = RowKind::UpdateAfter);
        }
        if !matches!(decoded, Ok(true)) || columns.rows() == rows {
            if let Some((_, key_columns, _)) = &mut self.key {
                key_columns.truncate(rows);
            }
            self.kinds.truncate(kinds);
        }
        decoded.map(|_| ()).map_err(|e| (Part::Value, e))
    }

    /// The kinds of the rows decoded so far and the rows as the table's columns; the columns
    /// start again empty.
    ///
    /// # Errors
    /// A column Arrow refuses.
    pub fn finish(&mut self) -> Result<(Vec<RowKind>, Vec<ArrayRef>), String> {
        let mut out: Vec<Option<ArrayRef>> = vec![None; self.arity];
        let key = match &mut self.key {
            Some((_, columns, positions)) => Some((columns.finish().map_err(|e| e.to_string())?, positions)),
            None => None,
        };
        let value = self.value.1.finish().map_err(|e| e.to_string())?;
        // The value's columns go after the key's, as Flink's projection sets them; in an
        // upsert table the key's win (a tombstone has only them).
        let (first, second) = match (key, self.upsert) {
            (Some(key), true) => (Some((value, &self.value_columns)), Some((key.0, &*key.1))),
            (Some(key), false) => (Some((key.0, &*key.1)), Some((value, &self.value_columns))),
            (None, _) => (None, Some((value, &self.value_columns))),
        };
        for (arrays, positions) in [first, second].into_iter().flatten() {
            for (array, &i) in arrays.into_iter().zip(positions.iter()) {
                out[i] = Some(array);
            }
        }
        if let Some((columns, metadata)) = &mut self.metadata {
            for (array, (i, _)) in columns.finish().map_err(|e| e.to_string())?.into_iter().zip(metadata.iter()) {
                out[*i] = Some(array);
            }
        }
        let arrays = out
            .into_iter()
            .enumerate()
            .map(|(i, a)| a.ok_or_else(|| format!("column {} is in neither the key nor the value", i + 1)))
            .collect::<Result<Vec<_>, String>>()?;
        Ok((std::mem::take(&mut self.kinds), arrays))
    }
}

/// What a sink writes into a record besides key and value: its timestamp and headers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WrittenMeta {
    /// `timestamp`, in milliseconds.
    pub timestamp: Option<i64>,
    /// `headers`.
    pub headers: Vec<(String, Vec<u8>)>,
}

/// A row's record: its key (when the table has a key format) and value bytes, encoded into
/// buffers the encoder keeps from row to row.
pub struct RecordEncoder {
    key: Option<(Box<dyn Encoder>, Vec<usize>)>,
    value: Box<dyn Encoder>,
    value_columns: Vec<usize>,
    metadata: Vec<(usize, Metadata)>,
    key_bytes: Vec<u8>,
    value_bytes: Vec<u8>,
}

/// A record [`RecordEncoder::encode`] made: views of the encoder's buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodedRecord<'e> {
    /// The key, when the table has a key format.
    pub key: Option<&'e [u8]>,
    /// The value; `None` for a tombstone.
    pub value: Option<&'e [u8]>,
}

impl RecordEncoder {
    /// An encoder for `layout`.
    pub fn new(layout: &RecordLayout) -> Self {
        RecordEncoder {
            key: layout.key.as_ref().map(|(format, columns)| (format.encoder(), columns.clone())),
            value: layout.value.encoder(),
            value_columns: layout.value_columns.clone(),
            metadata: layout.metadata.clone(),
            key_bytes: Vec::new(),
            value_bytes: Vec::new(),
        }
    }

    /// The timestamp and headers the row of `cells` gives its record (its `timestamp` and
    /// `headers` metadata columns).
    pub fn meta(&self, cells: &[Cell<'_>]) -> WrittenMeta {
        let mut meta = WrittenMeta::default();
        for (i, m) in &self.metadata {
            match (m, cells[*i].clone().into_value()) {
                (Metadata::Timestamp, Value::TimestampLtz(t) | Value::Timestamp(t)) => meta.timestamp = Some(t.millis),
                (Metadata::Headers, Value::Map(entries)) => {
                    for (k, v) in entries.iter() {
                        let text = |value: &Value| {
                            let mut text = String::new();
                            weir_runtime::print::write_value(&mut text, value);
                            text
                        };
                        let key = match k {
                            Value::String(s) => s.to_string(),
                            other => text(other),
                        };
                        let value = match v {
                            Value::Binary(b) => b.to_vec(),
                            Value::String(s) => s.as_bytes().to_vec(),
                            Value::Null => continue,
                            other => text(other).into_bytes(),
                        };
                        meta.headers.push((key, value));
                    }
                }
                _ => {}
            }
        }
        meta
    }

    /// The key and (unless `tombstone`) value bytes of a change of `kind` to the row of `cells`
    /// (every column of the table); a format's line break at the end is not part of a record.
    /// `scratch` holds a part's cells, kept by the caller from row to row.
    pub fn encode<'a>(
        &mut self,
        kind: RowKind,
        cells: &[Cell<'a>],
        tombstone: bool,
        scratch: &mut Vec<Cell<'a>>,
    ) -> EncodedRecord<'_> {
        let key = match &mut self.key {
            Some((encoder, columns)) => {
                encode_part(encoder.as_mut(), kind, columns, cells, scratch, &mut self.key_bytes);
                Some(self.key_bytes.as_slice())
            }
            None => None,
        };
        let value = if tombstone {
            None
        } else {
            encode_part(self.value.as_mut(), kind, &self.value_columns, cells, scratch, &mut self.value_bytes);
            Some(self.value_bytes.as_slice())
        };
        EncodedRecord { key, value }
    }
}

/// Encodes the `columns` of `cells` into `out` (cleared first), through `scratch`.
fn encode_part<'a>(
    encoder: &mut dyn Encoder,
    kind: RowKind,
    columns: &[usize],
    cells: &[Cell<'a>],
    scratch: &mut Vec<Cell<'a>>,
    out: &mut Vec<u8>,
) {
    scratch.clear();
    scratch.extend(columns.iter().map(|&i| cells[i].clone()));
    out.clear();
    encoder.encode_message(kind, scratch, out);
}
