//! The runner: claims runs, executes their steps under a lease, and records every outcome.
//!
//! A runner is a handful of worker tasks next to the HTTP server, stopped through a
//! [`CancellationToken`]. Each worker claims one due run at a time, holds it with a lease it
//! renews while a step runs, and runs the run step by step until it waits, finishes, fails,
//! backs off for a retry, or the lease is lost. Nothing is kept in memory between steps that
//! the database does not also have: a runner may die at any point and another one carries on
//! from the last committed step (the step under way runs again; a finished one never does).
//!
//! Idle workers sleep until the next due time the database reports, at most `poll_interval`,
//! and wake early on [`Runner::wake`] (same process) or, on PostgreSQL, on the store's
//! ready-run wake-ups from any process ([`Store::listen_runs_ready`]).
//! [`Runner::run_until_idle`] takes runs to quiescence in the calling task, for tests and
//! one-shot tools.
//!
//! One job per file: `config.rs` (settings, the builder, the tally), `worker.rs` (the idle loop,
//! one claim at a time, wake-ups), `claimed.rs` (a claimed run's steps under its lease),
//! `lease.rs` (renewing the lease beside a step), `input.rs` (what a step is handed).

mod claimed;
mod config;
mod input;
mod lease;
mod worker;

use std::sync::Arc;

use serde_json::Value;
use tessera_app::catalog::{Catalog, ComponentSpec};
use tokio::{sync::Notify, task::JoinSet};
use tokio_util::sync::CancellationToken;

pub use config::{DrainReport, RunnerBuilder, RunnerConfig};

use worker::sleep_until;

use super::{
    builder::Services,
    registry::Registry,
    run::{Run, RunId, RunStatus},
    step::Unanswered,
    WorkflowError,
};
use crate::util::clock::{system_clock, Clock};
use crate::{
    pages::{
        component_set::KnownComponents,
        page::{PageId, SubmitOutcome},
    },
    store::Store,
};

/// Runs registered workflows; cheap to clone (all clones share one runner).
#[derive(Clone)]
pub struct Runner {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Runner")
            .field("owner", &self.inner.config.owner)
            .field("workflows", &self.inner.workflows)
            .field("engine", &self.inner.store.engine())
            .finish_non_exhaustive()
    }
}

struct Inner {
    store: Store,
    registry: Arc<Registry>,
    workflows: Vec<String>,
    config: RunnerConfig,
    services: Arc<Services>,
    wake: Notify,
    stats: std::sync::Mutex<DrainReport>,
    clock: Clock,
}

impl Runner {
    /// A runner over `store` for the workflows in `registry`.
    pub fn builder(store: Store, registry: Arc<Registry>) -> RunnerBuilder {
        RunnerBuilder {
            store,
            registry,
            config: RunnerConfig::default(),
            services: Services::default(),
            clock: system_clock(),
        }
    }

    /// The time by its clock, unix ms.
    #[must_use]
    pub fn now_ms(&self) -> i64 {
        (self.inner.clock)()
    }

    /// The registry it runs.
    #[must_use]
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The store its runs live in.
    #[must_use]
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// Its runner-level components (offered to `ui` steps that name none).
    #[must_use]
    pub fn components(&self) -> &[ComponentSpec] {
        &self.inner.services.components
    }

    /// The catalog pages stored before pages recorded their components are served with (and
    /// the admin preview): the defaults, the runner's components, then every component a
    /// `ui_with` step names. One name, one component: a later spec of the same name replaces an
    /// earlier one here. Newer pages render with [`Runner::known_components`].
    #[must_use]
    pub fn page_catalog(&self) -> &Catalog {
        &self.inner.services.page_catalog
    }

    /// Every component spec its pages may have been generated with: the defaults, the runner's
    /// and every `ui_with` step's, by content. A page renders with the specs it recorded
    /// (`pages::component_set`), so one step's override never reaches another step's pages.
    #[must_use]
    pub fn known_components(&self) -> &KnownComponents {
        &self.inner.services.known_components
    }

    /// What `page` is rendered with: the components it recorded, looked up among
    /// [`Runner::known_components`]; a page stored before pages recorded them gets
    /// [`Runner::page_catalog`].
    ///
    /// # Errors
    /// [`UnknownComponent`] when the page recorded a spec this server no longer has.
    pub fn catalog_for_page(
        &self,
        page: &crate::pages::page::Page,
    ) -> Result<Catalog, crate::pages::component_set::UnknownComponent> {
        match &page.component_set {
            Some(set) => self.known_components().catalog_for(set),
            None => Ok(self.page_catalog().clone()),
        }
    }

    /// The links this process's `ui` steps minted, kept in memory for the steps that send them
    /// and for `POST /api/asks`, which answers with its link.
    #[must_use]
    pub fn links(&self) -> &super::links::LinkHandoff {
        &self.inner.services.links
    }

    /// Its configuration.
    #[must_use]
    pub fn config(&self) -> &RunnerConfig {
        &self.inner.config
    }

    /// What this runner did since it was built (every worker, drain and `run_once`).
    #[must_use]
    pub fn stats(&self) -> DrainReport {
        *self
            .inner
            .stats
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn record(&self, report: &DrainReport) {
        self.inner
            .stats
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .add(report);
    }

    /// Wakes one idle worker of this process now (call it after making a run ready, for example
    /// after a page submission, so the run resumes without waiting for the next poll).
    ///
    /// One, not all: one ready run needs one worker, and workers that all wake race for the same
    /// claim — on SQLite each loser then sleeps in the busy handler while holding up the winner
    /// (`benches/submit.rs` measured 41 ms median POST-to-resumed with four workers woken).
    /// A busy worker looks for the next ready run as soon as it finishes one.
    pub fn wake(&self) {
        self.inner.wake.notify_one();
    }

    /// Starts a run of a registered workflow and wakes the workers.
    ///
    /// # Errors
    /// As [`Registry::start_run`].
    pub async fn start_run(&self, workflow: &str, input: Value) -> Result<Run, WorkflowError> {
        let run = self
            .inner
            .registry
            .start_run(&self.inner.store, workflow, input)
            .await?;
        self.wake();
        Ok(run)
    }

    /// Cancels a run; a worker running it stops at its next lease check and commits nothing.
    ///
    /// A run waiting on a page whose next step was added with `step_with_answer_in_run` is
    /// cancelled the way the page's Cancel button would: the page is answered with the Cancel
    /// marker, the step tells whoever waits for the answer, and the run then ends cancelled.
    /// Should the page no longer take an answer (expired, or answered a moment earlier), the
    /// run is cancelled outright.
    ///
    /// # Errors
    /// As [`Store::cancel_run`].
    pub async fn cancel_run(&self, run_id: RunId) -> Result<Run, WorkflowError> {
        let store = &self.inner.store;
        if let Some(page_id) = self.page_whose_answer_is_heard(run_id).await? {
            let outcome = store
                .answer_page(
                    PageId(page_id),
                    &Unanswered::Cancelled.marker(),
                    self.now_ms(),
                )
                .await?;
            if matches!(outcome, SubmitOutcome::Submitted(_)) {
                tracing::info!(run.id = %run_id, "run cancelled through its page; the next step hears of it");
                self.wake();
                return Ok(store.run(run_id).await?);
            }
        }
        let run = store.cancel_run(run_id, self.now_ms()).await?;
        tracing::info!(run.id = %run_id, "run cancelled");
        Ok(run)
    }

    /// The page run `run_id` waits on, when the step after the wait hears unanswered waits.
    async fn page_whose_answer_is_heard(
        &self,
        run_id: RunId,
    ) -> Result<Option<uuid::Uuid>, WorkflowError> {
        let run = self.inner.store.run(run_id).await?;
        if run.status != RunStatus::Waiting {
            return Ok(None);
        }
        let hears = self
            .inner
            .registry
            .get(&run.workflow)
            .is_some_and(|definition| {
                usize::try_from(run.cursor)
                    .ok()
                    .and_then(|index| definition.steps.get(index))
                    // A step that carries the run on would route an admin's cancel as an answer.
                    .is_some_and(|step| step.takes_unanswered && !step.continues_unanswered)
            });
        Ok(run.waiting.and_then(|wait| wait.page_id).filter(|_| hears))
    }

    /// Starts the workers (and the task that hears other processes' ready runs) until `shutdown` is cancelled.
    /// A worker in the middle of a step gives its run back (ready at once) when it stops.
    ///
    /// The returned task owns the workers: aborting it aborts them all.
    pub fn spawn(&self, shutdown: CancellationToken) -> tokio::task::JoinHandle<()> {
        let runner = self.clone();
        tokio::spawn(async move {
            let mut tasks = JoinSet::new();
            for worker in 0..runner.inner.config.workers.max(1) {
                tasks.spawn(runner.clone().run_worker(worker, shutdown.clone()));
            }
            tasks.spawn(runner.clone().wake_on_ready_runs(shutdown.clone()));
            while let Some(joined) = tasks.join_next().await {
                if let Err(error) = joined {
                    if error.is_panic() {
                        tracing::error!(error = %error, "a runner task panicked");
                    }
                }
            }
        })
    }

    /// Drives every run of the registered workflows until none is ready or running: waits out
    /// backoffs and expired leases, applies due wait timeouts, and returns. Runs waiting for a
    /// person are left waiting.
    ///
    /// # Errors
    /// [`WorkflowError::Store`] when the database fails.
    pub async fn run_until_idle(&self) -> Result<DrainReport, WorkflowError> {
        let inner = &self.inner;
        let owner = format!("{}/drain", inner.config.owner);
        let never = CancellationToken::new();
        let mut report = DrainReport::default();
        loop {
            let now = self.now_ms();
            inner.store.expire_waits(now).await?;
            let claimed = inner
                .store
                .claim_run(&owner, &inner.workflows, inner.config.lease, now)
                .await?;
            if let Some(claimed) = claimed {
                let mut round = DrainReport {
                    runs_claimed: 1,
                    ..DrainReport::default()
                };
                let driven = self.run_claimed(claimed, &never, &mut round).await;
                self.record(&round);
                report.add(&round);
                driven?;
                continue;
            }
            let due = inner.store.next_due(&inner.workflows).await?;
            match due.claimable_at_ms {
                None => return Ok(report),
                Some(at) => {
                    tokio::time::sleep(sleep_until(at, self.now_ms(), inner.config.lease)).await;
                }
            }
        }
    }

    /// Applies due wait timeouts, then claims one due run and drives it until it stops
    /// (waits, finishes, fails, backs off or loses its lease). `false` when nothing was due.
    ///
    /// # Errors
    /// [`WorkflowError::Store`] when the database fails.
    pub async fn run_once(&self) -> Result<bool, WorkflowError> {
        let owner = format!("{}/once", self.inner.config.owner);
        let never = CancellationToken::new();
        self.claim_and_run_next(&owner, true, &never, &mut DrainReport::default())
            .await
    }
}
