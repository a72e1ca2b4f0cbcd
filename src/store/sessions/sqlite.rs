use sqlx::SqlitePool;

use super::SessionRow;
use crate::store::Result;

pub(super) async fn create(pool: &SqlitePool, id: &str, row: &SessionRow) -> Result<bool> {
    let result = sqlx::query(
        "INSERT INTO sessions (id, data, expires_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING",
    )
    .bind(id)
    .bind(&row.data)
    .bind(row.expires_at)
    .execute(pool)
    .await?;
    Ok(result.rows_affected() == 1)
}

pub(super) async fn save(pool: &SqlitePool, id: &str, row: &SessionRow) -> Result<()> {
    sqlx::query(
        "INSERT INTO sessions (id, data, expires_at) VALUES (?, ?, ?) \
         ON CONFLICT (id) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at",
    )
    .bind(id)
    .bind(&row.data)
    .bind(row.expires_at)
    .execute(pool)
    .await?;
    Ok(())
}

pub(super) async fn load(pool: &SqlitePool, id: &str, now_ms: i64) -> Result<Option<SessionRow>> {
    Ok(
        sqlx::query_as("SELECT data, expires_at FROM sessions WHERE id = ? AND expires_at > ?")
            .bind(id)
            .bind(now_ms)
            .fetch_optional(pool)
            .await?,
    )
}

pub(super) async fn delete(pool: &SqlitePool, id: &str) -> Result<()> {
    sqlx::query("DELETE FROM sessions WHERE id = ?")
        .bind(id)
        .execute(pool)
        .await?;
    Ok(())
}
