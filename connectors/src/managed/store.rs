//! The table store of a data directory: the definitions of its managed tables and, per table,
//! the [`ManagedTable`] that merges writes into it and tells its followers what changed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use parking_lot::Mutex;
use weir_runtime::{DataType, RowKind, Value};
use weir_store::codec::EncodedRows;
use weir_store::{KvStore, PkTable, RedbStore, RowMerger};

use crate::api::TableDescriptor;
use crate::error::{Error, Result};

/// The changes of one committed write, in order.
pub type Changes = Arc<Vec<(RowKind, Vec<Value>)>>;

/// The `redb` table that holds the definitions (name → definition text).
const CATALOG: &str = "weir.catalog";

/// The `redb` table that holds the rows of managed table `name`.
fn data_table(name: &str) -> String {
    format!("weir.table.{name}")
}

fn store_error(e: weir_store::Error) -> Error {
    Error::Validation(e.to_string())
}

/// The managed tables of one data directory (`table.store.path`), open in this process.
///
/// The directory is locked while this is alive: another process opening it gets a clear error.
pub struct TableStore {
    dir: PathBuf,
    /// Whether the store is a data directory on disk (not [`TableStore::in_memory`]).
    on_disk: bool,
    kv: Arc<RedbStore>,
    tables: Mutex<HashMap<String, Arc<ManagedTable>>>,
}

impl std::fmt::Debug for TableStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableStore").field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl TableStore {
    /// Whether `dir` holds a table store (`false` when neither it nor its file exists).
    ///
    /// # Errors
    /// A `dir` that is not a directory, or a store file that is a directory or empty.
    pub fn exists(dir: &Path) -> Result<bool> {
        RedbStore::exists(dir).map_err(store_error)
    }

    /// Opens (or creates) the store in `dir`.
    ///
    /// # Errors
    /// The directory cannot be created, or another process has it open.
    pub fn open(dir: &Path) -> Result<Arc<Self>> {
        let kv = RedbStore::open(dir).map_err(store_error)?;
        tracing::debug!(dir = %dir.display(), "opened the table store");
        Ok(Arc::new(TableStore { dir: dir.to_path_buf(), on_disk: true, kv: Arc::new(kv), tables: Mutex::default() }))
    }

    /// A store that keeps everything in memory, for planning without a data directory
    /// (`weir explain`); its `dir` is `path`, the directory it stands in for.
    ///
    /// # Errors
    /// The storage could not be set up.
    pub fn in_memory(path: &Path) -> Result<Arc<Self>> {
        let kv = RedbStore::in_memory().map_err(store_error)?;
        Ok(Arc::new(TableStore { dir: path.to_path_buf(), on_disk: false, kv: Arc::new(kv), tables: Mutex::default() }))
    }

    /// Whether the store keeps its tables on disk (else in memory, gone with the store).
    pub fn is_on_disk(&self) -> bool {
        self.on_disk
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The stored definitions, `(name, definition)`, by name.
    ///
    /// # Errors
    /// The storage failed.
    pub fn definitions(&self) -> Result<Vec<(String, String)>> {
        let entries = self.kv.scan(CATALOG).map_err(store_error)?;
        Ok(entries
            .into_iter()
            .map(|(k, v)| (String::from_utf8_lossy(&k).into_owned(), String::from_utf8_lossy(&v).into_owned()))
            .collect())
    }

    /// Records a new table: checks its options as a write would, then keeps `definition` (the
    /// text the table is declared with) durably.
    ///
    /// # Errors
    /// Options the merge engines reject (Fluss's messages), or the storage failed.
    pub fn create(&self, table: &TableDescriptor, definition: &str) -> Result<()> {
        super::validate(table)?;
        self.kv
            .write(CATALOG, &mut |batch| batch.put(table.name.as_bytes(), definition.as_bytes()))
            .map_err(store_error)?;
        self.tables.lock().remove(&table.name);
        Ok(())
    }

    /// Removes table `name`: its rows, then its definition.
    ///
    /// # Errors
    /// The storage failed.
    pub fn drop_table(&self, name: &str) -> Result<()> {
        self.tables.lock().remove(name);
        self.kv.drop_table(&data_table(name)).map_err(store_error)?;
        self.kv.write(CATALOG, &mut |batch| batch.delete(name.as_bytes())).map_err(store_error)
    }

    /// The open table for `descriptor`: the same one for every caller (whatever scan and lookup
    /// options an `OPTIONS` hint gives it), so that writers and followers meet.
    ///
    /// # Errors
    /// Options the merge engines reject, and hints that change how the table merges.
    pub fn table(&self, descriptor: &TableDescriptor) -> Result<Arc<ManagedTable>> {
        let mut tables = self.tables.lock();
        if let Some(table) = tables.get(&descriptor.name) {
            let (open, wanted) = (merge_definition(&table.descriptor), merge_definition(descriptor));
            if open == wanted {
                return Ok(Arc::clone(table));
            }
            if let Some(key) = open.2.keys().chain(wanted.2.keys()).find(|k| open.2.get(*k) != wanted.2.get(*k)) {
                return Err(Error::Validation(format!(
                    "Option '{key}' of managed table '{}' is part of its definition and cannot be changed by an \
                     OPTIONS hint; hints may set its 'scan.*' and 'lookup.*' options.",
                    descriptor.name
                )));
            }
        }
        let merger = merger_of(descriptor)?;
        let columns = columns_of(descriptor);
        let kv: Arc<dyn KvStore> = Arc::<RedbStore>::clone(&self.kv);
        let pk = PkTable::new(data_table(&descriptor.name), columns, descriptor.primary_key.clone(), merger, kv)
            .with_display_name(&descriptor.name);
        let types = descriptor.schema.fields.iter().map(|f| f.data_type.clone()).collect();
        let table = Arc::new(ManagedTable { descriptor: descriptor.clone(), types, pk, followers: Mutex::default() });
        tables.insert(descriptor.name.clone(), Arc::clone(&table));
        Ok(table)
    }
}

/// What decides how a table merges: its columns, its key and its options other than the scan
/// and lookup ones.
fn merge_definition(
    table: &TableDescriptor,
) -> (&weir_runtime::Schema, &[usize], std::collections::BTreeMap<&String, &String>) {
    let options = table.options.iter().filter(|(k, _)| !k.starts_with("scan.") && !k.starts_with("lookup.")).collect();
    (&table.schema, &table.primary_key, options)
}

fn columns_of(table: &TableDescriptor) -> Vec<(String, DataType)> {
    table.schema.fields.iter().map(|f| (f.name.clone(), f.data_type.clone())).collect()
}

/// The merge rules of a managed table, from its options.
///
/// # Errors
/// Fluss's messages for options it rejects.
pub fn merger_of(table: &TableDescriptor) -> Result<RowMerger> {
    RowMerger::new(columns_of(table), table.primary_key.clone(), &table.options).map_err(store_error)
}

/// One managed table: writes merge into its rows; followers receive every committed change.
pub struct ManagedTable {
    descriptor: TableDescriptor,
    /// The column types, for write buffers.
    types: Vec<DataType>,
    pk: PkTable,
    /// Held while a write commits and its changes go out, so that followers see changes in
    /// commit order and a snapshot taken under it misses nothing.
    followers: Mutex<Vec<Sender<Changes>>>,
}

impl ManagedTable {
    /// The table as declared.
    pub fn descriptor(&self) -> &TableDescriptor {
        &self.descriptor
    }

    /// The merge rules.
    pub fn merger(&self) -> &RowMerger {
        self.pk.merger()
    }

    /// The column types.
    pub fn types(&self) -> &[DataType] {
        &self.types
    }

    /// A buffer for rows to write into this table.
    pub fn buffer(&self) -> EncodedRows {
        EncodedRows::new(self.types.clone())
    }

    /// Merges `rows` in one atomic, durable batch (`targets`: the columns of a partial write)
    /// and passes the changes to the followers; returns how many changes there were.
    ///
    /// # Errors
    /// A row that cannot be merged (naming table, key and column), a delete the table
    /// disables, a storage failure; nothing of the batch is kept then.
    pub fn write(&self, rows: &EncodedRows, targets: Option<&[usize]>) -> Result<usize> {
        self.write_batches(&[rows], targets, None)
    }

    /// Merges `batches` in order in one atomic, durable transaction that also sets commit
    /// marker `marker` (key, value), as [`ManagedTable::write`] does.
    ///
    /// # Errors
    /// As [`ManagedTable::write`]; the marker is then left as it was.
    pub fn write_batches(
        &self,
        batches: &[&EncodedRows],
        targets: Option<&[usize]>,
        marker: Option<(&[u8], &[u8])>,
    ) -> Result<usize> {
        let mut followers = self.followers.lock();
        let mut rows = batches.iter().flat_map(|b| b.iter());
        let mut count = 0;
        // Changes are kept only for followers.
        let mut changes = Vec::new();
        let keep = !followers.is_empty();
        self.pk
            .write_each(&mut || rows.next().transpose(), targets, marker, &mut |kind, row| {
                count += 1;
                if keep {
                    changes.push((kind, row.to_vec()));
                }
            })
            .map_err(store_error)?;
        if !changes.is_empty() {
            let changes: Changes = Arc::new(changes);
            followers.retain(|f| f.send(Arc::clone(&changes)).is_ok());
        }
        Ok(count)
    }

    /// The value of commit marker `key` ([`ManagedTable::write_batches`]).
    ///
    /// # Errors
    /// A storage failure.
    pub fn marker(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.pk.marker(key).map_err(store_error)
    }

    /// The stored row of `key` (values of the primary key columns, in key order).
    ///
    /// # Errors
    /// A storage failure.
    pub fn get(&self, key: &[Value]) -> Result<Option<Vec<Value>>> {
        self.pk.get(key).map_err(store_error)
    }

    /// Every stored row, in key order.
    ///
    /// # Errors
    /// A storage failure.
    pub fn scan(&self) -> Result<Vec<Vec<Value>>> {
        self.pk.scan().map_err(store_error)
    }

    /// The current rows (none when `snapshot` is false) and a receiver of every change
    /// committed after them.
    ///
    /// # Errors
    /// A storage failure.
    pub fn follow(&self, snapshot: bool) -> Result<(Vec<Vec<Value>>, Receiver<Changes>)> {
        let mut followers = self.followers.lock();
        let rows = if snapshot { self.scan()? } else { Vec::new() };
        let (sender, receiver) = channel();
        followers.push(sender);
        Ok((rows, receiver))
    }
}
