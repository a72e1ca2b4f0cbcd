//! Browser sessions: opaque records keyed by session id, with an expiry.

mod postgres;
mod sqlite;

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
        match self {
            Self::Sqlite(pool) => sqlite::create(pool, id, row).await,
            Self::Postgres(pool) => postgres::create(pool, id, row).await,
        }
    }

    /// Inserts or replaces a session.
    ///
    /// # Errors
    /// Database failures.
    pub async fn save_session(&self, id: &str, row: &SessionRow) -> Result<()> {
        match self {
            Self::Sqlite(pool) => sqlite::save(pool, id, row).await,
            Self::Postgres(pool) => postgres::save(pool, id, row).await,
        }
    }

    /// A session that has not expired at `now_ms`.
    ///
    /// # Errors
    /// Database failures.
    pub async fn load_session(&self, id: &str, now_ms: i64) -> Result<Option<SessionRow>> {
        match self {
            Self::Sqlite(pool) => sqlite::load(pool, id, now_ms).await,
            Self::Postgres(pool) => postgres::load(pool, id, now_ms).await,
        }
    }

    /// Deletes a session (logout).
    ///
    /// # Errors
    /// Database failures.
    pub async fn delete_session(&self, id: &str) -> Result<()> {
        match self {
            Self::Sqlite(pool) => sqlite::delete(pool, id).await,
            Self::Postgres(pool) => postgres::delete(pool, id).await,
        }
    }
}
