use sqlx::SqlitePool;

use crate::store::Result;

pub(super) async fn get(pool: &SqlitePool, key: &str) -> Result<Option<String>> {
    Ok(
        sqlx::query_scalar("SELECT value FROM settings WHERE key = ?")
            .bind(key)
            .fetch_optional(pool)
            .await?,
    )
}

pub(super) async fn put_if_absent(
    pool: &SqlitePool,
    key: &str,
    value: &str,
    now: i64,
) -> Result<bool> {
    let result = sqlx::query("INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING")
        .bind(key)
        .bind(value)
        .bind(now)
        .execute(pool)
        .await?;
    Ok(result.rows_affected() == 1)
}
