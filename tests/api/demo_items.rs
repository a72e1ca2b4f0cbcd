//! The demo items site and the chat's store rules: the store contract on both backends (seeding,
//! filters, bulk changes, single-use hash-bound confirmations, grants), then the HTTP surface of a
//! spawned app (`/demo-api/items`, and a chat turn through `/api/chat` against the app itself).

use std::collections::BTreeSet;

use anyhow::Context as _;
use serde_json::{json, Map, Value};
use tessera::{
    chat::{
        audit::{Approval, ExecutionEnd, ExecutionStatus, NewExecution},
        confirm::{
            operation_hash, ApprovalScope, Caller, ConfirmationPreview, ConfirmationStatus,
            NewConfirmation,
        },
        header::StepRole,
        policy::ConfirmReason,
        CapabilityScope, ChatSession, Manifest, SessionId, Thread,
    },
    demo::items::{
        model::{ItemFilter, ItemId, ItemPatch, ItemStatus},
        seed::{seed_items, SEED_COUNT},
        DemoItems, MANIFEST_JSON,
    },
    store::{
        chat::{BeginExecutionError, Decision},
        now_ms, Store, StoreError,
    },
};

use crate::helpers::{header, store_contract, Backend, TestApp, API_TOKEN};
use tessera::chat::ScopeRules as _;
use tessera::{demo::access::DemoApiKey, pages::csrf::ensure_csrf_key};

store_contract!(
    demo_items_are_seeded_once_and_filtered_by_status_date_and_text,
    demo_bulk_changes_report_the_ids_that_existed,
    a_confirmation_is_consumed_only_with_its_exact_hash_and_only_once,
    twenty_racing_executions_consume_one_confirmation_once,
    an_operation_approval_stores_its_grant_and_a_decision_is_final,
    withdrawn_confirmations_cannot_be_approved_or_used,
);

async fn demo_items_are_seeded_once_and_filtered_by_status_date_and_text(
    store: &Store,
) -> anyhow::Result<()> {
    let demo = DemoItems::new(store.clone());
    demo.ensure_seeded().await?;
    // A second process (its own `DemoItems`) does not seed again.
    DemoItems::new(store.clone()).ensure_seeded().await?;
    assert!(!store.seed_demo_items(&seed_items(now_ms())).await?);
    let all = store
        .search_demo_items(&ItemFilter {
            limit: 1000,
            ..ItemFilter::default()
        })
        .await?;
    assert_eq!(all.total, i64::try_from(SEED_COUNT)?);
    let completed = store
        .search_demo_items(&ItemFilter {
            status: Some(ItemStatus::Completed),
            limit: 1000,
            ..ItemFilter::default()
        })
        .await?;
    assert!(completed
        .items
        .iter()
        .all(|item| item.status == ItemStatus::Completed));
    assert!(
        completed.total > 50 && completed.total < 150,
        "{}",
        completed.total
    );
    let cutoff = now_ms() - 30 * 86_400_000;
    let recent = store
        .search_demo_items(&ItemFilter {
            updated_after_ms: Some(cutoff),
            limit: 1000,
            ..ItemFilter::default()
        })
        .await?;
    assert!(recent.items.iter().all(|item| item.updated_at_ms >= cutoff));
    let older = store
        .search_demo_items(&ItemFilter {
            updated_before_ms: Some(cutoff),
            limit: 1000,
            ..ItemFilter::default()
        })
        .await?;
    assert_eq!(recent.total + older.total, all.total);
    let budget = store
        .search_demo_items(&ItemFilter {
            text: Some("Q3 BUDGET".into()),
            limit: 1000,
            ..ItemFilter::default()
        })
        .await?;
    assert!(budget.total > 0);
    assert!(budget
        .items
        .iter()
        .all(|item| item.title.to_lowercase().contains("q3 budget")));
    let nothing = store
        .search_demo_items(&ItemFilter {
            text: Some("100%_".into()),
            limit: 1000,
            ..ItemFilter::default()
        })
        .await?;
    assert_eq!(nothing.total, 0, "LIKE wildcards in the text are literal");
    let page = store
        .search_demo_items(&ItemFilter {
            limit: 10,
            offset: 5,
            ..ItemFilter::default()
        })
        .await?;
    assert_eq!(page.items.len(), 10);
    assert_eq!(
        page.items[0].id, all.items[5].id,
        "pages follow the same order"
    );
    Ok(())
}

async fn demo_bulk_changes_report_the_ids_that_existed(store: &Store) -> anyhow::Result<()> {
    DemoItems::new(store.clone()).ensure_seeded().await?;
    let ids = vec![
        ItemId("item-0001".into()),
        ItemId("item-0002".into()),
        ItemId("item-9999".into()),
    ];
    let patch = ItemPatch {
        status: Some(ItemStatus::Completed),
        ..ItemPatch::default()
    };
    let updated = store.bulk_update_demo_items(&ids, &patch, now_ms()).await?;
    assert_eq!(updated.len(), 2);
    assert!(updated
        .iter()
        .all(|item| item.status == ItemStatus::Completed && item.completed_at_ms.is_some()));
    let reopen = ItemPatch {
        status: Some(ItemStatus::Open),
        ..ItemPatch::default()
    };
    let reopened = store.update_demo_item(&ids[0], &reopen, now_ms()).await?;
    assert_eq!(
        reopened.completed_at_ms, None,
        "leaving completed clears completed_at"
    );
    let deleted = store.bulk_delete_demo_items(&ids).await?;
    assert_eq!(deleted.len(), 2);
    assert!(matches!(
        store.demo_item(&ids[0]).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.delete_demo_item(&ids[0]).await,
        Err(StoreError::NotFound)
    ));
    Ok(())
}

/// A session and a thread to hang confirmations on.
async fn session_and_thread(store: &Store) -> anyhow::Result<(SessionId, Thread)> {
    let manifest = Manifest::from_json(MANIFEST_JSON)?;
    let session = ChatSession {
        id: SessionId::new(),
        scope: CapabilityScope::all_of(&manifest),
        model: "scripted".into(),
        created_at_ms: now_ms(),
        updated_at_ms: now_ms(),
    };
    store.create_chat_session(&session).await?;
    let thread = Thread::new(
        session.id,
        "delete items",
        "delete the completed ones",
        now_ms(),
    );
    store.save_chat_thread(&thread).await?;
    Ok((session.id, thread))
}

fn confirmation(session_id: SessionId, thread: &Thread, ids: &[&str]) -> NewConfirmation {
    NewConfirmation {
        session_id,
        thread_id: thread.id,
        call_id: "c1".into(),
        caller: Caller::Model,
        operation: "bulkDeleteItems".into(),
        arguments: json!({"ids": ids}),
        reasons: vec![ConfirmReason::Delete, ConfirmReason::MutatingBatch],
        preview: ConfirmationPreview {
            count: ids.len(),
            ..ConfirmationPreview::default()
        },
    }
}

fn execution(
    session_id: SessionId,
    thread: &Thread,
    ids: &[&str],
    approval: Approval,
) -> NewExecution {
    NewExecution {
        session_id,
        thread_id: thread.id,
        operation: "bulkDeleteItems".into(),
        arguments: json!({"ids": ids}),
        role: StepRole::Mutation,
        approval,
        items_total: ids.len(),
        chunks_total: 1,
        status: ExecutionStatus::Running,
        error: None,
    }
}

async fn a_confirmation_is_consumed_only_with_its_exact_hash_and_only_once(
    store: &Store,
) -> anyhow::Result<()> {
    let (session_id, thread) = session_and_thread(store).await?;
    let created = store
        .create_confirmation(&confirmation(session_id, &thread, &["a", "b"]))
        .await?;
    assert_eq!(
        created.hash,
        operation_hash("bulkDeleteItems", &json!({"ids": ["a", "b"]}))
    );
    assert_eq!(created.status, ConfirmationStatus::Pending);
    let approval = Approval::Confirmation { id: created.id };
    // Pending is not approved: nothing can be recorded yet.
    assert!(matches!(
        store
            .begin_execution(&execution(
                session_id,
                &thread,
                &["a", "b"],
                approval.clone()
            ))
            .await,
        Err(BeginExecutionError::ConfirmationUnusable)
    ));
    store
        .decide_confirmation(
            session_id,
            created.id,
            Decision::Approve(ApprovalScope::Once),
        )
        .await?;
    assert_eq!(
        store
            .approved_confirmation(session_id, &created.hash)
            .await?
            .map(|found| found.id),
        Some(created.id)
    );
    // Changed arguments hash differently: the approval does not cover them.
    assert!(matches!(
        store
            .begin_execution(&execution(
                session_id,
                &thread,
                &["a", "b", "c"],
                approval.clone()
            ))
            .await,
        Err(BeginExecutionError::ConfirmationUnusable)
    ));
    let execution_id = store
        .begin_execution(&execution(
            session_id,
            &thread,
            &["a", "b"],
            approval.clone(),
        ))
        .await?;
    // Consumed in the same transaction that recorded the execution: a second use fails.
    assert_eq!(
        store.confirmation(session_id, created.id).await?.status,
        ConfirmationStatus::Consumed
    );
    assert!(matches!(
        store
            .begin_execution(&execution(session_id, &thread, &["a", "b"], approval))
            .await,
        Err(BeginExecutionError::ConfirmationUnusable)
    ));
    store
        .finish_execution(
            execution_id,
            &ExecutionEnd {
                status: ExecutionStatus::Succeeded,
                items_done: 2,
                chunks_done: 1,
                item_ids: None,
                result: Some(json!({"deleted": 2})),
                error: None,
            },
        )
        .await?;
    let recorded = store.chat_executions(session_id).await?;
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].status, ExecutionStatus::Succeeded);
    assert_eq!(
        recorded[0].approval,
        Approval::Confirmation { id: created.id }
    );
    // Another session cannot use it either.
    let (other_session, other_thread) = session_and_thread(store).await?;
    assert!(matches!(
        store
            .begin_execution(&execution(
                other_session,
                &other_thread,
                &["a", "b"],
                Approval::Confirmation { id: created.id }
            ))
            .await,
        Err(BeginExecutionError::ConfirmationUnusable)
    ));
    Ok(())
}

async fn twenty_racing_executions_consume_one_confirmation_once(
    store: &Store,
) -> anyhow::Result<()> {
    let (session_id, thread) = session_and_thread(store).await?;
    let created = store
        .create_confirmation(&confirmation(session_id, &thread, &["a"]))
        .await?;
    store
        .decide_confirmation(
            session_id,
            created.id,
            Decision::Approve(ApprovalScope::Once),
        )
        .await?;
    let mut racers = Vec::new();
    for _ in 0..20 {
        let store = store.clone();
        let new = execution(
            session_id,
            &thread,
            &["a"],
            Approval::Confirmation { id: created.id },
        );
        racers.push(tokio::spawn(
            async move { store.begin_execution(&new).await },
        ));
    }
    let mut recorded = 0;
    for racer in racers {
        match racer.await? {
            Ok(_) => recorded += 1,
            Err(BeginExecutionError::ConfirmationUnusable) => {}
            Err(other) => return Err(other.into()),
        }
    }
    assert_eq!(recorded, 1);
    assert_eq!(store.chat_executions(session_id).await?.len(), 1);
    Ok(())
}

async fn an_operation_approval_stores_its_grant_and_a_decision_is_final(
    store: &Store,
) -> anyhow::Result<()> {
    let (session_id, thread) = session_and_thread(store).await?;
    let first = store
        .create_confirmation(&confirmation(session_id, &thread, &["a"]))
        .await?;
    store
        .decide_confirmation(
            session_id,
            first.id,
            Decision::Approve(ApprovalScope::Operation),
        )
        .await?;
    let grants = store.chat_grants(session_id).await?;
    assert_eq!(
        grants.operations,
        BTreeSet::from(["bulkDeleteItems".to_owned()])
    );
    assert!(!grants.session);
    assert!(matches!(
        store
            .decide_confirmation(session_id, first.id, Decision::Deny)
            .await,
        Err(StoreError::Conflict(_))
    ));
    let second = store
        .create_confirmation(&confirmation(session_id, &thread, &["b"]))
        .await?;
    let decided = store
        .decide_confirmation(
            session_id,
            second.id,
            Decision::Approve(ApprovalScope::Session),
        )
        .await?;
    assert_eq!(decided.scope, Some(ApprovalScope::Session));
    assert!(store.chat_grants(session_id).await?.session);
    assert!(matches!(
        store
            .decide_confirmation(SessionId::new(), second.id, Decision::Deny)
            .await,
        Err(StoreError::NotFound)
    ));
    Ok(())
}

async fn withdrawn_confirmations_cannot_be_approved_or_used(store: &Store) -> anyhow::Result<()> {
    let (session_id, thread) = session_and_thread(store).await?;
    let pending = store
        .create_confirmation(&confirmation(session_id, &thread, &["a"]))
        .await?;
    let approved = store
        .create_confirmation(&confirmation(session_id, &thread, &["b"]))
        .await?;
    store
        .decide_confirmation(
            session_id,
            approved.id,
            Decision::Approve(ApprovalScope::Once),
        )
        .await?;
    assert_eq!(
        store
            .withdraw_confirmations(session_id, Some(thread.id))
            .await?,
        2
    );
    assert!(matches!(
        store
            .decide_confirmation(
                session_id,
                pending.id,
                Decision::Approve(ApprovalScope::Once)
            )
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store
            .begin_execution(&execution(
                session_id,
                &thread,
                &["b"],
                Approval::Confirmation { id: approved.id }
            ))
            .await,
        Err(BeginExecutionError::ConfirmationUnusable)
    ));
    Ok(())
}

/// The app with `Config::for_tests`'s body limit, as these tests were written against.
async fn spawn_with_the_default_body_limit() -> anyhow::Result<TestApp> {
    TestApp::builder()
        .config(|config| config.body_limit = 1024 * 1024)
        .spawn()
        .await
}

#[tokio::test]
async fn the_demo_api_serves_seeded_items_and_throttles_oversized_batches() -> anyhow::Result<()> {
    let app = spawn_with_the_default_body_limit().await?;
    let url = |path: &str| format!("{}{path}", app.address);
    let listed: Value = app
        .client
        .get(url("/demo-api/items?limit=5"))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(listed["total"], 250);
    assert_eq!(listed["items"].as_array().map(Vec::len), Some(5));
    let created = app
        .client
        .post(url("/demo-api/items"))
        .bearer_auth(API_TOKEN)
        .json(&json!({"title": "Buy oat milk", "priority": "high"}))
        .send()
        .await?;
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await?;
    let id = created["id"].as_str().context("no id")?.to_owned();
    let patched: Value = app
        .client
        .patch(url(&format!("/demo-api/items/{id}")))
        .bearer_auth(API_TOKEN)
        .json(&json!({"status": "completed"}))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(patched["status"], "completed");
    assert!(patched["completed_at"].is_string());
    let bad = app
        .client
        .get(url("/demo-api/items?status=finished"))
        .send()
        .await?;
    assert_eq!(bad.status(), 400);
    let bad: Value = bad.json().await?;
    assert_eq!(bad["error"]["field"], "status");
    let ids: Vec<String> = (1..=101).map(|index| format!("item-{index:04}")).collect();
    let throttled = app
        .client
        .post(url("/demo-api/items/bulk-delete"))
        .bearer_auth(API_TOKEN)
        .json(&json!({"ids": ids}))
        .send()
        .await?;
    assert_eq!(throttled.status(), 429);
    assert_eq!(header(&throttled, "retry-after"), Some("1"));
    let deleted: Value = app
        .client
        .post(url("/demo-api/items/bulk-delete"))
        .bearer_auth(API_TOKEN)
        .json(&json!({"ids": [id, "item-9999"]}))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(deleted["deleted"], 1);
    assert_eq!(deleted["missing"], json!(["item-9999"]));
    let gone = app
        .client
        .get(url(&format!("/demo-api/items/{id}")))
        .send()
        .await?;
    assert_eq!(gone.status(), 404);
    Ok(())
}

/// The demo site's key as the server derives it from the CSRF key in its store.
async fn demo_key(store: &Store) -> anyhow::Result<String> {
    let server_key = ensure_csrf_key(store).await?;
    let key = DemoApiKey::derive(&server_key).context("no demo key")?;
    Ok(key.secret().expose().to_owned())
}

async fn items_titled(app: &TestApp, title: &str) -> anyhow::Result<Value> {
    let query: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("q", title)
        .finish();
    Ok(app
        .client
        .get(app.url(&format!("/demo-api/items?{query}")))
        .send()
        .await?
        .json()
        .await?)
}

#[tokio::test]
async fn anonymous_writes_to_the_demo_site_are_refused_and_change_nothing() -> anyhow::Result<()> {
    let app = spawn_with_the_default_body_limit().await?;
    let before = items_titled(&app, "").await?["total"].clone();
    let attempts = [
        app.client
            .post(app.url("/demo-api/items"))
            .json(&json!({"title": "Planted by a stranger"})),
        app.client
            .patch(app.url("/demo-api/items/item-0001"))
            .json(&json!({"title": "Planted by a stranger"})),
        app.client.delete(app.url("/demo-api/items/item-0001")),
        app.client
            .post(app.url("/demo-api/items/bulk-delete"))
            .json(&json!({"ids": ["item-0002"]})),
        app.client
            .post(app.url("/demo-api/items/bulk-update"))
            .json(&json!({"ids": ["item-0003"], "title": "Planted by a stranger"})),
        app.client
            .post(app.url("/demo-api/expenses/exp-101/decision"))
            .json(&json!({"decision": "approve", "reason": "I said so"})),
        // Neither a wrong key nor a wrong token opens it.
        app.client
            .post(app.url("/demo-api/items"))
            .header("x-tessera-demo-key", "0".repeat(64))
            .json(&json!({"title": "Planted by a stranger"})),
        app.client
            .post(app.url("/demo-api/items"))
            .bearer_auth("not-the-token-0123456789")
            .json(&json!({"title": "Planted by a stranger"})),
    ];
    for attempt in attempts {
        let response = attempt.send().await?;
        assert_eq!(response.status(), 401);
        let body: Value = response.json().await?;
        assert_eq!(body["error"]["code"], "unauthorized", "{body}");
        assert!(body["error"]["message"].is_string(), "{body}");
    }
    assert_eq!(items_titled(&app, "").await?["total"], before);
    assert_eq!(
        items_titled(&app, "Planted by a stranger").await?["total"],
        0
    );
    let item: Value = app
        .client
        .get(app.url("/demo-api/items/item-0001"))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(item["id"], "item-0001", "the item is still there: {item}");
    let claim = app.api_json("/demo-api/expenses/exp-101").await?;
    assert!(claim["decision"].is_null(), "{claim}");
    Ok(())
}

#[tokio::test]
async fn the_demo_key_or_the_api_token_may_write_to_the_demo_site() -> anyhow::Result<()> {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        // The key comes from the server's key in the store, whichever engine holds it.
        let Some(app) = TestApp::builder().backend(backend).try_spawn().await? else {
            continue;
        };
        writes_with_the_demo_key_or_the_api_token(&app).await?;
        app.cleanup().await?;
    }
    Ok(())
}

async fn writes_with_the_demo_key_or_the_api_token(app: &TestApp) -> anyhow::Result<()> {
    let with_key = app
        .client
        .post(app.url("/demo-api/items"))
        .header("x-tessera-demo-key", demo_key(&app.store).await?)
        .json(&json!({"title": "Written with the demo key"}))
        .send()
        .await?;
    assert_eq!(with_key.status(), 201);
    let with_token = app
        .api_post(
            "/demo-api/items",
            &json!({"title": "Written with the API token"}),
        )
        .await?;
    assert_eq!(with_token.status(), 201);
    assert_eq!(items_titled(app, "Written with the").await?["total"], 2);
    Ok(())
}

#[tokio::test]
async fn with_the_demo_off_the_demo_site_and_its_chat_are_not_served() -> anyhow::Result<()> {
    let app = TestApp::builder()
        .config(|config| config.demo = false)
        .spawn()
        .await?;
    for path in [
        "/demo-api/items",
        "/demo-api/items/item-0001",
        "/demo-api/expenses",
    ] {
        assert_eq!(app.get(path).await?.status(), 404, "{path}");
    }
    let write = app
        .api_post("/demo-api/items", &json!({"title": "Nowhere to go"}))
        .await?;
    assert_eq!(write.status(), 404);
    // The chat drives the demo site: it is off too, and says so rather than failing.
    let chat = app.api_post("/api/chat/sessions", &json!({})).await?;
    assert_eq!(chat.status(), 404);
    let page = app.get_with("/chat", &app.admin_cookie().await?).await?;
    assert_eq!(page.status(), 404);
    assert!(page.text().await?.contains("TESSERA_DEMO is off"));
    assert_eq!(app.get("/healthz").await?.status(), 200);
    Ok(())
}

#[tokio::test]
async fn a_chat_turn_through_the_api_reaches_the_demo_site_and_replies_with_the_header(
) -> anyhow::Result<()> {
    let app = spawn_with_the_default_body_limit().await?;
    let url = |path: &str| format!("{}{path}", app.address);
    let refused = app
        .client
        .post(url("/api/chat/sessions"))
        .json(&json!({}))
        .send()
        .await?;
    assert_eq!(refused.status(), 401, "the chat API needs the token");
    let session: Value = app
        .client
        .post(url("/api/chat/sessions"))
        .bearer_auth(API_TOKEN)
        .json(&json!({}))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(
        session["model"], "heuristic",
        "with no provider the offline planner drives the chat"
    );
    let id = session["id"].as_str().context("no session id")?.to_owned();
    let outcome: Value = app
        .client
        .post(url(&format!("/api/chat/sessions/{id}/turns")))
        .bearer_auth(API_TOKEN)
        .json(&json!({"text": "delete all completed items from last month"}))
        .send()
        .await?
        .json()
        .await?;
    let reply = outcome["reply"].as_str().context("no reply")?;
    assert!(
        reply.starts_with("Execution: 2 steps (1 succeeded, 1 awaiting confirmation)"),
        "{reply}"
    );
    let confirmation = outcome["pending_approvals"][0]["confirmation_id"]
        .as_str()
        .context("no approval")?
        .to_owned();
    let view: Value = app
        .client
        .get(url(&format!("/api/chat/sessions/{id}")))
        .bearer_auth(API_TOKEN)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(
        view["pending_approvals"][0]["confirmation_id"],
        confirmation.as_str()
    );
    let done: Value = app
        .client
        .post(url(&format!(
            "/api/chat/sessions/{id}/confirmations/{confirmation}"
        )))
        .bearer_auth(API_TOKEN)
        .json(&json!({"decision": "approve", "scope": "once"}))
        .send()
        .await?
        .json()
        .await?;
    let reply = done["reply"].as_str().context("no reply")?;
    assert!(
        reply.starts_with("Execution: 1 step (1 succeeded)\n1. [ok] bulkDeleteItems (mutation)"),
        "{reply}"
    );
    let twice = app
        .client
        .post(url(&format!(
            "/api/chat/sessions/{id}/confirmations/{confirmation}"
        )))
        .bearer_auth(API_TOKEN)
        .json(&json!({"decision": "approve"}))
        .send()
        .await?;
    assert_eq!(twice.status(), 409, "a decided confirmation is a conflict");
    let tools: Vec<Map<String, Value>> = app
        .client
        .get(url(&format!("/api/chat/sessions/{id}/tools")))
        .bearer_auth(API_TOKEN)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(tools.len(), 7);
    Ok(())
}
