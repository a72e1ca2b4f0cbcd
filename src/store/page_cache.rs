//! The page cache: validated trees stored under a key of what produced them (see `agent::cache`).
//!
//! One row per key; a newer page for the same key replaces the older one. Hits are counted so the
//! admin pages can show what the cache saves.

mod postgres;
mod sqlite;

use super::{decode_json, decode_uuid, Result, Store, StoreError};
use crate::agent::cache::CachedPage;

#[derive(sqlx::FromRow)]
struct CachedPageRow {
    key: String,
    tree: String,
    provenance: String,
    generation_id: String,
    model: String,
    hits: i64,
    created_at: i64,
}

impl TryFrom<CachedPageRow> for CachedPage {
    type Error = StoreError;

    fn try_from(row: CachedPageRow) -> Result<Self> {
        Ok(Self {
            key: row.key,
            tree: decode_json("page_cache.tree", &row.tree)?,
            provenance: serde_json::from_str(&row.provenance).map_err(|error| {
                StoreError::Corrupt {
                    column: "page_cache.provenance",
                    reason: error.to_string(),
                }
            })?,
            generation_id: decode_uuid("page_cache.generation_id", &row.generation_id)?,
            model: row.model,
            hits: row.hits,
            created_at_ms: row.created_at,
        })
    }
}

impl Store {
    /// The cached page stored under `key`, if any.
    ///
    /// # Errors
    /// A database failure, or [`StoreError::Corrupt`] for a row that does not decode.
    pub async fn cached_page(&self, key: &str) -> Result<Option<CachedPage>> {
        let row = match self {
            Self::Sqlite(pool) => sqlite::get(pool, key).await?,
            Self::Postgres(pool) => postgres::get(pool, key).await?,
        };
        row.map(TryInto::try_into).transpose()
    }

    /// Stores `page` under its key, replacing (and resetting the hits of) an older page.
    ///
    /// # Errors
    /// A database failure.
    pub async fn put_cached_page(&self, page: &CachedPage) -> Result<()> {
        match self {
            Self::Sqlite(pool) => sqlite::put(pool, page).await,
            Self::Postgres(pool) => postgres::put(pool, page).await,
        }
    }

    /// Counts one reuse of the page under `key`.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when nothing is stored under `key`.
    pub async fn record_cache_hit(&self, key: &str, at_ms: i64) -> Result<()> {
        let updated = match self {
            Self::Sqlite(pool) => sqlite::hit(pool, key, at_ms).await?,
            Self::Postgres(pool) => postgres::hit(pool, key, at_ms).await?,
        };
        if updated == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }
}
