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
use tessera::{
    config::{Config, DatabaseUrl, Secret},
    startup::{Application, Options},
    store::Store,
    workflow::run::RunStatus,
};
pub use tessera_store::testing::{FreshPostgres, TestDb};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Serves `app` on a free loopback port until the returned token is cancelled: the stand-in
/// sites the chat tests drive.
pub async fn serve_on_loopback(app: Router) -> anyhow::Result<(SocketAddr, CancellationToken)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
    });
    Ok((address, shutdown))
}

/// The API token every spawned test app accepts.
pub const API_TOKEN: &str = "test-token-0123456789abcdef";

/// A running application on its own port and database, built by [`TestApp::builder`].
pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
    pub store: Store,
    shutdown: CancellationToken,
    /// The server's task: `stop` and `cleanup` wait for it to end before they check its runs.
    server: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    database_url: DatabaseUrl,
    dir: Option<tempfile::TempDir>,
    /// The PostgreSQL database to drop at [`TestApp::cleanup`].
    postgres: Option<FreshPostgres>,
}

/// The admin password every spawned test app accepts.
pub const ADMIN_PASSWORD: &str = "test-admin-password";

/// Which database a spawned app runs on.
#[derive(Clone, Copy, Debug)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// How a [`TestApp`] starts: its database engine, its configuration (always built in code, never
/// from the environment), the runner's options and the folder of its SQLite file.
///
/// Every app gets its own listener, bound once on `127.0.0.1:0` before the app is built and
/// handed to it (no port is picked, dropped and bound again), so its origin is fixed before it
/// starts: `public_url` is that address, which is also where the chat calls the demo site.
pub struct TestAppBuilder {
    backend: Backend,
    config: Config,
    options: Options,
    dir: Option<tempfile::TempDir>,
}

impl TestApp {
    /// A SQLite app with the test API token, a 64 KiB body limit and the demo workflows.
    pub fn builder() -> TestAppBuilder {
        // The database URL is settled at spawn, once the backend is known.
        let mut config = Config::for_tests(DatabaseUrl::Sqlite(String::new()));
        config.api_token = Some(Secret::new(API_TOKEN));
        config.body_limit = 64 * 1024;
        TestAppBuilder {
            backend: Backend::Sqlite,
            config,
            options: Options::default(),
            dir: None,
        }
    }
}

impl TestAppBuilder {
    /// Runs on a fresh database of `backend`.
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    /// Changes the configuration.
    pub fn config(mut self, customize: impl FnOnce(&mut Config)) -> Self {
        customize(&mut self.config);
        self
    }

    /// Other workflows, runner settings, components or models.
    pub fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// Keeps the SQLite file in `dir` (pass the folder of a stopped app to restart it).
    pub fn dir(mut self, dir: tempfile::TempDir) -> Self {
        self.dir = Some(dir);
        self
    }

    /// Starts the app; `None` only for PostgreSQL when `TESSERA_SKIP_POSTGRES=1` skips it. Call
    /// [`TestApp::cleanup`] at the end to drop a PostgreSQL database.
    pub async fn try_spawn(mut self) -> anyhow::Result<Option<TestApp>> {
        let dir = match self.dir.take() {
            Some(dir) => dir,
            None => tempfile::tempdir()?,
        };
        let postgres = match self.backend {
            Backend::Sqlite => {
                let path = dir.path().join("tessera.db");
                self.config.database_url = DatabaseUrl::Sqlite(path.to_string_lossy().into_owned());
                None
            }
            Backend::Postgres => {
                let Some(database) = FreshPostgres::create().await? else {
                    return Ok(None);
                };
                self.config.database_url = database.database_url();
                Some(database)
            }
        };
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        self.config.addr = address;
        self.config.public_url = format!("http://{address}");
        self.options.listener = Some(listener);
        let database_url = self.config.database_url.clone();
        let application = Application::build_with(self.config, self.options).await?;
        let store = application.state().store.clone();
        let shutdown = CancellationToken::new();
        let server = tokio::spawn(application.run_until(shutdown.clone()));
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()?;
        Ok(Some(TestApp {
            address: format!("http://{address}"),
            client,
            store,
            shutdown,
            server: Some(server),
            database_url,
            dir: Some(dir),
            postgres,
        }))
    }

    /// The app's router on a fresh SQLite database, for `tower::ServiceExt::oneshot`: every
    /// layer and handler, no server and no runner.
    pub async fn router(mut self) -> anyhow::Result<TestRouter> {
        let dir = match self.dir.take() {
            Some(dir) => dir,
            None => tempfile::tempdir()?,
        };
        let path = dir.path().join("tessera.db");
        self.config.database_url = DatabaseUrl::Sqlite(path.to_string_lossy().into_owned());
        let application = Application::build_with(self.config, self.options).await?;
        Ok(TestRouter {
            router: tessera::http::router(application.state().clone()),
            _dir: dir,
        })
    }

    /// Starts the app on SQLite.
    pub async fn spawn(self) -> anyhow::Result<TestApp> {
        self.try_spawn()
            .await?
            .context("PostgreSQL is skipped (TESSERA_SKIP_POSTGRES=1)")
    }
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    pub async fn get(&self, path: &str) -> anyhow::Result<reqwest::Response> {
        Ok(self.client.get(self.url(path)).send().await?)
    }

    /// `GET path` with a session `cookie` (`""` for none).
    pub async fn get_with(&self, path: &str, cookie: &str) -> anyhow::Result<reqwest::Response> {
        Ok(self
            .client
            .get(self.url(path))
            .header("cookie", cookie)
            .send()
            .await?)
    }

    /// `POST path` with a session `cookie` (`""` for none) and a URL-encoded form `body`.
    pub async fn post_form(
        &self,
        path: &str,
        cookie: &str,
        body: String,
    ) -> anyhow::Result<reqwest::Response> {
        Ok(self
            .client
            .post(self.url(path))
            .header("cookie", cookie)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await?)
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

    /// Logs in as the admin and answers the session cookie (`name=value`).
    pub async fn admin_cookie(&self) -> anyhow::Result<String> {
        let response = self
            .post_form(
                "/login",
                "",
                format!("password={ADMIN_PASSWORD}&next=/runs"),
            )
            .await?;
        session_cookie(&response).context("no session cookie after login")
    }

    /// Reads run `id` through the API until its status is `status`, and answers it; fails after
    /// a minute with the run as last read.
    pub async fn wait_for_status(
        &self,
        id: &str,
        status: &str,
    ) -> anyhow::Result<serde_json::Value> {
        let started = std::time::Instant::now();
        loop {
            let run = self.api_json(&format!("/api/runs/{id}")).await?;
            if run["status"] == status {
                return Ok(run);
            }
            if started.elapsed() > Duration::from_secs(60) {
                bail!("run {id} never reached {status}: {run:#}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Stops the server and hands back its database folder, to start another app on it.
    pub async fn stop(mut self) -> anyhow::Result<tempfile::TempDir> {
        self.shut_down().await?;
        self.dir.take().context("the folder was already taken")
    }

    /// Stops the server and drops its PostgreSQL database, if it has one.
    pub async fn cleanup(mut self) -> anyhow::Result<()> {
        let stopped = self.shut_down().await;
        if let Some(database) = self.postgres.take() {
            database.drop_database().await?;
        }
        stopped
    }

    /// The teardown check: the server stops (its task ends within 30 s: no request, step or
    /// stream outlives the test), and no run it drove is left in flight — a graceful stop
    /// releases the run a step was under way in, so a run still `running` means one was lost.
    async fn shut_down(&mut self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        // The server closes the pool it shares with `self.store` once its runner has released
        // what it held; closing it first would cut that release short.
        let Some(server) = self.server.take() else {
            self.store.close().await;
            return Ok(());
        };
        let mut server = server;
        let ended = tokio::time::timeout(Duration::from_secs(30), &mut server).await;
        self.store.close().await;
        let Ok(joined) = ended else {
            server.abort();
            bail!("teardown: the server did not stop within 30 s");
        };
        joined??;
        let store = Store::connect(&self.database_url).await?;
        let running = store
            .count_runs_by_status()
            .await?
            .into_iter()
            .find(|(status, _)| *status == RunStatus::Running)
            .map_or(0, |(_, count)| count);
        store.close().await;
        anyhow::ensure!(
            running == 0,
            "teardown: {running} run(s) left running after the server stopped"
        );
        Ok(())
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// The router of an app that is not served, and the folder its database lives in.
pub struct TestRouter {
    pub router: Router,
    _dir: tempfile::TempDir,
}

/// The session cookie (`tessera_session=…`) a response sets, if it sets one.
pub fn session_cookie(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .find(|value| value.starts_with("tessera_session="))
        .and_then(|value| value.split(';').next())
        .map(str::to_owned)
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
/// which spawns its app with `TestApp::builder().backend(backend)…try_spawn()`) once on SQLite and once on PostgreSQL.
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

    /// Lets `config`'s server send an ask's callback or webhook to this loopback sink, as an
    /// operator admits an internal receiver (`TESSERA_OUTBOUND_ALLOW=127.0.0.1:PORT`).
    pub fn admit_in(&self, config: &mut Config) {
        let allow = std::mem::take(&mut config.outbound_allow);
        config.outbound_allow = allow.with_address(self.address);
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

/// A free loopback port for a child server that is killed and restarted on it, chosen below the
/// kernel's ephemeral range: every `bind(0)` of the tests running beside it (their servers, mock
/// receivers, outgoing connections) draws from that range, so a port from it could be taken in
/// the moment between a kill and the restart, and the restarted server would fail to bind or,
/// worse, its requests would reach another test's server.
pub fn restartable_port() -> anyhow::Result<u16> {
    use rand::Rng as _;
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    let low = 10_000_u16.min(ephemeral_low / 2);
    let mut rng = rand::thread_rng();
    for _ in 0..200 {
        let port = rng.gen_range(low..ephemeral_low);
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    bail!("no free port below the ephemeral range ({low}..{ephemeral_low})")
}
