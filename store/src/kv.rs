//! The key-value storage under the table store, behind a small trait: point reads, scans, and
//! read-merge-write batches that apply atomically and durably (or not at all). [`RedbStore`]
//! keeps everything in one `redb` file (a pure-Rust copy-on-write B-tree with ACID
//! transactions); the file is locked, so a second process gets a clear error instead of a
//! corrupted store.

use std::path::{Path, PathBuf};

use redb::{Database, DatabaseError, ReadableDatabase, ReadableTable, TableDefinition, TableError};

use crate::error::{Error, Result};

/// The writes of one batch, with reads that see the batch's own earlier writes.
pub trait KvBatch {
    /// The current value of `key`.
    ///
    /// # Errors
    /// The storage failed.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;
    /// Sets `key` to `value`.
    ///
    /// # Errors
    /// The storage failed.
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()>;
    /// Removes `key`.
    ///
    /// # Errors
    /// The storage failed.
    fn delete(&mut self, key: &[u8]) -> Result<()>;
}

/// Tables of byte keys and values.
pub trait KvStore: Send + Sync {
    /// The value of `key` in `table`.
    ///
    /// # Errors
    /// The storage failed.
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Every entry of `table`, in key order.
    ///
    /// # Errors
    /// The storage failed.
    fn scan(&self, table: &str) -> Result<Vec<(Vec<u8>, Vec<u8>)>>;

    /// Runs `batch` over `table` once and commits its writes atomically and durably; when
    /// `batch` fails, nothing it wrote is kept.
    ///
    /// # Errors
    /// What `batch` returned, or the storage failed.
    fn write(&self, table: &str, batch: &mut dyn FnMut(&mut dyn KvBatch) -> Result<()>) -> Result<()>;

    /// Removes `table` and its entries.
    ///
    /// # Errors
    /// The storage failed.
    fn drop_table(&self, table: &str) -> Result<()>;
}

/// A [`KvStore`] in one `redb` file.
pub struct RedbStore {
    db: Database,
    path: PathBuf,
}

fn storage(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Storage(format!("the table store at '{}' failed: {e}", path.display()))
}

impl RedbStore {
    /// The file a store in directory `dir` keeps its data in.
    pub fn file(dir: &Path) -> PathBuf {
        dir.join("tables.redb")
    }

    /// Opens (or creates) the store in directory `dir`.
    ///
    /// # Errors
    /// The directory cannot be created, or another process has the store open.
    pub fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| storage(dir, e))?;
        let path = Self::file(dir);
        let db = Database::create(&path).map_err(|e| match e {
            DatabaseError::DatabaseAlreadyOpen => Error::Storage(format!(
                "The table store at '{}' is in use by another process; weir opens a data directory from one process at a time.",
                dir.display()
            )),
            other => storage(dir, other),
        })?;
        Ok(RedbStore { db, path })
    }

    /// A store in memory, gone when dropped (for plans that must not touch a data directory).
    ///
    /// # Errors
    /// The storage could not be set up.
    pub fn in_memory() -> Result<Self> {
        let path = PathBuf::from("(memory)");
        let db = Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .map_err(|e| storage(&path, e))?;
        Ok(RedbStore { db, path })
    }
}

struct RedbBatch<'a> {
    table: redb::Table<'a, &'static [u8], &'static [u8]>,
    path: &'a Path,
}

impl KvBatch for RedbBatch<'_> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.table.get(key).map_err(|e| storage(self.path, e))?.map(|v| v.value().to_vec()))
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.table.insert(key, value).map_err(|e| storage(self.path, e))?;
        Ok(())
    }

    fn delete(&mut self, key: &[u8]) -> Result<()> {
        self.table.remove(key).map_err(|e| storage(self.path, e))?;
        Ok(())
    }
}

impl KvStore for RedbStore {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let read = self.db.begin_read().map_err(|e| storage(&self.path, e))?;
        let t = match read.open_table(TableDefinition::<&[u8], &[u8]>::new(table)) {
            Ok(t) => t,
            Err(TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(storage(&self.path, e)),
        };
        Ok(t.get(key).map_err(|e| storage(&self.path, e))?.map(|v| v.value().to_vec()))
    }

    fn scan(&self, table: &str) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let read = self.db.begin_read().map_err(|e| storage(&self.path, e))?;
        let t = match read.open_table(TableDefinition::<&[u8], &[u8]>::new(table)) {
            Ok(t) => t,
            Err(TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(e) => return Err(storage(&self.path, e)),
        };
        let mut entries = Vec::new();
        for entry in t.iter().map_err(|e| storage(&self.path, e))? {
            let (k, v) = entry.map_err(|e| storage(&self.path, e))?;
            entries.push((k.value().to_vec(), v.value().to_vec()));
        }
        Ok(entries)
    }

    fn write(&self, table: &str, batch: &mut dyn FnMut(&mut dyn KvBatch) -> Result<()>) -> Result<()> {
        let txn = self.db.begin_write().map_err(|e| storage(&self.path, e))?;
        {
            let t = txn.open_table(TableDefinition::<&[u8], &[u8]>::new(table)).map_err(|e| storage(&self.path, e))?;
            let mut writes = RedbBatch { table: t, path: &self.path };
            if let Err(e) = batch(&mut writes) {
                drop(writes);
                txn.abort().map_err(|e| storage(&self.path, e))?;
                return Err(e);
            }
        }
        // Durable on return: redb's default durability syncs the file on commit.
        txn.commit().map_err(|e| storage(&self.path, e))
    }

    fn drop_table(&self, table: &str) -> Result<()> {
        let txn = self.db.begin_write().map_err(|e| storage(&self.path, e))?;
        txn.delete_table(TableDefinition::<&[u8], &[u8]>::new(table)).map_err(|e| storage(&self.path, e))?;
        txn.commit().map_err(|e| storage(&self.path, e))
    }
}
