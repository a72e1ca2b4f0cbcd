//! The one storage facade: [`Store`] over SQLite (embedded default) or PostgreSQL (scale-out).
//!
//! `Store` is a `Clone` enum over the two pools, chosen from `DATABASE_URL`'s scheme. Each
//! aggregate has a facade file (`store/runs.rs`) and one file per dialect (`store/runs/sqlite.rs`,
//! `store/runs/postgres.rs`), reviewed together. Callers never see `sqlx::Error`: the store turns
//! database facts into [`StoreError`] variants (`NotFound`, `Conflict`).
//!
//! Column types both drivers decode natively, used everywhere:
//!
//! | Rust | SQLite | PostgreSQL |
//! |---|---|---|
//! | ids (`Uuid` newtypes) | `TEXT` | `TEXT` |
//! | timestamps (unix ms, `i64`) | `INTEGER` | `BIGINT` |
//! | counters (`i64`) | `INTEGER` | `BIGINT` |
//! | JSON (`serde_json::Value`) | `TEXT` | `TEXT` |
//! | `bool` | `BOOLEAN` (integer) | `BOOLEAN` |
//!
//! SQLite traps decided in DESIGN.md §10: every transaction that may write starts with
//! `BEGIN IMMEDIATE` ([`Store`] methods use `begin_write`), WAL, `synchronous=FULL`, foreign keys on,
//! a busy timeout. It must not hold a transaction across an `.await` on anything but the database.

/// Expands `$body` once per engine with `$pool` bound to the store's pool, so a query whose SQL
/// reads the same on both (`$n` placeholders, explicit casts) is written once. Each expansion is
/// type-checked against its own driver, so a bind or column type one engine lacks fails to build.
macro_rules! on_pool {
    ($store:expr, |$pool:ident| $body:expr) => {
        match $store {
            $crate::store::Store::Sqlite($pool) => $body,
            $crate::store::Store::Postgres($pool) => $body,
        }
    };
}

pub mod chat;
pub mod chat_bus;
pub mod generations;
pub mod items;
pub mod metrics;
pub mod page_cache;
pub mod pages;
pub mod runs;
pub mod sessions;
pub mod settings;

use std::{str::FromStr, time::Duration};

use sqlx::{
    postgres::{PgConnectOptions, PgPool, PgPoolOptions},
    sqlite::{
        SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
    },
};

use crate::config::DatabaseUrl;

/// The result type of every store method.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// What can go wrong in the store, in domain terms.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The row asked for does not exist.
    #[error("not found")]
    NotFound,
    /// A unique constraint or a state precondition was violated.
    #[error("conflict: {0}")]
    Conflict(String),
    /// A stored value could not be decoded (corrupt or written by a newer version).
    #[error("corrupt stored value in {column}: {reason}")]
    Corrupt {
        /// The column holding the bad value.
        column: &'static str,
        /// Why it did not decode.
        reason: String,
    },
    /// The database could not be opened or migrated.
    #[error("database setup failed: {0}")]
    Setup(String),
    /// Any other database failure.
    #[error(transparent)]
    Database(sqlx::Error),
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        match &error {
            sqlx::Error::RowNotFound => Self::NotFound,
            sqlx::Error::Database(database_error) if database_error.is_unique_violation() => {
                Self::Conflict(database_error.message().to_owned())
            }
            _ => Self::Database(error),
        }
    }
}

/// The storage facade, cheap to clone.
#[derive(Clone, Debug)]
pub enum Store {
    /// Embedded SQLite: one server process.
    Sqlite(SqlitePool),
    /// PostgreSQL: any number of server processes.
    Postgres(PgPool),
}

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

impl Store {
    /// Opens the database named by `url` (creating an SQLite file if missing) and migrates it.
    ///
    /// # Errors
    /// Returns [`StoreError::Setup`] when the database cannot be reached or migrated.
    pub async fn connect(url: &DatabaseUrl) -> Result<Self> {
        let store = match url {
            DatabaseUrl::Sqlite(path) => {
                let options = SqliteConnectOptions::new()
                    .filename(path)
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Full)
                    .foreign_keys(true)
                    .busy_timeout(Duration::from_secs(10));
                let pool = SqlitePoolOptions::new()
                    .max_connections(8)
                    .connect_with(options)
                    .await
                    .map_err(|error| {
                        StoreError::Setup(format!("cannot open sqlite file {path}: {error}"))
                    })?;
                Self::Sqlite(pool)
            }
            DatabaseUrl::Postgres(url) => {
                let options = PgConnectOptions::from_str(url.expose())
                    .map_err(|error| StoreError::Setup(format!("bad postgres URL: {error}")))?;
                let pool = PgPoolOptions::new()
                    .max_connections(16)
                    .acquire_timeout(Duration::from_secs(10))
                    .connect_with(options)
                    .await
                    .map_err(|error| {
                        StoreError::Setup(format!("cannot reach postgres: {error}"))
                    })?;
                Self::Postgres(pool)
            }
        };
        store.migrate().await?;
        Ok(store)
    }

    async fn migrate(&self) -> Result<()> {
        let outcome = match self {
            Self::Sqlite(pool) => SQLITE_MIGRATIONS.run(pool).await,
            Self::Postgres(pool) => POSTGRES_MIGRATIONS.run(pool).await,
        };
        outcome.map_err(|error| StoreError::Setup(format!("migration failed: {error}")))
    }

    /// Which engine this store runs on: `sqlite` or `postgres`.
    #[must_use]
    pub fn engine(&self) -> &'static str {
        match self {
            Self::Sqlite(_) => "sqlite",
            Self::Postgres(_) => "postgres",
        }
    }

    /// Checks the database answers a trivial query (for `/readyz`).
    ///
    /// # Errors
    /// Returns the database error when it does not.
    pub async fn ping(&self) -> Result<()> {
        on_pool!(self, |pool| {
            sqlx::query("SELECT 1").execute(pool).await?;
        });
        Ok(())
    }

    /// Closes every pooled connection (used at shutdown so SQLite checkpoints its WAL).
    pub async fn close(&self) {
        on_pool!(self, |pool| pool.close().await);
    }
}

/// A pool that can start a transaction which may write.
trait WritePool {
    /// The pool's driver.
    type Database: sqlx::Database;

    /// Starts the transaction the way this engine needs it.
    fn begin_write(
        &self,
    ) -> impl std::future::Future<Output = Result<sqlx::Transaction<'static, Self::Database>>> + Send;
}

impl WritePool for SqlitePool {
    type Database = sqlx::Sqlite;

    /// Takes the write lock up front (DESIGN.md §10): a transaction that reads and then writes
    /// would otherwise fail with `SQLITE_BUSY` when upgrading its lock, past the busy timeout.
    async fn begin_write(&self) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>> {
        Ok(self.begin_with("BEGIN IMMEDIATE").await?)
    }
}

impl WritePool for PgPool {
    type Database = sqlx::Postgres;

    /// Row locks taken by the statements themselves are all PostgreSQL needs.
    async fn begin_write(&self) -> Result<sqlx::Transaction<'static, sqlx::Postgres>> {
        Ok(self.begin().await?)
    }
}

/// Starts a transaction that may write: `BEGIN IMMEDIATE` on SQLite (DESIGN.md §10), `BEGIN` on
/// PostgreSQL.
async fn begin_write<P: WritePool>(pool: &P) -> Result<sqlx::Transaction<'static, P::Database>> {
    pool.begin_write().await
}

/// Decodes a JSON text column, naming the column when it is corrupt.
fn decode_json(column: &'static str, text: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|error| StoreError::Corrupt {
        column,
        reason: error.to_string(),
    })
}

/// Parses a UUID text column, naming the column when it is corrupt.
fn decode_uuid(column: &'static str, text: &str) -> Result<uuid::Uuid> {
    uuid::Uuid::parse_str(text).map_err(|error| StoreError::Corrupt {
        column,
        reason: error.to_string(),
    })
}

/// The current time as unix milliseconds, the store's timestamp unit.
#[must_use]
pub fn now_ms() -> i64 {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
}
