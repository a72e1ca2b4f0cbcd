//! The workflow engine against a real store: leases, the step transaction, exactly-once resume,
//! wait timeouts, cancel, retries and crash recovery — each on SQLite and on PostgreSQL — plus
//! typed end-to-end runs on SQLite.

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};

use anyhow::{bail, ensure, Context as _};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tessera::{
    forms::FormSchema,
    llm::{ScriptedModel, ScriptedTurn, ToolCall},
    pages::{
        links::PageLinks,
        page::{NewPage, PageId, SubmitOutcome},
        token::PageToken,
    },
    store::{now_ms, pages::PageChange, runs::WAIT_TIMED_OUT, Store, StoreError},
    workflow::{
        run::{
            LeaseOutcome, NewRun, NextRun, RunFilter, RunStatus, StepCompletion, StepRef,
            StepStatus, TimeoutAction, WaitInfo,
        },
        wait_for, workflow, Answer, DynamicPage, OnTimeout, PageFactory, PageHandle, PageRequest,
        Prompt, Registry, RetryPolicy, Runner, RunnerConfig, StepError, Text, UiOptions,
        WorkflowError,
    },
};
use tessera_app::catalog::{Catalog, ComponentSpec};
use tokio_util::sync::CancellationToken;

use crate::helpers::store_contract;

store_contract!(
    a_leased_run_is_claimed_by_no_one_else_until_its_lease_expires,
    a_runner_whose_lease_expired_cannot_commit_its_step,
    the_step_transaction_writes_state_output_and_cursor_together,
    a_page_submitted_before_its_run_waits_makes_the_run_ready,
    twenty_concurrent_submissions_resume_the_run_exactly_once,
    a_wait_that_times_out_continues_fails_or_cancels,
    a_cancelled_run_is_never_claimed_again,
    a_step_failing_twice_then_succeeding_runs_three_times_with_growing_backoff,
    a_fatal_error_fails_the_run_at_once_keeping_the_step_name,
    a_finished_step_never_runs_again_after_a_crash,
    runs_are_listed_newest_first_with_a_status_filter_and_pagination,
    two_runners_share_the_work_and_no_step_runs_twice,
    a_new_run_wakes_an_idle_runner_before_its_next_poll,
    a_submitted_page_wakes_an_idle_runner_before_its_next_poll,
    an_answer_step_hears_of_cancel_and_expiry_and_the_run_then_ends_cancelled,
    a_restart_between_the_page_and_its_notify_step_mints_a_fresh_link_and_the_old_one_stops_working,
);

/// A lease no test expects to expire: tests that count executions must not see a step run
/// again because a loaded machine let a lease lapse.
const LEASE: Duration = Duration::from_secs(5);

/// A lease a test waits out on purpose.
const SHORT_LEASE: Duration = Duration::from_millis(300);

fn fast_config(owner: &str) -> RunnerConfig {
    RunnerConfig {
        owner: owner.into(),
        workers: 2,
        lease: LEASE,
        heartbeat: Duration::from_millis(500),
        poll_interval: Duration::from_millis(50),
    }
}

fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        initial_backoff: Duration::from_millis(40),
        multiplier: 2.0,
        max_backoff: Duration::from_secs(1),
    }
}

/// Drives runs to quiescence, failing the test rather than hanging it.
async fn drain(runner: &Runner) -> anyhow::Result<tessera::workflow::DrainReport> {
    tokio::time::timeout(Duration::from_secs(20), runner.run_until_idle())
        .await
        .context("the runner did not become idle")?
        .map_err(Into::into)
}

async fn ready_run(store: &Store, workflow: &str) -> anyhow::Result<tessera::workflow::run::Run> {
    Ok(store
        .create_run(&NewRun {
            workflow: workflow.into(),
            state: json!({"count": 0}),
            status: RunStatus::Ready,
        })
        .await?)
}

fn names(workflows: &[&str]) -> Vec<String> {
    workflows.iter().map(|name| (*name).to_owned()).collect()
}

/// A page factory that stores a fixed tree through the real store and keeps each link's token,
/// so a test can submit the page as a person would.
#[derive(Default)]
struct StaticPageFactory {
    store: Mutex<Option<Store>>,
    tokens: Mutex<Vec<PageToken>>,
    requests: Mutex<Vec<PageRequest>>,
}

impl StaticPageFactory {
    fn new(store: &Store) -> Arc<Self> {
        let factory = Self::default();
        *lock(&factory.store) = Some(store.clone());
        Arc::new(factory)
    }

    fn last_token(&self) -> anyhow::Result<PageToken> {
        lock(&self.tokens)
            .last()
            .cloned()
            .context("no page was made")
    }

    fn requests(&self) -> Vec<PageRequest> {
        lock(&self.requests).clone()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[async_trait::async_trait]
impl PageFactory for StaticPageFactory {
    async fn create_page(&self, request: PageRequest) -> Result<PageHandle, StepError> {
        let store = lock(&self.store)
            .clone()
            .ok_or_else(|| StepError::fatal(anyhow::anyhow!("no store")))?;
        let token = PageToken::generate();
        let page = store
            .create_page(&NewPage {
                token_hash: token.hash(),
                run_id: Some(request.run_id),
                tree: json!({"nodes": {"c1": {"component": "Heading", "props": {"text": "Hi", "level": 1}}}, "order": ["c1"]}),
                schema: request.schema.as_ref().map(FormSchema::to_json_schema),
                data: request.data.clone(),
                component_set: None,
                expires_at_ms: now_ms() + 3_600_000,
            })
            .await?;
        let handle = PageHandle::new(
            page.id,
            format!("http://localhost/p/{}", token.as_str()),
            request.schema.is_some(),
        );
        lock(&self.tokens).push(token);
        lock(&self.requests).push(request);
        Ok(handle)
    }

    async fn relink(&self, page_id: PageId) -> Result<PageLinks, StepError> {
        let store = lock(&self.store)
            .clone()
            .ok_or_else(|| StepError::fatal(anyhow::anyhow!("no store")))?;
        let token = PageToken::generate();
        let changed = store
            .change_open_page(page_id, &PageChange::Reissue(token.hash()))
            .await?;
        if !changed {
            return Err(StepError::fatal(anyhow::anyhow!(
                "page {page_id} is not open"
            )));
        }
        let link = format!("http://localhost/p/{}", token.as_str());
        lock(&self.tokens).push(token);
        Ok(PageLinks::Shared(link))
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Approval {
    count: i64,
    #[serde(default)]
    approved: Option<bool>,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, tessera::forms::FormSchema)]
struct Decision {
    approve: bool,
    reason: Option<String>,
}

/// `Ask` (ui) → `Notify` (waits, with `timeout` if given) → `Record` (counts its executions).
fn approval_workflow(
    name: &str,
    timeout: Option<(Duration, OnTimeout<Decision>)>,
    record_runs: Arc<AtomicUsize>,
) -> anyhow::Result<tessera::workflow::Workflow<Approval>> {
    Ok(workflow::<Approval>(name)
        .ui(
            "Ask",
            Prompt::<Decision>::new("Approve claim number {{ count }}?"),
        )
        .step_with_page("Notify", move |state, page| {
            let timeout = timeout.clone();
            async move {
                let wait = wait_for(page.webhook);
                let wait = match timeout {
                    Some((duration, on_timeout)) => wait.timeout(duration, on_timeout),
                    None => wait,
                };
                Ok((state, wait))
            }
        })
        .step_with_response("Record", move |state, decision: Decision| {
            let record_runs = Arc::clone(&record_runs);
            async move {
                record_runs.fetch_add(1, Ordering::SeqCst);
                Ok(Approval {
                    approved: Some(decision.approve),
                    reason: decision.reason,
                    ..state
                })
            }
        })
        .build()?)
}

fn runner_for(
    store: &Store,
    registry: Registry,
    owner: &str,
    factory: Option<Arc<StaticPageFactory>>,
) -> Runner {
    let mut builder = Runner::builder(store.clone(), Arc::new(registry)).config(fast_config(owner));
    if let Some(factory) = factory {
        builder = builder.page_factory(factory);
    }
    builder.build()
}

/// A clock that runs with the machine's and can be moved forward: a runner built with it sees a
/// lease run out or a deadline pass at once, where a test would otherwise sleep through them.
#[derive(Clone, Default)]
struct TestClock(Arc<std::sync::atomic::AtomicI64>);

impl TestClock {
    fn now(&self) -> i64 {
        now_ms() + self.0.load(Ordering::SeqCst)
    }

    fn advance(&self, by: Duration) {
        let by = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.0.fetch_add(by, Ordering::SeqCst);
    }

    fn clock(&self) -> tessera::util::clock::Clock {
        let clock = self.clone();
        Arc::new(move || clock.now())
    }
}

/// [`runner_for`], reading `clock`.
fn runner_on_clock(
    store: &Store,
    registry: Registry,
    owner: &str,
    factory: Option<Arc<StaticPageFactory>>,
    clock: &TestClock,
) -> Runner {
    let mut builder = Runner::builder(store.clone(), Arc::new(registry))
        .config(fast_config(owner))
        .clock(clock.clock());
    if let Some(factory) = factory {
        builder = builder.page_factory(factory);
    }
    builder.build()
}

async fn a_leased_run_is_claimed_by_no_one_else_until_its_lease_expires(
    store: &Store,
) -> anyhow::Result<()> {
    let run = ready_run(store, "w").await?;
    let workflows = names(&["w"]);
    let lease = Duration::from_millis(400);
    // The store takes the instant of each call, so the lease's timeline is given, not slept
    // through: claimed at `start`, it would expire at `start + 400`.
    let start = now_ms();
    let first = store
        .claim_run("first", &workflows, lease, start)
        .await?
        .context("a ready run is claimable")?;
    assert_eq!(first.run.id, run.id);
    assert_eq!(first.run.status, RunStatus::Running);
    assert_eq!(first.run.lease_owner.as_deref(), Some("first"));
    assert!(store
        .claim_run("second", &workflows, lease, start)
        .await?
        .is_none());
    assert!(store
        .claim_run("first", &names(&["other"]), lease, start)
        .await?
        .is_none());

    // A heartbeat pushes the expiry out; the run stays ours past the first expiry.
    let renewed = store
        .heartbeat(&first.lease, lease, start + 150)
        .await?
        .context("a live lease renews")?;
    assert!(renewed.expires_at_ms > first.lease.expires_at_ms);
    assert!(store
        .claim_run("second", &workflows, lease, start + 450)
        .await?
        .is_none());

    // Without heartbeats it expires and someone else may claim it, with a newer epoch.
    let expired = start + 950;
    let second = store
        .claim_run("second", &workflows, lease, expired)
        .await?
        .context("an expired lease makes the run claimable")?;
    assert_eq!(second.run.id, run.id);
    assert!(second.lease.epoch > renewed.epoch);
    assert_eq!(store.heartbeat(&renewed, lease, expired).await?, None);
    assert!(store
        .heartbeat(&second.lease, lease, expired)
        .await?
        .is_some());
    Ok(())
}

async fn a_runner_whose_lease_expired_cannot_commit_its_step(store: &Store) -> anyhow::Result<()> {
    let run = ready_run(store, "w").await?;
    let workflows = names(&["w"]);
    let start = now_ms();
    let claimed = store
        .claim_run("slow", &workflows, SHORT_LEASE, start)
        .await?
        .context("claimable")?;
    let step = store
        .begin_step(&claimed.lease, 0, "Slow", &Value::Null, start)
        .await?
        .context("the lease is live")?;
    assert_eq!(step.attempts, 1);
    let expired = start + i64::try_from(SHORT_LEASE.as_millis())? + 50;

    // Nobody took the run over, yet the expired lease may not commit.
    let completion = StepCompletion {
        index: 0,
        state: json!({"count": 99}),
        output: json!({"kind": "none"}),
        next: NextRun::Continue,
    };
    assert_eq!(
        store
            .complete_step(&claimed.lease, &completion, expired)
            .await?,
        LeaseOutcome::LeaseLost
    );
    assert_eq!(
        store
            .retry_step(&claimed.lease, 0, "boom", expired, expired)
            .await?,
        LeaseOutcome::LeaseLost
    );
    let step_ref = StepRef {
        index: 0,
        name: "Slow".into(),
    };
    assert_eq!(
        store
            .fail_run(&claimed.lease, &step_ref, "boom", expired)
            .await?,
        LeaseOutcome::LeaseLost
    );

    // A new claimer takes over; the old lease still cannot commit, the new one can.
    let taken = store
        .claim_run("fast", &workflows, LEASE, expired)
        .await?
        .context("the expired run is claimable")?;
    assert_eq!(
        store
            .complete_step(&claimed.lease, &completion, expired)
            .await?,
        LeaseOutcome::LeaseLost
    );
    let unchanged = store.run(run.id).await?;
    assert_eq!(
        (unchanged.cursor, unchanged.state),
        (0, json!({"count": 0}))
    );
    assert!(store
        .begin_step(&taken.lease, 0, "Slow", &Value::Null, expired)
        .await?
        .is_some());
    assert_eq!(
        store
            .complete_step(&taken.lease, &completion, expired)
            .await?,
        LeaseOutcome::Committed
    );
    assert_eq!(store.run(run.id).await?.state, json!({"count": 99}));
    Ok(())
}

async fn the_step_transaction_writes_state_output_and_cursor_together(
    store: &Store,
) -> anyhow::Result<()> {
    let run = ready_run(store, "w").await?;
    let claimed = store
        .claim_run("r", &names(&["w"]), LEASE, now_ms())
        .await?
        .context("claimable")?;
    store
        .begin_step(&claimed.lease, 0, "One", &json!({"given": 1}), now_ms())
        .await?
        .context("leased")?;
    let outcome = store
        .complete_step(
            &claimed.lease,
            &StepCompletion {
                index: 0,
                state: json!({"count": 1}),
                output: json!({"kind": "value", "value": 7}),
                next: NextRun::Continue,
            },
            now_ms(),
        )
        .await?;
    assert_eq!(outcome, LeaseOutcome::Committed);
    let after = store.run(run.id).await?;
    assert_eq!(after.status, RunStatus::Running);
    assert_eq!((after.cursor, after.attempts), (1, 0));
    assert_eq!(after.state, json!({"count": 1}));

    // The same step index cannot be completed twice: the cursor moved on.
    let again = store
        .complete_step(
            &claimed.lease,
            &StepCompletion {
                index: 0,
                state: json!({"count": 2}),
                output: json!({"kind": "none"}),
                next: NextRun::Continue,
            },
            now_ms(),
        )
        .await?;
    assert_eq!(again, LeaseOutcome::LeaseLost);

    store
        .begin_step(&claimed.lease, 1, "Two", &Value::Null, now_ms())
        .await?
        .context("leased")?;
    let finished = store
        .complete_step(
            &claimed.lease,
            &StepCompletion {
                index: 1,
                state: json!({"count": 2}),
                output: json!({"kind": "none"}),
                next: NextRun::Finish,
            },
            now_ms(),
        )
        .await?;
    assert_eq!(finished, LeaseOutcome::Committed);
    let done = store.run(run.id).await?;
    assert_eq!(done.status, RunStatus::Succeeded);
    assert!(done.finished_at_ms.is_some());
    assert_eq!(done.lease_owner, None);

    let steps = store.run_steps(run.id).await?;
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0].name, "One");
    assert_eq!(steps[0].status, StepStatus::Succeeded);
    assert_eq!(steps[0].input, Some(json!({"given": 1})));
    assert_eq!(steps[0].output, Some(json!({"kind": "value", "value": 7})));
    assert_eq!(steps[1].name, "Two");
    assert!(steps[1].finished_at_ms.is_some());
    Ok(())
}

async fn a_page_submitted_before_its_run_waits_makes_the_run_ready(
    store: &Store,
) -> anyhow::Result<()> {
    let run = ready_run(store, "w").await?;
    let claimed = store
        .claim_run("r", &names(&["w"]), LEASE, now_ms())
        .await?
        .context("claimable")?;
    store
        .begin_step(&claimed.lease, 0, "Notify", &Value::Null, now_ms())
        .await?
        .context("leased")?;
    let token = PageToken::generate();
    let page = store
        .create_page(&NewPage {
            token_hash: token.hash(),
            run_id: Some(run.id),
            tree: json!({"nodes": {}, "order": []}),
            schema: None,
            data: json!({}),
            component_set: None,
            expires_at_ms: now_ms() + 60_000,
        })
        .await?;
    // The person is faster than the step: the run is still running, so the submission cannot
    // make it ready...
    let outcome = store
        .submit_page(&token.hash(), &json!({"approve": true}), now_ms())
        .await?;
    assert!(matches!(outcome, SubmitOutcome::Submitted(_)));
    assert_eq!(store.run(run.id).await?.status, RunStatus::Running);
    // ...so the step transaction sees the submitted page and does not leave the run waiting.
    let committed = store
        .complete_step(
            &claimed.lease,
            &StepCompletion {
                index: 0,
                state: json!({"count": 0}),
                output: json!({"kind": "wait", "page_id": page.id}),
                next: NextRun::Wait(WaitInfo {
                    page_id: Some(page.id.0),
                    deadline_ms: None,
                    on_timeout: TimeoutAction::Fail,
                }),
            },
            now_ms(),
        )
        .await?;
    assert_eq!(committed, LeaseOutcome::Committed);
    assert_eq!(store.run(run.id).await?.status, RunStatus::Ready);
    assert_eq!(
        store.submitted_response(page.id.0).await?,
        Some(json!({"approve": true}))
    );
    Ok(())
}

async fn twenty_concurrent_submissions_resume_the_run_exactly_once(
    store: &Store,
) -> anyhow::Result<()> {
    let record_runs = Arc::new(AtomicUsize::new(0));
    let registry = Registry::new().with(approval_workflow(
        "approval",
        None,
        Arc::clone(&record_runs),
    )?)?;
    let factory = StaticPageFactory::new(store);
    let runner = runner_for(store, registry, "r1", Some(Arc::clone(&factory)));
    let run = runner.start_run("approval", json!({"count": 3})).await?;
    drain(&runner).await?;

    let waiting = store.run(run.id).await?;
    assert_eq!(waiting.status, RunStatus::Waiting);
    assert_eq!(waiting.cursor, 2);
    let page_id = waiting
        .waiting
        .as_ref()
        .and_then(|wait| wait.page_id)
        .context("the run waits on its page")?;

    let token = factory.last_token()?;
    let mut submissions = tokio::task::JoinSet::new();
    for index in 0..20 {
        let store = store.clone();
        let hash = token.hash();
        submissions.spawn(async move {
            let answer = json!({"approve": index % 2 == 0, "reason": format!("answer {index}")});
            let outcome = store.submit_page(&hash, &answer, now_ms()).await;
            outcome.map(|outcome| (outcome, answer))
        });
    }
    let mut submitted = Vec::new();
    let mut already = 0;
    while let Some(outcome) = submissions.join_next().await {
        match outcome?? {
            (SubmitOutcome::Submitted(recorded), answer) => submitted.push((recorded, answer)),
            (SubmitOutcome::AlreadySubmitted(_), _) => already += 1,
            (other, _) => bail!("unexpected outcome {other:?}"),
        }
    }
    assert_eq!(submitted.len(), 1, "exactly one submission is recorded");
    assert_eq!(already, 19);
    assert_eq!(submitted[0].0.page_id.0, page_id);
    assert_eq!(store.run(run.id).await?.status, RunStatus::Ready);

    let report = drain(&runner).await?;
    assert_eq!(report.runs_claimed, 1, "the run was resumed once");
    assert_eq!(record_runs.load(Ordering::SeqCst), 1);
    let done = store.run(run.id).await?;
    assert_eq!(done.status, RunStatus::Succeeded);
    let response = store
        .page(submitted[0].0.page_id)
        .await?
        .response
        .context("stored response")?;
    assert_eq!(response, submitted[0].1, "the winner's answer is stored");
    assert_eq!(done.state["approved"], response["approve"]);
    assert_eq!(done.state["reason"], response["reason"]);
    // Another drain finds nothing to do.
    assert_eq!(drain(&runner).await?.runs_claimed, 0);
    Ok(())
}

async fn a_wait_that_times_out_continues_fails_or_cancels(store: &Store) -> anyhow::Result<()> {
    let record_runs = Arc::new(AtomicUsize::new(0));
    let short = Duration::from_millis(250);
    let default = Decision {
        approve: false,
        reason: Some("nobody answered".into()),
    };
    let mut registry = Registry::new();
    registry
        .register(approval_workflow(
            "continue",
            Some((short, OnTimeout::Continue(default))),
            Arc::clone(&record_runs),
        )?)?
        .register(approval_workflow(
            "fail",
            Some((short, OnTimeout::Fail)),
            Arc::clone(&record_runs),
        )?)?
        .register(approval_workflow(
            "cancel",
            Some((short, OnTimeout::Cancel)),
            Arc::clone(&record_runs),
        )?)?
        .register(approval_workflow(
            "patient",
            Some((Duration::from_secs(3600), OnTimeout::Fail)),
            Arc::clone(&record_runs),
        )?)?;
    let factory = StaticPageFactory::new(store);
    let clock = TestClock::default();
    let runner = runner_on_clock(store, registry, "r1", Some(factory), &clock);
    let mut runs = Vec::new();
    for name in ["continue", "fail", "cancel", "patient"] {
        runs.push(runner.start_run(name, json!({"count": 1})).await?.id);
    }
    drain(&runner).await?;
    // Each Notify step recorded a wait with a deadline. (On a loaded machine the short ones may
    // already have timed out during that drain, so only the patient run is sure to wait still.)
    for id in &runs {
        let steps = store.run_steps(*id).await?;
        let output = steps[1].output.clone().context("Notify finished")?;
        assert_eq!(output["kind"], json!("wait"));
        assert!(output["deadline_ms"].as_i64().is_some());
    }
    let patient = store.run(runs[3]).await?;
    assert_eq!(patient.status, RunStatus::Waiting);
    assert!(patient.waiting.and_then(|wait| wait.deadline_ms).is_some());

    clock.advance(short + Duration::from_millis(30));
    drain(&runner).await?;

    let continued = store.run(runs[0]).await?;
    assert_eq!(continued.status, RunStatus::Succeeded);
    assert_eq!(continued.state["approved"], json!(false));
    assert_eq!(continued.state["reason"], json!("nobody answered"));
    assert_eq!(record_runs.load(Ordering::SeqCst), 1);

    let failed = store.run(runs[1]).await?;
    assert_eq!(failed.status, RunStatus::Failed);
    assert_eq!(failed.error.as_deref(), Some(WAIT_TIMED_OUT));
    assert_eq!(
        failed.failed_step,
        Some(StepRef {
            index: 1,
            name: "Notify".into()
        })
    );

    assert_eq!(store.run(runs[2]).await?.status, RunStatus::Cancelled);
    assert_eq!(store.run(runs[3]).await?.status, RunStatus::Waiting);
    Ok(())
}

async fn a_cancelled_run_is_never_claimed_again(store: &Store) -> anyhow::Result<()> {
    let workflows = names(&["w"]);
    let ready = ready_run(store, "w").await?;
    let cancelled = store.cancel_run(ready.id, now_ms()).await?;
    assert_eq!(cancelled.status, RunStatus::Cancelled);
    assert!(cancelled.finished_at_ms.is_some());
    assert!(store
        .claim_run("r", &workflows, LEASE, now_ms())
        .await?
        .is_none());
    assert!(matches!(
        store.cancel_run(ready.id, now_ms()).await,
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store
            .cancel_run(tessera::workflow::run::RunId::new(), now_ms())
            .await,
        Err(StoreError::NotFound)
    ));

    // Cancelling a running run takes the lease away: the runner commits nothing more, and the
    // run is not claimable even after the lease would have expired.
    let running = ready_run(store, "w").await?;
    let claimed = store
        .claim_run("r", &workflows, SHORT_LEASE, now_ms())
        .await?
        .context("claimable")?;
    store
        .begin_step(&claimed.lease, 0, "Long", &Value::Null, now_ms())
        .await?
        .context("leased")?;
    store.cancel_run(running.id, now_ms()).await?;
    assert_eq!(
        store.heartbeat(&claimed.lease, LEASE, now_ms()).await?,
        None
    );
    let completion = StepCompletion {
        index: 0,
        state: json!({}),
        output: json!({"kind": "none"}),
        next: NextRun::Continue,
    };
    assert_eq!(
        store
            .complete_step(&claimed.lease, &completion, now_ms())
            .await?,
        LeaseOutcome::LeaseLost
    );
    let after_the_lease = now_ms() + i64::try_from(SHORT_LEASE.as_millis())? + 50;
    assert!(store
        .claim_run("r2", &workflows, LEASE, after_the_lease)
        .await?
        .is_none());
    let steps = store.run_steps(running.id).await?;
    assert_eq!(steps[0].status, StepStatus::Failed);
    assert_eq!(store.run(running.id).await?.status, RunStatus::Cancelled);

    // A runner never picks up a cancelled run either.
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&ran);
    let registry = Registry::new().with(
        workflow::<Value>("w")
            .step("Count", move |state| {
                let counter = Arc::clone(&counter);
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    Ok(state)
                }
            })
            .build()?,
    )?;
    let runner = runner_for(store, registry, "r3", None);
    let report = drain(&runner).await?;
    assert_eq!(report.runs_claimed, 0);
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    Ok(())
}

async fn a_step_failing_twice_then_succeeding_runs_three_times_with_growing_backoff(
    store: &Store,
) -> anyhow::Result<()> {
    let attempts = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&attempts);
    let registry = Registry::new().with(
        workflow::<Value>("flaky")
            .step("Prepare", |state| async move { Ok(state) })
            .step("Call", move |_state| {
                let counter = Arc::clone(&counter);
                async move {
                    let attempt = counter.fetch_add(1, Ordering::SeqCst) + 1;
                    if attempt < 3 {
                        return Err(
                            anyhow::anyhow!("service unavailable (attempt {attempt})").into()
                        );
                    }
                    Ok(json!({"called": attempt}))
                }
            })
            .retry(fast_retry())
            .build()?,
    )?;
    let runner = runner_for(store, registry, "r1", None);
    let run = runner.start_run("flaky", json!({})).await?;

    let mut due_times = Vec::new();
    for failure in 1..=2 {
        let before = now_ms();
        assert!(runner.run_once().await?, "the run is due");
        let after = store.run(run.id).await?;
        assert_eq!(
            after.status,
            RunStatus::Ready,
            "failure {failure} is retried"
        );
        assert_eq!(after.cursor, 1);
        assert_eq!(after.attempts, i64::from(failure));
        let error = after.error.clone().unwrap_or_default();
        ensure!(error.contains("service unavailable"), "error kept: {error}");
        let backoff = after.next_attempt_at_ms - before;
        due_times.push(after.next_attempt_at_ms);
        // 40 ms after the first failure, 80 ms after the second.
        let expected = 40 * (1 << (failure - 1));
        ensure!(
            backoff >= expected,
            "failure {failure}: backoff {backoff} ms, expected at least {expected} ms"
        );
        // Not claimable a moment before it is due (asked with that instant, so a slow machine
        // cannot make it due already).
        let probe = store
            .claim_run(
                "probe",
                &names(&["flaky"]),
                LEASE,
                after.next_attempt_at_ms - 1,
            )
            .await?;
        assert!(probe.is_none(), "not due before its backoff");
        tokio::time::sleep(Duration::from_millis(
            u64::try_from(after.next_attempt_at_ms - now_ms()).unwrap_or(0) + 5,
        ))
        .await;
    }
    assert!(due_times[1] - due_times[0] > 40);
    drain(&runner).await?;

    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    let done = store.run(run.id).await?;
    assert_eq!(done.status, RunStatus::Succeeded);
    assert_eq!(done.state, json!({"called": 3}));
    let steps = store.run_steps(run.id).await?;
    assert_eq!(steps[1].attempts, 3);
    assert_eq!(steps[1].status, StepStatus::Succeeded);
    assert_eq!(steps[0].attempts, 1, "the finished step did not run again");
    Ok(())
}

async fn a_fatal_error_fails_the_run_at_once_keeping_the_step_name(
    store: &Store,
) -> anyhow::Result<()> {
    let attempts = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&attempts);
    let registry = Registry::new().with(
        workflow::<Value>("payment")
            .step("Validate", |state| async move { Ok(state) })
            .step("Charge", move |_state| {
                let counter = Arc::clone(&counter);
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    Err(StepError::fatal(anyhow::anyhow!("card declined")))
                }
            })
            .retry(fast_retry())
            .step("Receipt", |state| async move { Ok(state) })
            .build()?,
    )?;
    let runner = runner_for(store, registry, "r1", None);
    let run = runner.start_run("payment", json!({"amount": 12})).await?;
    let report = drain(&runner).await?;
    assert_eq!(report.runs_failed, 1);
    assert_eq!(runner.stats().runs_failed, 1);
    assert_eq!(runner.stats().steps_succeeded, 1);
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        1,
        "a fatal error is not retried"
    );
    let failed = store.run(run.id).await?;
    assert_eq!(failed.status, RunStatus::Failed);
    assert_eq!(failed.error.as_deref(), Some("card declined"));
    assert_eq!(
        failed.failed_step,
        Some(StepRef {
            index: 1,
            name: "Charge".into()
        })
    );
    assert!(failed.finished_at_ms.is_some());
    let steps = store.run_steps(run.id).await?;
    assert_eq!(steps.len(), 2, "the step after the failure never started");
    assert_eq!(steps[1].status, StepStatus::Failed);
    assert_eq!(steps[1].error.as_deref(), Some("card declined"));
    Ok(())
}

async fn a_finished_step_never_runs_again_after_a_crash(store: &Store) -> anyhow::Result<()> {
    let first_runs = Arc::new(AtomicUsize::new(0));
    let second_runs = Arc::new(AtomicUsize::new(0));
    let second_started = Arc::new(tokio::sync::Notify::new());
    let registry = || -> anyhow::Result<Registry> {
        let first = Arc::clone(&first_runs);
        let second = Arc::clone(&second_runs);
        let started = Arc::clone(&second_started);
        Ok(Registry::new().with(
            workflow::<Value>("crashy")
                .step("First", move |state| {
                    let first = Arc::clone(&first);
                    async move {
                        first.fetch_add(1, Ordering::SeqCst);
                        Ok(json!({"first": "done", "before": state}))
                    }
                })
                .step("Second", move |mut state| {
                    let second = Arc::clone(&second);
                    let started = Arc::clone(&started);
                    async move {
                        if second.fetch_add(1, Ordering::SeqCst) == 0 {
                            // The first attempt hangs until its runner dies.
                            started.notify_one();
                            std::future::pending::<()>().await;
                        }
                        state["second"] = json!("done");
                        Ok(state)
                    }
                })
                .build()?,
        )?)
    };

    let doomed = Runner::builder(store.clone(), Arc::new(registry()?))
        .config(RunnerConfig {
            workers: 1,
            lease: SHORT_LEASE,
            heartbeat: Duration::from_millis(60),
            ..fast_config("doomed")
        })
        .build();
    let shutdown = CancellationToken::new();
    let workers = doomed.spawn(shutdown.clone());
    let run = doomed.start_run("crashy", json!({"n": 1})).await?;
    tokio::time::timeout(Duration::from_secs(10), second_started.notified())
        .await
        .context("the second step started")?;
    // The crash: the runner's tasks vanish without giving the run back.
    workers.abort();
    let _ = workers.await;
    let stuck = store.run(run.id).await?;
    assert_eq!(stuck.status, RunStatus::Running);
    assert_eq!(stuck.cursor, 1);

    let started_at = Instant::now();
    let survivor = runner_for(store, registry()?, "survivor", None);
    drain(&survivor).await?;
    assert!(
        started_at.elapsed() < Duration::from_secs(5),
        "the run was resumed after its lease expired"
    );
    assert_eq!(
        first_runs.load(Ordering::SeqCst),
        1,
        "a finished step never runs again"
    );
    assert_eq!(
        second_runs.load(Ordering::SeqCst),
        2,
        "the step under way runs again"
    );
    let done = store.run(run.id).await?;
    assert_eq!(done.status, RunStatus::Succeeded);
    assert_eq!(done.state["first"], json!("done"));
    assert_eq!(done.state["second"], json!("done"));
    let steps = store.run_steps(run.id).await?;
    assert_eq!((steps[0].attempts, steps[1].attempts), (1, 2));
    drop(shutdown);
    Ok(())
}

async fn runs_are_listed_newest_first_with_a_status_filter_and_pagination(
    store: &Store,
) -> anyhow::Result<()> {
    let mut created = Vec::new();
    for index in 0..5 {
        created.push(
            ready_run(store, if index % 2 == 0 { "even" } else { "odd" })
                .await?
                .id,
        );
        // Distinct creation times keep the order observable.
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    store.cancel_run(created[4], now_ms()).await?;

    let first_page = store
        .list_runs(&RunFilter {
            limit: 2,
            ..RunFilter::default()
        })
        .await?;
    assert_eq!(first_page.total, 5);
    let ids: Vec<_> = first_page.runs.iter().map(|run| run.id).collect();
    assert_eq!(ids, [created[4], created[3]]);
    let last_page = store
        .list_runs(&RunFilter {
            limit: 2,
            offset: 4,
            ..RunFilter::default()
        })
        .await?;
    assert_eq!(last_page.runs.len(), 1);
    assert_eq!(last_page.runs[0].id, created[0]);

    let ready = store
        .list_runs(&RunFilter {
            status: Some(RunStatus::Ready),
            ..RunFilter::default()
        })
        .await?;
    assert_eq!(ready.total, 4);
    let even_ready = store
        .list_runs(&RunFilter {
            status: Some(RunStatus::Ready),
            workflow: Some("even".into()),
            ..RunFilter::default()
        })
        .await?;
    assert_eq!(
        even_ready.runs.iter().map(|run| run.id).collect::<Vec<_>>(),
        [created[2], created[0]]
    );
    Ok(())
}

/// Three steps that count their executions per run, shared by every runner of a test.
fn counted_workflow(
    executions: &Arc<Mutex<std::collections::HashMap<(String, &'static str), usize>>>,
) -> anyhow::Result<Registry> {
    let mut builder = workflow::<Value>("counted").step("Start", |state| async move { Ok(state) });
    for name in ["One", "Two", "Three"] {
        let executions = Arc::clone(executions);
        builder = builder.step(name, move |state: Value| {
            let executions = Arc::clone(&executions);
            async move {
                let key = (state["key"].as_str().unwrap_or_default().to_owned(), name);
                *lock(&executions).entry(key).or_default() += 1;
                tokio::time::sleep(Duration::from_millis(2)).await;
                Ok(state)
            }
        });
    }
    Ok(Registry::new().with(builder.build()?)?)
}

async fn wait_for_runs_with_status(
    store: &Store,
    status: RunStatus,
    count: i64,
    within: Duration,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + within;
    loop {
        let listed = store
            .list_runs(&RunFilter {
                status: Some(status),
                ..RunFilter::default()
            })
            .await?;
        if listed.total == count {
            return Ok(());
        }
        ensure!(
            Instant::now() < deadline,
            "{} of {count} runs reached {status:?} in time",
            listed.total
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn two_runners_share_the_work_and_no_step_runs_twice(store: &Store) -> anyhow::Result<()> {
    let executions = Arc::new(Mutex::new(std::collections::HashMap::new()));
    let shutdown = CancellationToken::new();
    let runner = |owner: &str| -> anyhow::Result<Runner> {
        Ok(runner_for(
            store,
            counted_workflow(&executions)?,
            owner,
            None,
        ))
    };
    let first = runner("first")?;
    let second = runner("second")?;
    let workers = [
        first.spawn(shutdown.clone()),
        second.spawn(shutdown.clone()),
    ];
    let runs = 24;
    for index in 0..runs {
        let runner = if index % 2 == 0 { &first } else { &second };
        runner
            .start_run("counted", json!({"key": format!("run-{index}")}))
            .await?;
    }
    wait_for_runs_with_status(store, RunStatus::Succeeded, runs, Duration::from_secs(30)).await?;
    shutdown.cancel();
    for worker in workers {
        tokio::time::timeout(Duration::from_secs(5), worker).await??;
    }
    let executions = lock(&executions).clone();
    assert_eq!(executions.len(), 24 * 3);
    assert!(
        executions.values().all(|count| *count == 1),
        "a step ran twice: {executions:?}"
    );
    Ok(())
}

async fn a_new_run_wakes_an_idle_runner_before_its_next_poll(store: &Store) -> anyhow::Result<()> {
    let executions = Arc::new(Mutex::new(std::collections::HashMap::new()));
    let runner = Runner::builder(store.clone(), Arc::new(counted_workflow(&executions)?))
        .config(RunnerConfig {
            poll_interval: Duration::from_secs(60),
            ..fast_config("sleepy")
        })
        .build();
    let shutdown = CancellationToken::new();
    let workers = runner.spawn(shutdown.clone());
    // Let the workers go idle (and, on PostgreSQL, the listener connect).
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Started the way another process would: straight through the store.
    store
        .create_run(&NewRun {
            workflow: "counted".into(),
            state: json!({"key": "woken"}),
            status: RunStatus::Ready,
        })
        .await?;
    if store.engine() == "sqlite" {
        // One process: the code that made the run ready wakes the runner itself.
        runner.wake();
    }
    wait_for_runs_with_status(store, RunStatus::Succeeded, 1, Duration::from_secs(5)).await?;
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(5), workers).await??;
    Ok(())
}

async fn a_submitted_page_wakes_an_idle_runner_before_its_next_poll(
    store: &Store,
) -> anyhow::Result<()> {
    let record_runs = Arc::new(AtomicUsize::new(0));
    let registry = Registry::new().with(approval_workflow(
        "approval",
        None,
        Arc::clone(&record_runs),
    )?)?;
    let factory = StaticPageFactory::new(store);
    // Idle workers would sleep an hour: only a wake-up can resume the run within the bounds below.
    // The lease is an hour too, because a worker that saw the run being driven sleeps until that
    // run's lease would expire.
    let runner = Runner::builder(store.clone(), Arc::new(registry))
        .config(RunnerConfig {
            poll_interval: Duration::from_secs(3600),
            lease: Duration::from_secs(3600),
            ..fast_config("sleepy")
        })
        .page_factory(Arc::clone(&factory) as Arc<dyn PageFactory>)
        .build();
    let shutdown = CancellationToken::new();
    let workers = runner.spawn(shutdown.clone());
    runner.start_run("approval", json!({"count": 7})).await?;
    wait_for_runs_with_status(store, RunStatus::Waiting, 1, Duration::from_secs(30)).await?;
    // Let the wake-ups from driving the run to its page be delivered and spent (PostgreSQL
    // delivers NOTIFY asynchronously), so that only the submission can wake a worker.
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Submitted the way another process would: straight through the store.
    let outcome = store
        .submit_page(
            &factory.last_token()?.hash(),
            &json!({"approve": true, "reason": "fine"}),
            now_ms(),
        )
        .await?;
    assert!(matches!(outcome, SubmitOutcome::Submitted(_)));
    if store.engine() == "sqlite" {
        // One process: the submitting handler wakes the runner itself.
        runner.wake();
    }
    wait_for_runs_with_status(store, RunStatus::Succeeded, 1, Duration::from_secs(30)).await?;
    assert_eq!(record_runs.load(Ordering::SeqCst), 1);
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), workers).await??;
    Ok(())
}

/// Answers the factory's last page the way its Cancel button does.
async fn press_cancel(store: &Store, factory: &StaticPageFactory) -> anyhow::Result<SubmitOutcome> {
    Ok(store
        .submit_page(
            &factory.last_token()?.hash(),
            &tessera::workflow::step::cancelled_response(),
            now_ms(),
        )
        .await?)
}

/// `Ask` → `Notify` (waits, with `timeout` if given) → `Tell` (an answer step: records what it
/// heard, as a callback would send it).
fn telling_workflow(
    name: &str,
    timeout: Option<(Duration, OnTimeout<Decision>)>,
    heard: Arc<Mutex<Vec<String>>>,
) -> anyhow::Result<tessera::workflow::Workflow<Approval>> {
    Ok(workflow::<Approval>(name)
        .ui("Ask", Prompt::<Decision>::new("Approve claim {{ count }}?"))
        .step_with_page("Notify", move |state, page| {
            let timeout = timeout.clone();
            async move {
                let wait = wait_for(page.webhook);
                let wait = match timeout {
                    Some((duration, on_timeout)) => wait.timeout(duration, on_timeout),
                    None => wait,
                };
                Ok((state, wait))
            }
        })
        .step_with_answer_in_run("Tell", move |_run, state, answer: Answer<Decision>| {
            let heard = Arc::clone(&heard);
            async move {
                let what = match answer {
                    Answer::Given(decision) => format!("given approve={}", decision.approve),
                    Answer::Cancelled => "cancelled".to_owned(),
                    Answer::Expired => "expired".to_owned(),
                    Answer::Declined(decline) => format!("declined: {:?}", decline.reason),
                };
                lock(&heard).push(what);
                Ok(state)
            }
        })
        .build()?)
}

async fn an_answer_step_hears_of_cancel_and_expiry_and_the_run_then_ends_cancelled(
    store: &Store,
) -> anyhow::Result<()> {
    let heard = Arc::new(Mutex::new(Vec::new()));
    let short = Duration::from_millis(250);
    let registry = Registry::new()
        .with(telling_workflow("answered", None, Arc::clone(&heard))?)?
        .with(telling_workflow(
            "expiring",
            Some((short, OnTimeout::Cancel)),
            Arc::clone(&heard),
        )?)?;
    let factory = StaticPageFactory::new(store);
    let clock = TestClock::default();
    let runner = runner_on_clock(store, registry, "r1", Some(Arc::clone(&factory)), &clock);

    let answered = runner.start_run("answered", json!({"count": 1})).await?;
    drain(&runner).await?;
    let answer = json!({"approve": true, "reason": null});
    store
        .submit_page(&factory.last_token()?.hash(), &answer, now_ms())
        .await?;
    drain(&runner).await?;
    assert_eq!(store.run(answered.id).await?.status, RunStatus::Succeeded);
    assert_eq!(*lock(&heard), ["given approve=true"]);

    let cancelled = runner.start_run("answered", json!({"count": 2})).await?;
    drain(&runner).await?;
    press_cancel(store, &factory).await?;
    drain(&runner).await?;
    assert_eq!(store.run(cancelled.id).await?.status, RunStatus::Cancelled);
    assert_eq!(lock(&heard).last().map(String::as_str), Some("cancelled"));

    let expiring = runner.start_run("expiring", json!({"count": 3})).await?;
    drain(&runner).await?;
    clock.advance(short + Duration::from_millis(30));
    drain(&runner).await?;
    let expired = store.run(expiring.id).await?;
    assert_eq!(expired.status, RunStatus::Cancelled);
    assert_eq!(lock(&heard).last().map(String::as_str), Some("expired"));
    let steps = store.run_steps(expiring.id).await?;
    assert_eq!(
        steps.last().map(|step| (step.name.as_str(), step.status)),
        Some(("Tell", StepStatus::Succeeded)),
        "the answer step ran and is recorded"
    );
    assert_eq!(lock(&heard).len(), 3, "each answer step ran once");
    Ok(())
}

/// A run whose last step waits: pressing Cancel must end it cancelled, not succeeded.
#[tokio::test]
async fn a_last_step_wait_answered_with_cancel_ends_the_run_cancelled() -> anyhow::Result<()> {
    let database = crate::helpers::TestDb::sqlite().await?;
    let store = database.store.clone();
    let registry = Registry::new().with(
        workflow::<Approval>("last-wait")
            .ui("Ask", Prompt::<Decision>::new("Approve claim {{ count }}?"))
            .step_with_page("Notify", |state, page| async move {
                Ok((state, wait_for(page.webhook)))
            })
            .build()?,
    )?;
    let factory = StaticPageFactory::new(&store);
    let runner = runner_for(&store, registry, "r1", Some(Arc::clone(&factory)));
    let run = runner.start_run("last-wait", json!({"count": 1})).await?;
    drain(&runner).await?;
    press_cancel(&store, &factory).await?;
    drain(&runner).await?;
    assert_eq!(store.run(run.id).await?.status, RunStatus::Cancelled);
    database.cleanup().await?;
    Ok(())
}

/// A step that picks its components from the state can only use ones the page server knows:
/// otherwise the link would open on an error box. It fails at once, naming the component.
#[tokio::test]
async fn a_component_chosen_at_run_time_must_be_registered_with_the_runner() -> anyhow::Result<()> {
    let database = crate::helpers::TestDb::sqlite().await?;
    let store = database.store.clone();
    let mut pill: ComponentSpec = Catalog::defaults()
        .get("Badge")
        .cloned()
        .context("the Badge spec")?;
    pill.name = "StatusPill".to_owned();
    let chosen = pill.clone();
    let registry = Arc::new(
        Registry::new().with(
            workflow::<Value>("chosen")
                .ui_from_state("Show", move |_state: &Value| {
                    Ok(DynamicPage {
                        prompt: "Show the status".to_owned(),
                        template: None,
                        schema: None,
                        data: json!({}),
                        options: UiOptions {
                            components: vec![chosen.clone()],
                            ..UiOptions::default()
                        },
                    })
                })
                .build()?,
        )?,
    );
    let factory = StaticPageFactory::new(&store);
    let unaware = Runner::builder(store.clone(), Arc::clone(&registry))
        .config(fast_config("unaware"))
        .page_factory(Arc::clone(&factory) as Arc<dyn PageFactory>)
        .build();
    let refused = unaware.start_run("chosen", json!({})).await?;
    drain(&unaware).await?;
    let refused = store.run(refused.id).await?;
    assert_eq!(refused.status, RunStatus::Failed);
    let error = refused.error.unwrap_or_default();
    assert!(
        error.contains("StatusPill is not in the runner's page catalog"),
        "{error}"
    );
    assert!(factory.requests().is_empty(), "no page was made");

    let aware = Runner::builder(store.clone(), registry)
        .config(fast_config("aware"))
        .page_factory(Arc::clone(&factory) as Arc<dyn PageFactory>)
        .components(vec![pill])
        .build();
    assert!(aware.page_catalog().get("StatusPill").is_some());
    let made = aware.start_run("chosen", json!({})).await?;
    drain(&aware).await?;
    assert_eq!(store.run(made.id).await?.status, RunStatus::Succeeded);
    assert_eq!(factory.requests().len(), 1);
    database.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn a_page_answered_with_its_cancel_button_cancels_the_run() -> anyhow::Result<()> {
    let database = crate::helpers::TestDb::sqlite().await?;
    let store = database.store.clone();
    let record_runs = Arc::new(AtomicUsize::new(0));
    let registry = Registry::new().with(approval_workflow(
        "approval",
        None,
        Arc::clone(&record_runs),
    )?)?;
    let factory = StaticPageFactory::new(&store);
    let runner = runner_for(&store, registry, "r1", Some(Arc::clone(&factory)));
    let run = runner.start_run("approval", json!({"count": 1})).await?;
    drain(&runner).await?;
    let outcome = press_cancel(&store, &factory).await?;
    assert!(matches!(outcome, SubmitOutcome::Submitted(_)));
    drain(&runner).await?;
    let cancelled = store.run(run.id).await?;
    assert_eq!(cancelled.status, RunStatus::Cancelled);
    assert_eq!(
        record_runs.load(Ordering::SeqCst),
        0,
        "the response step never ran"
    );
    database.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn cancelling_a_run_interrupts_its_step_and_frees_the_worker() -> anyhow::Result<()> {
    let database = crate::helpers::TestDb::sqlite().await?;
    let store = database.store.clone();
    let started = Arc::new(tokio::sync::Notify::new());
    let finished = Arc::new(AtomicUsize::new(0));
    let (notify, done) = (Arc::clone(&started), Arc::clone(&finished));
    let registry = Registry::new().with(
        workflow::<Value>("endless")
            .step("Forever", move |state: Value| {
                let (notify, done) = (Arc::clone(&notify), Arc::clone(&done));
                async move {
                    if state["hang"] == json!(true) {
                        notify.notify_one();
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                    }
                    done.fetch_add(1, Ordering::SeqCst);
                    Ok(state)
                }
            })
            .build()?,
    )?;
    let runner = Runner::builder(store.clone(), Arc::new(registry))
        .config(RunnerConfig {
            workers: 1,
            heartbeat: Duration::from_millis(50),
            ..fast_config("single")
        })
        .build();
    let shutdown = CancellationToken::new();
    let workers = runner.spawn(shutdown.clone());
    let hanging = runner.start_run("endless", json!({"hang": true})).await?;
    tokio::time::timeout(Duration::from_secs(10), started.notified()).await?;
    runner.cancel_run(hanging.id).await?;
    // The only worker is free again: a new run finishes.
    let quick = runner.start_run("endless", json!({"hang": false})).await?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.run(quick.id).await?.status != RunStatus::Succeeded {
        ensure!(
            Instant::now() < deadline,
            "the worker stayed stuck on the cancelled run"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(finished.load(Ordering::SeqCst), 1);
    assert_eq!(store.run(hanging.id).await?.status, RunStatus::Cancelled);
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(5), workers).await??;
    database.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn a_runner_stopping_mid_step_gives_its_run_back() -> anyhow::Result<()> {
    let database = crate::helpers::TestDb::sqlite().await?;
    let store = database.store.clone();
    let started = Arc::new(tokio::sync::Notify::new());
    let notify = Arc::clone(&started);
    let registry = Registry::new().with(
        workflow::<Value>("slow")
            .step("Wait", move |state| {
                let notify = Arc::clone(&notify);
                async move {
                    notify.notify_one();
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Ok(state)
                }
            })
            .build()?,
    )?;
    let runner = runner_for(&store, registry, "stopping", None);
    let shutdown = CancellationToken::new();
    let workers = runner.spawn(shutdown.clone());
    let run = runner.start_run("slow", json!({})).await?;
    tokio::time::timeout(Duration::from_secs(10), started.notified()).await?;
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(5), workers).await??;
    let released = store.run(run.id).await?;
    assert_eq!(released.status, RunStatus::Ready);
    assert_eq!(released.lease_owner, None);
    let steps = store.run_steps(run.id).await?;
    assert_eq!(steps[0].status, StepStatus::Failed);
    assert_eq!(steps[0].attempts, 1);
    database.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn a_step_whose_attempts_never_finish_fails_the_run_instead_of_looping() -> anyhow::Result<()>
{
    let database = crate::helpers::TestDb::sqlite().await?;
    let store = database.store.clone();
    let registry = Registry::new().with(
        workflow::<Value>("doomed")
            .step("Crash", |state| async move { Ok(state) })
            .retry(RetryPolicy::exponential(2, Duration::from_millis(1)))
            .build()?,
    )?;
    let run = registry.start_run(&store, "doomed", json!({})).await?;
    // Two attempts whose runners died mid-step, each claimed once the one before's lease ran out.
    let clock = TestClock::default();
    for owner in ["dead-1", "dead-2"] {
        let claimed = store
            .claim_run(owner, &names(&["doomed"]), SHORT_LEASE, clock.now())
            .await?
            .context("claimable")?;
        store
            .begin_step(&claimed.lease, 0, "Crash", &Value::Null, clock.now())
            .await?
            .context("leased")?;
        clock.advance(SHORT_LEASE + Duration::from_millis(50));
    }
    let runner = runner_on_clock(&store, registry, "survivor", None, &clock);
    drain(&runner).await?;
    let failed = store.run(run.id).await?;
    assert_eq!(failed.status, RunStatus::Failed);
    assert_eq!(
        failed.failed_step.map(|step| step.name).as_deref(),
        Some("Crash")
    );
    assert!(failed.error.unwrap_or_default().contains("never finished"));
    database.cleanup().await?;
    Ok(())
}

// Typed end-to-end runs (SQLite).

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Digest {
    emails: Vec<String>,
    archived: Vec<String>,
    note: Option<String>,
    link: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, tessera::forms::FormSchema)]
struct DigestForm {
    archive_ids: Vec<String>,
    note: Option<String>,
}

#[tokio::test]
async fn a_typed_workflow_asks_through_a_page_and_carries_on_with_the_typed_response(
) -> anyhow::Result<()> {
    let database = crate::helpers::TestDb::sqlite().await?;
    let store = database.store.clone();
    let archive_runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&archive_runs);
    let digest = workflow::<Digest>("email-digest")
        .step("Fetch", |state: Digest| async move {
            Ok(Digest {
                emails: vec!["e1".into(), "e2".into(), "e3".into()],
                ..state
            })
        })
        .ui(
            "ShowDigest",
            Prompt::<DigestForm>::new(
                "Group these {{ emails | length }} emails; pick some to archive.",
            ),
        )
        .step_with_page(
            "Notify",
            |state: Digest, page: PageHandle<DigestForm>| async move {
                let link = page.link.clone();
                Ok((
                    Digest {
                        link: Some(link),
                        ..state
                    },
                    wait_for(page.webhook),
                ))
            },
        )
        .step_with_response("Archive", move |state: Digest, response: DigestForm| {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok(Digest {
                    archived: response.archive_ids,
                    note: response.note,
                    ..state
                })
            }
        })
        .step("Report", |state: Digest| async move { Ok(state) })
        .build()?;
    let registry = Registry::new().with(digest)?;
    assert_eq!(
        registry
            .describe("email-digest")
            .map(|info| info.steps.len()),
        Some(5)
    );
    let factory = StaticPageFactory::new(&store);
    let runner = runner_for(&store, registry, "e2e", Some(Arc::clone(&factory)));
    let run = runner
        .start_run("email-digest", serde_json::to_value(Digest::default())?)
        .await?;
    drain(&runner).await?;

    let waiting = store.run(run.id).await?;
    assert_eq!(waiting.status, RunStatus::Waiting);
    let requests = factory.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].prompt,
        "Group these 3 emails; pick some to archive."
    );
    assert_eq!(requests[0].step_name, "ShowDigest");
    // The template travels with its rendering: the page cache keys on it, not on the count.
    assert_eq!(
        requests[0].template.as_deref(),
        Some("Group these {{ emails | length }} emails; pick some to archive.")
    );
    assert_eq!(requests[0].data["emails"], json!(["e1", "e2", "e3"]));
    let schema = requests[0]
        .schema
        .clone()
        .context("a form page has a schema")?;
    assert_eq!(schema.fields[0].name, "archive_ids");
    let token = factory.last_token()?;
    assert_eq!(
        waiting.state["link"],
        json!(format!("http://localhost/p/{}", token.as_str()))
    );

    let response = serde_json::to_value(DigestForm {
        archive_ids: vec!["e1".into(), "e3".into()],
        note: Some("done".into()),
    })?;
    let outcome = store
        .submit_page(&token.hash(), &response, now_ms())
        .await?;
    assert!(matches!(outcome, SubmitOutcome::Submitted(_)));
    runner.wake();
    drain(&runner).await?;

    let done = store.run(run.id).await?;
    assert_eq!(done.status, RunStatus::Succeeded);
    assert_eq!(done.state["archived"], json!(["e1", "e3"]));
    assert_eq!(done.state["note"], json!("done"));
    assert_eq!(archive_runs.load(Ordering::SeqCst), 1);

    // The page reached the step after the ui step only, the response the step after the wait
    // only; neither is in the state.
    let steps = store.run_steps(run.id).await?;
    let inputs: Vec<_> = steps.iter().map(|step| step.input.clone()).collect();
    assert_eq!(inputs[0], Some(Value::Null));
    assert_eq!(inputs[1], Some(Value::Null));
    // The page reached it by id; its link (the token) is never stored.
    assert!(inputs[2]
        .as_ref()
        .and_then(|page| page.get("page_id"))
        .is_some());
    assert_eq!(inputs[2].as_ref().and_then(|page| page.get("link")), None);
    assert_eq!(inputs[3], Some(response));
    assert_eq!(inputs[4], Some(Value::Null));
    assert!(steps
        .iter()
        .all(|step| step.status == StepStatus::Succeeded));
    assert!(done.state.get("archive_ids").is_none());
    database.cleanup().await?;
    Ok(())
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, tessera::forms::FormSchema)]
struct Triage {
    category: String,
    urgent: bool,
}

#[tokio::test]
async fn prompt_steps_merge_a_typed_answer_into_the_state_and_hand_text_to_the_next_step(
) -> anyhow::Result<()> {
    let database = crate::helpers::TestDb::sqlite().await?;
    let store = database.store.clone();
    let model = Arc::new(ScriptedModel::new(vec![
        ScriptedTurn::tool_calls(vec![ToolCall::new(
            "call_1",
            "Answer",
            json!({"category": "billing", "urgent": true}),
        )])
        .expecting_tools(["Answer"]),
        ScriptedTurn::text("A billing question, urgent."),
    ]));
    let triage = workflow::<Value>("triage")
        .prompt("Classify", Prompt::<Triage>::new("Classify: {{ message }}"))
        .prompt("Summarize", Prompt::<Text>::new("Summarize {{ category }}"))
        .step_with_response("Keep", |mut state: Value, reply: Text| async move {
            state["summary"] = json!(reply.text);
            Ok(state)
        })
        .build()?;
    let runner = Runner::builder(store.clone(), Arc::new(Registry::new().with(triage)?))
        .config(fast_config("prompts"))
        .model("scripted:test", model.clone())
        .build();
    let run = runner
        .start_run("triage", json!({"message": "I was charged twice"}))
        .await?;
    drain(&runner).await?;
    let done = store.run(run.id).await?;
    assert_eq!(done.status, RunStatus::Succeeded, "{:?}", done.error);
    assert_eq!(
        done.state,
        json!({
            "message": "I was charged twice",
            "category": "billing",
            "urgent": true,
            "summary": "A billing question, urgent."
        })
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1]
        .messages
        .iter()
        .any(|message| matches!(message, tessera::llm::Message::User(text) if text == "Summarize billing")));
    database.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn starting_a_run_checks_the_workflow_name_and_the_input() -> anyhow::Result<()> {
    let database = crate::helpers::TestDb::sqlite().await?;
    let registry = Registry::new().with(
        workflow::<Approval>("approval")
            .step("Noop", |state| async move { Ok(state) })
            .build()?,
    )?;
    assert!(matches!(
        registry.start_run(&database.store, "nope", json!({})).await,
        Err(WorkflowError::UnknownWorkflow(_))
    ));
    assert!(matches!(
        registry
            .start_run(&database.store, "approval", json!({"count": "three"}))
            .await,
        Err(WorkflowError::BadInput { .. })
    ));
    let run = registry
        .start(&database.store, "approval", &Approval::default())
        .await?;
    assert_eq!(run.status, RunStatus::Ready);
    assert!(matches!(
        workflow::<Value>("twice")
            .step("A", |state| async move { Ok(state) })
            .step("A", |state| async move { Ok(state) })
            .build(),
        Err(WorkflowError::Invalid { .. })
    ));
    let once = || {
        workflow::<Value>("once")
            .step("A", |state| async move { Ok(state) })
            .build()
    };
    assert!(matches!(
        Registry::new().with(once()?)?.with(once()?),
        Err(WorkflowError::Duplicate(_))
    ));
    database.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn a_runner_spawned_with_a_shutdown_token_runs_work_and_stops() -> anyhow::Result<()> {
    let database = crate::helpers::TestDb::sqlite().await?;
    let store = database.store.clone();
    let registry = Registry::new().with(
        workflow::<Value>("quick")
            .step("One", |mut state: Value| async move {
                state["one"] = json!(true);
                Ok(state)
            })
            .build()?,
    )?;
    let runner = runner_for(&store, registry, "spawned", None);
    let shutdown = CancellationToken::new();
    let workers = runner.spawn(shutdown.clone());
    let run = runner.start_run("quick", json!({})).await?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.run(run.id).await?.status != RunStatus::Succeeded {
        ensure!(
            Instant::now() < deadline,
            "the spawned runner did not finish the run"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(5), workers)
        .await
        .context("the runner stopped on shutdown")??;
    database.cleanup().await?;
    Ok(())
}

/// Sets the flag when the step's future is dropped (its runner abandoned it).
struct DropFlag(Arc<std::sync::atomic::AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A heartbeat stuck behind the database must not let the step run on past its lease, when
/// another process may already have claimed the run (DESIGN.md §7: no step runs twice at once).
/// The stall is real: another connection holds SQLite's write lock, so the renewal waits.
#[tokio::test]
async fn a_step_whose_heartbeat_stalls_is_abandoned_before_its_lease_runs_out() -> anyhow::Result<()>
{
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("stall.db");
    let store = Store::connect(&tessera::config::DatabaseUrl::Sqlite(
        path.to_string_lossy().into_owned(),
    ))
    .await?;
    let started = Arc::new(tokio::sync::Notify::new());
    let abandoned = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let registry = {
        let started = Arc::clone(&started);
        let abandoned = Arc::clone(&abandoned);
        Registry::new().with(
            workflow::<Value>("stalled")
                .step("Long", move |state| {
                    let started = Arc::clone(&started);
                    let flag = DropFlag(Arc::clone(&abandoned));
                    async move {
                        let _abandon_marker = flag;
                        started.notify_one();
                        std::future::pending::<()>().await;
                        Ok(state)
                    }
                })
                .build()?,
        )?
    };
    let runner = Runner::builder(store.clone(), Arc::new(registry))
        .config(RunnerConfig {
            workers: 1,
            lease: Duration::from_secs(1),
            heartbeat: Duration::from_millis(250),
            ..fast_config("stalled")
        })
        .build();
    let shutdown = CancellationToken::new();
    let workers = runner.spawn(shutdown.clone());
    runner.start_run("stalled", json!({})).await?;
    tokio::time::timeout(Duration::from_secs(10), started.notified())
        .await
        .context("the step started")?;

    let blocker = tessera_store::testing::SqliteWriteLock::take(&path.to_string_lossy()).await?;
    // The write lock is held far longer than the lease (the store's busy timeout is 10 s).
    let held_since = Instant::now();
    while !abandoned.load(Ordering::SeqCst) && held_since.elapsed() < Duration::from_secs(6) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let abandoned_while_stalled = abandoned.load(Ordering::SeqCst);
    blocker.release().await?;
    shutdown.cancel();
    let _ = workers.await;
    store.close().await;
    assert!(
        abandoned_while_stalled,
        "the step ran on while its lease could not be renewed"
    );
    Ok(())
}

/// The page step and the step that sends its link, where the first attempt at sending dies as
/// a crashed process would (before sending anything); each link sent is recorded.
fn relink_workflow(
    attempts: Arc<AtomicUsize>,
    sent: Arc<Mutex<Vec<String>>>,
) -> anyhow::Result<Registry> {
    let relink = workflow::<Digest>("relink")
        .ui("Ask", Prompt::<DigestForm>::new("Pick emails to archive."))
        .step_with_page(
            "Notify",
            move |state: Digest, page: PageHandle<DigestForm>| {
                let attempts = Arc::clone(&attempts);
                let sent = Arc::clone(&sent);
                async move {
                    if attempts.fetch_add(1, Ordering::SeqCst) == 0 {
                        return Err(StepError::retryable(anyhow::anyhow!("the process died")));
                    }
                    lock(&sent).push(page.link.clone());
                    Ok((state, wait_for(page.webhook)))
                }
            },
        )
        .retry(RetryPolicy::exponential(3, Duration::from_millis(1)))
        .step_with_response(
            "Archive",
            |state: Digest, response: DigestForm| async move {
                Ok(Digest {
                    archived: response.archive_ids,
                    ..state
                })
            },
        )
        .build()?;
    Ok(Registry::new().with(relink)?)
}

async fn a_restart_between_the_page_and_its_notify_step_mints_a_fresh_link_and_the_old_one_stops_working(
    store: &Store,
) -> anyhow::Result<()> {
    let attempts = Arc::new(AtomicUsize::new(0));
    let sent = Arc::new(Mutex::new(Vec::new()));
    let registry = Arc::new(relink_workflow(Arc::clone(&attempts), Arc::clone(&sent))?);
    let factory = StaticPageFactory::new(store);
    let before = Runner::builder(store.clone(), Arc::clone(&registry))
        .config(fast_config("before-the-crash"))
        .page_factory(Arc::clone(&factory) as Arc<dyn PageFactory>)
        .build();
    let run = before
        .start_run("relink", serde_json::to_value(Digest::default())?)
        .await?;
    // One drive: the page is made, then Notify dies and the run backs off.
    ensure!(before.run_once().await?, "the run was due");
    drop(before);
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    let first = factory.last_token()?;
    let stored = store.run_steps(run.id).await?;
    assert!(
        !serde_json::to_string(&stored)?.contains(first.as_str()),
        "the page's output holds no link"
    );

    // A fresh process over the same database: it never saw the link.
    let after = Runner::builder(store.clone(), registry)
        .config(fast_config("after-the-restart"))
        .page_factory(Arc::clone(&factory) as Arc<dyn PageFactory>)
        .build();
    tokio::time::sleep(Duration::from_millis(20)).await;
    drain(&after).await?;
    assert_eq!(store.run(run.id).await?.status, RunStatus::Waiting);
    let fresh = factory.last_token()?;
    assert_ne!(fresh, first, "a fresh token was minted");
    assert_eq!(
        *lock(&sent),
        [format!("http://localhost/p/{}", fresh.as_str())],
        "the fresh link is the one sent"
    );
    assert!(
        matches!(
            store.page_by_token(&first.hash()).await,
            Err(StoreError::NotFound)
        ),
        "the link made before the crash no longer opens the page"
    );
    let response = serde_json::to_value(DigestForm {
        archive_ids: vec!["e2".into()],
        note: None,
    })?;
    let outcome = store
        .submit_page(&fresh.hash(), &response, now_ms())
        .await?;
    assert!(matches!(outcome, SubmitOutcome::Submitted(_)));
    after.wake();
    drain(&after).await?;
    let done = store.run(run.id).await?;
    assert_eq!(done.status, RunStatus::Succeeded);
    assert_eq!(done.state["archived"], json!(["e2"]));
    Ok(())
}
