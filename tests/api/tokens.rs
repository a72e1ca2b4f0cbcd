//! Page tokens exist at rest and in logs only as their hash: after full runs (an ask notified,
//! reissued, extended, answered and called back; an ask for two assignees, one link reissued,
//! both answered; an ask made and answered over MCP; a demo
//! workflow answered through a link from the run page), no token appears in the database — raw SQLite files, every PostgreSQL table —
//! in the captured tracing output, or in the runs, asks, generations and metrics answers.

use anyhow::Context as _;
use serde_json::{json, Value};
use tessera::{
    config::Secret,
    notify::{NotifyConfig, RecipientAllowlist},
};

use crate::{
    helpers::{on_both_backends, Backend, HttpSink, TestApp},
    mcp::McpClient,
};

const SECRET: &str = "whsec_tokens_0123456789abcdef";

on_both_backends!(no_page_token_is_stored_logged_or_shown_after_full_runs);

/// The 48-hex token of a page link.
fn token_of(link: &str) -> anyhow::Result<String> {
    let token = link
        .rsplit_once("/p/")
        .map(|(_, token)| token.to_owned())
        .context("a page link")?;
    anyhow::ensure!(token.len() == 48, "a token: {token}");
    Ok(token)
}

async fn post_json(app: &TestApp, path: &str, body: &Value) -> anyhow::Result<Value> {
    let response = app.api_post(path, body).await?;
    let status = response.status();
    let body: Value = response.json().await?;
    anyhow::ensure!(status.is_success(), "{path}: {status} {body:#}");
    Ok(body)
}

async fn answer(app: &TestApp, link: &str, fields: &str) -> anyhow::Result<u16> {
    let path = format!("/p/{}", token_of(link)?);
    let html = app.get(&path).await?.text().await?;
    let csrf = html
        .split("name=\"_csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_default();
    let response = app
        .post_form(&path, "", format!("_csrf={csrf}&{fields}"))
        .await?;
    Ok(response.status().as_u16())
}

async fn no_page_token_is_stored_logged_or_shown_after_full_runs(
    backend: Backend,
) -> anyhow::Result<()> {
    let logs = crate::helpers::captured_logs();
    let sink = HttpSink::start(&[]).await?;
    let notify_url = sink.url("/notify")?;
    let app = TestApp::builder()
        .backend(backend)
        .config(|config| {
            config.notify = NotifyConfig {
                webhook_url: Some(notify_url),
                webhook_secret: Some(Secret::new(SECRET)),
                ask_recipients: RecipientAllowlist {
                    email: vec!["@example.com".into()],
                    ..RecipientAllowlist::default()
                },
                ..NotifyConfig::default()
            };
            sink.admit_in(config);
        })
        .spawn()
        .await?;
    let mut tokens = Vec::new();

    // An ask: notified, given a fresh link, extended, answered, called back.
    let created = post_json(
        &app,
        "/api/asks",
        &json!({"prompt": "Approve?", "notify": true, "callback_url": sink.url("/hooks/ask")?.as_str()}),
    )
    .await?;
    let ask_id = created["id"].as_str().context("an ask id")?.to_owned();
    tokens.push(token_of(
        created["link"].as_str().context("the creator's link")?,
    )?);
    for seen in sink.seen().iter().filter(|seen| seen.path == "/notify") {
        let notification: Value = serde_json::from_slice(&seen.body)?;
        tokens.push(token_of(notification["link"].as_str().context("a link")?)?);
    }
    let reissued = post_json(&app, &format!("/api/asks/{ask_id}/reissue"), &json!({})).await?;
    let ask_link = reissued["link"]
        .as_str()
        .context("a fresh link")?
        .to_owned();
    tokens.push(token_of(&ask_link)?);
    post_json(
        &app,
        &format!("/api/asks/{ask_id}/extend"),
        &json!({"expires_in": 7200}),
    )
    .await?;
    assert_eq!(answer(&app, &ask_link, "answer=approved").await?, 303);
    app.wait_until(&format!("/api/asks/{ask_id}"), |ask| {
        ask["callback"]["state"] == "delivered"
    })
    .await?;

    // An ask for two assignees: each link once in the answer, one reissued, both answered.
    let assigned = post_json(
        &app,
        "/api/asks",
        &json!({"prompt": "Approve together?", "assignees": ["ana@example.com", "bo@example.com"], "approvals": {"required": 2}}),
    )
    .await?;
    let assigned_id = assigned["id"].as_str().context("an ask id")?.to_owned();
    let mut people_links = Vec::new();
    for link in assigned["links"].as_array().context("links")? {
        let link = link["link"].as_str().context("a person's link")?.to_owned();
        tokens.push(token_of(&link)?);
        people_links.push(link);
    }
    let fresh = post_json(
        &app,
        &format!("/api/asks/{assigned_id}/reissue"),
        &json!({"assignee": "bo@example.com"}),
    )
    .await?;
    let bo_link = fresh["links"][0]["link"]
        .as_str()
        .context("bo's fresh link")?
        .to_owned();
    tokens.push(token_of(&bo_link)?);
    assert_eq!(answer(&app, &people_links[0], "answer=yes").await?, 303);
    assert_eq!(answer(&app, &bo_link, "answer=yes").await?, 303);
    app.wait_until(&format!("/api/asks/{assigned_id}"), |ask| {
        ask["status"] == "submitted"
    })
    .await?;

    // An ask over MCP: the link is in the ask_person result only; answered through it.
    let mcp = McpClient::connect(&app, json!({})).await?;
    let asked = mcp
        .call("ask_person", json!({"prompt": "Approve over MCP?"}))
        .await?;
    let mcp_ask = &asked["structuredContent"];
    let mcp_ask_id = mcp_ask["id"].as_str().context("an MCP ask id")?.to_owned();
    let mcp_link = mcp_ask["link"].as_str().context("the MCP link")?.to_owned();
    tokens.push(token_of(&mcp_link)?);
    assert_eq!(answer(&app, &mcp_link, "answer=yes").await?, 303);
    let mcp_answer = mcp
        .call(
            "get_answer",
            json!({"ask_id": mcp_ask_id, "wait_seconds": 30}),
        )
        .await?;
    anyhow::ensure!(
        mcp_answer["structuredContent"]["status"] == "submitted",
        "{mcp_answer:#}"
    );
    let mcp_listed = mcp.call("list_asks", json!({})).await?;

    // A demo workflow answered through the link an admin gets on the run page.
    let run = post_json(&app, "/api/runs", &json!({"workflow": "bulk-approval"})).await?;
    let run_id = run["id"].as_str().context("a run id")?.to_owned();
    let waiting = app
        .wait_until(&format!("/api/runs/{run_id}"), |run| {
            run["status"] == "waiting"
        })
        .await?;
    let page_id = waiting["waiting_page"].as_str().context("a page")?;
    let cookie = app.admin_cookie().await?;
    let run_page = app
        .post_form(
            &format!("/runs/{run_id}/pages/{page_id}"),
            &cookie,
            "action=reissue",
        )
        .await?
        .text()
        .await?;
    let run_link = run_page
        .split("data-testid=\"page-link\"")
        .nth(1)
        .and_then(|rest| rest.split("/p/").nth(1))
        .map(|rest| format!("http://x/p/{}", &rest[..48.min(rest.len())]))
        .context("the run page shows a working link")?;
    tokens.push(token_of(&run_link)?);
    let fields = "decision=approve&claim_ids=exp-101&reason=Receipts+attached";
    assert_eq!(answer(&app, &run_link, fields).await?, 303);
    app.wait_until(&format!("/api/runs/{run_id}"), |run| {
        run["status"] == "succeeded"
    })
    .await?;
    assert_eq!(tokens.len(), 8, "every link was seen: {tokens:?}");

    // What the API shows.
    let mut shown = format!("{mcp_answer}{mcp_listed}");
    for path in [
        format!("/api/runs/{run_id}"),
        format!("/api/runs/{ask_id}"),
        format!("/api/asks/{ask_id}"),
        format!("/api/asks/{mcp_ask_id}"),
        format!("/api/asks/{assigned_id}"),
        "/api/runs".to_owned(),
        "/api/generations".to_owned(),
    ] {
        shown.push_str(&app.api_json(&path).await?.to_string());
    }
    shown.push_str(&app.get("/metrics").await?.text().await?);
    for run in [&run_id, &ask_id, &assigned_id] {
        let page = app.get_with(&format!("/runs/{run}"), &cookie).await?;
        shown.push_str(&page.text().await?);
    }

    // What the database holds.
    let stored = match backend {
        Backend::Sqlite => {
            let dir = app.stop().await?;
            let mut bytes = Vec::new();
            for name in ["tessera.db", "tessera.db-wal", "tessera.db-shm"] {
                if let Ok(file) = std::fs::read(dir.path().join(name)) {
                    bytes.extend(file);
                }
            }
            anyhow::ensure!(bytes.len() > 4096, "the database files were read");
            String::from_utf8_lossy(&bytes).into_owned()
        }
        Backend::Postgres => {
            let rows = tessera_store::testing::postgres_rows(&app.store).await?;
            app.cleanup().await?;
            rows
        }
    };
    anyhow::ensure!(stored.contains("Approve?"), "the scan reads the runs' data");

    let logged = logs.text();
    anyhow::ensure!(
        logged.contains(&ask_id) && logged.contains("page ready"),
        "the app's own log lines were captured"
    );
    for token in &tokens {
        assert!(
            !stored.contains(token.as_str()),
            "a token is stored: {token}"
        );
        let line = logged.lines().find(|line| line.contains(token.as_str()));
        assert!(line.is_none(), "a token is logged: {line:?}");
        assert!(!shown.contains(token.as_str()), "a token is shown: {token}");
    }
    Ok(())
}
