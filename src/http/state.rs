//! What every handler can reach: configuration, the store, the site options, the API token hash.

use std::sync::{Arc, OnceLock};

use leptos::config::LeptosOptions;

use crate::{
    agent::AllowedModels, chat::Orchestrator, telemetry::metrics::Metrics, workflow::Runner,
};

use crate::{
    auth::{
        admin::AdminPasswordHash,
        person::{SignInMailer, SignInThrottle},
        throttle::{LoginLimits, LoginThrottle},
        ApiTokenHash,
    },
    config::Config,
    demo::access::DemoApiKey,
    pages::{
        component_set::{KnownComponents, UnknownComponent},
        csrf::CsrfKey,
    },
    store::Store,
};

/// Shared application state, cheap to clone.
#[derive(Clone, Debug)]
pub struct AppState(Arc<Inner>);

/// The fields behind [`AppState`].
#[derive(Debug)]
pub struct Inner {
    /// The configuration the server started with.
    pub config: Config,
    /// The storage facade.
    pub store: Store,
    /// Where the compiled browser assets are served from.
    pub site: LeptosOptions,
    /// The API token requests are checked against.
    pub api_token: ApiTokenHash,
    /// The key page forms' CSRF tokens are derived from.
    pub csrf: CsrfKey,
    /// The admin password's hash.
    pub admin: AdminPasswordHash,
    /// The key the server's own calls change the demo site with; `Some` exactly when the demo
    /// is on (`TESSERA_DEMO`), so it also says whether `/demo-api` is served.
    pub demo_key: Option<DemoApiKey>,
    /// Failed logins per client and overall, and the password hashes running at once.
    pub login_throttle: LoginThrottle,
    /// Sign-in requests per client and per address.
    pub sign_in_throttle: SignInThrottle,
    /// Sends people their sign-in links.
    pub sign_in_mailer: SignInMailer,
    /// The models pages are generated with, set once at startup ([`AppState::set_models`]).
    models: OnceLock<AllowedModels>,
    /// The workflow runner, set once at startup ([`AppState::set_runner`]).
    runner: OnceLock<RunnerSlot>,
    /// The chat orchestrator, set once at startup ([`AppState::set_chat`]): one per process, so
    /// the page, the JSON API and the event streams share approvals, cancellation and listeners.
    chat: OnceLock<Orchestrator>,
    /// What this process measured of its requests, for `/metrics`.
    metrics: Metrics,
    /// Cancelled when the server shuts down: ends what would outlive requests (MCP sessions).
    shutdown: tokio_util::sync::CancellationToken,
}

impl AppState {
    /// Bundles the pieces built at startup.
    #[must_use]
    pub fn new(
        config: Config,
        store: Store,
        api_token: ApiTokenHash,
        csrf: CsrfKey,
        admin: AdminPasswordHash,
    ) -> Self {
        let site = LeptosOptions::builder()
            .output_name("tessera")
            .site_root(
                config
                    .site_root
                    .clone()
                    .unwrap_or_else(|| super::site::DEFAULT_SITE_ROOT.to_owned()),
            )
            .site_pkg_dir("pkg")
            .build();
        // Deriving never fails (HMAC takes any key); if it did, the demo site stays closed.
        let demo_key = config.demo.then(|| DemoApiKey::derive(&csrf)).flatten();
        let sign_in_mailer = SignInMailer::new(store.clone(), Arc::new(config.clone()));
        Self(Arc::new(Inner {
            demo_key,
            login_throttle: LoginThrottle::new(LoginLimits::default()),
            sign_in_throttle: SignInThrottle::default(),
            sign_in_mailer,
            config,
            store,
            site,
            api_token,
            csrf,
            admin,
            models: OnceLock::new(),
            runner: OnceLock::new(),
            chat: OnceLock::new(),
            metrics: Metrics::default(),
            shutdown: tokio_util::sync::CancellationToken::new(),
        }))
    }

    /// The models pages are generated with: the configured one and the heuristic (only the
    /// heuristic until [`AppState::set_models`] was called).
    #[must_use]
    pub fn models(&self) -> &AllowedModels {
        static HEURISTIC_ONLY: OnceLock<AllowedModels> = OnceLock::new();
        self.0
            .models
            .get()
            .unwrap_or_else(|| HEURISTIC_ONLY.get_or_init(AllowedModels::heuristic_only))
    }

    /// What this process measured of its requests.
    #[must_use]
    pub fn metrics(&self) -> &Metrics {
        &self.0.metrics
    }

    /// Cancelled when the server shuts down (`Application::run_until`).
    #[must_use]
    pub fn shutdown(&self) -> &tokio_util::sync::CancellationToken {
        &self.0.shutdown
    }

    /// The workflow runner (absent only in a state built without `startup`).
    #[must_use]
    pub fn runner(&self) -> Option<&Runner> {
        self.0.runner.get().map(|slot| &slot.0)
    }

    /// What generated pages are served with: the runner's page catalog (defaults plus the
    /// components its workflows registered), or the defaults without a runner.
    #[must_use]
    pub fn page_catalog(&self) -> tessera_app::catalog::Catalog {
        self.runner()
            .map_or_else(tessera_app::catalog::Catalog::defaults, |runner| {
                runner.page_catalog().clone()
            })
    }

    /// What `page` is rendered with: the components it recorded, looked up among the specs this
    /// server knows (the runner's, or the defaults without a runner); a page stored before
    /// pages recorded them gets [`AppState::page_catalog`].
    ///
    /// # Errors
    /// [`UnknownComponent`] when the page recorded a spec this server no longer has.
    pub fn catalog_for_page(
        &self,
        page: &crate::pages::page::Page,
    ) -> Result<tessera_app::catalog::Catalog, UnknownComponent> {
        match self.runner() {
            Some(runner) => runner.catalog_for_page(page),
            None => match &page.component_set {
                Some(set) => KnownComponents::with([]).catalog_for(set),
                None => Ok(self.page_catalog()),
            },
        }
    }

    /// What a `ui` step that names no components offers the model: the defaults and the
    /// runner's components (the gallery and `GET /api/components` show exactly these).
    #[must_use]
    pub fn model_catalog(&self) -> tessera_app::catalog::Catalog {
        let runner_components = self.runner().map(Runner::components).unwrap_or_default();
        tessera_app::catalog::Catalog::resolve(&[], runner_components)
    }

    /// Sets the runner, once, at startup.
    ///
    /// # Errors
    /// Gives `runner` back when one was already set.
    pub fn set_runner(&self, runner: Runner) -> Result<(), Runner> {
        self.0.runner.set(RunnerSlot(runner)).map_err(|slot| slot.0)
    }

    /// The chat orchestrator (absent when the chat could not be set up, or in a state built
    /// without `startup`).
    #[must_use]
    pub fn chat(&self) -> Option<&Orchestrator> {
        self.0.chat.get()
    }

    /// Sets the chat orchestrator, once, at startup.
    ///
    /// # Errors
    /// Gives `orchestrator` back when one was already set.
    pub fn set_chat(&self, orchestrator: Orchestrator) -> Result<(), Orchestrator> {
        self.0.chat.set(orchestrator)
    }

    /// Sets the models, once, at startup.
    ///
    /// # Errors
    /// Gives `models` back when they were already set.
    pub fn set_models(&self, models: AllowedModels) -> Result<(), AllowedModels> {
        self.0.models.set(models)
    }
}

impl std::ops::Deref for AppState {
    type Target = Inner;

    fn deref(&self) -> &Inner {
        &self.0
    }
}

/// The runner, printable as a placeholder so the state stays `Debug`.
struct RunnerSlot(Runner);

impl std::fmt::Debug for RunnerSlot {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Runner")
    }
}
