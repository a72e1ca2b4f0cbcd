//! The chat across processes: two orchestrators (two "processes", each with its own pool, bus
//! listener and instance id) over one database. The demo site holds each bulk request at a gate
//! the test opens, so a batch is mid-flight exactly when the test acts: no sleeps.
//!
//! On PostgreSQL a stop sent through one process halts the batch another runs, and the progress
//! of that batch reaches the first one's listeners. On both backends a batch whose process dies is
//! reported as interrupted, with what it did, and is never re-sent.

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use anyhow::Context as _;
use axum::{
    extract::Request,
    middleware::{self, Next},
    response::Response,
};
use tessera::{
    chat::{
        audit::{Approval, ExecutionStatus, NewExecution},
        confirm::ConfirmationId,
        header::StepRole,
        http_executor::{ExecutorConfig, HttpExecutor},
        orchestrator::{ChatEvent, OrchestratorParts, SessionModels},
        session::{MessageChannel, SessionId},
        threads::ThreadId,
        views::item_outcomes,
        CallStatus, CapabilityScope, ChatError, Orchestrator, ThreadStatus,
    },
    demo::items::DemoItems,
    llm::{ScriptedModel, ScriptedTurn},
    store::{now_ms, Store},
};
use tokio::sync::{broadcast, Semaphore};
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::{
    chat::{approve_once, exactly_open, first_confirmation, first_turn, manifest, mark_all_done},
    chat_ui::{approval_action, ask_to_delete_last_months_completed, completed_count, seeded_app},
    helpers::{TestApp, TestDb},
};
use tessera::chat::ScopeRules as _;

/// How long a test waits for something that should happen at once.
const DEADLINE: Duration = Duration::from_secs(30);

/// The demo items service on port 0; every bulk request waits for a permit of `gate`.
struct GatedSite {
    base: Url,
    gate: Arc<Semaphore>,
    bulk_requests: Arc<AtomicUsize>,
    shutdown: CancellationToken,
}

impl Drop for GatedSite {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl GatedSite {
    async fn start(store: &Store) -> anyhow::Result<Self> {
        DemoItems::new(store.clone()).ensure_seeded().await?;
        let gate = Arc::new(Semaphore::new(0));
        let bulk_requests = Arc::new(AtomicUsize::new(0));
        let (waiting, counted) = (gate.clone(), bulk_requests.clone());
        let hold = move |request: Request, next: Next| {
            let (gate, counted) = (waiting.clone(), counted.clone());
            async move {
                if request.uri().path().contains("/bulk-") {
                    counted.fetch_add(1, Ordering::SeqCst);
                    if let Ok(permit) = gate.acquire().await {
                        permit.forget();
                    }
                }
                let response: Response = next.run(request).await;
                response
            }
        };
        let app =
            tessera::demo::items::routes::<()>(store.clone()).layer(middleware::from_fn(hold));
        let (address, shutdown) = crate::helpers::serve_on_loopback(app).await?;
        Ok(Self {
            base: Url::parse(&format!("http://{address}/demo-api"))?,
            gate,
            bulk_requests,
            shutdown,
        })
    }

    fn bulk_requests(&self) -> usize {
        self.bulk_requests.load(Ordering::SeqCst)
    }

    /// Waits until `count` bulk requests reached the site.
    async fn reached(&self, count: usize) -> anyhow::Result<()> {
        poll("bulk requests to reach the site", || async {
            Ok(self.bulk_requests() >= count)
        })
        .await
    }
}

/// Polls `check` until it holds, failing after [`DEADLINE`].
async fn poll<F, Fut>(what: &str, mut check: F) -> anyhow::Result<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<bool>>,
{
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while !check().await? {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "gave up waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// Waits for the first event `wanted` accepts.
async fn next_event(
    events: &mut broadcast::Receiver<ChatEvent>,
    wanted: impl Fn(&ChatEvent) -> bool,
) -> anyhow::Result<ChatEvent> {
    tokio::time::timeout(DEADLINE, async {
        loop {
            let event = events.recv().await?;
            if wanted(&event) {
                return Ok(event);
            }
        }
    })
    .await
    .context("no such event")?
}

/// One "process": an orchestrator over `store` whose model proposes `turns`.
fn process(
    store: &Store,
    site: &GatedSite,
    turns: Vec<ScriptedTurn>,
    lease: Duration,
) -> anyhow::Result<Orchestrator> {
    let manifest = manifest()?;
    let executor = HttpExecutor::new(
        &manifest,
        site.base.clone(),
        ExecutorConfig {
            timeout: Duration::from_secs(60),
            max_retries: 0,
            base_backoff: Duration::from_millis(5),
            max_retry_wait: Duration::from_millis(50),
        },
        &|_| None,
    )?;
    Ok(Orchestrator::with_execution_lease(
        OrchestratorParts {
            store: store.clone(),
            allowlist: CapabilityScope::all_of(&manifest),
            manifest,
            executor,
            models: SessionModels::only("scripted", Arc::new(ScriptedModel::new(turns))),
            clock: Arc::new(now_ms),
            max_model_turns: 8,
        },
        lease,
    ))
}

async fn open_count(store: &Store) -> anyhow::Result<usize> {
    let page = store
        .search_demo_items(&tessera::demo::items::model::ItemFilter {
            status: Some(tessera::demo::items::model::ItemStatus::Open),
            limit: 1000,
            ..Default::default()
        })
        .await?;
    Ok(page.items.len())
}

#[tokio::test]
async fn a_stop_sent_through_another_process_halts_the_batch_and_progress_reaches_it(
) -> anyhow::Result<()> {
    let Some(database) = TestDb::postgres().await? else {
        return Ok(());
    };
    let outcome = stop_and_progress_across_processes(&database).await;
    database.cleanup().await?;
    outcome
}

async fn stop_and_progress_across_processes(database: &TestDb) -> anyhow::Result<()> {
    let (store_a, store_b) = (database.store.clone(), database.reopen().await?);
    let site = GatedSite::start(&store_a).await?;
    let ids = exactly_open(&store_a, 247).await?;
    let lease = Duration::from_secs(60);
    let running_process = process(&store_a, &site, mark_all_done(&ids, []), lease)?;
    let other_process = process(&store_b, &site, Vec::new(), lease)?;
    let shutdown = CancellationToken::new();
    let _stop_on_drop = shutdown.clone().drop_guard();
    let a_tasks = running_process.spawn(&shutdown).await;
    let b_tasks = other_process.spawn(&shutdown).await;

    let (session, proposed) = first_turn(&running_process, "mark all open items as done").await?;
    let confirmation_id = first_confirmation(&proposed)?;
    let mut seen_elsewhere = other_process.subscribe(session.id);
    site.gate.add_permits(1);
    let batch = {
        let orchestrator = running_process.clone();
        tokio::spawn(async move { approve_once(&orchestrator, session.id, confirmation_id).await })
    };

    // The first chunk's progress, made in A, reaches a listener of B.
    let progress = next_event(
        &mut seen_elsewhere,
        |event| matches!(event, ChatEvent::Progress { progress, .. } if progress.chunks_done == 1),
    )
    .await?;
    let ChatEvent::Progress { progress, .. } = progress else {
        anyhow::bail!("not a progress event");
    };
    assert_eq!((progress.items_done, progress.items_total), (100, 247));
    // The second request is at the site (held): stop now, through B.
    site.reached(2).await?;
    let stop = other_process
        .handle_turn(session.id, "actually, stop")
        .await?;
    assert_eq!(stop.route, "override");
    assert!(
        stop.narrative
            .contains("The running work halts before its next request."),
        "{}",
        stop.narrative
    );
    site.gate.add_permits(10);

    let stopped = tokio::time::timeout(DEADLINE, batch).await???;
    let step = stopped.header.steps.first().context("no step")?;
    assert_eq!(step.status, CallStatus::Cancelled);
    assert_eq!(
        step.detail,
        "200 of 247 items done in 2 of 3 chunks (100+100+47); stopped by the person, the rest was not sent"
    );
    assert_eq!(site.bulk_requests(), 2, "the third chunk was never sent");
    assert_eq!(open_count(&store_a).await?, 47);
    // A's reply (B's own stop reply comes first) reaches B's listeners too.
    let reply = next_event(
        &mut seen_elsewhere,
        |event| matches!(event, ChatEvent::Reply { text, .. } if text.contains("bulkUpdateItems")),
    )
    .await?;
    let ChatEvent::Reply { text, .. } = reply else {
        anyhow::bail!("not a reply");
    };
    assert!(
        text.contains("[cancelled] bulkUpdateItems (mutation): 200 of 247 items done"),
        "{text}"
    );

    shutdown.cancel();
    a_tasks.await?;
    b_tasks.await?;
    Ok(())
}

#[tokio::test]
async fn a_batch_whose_process_died_is_reported_interrupted_on_sqlite() -> anyhow::Result<()> {
    let database = TestDb::sqlite().await?;
    let outcome = a_batch_whose_process_died_is_reported_interrupted(&database).await;
    database.cleanup().await?;
    outcome
}

#[tokio::test]
async fn a_batch_whose_process_died_is_reported_interrupted_on_postgres() -> anyhow::Result<()> {
    let Some(database) = TestDb::postgres().await? else {
        return Ok(());
    };
    let outcome = a_batch_whose_process_died_is_reported_interrupted(&database).await;
    database.cleanup().await?;
    outcome
}

async fn a_batch_whose_process_died_is_reported_interrupted(
    database: &TestDb,
) -> anyhow::Result<()> {
    let store = database.store.clone();
    let site = GatedSite::start(&store).await?;
    let ids = exactly_open(&store, 247).await?;
    // Short, so PostgreSQL notices the silence quickly; SQLite needs no lease (one process).
    let lease = Duration::from_millis(600);
    let dying = process(&store, &site, mark_all_done(&ids, []), lease)?;
    let dying_shutdown = CancellationToken::new();
    dying.spawn(&dying_shutdown).await;
    let (session, proposed) = first_turn(&dying, "mark all open items as done").await?;
    let confirmation_id = first_confirmation(&proposed)?;
    site.gate.add_permits(1);
    let batch = {
        let orchestrator = dying.clone();
        tokio::spawn(async move { approve_once(&orchestrator, session.id, confirmation_id).await })
    };
    // Chunk 1 is done and recorded (the checkpoint comes before the next request); chunk 2 is out.
    site.reached(2).await?;

    // The process dies: its task, its heartbeat and its bus go, mid-request.
    batch.abort();
    let _ = batch.await;
    dying_shutdown.cancel();
    drop(dying);

    // Another process (on SQLite: the restarted one) finds the batch and reports it.
    let survivor = process(&store, &site, Vec::new(), lease)?;
    let shutdown = CancellationToken::new();
    let _stop_on_drop = shutdown.clone().drop_guard();
    let tasks = survivor.spawn(&shutdown).await;
    poll("the execution to be reported interrupted", || async {
        Ok(store
            .chat_messages(session.id, MessageChannel::Transcript)
            .await?
            .iter()
            .any(|message| message.body.to_string().contains("[interrupted]")))
    })
    .await?;

    let execution = store
        .chat_executions(session.id)
        .await?
        .into_iter()
        .find(|execution| execution.status == ExecutionStatus::Interrupted)
        .context("no interrupted execution")?;
    assert_eq!((execution.items_done, execution.chunks_done), (100, 1));
    let manifest = manifest()?;
    let operation = manifest
        .operation("bulkUpdateItems")
        .context("no bulkUpdateItems")?;
    let outcomes = item_outcomes(operation, &execution, None);
    let count = |status: &str| outcomes.iter().filter(|item| item.status == status).count();
    assert_eq!(
        (count("succeeded"), count("unknown"), count("not_sent")),
        (100, 100, 47),
        "per item: the first chunk done, the one in flight unknown, the rest not sent"
    );
    assert_eq!(
        outcomes.first().map(|item| item.id.as_str()),
        ids.first().map(String::as_str)
    );

    // The chat (and its JSON API, which serves this view) says so, once, with the items done.
    let view = survivor.session_view(session.id).await?;
    let reports: Vec<_> = view
        .transcript
        .iter()
        .filter(|entry| entry.text.contains("[interrupted]"))
        .collect();
    assert_eq!(reports.len(), 1, "{:#?}", view.transcript);
    let report = reports[0];
    assert!(
        report.text.contains(
            "[interrupted] bulkUpdateItems (mutation): 100 of 247 items done in 1 of 3 chunks"
        ),
        "{}",
        report.text
    );
    assert!(
        report.text.contains("Nothing was resumed"),
        "{}",
        report.text
    );
    let step = report
        .header
        .as_ref()
        .and_then(|header| header.steps.first())
        .context("no header step")?;
    assert_eq!(step.status, CallStatus::Interrupted);
    assert_eq!(step.execution_id, Some(execution.id));
    assert!(view.running.is_empty(), "nothing shows as running");
    let thread = view
        .threads
        .iter()
        .find(|thread| thread.id == execution.thread_id)
        .context("no thread")?;
    assert_eq!(thread.status, ThreadStatus::Failed);
    let json = serde_json::to_value(&view)?;
    assert!(
        json.to_string().contains("\"status\":\"interrupted\""),
        "the JSON view names the status"
    );

    // Approving again does not re-run it: the confirmation was used when the batch began.
    site.gate.add_permits(10);
    let before = site.bulk_requests();
    let again = approve_once(&survivor, session.id, confirmation_id).await;
    assert!(
        matches!(again, Err(ChatError::Conflict(_))),
        "approving an interrupted batch again must not run it: {again:?}"
    );
    assert_eq!(site.bulk_requests(), before, "nothing was re-sent");

    shutdown.cancel();
    tasks.await?;
    Ok(())
}

/// The page after a restart: a call the previous process left running (its row owned by an
/// instance that is gone) is reported on `/chat` and in the JSON API, and is not run again.
#[tokio::test]
async fn the_chat_page_reports_a_call_its_previous_process_left_running() -> anyhow::Result<()> {
    let (app, cookie) = seeded_app().await?;
    let html = ask_to_delete_last_months_completed(&app, &cookie).await?;
    let action = approval_action(&html).context("no pending approval")?;
    let confirmation = action.trim_start_matches("/chat/approvals/").to_owned();
    // What the previous process did before it died: approved, began the call, sent nothing more.
    let row = tessera_store::testing::text_row(
        &app.store,
        "SELECT session_id, thread_id, operation, arguments FROM chat_confirmations WHERE id = $1",
        &[&confirmation],
    )
    .await?;
    let [session, thread, operation, arguments] =
        <[String; 4]>::try_from(row).map_err(|row| anyhow::anyhow!("four columns, not {row:?}"))?;
    tessera_store::testing::execute_on(
        &app.store,
        "UPDATE chat_confirmations SET status = 'approved', scope = 'once' WHERE id = $1",
        &[&confirmation],
    )
    .await?;
    let arguments: serde_json::Value = serde_json::from_str(&arguments)?;
    let items = arguments["ids"].as_array().map_or(0, Vec::len);
    let session_id = SessionId(session.parse()?);
    let execution_id = app
        .store
        .begin_execution(&NewExecution {
            session_id,
            thread_id: ThreadId(thread.parse()?),
            operation,
            arguments,
            role: StepRole::Mutation,
            approval: Approval::Confirmation {
                id: ConfirmationId(confirmation.parse()?),
            },
            items_total: items,
            chunks_total: 1,
            status: ExecutionStatus::Running,
            error: None,
        })
        .await
        .map_err(|error| anyhow::anyhow!("{error:?}"))?;
    app.store
        .checkpoint_execution(execution_id, "a-process-that-died", None, now_ms())
        .await?;
    let before = completed_count(&app.store).await?;

    let restarted = TestApp::builder().dir(app.stop().await?).spawn().await?;
    poll("the chat page to report the interruption", || async {
        let page = restarted.get_with("/chat", &cookie).await?.text().await?;
        Ok(page.contains("[interrupted]"))
    })
    .await?;
    let page = restarted.get_with("/chat", &cookie).await?.text().await?;
    assert!(
        page.contains("data-testid=\"header-step\" data-status=\"interrupted\""),
        "{page}"
    );
    assert!(
        page.contains(&format!(
            "0 of {items} items done; interrupted, not resumed"
        )),
        "{page}"
    );
    assert!(
        page.contains(&format!("0 of {items} items were done; request 1 may or may not have reached the site. Nothing was resumed")),
        "{page}"
    );
    assert!(
        page.contains("data-testid=\"result-view\""),
        "the per-item result is shown"
    );
    assert!(
        approval_action(&page).is_none(),
        "nothing waits for approval"
    );
    let json = restarted
        .get_with(&format!("/api/chat/sessions/{session_id}"), &cookie)
        .await?
        .text()
        .await?;
    assert!(json.contains("\"status\":\"interrupted\""), "{json}");

    // Approving the old confirmation again sends nothing.
    restarted
        .post_form(&action, &cookie, "decision=approve".to_owned())
        .await?;
    assert_eq!(completed_count(&restarted.store).await?, before);
    let executions = restarted.store.chat_executions(session_id).await?;
    assert_eq!(
        executions.len(),
        1 + 1,
        "the preview read and the interrupted call, no more"
    );
    Ok(())
}

/// The store's chat bus: a message larger than a NOTIFY payload reaches the other process, and a
/// process never hears its own messages back.
#[tokio::test]
async fn the_chat_bus_carries_large_messages_to_the_other_processes_only() -> anyhow::Result<()> {
    let Some(database) = TestDb::postgres().await? else {
        return Ok(());
    };
    let outcome = bus_between_two_processes(&database).await;
    database.cleanup().await?;
    outcome
}

async fn bus_between_two_processes(database: &TestDb) -> anyhow::Result<()> {
    let (store_a, store_b) = (database.store.clone(), database.reopen().await?);
    let shutdown = CancellationToken::new();
    let _stop_on_drop = shutdown.clone().drop_guard();
    let mut heard_by_a = store_a
        .listen_chat("a".to_owned(), shutdown.clone())
        .await
        .context("PostgreSQL listens")?;
    let mut heard_by_b = store_b
        .listen_chat("b".to_owned(), shutdown.clone())
        .await
        .context("PostgreSQL listens")?;
    let session = SessionId(uuid::Uuid::new_v4());
    let large = "x".repeat(20_000);
    store_a.publish_chat("a", session, &large).await?;
    store_b.publish_chat("b", session, "from b").await?;

    let received = tokio::time::timeout(DEADLINE, heard_by_b.recv())
        .await?
        .context("b's listener ended")?;
    assert_eq!(received.session_id, session);
    assert_eq!(
        received.body.len(),
        20_000,
        "the whole message, past 8000 bytes"
    );
    let received = tokio::time::timeout(DEADLINE, heard_by_a.recv())
        .await?
        .context("a's listener ended")?;
    assert_eq!(received.body, "from b", "a hears b, not itself");
    Ok(())
}
