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
    workflow::run::{NewRun, Run, RunStatus},
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

/// The headers a browser sends with a form another site posts here: what the CSRF checks refuse.
pub const FROM_ANOTHER_SITE: [(&str, &str); 2] = [
    ("sec-fetch-site", "cross-site"),
    ("origin", "https://evil.example"),
];

/// An API answer's status and its `error` object.
pub async fn error_of(response: reqwest::Response) -> anyhow::Result<(u16, serde_json::Value)> {
    let status = response.status().as_u16();
    let body: serde_json::Value = response.json().await.context("a JSON error body")?;
    Ok((status, body["error"].clone()))
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

    /// Starts the app; on PostgreSQL, fails where [`Self::try_spawn`] would skip (the tests that
    /// [`on_both_backends`] runs are not started then).
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
        self.send_with_cookie(reqwest::Method::GET, path, cookie)
            .await
    }

    /// `POST path` with `body` as JSON and no API token: what a stranger sends.
    pub async fn post_json(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> anyhow::Result<reqwest::Response> {
        Ok(self.client.post(self.url(path)).json(body).send().await?)
    }

    /// `POST path` with a session `cookie` and no body: the buttons that are a bare form
    /// (cancel, log out).
    pub async fn post_with(&self, path: &str, cookie: &str) -> anyhow::Result<reqwest::Response> {
        self.send_with_cookie(reqwest::Method::POST, path, cookie)
            .await
    }

    /// A bodiless `method` request to `path` with a session `cookie` (`""` for none).
    async fn send_with_cookie(
        &self,
        method: reqwest::Method,
        path: &str,
        cookie: &str,
    ) -> anyhow::Result<reqwest::Response> {
        let request = self.client.request(method, self.url(path));
        Ok(self.with_cookie(request, cookie).send().await?)
    }

    /// `POST path` with a session `cookie` (`""` for none) and a URL-encoded form `body`.
    pub async fn post_form(
        &self,
        path: &str,
        cookie: &str,
        body: impl Into<String>,
    ) -> anyhow::Result<reqwest::Response> {
        self.post_form_with(path, cookie, body, &[]).await
    }

    /// [`Self::post_form`] with more `headers`, such as [`FROM_ANOTHER_SITE`].
    pub async fn post_form_with(
        &self,
        path: &str,
        cookie: &str,
        body: impl Into<String>,
        headers: &[(&str, &str)],
    ) -> anyhow::Result<reqwest::Response> {
        let mut request = self
            .client
            .post(self.url(path))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.into());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        Ok(self.with_cookie(request, cookie).send().await?)
    }

    /// `request` with the session `cookie`, if there is one (`""` is none).
    fn with_cookie(
        &self,
        request: reqwest::RequestBuilder,
        cookie: &str,
    ) -> reqwest::RequestBuilder {
        if cookie.is_empty() {
            request
        } else {
            request.header("cookie", cookie)
        }
    }

    /// A `method` request to `path` that carries the API token.
    fn api_request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, self.url(path))
            .bearer_auth(API_TOKEN)
    }

    /// `GET path` with the API token.
    pub async fn api_get(&self, path: &str) -> anyhow::Result<reqwest::Response> {
        Ok(self.api_request(reqwest::Method::GET, path).send().await?)
    }

    /// `POST path` with the API token and no body (a chat session, a fresh link).
    pub async fn api_post_empty(&self, path: &str) -> anyhow::Result<reqwest::Response> {
        Ok(self.api_request(reqwest::Method::POST, path).send().await?)
    }

    /// `GET path` with the API token, read as JSON.
    pub async fn api_json(&self, path: &str) -> anyhow::Result<serde_json::Value> {
        Ok(self.api_get(path).await?.json().await?)
    }

    /// `POST path` with the API token and `body` as JSON.
    pub async fn api_post(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> anyhow::Result<reqwest::Response> {
        Ok(self
            .api_request(reqwest::Method::POST, path)
            .json(body)
            .send()
            .await?)
    }

    /// Starts a run through the API (`body` names the workflow and may give its input) and
    /// answers its id and the run as read once it waits for a person.
    pub async fn start_waiting_run(
        &self,
        body: &serde_json::Value,
    ) -> anyhow::Result<(String, serde_json::Value)> {
        let started: serde_json::Value = self.api_post("/api/runs", body).await?.json().await?;
        let id = started["id"].as_str().context("a run id")?.to_owned();
        let waiting = self.wait_for_status(&id, "waiting").await?;
        Ok((id, waiting))
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

    /// Logs in as the admin and answers the HTML of `path` as the admin sees it.
    pub async fn admin_html(&self, path: &str) -> anyhow::Result<String> {
        let cookie = self.admin_cookie().await?;
        Ok(self.get_with(path, &cookie).await?.text().await?)
    }

    /// Reads run `id` through the API until its status is `status`, and answers it; fails after
    /// a minute with the run as last read.
    pub async fn wait_for_status(
        &self,
        id: &str,
        status: &str,
    ) -> anyhow::Result<serde_json::Value> {
        self.wait_until(&format!("/api/runs/{id}"), |run| run["status"] == status)
            .await
    }

    /// Reads `path` through the API until `done` holds for what it answers (the runner works
    /// in the background), and answers that; fails after a minute with the answer as last read.
    pub async fn wait_until(
        &self,
        path: &str,
        done: impl Fn(&serde_json::Value) -> bool,
    ) -> anyhow::Result<serde_json::Value> {
        let started = std::time::Instant::now();
        loop {
            let answer = self.api_json(path).await?;
            if done(&answer) {
                return Ok(answer);
            }
            if started.elapsed() > Duration::from_secs(60) {
                bail!("{path} never got there: {answer:#}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
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

/// A run of `workflow` with an empty state in `status`, written straight to the store (no runner
/// takes it up): the run a page made by hand hangs from.
pub async fn bare_run(store: &Store, workflow: &str, status: RunStatus) -> anyhow::Result<Run> {
    Ok(store
        .create_run(&NewRun {
            workflow: workflow.into(),
            state: serde_json::json!({}),
            status,
        })
        .await?)
}

/// The value of `response`'s header `name`, if it has one that is text.
pub fn header<'a>(response: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    response
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
}

/// The text from just after `marker` to the next `"`, empty if `marker` is absent: an
/// attribute's value found by what stands before it (`href="/components/download/`).
pub fn quoted_after(html: &str, marker: &str) -> String {
    html.split(marker)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_default()
        .to_owned()
}

/// The CSRF token a page's form carries in its hidden `_csrf` field, empty if it has none.
pub fn csrf_of(html: &str) -> String {
    quoted_after(html, "name=\"_csrf\" value=\"")
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

/// Whether PostgreSQL tests are skipped on purpose: no `TEST_DATABASE_URL` and
/// `TESSERA_SKIP_POSTGRES=1`, the one case where [`FreshPostgres::create`] answers `None`.
pub fn postgres_is_skipped() -> bool {
    let skipped = std::env::var_os("TEST_DATABASE_URL").is_none()
        && std::env::var("TESSERA_SKIP_POSTGRES").as_deref() == Ok("1");
    if skipped {
        eprintln!("PostgreSQL test skipped: TESSERA_SKIP_POSTGRES=1");
    }
    skipped
}

/// Runs each named test (an `async fn(Backend) -> anyhow::Result<()>` in the calling module,
/// which spawns its app with `TestApp::builder().backend(backend)…spawn()`) once on SQLite and
/// once on PostgreSQL. The PostgreSQL run is skipped here, before the test starts, where
/// [`postgres_is_skipped`] says so: the tests themselves never see a skipped backend.
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
                    if $crate::helpers::postgres_is_skipped() {
                        return Ok(());
                    }
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
