//! Server-wide key/value settings that must survive restarts (for example the API token's hash).

mod postgres;
mod sqlite;

use super::{now_ms, Result, Store};

impl Store {
    /// Reads a setting.
    ///
    /// # Errors
    /// Database failures.
    pub async fn setting(&self, key: &str) -> Result<Option<String>> {
        match self {
            Self::Sqlite(pool) => sqlite::get(pool, key).await,
            Self::Postgres(pool) => postgres::get(pool, key).await,
        }
    }

    /// Stores `value` under `key` only if the key has no value yet; returns whether it was stored.
    /// Two processes starting at once therefore agree on one value.
    ///
    /// # Errors
    /// Database failures.
    pub async fn put_setting_if_absent(&self, key: &str, value: &str) -> Result<bool> {
        match self {
            Self::Sqlite(pool) => sqlite::put_if_absent(pool, key, value, now_ms()).await,
            Self::Postgres(pool) => postgres::put_if_absent(pool, key, value, now_ms()).await,
        }
    }
}
