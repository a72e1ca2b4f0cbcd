//! Databases for tests, behind the `testing` feature: a fresh database on either engine, and the
//! few raw looks at one that tests outside this crate need (every stored row as text, the applied
//! migrations, a held SQLite write lock). It lives here so that no other crate names `sqlx`, not
//! even in its tests.

use anyhow::{bail, Context as _};
use sqlx::{Connection as _, Executor as _, PgConnection, Row as _, SqliteConnection};
use tessera_settings::Secret;

use crate::{DatabaseUrl, Store};

/// A fresh database on the PostgreSQL server named by `TEST_DATABASE_URL`; dropped by
/// [`FreshPostgres::drop_database`], whoever is still connected.
#[derive(Debug)]
pub struct FreshPostgres {
    /// The database's own URL.
    pub url: String,
    admin_url: String,
    database: String,
}

impl FreshPostgres {
    /// Creates the database. `None` only when `TESSERA_SKIP_POSTGRES=1` says so explicitly; a
    /// missing `TEST_DATABASE_URL` is an error, so a suite that silently skipped PostgreSQL
    /// cannot pass.
    ///
    /// # Errors
    /// When the server cannot be reached or the database cannot be created.
    pub async fn create() -> anyhow::Result<Option<Self>> {
        let Ok(admin_url) = std::env::var("TEST_DATABASE_URL") else {
            if std::env::var("TESSERA_SKIP_POSTGRES").as_deref() == Ok("1") {
                eprintln!("PostgreSQL test skipped: TESSERA_SKIP_POSTGRES=1");
                return Ok(None);
            }
            bail!("TEST_DATABASE_URL is not set: run `make test` (it starts a throwaway cluster) or set TESSERA_SKIP_POSTGRES=1 to skip PostgreSQL on purpose");
        };
        let database = format!("tessera_test_{}", uuid::Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(&admin_url)
            .await
            .context("connecting to TEST_DATABASE_URL")?;
        admin
            .execute(format!("CREATE DATABASE {database}").as_str())
            .await?;
        admin.close().await?;
        Ok(Some(Self {
            url: replace_database(&admin_url, &database)?,
            admin_url,
            database,
        }))
    }

    /// The database's URL as the store takes it.
    #[must_use]
    pub fn database_url(&self) -> DatabaseUrl {
        DatabaseUrl::Postgres(Secret::new(self.url.clone()))
    }

    /// Drops the database, closing whatever connections are left.
    ///
    /// # Errors
    /// When the server cannot be reached.
    pub async fn drop_database(self) -> anyhow::Result<()> {
        let mut admin = PgConnection::connect(&self.admin_url).await?;
        admin
            .execute(format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.database).as_str())
            .await?;
        admin.close().await?;
        Ok(())
    }
}

/// `url` with its database name replaced by `database` (its query kept).
fn replace_database(url: &str, database: &str) -> anyhow::Result<String> {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(base, query)| (base, Some(query)));
    let scheme_end = base
        .find("://")
        .context("TEST_DATABASE_URL has no scheme")?
        + 3;
    let path_start = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |index| scheme_end + index);
    let mut replaced = format!("{}/{database}", &base[..path_start]);
    if let Some(query) = query {
        replaced.push('?');
        replaced.push_str(query);
    }
    Ok(replaced)
}

/// A fresh, migrated database on one engine, removed by [`TestDb::cleanup`].
#[derive(Debug)]
pub struct TestDb {
    /// The store over it.
    pub store: Store,
    place: Place,
}

#[derive(Debug)]
enum Place {
    Sqlite(tempfile::TempDir),
    Postgres(FreshPostgres),
}

impl TestDb {
    /// A fresh SQLite database in a temporary folder.
    ///
    /// # Errors
    /// When the folder or the database cannot be made.
    pub async fn sqlite() -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let store = Store::connect(&sqlite_url(&dir)).await?;
        Ok(Self {
            store,
            place: Place::Sqlite(dir),
        })
    }

    /// A fresh database on the PostgreSQL server named by `TEST_DATABASE_URL` (`None` as
    /// [`FreshPostgres::create`] says).
    ///
    /// # Errors
    /// When the server cannot be reached or the database cannot be made.
    pub async fn postgres() -> anyhow::Result<Option<Self>> {
        let Some(database) = FreshPostgres::create().await? else {
            return Ok(None);
        };
        let store = Store::connect(&database.database_url()).await?;
        Ok(Some(Self {
            store,
            place: Place::Postgres(database),
        }))
    }

    /// Another pool on the same database, as a second server process would open it.
    ///
    /// # Errors
    /// When the database cannot be opened.
    pub async fn reopen(&self) -> anyhow::Result<Store> {
        let url = match &self.place {
            Place::Sqlite(dir) => sqlite_url(dir),
            Place::Postgres(database) => database.database_url(),
        };
        Ok(Store::connect(&url).await?)
    }

    /// Closes the store and removes the database.
    ///
    /// # Errors
    /// When a PostgreSQL database cannot be dropped.
    pub async fn cleanup(self) -> anyhow::Result<()> {
        self.store.close().await;
        if let Place::Postgres(database) = self.place {
            database.drop_database().await?;
        }
        Ok(())
    }
}

fn sqlite_url(dir: &tempfile::TempDir) -> DatabaseUrl {
    DatabaseUrl::Sqlite(dir.path().join("store.db").to_string_lossy().into_owned())
}

/// Every row of every table of a PostgreSQL store, one JSON object per line: what a scan for a
/// secret that must never be stored reads.
///
/// # Errors
/// When the store is not PostgreSQL or a table cannot be read.
pub async fn postgres_rows(store: &Store) -> anyhow::Result<String> {
    let Store::Postgres(pool) = store else {
        bail!("not PostgreSQL");
    };
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables \
         WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    )
    .fetch_all(pool)
    .await?;
    anyhow::ensure!(tables.iter().any(|table| table == "pages"), "{tables:?}");
    let mut text = String::new();
    for table in tables {
        let rows = sqlx::query(&format!(
            "SELECT row_to_json(t)::text AS row FROM \"{table}\" t"
        ))
        .fetch_all(pool)
        .await?;
        for row in rows {
            text.push_str(&row.try_get::<String, _>("row")?);
            text.push('\n');
        }
    }
    Ok(text)
}

/// The migration versions `_sqlx_migrations` lists as applied in the database at `url`, oldest
/// first.
///
/// # Errors
/// When the database cannot be read.
pub async fn applied_migrations(url: &DatabaseUrl) -> anyhow::Result<Vec<i64>> {
    let query = "SELECT version FROM _sqlx_migrations WHERE success ORDER BY version";
    Ok(match url {
        DatabaseUrl::Sqlite(path) => {
            let mut connection = SqliteConnection::connect(&format!("sqlite://{path}")).await?;
            sqlx::query_scalar(query).fetch_all(&mut connection).await?
        }
        DatabaseUrl::Postgres(url) => {
            let mut connection = PgConnection::connect(url.expose()).await?;
            sqlx::query_scalar(query).fetch_all(&mut connection).await?
        }
    })
}

/// Runs `sql` (one or more statements) on the database at `url` over a connection of its own:
/// for a test that must leave the database as another release would.
///
/// # Errors
/// When the database cannot be reached or a statement fails.
pub async fn execute(url: &DatabaseUrl, sql: &str) -> anyhow::Result<()> {
    match url {
        DatabaseUrl::Sqlite(path) => {
            let mut connection = SqliteConnection::connect(&format!("sqlite://{path}")).await?;
            connection.execute(sql).await?;
            connection.close().await?;
        }
        DatabaseUrl::Postgres(url) => {
            let mut connection = PgConnection::connect(url.expose()).await?;
            connection.execute(sql).await?;
            connection.close().await?;
        }
    }
    Ok(())
}

/// SQLite's write lock held by a connection of its own (`BEGIN IMMEDIATE`), as a stalled writer
/// in another process would hold it, until [`SqliteWriteLock::release`].
#[derive(Debug)]
pub struct SqliteWriteLock(SqliteConnection);

impl SqliteWriteLock {
    /// Takes the write lock of the SQLite file at `path`.
    ///
    /// # Errors
    /// When the file cannot be opened or the lock taken.
    pub async fn take(path: &str) -> anyhow::Result<Self> {
        let mut connection = SqliteConnection::connect(&format!("sqlite://{path}")).await?;
        connection.execute("BEGIN IMMEDIATE").await?;
        Ok(Self(connection))
    }

    /// Gives the lock back.
    ///
    /// # Errors
    /// When the rollback fails.
    pub async fn release(mut self) -> anyhow::Result<()> {
        self.0.execute("ROLLBACK").await?;
        self.0.close().await?;
        Ok(())
    }
}

/// Runs one statement on the store's own pool with text binds (`$1`, `$2`, …): for a test that
/// must put a row where the server's own code never would (an answer given an hour ago).
///
/// # Errors
/// When the statement fails.
pub async fn execute_on(store: &Store, sql: &str, binds: &[&str]) -> anyhow::Result<u64> {
    let affected = on_pool!(store, |pool| {
        let mut query = sqlx::query(sql);
        for bind in binds {
            query = query.bind(*bind);
        }
        query.execute(pool).await.map(|done| done.rows_affected())
    })?;
    Ok(affected)
}

/// The rows of a `SELECT label, count` query, as a map.
///
/// # Errors
/// When the query fails.
pub async fn label_counts(
    store: &Store,
    sql: &str,
) -> anyhow::Result<std::collections::BTreeMap<String, i64>> {
    let rows: Vec<(String, i64)> =
        on_pool!(store, |pool| sqlx::query_as(sql).fetch_all(pool).await)?;
    Ok(rows.into_iter().collect())
}

/// The one row a query of text columns returns, with text binds (`$1`, `$2`, …).
///
/// # Errors
/// When the query fails or finds no row.
pub async fn text_row(store: &Store, sql: &str, binds: &[&str]) -> anyhow::Result<Vec<String>> {
    let row = on_pool!(store, |pool| {
        let mut query = sqlx::query(sql);
        for bind in binds {
            query = query.bind(*bind);
        }
        query.fetch_one(pool).await.and_then(|row| {
            (0..row.len())
                .map(|column| row.try_get::<String, _>(column))
                .collect::<Result<Vec<_>, _>>()
        })
    })?;
    Ok(row)
}

/// The benchmarks' baseline: one bare row per request, the least a request that records
/// something must write (`bench_rows`, made by [`create_baseline_table`]).
///
/// # Errors
/// When the table cannot be made.
pub async fn create_baseline_table(store: &Store) -> anyhow::Result<()> {
    match store {
        Store::Sqlite(pool) => pool
            .execute("CREATE TABLE bench_rows (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL, created_at INTEGER NOT NULL)")
            .await
            .map(drop)?,
        Store::Postgres(pool) => pool
            .execute("CREATE TABLE bench_rows (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL, created_at BIGINT NOT NULL)")
            .await
            .map(drop)?,
    }
    Ok(())
}

/// Writes one baseline row (a single statement: its own transaction).
///
/// # Errors
/// When the row cannot be written.
pub async fn insert_baseline_row(store: &Store, body: &str) -> anyhow::Result<()> {
    on_pool!(store, |pool| {
        sqlx::query("INSERT INTO bench_rows (body, created_at) VALUES ($1, $2)")
            .bind(body)
            .bind(crate::now_ms())
            .execute(pool)
            .await
            .map(drop)
    })?;
    Ok(())
}

/// Writes one baseline row and a `NOTIFY` in one PostgreSQL transaction, on a channel nobody
/// listens on: the cost measured is the commit's notify lock alone. `false` on SQLite.
///
/// # Errors
/// When the row cannot be written.
pub async fn insert_baseline_row_and_notify(store: &Store, body: &str) -> anyhow::Result<bool> {
    let Store::Postgres(pool) = store else {
        return Ok(false);
    };
    let mut transaction = pool.begin().await?;
    sqlx::query("INSERT INTO bench_rows (body, created_at) VALUES ($1, $2)")
        .bind(body)
        .bind(crate::now_ms())
        .execute(&mut *transaction)
        .await?;
    sqlx::query("SELECT pg_notify('tessera_bench', '')")
        .execute(&mut *transaction)
        .await?;
    transaction.commit().await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_names_are_replaced_in_urls() -> anyhow::Result<()> {
        assert_eq!(
            replace_database("postgres://u@h:5/db", "x")?,
            "postgres://u@h:5/x"
        );
        assert_eq!(
            replace_database("postgres://u@h:5", "x")?,
            "postgres://u@h:5/x"
        );
        assert_eq!(
            replace_database("postgres://u@h/db?sslmode=disable", "x")?,
            "postgres://u@h/x?sslmode=disable"
        );
        Ok(())
    }
}
