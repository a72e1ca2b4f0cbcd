//! The one storage facade: [`Store`] over SQLite (embedded default) or PostgreSQL (scale-out).
//!
//! `Store` is a `Clone` enum over the two pools, chosen from `DATABASE_URL`'s scheme. Each query
//! is written once for both engines (`on_pool!`); where the engines differ (the runs' claim,
//! SQLite's unsynced lease writes) a dialect file beside the aggregate holds only that
//! (`runs/sqlite.rs`, `runs/postgres.rs`). The records it persists are plain data in [`records`].
//! Callers never see `sqlx::Error`: the store turns database facts into [`StoreError`] variants
//! (`NotFound`, `Conflict`).
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
//! `BEGIN IMMEDIATE` ([`Store`] methods use `begin_write`; a single write statement takes the
//! lock as it starts and needs no transaction, though `create_run` takes one on both engines so
//! its PostgreSQL `NOTIFY` commits with the row), WAL, `synchronous=FULL`, foreign keys on, a busy
//! timeout. It must not hold a transaction across an `.await` on anything but the database.
//! A runner's lease bookkeeping (claim, step start, renewal) commits unsynced (`Unsynced`):
//! losing it in a power cut only makes a run claimable again, and a sync on the runner's path
//! from a submission to its resumed step would double that path's time.

/// Expands `$body` once per engine with `$pool` bound to the store's pool, so a query whose SQL
/// reads the same on both (`$n` placeholders, explicit casts) is written once. Each expansion is
/// type-checked against its own driver, so a bind or column type one engine lacks fails to build.
macro_rules! on_pool {
    ($store:expr, |$pool:ident| $body:expr) => {
        match $store {
            $crate::Store::Sqlite($pool) => $body,
            $crate::Store::Postgres($pool) => $body,
        }
    };
}

/// The query appending `$event` (a [`records::history::NewEvent`]) to page `$page_id`'s history
/// at `$now` (unix ms), ready to execute on either engine's connection. A macro because the
/// bound query's type names its engine, and it is bound inside each engine's `on_pool!` arm.
macro_rules! insert_event {
    ($page_id:expr, $now:expr, $event:expr) => {{
        let event: &$crate::records::history::NewEvent = $event;
        sqlx::query($crate::history::INSERT_EVENT)
            .bind($page_id.to_string())
            .bind($now)
            .bind(event.kind.as_str())
            .bind(event.who.as_deref())
            .bind(event.detail.as_deref())
    }};
}

pub mod answers;
pub mod canonical_json;
pub mod chat;
pub mod chat_bus;
pub mod generations;
pub mod history;
pub mod items;
pub mod metrics;
pub mod page_cache;
pub mod pages;
pub mod records;
pub mod runs;
pub mod sessions;
pub mod settings;
pub mod sign_in;
pub mod sqlite_file;
#[cfg(feature = "testing")]
pub mod testing;
pub mod timers;
pub mod views;

use std::{str::FromStr, time::Duration};

use tessera_settings::Secret;

use sqlx::{
    postgres::{PgConnectOptions, PgPool, PgPoolOptions},
    sqlite::{
        SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
    },
};

/// Which database the store talks to, parsed from `DATABASE_URL`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatabaseUrl {
    /// An SQLite file (created if missing).
    Sqlite(String),
    /// A PostgreSQL server.
    Postgres(Secret),
}

impl DatabaseUrl {
    /// Parses a `sqlite://` or `postgres://` URL.
    ///
    /// # Errors
    /// Returns a message naming what is wrong when the scheme is neither.
    pub fn parse(raw: &str) -> Result<Self, String> {
        if let Some(path) = raw
            .strip_prefix("sqlite://")
            .or_else(|| raw.strip_prefix("sqlite:"))
        {
            if path.is_empty() {
                return Err("an sqlite URL needs a file path, e.g. sqlite://tessera.db".into());
            }
            return Ok(Self::Sqlite(path.to_owned()));
        }
        if raw.starts_with("postgres://") || raw.starts_with("postgresql://") {
            return Ok(Self::Postgres(Secret::new(raw)));
        }
        Err("must start with sqlite:// or postgres://".into())
    }

    /// The engine's name, safe to show (no credentials).
    #[must_use]
    pub fn engine(&self) -> &'static str {
        match self {
            Self::Sqlite(_) => "sqlite",
            Self::Postgres(_) => "postgres",
        }
    }
}

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
    /// The database lists a migration this build lacks: a newer Tessera migrated it, and this
    /// build cannot know what that migration changed, so it must not touch the data.
    #[error("the database at DATABASE_URL was migrated by a newer Tessera (migration {version} unknown to this build); use that version or restore a backup")]
    NewerDatabase {
        /// The first applied migration this build does not know.
        version: i64,
    },
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
        outcome.map_err(|error| match error {
            // sqlx checks the applied migrations against its own before it applies any.
            sqlx::migrate::MigrateError::VersionMissing(version) => {
                StoreError::NewerDatabase { version }
            }
            error => StoreError::Setup(format!("migration failed: {error}")),
        })
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

/// An SQLite connection whose commits do not wait for the disk, for writes whose loss in a power
/// cut is harmless: a runner's claim, a step's start and a lease renewal.
///
/// Why it is safe: in WAL mode a commit is appended to the log in order, and the next commit
/// made with `synchronous=FULL` (a submission, a step's result) syncs everything before it, so
/// a power cut can only drop a *suffix* of lease bookkeeping: the run is then ready, or running
/// with an expired lease, and is claimed again — exactly what a crashed runner leaves. A
/// process crash (`kill -9`) loses nothing either way: the log is in the operating system's
/// cache. What must survive a power cut (a person's answer, a finished step) still commits
/// with `synchronous=FULL` (DESIGN.md §10), on every other connection and on this one once it
/// is back in the pool.
///
/// The connection goes back to the pool only after `synchronous=FULL` is restored
/// ([`Unsynced::release`]); dropped before that (an error, a cancelled future) it is closed
/// instead, so no other write ever runs on it unsynced.
struct Unsynced {
    connection: sqlx::pool::PoolConnection<sqlx::Sqlite>,
    restored: bool,
}

impl Unsynced {
    /// A pooled connection switched to `synchronous=NORMAL`.
    async fn acquire(pool: &SqlitePool) -> Result<Self> {
        let mut unsynced = Self {
            connection: pool.acquire().await?,
            restored: false,
        };
        sqlx::query("PRAGMA synchronous = NORMAL")
            .execute(&mut *unsynced.connection)
            .await?;
        Ok(unsynced)
    }

    /// The connection, to run statements or `BEGIN IMMEDIATE` on.
    fn connection(&mut self) -> &mut sqlx::SqliteConnection {
        &mut self.connection
    }

    /// Restores `synchronous=FULL` and hands the connection back to the pool.
    async fn release(mut self) -> Result<()> {
        sqlx::query("PRAGMA synchronous = FULL")
            .execute(&mut *self.connection)
            .await?;
        self.restored = true;
        Ok(())
    }
}

impl Drop for Unsynced {
    fn drop(&mut self) {
        if !self.restored {
            self.connection.close_on_drop();
        }
    }
}

/// Decodes a JSON text column, naming the column when it is corrupt.
fn decode_json(column: &'static str, text: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|error| StoreError::Corrupt {
        column,
        reason: error.to_string(),
    })
}

/// Reads a stored spelling (a status, a kind, a date) back with `parse`, naming the column when
/// it holds one `parse` does not know.
fn decode_parsed<T>(
    column: &'static str,
    text: &str,
    parse: impl FnOnce(&str) -> Option<T>,
) -> Result<T> {
    parse(text).ok_or_else(|| StoreError::Corrupt {
        column,
        reason: text.to_owned(),
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

#[cfg(test)]
mod tests {
    use super::*;

    async fn synchronous_of_every_pooled_connection(pool: &SqlitePool) -> anyhow::Result<Vec<i64>> {
        let mut held = Vec::new();
        let mut levels = Vec::new();
        for _ in 0..pool.size() {
            let mut connection = pool.acquire().await?;
            let level: i64 = sqlx::query_scalar("PRAGMA synchronous")
                .fetch_one(&mut *connection)
                .await?;
            levels.push(level);
            held.push(connection);
        }
        Ok(levels)
    }

    #[tokio::test]
    async fn an_unsynced_connection_goes_back_to_the_pool_synced_or_is_closed() -> anyhow::Result<()>
    {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("tessera.db").to_string_lossy().into_owned();
        let Store::Sqlite(pool) = Store::connect(&DatabaseUrl::Sqlite(path)).await? else {
            anyhow::bail!("an SQLite URL opens SQLite");
        };
        let released = Unsynced::acquire(&pool).await?;
        released.release().await?;
        let mut dropped = Unsynced::acquire(&pool).await?;
        let level: i64 = sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(dropped.connection())
            .await?;
        assert_eq!(level, 1, "NORMAL while unsynced");
        // Dropped before `release` (an error or a cancelled future): never reused unsynced.
        drop(dropped);
        tokio::task::yield_now().await;
        let levels = synchronous_of_every_pooled_connection(&pool).await?;
        assert!(!levels.is_empty());
        assert!(
            levels.iter().all(|level| *level == 2),
            "every pooled connection is FULL: {levels:?}"
        );
        Ok(())
    }
}
