//! Chat orchestration end to end, without the UI: a scripted (or the offline) model proposes, the
//! orchestrator decides, and the real demo items service — served on port 0 behind a recording
//! layer — shows what actually reached it. Every test runs on SQLite and on PostgreSQL.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use anyhow::{bail, Context as _};
use axum::{
    body::Body,
    extract::Request,
    middleware::{self, Next},
    response::Response,
};
use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};
use tessera::{
    chat::{
        audit::{Approval, ExecutionStatus},
        calendar::CivilDate,
        confirm::{canonical_json, operation_hash, ConfirmationStatus},
        header::{CallStatus, StepRole},
        http_executor::{ExecutorConfig, HttpExecutor},
        orchestrator::{ChatEvent, OrchestratorParts, SessionModels},
        planner::Planner,
        policy::ConfirmReason,
        ApprovalScope, CapabilityScope, ChatError, ChatSession, ConfirmationId, Manifest,
        Orchestrator, RequestedScope, SessionId, ThreadStatus, TurnOutcome,
    },
    demo::items::{
        model::{ItemFilter, ItemId, ItemPatch, ItemStatus},
        DemoItems, MANIFEST_JSON,
    },
    llm::{ChatResponse, Message, ScriptedModel, ScriptedTurn, ToolCall},
    store::{chat::Decision, now_ms, Store},
};
use url::Url;

use crate::helpers::store_contract;
use tessera::chat::ScopeRules as _;

store_contract!(
    a_simple_query_runs_one_read_and_needs_no_confirmation,
    a_search_the_model_wrote_as_text_runs_as_a_tool_call,
    a_bulk_delete_previews_and_sends_nothing_until_confirmed,
    a_confirmation_is_used_once_and_changed_arguments_need_a_new_one,
    a_247_item_bulk_update_is_chunked_100_100_47_with_progress,
    a_model_that_skips_the_preview_is_stopped_by_code,
    a_model_calling_outside_its_scope_is_refused_and_logged,
    stop_lands_between_chunks_and_finished_chunks_stay_finished,
    an_operation_grant_skips_later_confirmations_but_never_the_preview,
    a_pending_approval_survives_a_new_orchestrator,
    the_offline_planner_deletes_completed_items_from_last_month,
    the_offline_planner_marks_all_open_items_as_done_in_chunks,
    the_offline_planner_shows_items_where_status_is_open,
    slash_commands_are_handled_by_code_and_never_reach_the_model,
    declining_sends_nothing_and_a_no_answers_the_pending_question,
    a_failed_call_is_shown_in_the_header_not_summarised_away,
    a_redirect_withdraws_the_pending_confirmation_and_runs_the_new_request,
);

/// One request that reached the demo site.
#[derive(Clone, Debug)]
pub(crate) struct Recorded {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) ids: Option<usize>,
}

impl Recorded {
    fn is_mutating(&self) -> bool {
        self.method != "GET"
    }
}

/// The demo items service on port 0, recording every request.
pub(crate) struct DemoSite {
    base: Url,
    requests: Arc<Mutex<Vec<Recorded>>>,
    shutdown: tokio_util::sync::CancellationToken,
}

impl Drop for DemoSite {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl DemoSite {
    fn requests(&self) -> Vec<Recorded> {
        self.requests
            .lock()
            .map(|log| log.clone())
            .unwrap_or_default()
    }

    pub(crate) fn mutating(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(Recorded::is_mutating)
            .collect()
    }
}

/// Serves the demo items over `store`; each bulk request waits `bulk_delay` first (to let a test
/// say "stop" mid-batch) and bulk calls fail with 500 from call number `fail_bulk_call` on.
pub(crate) async fn demo_site(
    store: &Store,
    bulk_delay: Duration,
    fail_bulk_call: Option<usize>,
) -> anyhow::Result<DemoSite> {
    DemoItems::new(store.clone()).ensure_seeded().await?;
    let requests: Arc<Mutex<Vec<Recorded>>> = Arc::default();
    let log = requests.clone();
    let recorder = move |request: Request, next: Next| {
        let log = log.clone();
        async move {
            let (parts, body) = request.into_parts();
            let bytes = axum::body::to_bytes(body, 16 * 1024 * 1024)
                .await
                .unwrap_or_default();
            let ids = serde_json::from_slice::<Value>(&bytes)
                .ok()
                .and_then(|body| body.get("ids").and_then(Value::as_array).map(Vec::len));
            let path = parts.uri.path().to_owned();
            let bulk = path.contains("/bulk-");
            let call_number = {
                let mut log = log
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                log.push(Recorded {
                    method: parts.method.to_string(),
                    path,
                    ids,
                });
                log.iter()
                    .filter(|recorded| recorded.path.contains("/bulk-"))
                    .count()
            };
            if bulk && !bulk_delay.is_zero() {
                tokio::time::sleep(bulk_delay).await;
            }
            if bulk && fail_bulk_call.is_some_and(|failing| call_number >= failing) {
                return Response::builder()
                    .status(500)
                    .body(Body::from(
                        "{\"error\":{\"code\":\"internal\",\"message\":\"disk full\"}}",
                    ))
                    .unwrap_or_default();
            }
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
    };
    let app =
        tessera::demo::items::routes::<()>(store.clone()).layer(middleware::from_fn(recorder));
    let (address, shutdown) = crate::helpers::serve_on_loopback(app).await?;
    Ok(DemoSite {
        base: Url::parse(&format!("http://{address}/demo-api"))?,
        requests,
        shutdown,
    })
}

pub(crate) fn manifest() -> anyhow::Result<Arc<Manifest>> {
    Ok(Arc::new(Manifest::from_json(MANIFEST_JSON)?))
}

fn orchestrator_with(
    store: &Store,
    site: &DemoSite,
    models: SessionModels,
    allowlist: Option<CapabilityScope>,
) -> anyhow::Result<Orchestrator> {
    orchestrator_over(store, site, models, allowlist, manifest()?)
}

/// An orchestrator over `manifest` (the demo's, or one changed by a test) and the demo site.
pub(crate) fn orchestrator_over(
    store: &Store,
    site: &DemoSite,
    models: SessionModels,
    allowlist: Option<CapabilityScope>,
    manifest: Arc<Manifest>,
) -> anyhow::Result<Orchestrator> {
    let executor = HttpExecutor::new(
        &manifest,
        site.base.clone(),
        ExecutorConfig {
            timeout: Duration::from_secs(10),
            max_retries: 2,
            base_backoff: Duration::from_millis(5),
            max_retry_wait: Duration::from_millis(50),
        },
        &|_| None,
    )?;
    Ok(Orchestrator::new(OrchestratorParts {
        store: store.clone(),
        allowlist: allowlist.unwrap_or_else(|| CapabilityScope::all_of(&manifest)),
        manifest,
        executor,
        models,
        clock: Arc::new(now_ms),
        max_model_turns: 8,
    }))
}

pub(crate) fn scripted(
    store: &Store,
    site: &DemoSite,
    model: &ScriptedModel,
) -> anyhow::Result<Orchestrator> {
    orchestrator_with(
        store,
        site,
        SessionModels::only("scripted", Arc::new(model.clone())),
        None,
    )
}

pub(crate) fn offline(store: &Store, site: &DemoSite) -> anyhow::Result<Orchestrator> {
    let manifest = manifest()?;
    let planner = Planner::new(manifest, Arc::new(|| CivilDate::from_unix_ms(now_ms())));
    orchestrator_with(
        store,
        site,
        SessionModels::only("heuristic", Arc::new(planner)),
        None,
    )
}

fn call(id: &str, name: &str, arguments: Value) -> ScriptedTurn {
    ScriptedTurn::tool_calls(vec![ToolCall::new(id, name, arguments)])
}

/// The model's turns for "delete these": a preview search with `filters`, the bulk delete of
/// `ids`, then the turns `then`.
pub(crate) fn preview_then_delete(
    filters: Value,
    ids: &[String],
    then: impl IntoIterator<Item = ScriptedTurn>,
) -> Vec<ScriptedTurn> {
    [
        call("c1", "searchItems", filters),
        call("c2", "bulkDeleteItems", json!({"ids": ids})),
    ]
    .into_iter()
    .chain(then)
    .collect()
}

/// The model's turns for "mark all open items as done": a preview search for the open items,
/// the bulk update of `ids` to completed, then the turns `then`.
pub(crate) fn mark_all_done(
    ids: &[String],
    then: impl IntoIterator<Item = ScriptedTurn>,
) -> Vec<ScriptedTurn> {
    [
        call("c1", "searchItems", json!({"status": "open"})),
        call(
            "c2",
            "bulkUpdateItems",
            json!({"ids": ids, "status": "completed"}),
        ),
    ]
    .into_iter()
    .chain(then)
    .collect()
}

/// The ids of the items with `status`, in the API's order.
pub(crate) async fn ids_with_status(
    store: &Store,
    status: ItemStatus,
) -> anyhow::Result<Vec<String>> {
    ids_matching(
        store,
        ItemFilter {
            status: Some(status),
            ..ItemFilter::default()
        },
    )
    .await
}

/// The ids a search with `filter` returns, in the API's order.
pub(crate) async fn ids_matching(store: &Store, filter: ItemFilter) -> anyhow::Result<Vec<String>> {
    let page = store
        .search_demo_items(&ItemFilter {
            limit: 1000,
            ..filter
        })
        .await?;
    Ok(page.items.into_iter().map(|item| item.id.0).collect())
}

/// "From last month" as the planner reads it: the previous calendar month, UTC.
fn last_month() -> (CivilDate, CivilDate) {
    let today = CivilDate::from_unix_ms(now_ms());
    (today.first_of_previous_month(), today.first_of_month())
}

pub(crate) async fn completed_last_month(store: &Store) -> anyhow::Result<(Value, Vec<String>)> {
    let (after, before) = last_month();
    let filters = json!({"status": "completed", "updated_after": after.to_string(), "updated_before": before.to_string()});
    let ids = ids_matching(
        store,
        ItemFilter {
            status: Some(ItemStatus::Completed),
            updated_after_ms: Some(after.start_unix_ms()),
            updated_before_ms: Some(before.start_unix_ms()),
            ..ItemFilter::default()
        },
    )
    .await?;
    if ids.is_empty() {
        bail!("the seed has no completed items last month");
    }
    Ok((filters, ids))
}

/// Leaves exactly `count` open items (the rest in progress) and returns the open ids in API order.
pub(crate) async fn exactly_open(store: &Store, count: usize) -> anyhow::Result<Vec<String>> {
    let all = ids_matching(store, ItemFilter::default()).await?;
    let all: Vec<ItemId> = all.into_iter().map(ItemId).collect();
    let in_progress = ItemPatch {
        status: Some(ItemStatus::InProgress),
        ..ItemPatch::default()
    };
    store
        .bulk_update_demo_items(&all, &in_progress, now_ms() - 1000)
        .await?;
    let open = ItemPatch {
        status: Some(ItemStatus::Open),
        ..ItemPatch::default()
    };
    store
        .bulk_update_demo_items(&all[..count], &open, now_ms())
        .await?;
    let ids = ids_with_status(store, ItemStatus::Open).await?;
    anyhow::ensure!(
        ids.len() == count,
        "expected {count} open items, found {}",
        ids.len()
    );
    Ok(ids)
}

pub(crate) fn statuses(outcome: &TurnOutcome) -> Vec<(String, StepRole, CallStatus)> {
    outcome
        .header
        .steps
        .iter()
        .map(|step| (step.operation.clone(), step.role, step.status))
        .collect()
}

/// One row of [`statuses`]: an operation, its role and its status.
pub(crate) fn step(
    operation: &str,
    role: StepRole,
    status: CallStatus,
) -> (String, StepRole, CallStatus) {
    (operation.to_owned(), role, status)
}

/// What [`statuses`] reads after a proposal: the preview search succeeded and `operation` waits
/// for the person's confirmation.
pub(crate) fn previewed_awaiting(operation: &str) -> Vec<(String, StepRole, CallStatus)> {
    vec![
        step("searchItems", StepRole::Preview, CallStatus::Succeeded),
        step(
            operation,
            StepRole::Mutation,
            CallStatus::AwaitingConfirmation,
        ),
    ]
}

/// Opens a session on `orchestrator` and says `text` in it: the session and the first turn.
pub(crate) async fn first_turn(
    orchestrator: &Orchestrator,
    text: &str,
) -> anyhow::Result<(ChatSession, TurnOutcome)> {
    let session = orchestrator.create_session(None, None).await?;
    let outcome = orchestrator.handle_turn(session.id, text).await?;
    Ok((session, outcome))
}

/// The id of the first confirmation `outcome` waits for.
pub(crate) fn first_confirmation(outcome: &TurnOutcome) -> anyhow::Result<ConfirmationId> {
    Ok(outcome
        .pending_approvals
        .first()
        .context("no approval")?
        .confirmation_id)
}

/// The person approves confirmation `confirmation_id` of `session`, this once.
pub(crate) async fn approve_once(
    orchestrator: &Orchestrator,
    session: SessionId,
    confirmation_id: ConfirmationId,
) -> Result<TurnOutcome, ChatError> {
    orchestrator
        .decide(
            session,
            confirmation_id,
            Decision::Approve(ApprovalScope::Once),
        )
        .await
}

/// The tool results the model was sent in its `index`-th request.
pub(crate) fn tool_results(model: &ScriptedModel, index: usize) -> Vec<(String, Value, bool)> {
    model
        .requests()
        .get(index)
        .map(|request| {
            request
                .messages
                .iter()
                .filter_map(|message| match message {
                    Message::ToolResult {
                        name,
                        content,
                        is_error,
                        ..
                    } => Some((name.clone(), content.clone(), *is_error)),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn a_simple_query_runs_one_read_and_needs_no_confirmation(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let completed = ids_with_status(store, ItemStatus::Completed).await?;
    let model = ScriptedModel::new(vec![
        call("c1", "searchItems", json!({"status": "completed"})),
        ScriptedTurn::text(format!("There are {} completed items.", completed.len())),
    ]);
    let orchestrator = scripted(store, &site, &model)?;
    let (_, outcome) = first_turn(&orchestrator, "show completed items").await?;

    assert_eq!(outcome.route, "new_request");
    assert_eq!(
        statuses(&outcome),
        vec![step("searchItems", StepRole::Read, CallStatus::Succeeded)]
    );
    assert_eq!(
        outcome.header.steps[0].detail,
        format!("{} items", completed.len())
    );
    assert!(
        outcome
            .reply
            .starts_with("Execution: 1 step (1 succeeded)\n1. [ok] searchItems (read)"),
        "{}",
        outcome.reply
    );
    assert!(outcome
        .reply
        .ends_with(&format!("There are {} completed items.", completed.len())));
    assert!(outcome.pending_approvals.is_empty());
    assert_eq!(outcome.thread_status, Some(ThreadStatus::Done));
    let requests = site.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        (requests[0].method.as_str(), requests[0].path.as_str()),
        ("GET", "/demo-api/items")
    );
    // The model saw the search result, and was offered every operation of the site.
    let results = tool_results(&model, 1);
    assert_eq!(results.len(), 1);
    assert_eq!(
        results[0].1["items"].as_array().map(Vec::len),
        Some(completed.len())
    );
    assert_eq!(model.requests()[0].tools.len(), 7);
    Ok(())
}

/// A small model that writes its call as fenced JSON instead of `tool_calls` still gets it run,
/// through the same gate, and sees its result as a tool result.
async fn a_search_the_model_wrote_as_text_runs_as_a_tool_call(store: &Store) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let model = ScriptedModel::new(vec![
        ScriptedTurn::text(
            "Let me look.\n```json\n{\"name\": \"searchItems\", \"arguments\": {\"status\": \"completed\"}}\n```",
        ),
        ScriptedTurn::text("Those are the completed items."),
    ]);
    let orchestrator = scripted(store, &site, &model)?;
    let (_, outcome) = first_turn(&orchestrator, "show completed items").await?;
    assert_eq!(
        statuses(&outcome),
        vec![step("searchItems", StepRole::Read, CallStatus::Succeeded)]
    );
    assert_eq!(site.requests().len(), 1, "the search was sent once");
    let results = tool_results(&model, 1);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "searchItems");
    assert!(!results[0].2, "{:?}", results[0].1);
    assert!(outcome.reply.ends_with("Those are the completed items."));
    Ok(())
}

async fn a_bulk_delete_previews_and_sends_nothing_until_confirmed(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let (filters, ids) = completed_last_month(store).await?;
    let model = ScriptedModel::new(preview_then_delete(
        filters,
        &ids,
        [ScriptedTurn::text(format!(
            "Deleted {} completed items from last month.",
            ids.len()
        ))],
    ));
    let orchestrator = scripted(store, &site, &model)?;
    let session = orchestrator.create_session(None, None).await?;
    let mut events = orchestrator.subscribe(session.id);

    let proposed = orchestrator
        .handle_turn(session.id, "delete all completed items from last month")
        .await?;

    // Nothing that changes state reached the site: only the preview search did.
    assert!(site.mutating().is_empty(), "{:?}", site.requests());
    assert_eq!(site.requests().len(), 1);
    assert_eq!(ids_matching(store, ItemFilter::default()).await?.len(), 250);
    assert_eq!(statuses(&proposed), previewed_awaiting("bulkDeleteItems"));
    assert_eq!(proposed.thread_status, Some(ThreadStatus::WorkflowProposed));
    // The confirmation is bound to SHA-256 of the exact operation and canonical arguments.
    let expected_hash = {
        let mut hasher = Sha256::new();
        hasher.update(
            format!(
                "tessera.chat.operation.v1\nbulkDeleteItems\n{}",
                canonical_json(&json!({"ids": ids}))
            )
            .as_bytes(),
        );
        hex::encode(hasher.finalize())
    };
    let [approval] = proposed.pending_approvals.as_slice() else {
        bail!(
            "expected one pending approval, got {:?}",
            proposed.pending_approvals
        );
    };
    assert_eq!(approval.hash.0, expected_hash);
    assert_eq!(
        approval.hash,
        operation_hash("bulkDeleteItems", &json!({"ids": ids}))
    );
    assert_eq!(approval.preview.count, ids.len());
    assert_eq!(
        approval.preview.items.len(),
        ids.len(),
        "every affected row is in the preview"
    );
    assert!(approval.destructive);
    assert!(approval.reasons.contains(&ConfirmReason::Delete));
    assert!(approval.reasons.contains(&ConfirmReason::MutatingBatch));
    assert!(proposed.reply.starts_with("Execution: 2 steps (1 succeeded, 1 awaiting confirmation)\n1. [ok] searchItems (preview)"), "{}", proposed.reply);
    assert!(proposed.reply.contains(&format!("2. [awaiting confirmation] bulkDeleteItems (mutation): `bulkDeleteItems` on {} items; nothing sent yet; hash {}", ids.len(), &expected_hash[..12])), "{}", proposed.reply);
    assert!(
        proposed.narrative.starts_with("Approve `bulkDeleteItems`"),
        "{}",
        proposed.narrative
    );
    let mut saw_request = false;
    while let Ok(event) = events.try_recv() {
        saw_request |= matches!(event, ChatEvent::ApprovalRequested { .. });
    }
    assert!(saw_request, "the approval was announced to listeners");

    // "yes" answers the pending yes/no question: the exact confirmed call runs, once.
    let done = orchestrator.handle_turn(session.id, "yes").await?;
    assert_eq!(done.route, "answer_to_pending");
    let mutating = site.mutating();
    assert_eq!(mutating.len(), 1);
    assert_eq!(
        (mutating[0].path.as_str(), mutating[0].ids),
        ("/demo-api/items/bulk-delete", Some(ids.len()))
    );
    assert_eq!(
        ids_matching(store, ItemFilter::default()).await?.len(),
        250 - ids.len()
    );
    assert_eq!(
        statuses(&done),
        vec![step(
            "bulkDeleteItems",
            StepRole::Mutation,
            CallStatus::Succeeded
        )]
    );
    assert_eq!(
        done.header.steps[0]
            .hash
            .as_ref()
            .map(|hash| hash.0.as_str()),
        Some(expected_hash.as_str())
    );
    assert!(done.reply.starts_with(&format!("Execution: 1 step (1 succeeded)\n1. [ok] bulkDeleteItems (mutation): {n} of {n} items done; hash {}", &expected_hash[..12], n = ids.len())), "{}", done.reply);
    assert_eq!(done.thread_status, Some(ThreadStatus::Done));
    let confirmation = store
        .confirmation(session.id, approval.confirmation_id)
        .await?;
    assert_eq!(confirmation.status, ConfirmationStatus::Consumed);
    let executions = store.chat_executions(session.id).await?;
    let mutation = executions
        .iter()
        .find(|execution| execution.role == StepRole::Mutation)
        .context("no mutation recorded")?;
    assert_eq!(
        mutation.approval,
        Approval::Confirmation {
            id: approval.confirmation_id
        }
    );
    assert_eq!(mutation.status, ExecutionStatus::Succeeded);
    Ok(())
}

async fn a_confirmation_is_used_once_and_changed_arguments_need_a_new_one(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let (filters, ids) = completed_last_month(store).await?;
    let first: Vec<String> = ids.iter().take(2).cloned().collect();
    let changed: Vec<String> = ids.iter().skip(2).take(2).cloned().collect();
    anyhow::ensure!(changed.len() == 2, "need four completed items last month");
    let model = ScriptedModel::new(preview_then_delete(
        filters.clone(),
        &first,
        [
            ScriptedTurn::text("Deleted two."),
            // The next request previews again, then changes the arguments of the approved operation.
            call("c3", "searchItems", filters),
            call("c4", "bulkDeleteItems", json!({"ids": changed})),
        ],
    ));
    let orchestrator = scripted(store, &site, &model)?;
    let (session, proposed) =
        first_turn(&orchestrator, "delete all completed items from last month").await?;
    let first_confirmation = first_confirmation(&proposed)?;
    approve_once(&orchestrator, session.id, first_confirmation).await?;
    assert_eq!(site.mutating().len(), 1);

    // Deciding the same confirmation again is refused: it is no longer pending.
    let again = approve_once(&orchestrator, session.id, first_confirmation).await;
    assert!(
        matches!(again, Err(tessera::chat::ChatError::Conflict(_))),
        "{again:?}"
    );

    // New arguments, new hash, new confirmation: nothing is sent.
    let changed_turn = orchestrator
        .handle_turn(session.id, "also delete the next two")
        .await?;
    assert_eq!(
        site.mutating().len(),
        1,
        "no second mutating call without a new confirmation"
    );
    let [approval] = changed_turn.pending_approvals.as_slice() else {
        bail!(
            "expected a new approval, got {:?}",
            changed_turn.pending_approvals
        );
    };
    assert_ne!(approval.confirmation_id, first_confirmation);
    assert_eq!(
        approval.hash,
        operation_hash("bulkDeleteItems", &json!({"ids": changed}))
    );
    assert_eq!(
        statuses(&changed_turn),
        previewed_awaiting("bulkDeleteItems")
    );
    Ok(())
}

async fn a_247_item_bulk_update_is_chunked_100_100_47_with_progress(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let ids = exactly_open(store, 247).await?;
    let model = ScriptedModel::new(mark_all_done(
        &ids,
        [ScriptedTurn::text("Marked 247 items as completed.")],
    ));
    let orchestrator = scripted(store, &site, &model)?;
    let (session, proposed) = first_turn(&orchestrator, "mark all open items as done").await?;
    assert!(site.mutating().is_empty());
    let approval = proposed.pending_approvals.first().context("no approval")?;
    assert_eq!(approval.preview.chunks, vec![100, 100, 47]);
    assert!(approval
        .reasons
        .contains(&ConfirmReason::ManyItems { count: 247 }));
    assert!(!approval.destructive);

    let mut listener = orchestrator.subscribe(session.id);
    let done = approve_once(&orchestrator, session.id, approval.confirmation_id).await?;

    // Three requests of 100, 100 and 47 ids reached the site, in that order.
    let chunks: Vec<Option<usize>> = site
        .mutating()
        .iter()
        .map(|recorded| recorded.ids)
        .collect();
    assert_eq!(chunks, vec![Some(100), Some(100), Some(47)]);
    assert!(site
        .mutating()
        .iter()
        .all(|recorded| recorded.path == "/demo-api/items/bulk-update"));
    // Progress events after each chunk, in the outcome and to listeners.
    let progress: Vec<usize> = done
        .events
        .iter()
        .filter_map(|event| match event {
            ChatEvent::Progress { progress, .. } => Some(progress.items_done),
            _ => None,
        })
        .collect();
    assert_eq!(progress, vec![0, 100, 200, 247]);
    let mut heard = Vec::new();
    while let Ok(event) = listener.try_recv() {
        if let ChatEvent::Progress { progress, .. } = event {
            heard.push((progress.chunks_done, progress.chunks_total));
        }
    }
    assert_eq!(heard, vec![(0, 3), (1, 3), (2, 3), (3, 3)]);
    let step = done.header.steps.first().context("no step")?;
    assert_eq!(step.status, CallStatus::Succeeded);
    assert_eq!(
        step.chunks.as_ref().map(|chunks| chunks.sizes.clone()),
        Some(vec![100, 100, 47])
    );
    assert!(done.reply.starts_with("Execution: 1 step (1 succeeded)\n1. [ok] bulkUpdateItems (mutation): 247 of 247 items done in 3 of 3 chunks (100+100+47)"), "{}", done.reply);
    let still_open = ids_with_status(store, ItemStatus::Open).await?;
    assert!(still_open.is_empty());
    let execution = store
        .chat_executions(session.id)
        .await?
        .into_iter()
        .find(|execution| execution.role == StepRole::Mutation)
        .context("no execution")?;
    assert_eq!(
        (
            execution.chunks_done,
            execution.chunks_total,
            execution.items_done
        ),
        (3, 3, 247)
    );
    Ok(())
}

async fn a_model_that_skips_the_preview_is_stopped_by_code(store: &Store) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let (_, ids) = completed_last_month(store).await?;
    let model = ScriptedModel::new(vec![
        call("c1", "bulkDeleteItems", json!({"ids": ids})),
        ScriptedTurn::text("Done!"),
    ]);
    let orchestrator = scripted(store, &site, &model)?;
    let (session, outcome) =
        first_turn(&orchestrator, "delete all completed items from last month").await?;

    assert!(
        site.requests().is_empty(),
        "nothing reached the site: {:?}",
        site.requests()
    );
    assert!(
        outcome.pending_approvals.is_empty(),
        "no confirmation is even offered without a preview"
    );
    assert_eq!(
        statuses(&outcome),
        vec![step(
            "bulkDeleteItems",
            StepRole::Mutation,
            CallStatus::Refused
        )]
    );
    let error = outcome.header.steps[0].error.clone().unwrap_or_default();
    assert!(error.starts_with("preview required: `bulkDeleteItems` changes items no preview in this conversation has shown; call `searchItems` first"), "{error}");
    // The header shows the refusal even though the model's narrative claims success.
    assert!(
        outcome
            .reply
            .starts_with("Execution: 1 step (1 refused)\n1. [refused] bulkDeleteItems (mutation)"),
        "{}",
        outcome.reply
    );
    assert!(outcome.reply.ends_with("Done!"));
    let results = tool_results(&model, 1);
    assert_eq!(results.len(), 1);
    assert!(results[0].2, "the model was told it failed");
    assert_eq!(results[0].1["refused_by"], "code");
    let refused = store.chat_executions(session.id).await?;
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0].status, ExecutionStatus::Refused);
    Ok(())
}

async fn a_model_calling_outside_its_scope_is_refused_and_logged(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let manifest = manifest()?;
    let model = ScriptedModel::new(vec![
        ScriptedTurn::tool_calls(vec![
            ToolCall::new("c1", "bulkDeleteItems", json!({"ids": ["item-0001"]})),
            ToolCall::new("c2", "dropDatabase", json!({})),
            ToolCall::new("c3", "searchItems", json!({"status": "open"})),
        ])
        .expecting_tools(["searchItems", "getItem"]),
        ScriptedTurn::text("I could only search."),
    ]);
    // The server allows reads only; the client asks for more, and the request is intersected.
    let orchestrator = orchestrator_with(
        store,
        &site,
        SessionModels::only("scripted", Arc::new(model.clone())),
        Some(CapabilityScope::read_only(&manifest)),
    )?;
    let requested = RequestedScope {
        operations: Some(vec![
            "searchItems".into(),
            "getItem".into(),
            "bulkDeleteItems".into(),
        ]),
        entities: None,
    };
    let session = orchestrator.create_session(Some(&requested), None).await?;
    assert!(
        !session.scope.operations.contains("bulkDeleteItems"),
        "a requested scope is never trusted"
    );

    let outcome = orchestrator.handle_turn(session.id, "clean up").await?;
    assert!(site.mutating().is_empty());
    assert_eq!(
        statuses(&outcome),
        vec![
            step("bulkDeleteItems", StepRole::Mutation, CallStatus::Refused),
            step("dropDatabase", StepRole::Read, CallStatus::Refused),
            step("searchItems", StepRole::Read, CallStatus::Succeeded),
        ]
    );
    assert_eq!(
        outcome.header.steps[0].error.as_deref(),
        Some("`bulkDeleteItems` is outside this session's capability scope")
    );
    assert_eq!(
        outcome.header.steps[1].error.as_deref(),
        Some("`dropDatabase` is not an operation of this site")
    );
    let audit = store.chat_executions(session.id).await?;
    assert_eq!(
        audit
            .iter()
            .filter(|execution| execution.status == ExecutionStatus::Refused)
            .count(),
        2
    );
    assert_eq!(model.remaining_turns(), 0);
    Ok(())
}

async fn stop_lands_between_chunks_and_finished_chunks_stay_finished(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::from_millis(400), None).await?;
    let ids = exactly_open(store, 247).await?;
    let model = ScriptedModel::new(mark_all_done(&ids, []));
    let orchestrator = scripted(store, &site, &model)?;
    let (session, proposed) = first_turn(&orchestrator, "mark all open items as done").await?;
    let confirmation_id = first_confirmation(&proposed)?;

    let mut listener = orchestrator.subscribe(session.id);
    let running = {
        let orchestrator = orchestrator.clone();
        tokio::spawn(async move { approve_once(&orchestrator, session.id, confirmation_id).await })
    };
    // Wait until the first chunk is done, then nudge and stop.
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(event) = listener.recv().await {
            if matches!(&event, ChatEvent::Progress { progress, .. } if progress.chunks_done == 1) {
                return;
            }
        }
    })
    .await
    .context("no progress event")?;
    let nudge = orchestrator.handle_turn(session.id, "any luck?").await?;
    assert_eq!(nudge.route, "status_nudge");
    assert!(
        nudge
            .narrative
            .starts_with("Still working on `bulkUpdateItems`: 100 of 247 items done."),
        "{}",
        nudge.narrative
    );
    assert!(
        nudge
            .reply
            .contains("[running] bulkUpdateItems (mutation): 100 of 247 items done"),
        "{}",
        nudge.reply
    );
    let stop = orchestrator
        .handle_turn(session.id, "actually, stop")
        .await?;
    assert_eq!(stop.route, "override");
    assert!(
        stop.narrative
            .contains("The running work halts before its next request."),
        "{}",
        stop.narrative
    );

    let interrupted = running.await??;
    let step = interrupted.header.steps.first().context("no step")?;
    assert_eq!(step.status, CallStatus::Cancelled);
    let chunks = site.mutating().len();
    assert!(
        chunks < 3,
        "the batch stopped between chunks, after {chunks}"
    );
    let done = chunks * 100;
    assert_eq!(step.detail, format!("{done} of 247 items done in {chunks} of 3 chunks (100+100+47); stopped by the person, the rest was not sent"));
    // Finished chunks stay finished: exactly those items changed.
    let still_open = ids_with_status(store, ItemStatus::Open).await?;
    assert_eq!(still_open.len(), 247 - done);
    assert!(
        interrupted
            .narrative
            .starts_with("Stopped at your request."),
        "{}",
        interrupted.narrative
    );
    assert_eq!(interrupted.thread_status, Some(ThreadStatus::Failed));
    Ok(())
}

async fn an_operation_grant_skips_later_confirmations_but_never_the_preview(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let (filters, ids) = completed_last_month(store).await?;
    anyhow::ensure!(ids.len() >= 3, "need three completed items last month");
    let model = ScriptedModel::new(preview_then_delete(
        filters.clone(),
        &ids[..1],
        [
            ScriptedTurn::text("Deleted one."),
            // Next request, same thread rules: a fresh thread must preview again, then runs unasked.
            call("c3", "bulkDeleteItems", json!({"ids": [ids[1]]})),
            call("c4", "searchItems", filters),
            call("c5", "bulkDeleteItems", json!({"ids": [ids[1], ids[2]]})),
            ScriptedTurn::text("Deleted two more."),
        ],
    ));
    let orchestrator = scripted(store, &site, &model)?;
    let (session, proposed) = first_turn(&orchestrator, "delete the first completed item").await?;
    let confirmation_id = first_confirmation(&proposed)?;
    orchestrator
        .decide(
            session.id,
            confirmation_id,
            Decision::Approve(ApprovalScope::Operation),
        )
        .await?;
    assert_eq!(store.chat_grants(session.id).await?.operations.len(), 1);

    let next = orchestrator
        .handle_turn(session.id, "delete two more completed items")
        .await?;
    assert_eq!(
        statuses(&next),
        vec![
            step("bulkDeleteItems", StepRole::Mutation, CallStatus::Refused),
            step("searchItems", StepRole::Preview, CallStatus::Succeeded),
            step("bulkDeleteItems", StepRole::Mutation, CallStatus::Succeeded),
        ]
    );
    assert!(
        next.pending_approvals.is_empty(),
        "the grant covers the confirmation"
    );
    assert_eq!(site.mutating().len(), 2);
    let granted = store
        .chat_executions(session.id)
        .await?
        .into_iter()
        .rfind(|execution| {
            execution.status == ExecutionStatus::Succeeded && execution.role == StepRole::Mutation
        })
        .context("no granted execution")?;
    assert_eq!(
        granted.approval,
        Approval::Grant {
            operation: "bulkDeleteItems".into()
        }
    );
    Ok(())
}

async fn a_pending_approval_survives_a_new_orchestrator(store: &Store) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let (filters, ids) = completed_last_month(store).await?;
    let before = ScriptedModel::new(preview_then_delete(filters, &ids, []));
    let session = {
        let orchestrator = scripted(store, &site, &before)?;
        let (session, _) =
            first_turn(&orchestrator, "delete all completed items from last month").await?;
        session
    };
    // A restart: a new orchestrator over the same store, nothing in memory.
    let after = ScriptedModel::new(vec![ScriptedTurn::text("Deleted them.")]);
    let orchestrator = scripted(store, &site, &after)?;
    let view = orchestrator.session_view(session.id).await?;
    let [approval] = view.pending_approvals.as_slice() else {
        bail!(
            "expected the pending approval after a restart, got {:?}",
            view.pending_approvals
        );
    };
    assert_eq!(approval.preview.count, ids.len());
    assert_eq!(view.transcript.len(), 2);
    assert!(view.transcript[1].text.starts_with("Execution: 2 steps"));
    assert_eq!(
        view.threads.first().map(|thread| thread.status),
        Some(ThreadStatus::WorkflowProposed)
    );
    let done = orchestrator.handle_turn(session.id, "go ahead").await?;
    assert_eq!(
        statuses(&done),
        vec![step(
            "bulkDeleteItems",
            StepRole::Mutation,
            CallStatus::Succeeded
        )]
    );
    assert_eq!(site.mutating().len(), 1);
    Ok(())
}

async fn the_offline_planner_deletes_completed_items_from_last_month(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let (_, ids) = completed_last_month(store).await?;
    let orchestrator = offline(store, &site)?;
    let (session, proposed) =
        first_turn(&orchestrator, "delete all completed items from last month").await?;
    assert!(site.mutating().is_empty());
    // The same proposal a model makes: preview search, then the bulk delete of exactly its ids.
    let approval = proposed.pending_approvals.first().context("no approval")?;
    assert_eq!(approval.operation, "bulkDeleteItems");
    assert_eq!(
        approval.hash,
        operation_hash("bulkDeleteItems", &json!({"ids": ids}))
    );
    assert_eq!(statuses(&proposed), previewed_awaiting("bulkDeleteItems"));
    let done = orchestrator.handle_turn(session.id, "yes").await?;
    assert_eq!(done.narrative, format!("Deleted {} items.", ids.len()));
    assert_eq!(site.mutating().len(), 1);
    let threads = store.chat_threads(session.id).await?;
    assert_eq!(threads[0].intent, "delete items");
    Ok(())
}

async fn the_offline_planner_marks_all_open_items_as_done_in_chunks(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let ids = exactly_open(store, 247).await?;
    let orchestrator = offline(store, &site)?;
    let (session, proposed) = first_turn(&orchestrator, "mark all open items as done").await?;
    let approval = proposed.pending_approvals.first().context("no approval")?;
    assert_eq!(
        approval.hash,
        operation_hash(
            "bulkUpdateItems",
            &json!({"ids": ids, "status": "completed"})
        )
    );
    assert_eq!(approval.preview.chunks, vec![100, 100, 47]);
    let done = approve_once(&orchestrator, session.id, approval.confirmation_id).await?;
    assert_eq!(
        site.mutating()
            .iter()
            .map(|recorded| recorded.ids)
            .collect::<Vec<_>>(),
        vec![Some(100), Some(100), Some(47)]
    );
    assert_eq!(done.narrative, "Updated 247 items.");
    Ok(())
}

async fn the_offline_planner_shows_items_where_status_is_open(store: &Store) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let open = ids_with_status(store, ItemStatus::Open).await?;
    let orchestrator = offline(store, &site)?;
    let (session, outcome) = first_turn(&orchestrator, "show items where status is open").await?;
    assert_eq!(
        statuses(&outcome),
        vec![step("searchItems", StepRole::Read, CallStatus::Succeeded)]
    );
    assert_eq!(
        outcome.narrative,
        format!("Found {} items matching your request.", open.len())
    );
    assert_eq!(site.requests().len(), 1);
    let understood = orchestrator
        .handle_turn(session.id, "what is the meaning of life")
        .await?;
    assert!(understood.header.steps.is_empty());
    assert!(
        understood.narrative.contains("/tools"),
        "{}",
        understood.narrative
    );
    Ok(())
}

async fn slash_commands_are_handled_by_code_and_never_reach_the_model(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let model = ScriptedModel::new(vec![]);
    let orchestrator = scripted(store, &site, &model)?;
    let (session, help) = first_turn(&orchestrator, "/help").await?;
    assert_eq!(help.route, "slash");
    assert!(help.narrative.contains("/tool NAME --field value"));
    assert!(help.reply.starts_with("Execution: no operations ran."));
    let tools = orchestrator.handle_turn(session.id, "/tools").await?;
    assert!(
        tools
            .narrative
            .contains("bulkDeleteItems (model and manual)"),
        "{}",
        tools.narrative
    );
    assert!(tools.narrative.contains("A person must confirm it."));
    // Each rule is its own sentence after the description, and the list is headed once.
    assert!(
        tools
            .narrative
            .lines()
            .filter(|line| line.contains(" A person must"))
            .all(|line| line.contains(". A person must")),
        "{}",
        tools.narrative
    );
    assert!(
        tools
            .narrative
            .starts_with("What this chat can run (by hand: /tool NAME --field value):\n"),
        "{}",
        tools.narrative
    );
    let model_line = orchestrator.handle_turn(session.id, "/model").await?;
    assert_eq!(
        model_line.narrative,
        "This chat uses `scripted`. Available: scripted."
    );

    // A manual tool through the same gate: a create runs at once…
    let created = orchestrator
        .handle_turn(
            session.id,
            r#"/tool createItem --title "Buy oat milk" --priority high"#,
        )
        .await?;
    assert_eq!(
        statuses(&created),
        vec![step(
            "createItem",
            StepRole::Mutation,
            CallStatus::Succeeded
        )]
    );
    let created_id = created.header.steps[0]
        .result
        .as_ref()
        .and_then(|result| result["id"].as_str())
        .context("no id")?
        .to_owned();
    // …a bad value is refused by the form decoder before anything is sent…
    let bad = orchestrator
        .handle_turn(session.id, "/tool createItem --title x --priority urgent")
        .await?;
    assert!(bad.header.steps.is_empty());
    assert!(
        bad.narrative.starts_with("`createItem` was not run:"),
        "{}",
        bad.narrative
    );
    // …and a delete still needs a confirmation.
    let delete = orchestrator
        .handle_turn(session.id, &format!("/tool deleteItem --id {created_id}"))
        .await?;
    assert_eq!(
        statuses(&delete),
        vec![step(
            "deleteItem",
            StepRole::Mutation,
            CallStatus::AwaitingConfirmation
        )]
    );
    let approval = delete.pending_approvals.first().context("no approval")?;
    let deleted = approve_once(&orchestrator, session.id, approval.confirmation_id).await?;
    assert_eq!(
        statuses(&deleted),
        vec![step(
            "deleteItem",
            StepRole::Mutation,
            CallStatus::Succeeded
        )]
    );
    assert_eq!(
        site.mutating()
            .iter()
            .map(|recorded| recorded.method.as_str())
            .collect::<Vec<_>>(),
        vec!["POST", "DELETE"]
    );

    let status = orchestrator.handle_turn(session.id, "/status").await?;
    assert!(
        status
            .narrative
            .contains("0 confirmations waiting for you."),
        "{}",
        status.narrative
    );
    let unknown = orchestrator.handle_turn(session.id, "/frobnicate").await?;
    assert_eq!(
        unknown.narrative,
        "unknown command `/frobnicate`; type /help for the list"
    );
    let cleared = orchestrator.handle_turn(session.id, "/clear").await?;
    assert!(cleared.narrative.starts_with("Cleared."));
    assert_eq!(
        orchestrator.transcript(session.id).await?.len(),
        1,
        "only the reply to /clear remains"
    );
    assert!(
        model.requests().is_empty(),
        "no slash command reached the model"
    );
    Ok(())
}

async fn declining_sends_nothing_and_a_no_answers_the_pending_question(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let (filters, ids) = completed_last_month(store).await?;
    let model = ScriptedModel::new(preview_then_delete(filters, &ids, []));
    let orchestrator = scripted(store, &site, &model)?;
    let (session, proposed) =
        first_turn(&orchestrator, "delete all completed items from last month").await?;
    // "ok" and "thanks" are filler: they never approve a deletion.
    let filler = orchestrator.handle_turn(session.id, "ok").await?;
    assert_eq!(filler.route, "filler");
    assert!(
        filler
            .narrative
            .starts_with("Noted. Still waiting for you: Approve `bulkDeleteItems`"),
        "{}",
        filler.narrative
    );
    assert_eq!(filler.pending_approvals.len(), 1);
    let declined = orchestrator.handle_turn(session.id, "no").await?;
    assert_eq!(declined.route, "answer_to_pending");
    assert_eq!(
        statuses(&declined),
        vec![step(
            "bulkDeleteItems",
            StepRole::Mutation,
            CallStatus::Declined
        )]
    );
    assert_eq!(declined.narrative, "Declined. Nothing was changed.");
    assert!(declined.pending_approvals.is_empty());
    assert!(site.mutating().is_empty());
    let confirmation_id = first_confirmation(&proposed)?;
    assert_eq!(
        store
            .confirmation(session.id, confirmation_id)
            .await?
            .status,
        ConfirmationStatus::Denied
    );
    Ok(())
}

async fn a_failed_call_is_shown_in_the_header_not_summarised_away(
    store: &Store,
) -> anyhow::Result<()> {
    // The second bulk request fails with 500: chunk 1 stays done, chunk 3 is never sent.
    let site = demo_site(store, Duration::ZERO, Some(2)).await?;
    let ids = exactly_open(store, 247).await?;
    let model = ScriptedModel::new(mark_all_done(
        &ids,
        [ScriptedTurn::reply(ChatResponse::text(
            "All 247 items are done!",
        ))],
    ));
    let orchestrator = scripted(store, &site, &model)?;
    let (session, proposed) = first_turn(&orchestrator, "mark all open items as done").await?;
    let confirmation_id = first_confirmation(&proposed)?;
    let done = approve_once(&orchestrator, session.id, confirmation_id).await?;
    assert_eq!(
        site.mutating().len(),
        2,
        "the batch stopped at the failed chunk"
    );
    assert!(
        done.reply.starts_with("Execution: 1 step (1 failed)\n1. [failed] bulkUpdateItems (mutation): 100 of 247 items done in 1 of 3 chunks (100+100+47); hash "),
        "{}",
        done.reply
    );
    assert!(
        done.reply.contains(" | error: chunk 2 of 3 failed: HTTP 500: {\"error\":{\"code\":\"internal\",\"message\":\"disk full\"}}"),
        "{}",
        done.reply
    );
    // The model's cheerful narrative comes after the header, which it cannot change.
    assert!(done.reply.ends_with("All 247 items are done!"));
    assert_eq!(done.thread_status, Some(ThreadStatus::Failed));
    let told = tool_results(&model, 2);
    let (_, content, is_error) = told.last().context("no result")?;
    assert!(is_error);
    assert_eq!(content["result"]["chunks"][2]["status"], "not_sent");
    Ok(())
}

async fn a_redirect_withdraws_the_pending_confirmation_and_runs_the_new_request(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let orchestrator = offline(store, &site)?;
    let (session, proposed) =
        first_turn(&orchestrator, "delete all completed items from last month").await?;
    let confirmation_id = first_confirmation(&proposed)?;
    // "actually … instead" beats the pending yes/no question: the deletion is withdrawn and the
    // new request runs in a new thread.
    let redirected = orchestrator
        .handle_turn(
            session.id,
            "actually, show items where status is open instead",
        )
        .await?;
    assert_eq!(redirected.route, "override");
    assert!(redirected.pending_approvals.is_empty());
    assert_eq!(
        store
            .confirmation(session.id, confirmation_id)
            .await?
            .status,
        ConfirmationStatus::Denied
    );
    assert_eq!(
        statuses(&redirected),
        vec![step("searchItems", StepRole::Read, CallStatus::Succeeded)]
    );
    assert!(
        redirected
            .narrative
            .starts_with("Stopped. 1 pending confirmation withdrawn; nothing was sent for it."),
        "{}",
        redirected.narrative
    );
    assert!(site.mutating().is_empty());
    let threads = store.chat_threads(session.id).await?;
    assert_eq!(
        threads
            .iter()
            .map(|thread| thread.status)
            .collect::<Vec<_>>(),
        vec![ThreadStatus::Failed, ThreadStatus::Done]
    );
    // A late "yes" no longer approves anything: the question was withdrawn with the thread.
    let late = orchestrator.handle_turn(session.id, "yes").await?;
    assert_ne!(late.route, "answer_to_pending");
    assert!(site.mutating().is_empty());
    Ok(())
}
