//! Generated chat views and what a person's answer to them may approve: views come from the
//! catalog through the agent loop (a scripted model, or offline the heuristic), code overrides
//! what matters (the count, the buttons, the scopes), a selection only narrows, and approval
//! scopes reach exactly as far as chosen. Every test runs on SQLite and on PostgreSQL.

use std::time::Duration;

use anyhow::Context as _;
use leptos::prelude::*;
use serde_json::{json, Value};
use tessera::{
    chat::{
        audit::{Approval, Execution, ExecutionStatus},
        confirm::{operation_hash, ConfirmationPreview, ConfirmationStatus},
        header::StepRole,
        policy::ConfirmReason,
        views::{self, ViewKind},
        ApprovalScope, ChatError, ConfirmationId, ExecutionId, OperationHash, PendingApproval,
        SessionId, ThreadId,
    },
    llm::{ScriptedModel, ScriptedTurn, ToolCall},
    store::{now_ms, Store},
};
use tessera_app::{
    catalog::Catalog,
    render::{render_tree, FormState, RenderCtx},
};

use crate::{
    chat::{completed_last_month, demo_site, exactly_open, first_turn, manifest, offline},
    helpers::store_contract,
};

store_contract!(
    a_scripted_model_places_the_confirm_view_and_code_sets_count_buttons_and_scopes,
    a_confirm_view_stating_a_wrong_count_is_refused_and_rebuilt_by_the_heuristic,
    the_heuristic_builds_the_confirm_progress_and_result_views_offline,
    the_heuristics_confirm_view_is_accepted_without_a_second_generation,
    approving_a_subset_runs_a_new_confirmation_bound_to_the_narrowed_call,
    a_selection_never_widens_and_an_empty_one_approves_nothing,
    an_operation_scope_skips_only_that_operations_next_confirmation,
    a_session_scope_reaches_only_its_own_session,
);

fn approval(count: usize, destructive: bool) -> PendingApproval {
    let ids: Vec<String> = (1..=count).map(|n| format!("item-{n:04}")).collect();
    let items: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "title": format!("Report {id}"), "status": "completed"}))
        .collect();
    let arguments = json!({ "ids": ids });
    PendingApproval {
        confirmation_id: ConfirmationId::new(),
        thread_id: ThreadId(uuid::Uuid::new_v4()),
        operation: "bulkDeleteItems".to_owned(),
        hash: operation_hash("bulkDeleteItems", &arguments),
        arguments,
        reasons: vec![ConfirmReason::Delete],
        reasons_text: vec!["it deletes".to_owned()],
        preview: ConfirmationPreview {
            count,
            items,
            chunks: vec![count],
            preview_operation: Some("searchItems".to_owned()),
        },
        destructive,
        allowed_scopes: vec![
            ApprovalScope::Once,
            ApprovalScope::Operation,
            ApprovalScope::Session,
        ],
        question: "Delete them?".to_owned(),
    }
}

fn place(id: &str, component: &str, props: Value, parent: Option<&str>) -> ToolCall {
    let mut arguments = serde_json::Map::new();
    arguments.insert("props".to_owned(), props);
    if let Some(parent) = parent {
        arguments.insert("parent".to_owned(), json!(parent));
    }
    ToolCall::new(id, component, Value::Object(arguments))
}

/// A confirm page as a model would place it, with `heading` as its heading's text.
fn scripted_confirm(heading: &str) -> ScriptedModel {
    ScriptedModel::new(vec![ScriptedTurn::tool_calls(vec![
        place("t1", "Heading", json!({"text": heading, "level": 2}), None),
        place("t2", "Form", json!({}), None),
        place(
            "t3",
            "Table",
            json!({"rows": {"$data": "/items"}, "columns": [{"key": "title", "label": "Title"}],
                   "selectable": {"name": "ids", "idKey": "id", "label": "Items to delete", "required": true}}),
            Some("c2"),
        ),
        place(
            "t4",
            "RadioGroup",
            json!({"name": "scope", "label": "How long", "required": true,
                   "options": [{"value": "once", "label": "x"}, {"value": "operation", "label": "y"}, {"value": "session", "label": "z"}]}),
            Some("c2"),
        ),
        place(
            "t5",
            "Button",
            json!({"label": "Delete 999 items", "variant": "primary", "kind": "submit"}),
            Some("c2"),
        ),
        ToolCall::new("t6", "Finish", json!({})),
    ])])
    .named("views")
}

fn html(view: &views::ChatView) -> String {
    let mut ctx = RenderCtx::new(view.data.clone());
    ctx.catalog = Catalog::defaults();
    ctx.action = view.action.clone();
    ctx.download_base = view.download_base.clone();
    ctx.form = FormState {
        values: view.values.clone(),
        ..FormState::default()
    };
    Owner::new().with(|| render_tree(&view.tree, &ctx).to_html())
}

async fn a_scripted_model_places_the_confirm_view_and_code_sets_count_buttons_and_scopes(
    store: &Store,
) -> anyhow::Result<()> {
    let manifest = manifest()?;
    let pending = approval(3, true);
    let model = scripted_confirm("Review the deletion");
    let view = views::confirm_view(store, &model, &manifest, &pending).await?;
    assert_eq!(view.kind, ViewKind::Confirm);
    assert_eq!(view.model, "scripted:views", "the scripted model placed it");
    assert_eq!(
        view.tree
            .nodes
            .get("c1")
            .map(|node| node.props["text"].clone()),
        Some(json!("Review the deletion")),
        "the model's components, through the agent loop"
    );
    let page = html(&view);
    assert!(page.contains("Delete 3 items"), "code's count: {page}");
    assert!(
        !page.contains("999 items"),
        "the model's count is overridden"
    );
    assert!(page.contains("bg-red-700"), "danger styling");
    assert!(page.contains(">Deny<"), "code adds Deny: {page}");
    assert!(
        page.contains("Always allow “bulk delete items” in this chat"),
        "code's scope labels"
    );
    assert!(
        page.contains(&format!(
            "action=\"/chat/approvals/{}\"",
            pending.confirmation_id
        )),
        "code decides where it posts"
    );
    assert_eq!(page.matches("name=\"ids\"").count(), 3);
    assert_eq!(
        page.matches(" checked").count(),
        4,
        "every item ticked, and `once`: {page}"
    );
    // The same view again is not served from the page cache: the cached tree's literal text holds
    // a number the model made up (999, in no value of the request), and a cached page must stand
    // on its own (agent/cache/literals.rs). The model is asked again (its script is spent, so the
    // heuristic builds the view), and code's count still wins.
    let again = views::confirm_view(store, &model, &manifest, &pending).await?;
    assert_eq!(
        model.requests().len(),
        2,
        "the stale cached view asked the model again"
    );
    let page = html(&again);
    assert!(page.contains("Delete 3 items"), "code's count: {page}");
    assert!(!page.contains("999"));
    Ok(())
}

async fn a_confirm_view_stating_a_wrong_count_is_refused_and_rebuilt_by_the_heuristic(
    store: &Store,
) -> anyhow::Result<()> {
    let manifest = manifest()?;
    let pending = approval(3, true);
    let model = scripted_confirm("You are about to delete 999 items");
    let view = views::confirm_view(store, &model, &manifest, &pending).await?;
    assert_eq!(model.requests().len(), 1, "the model did place a page");
    assert!(view.model.starts_with("heuristic"), "{}", view.model);
    let page = html(&view);
    // Not a bare "999": the confirmation id in the form action is random hex.
    assert!(!page.contains("999 items"), "{page}");
    assert!(page.contains("Delete 3 items"), "{page}");
    Ok(())
}

fn execution(result: Value, status: ExecutionStatus, ids: &[&str], chunks: usize) -> Execution {
    let arguments = json!({ "ids": ids });
    Execution {
        id: ExecutionId::new(),
        session_id: SessionId(uuid::Uuid::new_v4()),
        thread_id: ThreadId(uuid::Uuid::new_v4()),
        operation: "bulkDeleteItems".to_owned(),
        hash: OperationHash(operation_hash("bulkDeleteItems", &arguments).0),
        arguments,
        role: StepRole::Mutation,
        approval: Approval::NotNeeded,
        status,
        items_total: ids.len(),
        items_done: 0,
        chunks_total: chunks,
        chunks_done: 0,
        item_ids: None,
        result: Some(result),
        error: None,
        created_at_ms: now_ms(),
        finished_at_ms: None,
    }
}

/// The heuristic's own page text must pass code's count check: a summary line such as "2 answers:
/// which items" once read as a wrong count, so every view was generated twice.
async fn the_heuristics_confirm_view_is_accepted_without_a_second_generation(
    store: &Store,
) -> anyhow::Result<()> {
    let manifest = manifest()?;
    let heuristic = tessera::agent::HeuristicModel::new();
    let confirm = views::confirm_view(store, &heuristic, &manifest, &approval(91, true)).await?;
    assert!(html(&confirm).contains("Delete 91 items"));
    let records = store.recent_generations(10).await?;
    assert_eq!(
        records.len(),
        1,
        "the heuristic's view was refused and rebuilt: {:?}",
        records
            .iter()
            .map(|record| &record.outcome)
            .collect::<Vec<_>>()
    );
    Ok(())
}

async fn the_heuristic_builds_the_confirm_progress_and_result_views_offline(
    store: &Store,
) -> anyhow::Result<()> {
    let manifest = manifest()?;
    let heuristic = tessera::agent::HeuristicModel::new();
    let confirm = views::confirm_view(store, &heuristic, &manifest, &approval(2, true)).await?;
    let components: Vec<&str> = confirm
        .tree
        .nodes
        .values()
        .map(|node| node.component.as_str())
        .collect();
    for expected in ["Form", "Table", "RadioGroup", "Button"] {
        assert!(components.contains(&expected), "{components:?}");
    }
    assert!(html(&confirm).contains("Delete 2 items"));

    let mut running = execution(json!(null), ExecutionStatus::Running, &["a", "b", "c"], 3);
    running.chunks_done = 1;
    running.items_done = 1;
    let progress = views::progress_view(store, &heuristic, &manifest, &running).await?;
    let page = html(&progress);
    assert!(
        page.contains("<progress") || page.contains("role=\"progressbar\""),
        "{page}"
    );
    assert!(page.contains("Chunks"), "{page}");

    let chunked = json!({"items_done": 2, "items_total": 5, "chunks": [
        {"chunk": 1, "size": 2, "status": "succeeded", "response": {"deleted": 1, "ids": ["a"], "missing": ["b"]}},
        {"chunk": 2, "size": 2, "status": "failed", "error": "HTTP 500: disk full"},
        {"chunk": 3, "size": 1, "status": "not_sent"}
    ]});
    let failed = execution(
        chunked,
        ExecutionStatus::Failed,
        &["a", "b", "c", "d", "e"],
        3,
    );
    let operation = manifest
        .operation("bulkDeleteItems")
        .context("the demo manifest has bulkDeleteItems")?;
    let outcomes = views::item_outcomes(operation, &failed, None);
    let statuses: Vec<(&str, &str)> = outcomes
        .iter()
        .map(|item| (item.id.as_str(), item.status.as_str()))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("a", "succeeded"),
            ("b", "failed"),
            ("c", "failed"),
            ("d", "failed"),
            ("e", "not_sent")
        ]
    );
    assert_eq!(outcomes[1].error, "not found");
    assert_eq!(outcomes[2].error, "HTTP 500: disk full");
    let result = views::result_view(store, &heuristic, operation, &failed, None).await?;
    let page = html(&result);
    for failure in [
        "not found",
        "HTTP 500: disk full",
        "not sent: an earlier request failed",
    ] {
        assert!(page.contains(failure), "every failure is listed: {failure}");
    }
    let downloads: Vec<&str> = result
        .tree
        .nodes
        .values()
        .filter(|node| node.component == "DownloadLink")
        .filter_map(|node| node.props["format"].as_str())
        .collect();
    assert!(
        downloads.contains(&"csv") && downloads.contains(&"json"),
        "{downloads:?}"
    );
    assert!(
        page.contains(&format!("href=\"/chat/results/{}/", failed.id)),
        "{page}"
    );
    Ok(())
}

/// The offline chat over the demo site, asked in a new session to "delete all completed items
/// from last month", with the approval it is waiting for.
struct Asked {
    site: crate::chat::DemoSite,
    orchestrator: tessera::chat::Orchestrator,
    session: tessera::chat::ChatSession,
    pending: PendingApproval,
}

async fn asked_to_delete_last_months_completed(store: &Store) -> anyhow::Result<Asked> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let orchestrator = offline(store, &site)?;
    let (session, asked) =
        first_turn(&orchestrator, "delete all completed items from last month").await?;
    let pending = asked
        .pending_approvals
        .first()
        .cloned()
        .context("a pending approval")?;
    Ok(Asked {
        site,
        orchestrator,
        session,
        pending,
    })
}

async fn approving_a_subset_runs_a_new_confirmation_bound_to_the_narrowed_call(
    store: &Store,
) -> anyhow::Result<()> {
    let Asked {
        site,
        orchestrator,
        session,
        pending,
    } = asked_to_delete_last_months_completed(store).await?;
    let (_, ids) = completed_last_month(store).await?;
    anyhow::ensure!(
        ids.len() >= 2,
        "the seed needs two completed items last month"
    );
    let previewed: Vec<String> = pending.arguments["ids"]
        .as_array()
        .context("ids")?
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    // The person unticks all but the last and the first (order is the preview's, not theirs).
    let chosen = vec![previewed[previewed.len() - 1].clone(), previewed[0].clone()];
    let outcome = orchestrator
        .approve_selection(
            session.id,
            pending.confirmation_id,
            Some(&chosen),
            ApprovalScope::Once,
        )
        .await?;
    assert!(outcome.pending_approvals.is_empty());
    let sent = site.mutating();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].ids, Some(2), "only the ticked items");
    let narrowed_ids = json!([previewed[0], previewed[previewed.len() - 1]]);
    let narrowed_hash = operation_hash("bulkDeleteItems", &json!({ "ids": narrowed_ids }));
    let consumed = store
        .confirmations_with_status(session.id, ConfirmationStatus::Consumed)
        .await?;
    assert_eq!(consumed.len(), 1);
    assert_eq!(
        consumed[0].hash, narrowed_hash,
        "bound to the narrowed call"
    );
    assert_ne!(consumed[0].id, pending.confirmation_id);
    let original = store
        .confirmation(session.id, pending.confirmation_id)
        .await?;
    assert_eq!(original.status, ConfirmationStatus::Denied, "withdrawn");
    let (_, left) = completed_last_month(store).await.unwrap_or_default();
    assert_eq!(left.len(), previewed.len() - 2, "the unticked items stay");
    assert!(
        outcome.reply.contains("narrowed by the person to 2 of"),
        "{}",
        outcome.reply
    );
    Ok(())
}

async fn a_selection_never_widens_and_an_empty_one_approves_nothing(
    store: &Store,
) -> anyhow::Result<()> {
    let Asked {
        site,
        orchestrator,
        session,
        pending,
    } = asked_to_delete_last_months_completed(store).await?;
    let outsider = vec!["item-not-previewed".to_owned()];
    for selection in [outsider, Vec::new()] {
        let refused = orchestrator
            .approve_selection(
                session.id,
                pending.confirmation_id,
                Some(&selection),
                ApprovalScope::Once,
            )
            .await;
        assert!(
            matches!(refused, Err(ChatError::Selection(_))),
            "{refused:?}"
        );
    }
    assert!(site.mutating().is_empty(), "nothing was sent");
    let still = store
        .confirmation(session.id, pending.confirmation_id)
        .await?;
    assert_eq!(
        still.status,
        ConfirmationStatus::Pending,
        "still answerable"
    );
    Ok(())
}

async fn an_operation_scope_skips_only_that_operations_next_confirmation(
    store: &Store,
) -> anyhow::Result<()> {
    let Asked {
        site,
        orchestrator,
        session,
        pending,
    } = asked_to_delete_last_months_completed(store).await?;
    orchestrator
        .approve_selection(
            session.id,
            pending.confirmation_id,
            None,
            ApprovalScope::Operation,
        )
        .await?;
    let deletes_before = site.mutating().len();
    let again = orchestrator
        .handle_turn(session.id, "delete all completed items")
        .await?;
    assert!(
        again.pending_approvals.is_empty(),
        "the same operation runs without asking: {}",
        again.reply
    );
    assert_eq!(site.mutating().len(), deletes_before + 1);
    exactly_open(store, 12).await?;
    let other = orchestrator
        .handle_turn(session.id, "mark all open items as done")
        .await?;
    assert_eq!(
        other.pending_approvals.len(),
        1,
        "another operation still asks: {}",
        other.reply
    );
    Ok(())
}

async fn a_session_scope_reaches_only_its_own_session(store: &Store) -> anyhow::Result<()> {
    let Asked {
        site: _site,
        orchestrator,
        session: first,
        pending,
    } = asked_to_delete_last_months_completed(store).await?;
    orchestrator
        .approve_selection(
            first.id,
            pending.confirmation_id,
            None,
            ApprovalScope::Session,
        )
        .await?;
    exactly_open(store, 12).await?;
    let other_session = orchestrator.create_session(None, None).await?;
    let elsewhere = orchestrator
        .handle_turn(other_session.id, "mark all open items as done")
        .await?;
    assert_eq!(
        elsewhere.pending_approvals.len(),
        1,
        "another session still asks: {}",
        elsewhere.reply
    );
    let here = orchestrator
        .handle_turn(first.id, "mark all open items as done")
        .await?;
    assert!(
        here.pending_approvals.is_empty(),
        "the granting session does not: {}",
        here.reply
    );
    Ok(())
}
