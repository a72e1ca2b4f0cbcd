use sqlx::SqlitePool;

use super::CachedPageRow;
use crate::{agent::cache::CachedPage, store::Result};

pub(super) async fn get(pool: &SqlitePool, key: &str) -> Result<Option<CachedPageRow>> {
    Ok(sqlx::query_as(
        "SELECT key, tree, provenance, generation_id, model, hits, created_at FROM page_cache WHERE key = ?",
    )
    .bind(key)
    .fetch_optional(pool)
    .await?)
}

pub(super) async fn put(pool: &SqlitePool, page: &CachedPage) -> Result<()> {
    sqlx::query(
        "INSERT INTO page_cache (key, tree, provenance, generation_id, model, hits, created_at) \
         VALUES (?, ?, ?, ?, ?, 0, ?) ON CONFLICT (key) DO UPDATE SET tree = excluded.tree, \
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
    Ok(())
}

pub(super) async fn hit(pool: &SqlitePool, key: &str, at_ms: i64) -> Result<u64> {
    let done = sqlx::query("UPDATE page_cache SET hits = hits + 1, last_hit_at = ? WHERE key = ?")
        .bind(at_ms)
        .bind(key)
        .execute(pool)
        .await?;
    Ok(done.rows_affected())
}
