use sqlx::PgPool;

use super::CachedPageRow;
use crate::{agent::cache::CachedPage, store::Result};

pub(super) async fn get(pool: &PgPool, key: &str) -> Result<Option<CachedPageRow>> {
    Ok(sqlx::query_as(
        "SELECT key, tree, provenance, generation_id, model, hits, created_at FROM page_cache WHERE key = $1",
    )
    .bind(key)
    .fetch_optional(pool)
    .await?)
}

pub(super) async fn put(pool: &PgPool, page: &CachedPage) -> Result<()> {
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
    Ok(())
}

pub(super) async fn hit(pool: &PgPool, key: &str, at_ms: i64) -> Result<u64> {
    let done =
        sqlx::query("UPDATE page_cache SET hits = hits + 1, last_hit_at = $1 WHERE key = $2")
            .bind(at_ms)
            .bind(key)
            .execute(pool)
            .await?;
    Ok(done.rows_affected())
}
