//! The store one keyed state or timer set of one subtask keeps in the on-disk backend's working
//! directory: opened when its first entry leaves the heap (or restored from checkpointed runs),
//! counted in the backend's figures, and deleted with its directory when it is dropped.

use std::ops::{Deref, DerefMut, RangeInclusive};
use std::path::Path;
use std::sync::Arc;

use weir_statestore::{Manifest, Store};

use super::backend::{fail, DiskBackend};

/// A store of the backend, in a directory of its own.
#[derive(Debug)]
pub(crate) struct LocalStore {
    /// Its number among the backend's stores (for the figures).
    n: u64,
    store: Store,
    backend: Arc<DiskBackend>,
}

impl LocalStore {
    /// A new, empty store; `None` when it cannot be made (the failure is recorded with
    /// [`fail`]).
    pub(crate) fn create(backend: &Arc<DiskBackend>) -> Option<LocalStore> {
        let (n, dir) = backend.new_store_dir();
        Self::opened(backend, n, Store::create(&dir, backend.store_options()))
    }

    /// A store holding the entries of checkpointed runs `manifests` in `shared` whose key groups
    /// are in `key_groups`; `None` when they cannot be read (the failure is recorded).
    pub(crate) fn restore(
        backend: &Arc<DiskBackend>,
        shared: &Path,
        manifests: &[Manifest],
        key_groups: RangeInclusive<u16>,
    ) -> Option<LocalStore> {
        let (n, dir) = backend.new_store_dir();
        let store = Store::restore(&dir, backend.store_options(), shared, manifests, key_groups);
        let store = Self::opened(backend, n, store)?;
        store.report();
        Some(store)
    }

    fn opened(backend: &Arc<DiskBackend>, n: u64, store: weir_statestore::Result<Store>) -> Option<LocalStore> {
        match store {
            Ok(store) => Some(LocalStore { n, store, backend: Arc::clone(backend) }),
            Err(error) => {
                backend.forget(n);
                fail(error);
                None
            }
        }
    }

    /// Records what the store holds and did in the backend's figures.
    pub(crate) fn report(&self) {
        self.backend.report(self.n, self.store.stats());
    }
}

impl Deref for LocalStore {
    type Target = Store;

    fn deref(&self) -> &Store {
        &self.store
    }
}

impl DerefMut for LocalStore {
    fn deref_mut(&mut self) -> &mut Store {
        &mut self.store
    }
}

impl Drop for LocalStore {
    /// Removes the store's directory (its open files go when the store closes right after).
    fn drop(&mut self) {
        self.backend.forget(self.n);
        let _ = std::fs::remove_dir_all(self.store.dir());
    }
}
