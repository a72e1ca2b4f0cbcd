//! Test fixtures: a spawned application on port 0 with a fresh database, and fresh stores on
//! both backends for the store contract suite.

use std::{
    collections::VecDeque,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use anyhow::{bail, Context as _};
use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode, Uri},
    Router,
};
use sqlx::{Connection as _, Executor as _, PgConnection};
use tessera::{
    config::{Config, DatabaseUrl, Secret},
    startup::{Application, Options},
    store::Store,
};
use tokio::net::TcpListener;
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
    /// The PostgreSQL database to drop at [`TestApp::cleanup`]: `(admin URL, name)`.
    postgres: Option<(String, String)>,
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    pub async fn get(&self, path: &str) -> anyhow::Result<reqwest::Response> {
        Ok(self.client.get(self.url(path)).send().await?)
    }

    /// `GET path` with the API token, read as JSON.
    pub async fn api_json(&self, path: &str) -> anyhow::Result<serde_json::Value> {
        Ok(self
            .client
            .get(self.url(path))
            .bearer_auth(API_TOKEN)
            .send()
            .await?
            .json()
            .await?)
    }

    /// `POST path` with the API token and `body` as JSON.
    pub async fn api_post(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> anyhow::Result<reqwest::Response> {
        Ok(self
            .client
            .post(self.url(path))
            .bearer_auth(API_TOKEN)
            .json(body)
            .send()
            .await?)
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
    spawn_app_with(dir, Options::default()).await
}

/// Starts the application on the database in `dir` with other workflows or runner settings.
pub async fn spawn_app_with(dir: tempfile::TempDir, options: Options) -> anyhow::Result<TestApp> {
    let path = dir.path().join("tessera.db");
    let mut config = Config::for_tests(DatabaseUrl::Sqlite(path.to_string_lossy().into_owned()));
    config.api_token = Some(Secret::new(API_TOKEN));
    config.body_limit = 64 * 1024;
    start(config, dir, None, options).await
}

/// Starts the application on a fresh SQLite database with `customize` applied to its
/// configuration and other workflows or runner settings.
pub async fn spawn_app_configured(
    customize: impl FnOnce(&mut Config),
    options: Options,
) -> anyhow::Result<TestApp> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("tessera.db");
    let mut config = Config::for_tests(DatabaseUrl::Sqlite(path.to_string_lossy().into_owned()));
    config.api_token = Some(Secret::new(API_TOKEN));
    config.body_limit = 64 * 1024;
    customize(&mut config);
    start(config, dir, None, options).await
}

async fn start(
    config: Config,
    dir: tempfile::TempDir,
    postgres: Option<(String, String)>,
    options: Options,
) -> anyhow::Result<TestApp> {
    let application = Application::build_with(config, options).await?;
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
        postgres,
    })
}

/// Which database a spawned app runs on.
#[derive(Clone, Copy, Debug)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Starts the application on a fresh database of `backend`, with `customize` applied to its
/// configuration. `None` only when `TESSERA_SKIP_POSTGRES=1` skips PostgreSQL explicitly; call
/// [`TestApp::cleanup`] at the end to drop a PostgreSQL database.
pub async fn spawn_app_on(
    backend: Backend,
    customize: impl FnOnce(&mut Config),
) -> anyhow::Result<Option<TestApp>> {
    spawn_app_on_with(backend, customize, Options::default()).await
}

/// As [`spawn_app_on`], with other workflows, runner settings or models.
pub async fn spawn_app_on_with(
    backend: Backend,
    customize: impl FnOnce(&mut Config),
    options: Options,
) -> anyhow::Result<Option<TestApp>> {
    let dir = tempfile::tempdir()?;
    let (database_url, postgres) = match backend {
        Backend::Sqlite => {
            let path = dir.path().join("tessera.db");
            (
                DatabaseUrl::Sqlite(path.to_string_lossy().into_owned()),
                None,
            )
        }
        Backend::Postgres => {
            let Some((admin_url, database)) = create_postgres_database().await? else {
                return Ok(None);
            };
            let url = replace_database(&admin_url, &database)?;
            (
                DatabaseUrl::Postgres(Secret::new(url)),
                Some((admin_url, database)),
            )
        }
    };
    let mut config = Config::for_tests(database_url);
    config.api_token = Some(Secret::new(API_TOKEN));
    config.body_limit = 64 * 1024;
    customize(&mut config);
    start(config, dir, postgres, options).await.map(Some)
}

impl TestApp {
    /// Stops the server and drops its PostgreSQL database, if it has one.
    pub async fn cleanup(mut self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        self.store.close().await;
        if let Some((admin_url, database)) = self.postgres.take() {
            let mut admin = PgConnection::connect(&admin_url).await?;
            admin
                .execute(format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)").as_str())
                .await?;
            admin.close().await?;
        }
        Ok(())
    }
}

/// Creates a fresh database on `TEST_DATABASE_URL`'s server: `(admin URL, name)`, or `None`
/// when `TESSERA_SKIP_POSTGRES=1` skips PostgreSQL explicitly.
async fn create_postgres_database() -> anyhow::Result<Option<(String, String)>> {
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
    Ok(Some((admin_url, database)))
}

/// A fresh, migrated database on one backend, removed by [`TestDb::cleanup`].
pub struct TestDb {
    pub store: Store,
    cleanup: Cleanup,
}

enum Cleanup {
    Sqlite(tempfile::TempDir),
    Postgres { admin_url: String, database: String },
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
        let Some((admin_url, database)) = create_postgres_database().await? else {
            return Ok(None);
        };
        let url = replace_database(&admin_url, &database)?;
        let store = Store::connect(&DatabaseUrl::Postgres(Secret::new(url))).await?;
        Ok(Some(Self {
            store,
            cleanup: Cleanup::Postgres {
                admin_url,
                database,
            },
        }))
    }

    /// Another pool on the same database, as a second server process would open it.
    pub async fn reopen(&self) -> anyhow::Result<Store> {
        let url = match &self.cleanup {
            Cleanup::Sqlite(dir) => {
                DatabaseUrl::Sqlite(dir.path().join("store.db").to_string_lossy().into_owned())
            }
            Cleanup::Postgres {
                admin_url,
                database,
            } => DatabaseUrl::Postgres(Secret::new(replace_database(admin_url, database)?)),
        };
        Ok(Store::connect(&url).await?)
    }

    pub async fn cleanup(self) -> anyhow::Result<()> {
        self.store.close().await;
        if let Cleanup::Postgres {
            admin_url,
            database,
        } = self.cleanup
        {
            let mut admin = PgConnection::connect(&admin_url).await?;
            admin
                .execute(format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)").as_str())
                .await?;
            admin.close().await?;
        }
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

/// Runs each named test (an `async fn(Backend) -> anyhow::Result<()>` in the calling module,
/// which spawns its app with [`spawn_app_on`]) once on SQLite and once on PostgreSQL.
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $name() -> anyhow::Result<()> {
                    super::$name($crate::helpers::Backend::Sqlite).await
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $name() -> anyhow::Result<()> {
                    super::$name($crate::helpers::Backend::Postgres).await
                }
            )*
        }
    };
}
pub(crate) use on_both_backends;

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

/// One request as the HTTP sink saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

#[derive(Default)]
struct SinkState {
    seen: Vec<Seen>,
    /// Statuses to answer with, in order; 200 once they run out.
    statuses: VecDeque<u16>,
}

/// An HTTP listener on 127.0.0.1:0 (standing in for ntfy, a webhook or a callback receiver) that records every request and answers with a script.
#[derive(Clone)]
pub struct HttpSink {
    address: SocketAddr,
    state: Arc<Mutex<SinkState>>,
}

impl HttpSink {
    pub async fn start(statuses: &[u16]) -> anyhow::Result<Self> {
        let state = Arc::new(Mutex::new(SinkState {
            seen: Vec::new(),
            statuses: statuses.iter().copied().collect(),
        }));
        let router = Router::new().fallback(record).with_state(state.clone());
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        tokio::spawn(async move { axum::serve(listener, router).await });
        Ok(Self { address, state })
    }

    pub fn url(&self, path: &str) -> anyhow::Result<url::Url> {
        Ok(url::Url::parse(&format!("http://{}{path}", self.address))?)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.state
            .lock()
            .map(|state| state.seen.clone())
            .unwrap_or_default()
    }
}

async fn record(
    State(state): State<Arc<Mutex<SinkState>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let Ok(mut state) = state.lock() else {
        return StatusCode::INTERNAL_SERVER_ERROR;
    };
    state.seen.push(Seen {
        path: uri.path().to_owned(),
        headers,
        body,
    });
    let status = state.statuses.pop_front().unwrap_or(200);
    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// A freshly created database on the PostgreSQL server named by `TEST_DATABASE_URL`, for tests
/// that need its URL (a server process of their own); dropped by [`FreshPostgres::drop_database`].
pub struct FreshPostgres {
    pub url: String,
    admin_url: String,
    database: String,
}

impl FreshPostgres {
    /// Creates the database. `None` only when `TESSERA_SKIP_POSTGRES=1` says so explicitly.
    pub async fn create() -> anyhow::Result<Option<Self>> {
        let Some((admin_url, database)) = create_postgres_database().await? else {
            return Ok(None);
        };
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

/// Every event of every server in this test binary, at every level, as the log lines would read.
///
/// Installed once as the process's subscriber (the servers run on this runtime's threads, so a
/// scoped subscriber would miss them); tests find their own lines by an id only they know.
pub fn captured_logs() -> &'static CapturedLogs {
    static LOGS: std::sync::OnceLock<CapturedLogs> = std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = CapturedLogs(Arc::new(Mutex::new(Vec::new())));
        let sink = logs.clone();
        // Every level, through the server's own filter (`TESSERA_LOG=trace`): the token scan
        // reads debug and trace lines too, as an operator's most verbose log would have them.
        let subscriber = tracing_subscriber::layer::SubscriberExt::with(
            tracing_subscriber::registry(),
            tracing_subscriber::Layer::with_filter(
                tracing_subscriber::fmt::layer()
                    .with_ansi(false)
                    .with_writer(move || sink.clone()),
                tessera::telemetry::log_filter("trace"),
            ),
        );
        // Fails only if something else installed one first; then nothing is captured and the
        // tests that read the logs fail, naming what they missed.
        let _ = tracing::subscriber::set_global_default(subscriber);
        logs
    })
}

/// What [`captured_logs`] collected.
#[derive(Clone)]
pub struct CapturedLogs(Arc<Mutex<Vec<u8>>>);

impl CapturedLogs {
    /// Everything captured so far.
    pub fn text(&self) -> String {
        let bytes = self.0.lock().map(|bytes| bytes.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The captured lines that contain `needle`.
    pub fn lines_with(&self, needle: &str) -> Vec<String> {
        let bytes = self.0.lock().map(|bytes| bytes.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes)
            .lines()
            .filter(|line| line.contains(needle))
            .map(str::to_owned)
            .collect()
    }
}

impl std::io::Write for CapturedLogs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut bytes) = self.0.lock() {
            bytes.extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
