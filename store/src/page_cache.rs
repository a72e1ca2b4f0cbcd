//! The page cache: validated trees stored under a key of what produced them (see `agent::cache`).
//!
//! One row per key; a newer page for the same key replaces the older one. Hits are counted so the
//! admin pages can show what the cache saves.

use super::{decode_json, decode_uuid, Result, Store, StoreError};
use crate::records::page_cache::CachedPage;

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
        let row: Option<CachedPageRow> = on_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT key, tree, provenance, generation_id, model, hits, created_at \
                 FROM page_cache WHERE key = $1",
            )
            .bind(key)
            .fetch_optional(pool)
            .await?
        });
        row.map(TryInto::try_into).transpose()
    }

    /// Stores `page` under its key, replacing (and resetting the hits of) an older page.
    ///
    /// # Errors
    /// A database failure.
    pub async fn put_cached_page(&self, page: &CachedPage) -> Result<()> {
        on_pool!(self, |pool| {
            sqlx::query(
                "INSERT INTO page_cache (key, tree, provenance, generation_id, model, hits, created_at) \
                 VALUES ($1, $2, $3, $4, $5, 0, $6) ON CONFLICT (key) DO UPDATE SET tree = excluded.tree, \
                 provenance = excluded.provenance, \
                 generation_id = excluded.generation_id, model = excluded.model, hits = 0, \
                 created_at = excluded.created_at, last_hit_at = NULL",
            )
            .bind(&page.key)
            .bind(page.tree.to_string())
            .bind(serde_json::to_string(&page.provenance).unwrap_or_else(|_| "{}".to_owned()))
            .bind(page.generation_id.to_string())
            .bind(&page.model)
            .bind(page.created_at_ms)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// Counts one reuse of the page under `key`.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when nothing is stored under `key`.
    pub async fn record_cache_hit(&self, key: &str, at_ms: i64) -> Result<()> {
        let updated = on_pool!(self, |pool| {
            sqlx::query("UPDATE page_cache SET hits = hits + 1, last_hit_at = $1 WHERE key = $2")
                .bind(at_ms)
                .bind(key)
                .execute(pool)
                .await?
                .rows_affected()
        });
        if updated == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }
}
