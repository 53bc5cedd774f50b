//! A primary-key table: rows stored by key in a [`KvStore`], every write merged into the stored
//! row by the table's [`RowMerger`], as Fluss's `KvTablet` does. A batch of writes applies
//! atomically and durably — all of it or none — and returns the changes it made.

use std::sync::Arc;

use weir_runtime::print::value_to_string;
use weir_runtime::{DataType, RowKind, Value};

use crate::codec;
use crate::error::{Error, Result};
use crate::kv::KvStore;
use crate::row_merger::{Change, RowMerger};

/// One table of the store.
pub struct PkTable {
    name: String,
    display_name: String,
    columns: Vec<(String, DataType)>,
    types: Vec<DataType>,
    key: Vec<usize>,
    key_types: Vec<DataType>,
    merger: RowMerger,
    store: Arc<dyn KvStore>,
}

impl PkTable {
    /// The table `name` with `columns`, primary key `key` and merge rules `merger`, in `store`.
    pub fn new(
        name: impl Into<String>,
        columns: Vec<(String, DataType)>,
        key: Vec<usize>,
        merger: RowMerger,
        store: Arc<dyn KvStore>,
    ) -> Self {
        let types: Vec<DataType> = columns.iter().map(|(_, t)| t.clone()).collect();
        let key_types = key.iter().map(|&k| types[k].clone()).collect();
        let name = name.into();
        PkTable { display_name: name.clone(), name, columns, types, key, key_types, merger, store }
    }

    /// The table, named `name` in errors (its storage name stays the one it was created with).
    pub fn with_display_name(mut self, name: &str) -> Self {
        self.display_name = name.to_string();
        self
    }

    /// The merge rules.
    pub fn merger(&self) -> &RowMerger {
        &self.merger
    }

    fn encode_key(&self, key: &[Value]) -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        codec::encode(key, &self.key_types, &mut bytes)?;
        Ok(bytes)
    }

    fn describe_key(&self, key: &[Value]) -> String {
        self.key
            .iter()
            .zip(key)
            .map(|(&k, v)| format!("{}={}", self.columns[k].0, value_to_string(v)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Writes `rows` in one atomic, durable batch; `targets` are the columns of a partial write.
    /// `+I`/`+U` rows upsert, `-D` rows delete (as the delete behavior says), `-U` rows are
    /// skipped (the table is keyed). Returns the changes, in order.
    ///
    /// # Errors
    /// A row that cannot be merged, naming the table, the key and the column; deletes on a
    /// table that disables them; a storage failure. Nothing of the batch is applied then.
    pub fn write(
        &self,
        rows: &[(RowKind, Vec<Value>)],
        targets: Option<&[usize]>,
    ) -> Result<Vec<(RowKind, Vec<Value>)>> {
        let mut changes = Vec::new();
        let mut rows = rows.iter();
        self.write_each(
            &mut || Ok(rows.next().map(|(kind, row)| (*kind, row.clone()))),
            targets,
            None,
            &mut |kind, row| changes.push((kind, row.to_vec())),
        )?;
        Ok(changes)
    }

    /// Writes the rows `next` yields (until `None`) in one atomic, durable batch, as
    /// [`Self::write`] does, passing each change to `emit` (changes reach `emit` before the
    /// batch commits; when this fails, they did not happen). Rows are taken one at a time, so a
    /// large batch needs no memory for its rows or changes beyond what the caller keeps.
    /// `marker` (key, value) is set in the same transaction ([`KvStore::write_marked`]).
    ///
    /// # Errors
    /// As [`Self::write`], and what `next` returns.
    pub fn write_each(
        &self,
        next: &mut dyn FnMut() -> Result<Option<(RowKind, Vec<Value>)>>,
        targets: Option<&[usize]>,
        marker: Option<(&[u8], &[u8])>,
        emit: &mut dyn FnMut(RowKind, &[Value]),
    ) -> Result<()> {
        self.store.write_marked(&self.name, marker, &mut |batch| {
            while let Some((kind, row)) = next()? {
                if kind == RowKind::UpdateBefore {
                    continue;
                }
                let key: Vec<Value> = self.key.iter().map(|&k| row[k].clone()).collect();
                let key_bytes = self.encode_key(&key)?;
                let stored = batch.get(&key_bytes)?.map(|b| codec::decode(&b, &self.types)).transpose()?;
                let change = if kind == RowKind::Delete {
                    self.merger.delete(stored.as_deref(), targets)
                } else {
                    self.merger.upsert(stored.as_deref(), &row, targets)
                }
                .map_err(|e| {
                    Error::Merge(format!(
                        "Cannot write the row with key ({}) into table '{}': {e}",
                        self.describe_key(&key),
                        self.display_name
                    ))
                })?;
                match &change {
                    Change::Insert(after) | Change::Update { after, .. } => {
                        let mut value = Vec::new();
                        codec::encode(after, &self.types, &mut value)?;
                        batch.put(&key_bytes, &value)?;
                    }
                    Change::Delete(_) => batch.delete(&key_bytes)?,
                    Change::None => {}
                }
                for (kind, row) in change.rows() {
                    emit(kind, row);
                }
            }
            Ok(())
        })
    }

    /// The value of commit marker `key` ([`KvStore::marker`]).
    ///
    /// # Errors
    /// A storage failure.
    pub fn marker(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.store.marker(key)
    }

    /// The stored row of `key` (values of the key columns, in key order).
    ///
    /// # Errors
    /// A storage failure.
    pub fn get(&self, key: &[Value]) -> Result<Option<Vec<Value>>> {
        let bytes = self.store.get(&self.name, &self.encode_key(key)?)?;
        bytes.map(|b| codec::decode(&b, &self.types)).transpose()
    }

    /// Every stored row.
    ///
    /// # Errors
    /// A storage failure.
    pub fn scan(&self) -> Result<Vec<Vec<Value>>> {
        self.store.scan(&self.name)?.into_iter().map(|(_, v)| codec::decode(&v, &self.types)).collect()
    }
}
