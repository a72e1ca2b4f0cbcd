//! A throwaway SQLite store and the single-threaded runtime a synchronous criterion bench drives
//! it with: what benches that measure work against a real store start from.

use tessera::{config::DatabaseUrl, store::Store};

/// A fresh store in a temporary folder; the folder goes when this is dropped.
pub struct Scratch {
    /// Runs the store's futures from criterion's synchronous closures.
    pub runtime: tokio::runtime::Runtime,
    /// The store, migrated and empty.
    pub store: Store,
    _directory: tempfile::TempDir,
}

impl Scratch {
    /// Creates the folder, the runtime and the store.
    pub fn new() -> anyhow::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let directory = tempfile::tempdir()?;
        let path = directory.path().join("bench.db");
        let store = runtime.block_on(Store::connect(&DatabaseUrl::Sqlite(
            path.to_string_lossy().into_owned(),
        )))?;
        Ok(Self {
            runtime,
            store,
            _directory: directory,
        })
    }

    /// Closes the store, so its last writes are flushed before the folder goes.
    pub fn close(self) {
        self.runtime.block_on(self.store.close());
    }
}
