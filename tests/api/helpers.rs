//! Test fixtures: a spawned application on port 0 with a fresh database, and fresh stores on
//! both backends for the store contract suite.

use std::time::Duration;

use anyhow::{bail, Context as _};
use sqlx::{Connection as _, Executor as _, PgConnection};
use tessera::{
    config::{Config, DatabaseUrl, Secret},
    startup::Application,
    store::Store,
};
use tokio_util::sync::CancellationToken;

/// The API token every spawned test app accepts.
pub const API_TOKEN: &str = "test-token-0123456789abcdef";

/// A running application on a free port with its own SQLite file.
pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
    pub store: Store,
    shutdown: CancellationToken,
    dir: Option<tempfile::TempDir>,
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    pub async fn get(&self, path: &str) -> anyhow::Result<reqwest::Response> {
        Ok(self.client.get(self.url(path)).send().await?)
    }
}

impl TestApp {
    /// Stops the server and hands back its database folder, to start another app on it.
    pub async fn stop(mut self) -> anyhow::Result<tempfile::TempDir> {
        self.shutdown.cancel();
        self.store.close().await;
        self.dir.take().context("the folder was already taken")
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// The admin password every spawned test app accepts.
pub const ADMIN_PASSWORD: &str = "test-admin-password";

/// Starts the application the way `main` does, but configured in code (never from the environment).
pub async fn spawn_app() -> anyhow::Result<TestApp> {
    spawn_app_in(tempfile::tempdir()?).await
}

/// Starts the application on the database in `dir` (reuse a folder to simulate a restart).
pub async fn spawn_app_in(dir: tempfile::TempDir) -> anyhow::Result<TestApp> {
    let path = dir.path().join("tessera.db");
    let mut config = Config::for_tests(DatabaseUrl::Sqlite(path.to_string_lossy().into_owned()));
    config.api_token = Some(Secret::new(API_TOKEN));
    config.body_limit = 64 * 1024;
    let application = Application::build(config).await?;
    let address = format!("http://{}", application.local_addr()?);
    let store = application.state().store.clone();
    let shutdown = CancellationToken::new();
    tokio::spawn(application.run_until(shutdown.clone()));
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()?;
    Ok(TestApp {
        address,
        client,
        store,
        shutdown,
        dir: Some(dir),
    })
}

/// A fresh, migrated database on one backend, removed by [`TestDb::cleanup`].
pub struct TestDb {
    pub store: Store,
    cleanup: Cleanup,
}

enum Cleanup {
    Sqlite(#[expect(dead_code, reason = "held so the folder outlives the test")] tempfile::TempDir),
    Postgres(FreshPostgres),
}

impl TestDb {
    pub async fn sqlite() -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("store.db");
        let store =
            Store::connect(&DatabaseUrl::Sqlite(path.to_string_lossy().into_owned())).await?;
        Ok(Self {
            store,
            cleanup: Cleanup::Sqlite(dir),
        })
    }

    /// A fresh database on the PostgreSQL server named by `TEST_DATABASE_URL`.
    ///
    /// Returns `None` only when `TESSERA_SKIP_POSTGRES=1` says so explicitly; a missing URL is an error,
    /// so a suite that silently skipped PostgreSQL cannot pass.
    pub async fn postgres() -> anyhow::Result<Option<Self>> {
        let Some(database) = FreshPostgres::create().await? else {
            return Ok(None);
        };
        let store =
            Store::connect(&DatabaseUrl::Postgres(Secret::new(database.url.clone()))).await?;
        Ok(Some(Self {
            store,
            cleanup: Cleanup::Postgres(database),
        }))
    }

    pub async fn cleanup(self) -> anyhow::Result<()> {
        self.store.close().await;
        if let Cleanup::Postgres(database) = self.cleanup {
            database.drop_database().await?;
        }
        Ok(())
    }
}

/// A freshly created database on the PostgreSQL server named by `TEST_DATABASE_URL`, for tests
/// that need its URL (a store, or a server process); dropped by [`FreshPostgres::drop_database`].
pub struct FreshPostgres {
    pub url: String,
    admin_url: String,
    database: String,
}

impl FreshPostgres {
    /// Creates the database. `None` only when `TESSERA_SKIP_POSTGRES=1` says so explicitly.
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
        let url = replace_database(&admin_url, &database)?;
        Ok(Some(Self {
            url,
            admin_url,
            database,
        }))
    }

    /// Drops the database, closing whatever connections are left.
    pub async fn drop_database(self) -> anyhow::Result<()> {
        let mut admin = PgConnection::connect(&self.admin_url).await?;
        admin
            .execute(format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.database).as_str())
            .await?;
        admin.close().await?;
        Ok(())
    }
}

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

/// Runs each named contract test (an `async fn(&Store) -> anyhow::Result<()>` in the calling
/// module) once on a fresh SQLite database and once on a fresh PostgreSQL database.
macro_rules! store_contract {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $name() -> anyhow::Result<()> {
                    let database = $crate::helpers::TestDb::sqlite().await?;
                    let outcome = super::$name(&database.store).await;
                    database.cleanup().await?;
                    outcome
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $name() -> anyhow::Result<()> {
                    let Some(database) = $crate::helpers::TestDb::postgres().await? else { return Ok(()) };
                    let outcome = super::$name(&database.store).await;
                    database.cleanup().await?;
                    outcome
                }
            )*
        }
    };
}
pub(crate) use store_contract;

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
