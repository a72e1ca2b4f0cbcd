//! Building and running the application: the only place that knows every piece.

use std::{net::SocketAddr, path::Path, sync::Arc};

use anyhow::Context as _;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

mod page_factory;

pub use page_factory::GeneratedPageFactory;

use crate::{
    agent::AllowedModels,
    asks::{ask_workflow, NotifierFor},
    auth::{admin::ensure_admin_password, ensure_api_token},
    chat::{setup::sites_orchestrator, sites::load_sites, Manifest},
    config::{Config, DatabaseUrl, Secret},
    demo::{
        access::{DemoApiKey, DEMO_KEY_HEADER},
        drill::{drill_workflow, DrillLog, DrillPageFactory},
    },
    http::{router, AppState},
    notify::{Notifier, Notify},
    pages::{csrf::ensure_csrf_key, timers::TimerWorker},
    store::{sqlite_file::DatabaseLock, Store},
    workflow::{
        yaml::{load_dir, HostAllowlist, YamlServices, YamlWorkflow},
        PageFactory, Registry, Runner, RunnerConfig,
    },
};

/// Where the demo site is served; YAML workflows calling it need the demo on.
const DEMO_SITE_PATH: &str = "/demo-api";

/// A built application, bound to its port and ready to serve.
pub struct Application {
    listener: TcpListener,
    state: AppState,
    /// Set when this start generated the API token; shown once by the caller.
    pub generated_api_token: Option<Secret>,
    /// Set when this start generated the admin password; shown once by the caller.
    pub generated_admin_password: Option<Secret>,
    /// This process's share of the SQLite file's lock, so `tessera restore` refuses to replace
    /// the database under it (`store::sqlite_file`); `None` on PostgreSQL.
    _database_lock: Option<DatabaseLock>,
}

/// What the application's runner runs and how; `main` uses the default (the demo workflows,
/// [`RunnerConfig::default`]).
#[derive(Debug, Default)]
pub struct Options {
    /// The workflows the runner runs; the demo workflows when `None` (tests and benches bring
    /// their own).
    pub workflows: Option<Registry>,
    /// How the runner claims runs and how long its idle workers sleep; from the config
    /// (`TESSERA_RUNNER_LEASE_SECS`) when `None`.
    pub runner: Option<RunnerConfig>,
    /// Runner-level components: offered to every `ui` step that names none, and known to the
    /// page server (with every component a `ui_with` step names) when a link is opened.
    pub components: Vec<tessera_app::catalog::ComponentSpec>,
    /// Declarative workflows, already checked (`main` loads them first, to exit with code 2 on
    /// a bad file); loaded from `TESSERA_WORKFLOWS_DIR` when `None`. Registered beside the
    /// others either way.
    pub yaml_workflows: Option<Vec<YamlWorkflow>>,
    /// The sites the chat drives, already checked (`main` loads them first, to exit with code 2
    /// on a bad file); loaded from `TESSERA_SITES` when `None`. Empty drives the demo site.
    pub sites: Option<Vec<Manifest>>,
    /// The models pages are generated with; from the config (`TESSERA_MODEL` and the provider's
    /// environment) when `None` (tests bring a model pointed at a local server).
    pub models: Option<AllowedModels>,
    /// A listener already bound (tests bind one first, so the app's origin is known before it
    /// starts and no other process can take the port in between); `TESSERA_ADDR` is bound when
    /// `None`.
    pub listener: Option<TcpListener>,
}

impl Application {
    /// Connects and migrates the store, settles the API token and binds the listener.
    ///
    /// # Errors
    /// When the database cannot be opened or the address cannot be bound.
    pub async fn build(config: Config) -> anyhow::Result<Self> {
        Self::build_with(config, Options::default()).await
    }

    /// [`Application::build`] with other workflows or runner settings.
    ///
    /// # Errors
    /// As [`Application::build`].
    pub async fn build_with(mut config: Config, mut options: Options) -> anyhow::Result<Self> {
        let database_lock = match &config.database_url {
            DatabaseUrl::Sqlite(path) if path != ":memory:" => Some(
                DatabaseLock::shared(Path::new(path))
                    .context("locking the database (DATABASE_URL)")?,
            ),
            _ => None,
        };
        let store = Store::connect(&config.database_url)
            .await
            .context("opening the database (DATABASE_URL)")?;
        let api_token = ensure_api_token(&store, config.api_token.as_ref())
            .await
            .context("settling the API token")?;
        let csrf = ensure_csrf_key(&store)
            .await
            .context("settling the CSRF key")?;
        let admin = ensure_admin_password(&store, config.admin_password.as_ref())
            .await
            .context("settling the admin password")?;
        let models = match options.models.take() {
            Some(models) => models,
            None => AllowedModels::from_spec(&config.model, &config.model_settings)
                .context("configuring the model (TESSERA_MODEL)")?,
        };
        let listener = match options.listener.take() {
            Some(listener) => listener,
            None => TcpListener::bind(config.addr)
                .await
                .with_context(|| format!("binding TESSERA_ADDR {}", config.addr))?,
        };
        if config.addr.port() == 0 {
            // Port 0 (tests) means "any free port": links and the chat's calls to the demo site
            // must use the port actually bound.
            config.public_url = format!(
                "http://{}",
                listener.local_addr().context("reading the bound address")?
            );
        }
        let sites = match options.sites.take() {
            Some(sites) => sites,
            None => load_sites(&config.sites, &|name| std::env::var_os(name).is_some())?,
        };
        let state = AppState::new(config, store, api_token.hash, csrf, admin.hash);
        let runner = build_runner(&state, &models, options)?;
        if state.set_models(models).is_err() {
            anyhow::bail!("the models were configured twice");
        }
        if state.set_runner(runner).is_err() {
            anyhow::bail!("the runner was configured twice");
        }
        set_up_chat(&state, sites)?;
        Ok(Self {
            listener,
            state,
            generated_api_token: api_token.newly_generated,
            generated_admin_password: admin.newly_generated,
            _database_lock: database_lock,
        })
    }

    /// The address actually bound (useful with port 0).
    ///
    /// # Errors
    /// When the OS cannot report it.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The shared state, for tests that want to reach the store directly.
    #[must_use]
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serves until `shutdown` is cancelled, then finishes in-flight requests and closes the store.
    ///
    /// # Errors
    /// When the server fails.
    pub async fn run_until(self, shutdown: CancellationToken) -> anyhow::Result<()> {
        let store = self.state.store.clone();
        let workers = self
            .state
            .runner()
            .map(|runner| runner.spawn(shutdown.clone()));
        // The chat's events and stops reach the other processes; calls a dead process left running
        // are reported as interrupted.
        let chat = match self.state.chat() {
            Some(chat) => Some(chat.spawn(&shutdown).await),
            None => None,
        };
        // Reminders and escalations fire in every process: each timer's change happens once.
        let timers = self.state.runner().is_some().then(|| {
            let config = &self.state.config;
            TimerWorker::new(
                store.clone(),
                config.public_url.clone(),
                notifier_for(config),
                config.timer_poll,
                config.runner_lease,
            )
            .spawn(shutdown.clone())
        });
        let sessions = self.state.shutdown().clone();
        // The connection's address is what the login throttle counts a client by.
        let app = router(self.state).into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(self.listener, app)
            .with_graceful_shutdown(async move {
                shutdown.cancelled().await;
                // Long-lived streams (MCP sessions) end, so the shutdown does not wait on them.
                sessions.cancel();
            })
            .await
            .context("serving HTTP")?;
        if let Some(workers) = workers {
            // The runner stops at the same signal; a step in flight is released, not lost.
            let _ = workers.await;
        }
        if let Some(chat) = chat {
            let _ = chat.await;
        }
        if let Some(timers) = timers {
            let _ = timers.await;
        }
        store.close().await;
        Ok(())
    }
}

/// The runner: the given workflows (else the demo ones and asks, notifying whatever channels are
/// configured), pages generated with the configured model; the crash drill when configured.
fn build_runner(
    state: &AppState,
    models: &AllowedModels,
    options: Options,
) -> anyhow::Result<Runner> {
    let (config, store) = (&state.config, &state.store);
    let mut registry = match options.workflows {
        Some(registry) => registry,
        None => demo_registry(config, store)?,
    };
    let yaml_workflows = match options.yaml_workflows {
        Some(workflows) => workflows,
        None => match &config.workflows_dir {
            Some(dir) => load_dir(dir)?,
            None => Vec::new(),
        },
    };
    register_yaml(
        config,
        state.demo_key.as_ref(),
        &mut registry,
        &yaml_workflows,
    )?;
    let mut factory: Arc<dyn PageFactory> = Arc::new(
        GeneratedPageFactory::new(
            store.clone(),
            Arc::new(models.clone()),
            config.public_url.clone(),
        )
        .with_assignee_allowlist(config.notify.ask_recipients.clone())
        .with_groups(config.groups.clone()),
    );
    if let Some(path) = &config.drill_log {
        // Crash drills only (TESSERA_DRILL_LOG): never registered otherwise.
        let log = DrillLog::new(path.clone());
        registry = registry
            .with(drill_workflow(&log).context("defining the crash drill")?)
            .context("registering the crash drill")?;
        factory = Arc::new(DrillPageFactory::new(factory, log));
        tracing::warn!(drill.log = %path.display(), "crash drill enabled");
    }
    let model = models
        .choose(None)
        .map_err(|error| anyhow::anyhow!("{error}"))?;
    let runner_config = options.runner.unwrap_or_else(|| RunnerConfig {
        lease: config.runner_lease,
        // Three chances to renew before the lease runs out.
        heartbeat: config.runner_lease / 3,
        ..RunnerConfig::default()
    });
    Ok(Runner::builder(store.clone(), Arc::new(registry))
        .config(runner_config)
        .components(options.components)
        .model(models.configured_spec(), model)
        .page_factory(factory)
        .build())
}

/// Compiles the checked YAML workflows with what their steps call and registers them; their
/// `http` steps to this server carry the demo key. With the demo off (no key), a workflow that
/// calls the demo site would only fail at that step, so it is left out, with a warning.
fn register_yaml(
    config: &Config,
    demo_key: Option<&DemoApiKey>,
    registry: &mut Registry,
    workflows: &[YamlWorkflow],
) -> anyhow::Result<()> {
    if workflows.is_empty() {
        return Ok(());
    }
    let mut own_headers = reqwest::header::HeaderMap::new();
    if let Some(key) = demo_key {
        own_headers.insert(DEMO_KEY_HEADER, key.header_value());
    }
    let hosts = HostAllowlist::parse(&config.workflow_http_hosts, &config.public_url)
        .map_err(|reason| anyhow::anyhow!("invalid TESSERA_WORKFLOW_HTTP_HOSTS: {reason}"))?;
    let notifier = Notifier::from_config(&config.notify).context("configuring notifications")?;
    let services = YamlServices {
        client: reqwest::Client::builder()
            .redirect(crate::workflow::yaml::redirect_policy())
            .build()
            .context("building the HTTP client of YAML workflows")?,
        hosts,
        public_url: config.public_url.clone(),
        notifier: (!notifier.channels().is_empty()).then(|| Arc::new(notifier) as Arc<dyn Notify>),
        assignee_mail: Some(notifier_for(config)),
        own_headers,
    };
    for workflow in workflows {
        workflow
            .check_people(&config.notify.ask_recipients, &config.groups)
            .map_err(|error| anyhow::anyhow!("{error}"))?;
        if demo_key.is_none() && workflow.calls_own_path(DEMO_SITE_PATH) {
            tracing::warn!(workflow.name = %workflow.name, workflow.file = %workflow.file, "YAML workflow not registered: it calls the demo site, which is off (TESSERA_DEMO=false)");
            continue;
        }
        registry
            .register(workflow.compile(&services)?)
            .with_context(|| format!("registering the workflow of {}", workflow.file))?;
        tracing::info!(workflow.name = %workflow.name, workflow.file = %workflow.file, workflow.digest = %workflow.digest, "YAML workflow loaded");
    }
    Ok(())
}

/// The demo workflows and the built-in asks workflow.
fn demo_registry(config: &Config, store: &Store) -> anyhow::Result<Registry> {
    let notifier = Notifier::from_config(&config.notify).context("configuring notifications")?;
    let notifier: Option<Arc<dyn Notify>> =
        (!notifier.channels().is_empty()).then(|| Arc::new(notifier) as Arc<dyn Notify>);
    // One signed POST per attempt: the asks workflow's Callback step retries durably. A
    // callback URL is the API caller's: public addresses only, unless TESSERA_OUTBOUND_ALLOW.
    let callbacks = config
        .notify
        .webhook_sender(crate::notify::SigningPurpose::Callback)
        .context("configuring asks callbacks")?
        .map(|sender| {
            sender
                .with_single_attempt()
                .checking(&config.outbound_allow)
        })
        .transpose()
        .context("configuring asks callbacks")?;
    crate::demo::workflows::registry(notifier.clone())
        .and_then(|registry| {
            registry.with(ask_workflow(
                store.clone(),
                notifier,
                notifier_for(config),
                callbacks,
            )?)
        })
        .context("defining the demo and asks workflows")
}

/// What reaches some recipients only through the server's channels: an ask's own recipients,
/// an assignee's own link.
fn notifier_for(config: &Config) -> NotifierFor {
    let channels = config.notify.clone();
    let outbound = config.outbound_allow.clone();
    Arc::new(move |recipients| {
        Ok(
            Arc::new(Notifier::for_recipients(&channels, recipients, &outbound)?)
                as Arc<dyn Notify>,
        )
    })
}

/// Builds the chat orchestrator once for the whole process: over the configured sites when there
/// are any (a failure stops the start: the operator asked for them), else over the demo site. A
/// demo chat that cannot be set up is logged and left off, so the rest of the app serves.
fn set_up_chat(state: &AppState, sites: Vec<Manifest>) -> anyhow::Result<()> {
    if !sites.is_empty() {
        let origin = url::Url::parse(&state.config.public_url)
            .context("TESSERA_PUBLIC_URL does not parse")?;
        let orchestrator = sites_orchestrator(state.store.clone(), sites, &origin, state.models())
            .context("setting up the chat over TESSERA_SITES")?;
        if state.set_chat(orchestrator).is_err() {
            anyhow::bail!("the chat was configured twice");
        }
        return Ok(());
    }
    let Some(demo_key) = &state.demo_key else {
        tracing::info!(
            "the chat drives the demo site, which is off (TESSERA_DEMO=false); the chat is off"
        );
        return Ok(());
    };
    let origin = match url::Url::parse(&state.config.public_url) {
        Ok(origin) => origin,
        Err(error) => {
            tracing::error!(error = %error, "TESSERA_PUBLIC_URL does not parse; the chat is off");
            return Ok(());
        }
    };
    match crate::demo::chat_site::demo_orchestrator(
        state.store.clone(),
        &origin,
        state.models(),
        demo_key,
    ) {
        Ok(orchestrator) => {
            if state.set_chat(orchestrator).is_err() {
                anyhow::bail!("the chat was configured twice");
            }
        }
        Err(error) => tracing::error!(error = %error, "the chat cannot be set up; the chat is off"),
    }
    Ok(())
}

/// Installs the SIGINT and SIGTERM handlers now and returns a future that resolves on either.
///
/// The handlers are installed before the application binds its port: a signal that arrives
/// during start-up must end the process gracefully, not by the default action, or a secret
/// generated on that start (its hash already stored) would never be shown.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut interrupt = listen(signal(SignalKind::interrupt()), "SIGINT");
        let mut terminate = listen(signal(SignalKind::terminate()), "SIGTERM");
        async move {
            tokio::select! {
                _ = recv(&mut interrupt) => {},
                _ = recv(&mut terminate) => {},
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(unix)]
fn listen(
    installed: std::io::Result<tokio::signal::unix::Signal>,
    name: &str,
) -> Option<tokio::signal::unix::Signal> {
    installed
        .inspect_err(
            |error| tracing::error!(error = %error, signal = name, "cannot listen for the signal"),
        )
        .ok()
}

/// Waits for the signal, or forever when its handler could not be installed.
#[cfg(unix)]
async fn recv(signal: &mut Option<tokio::signal::unix::Signal>) {
    match signal {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending::<()>().await,
    }
}
