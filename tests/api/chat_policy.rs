//! The chat's policy counts what a turn does, not what one call does: a scripted model splits a
//! batch into many calls, sums past `max_batch_size`, names its call like a manual one, and an API
//! client approves with a scope the page's form would refuse. The real demo site records what
//! reached it. Every test runs on SQLite and on PostgreSQL.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use anyhow::{bail, Context as _};
use axum::{body::Body, http::Request};
use serde_json::{json, Value};
use tessera::{
    chat::{
        approval_form::ApprovalAnswer,
        audit::Approval,
        header::{CallStatus, StepRole},
        orchestrator::SessionModels,
        policy::{ConfirmReason, Grants},
        session::MessageChannel,
        ApprovalScope, ChatError, Manifest,
    },
    demo::items::{model::ItemFilter, MANIFEST_JSON},
    llm::{ScriptedModel, ScriptedTurn, ToolCall},
    store::Store,
};
use tower::ServiceExt as _;

use crate::{
    chat::{
        approve_once, demo_site, exactly_open, first_turn, ids_matching, orchestrator_over,
        scripted, statuses, step, tool_results,
    },
    helpers::store_contract,
};

store_contract!(
    two_hundred_single_item_updates_in_one_reply_wait_for_one_confirmation,
    an_update_that_takes_the_turn_past_ten_items_asks_first,
    calls_adding_up_beyond_max_batch_size_are_refused_and_nothing_is_sent,
    a_model_call_with_a_manual_looking_id_is_still_the_model_s,
    a_model_call_with_a_manual_looking_id_cannot_reach_a_manual_only_tool,
    a_person_s_manual_tool_stays_the_person_s_after_approval,
    an_api_approval_with_a_scope_the_form_refuses_is_refused_the_same_way,
);

/// The demo manifest with `change` applied to each operation.
fn manifest_changed(change: impl Fn(&mut Value)) -> anyhow::Result<Arc<Manifest>> {
    let mut raw: Value = serde_json::from_str(MANIFEST_JSON)?;
    let operations = raw["operations"]
        .as_array_mut()
        .context("the manifest has no operations")?;
    for operation in operations {
        change(operation);
    }
    Ok(Arc::new(Manifest::from_json(&raw.to_string())?))
}

fn updates(ids: &[String]) -> Vec<ToolCall> {
    ids.iter()
        .enumerate()
        .map(|(index, id)| {
            ToolCall::new(
                format!("u{index}"),
                "updateItem",
                json!({"id": id, "status": "completed"}),
            )
        })
        .collect()
}

async fn first_ids(store: &Store, count: usize) -> anyhow::Result<Vec<String>> {
    let ids: Vec<String> = ids_matching(store, ItemFilter::default())
        .await?
        .into_iter()
        .take(count)
        .collect();
    anyhow::ensure!(ids.len() == count, "the seed has only {} items", ids.len());
    Ok(ids)
}

async fn first_id(store: &Store) -> anyhow::Result<String> {
    let [id] = first_ids(store, 1)
        .await?
        .try_into()
        .map_err(|_| anyhow::anyhow!("no item"))?;
    Ok(id)
}

async fn two_hundred_single_item_updates_in_one_reply_wait_for_one_confirmation(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let ids = first_ids(store, 200).await?;
    let model = ScriptedModel::new(vec![
        ScriptedTurn::tool_calls(updates(&ids)),
        ScriptedTurn::text("All 200 are completed."),
    ]);
    let orchestrator = scripted(store, &site, &model)?;
    let (session, outcome) = first_turn(&orchestrator, "mark these 200 items completed").await?;

    assert!(
        site.mutating().is_empty(),
        "nothing is written before the approval: {:?}",
        site.mutating()
    );
    assert_eq!(
        statuses(&outcome),
        vec![step(
            "updateItem",
            StepRole::Mutation,
            CallStatus::AwaitingConfirmation
        )],
        "{}",
        outcome.reply
    );
    let [approval] = outcome.pending_approvals.as_slice() else {
        bail!("expected one approval for the 200 calls: {}", outcome.reply);
    };
    assert_eq!(approval.operation, "updateItem");
    assert_eq!(approval.preview.count, 200, "the person sees every item");
    assert!(
        approval
            .reasons
            .contains(&ConfirmReason::TurnTotal { count: 200 }),
        "{:?}",
        approval.reasons
    );
    assert!(
        outcome.reply.contains("on 200 items in 200 calls"),
        "{}",
        outcome.reply
    );

    let done = approve_once(&orchestrator, session.id, approval.confirmation_id).await?;
    let written = site.mutating();
    assert_eq!(written.len(), 200, "each approved call was sent once");
    assert!(written.iter().all(|request| request.method == "PATCH"));
    // Each call's result went back to the model under its own id, and its loop went on.
    let results = tool_results(&model, 1);
    assert_eq!(results.len(), 200);
    assert!(results
        .iter()
        .all(|(name, _, is_error)| name == "updateItem" && !is_error));
    assert!(
        done.reply.ends_with("All 200 are completed."),
        "{}",
        done.reply
    );
    let audit = store.chat_executions(session.id).await?;
    assert_eq!(audit.len(), 200);
    assert!(audit.iter().all(|execution| execution.approval
        == Approval::Group {
            id: approval.confirmation_id
        }));
    let again = approve_once(&orchestrator, session.id, approval.confirmation_id).await;
    assert!(matches!(again, Err(ChatError::Conflict(_))), "{again:?}");
    assert_eq!(site.mutating().len(), 200, "nothing ran twice");
    Ok(())
}

/// Ten single-item updates run; the eleventh, in the model's next reply, is the turn's eleventh
/// item and asks first.
async fn an_update_that_takes_the_turn_past_ten_items_asks_first(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let ids = first_ids(store, 11).await?;
    let calls = updates(&ids);
    let model = ScriptedModel::new(vec![
        ScriptedTurn::tool_calls(calls[..10].to_vec()),
        ScriptedTurn::tool_calls(calls[10..].to_vec()),
        ScriptedTurn::text("Done."),
    ]);
    let orchestrator = scripted(store, &site, &model)?;
    let (_, outcome) = first_turn(&orchestrator, "mark these 11 items completed").await?;
    assert_eq!(site.mutating().len(), 10, "ten items need no confirmation");
    let [approval] = outcome.pending_approvals.as_slice() else {
        bail!("the eleventh item did not ask: {}", outcome.reply);
    };
    assert_eq!(approval.preview.count, 1);
    assert_eq!(
        approval.reasons,
        vec![ConfirmReason::TurnTotal { count: 11 }]
    );
    Ok(())
}

async fn calls_adding_up_beyond_max_batch_size_are_refused_and_nothing_is_sent(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let open = exactly_open(store, 120).await?;
    let model = ScriptedModel::new(vec![
        ScriptedTurn::tool_calls(vec![ToolCall::new(
            "s1",
            "searchItems",
            json!({"status": "open"}),
        )]),
        ScriptedTurn::tool_calls(vec![
            ToolCall::new(
                "b1",
                "bulkUpdateItems",
                json!({"ids": open[..60], "status": "completed"}),
            ),
            ToolCall::new(
                "b2",
                "bulkUpdateItems",
                json!({"ids": open[60..], "status": "completed"}),
            ),
        ]),
        ScriptedTurn::text("Code refused those."),
    ]);
    let orchestrator = scripted(store, &site, &model)?;
    let (_, outcome) = first_turn(&orchestrator, "complete every open item").await?;

    assert!(site.mutating().is_empty(), "{:?}", site.mutating());
    assert!(
        outcome.pending_approvals.is_empty(),
        "refused, not put to the person: {:?}",
        outcome.pending_approvals
    );
    let bulk: Vec<_> = outcome
        .header
        .steps
        .iter()
        .filter(|step| step.operation == "bulkUpdateItems")
        .collect();
    assert_eq!(bulk.len(), 2);
    for step in bulk {
        assert_eq!(step.status, CallStatus::Refused);
        assert!(
            step.error
                .as_deref()
                .is_some_and(|error| error
                    .contains("add up to 120 items, more than its max_batch_size of 100")),
            "{step:?}"
        );
    }
    // The person reads it in the header, whatever the model says after.
    assert!(
        outcome.reply.contains("max_batch_size of 100"),
        "{}",
        outcome.reply
    );
    let told = tool_results(&model, 2);
    assert_eq!(
        told.iter()
            .filter(|(name, _, is_error)| name == "bulkUpdateItems" && *is_error)
            .count(),
        2
    );
    Ok(())
}

async fn a_model_call_with_a_manual_looking_id_is_still_the_model_s(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let id = first_id(store).await?;
    let model = ScriptedModel::new(vec![
        ScriptedTurn::tool_calls(vec![ToolCall::new(
            "manual-1",
            "deleteItem",
            json!({"id": id}),
        )]),
        ScriptedTurn::text("Deleted it."),
    ]);
    let orchestrator = scripted(store, &site, &model)?;
    let (session, outcome) = first_turn(&orchestrator, "delete it").await?;
    let [approval] = outcome.pending_approvals.as_slice() else {
        bail!("the delete did not ask: {}", outcome.reply);
    };
    let done = approve_once(&orchestrator, session.id, approval.confirmation_id).await?;

    assert_eq!(site.mutating().len(), 1);
    // The model's loop went on with its own call's result, as for any id it might choose.
    assert!(done.reply.ends_with("Deleted it."), "{}", done.reply);
    let results = tool_results(&model, 1);
    assert_eq!(results.len(), 1);
    assert!(!results[0].2, "{:?}", results[0]);
    let told = store
        .chat_messages(session.id, MessageChannel::Model)
        .await?;
    assert!(
        !told
            .iter()
            .any(|message| message.body.to_string().contains("The person ran")),
        "the model's call was passed off as the person's: {told:?}"
    );
    Ok(())
}

async fn a_model_call_with_a_manual_looking_id_cannot_reach_a_manual_only_tool(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let id = first_id(store).await?;
    let manifest = manifest_changed(|operation| {
        if operation["name"] == "deleteItem" {
            operation["mode"] = json!("manual");
        }
    })?;
    let model = ScriptedModel::new(vec![
        ScriptedTurn::tool_calls(vec![ToolCall::new(
            "manual-1",
            "deleteItem",
            json!({"id": id}),
        )]),
        ScriptedTurn::text("I may not."),
    ]);
    let models = SessionModels::only("scripted", Arc::new(model.clone()));
    let orchestrator = orchestrator_over(store, &site, models, None, manifest)?;
    let (_, outcome) = first_turn(&orchestrator, "delete it").await?;
    assert_eq!(
        statuses(&outcome),
        vec![step("deleteItem", StepRole::Mutation, CallStatus::Refused)]
    );
    assert!(
        outcome.header.steps[0]
            .error
            .as_deref()
            .is_some_and(|error| error.contains("is not offered to the model")),
        "{:?}",
        outcome.header.steps[0]
    );
    assert!(outcome.pending_approvals.is_empty());
    assert!(site.mutating().is_empty());
    Ok(())
}

/// The other side of the same rule: the manual-tool path makes a call the person's, whatever
/// its id, also when it waited for an approval.
async fn a_person_s_manual_tool_stays_the_person_s_after_approval(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let id = first_id(store).await?;
    let model = ScriptedModel::new(Vec::new());
    let orchestrator = scripted(store, &site, &model)?;
    let session = orchestrator.create_session(None, None).await?;
    let outcome = orchestrator
        .run_manual_tool(session.id, "deleteItem", json!({"id": id}))
        .await?;
    let [approval] = outcome.pending_approvals.as_slice() else {
        bail!("the manual delete did not ask: {}", outcome.reply);
    };
    let done = approve_once(&orchestrator, session.id, approval.confirmation_id).await?;
    assert_eq!(done.narrative, "`deleteItem` ran.");
    assert_eq!(site.mutating().len(), 1);
    assert!(
        model.requests().is_empty(),
        "no model loop for a manual tool"
    );
    let told = store
        .chat_messages(session.id, MessageChannel::Model)
        .await?;
    assert!(
        told.iter().any(|message| message
            .body
            .to_string()
            .contains("The person ran the manual tool `deleteItem`")),
        "{told:?}"
    );
    Ok(())
}

async fn an_api_approval_with_a_scope_the_form_refuses_is_refused_the_same_way(
    store: &Store,
) -> anyhow::Result<()> {
    let site = demo_site(store, Duration::ZERO, None).await?;
    let id = first_id(store).await?;
    let manifest = manifest_changed(|operation| {
        if operation["name"] == "updateItem" {
            if let Some(tags) = operation["tags"].as_array_mut() {
                tags.push(json!("confirmation-required"));
            }
        }
    })?;
    let model = ScriptedModel::new(vec![
        ScriptedTurn::tool_calls(vec![ToolCall::new(
            "c1",
            "updateItem",
            json!({"id": id, "status": "completed"}),
        )]),
        ScriptedTurn::text("Updated."),
    ]);
    let models = SessionModels::only("scripted", Arc::new(model.clone()));
    let orchestrator = orchestrator_over(store, &site, models, None, manifest)?;
    let (session, outcome) = first_turn(&orchestrator, "complete it").await?;
    let [approval] = outcome.pending_approvals.as_slice() else {
        bail!("the update did not ask: {}", outcome.reply);
    };
    assert_eq!(approval.allowed_scopes, vec![ApprovalScope::Once]);

    // What the chat page's form answers to "approve for this session".
    let form = BTreeMap::from([
        ("decision".to_owned(), vec!["approve".to_owned()]),
        ("scope".to_owned(), vec!["session".to_owned()]),
    ]);
    let answer = ApprovalAnswer::from_form(&form)?.context("no answer in the form")?;
    let refused = answer
        .apply(&orchestrator, session.id, approval.confirmation_id)
        .await;
    let Err(ChatError::Scope(form_message)) = refused else {
        bail!("the form's approval was not refused for its scope: {refused:?}");
    };

    let router = tessera::http::chat_api::api_routes::<()>(orchestrator.clone());
    let path = format!(
        "/api/chat/sessions/{}/confirmations/{}",
        session.id, approval.confirmation_id
    );
    let post = |scope: &str| {
        Request::post(path.as_str())
            .header("content-type", "application/json")
            .body(Body::from(
                json!({"decision": "approve", "scope": scope}).to_string(),
            ))
    };
    for scope in ["operation", "session"] {
        let response = router.clone().oneshot(post(scope)?).await?;
        assert_eq!(response.status(), 400, "scope {scope}");
        let body: Value =
            serde_json::from_slice(&axum::body::to_bytes(response.into_body(), 1 << 20).await?)?;
        assert_eq!(body["error"]["code"], "bad_scope", "{body}");
        assert_eq!(body["error"]["field"], "scope", "{body}");
        assert_eq!(body["error"]["message"], form_message.as_str(), "{body}");
    }
    // Refused means refused: no grant, still pending, nothing sent.
    assert_eq!(store.chat_grants(session.id).await?, Grants::default());
    assert_eq!(orchestrator.pending_approvals(session.id).await?.len(), 1);
    assert!(site.mutating().is_empty());

    let approved = router.clone().oneshot(post("once")?).await?;
    assert_eq!(approved.status(), 200);
    assert_eq!(site.mutating().len(), 1);
    Ok(())
}
