//! The MCP server at `/mcp`, spoken to as JSON-RPC over Streamable HTTP by a small client
//! written from the spec (revision 2025-11-25): the token, the tools, an ask answered through
//! its page, waiting with progress, URL-mode elicitation, and tool errors naming the field.
//! `end2end/tests/mcp.spec.ts` drives the same round trips with the official TypeScript SDK.

use std::time::Duration;

use anyhow::{bail, Context as _};
use serde_json::{json, Value};
use tessera::{
    config::Secret,
    notify::{NotifyConfig, RecipientAllowlist},
};
use tokio::sync::mpsc;

use crate::{
    asks::{answer_of, answered_by, page_path, submit},
    helpers::{header, on_both_backends, Backend, HttpSink, TestApp, API_TOKEN},
};

const PROTOCOL: &str = "2025-11-25";

/// An initialized MCP session.
pub(crate) struct McpClient<'a> {
    app: &'a TestApp,
    session: String,
    next_id: std::sync::atomic::AtomicU64,
}

impl<'a> McpClient<'a> {
    /// The tools `tools/list` answers, and their names in the same order.
    pub(crate) async fn list_tools(&self) -> anyhow::Result<(Vec<Value>, Vec<String>)> {
        let listed = self.request("tools/list", json!({})).await?;
        let tools = listed["result"]["tools"]
            .as_array()
            .context("tools")?
            .clone();
        let names = tools
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .map(str::to_owned)
            .collect();
        Ok((tools, names))
    }

    /// Initializes a session declaring `capabilities` (e.g. `{"elicitation": {"url": {}}}`).
    pub(crate) async fn connect(app: &'a TestApp, capabilities: Value) -> anyhow::Result<Self> {
        let response = post(
            app,
            None,
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": PROTOCOL,
                "capabilities": capabilities,
                "clientInfo": {"name": "tessera-tests", "version": "0"},
            }}),
        )
        .await?;
        anyhow::ensure!(
            response.status() == 200,
            "initialize: {}",
            response.status()
        );
        let session = header(&response, "mcp-session-id")
            .context("a session id")?
            .to_owned();
        let initialized = reply(messages(response), &json!(0)).await?;
        anyhow::ensure!(
            initialized["result"]["protocolVersion"] == PROTOCOL,
            "{initialized:#}"
        );
        let client = Self {
            app,
            session,
            next_id: std::sync::atomic::AtomicU64::new(1),
        };
        let notified = client
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        anyhow::ensure!(notified.status() == 202, "{}", notified.status());
        Ok(client)
    }

    async fn send(&self, message: &Value) -> anyhow::Result<reqwest::Response> {
        post(self.app, Some(&self.session), message).await
    }

    /// Sends request `method` and returns its stream of messages and its id.
    pub(crate) async fn start(
        &self,
        method: &str,
        params: Value,
    ) -> anyhow::Result<(mpsc::Receiver<Value>, Value)> {
        let id = json!(self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let response = self
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        anyhow::ensure!(response.status() == 200, "{method}: {}", response.status());
        Ok((messages(response), id))
    }

    /// Request `method`'s whole reply (`result` or `error`).
    pub(crate) async fn request(&self, method: &str, params: Value) -> anyhow::Result<Value> {
        let (stream, id) = self.start(method, params).await?;
        reply(stream, &id).await
    }

    /// Calls tool `name` and returns its result (`content`, `structuredContent`, `isError`).
    pub(crate) async fn call(&self, name: &str, arguments: Value) -> anyhow::Result<Value> {
        let reply = self
            .request("tools/call", json!({"name": name, "arguments": arguments}))
            .await?;
        reply
            .get("result")
            .cloned()
            .with_context(|| format!("a result: {reply:#}"))
    }

    /// The session's standalone stream (`GET /mcp`): what the server sends outside any request,
    /// such as `notifications/elicitation/complete`.
    pub(crate) async fn listen(&self) -> anyhow::Result<mpsc::Receiver<Value>> {
        let response = self
            .app
            .client
            .get(self.app.url("/mcp"))
            .bearer_auth(API_TOKEN)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", PROTOCOL)
            .send()
            .await?;
        anyhow::ensure!(response.status() == 200, "GET /mcp: {}", response.status());
        Ok(messages(response))
    }

    /// Answers the server's request `id` with `result`.
    pub(crate) async fn respond(&self, id: &Value, result: Value) -> anyhow::Result<()> {
        let response = self
            .send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await?;
        anyhow::ensure!(response.status() == 202, "{}", response.status());
        Ok(())
    }
}

async fn post(
    app: &TestApp,
    session: Option<&str>,
    message: &Value,
) -> anyhow::Result<reqwest::Response> {
    let mut request = app
        .client
        .post(app.url("/mcp"))
        .bearer_auth(API_TOKEN)
        .header("accept", "application/json, text/event-stream")
        .json(message);
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", PROTOCOL);
    }
    Ok(request.send().await?)
}

/// The JSON-RPC messages of a response, an SSE stream or one JSON body, as they arrive.
fn messages(mut response: reqwest::Response) -> mpsc::Receiver<Value> {
    let (sender, receiver) = mpsc::channel(64);
    tokio::spawn(async move {
        let is_json = header(&response, "content-type")
            .is_some_and(|value| value.starts_with("application/json"));
        let mut buffer = String::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            if is_json {
                continue;
            }
            while let Some(end) = buffer.find("\n\n") {
                let event: String = buffer.drain(..end + 2).collect();
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if let Ok(message) = serde_json::from_str::<Value>(&data.join("\n")) {
                    if sender.send(message).await.is_err() {
                        return;
                    }
                }
            }
        }
        if let Ok(message) = serde_json::from_str::<Value>(&buffer) {
            let _ = sender.send(message).await;
        }
    });
    receiver
}

/// The next message of `stream` that `matches`, within a minute.
pub(crate) async fn next_where(
    stream: &mut mpsc::Receiver<Value>,
    matches: impl Fn(&Value) -> bool,
) -> anyhow::Result<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        match tokio::time::timeout_at(deadline, stream.recv()).await {
            Ok(Some(message)) if matches(&message) => return Ok(message),
            Ok(Some(_)) => {}
            Ok(None) => bail!("the stream ended first"),
            Err(_) => bail!("nothing came within a minute"),
        }
    }
}

async fn reply(mut stream: mpsc::Receiver<Value>, id: &Value) -> anyhow::Result<Value> {
    next_where(&mut stream, |message| {
        &message["id"] == id && message.get("method").is_none()
    })
    .await
}

/// The text of a tool result's first content block.
pub(crate) fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn decision_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"decision": {"type": "string", "enum": ["approve", "reject"]}},
        "required": ["decision"]
    })
}

#[tokio::test]
async fn mcp_refuses_a_missing_or_wrong_token() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}});
    for token in [None, Some("not-the-token")] {
        let mut request = app
            .client
            .post(app.url("/mcp"))
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await?;
        assert_eq!(response.status(), 401, "{token:?}");
        assert_eq!(header(&response, "www-authenticate"), Some("Bearer"),);
    }
    app.cleanup().await
}

#[tokio::test]
async fn mcp_lists_the_four_ask_tools() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let client = McpClient::connect(&app, json!({})).await?;
    let (tools, names) = client.list_tools().await?;
    assert_eq!(
        names,
        ["ask_person", "get_answer", "cancel_ask", "list_asks"]
    );
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["prompt"]));
    app.cleanup().await
}

on_both_backends!(
    an_mcp_ask_is_answered_through_its_page_and_read_back_typed,
    assignees_answer_an_mcp_ask_through_their_own_links_and_get_answer_says_who,
);

async fn an_mcp_ask_is_answered_through_its_page_and_read_back_typed(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder().backend(backend).spawn().await?;
    let client = McpClient::connect(&app, json!({})).await?;
    let created = client
        .call(
            "ask_person",
            json!({"prompt": "Approve the {{ total }} budget?", "schema": decision_schema(), "data": {"total": 1200}}),
        )
        .await?;
    assert_eq!(created["isError"], false, "{created:#}");
    let ask = &created["structuredContent"];
    assert_eq!(ask["status"], "waiting", "{ask:#}");
    let id = ask["id"].as_str().context("an id")?.to_owned();
    let link = ask["link"].as_str().context("the link")?;
    assert_eq!(serde_json::from_str::<Value>(&text_of(&created))?, *ask);

    let page = app.get(&page_path(link)?).await?.text().await?;
    assert!(
        page.contains("Approve the 1200 budget?"),
        "the prompt is rendered"
    );
    let submitted = submit(&app, &page_path(link)?, "decision=approve").await?;
    assert_eq!(submitted.status(), 303);

    // It is an ask like any other: the asks API reads it.
    assert_eq!(answer_of(&app, &id).await?, json!({"decision": "approve"}));
    let answered = client
        .call("get_answer", json!({"ask_id": id, "wait_seconds": 5}))
        .await?;
    assert_eq!(answered["structuredContent"]["status"], "submitted");
    assert_eq!(
        answered["structuredContent"]["response"],
        json!({"decision": "approve"})
    );
    assert_eq!(answered["structuredContent"]["link"], Value::Null);
    let listed = client
        .call("list_asks", json!({"status": "submitted"}))
        .await?;
    let asks = listed["structuredContent"]["asks"]
        .as_array()
        .context("asks")?;
    assert_eq!(asks.len(), 1, "{listed:#}");
    assert_eq!(asks[0]["prompt"], "Approve the 1200 budget?");
    let closed = client.call("cancel_ask", json!({"ask_id": id})).await?;
    assert_eq!(closed["isError"], true);
    assert_eq!(text_of(&closed), "the ask is already submitted");
    app.cleanup().await
}

#[tokio::test]
async fn bad_calls_are_tool_errors_naming_the_field() -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let client = McpClient::connect(&app, json!({})).await?;
    let cases = [
        (
            "ask_person",
            json!({"prompt": "q", "schema": {"type": "object", "properties": {"x": {"type": "object"}}}}),
            "schema.properties.x: ",
        ),
        (
            "ask_person",
            json!({"schema": decision_schema()}),
            "prompt: ",
        ),
        (
            "ask_person",
            json!({"prompt": "q", "wait_seconds": "soon"}),
            "wait_seconds: ",
        ),
        (
            "ask_person",
            json!({"prompt": "q", "notify": true}),
            "notify: ",
        ),
        (
            "ask_person",
            json!({"prompt": "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"}),
            "prompt: ",
        ),
        (
            "get_answer",
            json!({"ask_id": "00000000-0000-0000-0000-000000000000"}),
            "ask_id: ",
        ),
        ("list_asks", json!({"status": "done"}), "status: "),
    ];
    for (tool, arguments, prefix) in cases {
        let result = client.call(tool, arguments.clone()).await?;
        assert_eq!(result["isError"], true, "{arguments} → {result:#}");
        assert!(
            text_of(&result).starts_with(prefix),
            "{arguments} → {}",
            text_of(&result)
        );
    }
    let unknown = client
        .request("tools/call", json!({"name": "ask_robot", "arguments": {}}))
        .await?;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown:#}");
    let runs = app.api_json("/api/runs").await?;
    assert_eq!(runs["total"], 0, "no refused call started an ask");
    app.cleanup().await
}

#[tokio::test]
async fn ask_person_waits_for_the_answer_sending_progress() -> anyhow::Result<()> {
    let sink = HttpSink::start(&[]).await?;
    let notify_url = sink.url("/notify")?;
    let app = TestApp::builder()
        .backend(Backend::Sqlite)
        .config(|config| {
            config.notify = NotifyConfig {
                webhook_url: Some(notify_url),
                webhook_secret: Some(Secret::new("whsec_mcp_0123456789abcdef")),
                ..NotifyConfig::default()
            };
        })
        .spawn()
        .await?;
    let client = McpClient::connect(&app, json!({})).await?;
    let (mut stream, id) = client
        .start(
            "tools/call",
            json!({"name": "ask_person", "_meta": {"progressToken": "wait-1"},
                   "arguments": {"prompt": "Approve?", "schema": decision_schema(), "notify": true, "wait_seconds": 60}}),
        )
        .await?;
    let progress = next_where(&mut stream, |message| {
        message["method"] == "notifications/progress"
    })
    .await?;
    assert_eq!(progress["params"]["progressToken"], "wait-1");
    assert_eq!(progress["params"]["total"], 60.0);

    let notified = sink
        .seen()
        .into_iter()
        .find(|seen| seen.path == "/notify")
        .context("the link was sent")?;
    let link = serde_json::from_slice::<Value>(&notified.body)?["link"]
        .as_str()
        .context("a link")?
        .to_owned();
    assert_eq!(
        submit(&app, &page_path(&link)?, "decision=reject")
            .await?
            .status(),
        303
    );
    let answered = reply(stream, &id).await?;
    let ask = &answered["result"]["structuredContent"];
    assert_eq!(ask["status"], "submitted", "{answered:#}");
    assert_eq!(ask["response"], json!({"decision": "reject"}));
    assert_eq!(
        ask["link"],
        Value::Null,
        "a settled ask's result has no link"
    );
    app.cleanup().await
}

#[tokio::test]
async fn url_elicitation_sends_the_link_and_completes_once_the_person_answers() -> anyhow::Result<()>
{
    let app = TestApp::builder().spawn().await?;
    let client = McpClient::connect(&app, json!({"elicitation": {"url": {}}})).await?;
    let mut outside_requests = client.listen().await?;
    let (mut stream, id) = client
        .start(
            "tools/call",
            json!({"name": "ask_person", "arguments": {"prompt": "Approve?", "schema": decision_schema(), "elicit": "url"}}),
        )
        .await?;
    let elicitation = next_where(&mut stream, |message| {
        message["method"] == "elicitation/create"
    })
    .await?;
    let params = &elicitation["params"];
    assert_eq!(params["mode"], "url", "{elicitation:#}");
    assert_eq!(params["message"], "Approve?");
    let ask_id = params["elicitationId"]
        .as_str()
        .context("an id")?
        .to_owned();
    let link = params["url"].as_str().context("a url")?.to_owned();
    client
        .respond(&elicitation["id"], json!({"action": "accept"}))
        .await?;

    assert_eq!(
        submit(&app, &page_path(&link)?, "decision=approve")
            .await?
            .status(),
        303
    );
    let answered = reply(stream, &id).await?;
    let complete = next_where(&mut outside_requests, |message| {
        message["method"] == "notifications/elicitation/complete"
    })
    .await?;
    assert_eq!(complete["params"]["elicitationId"], ask_id.as_str());
    let ask = &answered["result"]["structuredContent"];
    assert_eq!(ask["id"], ask_id.as_str());
    assert_eq!(ask["response"], json!({"decision": "approve"}));
    app.cleanup().await
}

/// Calls `ask_person` with URL elicitation and answers the elicitation it sends with `action`;
/// the call's final reply.
async fn ask_and_answer_the_elicitation(
    client: &McpClient<'_>,
    action: &str,
) -> anyhow::Result<Value> {
    let (mut stream, id) = client
        .start(
            "tools/call",
            json!({"name": "ask_person", "arguments": {"prompt": "Approve?", "elicit": "url"}}),
        )
        .await?;
    let elicitation = next_where(&mut stream, |message| {
        message["method"] == "elicitation/create"
    })
    .await?;
    client
        .respond(&elicitation["id"], json!({"action": action}))
        .await?;
    reply(stream, &id).await
}

#[tokio::test]
async fn a_client_that_cannot_open_urls_gets_the_link_and_a_declined_elicitation_declines(
) -> anyhow::Result<()> {
    let app = TestApp::builder().spawn().await?;
    let plain = McpClient::connect(&app, json!({"elicitation": {"form": {}}})).await?;
    let fallback = plain
        .call("ask_person", json!({"prompt": "Approve?", "elicit": "url"}))
        .await?;
    assert_eq!(fallback["structuredContent"]["status"], "waiting");
    assert!(fallback["structuredContent"]["link"]
        .as_str()
        .is_some_and(|link| link.contains("/p/")));
    assert!(fallback["content"][1]["text"]
        .as_str()
        .is_some_and(|note| note.contains("give the person the link")));

    let capable = McpClient::connect(&app, json!({"elicitation": {"url": {}}})).await?;
    let declined = ask_and_answer_the_elicitation(&capable, "decline").await?;
    assert_eq!(
        declined["result"]["structuredContent"]["status"], "declined",
        "MCP's decline is the ask's Decline: {declined:#}"
    );
    assert_eq!(
        declined["result"]["structuredContent"]["answers"][0]["outcome"],
        "declined"
    );

    // Dismissing it without choosing is a cancel.
    let dismissed = ask_and_answer_the_elicitation(&capable, "cancel").await?;
    assert_eq!(
        dismissed["result"]["structuredContent"]["status"], "cancelled",
        "{dismissed:#}"
    );
    app.cleanup().await
}

/// The MCP door to named people: `links` per assignee, N of M, `answers` naming who answered, a
/// decline with its reason, and the same refusals as the asks API.
async fn assignees_answer_an_mcp_ask_through_their_own_links_and_get_answer_says_who(
    backend: Backend,
) -> anyhow::Result<()> {
    let app = TestApp::builder()
        .backend(backend)
        .config(|config| {
            config.notify.ask_recipients = RecipientAllowlist {
                email: vec!["@example.com".into()],
                ..RecipientAllowlist::default()
            };
        })
        .spawn()
        .await?;
    let client = McpClient::connect(&app, json!({"elicitation": {"url": {}}})).await?;
    let created = client
        .call(
            "ask_person",
            json!({"prompt": "Approve?", "schema": decision_schema(),
                   "assignees": ["ana@example.com", "bo@example.com", "cy@example.com"],
                   "approvals": {"required": 2}}),
        )
        .await?;
    assert_eq!(created["isError"], false, "{created:#}");
    let ask = &created["structuredContent"];
    assert_eq!(ask["link"], Value::Null);
    let links = ask["links"].as_array().context("links")?;
    assert_eq!(links.len(), 3);
    let id = ask["id"].as_str().context("an id")?.to_owned();
    for link in &links[..2] {
        let path = page_path(link["link"].as_str().context("a link")?)?;
        assert_eq!(submit(&app, &path, "decision=approve").await?.status(), 303);
    }
    let answered = client
        .call("get_answer", json!({"ask_id": id, "wait_seconds": 5}))
        .await?;
    let answer = &answered["structuredContent"];
    assert_eq!(answer["status"], "submitted", "{answer:#}");
    let by = answered_by(answer)?;
    assert_eq!(by, ["ana@example.com", "bo@example.com"]);
    assert!(
        answer.get("links").is_none(),
        "links only in the result that created them"
    );

    let one = client
        .call(
            "ask_person",
            json!({"prompt": "Ship it?", "schema": decision_schema(), "assignees": ["bo@example.com"]}),
        )
        .await?;
    let one_id = one["structuredContent"]["id"]
        .as_str()
        .context("an id")?
        .to_owned();
    let path = page_path(
        one["structuredContent"]["links"][0]["link"]
            .as_str()
            .context("a link")?,
    )?;
    let declined = submit(&app, &path, "_action=decline&_reason=Not+tested").await?;
    assert_eq!(declined.status(), 303);
    let read = client
        .call("get_answer", json!({"ask_id": one_id, "wait_seconds": 5}))
        .await?;
    assert_eq!(read["structuredContent"]["status"], "declined");
    assert_eq!(
        read["structuredContent"]["answers"][0]["reason"],
        "Not tested"
    );

    for (arguments, field) in [
        (
            json!({"prompt": "q", "assignees": ["eve@elsewhere.org"]}),
            "assignees[0]",
        ),
        (
            json!({"prompt": "q", "assignees": ["ana@example.com"], "elicit": "url"}),
            "elicit",
        ),
    ] {
        let refused = client.call("ask_person", arguments).await?;
        assert_eq!(refused["isError"], true);
        assert!(
            text_of(&refused).starts_with(&format!("{field}:")),
            "{refused:#}"
        );
    }
    app.cleanup().await
}
