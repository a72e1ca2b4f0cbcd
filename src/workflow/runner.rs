//! The runner: claims runs, executes their steps under a lease, and records every outcome.
//!
//! A runner is a handful of worker tasks next to the HTTP server, stopped through a
//! [`CancellationToken`]. Each worker claims one due run at a time, holds it with a lease it
//! renews while a step runs, and drives the run step by step until it waits, finishes, fails,
//! backs off for a retry, or the lease is lost. Nothing is kept in memory between steps that
//! the database does not also have: a runner may die at any point and another one carries on
//! from the last committed step (the step under way runs again; a finished one never does).
//!
//! Idle workers sleep until the next due time the database reports, at most `poll_interval`,
//! and wake early on [`Runner::wake`] (same process) or, on PostgreSQL, on a `NOTIFY` from any
//! process. [`Runner::run_until_idle`] drives runs to quiescence in the calling task, for tests
//! and one-shot tools.

use std::{sync::Arc, time::Duration};

use serde_json::Value;
use tessera_app::catalog::{Catalog, ComponentSpec};

use crate::pages::component_set::KnownComponents;
use tokio::{sync::Notify, task::JoinSet};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::{
    builder::{Goto, Services, StepContext, WorkflowDef},
    page::PageFactory,
    registry::Registry,
    run::{
        ClaimedRun, Lease, LeaseOutcome, NextRun, Run, RunId, RunStatus, StepCompletion, StepRef,
        TimeoutAction, WaitInfo,
    },
    step::{StepError, StepOutput, Unanswered},
    WorkflowError,
};
use crate::{
    llm::ChatModel,
    pages::page::{PageId, SubmitOutcome},
    store::{now_ms, runs::RUNS_READY_CHANNEL, Store, StoreError},
};

/// The shortest idle sleep, so a row another process is claiming right now does not spin us.
const MIN_IDLE_SLEEP: Duration = Duration::from_millis(5);

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

/// What [`Runner::run_until_idle`] did, or (from [`Runner::stats`]) what a runner did since it
/// was built — for logs and `/metrics`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrainReport {
    /// Runs claimed (a run resumed after a wait or a retry counts again).
    pub runs_claimed: u64,
    /// Step attempts started.
    pub steps_started: u64,
    /// Steps that finished and were committed.
    pub steps_succeeded: u64,
    /// Attempts that failed and will be retried.
    pub steps_retried: u64,
    /// Runs failed for good.
    pub runs_failed: u64,
}

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
}

impl DrainReport {
    fn add(&mut self, other: &Self) {
        self.runs_claimed += other.runs_claimed;
        self.steps_started += other.steps_started;
        self.steps_succeeded += other.steps_succeeded;
        self.steps_retried += other.steps_retried;
        self.runs_failed += other.runs_failed;
    }
}

/// Builds a [`Runner`]; see [`Runner::builder`].
#[must_use = "a runner builder does nothing until built"]
pub struct RunnerBuilder {
    store: Store,
    registry: Arc<Registry>,
    config: RunnerConfig,
    services: Services,
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
            }),
        }
    }
}

/// Why a step's input could not be worked out.
enum InputError {
    /// The run cannot go on (a stored output that does not decode, a page without a response).
    Fatal(String),
    /// The database failed; try again later.
    Store(StoreError),
}

impl From<StoreError> for InputError {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

/// The name of step `cursor`, for an error about its input (past the last step: the end).
fn step_name(definition: &WorkflowDef, cursor: i64) -> String {
    usize::try_from(cursor)
        .ok()
        .and_then(|index| definition.steps.get(index))
        .map_or_else(
            || "(end of the workflow)".to_owned(),
            |step| step.name.clone(),
        )
}

fn sleep_until(at_ms: i64, longest: Duration) -> Duration {
    let wait_ms = u64::try_from(at_ms.saturating_sub(now_ms())).unwrap_or(0);
    Duration::from_millis(wait_ms).clamp(MIN_IDLE_SLEEP, longest.max(MIN_IDLE_SLEEP))
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl Runner {
    /// A runner over `store` for the workflows in `registry`.
    pub fn builder(store: Store, registry: Arc<Registry>) -> RunnerBuilder {
        RunnerBuilder {
            store,
            registry,
            config: RunnerConfig::default(),
            services: Services::default(),
        }
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

    /// The links this process's `ui` steps minted, kept in memory for the steps that send them;
    /// subscribe to hear of each (how `POST /api/asks` answers with its link).
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
                .answer_page(PageId(page_id), &Unanswered::Cancelled.marker(), now_ms())
                .await?;
            if matches!(outcome, SubmitOutcome::Submitted(_)) {
                tracing::info!(run.id = %run_id, "run cancelled through its page; the next step hears of it");
                self.wake();
                return Ok(store.run(run_id).await?);
            }
        }
        let run = store.cancel_run(run_id, now_ms()).await?;
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
                    .is_some_and(|step| step.takes_unanswered)
            });
        Ok(run.waiting.and_then(|wait| wait.page_id).filter(|_| hears))
    }

    /// Starts the workers (and on PostgreSQL the `LISTEN` task) until `shutdown` is cancelled.
    /// A worker in the middle of a step gives its run back (ready at once) when it stops.
    ///
    /// The returned task owns the workers: aborting it aborts them all.
    pub fn spawn(&self, shutdown: CancellationToken) -> tokio::task::JoinHandle<()> {
        let runner = self.clone();
        tokio::spawn(async move {
            let mut tasks = JoinSet::new();
            for worker in 0..runner.inner.config.workers.max(1) {
                tasks.spawn(runner.clone().work(worker, shutdown.clone()));
            }
            if let Store::Postgres(pool) = &runner.inner.store {
                tasks.spawn(runner.clone().listen(pool.clone(), shutdown.clone()));
            }
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
            let now = now_ms();
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
                let driven = self.drive(claimed, &never, &mut round).await;
                self.record(&round);
                report.add(&round);
                driven?;
                continue;
            }
            let due = inner.store.next_due(&inner.workflows).await?;
            match due.claimable_at_ms {
                None => return Ok(report),
                Some(at) => tokio::time::sleep(sleep_until(at, inner.config.lease)).await,
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
        self.tick(&owner, true, &never, &mut DrainReport::default())
            .await
    }

    async fn work(self, worker: usize, shutdown: CancellationToken) {
        let owner = format!("{}/{worker}", self.inner.config.owner);
        let poll = self.inner.config.poll_interval;
        let mut report = DrainReport::default();
        while !shutdown.is_cancelled() {
            let notified = self.inner.wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            match self.tick(&owner, worker == 0, &shutdown, &mut report).await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(error) => {
                    tracing::error!(error = %error, runner.owner = %owner, "runner tick failed");
                }
            }
            let idle = match self.inner.store.next_due(&self.inner.workflows).await {
                Ok(due) => {
                    let sweeps = if worker == 0 {
                        due.wait_deadline_ms
                    } else {
                        None
                    };
                    [due.claimable_at_ms, sweeps]
                        .into_iter()
                        .flatten()
                        .min()
                        .map_or(poll, |at| sleep_until(at, poll))
                }
                Err(error) => {
                    tracing::error!(error = %error, "cannot read when runs are next due");
                    poll
                }
            };
            tokio::select! {
                () = &mut notified => {}
                () = tokio::time::sleep(idle) => {}
                () = shutdown.cancelled() => break,
            }
        }
    }

    /// One round of a worker: apply due timeouts (worker 0), claim one run and drive it.
    /// `Ok(true)` when it drove a run (look again at once).
    async fn tick(
        &self,
        owner: &str,
        sweeps: bool,
        shutdown: &CancellationToken,
        report: &mut DrainReport,
    ) -> Result<bool, WorkflowError> {
        let store = &self.inner.store;
        let now = now_ms();
        if sweeps {
            let expired = store.expire_waits(now).await?;
            if expired > 0 {
                tracing::info!(runs = expired, "wait timeouts applied");
            }
        }
        let claimed = store
            .claim_run(owner, &self.inner.workflows, self.inner.config.lease, now)
            .await?;
        let Some(claimed) = claimed else {
            return Ok(false);
        };
        let mut round = DrainReport {
            runs_claimed: 1,
            ..DrainReport::default()
        };
        let driven = self.drive(claimed, shutdown, &mut round).await;
        self.record(&round);
        report.add(&round);
        driven?;
        Ok(true)
    }

    async fn listen(self, pool: sqlx::PgPool, shutdown: CancellationToken) {
        let poll = self.inner.config.poll_interval;
        while !shutdown.is_cancelled() {
            match sqlx::postgres::PgListener::connect_with(&pool).await {
                Ok(mut listener) => {
                    if let Err(error) = listener.listen(RUNS_READY_CHANNEL).await {
                        tracing::warn!(error = %error, "cannot LISTEN for ready runs; polling");
                    } else {
                        // Anything made ready while we were not listening is found by this
                        // wake; several runs may be waiting, so every idle worker looks.
                        self.inner.wake.notify_waiters();
                        loop {
                            tokio::select! {
                                received = listener.recv() => match received {
                                    Ok(_) => self.wake(),
                                    Err(error) => {
                                        tracing::warn!(error = %error, "LISTEN connection lost; polling");
                                        break;
                                    }
                                },
                                () = shutdown.cancelled() => return,
                            }
                        }
                    }
                }
                Err(error) => {
                    tracing::warn!(error = %error, "cannot connect to LISTEN for ready runs; polling");
                }
            }
            tokio::select! {
                () = tokio::time::sleep(poll) => {}
                () = shutdown.cancelled() => return,
            }
        }
    }

    /// Drives a claimed run step by step while the lease holds.
    ///
    /// The heartbeat runs beside the whole drive (store calls included, in the same task, so a
    /// runner that dies stops renewing). Losing the lease interrupts the step under way; a store
    /// call under way is left to finish, since every write re-checks the lease and is refused.
    async fn drive(
        &self,
        claimed: ClaimedRun,
        shutdown: &CancellationToken,
        report: &mut DrainReport,
    ) -> Result<(), WorkflowError> {
        let lease_lost = CancellationToken::new();
        let heartbeat = self.keep_lease(claimed.lease.clone(), lease_lost.clone());
        tokio::select! {
            result = self.drive_steps(claimed, shutdown, &lease_lost, report) => result,
            never = heartbeat => match never {},
        }
    }

    async fn drive_steps(
        &self,
        claimed: ClaimedRun,
        shutdown: &CancellationToken,
        lease_lost: &CancellationToken,
        report: &mut DrainReport,
    ) -> Result<(), WorkflowError> {
        let store = &self.inner.store;
        let ClaimedRun { run, lease } = claimed;
        let Some(definition) = self.inner.registry.get(&run.workflow) else {
            // Claims are filtered by the registered names, so this is a registry changed under
            // a running process; leave the run for a runner that knows it.
            let _ = store.release_run(&lease, now_ms()).await?;
            return Ok(());
        };
        if let (Some(now), Some(then)) = (&definition.digest, &run.definition_digest) {
            if now != then {
                // Its cursor and stored outputs index the steps of a file the server no longer
                // has: resuming could run the wrong step or skip one.
                let reason = format!(
                    "the workflow file changed since this run started ({then}, now {now}); \
                     the run was stopped instead of resumed on different steps: start a new run"
                );
                tracing::warn!(run.id = %run.id, workflow.name = %run.workflow, error = %reason, "run failed");
                report.runs_failed += 1;
                let step_ref = StepRef {
                    index: run.cursor,
                    name: step_name(&definition, run.cursor),
                };
                let _ = store.fail_run(&lease, &step_ref, &reason, now_ms()).await?;
                return Ok(());
            }
        }
        let mut state = run.state;
        let mut cursor = run.cursor;
        loop {
            let (input, previous_index) = match self.step_input(run.id, cursor).await {
                Ok(found) => found,
                Err(InputError::Fatal(reason)) => {
                    tracing::warn!(run.id = %run.id, step.index = cursor, error = %reason, "step input unusable; run failed");
                    report.runs_failed += 1;
                    let step_ref = StepRef {
                        index: cursor,
                        name: step_name(&definition, cursor),
                    };
                    let _ = store.fail_run(&lease, &step_ref, &reason, now_ms()).await?;
                    return Ok(());
                }
                Err(InputError::Store(error)) => return Err(error.into()),
            };
            let step = usize::try_from(cursor)
                .ok()
                .and_then(|index| definition.steps.get(index));
            let unanswered = Unanswered::of(&input);
            let Some(step) = step.filter(|step| unanswered.is_none() || step.takes_unanswered)
            else {
                if let Some(why) = unanswered {
                    // Cancel, or expiry with `OnTimeout::Cancel`, and no step asked to hear it.
                    tracing::info!(run.id = %run.id, reason = ?why, "the wait ended unanswered; run cancelled");
                    store.cancel_run(run.id, now_ms()).await?;
                } else {
                    // Past the last step: the last step waited and has been answered.
                    let _ = store.finish_run(&lease, now_ms()).await?;
                }
                return Ok(());
            };
            let step_ref = StepRef {
                index: cursor,
                name: step.name.clone(),
            };
            let Some(started) = store
                .begin_step(&lease, cursor, &step.name, &input, now_ms())
                .await?
            else {
                tracing::warn!(run.id = %run.id, step.name = %step.name, "lease lost before the step started");
                return Ok(());
            };
            let policy = definition.retry_policy(usize::try_from(cursor).unwrap_or(usize::MAX));
            if started.attempts > i64::from(policy.max_attempts) {
                // Earlier attempts never reported back (their runner died or stopped each time):
                // give up rather than crash-loop for ever.
                let reason = format!(
                    "gave up after {} attempts that never finished",
                    started.attempts - 1
                );
                tracing::warn!(run.id = %run.id, step.name = %step.name, error = %reason, "run failed");
                report.runs_failed += 1;
                let _ = store.fail_run(&lease, &step_ref, &reason, now_ms()).await?;
                return Ok(());
            }
            report.steps_started += 1;
            let context = StepContext {
                run_id: run.id,
                step_index: cursor,
                step_name: step.name.clone(),
                attempt: started.attempts,
                previous_index,
                services: Arc::clone(&self.inner.services),
            };
            let span = tracing::info_span!("step", run.id = %run.id, workflow.name = %run.workflow, step.name = %step.name, step.index = cursor, step.attempt = started.attempts);
            let execution =
                (step.handler)(context, state.clone(), started.input.unwrap_or(Value::Null))
                    .instrument(span);
            // The step runs as a task of its own, so a step that computes for a while without
            // yielding (page generation) cannot starve this task's heartbeat into losing the lease
            // while the process is alive. Leaving this scope for any reason aborts it.
            let mut task = AbortOnDrop(tokio::spawn(execution));
            let result = tokio::select! {
                joined = &mut task.0 => joined.unwrap_or_else(|error| {
                    Err(StepError::retryable(anyhow::anyhow!("the step's task ended abnormally: {error}")))
                }),
                () = lease_lost.cancelled() => {
                    tracing::warn!(run.id = %run.id, step.name = %step.name, "lease lost during the step; abandoning it");
                    return Ok(());
                }
                () = shutdown.cancelled() => {
                    let _ = store.release_run(&lease, now_ms()).await?;
                    return Ok(());
                }
            };
            match result {
                Ok(done) => {
                    let next = match &done.output {
                        StepOutput::Wait {
                            page_id,
                            deadline_ms,
                            on_timeout,
                            ..
                        } => NextRun::Wait(WaitInfo {
                            page_id: page_id.map(|id| id.0),
                            deadline_ms: *deadline_ms,
                            on_timeout: on_timeout.unwrap_or(TimeoutAction::Fail),
                        }),
                        _ if unanswered.is_some() => NextRun::Cancel,
                        _ => match done.goto {
                            Some(Goto::End) => NextRun::Finish,
                            Some(Goto::Step(index)) if index >= definition.steps.len() => {
                                NextRun::Finish
                            }
                            // Only forward: a step that ran never runs again.
                            Some(Goto::Step(index))
                                if i64::try_from(index).is_ok_and(|index| index > cursor) =>
                            {
                                NextRun::Jump(i64::try_from(index).unwrap_or(i64::MAX))
                            }
                            Some(Goto::Step(_)) => {
                                let error = StepError::fatal(anyhow::anyhow!(
                                    "a step may only jump forward"
                                ));
                                self.record_failure(
                                    &definition,
                                    &lease,
                                    &step_ref,
                                    started.attempts,
                                    &error,
                                    report,
                                )
                                .await?;
                                return Ok(());
                            }
                            None if usize::try_from(cursor + 1).ok()
                                == Some(definition.steps.len()) =>
                            {
                                NextRun::Finish
                            }
                            None => NextRun::Continue,
                        },
                    };
                    let completion = StepCompletion {
                        index: cursor,
                        state: done.state,
                        output: done.output.to_value(),
                        next,
                    };
                    match store.complete_step(&lease, &completion, now_ms()).await? {
                        LeaseOutcome::Committed => report.steps_succeeded += 1,
                        LeaseOutcome::LeaseLost => {
                            tracing::warn!(run.id = %run.id, step.name = %step.name, "lease lost; the step's result was not recorded");
                            return Ok(());
                        }
                    }
                    cursor = match completion.next {
                        NextRun::Continue => cursor + 1,
                        NextRun::Jump(target) => target,
                        _ => return Ok(()),
                    };
                    state = completion.state;
                }
                Err(error) => {
                    self.record_failure(
                        &definition,
                        &lease,
                        &step_ref,
                        started.attempts,
                        &error,
                        report,
                    )
                    .await?;
                    return Ok(());
                }
            }
        }
    }

    async fn record_failure(
        &self,
        definition: &WorkflowDef,
        lease: &Lease,
        step: &StepRef,
        attempt: i64,
        error: &StepError,
        report: &mut DrainReport,
    ) -> Result<(), WorkflowError> {
        let store = &self.inner.store;
        let policy = definition.retry_policy(usize::try_from(step.index).unwrap_or(usize::MAX));
        let attempt = u32::try_from(attempt).unwrap_or(u32::MAX);
        let message = error.to_string();
        let now = now_ms();
        if error.is_retryable() && policy.allows_retry_after(attempt) {
            let next_attempt_at = now.saturating_add(millis(policy.backoff(attempt)));
            tracing::warn!(run.id = %lease.run_id, step.name = %step.name, step.attempt = attempt, error = %message, "step failed; retrying");
            report.steps_retried += 1;
            let _ = store
                .retry_step(lease, step.index, &message, next_attempt_at, now)
                .await?;
        } else {
            tracing::warn!(run.id = %lease.run_id, step.name = %step.name, step.attempt = attempt, error = %message, "step failed; run failed");
            report.runs_failed += 1;
            let _ = store.fail_run(lease, step, &message, now).await?;
        }
        Ok(())
    }

    /// Renews the lease every `heartbeat`; once it is lost, says so through `lost` and idles
    /// until the drive ends.
    ///
    /// A renewal that has not answered half a lease before the lease runs out counts as lost: past
    /// that instant another runner may claim the run, and the step must not go on beside it
    /// (a stalled database connection would otherwise keep it running until the call returns).
    async fn keep_lease(
        &self,
        mut lease: Lease,
        lost: CancellationToken,
    ) -> std::convert::Infallible {
        let config = &self.inner.config;
        loop {
            tokio::time::sleep(config.heartbeat).await;
            if lost.is_cancelled() {
                continue;
            }
            let now = now_ms();
            let left = u64::try_from(lease.expires_at_ms.saturating_sub(now)).unwrap_or(0);
            // Give up half a lease early: a starved process (timers late, a renewal queued behind
            // SQLite's write lock) must have dropped the step before another runner may claim it.
            let budget = Duration::from_millis(left).saturating_sub(config.lease / 2);
            let renewal = self.inner.store.heartbeat(&lease, config.lease, now);
            match tokio::time::timeout(budget, renewal).await {
                Ok(Ok(Some(renewed))) => lease = renewed,
                Ok(Ok(None)) => lost.cancel(),
                Ok(Err(error)) => {
                    tracing::warn!(run.id = %lease.run_id, error = %error, "heartbeat failed");
                    if now_ms().saturating_add(millis(config.heartbeat)) >= lease.expires_at_ms {
                        lost.cancel();
                    }
                }
                Err(_) => {
                    tracing::warn!(run.id = %lease.run_id, "heartbeat did not answer before the lease ran out");
                    lost.cancel();
                }
            }
        }
    }

    /// What step `cursor` is handed, and the index of the step that handed it: its stored input
    /// when an earlier attempt recorded one, else the output of the step that ran before it
    /// (the one just before, or the one that jumped here) — resolving a wait to the page's
    /// response (or the timeout's default).
    async fn step_input(
        &self,
        run_id: RunId,
        cursor: i64,
    ) -> Result<(Value, Option<i64>), InputError> {
        if cursor == 0 {
            return Ok((Value::Null, None));
        }
        let store = &self.inner.store;
        let steps = store.run_steps(run_id).await?;
        // Skipped steps have no row, so the latest row before the cursor is the one that ran.
        let previous_index = steps
            .iter()
            .map(|step| step.index)
            .filter(|index| *index < cursor)
            .max();
        if let Some(input) = steps
            .iter()
            .find(|step| step.index == cursor)
            .and_then(|step| step.input.clone())
        {
            return Ok((input, previous_index));
        }
        let previous = previous_index.unwrap_or(cursor - 1);
        let Some(output) = steps
            .into_iter()
            .find(|step| step.index == previous)
            .and_then(|step| step.output)
        else {
            return Err(InputError::Fatal(format!(
                "the output of step {previous} is missing"
            )));
        };
        let output: StepOutput = serde_json::from_value(output).map_err(|error| {
            InputError::Fatal(format!(
                "the output of step {previous} does not decode: {error}"
            ))
        })?;
        let input = match output {
            StepOutput::None => Value::Null,
            StepOutput::Value { value } => value,
            StepOutput::Page { page } => serde_json::to_value(page).unwrap_or(Value::Null),
            StepOutput::Wait {
                page_id,
                default_response,
                ..
            } => {
                let response = match page_id {
                    Some(page_id) => store.submitted_response(page_id.0).await?,
                    None => None,
                };
                match (response, default_response) {
                    (Some(response), _) | (None, Some(response)) => response,
                    (None, None) if page_id.is_none() => Value::Null,
                    (None, None) => {
                        return Err(InputError::Fatal(
                            "the run resumed but its page has no response".into(),
                        ))
                    }
                }
            }
        };
        Ok((input, previous_index))
    }
}

/// Aborts a spawned step when the drive stops waiting for it (lease lost, shutdown, an error).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
