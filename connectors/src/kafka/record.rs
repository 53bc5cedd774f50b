//! Kafka records to columns and back: the key format reads and writes the key's columns, the
//! value format the value's, and a row is put together in the table's column order.

use arrow_array::ArrayRef;
use weir_runtime::columnar::{Cell, ColumnsBuilder};
use weir_runtime::{DataType, RowKind};

use super::options::RecordLayout;
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
        }
    }

    /// The number of rows decoded.
    pub fn rows(&self) -> usize {
        self.value.1.rows()
    }

    /// Decodes one record; a record the format skips (`ignore-parse-errors`) adds no row, nor
    /// does a record without a value (a tombstone) but in an upsert table, where it is the
    /// delete of its key.
    ///
    /// # Errors
    /// The part and place the format could not read; the columns then hold the rows before.
    pub fn push(&mut self, key: Option<&[u8]>, value: Option<&[u8]>) -> Result<(), (Part, DecodeError)> {
        if value.is_none() && !self.upsert {
            return Ok(());
        }
        let rows = self.rows();
        if let Some((decoder, columns, _)) = &mut self.key {
            match key {
                Some(key) => {
                    let decoded = decoder.decode(&mut Lines::from_bytes(key), columns).map_err(|e| (Part::Key, e))?;
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
        let decoded = decoder.decode_changes(&mut Lines::from_bytes(value), columns, &mut self.kinds);
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
        let arrays = out
            .into_iter()
            .enumerate()
            .map(|(i, a)| a.ok_or_else(|| format!("column {} is in neither the key nor the value", i + 1)))
            .collect::<Result<Vec<_>, String>>()?;
        Ok((std::mem::take(&mut self.kinds), arrays))
    }
}

/// A row's record: its key (when the table has a key format) and value bytes.
pub struct RecordEncoder {
    key: Option<(Box<dyn Encoder>, Vec<usize>)>,
    value: Box<dyn Encoder>,
    value_columns: Vec<usize>,
}

impl RecordEncoder {
    /// An encoder for `layout`.
    pub fn new(layout: &RecordLayout) -> Self {
        RecordEncoder {
            key: layout.key.as_ref().map(|(format, columns)| (format.encoder(), columns.clone())),
            value: layout.value.encoder(),
            value_columns: layout.value_columns.clone(),
        }
    }

    /// The key and value bytes of a change of `kind` to the row of `cells` (every column of
    /// the table); a format's line break at the end is not part of a record.
    pub fn encode(&mut self, kind: RowKind, cells: &[Cell<'_>]) -> (Option<Vec<u8>>, Vec<u8>) {
        let key = self.key.as_mut().map(|(encoder, columns)| encode_part(encoder.as_mut(), kind, columns, cells));
        let value = encode_part(self.value.as_mut(), kind, &self.value_columns, cells);
        (key, value)
    }
}

fn encode_part(encoder: &mut dyn Encoder, kind: RowKind, columns: &[usize], cells: &[Cell<'_>]) -> Vec<u8> {
    let part: Vec<Cell<'_>> = columns.iter().map(|&i| cells[i].clone()).collect();
    let mut out = Vec::new();
    encoder.encode_message(kind, &part, &mut out);
    out
}
