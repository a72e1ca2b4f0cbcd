//! A runner's settings, its builder, and the tally of what it did.

use std::{sync::Arc, time::Duration};

use tessera_app::catalog::{Catalog, ComponentSpec};
use tokio::sync::Notify;

use super::{Inner, Runner};
use crate::{
    llm::ChatModel,
    pages::component_set::KnownComponents,
    store::Store,
    util::clock::Clock,
    workflow::{builder::Services, page::PageFactory, registry::Registry},
};

/// How a runner claims and holds runs.
#[derive(Clone, Debug)]
pub struct RunnerConfig {
    /// This runner's name in leases (each worker appends `/N`); unique per process.
    pub owner: String,
    /// Worker tasks, each driving one run at a time.
    pub workers: usize,
    /// How long a claim holds without a heartbeat; a dead runner's runs wait this long.
    pub lease: Duration,
    /// How often a running step renews its lease (well under half the `lease`: a renewal that
    /// has not answered half a lease before expiry counts as lost).
    pub heartbeat: Duration,
    /// The longest an idle worker sleeps before looking again (the fallback when no wake-up
    /// arrives).
    pub poll_interval: Duration,
}

impl Default for RunnerConfig {
    fn default() -> Self {
        Self {
            owner: format!(
                "runner-{}-{}",
                std::process::id(),
                &uuid::Uuid::new_v4().simple().to_string()[..8]
            ),
            workers: 4,
            lease: Duration::from_secs(30),
            heartbeat: Duration::from_secs(10),
            poll_interval: Duration::from_secs(1),
        }
    }
}

pub use crate::telemetry::metrics::DrainReport;

/// Builds a [`Runner`]; see [`Runner::builder`].
#[must_use = "a runner builder does nothing until built"]
pub struct RunnerBuilder {
    pub(super) store: Store,
    pub(super) registry: Arc<Registry>,
    pub(super) config: RunnerConfig,
    pub(super) services: Services,
    pub(super) clock: Clock,
}

impl RunnerBuilder {
    /// Sets how the runner claims and holds runs.
    pub fn config(mut self, config: RunnerConfig) -> Self {
        self.config = config;
        self
    }

    /// Runner-level components: used by `ui` steps that name none (before the default set).
    pub fn components(mut self, components: Vec<ComponentSpec>) -> Self {
        self.services.components = components;
        self
    }

    /// The model `prompt` steps call, and its spec (`provider:model`), which `ui` steps
    /// without their own pass to the page factory.
    pub fn model(mut self, spec: impl Into<String>, model: Arc<dyn ChatModel>) -> Self {
        self.services.model_spec = Some(spec.into());
        self.services.model = Some(model);
        self
    }

    /// The clock its leases, deadlines and timestamps read (the machine's by default); a test
    /// moves a clock of its own instead of sleeping until a lease runs out.
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// What makes the pages of `ui` steps.
    pub fn page_factory(mut self, factory: Arc<dyn PageFactory>) -> Self {
        self.services.page_factory = Some(factory);
        self
    }

    /// The runner.
    #[must_use]
    pub fn build(mut self) -> Runner {
        let mut page_catalog = Catalog::defaults();
        for spec in self
            .services
            .components
            .iter()
            .chain(self.registry.step_components())
        {
            page_catalog.register(spec.clone());
        }
        self.services.page_catalog = page_catalog;
        self.services.known_components = KnownComponents::with(
            self.services
                .components
                .iter()
                .chain(self.registry.step_components()),
        );
        Runner {
            inner: Arc::new(Inner {
                workflows: self.registry.names(),
                store: self.store,
                registry: self.registry,
                config: self.config,
                services: Arc::new(self.services),
                wake: Notify::new(),
                stats: std::sync::Mutex::new(DrainReport::default()),
                clock: self.clock,
            }),
        }
    }
}
