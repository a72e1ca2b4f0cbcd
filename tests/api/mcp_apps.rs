//! MCP Apps at `/mcp`: a client that declares `io.modelcontextprotocol/ui` gets `ask_person`
//! naming the `ui://` page, the view's own tools and the resource; its asks are answered through
//! the view by the page's own decoder, once, and nothing that could answer the page (a token, a
//! link, the view) or the page's data ever reaches `content` or `structuredContent`. A client
//! without the extension sees none of it. `end2end/tests/mcp-apps.spec.ts` answers the same view
//! in Chromium, inside a sandboxed iframe.

use std::{sync::Arc, time::Duration};

use anyhow::Context as _;
use serde_json::{json, Value};
use tessera::{
    agent::AllowedModels,
    llm::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelName},
    notify::RecipientAllowlist,
    startup::Options,
};
use tokio::sync::Semaphore;

use crate::{
    helpers::{on_both_backends, Backend, TestApp},
    mcp::{text_of, McpClient},
};

const MIME: &str = "text/html;profile=mcp-app";

fn apps() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [MIME]}}})
}

/// A line of the page's data no model may read.
const ROW_MARKER: &str = "Invoice RX-7731 for Ilse Brandt";

fn expense_ask() -> Value {
    json!({
        "prompt": "Log the expense for {{ trip }}",
        "schema": {
            "type": "object",
            "properties": {
                "amount": {"type": "integer", "title": "Amount", "minimum": 1},
                "comment": {"type": "string", "title": "Comment"},
            },
            "required": ["amount"],
        },
        "data": {"trip": "Berlin", "receipts": [{"line": ROW_MARKER, "total": 42}]},
    })
}

fn page_of(result: &Value) -> anyhow::Result<(String, String)> {
    let page = &result["_meta"]["tessera/page"];
    let view = page["view"].as_str().context("a view")?.to_owned();
    let html = page["html"].as_str().unwrap_or_default().to_owned();
    Ok((view, html))
}

/// Sends `body` through `view` as the view's script does, expecting `status`.
async fn submit_through(
    client: &McpClient<'_>,
    view: &str,
    body: &str,
    status: &str,
) -> anyhow::Result<Value> {
    let result = client
        .call("submit_answer", json!({"view": view, "body": body}))
        .await?;
    anyhow::ensure!(
        result["structuredContent"] == json!({ "status": status }),
        "expected {status}: {result:#}"
    );
    Ok(result)
}

/// Everything a model may read of a tool result: its content and structured content.
fn model_visible(result: &Value) -> String {
    format!("{}{}", result["content"], result["structuredContent"])
}

/// Fails when `result` shows the model anything that answers the page or the page's data.
fn assert_nothing_for_the_model(
    result: &Value,
    secrets: &[&str],
    what: &str,
) -> anyhow::Result<()> {
    let visible = model_visible(result);
    for secret in secrets.iter().chain([&ROW_MARKER, &"/p/"]) {
        anyhow::ensure!(
            !visible.contains(secret),
            "{what} shows the model `{secret}`: {visible}"
        );
    }
    // No 48-character hex run (a page token or a view) in any form.
    let hex_run = visible
        .split(|c: char| !c.is_ascii_hexdigit())
        .any(|run| run.len() >= 32);
    anyhow::ensure!(!hex_run, "{what} shows the model a token: {visible}");
    Ok(())
}

#[tokio::test]
async fn a_client_without_the_extension_sees_no_app() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    // Declaring the extension without the app MIME type is not declaring it.
    for capabilities in [
        json!({}),
        json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}}}),
    ] {
        let client = McpClient::connect(&app, capabilities.clone()).await?;
        let (tools, names) = client.list_tools().await?;
        assert_eq!(
            names,
            ["ask_person", "get_answer", "cancel_ask", "list_asks"],
            "{capabilities}"
        );
        assert!(
            tools.iter().all(|tool| tool.get("_meta").is_none()),
            "{tools:#?}"
        );
        let resources = client.request("resources/list", json!({})).await?;
        assert_eq!(resources["result"]["resources"], json!([]), "{resources:#}");
        // The view's tools are not listed here; a host may still call them over a session of
        // its own, and without a view they reach nothing.
        let refused = client.call("show_page", json!({"view": "x"})).await?;
        assert_eq!(
            text_of(&refused),
            "view: no page has this view",
            "{refused:#}"
        );
        // And ask_person still hands over the link, as before.
        let created = client.call("ask_person", expense_ask()).await?;
        assert!(
            created["structuredContent"]["link"]
                .as_str()
                .is_some_and(|link| link.contains("/p/")),
            "{created:#}"
        );
        assert!(created.get("_meta").is_none(), "{created:#}");
    }
    app.cleanup().await
}

#[tokio::test]
async fn an_app_client_gets_the_page_resource_and_the_views_own_tools() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let client = McpClient::connect(&app, apps()).await?;
    let (tools, names) = client.list_tools().await?;
    assert_eq!(
        names,
        [
            "ask_person",
            "get_answer",
            "cancel_ask",
            "list_asks",
            "show_page",
            "submit_answer"
        ]
    );
    let uri = "ui://tessera/page/v1";
    assert_eq!(
        tools[0]["_meta"]["ui"]["resourceUri"], uri,
        "{:#}",
        tools[0]
    );
    assert_eq!(tools[0]["_meta"]["ui/resourceUri"], uri);
    for view_tool in &tools[4..] {
        assert_eq!(
            view_tool["_meta"]["ui"]["visibility"],
            json!(["app"]),
            "{view_tool:#}"
        );
    }
    let resources = client.request("resources/list", json!({})).await?;
    assert_eq!(
        resources["result"]["resources"][0]["uri"], uri,
        "{resources:#}"
    );
    assert_eq!(resources["result"]["resources"][0]["mimeType"], MIME);

    let read = client
        .request("resources/read", json!({"uri": uri}))
        .await?;
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["mimeType"], MIME, "{read:#}");
    assert_eq!(contents["_meta"]["ui"]["prefersBorder"], true);
    let html = contents["text"].as_str().context("the view's HTML")?;
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("ui/initialize") && html.contains("submit_answer"));
    // It reaches nothing but the host: no external script, stylesheet or fetch.
    for outside in [
        "<script src",
        "<link",
        "fetch(",
        "XMLHttpRequest",
        "url(http",
        "@import",
    ] {
        assert!(!html.contains(outside), "the view loads `{outside}`");
    }
    let unknown = client
        .request("resources/read", json!({"uri": "ui://tessera/page/v9"}))
        .await?;
    assert!(unknown["error"].is_object(), "{unknown:#}");
    app.cleanup().await
}

on_both_backends!(
    a_page_shown_inline_is_answered_once_through_its_view_and_the_model_reads_only_the_answer,
    a_person_declines_inline_and_strangers_reach_nothing,
);

async fn a_page_shown_inline_is_answered_once_through_its_view_and_the_model_reads_only_the_answer(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let client = McpClient::connect(&app, apps()).await?;
    // wait_seconds does not hold the call: the person is already looking at the page.
    let mut ask = expense_ask();
    ask["wait_seconds"] = json!(600);
    let created = client.call("ask_person", ask).await?;
    assert_eq!(created["isError"], false, "{created:#}");
    let asked = &created["structuredContent"];
    assert_eq!(asked["status"], "waiting", "{asked:#}");
    assert_eq!(asked["link"], Value::Null);
    assert!(asked.get("links").is_none());
    let id = asked["id"].as_str().context("an id")?.to_owned();
    let said = created["content"][1]["text"].as_str().unwrap_or_default();
    assert!(
        said.starts_with("A page was shown to the person"),
        "{created:#}"
    );
    let (view, html) = page_of(&created)?;
    let link = created["_meta"]["tessera/page"]["link"]
        .as_str()
        .context("the link, for the view")?
        .to_owned();
    assert!(html.contains("Log the expense for Berlin"), "{html}");
    // A fragment to place in the view: no document, no form action, no CSRF token, no navigation.
    assert!(!html.contains("<html") && !html.contains("<nav"), "{html}");
    assert!(
        !html.contains("action=") && !html.contains("_csrf"),
        "{html}"
    );
    assert!(!html.contains(&link) && !html.contains("/p/"), "{html}");
    let mut results = vec![("ask_person", created.clone())];

    // A wrong value: the page again with the person's values and a message; nothing recorded.
    let wrong = submit_through(
        &client,
        &view,
        "amount=0&comment=Taxi&_action=submit",
        "invalid",
    )
    .await?;
    let (_, again) = page_of(&wrong)?;
    assert!(
        again.contains("value=\"0\"") && again.contains("Taxi</textarea>"),
        "{again}"
    );
    assert!(again.contains("aria-invalid=\"true\""), "{again}");
    results.push(("submit_answer (wrong)", wrong));

    let right = submit_through(
        &client,
        &view,
        "amount=42&comment=Taxi&_action=submit",
        "submitted",
    )
    .await?;
    let (_, receipt) = page_of(&right)?;
    assert!(
        receipt.contains("your answer was received") && receipt.contains("42"),
        "{receipt}"
    );
    results.push(("submit_answer (right)", right));

    // Once: a second answer is refused with the receipt; the first stands.
    let twice = submit_through(&client, &view, "amount=7&_action=submit", "closed").await?;
    results.push(("submit_answer (again)", twice));
    // A reloaded view is shown the receipt.
    let reloaded = client.call("show_page", json!({"view": view})).await?;
    assert_eq!(
        reloaded["structuredContent"],
        json!({"status": "closed"}),
        "{reloaded:#}"
    );
    assert!(page_of(&reloaded)?.1.contains("42"));
    results.push(("show_page", reloaded));

    let answered = client
        .call("get_answer", json!({"ask_id": id, "wait_seconds": 10}))
        .await?;
    assert_eq!(
        answered["structuredContent"]["status"], "submitted",
        "{answered:#}"
    );
    assert_eq!(
        answered["structuredContent"]["response"],
        json!({"amount": 42, "comment": "Taxi"})
    );
    assert_eq!(
        answered["structuredContent"]["answers"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    results.push(("get_answer", answered));

    // The run went on once: every step ran one time.
    let run = app.wait_for_status(&id, "succeeded").await?;
    let steps = run["steps"].as_array().context("steps")?;
    assert!(steps.iter().all(|step| step["attempts"] == 1), "{steps:#?}");

    for (what, result) in &results {
        assert_nothing_for_the_model(result, &[&view, &link], what)?;
    }
    app.cleanup().await
}

async fn a_person_declines_inline_and_strangers_reach_nothing(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let client = McpClient::connect(&app, apps()).await?;
    let created = client.call("ask_person", expense_ask()).await?;
    let (view, _) = page_of(&created)?;
    let link = created["_meta"]["tessera/page"]["link"]
        .as_str()
        .context("the link")?
        .to_owned();
    let token = link.rsplit('/').next().unwrap_or_default().to_owned();
    let id = created["structuredContent"]["id"]
        .as_str()
        .context("an id")?
        .to_owned();

    // The link's token, a made-up view, an over-long one: none is a view.
    for stranger in [token.clone(), "0".repeat(48), "v".repeat(500)] {
        let shown = client.call("show_page", json!({"view": stranger})).await?;
        assert_eq!(shown["isError"], true, "{shown:#}");
        assert!(text_of(&shown).starts_with("view: "), "{shown:#}");
        let sent = client
            .call(
                "submit_answer",
                json!({"view": stranger, "body": "amount=5&_action=submit"}),
            )
            .await?;
        assert_eq!(sent["isError"], true, "{sent:#}");
    }
    let unknown = client
        .call(
            "submit_answer",
            json!({"view": view, "body": "amount=5", "page": 1}),
        )
        .await?;
    assert_eq!(
        text_of(&unknown),
        "page: unknown field `page`; the fields are view, body"
    );
    let long_query = client
        .call(
            "show_page",
            json!({"view": view, "query": "q".repeat(5000)}),
        )
        .await?;
    assert!(
        text_of(&long_query).starts_with("query: "),
        "{long_query:#}"
    );

    // The person declines, saying why.
    let declined = submit_through(
        &client,
        &view,
        "amount=&_action=decline&_reason=Not+my+trip",
        "submitted",
    )
    .await?;
    assert_nothing_for_the_model(&declined, &[&view, &token], "the decline")?;
    let answered = client
        .call("get_answer", json!({"ask_id": id, "wait_seconds": 10}))
        .await?;
    assert_eq!(
        answered["structuredContent"]["status"], "declined",
        "{answered:#}"
    );
    assert_eq!(
        answered["structuredContent"]["answers"][0]["reason"],
        "Not my trip"
    );
    app.cleanup().await
}

/// A model that answers nothing until released, then refuses: the page then comes from the
/// heuristic fallback, as it would after a slow model failed.
struct HeldModel(Arc<Semaphore>);

#[async_trait::async_trait]
impl ChatModel for HeldModel {
    fn name(&self) -> ModelName {
        ModelName::new("scripted", "held")
    }

    async fn chat(&self, _request: ChatRequest) -> Result<ChatResponse, ModelError> {
        let _released = self.0.acquire().await;
        Err(ModelError::Refused {
            reason: "held".to_owned(),
        })
    }
}

#[tokio::test]
async fn a_view_given_before_its_page_shows_it_once_it_is_made() -> anyhow::Result<()> {
    let release = Arc::new(Semaphore::new(0));
    let options = Options {
        models: Some(AllowedModels::with_model(
            "scripted:held",
            Arc::new(HeldModel(release.clone())),
        )),
        ..Options::default()
    };
    let app = TestApp::builder()
        .backend(Backend::Sqlite)
        .options(options)
        .spawn()
        .await?;
    let client = McpClient::connect(&app, apps()).await?;
    // The call does not wait for the model: it answers with the view and no page yet.
    let created = client.call("ask_person", expense_ask()).await?;
    let page = &created["_meta"]["tessera/page"];
    assert_eq!(page["status"], "preparing", "{created:#}");
    assert!(
        page.get("html").is_none() && page.get("link").is_none(),
        "{created:#}"
    );
    let said = created["content"][1]["text"].as_str().unwrap_or_default();
    assert!(said.contains("being prepared"), "{said}");
    let (view, _) = page_of(&created)?;
    let waiting = client.call("show_page", json!({"view": view})).await?;
    assert_eq!(
        waiting["structuredContent"],
        json!({"status": "preparing"}),
        "{waiting:#}"
    );

    release.add_permits(100);
    let started = tokio::time::Instant::now();
    let shown = loop {
        let shown = client.call("show_page", json!({"view": view})).await?;
        if shown["structuredContent"]["status"] != "preparing" {
            break shown;
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(30),
            "the page never came: {shown:#}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        shown["structuredContent"],
        json!({"status": "open"}),
        "{shown:#}"
    );
    assert!(page_of(&shown)?.1.contains("Log the expense for Berlin"));
    submit_through(&client, &view, "amount=12&_action=submit", "submitted").await?;
    app.cleanup().await
}

#[tokio::test]
async fn an_ask_with_assignees_is_not_answered_inline_and_its_view_says_so() -> anyhow::Result<()> {
    let app = TestApp::builder()
        .backend(Backend::Sqlite)
        .config(|config| {
            config.notify.ask_recipients = RecipientAllowlist {
                email: vec!["@example.com".into()],
                ..RecipientAllowlist::default()
            };
        })
        .spawn()
        .await?;
    let client = McpClient::connect(&app, apps()).await?;
    let mut ask = expense_ask();
    ask["assignees"] = json!(["ana@example.com", "bo@example.com"]);
    let created = client.call("ask_person", ask).await?;
    assert_eq!(created["isError"], false, "{created:#}");
    // Each person's own link, as for any client; the view gets no capability, only a status.
    let links = created["structuredContent"]["links"]
        .as_array()
        .context("links")?;
    assert_eq!(links.len(), 2, "{created:#}");
    assert_eq!(
        created["_meta"]["tessera/page"],
        json!({"status": "elsewhere"})
    );
    app.cleanup().await
}
