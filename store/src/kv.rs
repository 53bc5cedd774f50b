//! The key-value storage under the table store, behind a small trait: point reads, scans, and
//! read-merge-write batches that apply atomically and durably (or not at all). [`RedbStore`]
//! keeps everything in one `redb` file (a pure-Rust copy-on-write B-tree with ACID
//! transactions); the file is locked, so a second process gets a clear error instead of a
//! corrupted store.

use std::path::{Path, PathBuf};

use redb::{Database, DatabaseError, ReadableDatabase, ReadableTable, TableDefinition, TableError};

use crate::checksum::crc32;
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
    fn write(&self, table: &str, batch: &mut dyn FnMut(&mut dyn KvBatch) -> Result<()>) -> Result<()> {
        self.write_marked(table, None, batch)
    }

    /// As [`KvStore::write`], and sets commit marker `marker` (key, value) in the same
    /// transaction: a writer that must not apply a batch twice records which it applied, and
    /// reads it back with [`KvStore::marker`] after a failure.
    ///
    /// # Errors
    /// What `batch` returned, or the storage failed; the marker is then left as it was.
    fn write_marked(
        &self,
        table: &str,
        marker: Option<(&[u8], &[u8])>,
        batch: &mut dyn FnMut(&mut dyn KvBatch) -> Result<()>,
    ) -> Result<()>;

    /// The value of commit marker `key`, as the last write that set it left it.
    ///
    /// # Errors
    /// The storage failed.
    fn marker(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Removes `table` and its entries.
    ///
    /// # Errors
    /// The storage failed.
    fn drop_table(&self, table: &str) -> Result<()>;
}

/// A [`KvStore`] in one `redb` file. A store it creates writes format 2: every value carries the
/// CRC-32 of its key and value, checked on every read, so a damaged file is refused with a
/// message naming it; opening the file runs the storage library's integrity check over every
/// page. A store of format 1 (written before checksums) is read and written as it is. The
/// storage library's own failures on a damaged file, panics included, become errors.
pub struct RedbStore {
    db: GuardedDatabase,
    path: PathBuf,
    /// Whether values carry checksums (format 2).
    checksummed: bool,
}

/// The storage library's database, closed without letting a panic out: closing a damaged file
/// can panic inside the library.
struct GuardedDatabase(Option<Database>);

impl std::ops::Deref for GuardedDatabase {
    type Target = Database;

    fn deref(&self) -> &Database {
        // Only `drop` takes the database out.
        self.0.as_ref().unwrap_or_else(|| unreachable!("the database is open until the store drops"))
    }
}

impl Drop for GuardedDatabase {
    fn drop(&mut self) {
        if let Some(db) = self.0.take() {
            let closed = guarded(Path::new("(closing)"), move || {
                drop(db);
                Ok(())
            });
            if closed.is_err() {
                tracing::warn!("closing a damaged table store file failed inside the storage library");
            }
        }
    }
}

/// The table of the store's own facts (its format).
const META: &str = "weir.meta";
/// The table of commit markers ([`KvStore::write_marked`]).
const COMMITS: &str = "weir.commits";
/// The format of stores with checksummed values.
const FORMAT: &[u8] = b"2";
/// Bytes of the checksum after each value.
const CHECKSUM_BYTES: usize = 4;

fn storage(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Storage(format!("the table store at '{}' failed: {e}", path.display()))
}

fn damaged(path: &Path, what: &str) -> Error {
    Error::Storage(format!(
        "The table store file '{}' is damaged ({what}); weir reads nothing from it. Restore the data directory \
         from a copy, or move it away to start with an empty one.",
        path.display()
    ))
}

thread_local! {
    /// Set while this thread is inside [`guarded`]: a panic there is the storage library failing
    /// on a damaged file, reported as an error, so it prints no panic message.
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs, once, a panic hook that stays quiet for panics inside [`guarded`] and passes every
/// other panic to the hook that was there before. Not while this thread panics (a store dropped
/// as a panic unwinds): a hook cannot be set then, and the next guarded call installs it.
fn quiet_guarded_panics() {
    if std::thread::panicking() {
        return;
    }
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDED.with(std::cell::Cell::get) {
                tracing::debug!(panic = %info, "the storage library failed on a damaged file");
            } else {
                previous(info);
            }
        }));
    });
}

/// Runs a call into the storage library, turning its panic on a damaged file into an error.
fn guarded<T>(path: &Path, call: impl FnOnce() -> Result<T>) -> Result<T> {
    quiet_guarded_panics();
    let outer = GUARDED.with(|g| g.replace(true));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(call));
    GUARDED.with(|g| g.set(outer));
    outcome.unwrap_or_else(|_| Err(damaged(path, "the storage library could not read its structure")))
}

impl RedbStore {
    /// The file a store in directory `dir` keeps its data in.
    pub fn file(dir: &Path) -> PathBuf {
        dir.join("tables.redb")
    }

    /// Whether `dir` holds a store: `false` when there is neither the directory nor its file.
    ///
    /// # Errors
    /// A `dir` that is not a directory, a store file that is a directory or empty: each names
    /// the path instead of passing for a missing store.
    pub fn exists(dir: &Path) -> Result<bool> {
        if !dir.exists() {
            return Ok(false);
        }
        if !dir.is_dir() {
            return Err(Error::Storage(format!(
                "The data directory '{}' is not a directory (set 'table.store.path' to a directory).",
                dir.display()
            )));
        }
        let file = Self::file(dir);
        match std::fs::metadata(&file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(storage(&file, e)),
            Ok(m) if !m.is_file() => Err(Error::Storage(format!(
                "'{}' should be weir's table store file but is not a file.",
                file.display()
            ))),
            Ok(m) if m.len() == 0 => Err(damaged(&file, "it is empty")),
            Ok(_) => Ok(true),
        }
    }

    /// Opens (or creates) the store in directory `dir`.
    ///
    /// # Errors
    /// The directory cannot be created, another process has the store open, or the file is
    /// damaged or not a table store.
    pub fn open(dir: &Path) -> Result<Self> {
        let existed = Self::exists(dir)?;
        std::fs::create_dir_all(dir).map_err(|e| storage(dir, e))?;
        let path = Self::file(dir);
        if !existed {
            Self::create(dir, &path)?;
        }
        // From here the file exists and is marked: one that does not open is damaged.
        let db = guarded(&path, || {
            // Every page of the file is checked against its checksum when it opens, so a file
            // changed since weir wrote it (a damaged index page too, which no record's checksum
            // would catch) is refused before anything is read from it.
            Database::builder().set_check_integrity_on_open(true).create(&path).map_err(|e| match e {
                DatabaseError::DatabaseAlreadyOpen => Error::Storage(format!(
                    "The table store at '{}' is in use by another process; weir opens a data directory from one process at a time.",
                    dir.display()
                )),
                other => damaged(&path, &other.to_string()),
            })
        })?;
        let mut store = RedbStore { db: GuardedDatabase(Some(db)), path, checksummed: false };
        store.checksummed = store.format(true)?;
        Ok(store)
    }

    /// Makes a new, empty store file at `path` in `dir`, whole or not at all: it is made and
    /// marked under another name, then renamed, so a process killed meanwhile leaves no file
    /// that a later start would take for a damaged store (only the other name, removed then).
    fn create(dir: &Path, path: &Path) -> Result<()> {
        let new = dir.join("tables.redb.new");
        match std::fs::remove_file(&new) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(storage(&new, e)),
            _ => {}
        }
        let db = guarded(&new, || Database::create(&new).map_err(|e| storage(dir, e)))?;
        let store = RedbStore { db: GuardedDatabase(Some(db)), path: new.clone(), checksummed: true };
        store.format(false)?;
        drop(store);
        std::fs::rename(&new, path).map_err(|e| storage(path, e))?;
        // The rename itself reaches the disk with the directory.
        std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| storage(dir, e))
    }

    /// Whether the store's values carry checksums; a new store is marked format 2.
    fn format(&self, existed: bool) -> Result<bool> {
        let marked = self.raw_get(META, b"format")?;
        match marked.as_deref() {
            Some(FORMAT) => Ok(true),
            Some(other) => Err(Error::Storage(format!(
                "The table store file '{}' has format '{}', which this weir does not read.",
                self.path.display(),
                String::from_utf8_lossy(other)
            ))),
            None if existed && !self.raw_tables_empty()? => Ok(false),
            None => {
                self.raw_write(META, None, &mut |t| {
                    t.insert(&b"format"[..], FORMAT).map(|_| ()).map_err(|e| storage(&self.path, e))
                })?;
                Ok(true)
            }
        }
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
        Ok(RedbStore { db: GuardedDatabase(Some(db)), path, checksummed: true })
    }

    /// Runs `read` over `table` in a read transaction (`absent` when there is no such table).
    fn reading<T>(
        &self,
        table: &str,
        absent: T,
        read: impl FnOnce(&redb::ReadOnlyTable<&'static [u8], &'static [u8]>) -> Result<T>,
    ) -> Result<T> {
        guarded(&self.path, || {
            let txn = self.db.begin_read().map_err(|e| storage(&self.path, e))?;
            match txn.open_table(TableDefinition::<&[u8], &[u8]>::new(table)) {
                Ok(t) => read(&t),
                Err(TableError::TableDoesNotExist(_)) => Ok(absent),
                Err(e) => Err(storage(&self.path, e)),
            }
        })
    }

    fn raw_get(&self, table: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.reading(table, None, |t| Ok(t.get(key).map_err(|e| storage(&self.path, e))?.map(|v| v.value().to_vec())))
    }

    /// Whether the file holds no table at all (a store created empty).
    fn raw_tables_empty(&self) -> Result<bool> {
        guarded(&self.path, || {
            let read = self.db.begin_read().map_err(|e| storage(&self.path, e))?;
            let empty = read.list_tables().map_err(|e| storage(&self.path, e))?.next().is_none();
            Ok(empty)
        })
    }

    fn raw_write(
        &self,
        table: &str,
        marker: Option<(&[u8], &[u8])>,
        batch: &mut dyn FnMut(&mut redb::Table<'_, &'static [u8], &'static [u8]>) -> Result<()>,
    ) -> Result<()> {
        guarded(&self.path, || {
            let txn = self.db.begin_write().map_err(|e| storage(&self.path, e))?;
            {
                let mut t =
                    txn.open_table(TableDefinition::<&[u8], &[u8]>::new(table)).map_err(|e| storage(&self.path, e))?;
                if let Err(e) = batch(&mut t) {
                    drop(t);
                    txn.abort().map_err(|e| storage(&self.path, e))?;
                    return Err(e);
                }
            }
            if let Some((key, value)) = marker {
                let mut commits = txn
                    .open_table(TableDefinition::<&[u8], &[u8]>::new(COMMITS))
                    .map_err(|e| storage(&self.path, e))?;
                commits.insert(key, &self.seal(key, value)[..]).map_err(|e| storage(&self.path, e))?;
            }
            // Durable on return: redb's default durability syncs the file on commit.
            txn.commit().map_err(|e| storage(&self.path, e))
        })
    }

    /// `value` as stored: followed by the checksum of `key` and `value` in format 2.
    fn seal(&self, key: &[u8], value: &[u8]) -> Vec<u8> {
        let mut stored = Vec::with_capacity(value.len() + CHECKSUM_BYTES);
        stored.extend_from_slice(value);
        if self.checksummed {
            stored.extend_from_slice(&crc32(&[key, value]).to_le_bytes());
        }
        stored
    }

    /// The value of `key` as stored, its checksum checked and removed.
    fn open_value(&self, table: &str, key: &[u8], mut stored: Vec<u8>) -> Result<Vec<u8>> {
        if !self.checksummed {
            return Ok(stored);
        }
        let bad = || damaged(&self.path, &format!("a record of '{table}' fails its checksum"));
        let split = stored.len().checked_sub(CHECKSUM_BYTES).ok_or_else(bad)?;
        let sum = u32::from_le_bytes(stored[split..].try_into().map_err(|_| bad())?);
        stored.truncate(split);
        if crc32(&[key, &stored]) == sum {
            Ok(stored)
        } else {
            Err(bad())
        }
    }
}

struct RedbBatch<'a, 't> {
    table: &'a mut redb::Table<'t, &'static [u8], &'static [u8]>,
    store: &'a RedbStore,
    name: &'a str,
}

impl KvBatch for RedbBatch<'_, '_> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let stored = self.table.get(key).map_err(|e| storage(&self.store.path, e))?.map(|v| v.value().to_vec());
        stored.map(|v| self.store.open_value(self.name, key, v)).transpose()
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let sealed = self.store.seal(key, value);
        self.table.insert(key, &sealed[..]).map_err(|e| storage(&self.store.path, e))?;
        Ok(())
    }

    fn delete(&mut self, key: &[u8]) -> Result<()> {
        self.table.remove(key).map_err(|e| storage(&self.store.path, e))?;
        Ok(())
    }
}

impl KvStore for RedbStore {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.raw_get(table, key)?.map(|v| self.open_value(table, key, v)).transpose()
    }

    fn scan(&self, table: &str) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let entries = self.reading(table, Vec::new(), |t| {
            let mut entries = Vec::new();
            for entry in t.iter().map_err(|e| storage(&self.path, e))? {
                let (k, v) = entry.map_err(|e| storage(&self.path, e))?;
                entries.push((k.value().to_vec(), v.value().to_vec()));
            }
            Ok(entries)
        })?;
        entries.into_iter().map(|(k, v)| self.open_value(table, &k, v).map(|v| (k, v))).collect()
    }

    fn write_marked(
        &self,
        table: &str,
        marker: Option<(&[u8], &[u8])>,
        batch: &mut dyn FnMut(&mut dyn KvBatch) -> Result<()>,
    ) -> Result<()> {
        self.raw_write(table, marker, &mut |t| batch(&mut RedbBatch { table: t, store: self, name: table }))
    }

    fn marker(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.raw_get(COMMITS, key)?.map(|v| self.open_value(COMMITS, key, v)).transpose()
    }

    fn drop_table(&self, table: &str) -> Result<()> {
        guarded(&self.path, || {
            let txn = self.db.begin_write().map_err(|e| storage(&self.path, e))?;
            txn.delete_table(TableDefinition::<&[u8], &[u8]>::new(table)).map_err(|e| storage(&self.path, e))?;
            txn.commit().map_err(|e| storage(&self.path, e))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::RedbStore;

    /// Run alone in a child process by the test below: a store dropped, as the first guarded
    /// call of the process, while its thread panics.
    #[test]
    #[ignore = "a child process of the test below"]
    fn dropped_while_panicking_child() {
        let _store = RedbStore::in_memory().expect("a store in memory");
        panic!("an assertion failing with a store in scope");
    }

    /// A store dropped while its thread unwinds a panic closes without installing the quiet
    /// panic hook (which cannot be set then): the panic fails its test instead of aborting the
    /// process.
    #[test]
    fn a_store_dropped_while_its_thread_panics_does_not_abort_the_process() {
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "kv::tests::dropped_while_panicking_child", "--ignored", "--test-threads=1"])
            .output()
            .unwrap();
        let printed = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert_eq!(output.status.code(), Some(101), "the child fails its test, not aborted: {printed}");
        assert!(printed.contains("an assertion failing"), "{printed}");
    }
}
