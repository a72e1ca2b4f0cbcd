//! `ask_person` → link over MCP beside `POST /api/asks` → link (issue 15), in the same run
//! against the same server.
//!
//! The real `Application` (router, middleware, the runner with the built-in `ask` workflow and
//! the heuristic model) serves on loopback with a fresh SQLite file. One client times, one
//! request at a time and alternating so both doors see the same machine load:
//! - **`POST /api/asks`**: the request until its 201 answer with the link;
//! - **MCP `tools/call ask_person`**: over an initialized Streamable HTTP session, the POST
//!   until the result (with the link) arrives on its event stream.
//!
//! Both create the same ask (same prompt template, schema and data shape, so after the warm-up
//! the page comes from the page cache on both doors), and both answers wait until the run
//! waits on its page, so the difference is what MCP adds: JSON-RPC, the session, the SSE
//! framing and the tool's argument handling. A third line times opening a session
//! (`initialize` + `notifications/initialized`), which a client pays once.
//!
//! Run with `cargo bench --bench mcp`; `MCP_BENCH_ASKS` sets the timed asks per door (default
//! 200). Figures go in BENCHMARKS.md.

#[path = "support/timing.rs"]
#[expect(
    dead_code,
    reason = "this bench times requests it sends, not calls: it uses Percentiles only"
)]
mod timing;

use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _};
use serde_json::{json, Value};
use tessera::{
    config::{Config, DatabaseUrl, Secret},
    startup::{Application, Options},
};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "bench-token-0123456789abcdef";
const PROTOCOL: &str = "2025-11-25";
const WARM_UP: usize = 10;
const SESSIONS: usize = 50;

fn ask(index: usize) -> Value {
    json!({
        "prompt": "Approve expense claim {{ claim.id }} of {{ claim.amount }} EUR?",
        "schema": {
            "type": "object",
            "properties": {
                "decision": {"type": "string", "enum": ["approve", "reject"]},
                "reason": {"type": "string"}
            },
            "required": ["decision"]
        },
        "data": {"claim": {"id": format!("EXP-{index}"), "amount": 100 + index}}
    })
}

struct Mcp {
    client: reqwest::Client,
    url: String,
    session: String,
}

impl Mcp {
    fn post(&self, session: Option<&str>, message: &Value) -> reqwest::RequestBuilder {
        let request = self
            .client
            .post(&self.url)
            .bearer_auth(TOKEN)
            .header("accept", "application/json, text/event-stream")
            .json(message);
        match session {
            Some(session) => request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", PROTOCOL),
            None => request,
        }
    }

    /// Opens a session: `initialize`, then `notifications/initialized`.
    async fn open(client: &reqwest::Client, url: &str) -> anyhow::Result<Self> {
        let mut mcp = Self {
            client: client.clone(),
            url: url.to_owned(),
            session: String::new(),
        };
        let response = mcp
            .post(
                None,
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": PROTOCOL, "capabilities": {},
                    "clientInfo": {"name": "tessera-bench", "version": "0"}}}),
            )
            .send()
            .await?;
        mcp.session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .context("a session id")?
            .to_owned();
        reply(response, 0).await?;
        let initialized = mcp
            .post(
                Some(&mcp.session),
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .send()
            .await?;
        ensure!(initialized.status() == 202, "{}", initialized.status());
        Ok(mcp)
    }

    async fn ask_person(&self, id: u64, arguments: Value) -> anyhow::Result<Value> {
        let response = self
            .post(
                Some(&self.session),
                &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": {"name": "ask_person", "arguments": arguments}}),
            )
            .send()
            .await?;
        reply(response, id).await
    }
}

/// Reads the event stream until the reply to request `id`, and returns it.
async fn reply(mut response: reqwest::Response, id: u64) -> anyhow::Result<Value> {
    let mut buffer = String::new();
    while let Some(chunk) = response.chunk().await? {
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            for data in event.lines().filter_map(|line| line.strip_prefix("data:")) {
                if let Ok(message) = serde_json::from_str::<Value>(data.trim_start()) {
                    if message["id"] == id && message.get("method").is_none() {
                        return Ok(message);
                    }
                }
            }
        }
    }
    bail!("the stream ended without the reply to {id}")
}

async fn via_api(client: &reqwest::Client, address: &str, index: usize) -> anyhow::Result<()> {
    let response = client
        .post(format!("{address}/api/asks"))
        .bearer_auth(TOKEN)
        .json(&ask(index))
        .send()
        .await?;
    ensure!(
        response.status() == 201,
        "POST /api/asks: {}",
        response.status()
    );
    let created: Value = response.json().await?;
    ensure!(created["link"].is_string(), "a link: {created}");
    Ok(())
}

async fn via_mcp(mcp: &Mcp, index: usize) -> anyhow::Result<()> {
    let answer = mcp.ask_person(index as u64 + 1, ask(index)).await?;
    let created = &answer["result"]["structuredContent"];
    ensure!(created["link"].is_string(), "a link: {answer}");
    Ok(())
}

// `cargo bench` passes `--bench`; nothing here reads the command line.
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let asks: usize = std::env::var("MCP_BENCH_ASKS")
        .ok()
        .and_then(|raw| raw.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir()?;
    let mut config = Config::for_tests(DatabaseUrl::Sqlite(
        dir.path().join("tessera.db").to_string_lossy().into_owned(),
    ));
    config.api_token = Some(Secret::new(TOKEN));
    config.log = "warn".to_owned();
    let application = Application::build_with(config, Options::default()).await?;
    let address = format!("http://{}", application.local_addr()?);
    let shutdown = CancellationToken::new();
    let server = tokio::spawn(application.run_until(shutdown.clone()));

    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()?;
    let url = format!("{address}/mcp");
    let mcp = Mcp::open(&client, &url).await?;
    for index in 0..WARM_UP {
        via_api(&client, &address, index).await?;
        via_mcp(&mcp, index).await?;
    }
    let (mut api_times, mut mcp_times) = (Vec::new(), Vec::new());
    for index in WARM_UP..WARM_UP + asks {
        let started = Instant::now();
        via_api(&client, &address, index).await?;
        api_times.push(started.elapsed());
        let started = Instant::now();
        via_mcp(&mcp, index).await?;
        mcp_times.push(started.elapsed());
    }
    let mut session_times = Vec::new();
    for _ in 0..SESSIONS {
        let started = Instant::now();
        Mcp::open(&client, &url).await?;
        session_times.push(started.elapsed());
    }
    timing::report(
        "ask → link, one request at a time (SQLite, heuristic model, page cache warm)",
        &[
            timing::Percentiles::of("POST /api/asks → 201 with link", api_times),
            timing::Percentiles::of("MCP tools/call ask_person → result with link", mcp_times),
            timing::Percentiles::of("MCP session: initialize + initialized", session_times),
        ],
    );
    shutdown.cancel();
    server.await??;
    Ok(())
}
