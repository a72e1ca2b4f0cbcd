//! Browser sessions: opaque records keyed by session id, with an expiry.

use super::{Result, Store};

/// A stored session record: its JSON data and when it expires (unix ms).
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct SessionRow {
    /// The session's data, as JSON text.
    pub data: String,
    /// Expiry, unix ms.
    pub expires_at: i64,
}

impl Store {
    /// Inserts a new session; `false` when the id is taken (the caller picks another id).
    ///
    /// # Errors
    /// Database failures.
    pub async fn create_session(&self, id: &str, row: &SessionRow) -> Result<bool> {
        let created = on_pool!(self, |pool| {
            sqlx::query(
                "INSERT INTO sessions (id, data, expires_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (id) DO NOTHING",
            )
            .bind(id)
            .bind(&row.data)
            .bind(row.expires_at)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(created == 1)
    }

    /// Inserts or replaces a session.
    ///
    /// # Errors
    /// Database failures.
    pub async fn save_session(&self, id: &str, row: &SessionRow) -> Result<()> {
        on_pool!(self, |pool| {
            sqlx::query(
                "INSERT INTO sessions (id, data, expires_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (id) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at",
            )
            .bind(id)
            .bind(&row.data)
            .bind(row.expires_at)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// A session that has not expired at `now_ms`.
    ///
    /// # Errors
    /// Database failures.
    pub async fn load_session(&self, id: &str, now_ms: i64) -> Result<Option<SessionRow>> {
        Ok(on_pool!(self, |pool| {
            sqlx::query_as(
                "SELECT data, expires_at FROM sessions WHERE id = $1 AND expires_at > $2",
            )
            .bind(id)
            .bind(now_ms)
            .fetch_optional(pool)
            .await?
        }))
    }

    /// Deletes a session (logout).
    ///
    /// # Errors
    /// Database failures.
    pub async fn delete_session(&self, id: &str) -> Result<()> {
        on_pool!(self, |pool| {
            sqlx::query("DELETE FROM sessions WHERE id = $1")
                .bind(id)
                .execute(pool)
                .await?;
        });
        Ok(())
    }
}
