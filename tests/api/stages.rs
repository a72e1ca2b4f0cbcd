//! Approval stages (issue 31): the next stage's people get links (by e-mail, through a real SMTP
//! server on loopback) only once the stage before is settled; a decline settles the whole ask
//! unless its stage says `on_decline: continue`. SQLite and PostgreSQL.

use std::time::Duration;

use anyhow::Context as _;
use serde_json::{json, Value};

use crate::{
    asks::{page_path, submit, wait_for_ask},
    helpers::{on_both_backends, Backend, TestApp},
    mailbox::Mailbox,
};

on_both_backends!(two_stages_ask_in_turn_and_a_decline_settles_unless_the_stage_goes_on);

/// Creates a two-stage ask (ana, then `second`): its id and ana's page path.
async fn two_stage_ask(
    app: &TestApp,
    second: &str,
    on_decline: &str,
) -> anyhow::Result<(String, String)> {
    let response = app
        .api_post(
            "/api/asks",
            &json!({"prompt": format!("Approve, then {second}?"),
                    "schema": {"type": "object", "properties": {"note": {"type": "string"}}},
                    "approvals": {"stages": [
                        {"assignees": ["ana@example.com"], "required": 1, "on_decline": on_decline},
                        {"assignees": [second], "required": 1}]}}),
        )
        .await?;
    assert_eq!(response.status(), 201);
    let created: Value = response.json().await?;
    let links = created["links"].as_array().context("links")?;
    assert_eq!(
        links.len(),
        1,
        "the second stage has no links yet: {created:#}"
    );
    assert_eq!(links[0]["assignee"], "ana@example.com");
    Ok((
        created["id"].as_str().context("id")?.to_owned(),
        page_path(links[0]["link"].as_str().context("link")?)?,
    ))
}

async fn two_stages_ask_in_turn_and_a_decline_settles_unless_the_stage_goes_on(
    backend: Backend,
) -> anyhow::Result<()> {
    let mailbox = Mailbox::start().await?;
    let notify = mailbox.notify_config("@example.com")?;
    let app = TestApp::builder()
        .backend(backend)
        .config(|config| config.notify = notify)
        .spawn()
        .await?;
    let mail_to = |address: &'static str| {
        move |messages: &[crate::mailbox::Delivered]| {
            messages.iter().any(|message| message.is_to(address))
        }
    };

    // Ana approves: only then is bo asked, by e-mail, and his answer settles the ask.
    let (id, ana) = two_stage_ask(&app, "bo@example.com", "settle").await?;
    mailbox
        .wait_until(Duration::from_secs(20), mail_to("ana@example.com"))
        .await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !mailbox
            .messages()?
            .iter()
            .any(|message| message.is_to("bo@example.com")),
        "bo is not asked before ana's stage is settled"
    );
    assert_eq!(submit(&app, &ana, "note=ok").await?.status(), 303);
    let ask = app.api_json(&format!("/api/asks/{id}")).await?;
    assert_eq!(
        ask["status"], "waiting",
        "the second stage is open: {ask:#}"
    );
    let messages = mailbox
        .wait_until(Duration::from_secs(20), mail_to("bo@example.com"))
        .await?;
    let bo_mail = messages
        .iter()
        .find(|message| message.is_to("bo@example.com"))
        .context("bo's mail")?;
    let bo = bo_mail.page_path().context("a link in bo's mail")?;
    assert_eq!(submit(&app, &bo, "note=go").await?.status(), 303);
    let ask = wait_for_ask(&app, &id, |ask| ask["status"] == "submitted").await?;
    assert_eq!(ask["response"], json!({"note": "go"}));
    let events: Vec<&str> = ask["history"]
        .as_array()
        .context("history")?
        .iter()
        .filter_map(|event| event["event"].as_str())
        .collect();
    assert_eq!(
        events,
        [
            "created",
            "notified",
            "answered",
            "stage_started",
            "notified",
            "answered"
        ],
        "{:#}",
        ask["history"]
    );

    // The run page shows the history as a readable timeline.
    let run_page = app.admin_html(&format!("/runs/{id}")).await?;
    assert!(
        run_page.contains("data-testid=\"page-history\""),
        "{run_page}"
    );
    assert!(
        run_page.contains("Stage 2: 1 of 1 approvals needed"),
        "the stage under way: {run_page}"
    );
    for sentence in [
        "Asked ana@example.com.",
        "Sent ana@example.com their link by e-mail.",
        "ana@example.com answered.",
        "Stage 2 began.",
        "bo@example.com answered.",
    ] {
        assert!(run_page.contains(sentence), "{sentence} in {run_page}");
    }

    // Ana declines: the whole ask is declined and cy is never asked.
    let (id, ana) = two_stage_ask(&app, "cy@example.com", "settle").await?;
    assert_eq!(
        submit(&app, &ana, "_action=decline&_reason=No")
            .await?
            .status(),
        303
    );
    let ask = wait_for_ask(&app, &id, |ask| ask["status"] == "declined").await?;
    assert_eq!(ask["assignees"], json!(["ana@example.com"]), "{ask:#}");

    // With `on_decline: continue`, dee is asked after ana declines.
    let (id, ana) = two_stage_ask(&app, "dee@example.com", "continue").await?;
    assert_eq!(submit(&app, &ana, "_action=decline").await?.status(), 303);
    let ask = app.api_json(&format!("/api/asks/{id}")).await?;
    assert_eq!(ask["status"], "waiting", "{ask:#}");
    assert_eq!(
        ask["assignees"],
        json!(["ana@example.com", "dee@example.com"])
    );
    mailbox
        .wait_until(Duration::from_secs(20), mail_to("dee@example.com"))
        .await?;
    app.cleanup().await
}
