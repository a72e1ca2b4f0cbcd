//! Manual tools as forms at `/chat/tools/{name}`, and the chat page's live stream at
//! `/chat/events`, as a browser uses them: admin cookie, form posts, server-sent events.

use std::time::Duration;

use anyhow::{bail, Context as _};
use serde_json::Value;
use tessera::{
    demo::items::model::{ItemFilter, ItemId, ItemPatch, ItemStatus},
    store::{now_ms, Store},
};

use crate::{
    chat_ui::{approval_action, seeded_app},
    helpers::{header, TestApp, FROM_ANOTHER_SITE},
};

async fn items_titled(store: &Store, title: &str) -> anyhow::Result<Vec<String>> {
    let page = store
        .search_demo_items(&ItemFilter {
            text: Some(title.to_owned()),
            limit: 1000,
            ..ItemFilter::default()
        })
        .await?;
    Ok(page
        .items
        .into_iter()
        .filter(|item| item.title == title)
        .map(|item| item.id.0)
        .collect())
}

async fn exists(store: &Store, id: &str) -> bool {
    store.demo_item(&ItemId(id.to_owned())).await.is_ok()
}

#[tokio::test]
async fn a_tool_form_has_a_labelled_field_for_every_parameter() -> anyhow::Result<()> {
    let (app, cookie) = seeded_app().await?;
    let chat = app.get_with("/chat", &cookie).await?.text().await?;
    assert!(
        chat.contains("href=\"/chat/tools/createItem\""),
        "the panel links each tool to its form"
    );

    let response = app.get_with("/chat/tools/createItem", &cookie).await?;
    assert_eq!(response.status(), 200);
    let html = response.text().await?;
    assert!(html.contains("action=\"/chat/tools/createItem\""), "{html}");
    for name in [
        "title",
        "description",
        "status",
        "priority",
        "assignee",
        "due_date",
    ] {
        assert!(
            html.contains(&format!("name=\"{name}\"")),
            "a field for {name}"
        );
    }
    assert!(
        html.contains("type=\"date\""),
        "the date parameter is a date input"
    );
    assert!(
        html.contains("value=\"in_progress\""),
        "enum options come from the schema"
    );
    assert!(html.contains("Due date"), "fields are labelled");

    let unknown = app.get_with("/chat/tools/noSuchTool", &cookie).await?;
    assert_eq!(unknown.status(), 404);
    Ok(())
}

#[tokio::test]
async fn a_wrong_field_shows_the_form_again_with_the_values_and_a_message() -> anyhow::Result<()> {
    let (app, cookie) = seeded_app().await?;
    let response = app
        .post_form(
            "/chat/tools/createItem",
            &cookie,
            "title=Water+the+ferns&description=keep+me+please&due_date=next+tuesday".to_owned(),
        )
        .await?;
    assert_eq!(response.status(), 422);
    let html = response.text().await?;
    assert!(
        html.contains("value=\"Water the ferns\""),
        "the title is kept"
    );
    assert!(html.contains("keep me please"), "the description is kept");
    assert!(
        html.contains("value=\"next tuesday\""),
        "the wrong value is kept"
    );
    assert!(
        html.contains("aria-invalid=\"true\""),
        "the wrong field is marked"
    );
    assert!(html.contains("Due date"), "the message names the field");
    assert!(
        items_titled(&app.store, "Water the ferns")
            .await?
            .is_empty(),
        "nothing ran"
    );
    Ok(())
}

#[tokio::test]
async fn a_valid_tool_form_runs_the_tool_and_the_result_joins_the_conversation(
) -> anyhow::Result<()> {
    let (app, cookie) = seeded_app().await?;
    let response = app
        .post_form(
            "/chat/tools/createItem",
            &cookie,
            "title=Water+the+ferns&priority=high&due_date=2026-12-01".to_owned(),
        )
        .await?;
    assert_eq!(response.status(), 303);
    assert_eq!(header(&response, "location"), Some("/chat"));
    assert_eq!(items_titled(&app.store, "Water the ferns").await?.len(), 1);

    let html = app.get_with("/chat", &cookie).await?.text().await?;
    assert!(
        html.contains("/tool createItem"),
        "the person's call is in the conversation"
    );
    assert!(
        html.contains("create item ran."),
        "so is its result, in words: {html}"
    );
    assert!(html.contains("data-status=\"succeeded\""));
    Ok(())
}

#[tokio::test]
async fn a_destructive_tool_run_by_hand_waits_for_an_approval() -> anyhow::Result<()> {
    let (app, cookie) = seeded_app().await?;
    let response = app
        .post_form("/chat/tools/deleteItem", &cookie, "id=item-0007".to_owned())
        .await?;
    assert_eq!(response.status(), 303);
    assert!(
        exists(&app.store, "item-0007").await,
        "nothing is deleted before the approval"
    );

    let html = app.get_with("/chat", &cookie).await?.text().await?;
    assert!(html.contains("data-testid=\"pending-approval\""), "{html}");
    assert!(html.contains("deleteItem"));
    assert!(
        !html.contains("name=\"ids\""),
        "a call on one item has nothing to untick"
    );
    assert!(html.contains(">Delete this item</h2>"), "{html}");
    assert!(
        html.contains(">Delete 1 item</p>"),
        "the approval's summary: {html}"
    );
    assert!(!html.contains("untick"), "no talk of ticks without any");
    let action = approval_action(&html).context("no approval form")?;
    // Exactly what the confirm view's form sends when its confirm button is pressed.
    let approved = app
        .post_form(&action, &cookie, "scope=once&_action=submit".to_owned())
        .await?;
    assert_eq!(approved.status(), 303);
    assert!(
        !exists(&app.store, "item-0007").await,
        "deleted after the approval"
    );
    Ok(())
}

#[tokio::test]
async fn a_cross_site_tool_post_is_refused() -> anyhow::Result<()> {
    let (app, cookie) = seeded_app().await?;
    let response = app
        .post_form_with(
            "/chat/tools/createItem",
            &cookie,
            "title=Evil",
            &FROM_ANOTHER_SITE,
        )
        .await?;
    assert_eq!(response.status(), 403);
    assert!(items_titled(&app.store, "Evil").await?.is_empty());
    Ok(())
}

/// Leaves exactly `count` of the 250 seed items open, the rest in progress.
async fn exactly_open(store: &Store, count: usize) -> anyhow::Result<()> {
    let all: Vec<ItemId> = (1..=250)
        .map(|index| ItemId(format!("item-{index:04}")))
        .collect();
    let patch = |status| ItemPatch {
        status: Some(status),
        ..ItemPatch::default()
    };
    store
        .bulk_update_demo_items(&all, &patch(ItemStatus::InProgress), now_ms() - 1000)
        .await?;
    store
        .bulk_update_demo_items(&all[..count], &patch(ItemStatus::Open), now_ms())
        .await?;
    Ok(())
}

/// One server-sent event: its name and its JSON data.
struct Sent {
    name: String,
    data: Value,
}

/// Reads `response` as server-sent events until a `reply` event (included).
async fn events_until_reply(mut response: reqwest::Response) -> anyhow::Result<Vec<Sent>> {
    let mut buffer = String::new();
    let mut events = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let mut name = String::new();
            let mut data = String::new();
            for line in block.lines() {
                if let Some(value) = line.strip_prefix("event:") {
                    name = value.trim().to_owned();
                } else if let Some(value) = line.strip_prefix("data:") {
                    data.push_str(value.trim_start());
                }
            }
            if name.is_empty() {
                continue; // a keep-alive comment
            }
            let reply = name == "reply";
            events.push(Sent {
                name,
                data: serde_json::from_str(&data)?,
            });
            if reply {
                return Ok(events);
            }
        }
    }
    bail!("the stream ended before the reply")
}

#[tokio::test]
async fn the_chat_stream_shows_a_247_item_update_chunk_by_chunk_in_order() -> anyhow::Result<()> {
    let (app, cookie) = seeded_app().await?;
    exactly_open(&app.store, 247).await?;
    app.post_form(
        "/chat",
        &cookie,
        "text=mark+all+open+items+as+done".to_owned(),
    )
    .await?;
    let html = app.get_with("/chat", &cookie).await?.text().await?;
    let action = approval_action(&html).context("no pending approval")?;

    let stream = app.get_with("/chat/events", &cookie).await?;
    assert_eq!(stream.status(), 200);
    assert_eq!(header(&stream, "content-type"), Some("text/event-stream"));
    let listening = tokio::spawn(tokio::time::timeout(
        Duration::from_secs(60),
        events_until_reply(stream),
    ));
    let approved = app
        .post_form(&action, &cookie, "decision=approve".to_owned())
        .await?;
    assert_eq!(approved.status(), 303);
    let events = listening.await?.context("no reply on the stream")??;

    let names: Vec<&str> = events.iter().map(|event| event.name.as_str()).collect();
    let started = names
        .iter()
        .position(|name| *name == "step_started")
        .context("no step_started")?;
    assert_eq!(
        events[started].data["chunks"],
        serde_json::json!([100, 100, 47])
    );
    let progress: Vec<(u64, u64, u64)> = events
        .iter()
        .filter(|event| event.name == "progress")
        .map(|event| {
            let progress = &event.data["progress"];
            (
                progress["items_done"].as_u64().unwrap_or(u64::MAX),
                progress["chunks_done"].as_u64().unwrap_or(u64::MAX),
                progress["chunks_total"].as_u64().unwrap_or(u64::MAX),
            )
        })
        .collect();
    assert_eq!(
        progress,
        vec![(0, 0, 3), (100, 1, 3), (200, 2, 3), (247, 3, 3)],
        "items done and chunk k of n, in order"
    );
    let first_progress = names.iter().position(|name| *name == "progress");
    let finished = names.iter().rposition(|name| *name == "step_finished");
    assert!(first_progress > Some(started), "{names:?}");
    assert!(
        finished > names.iter().rposition(|name| *name == "progress"),
        "{names:?}"
    );
    assert_eq!(names.last(), Some(&"reply"));
    let reply = events
        .last()
        .and_then(|event| event.data["text"].as_str())
        .unwrap_or_default();
    assert!(
        reply.contains("247 of 247 items done in 3 of 3 chunks (100+100+47)"),
        "{reply}"
    );
    Ok(())
}

#[tokio::test]
async fn the_chat_stream_needs_the_admin_session() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let response = app.get_with("/chat/events", "").await?;
    assert_eq!(response.status(), 303);
    Ok(())
}
