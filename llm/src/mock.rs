//! A local stand-in for a provider's HTTP API, for the provider tests.
//!
//! An axum server on `127.0.0.1:0` that records every request, checks its shape with a
//! test-supplied function (a failed check answers 400 with the reason, so the provider call fails
//! loudly) and replays queued replies in order, each optionally delayed.

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex, PoisonError},
    time::{Duration, Instant},
};

use axum::{
    body::Bytes,
    extract::{OriginalUri, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    Router,
};
use serde_json::{json, Value};

use crate::{ChatModel, ChatRequest, ModelError, Retrying};

/// A retry policy for tests: up to `max_attempts`, waits of a millisecond or so, and a call
/// timeout short enough that a delayed reply trips it.
pub(crate) fn quick_policy(max_attempts: u32) -> crate::ModelCallPolicy {
    crate::ModelCallPolicy {
        max_attempts,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_secs(2),
        call_timeout: Duration::from_millis(300),
    }
}

/// A rate limit that says when to come back (the mock's first reply) is waited out: `answer`, the
/// second reply's text, arrives on the second request, at least a second after the first. The
/// same for every provider; only the wire that says it differs.
pub(crate) async fn waits_out_the_rate_limit(
    server: &MockServer,
    model: impl ChatModel,
    request: ChatRequest,
    answer: &str,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let response = Retrying::new(model, quick_policy(3)).chat(request).await?;
    assert_eq!(response.text.as_deref(), Some(answer));
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(server.received().len(), 2);
    Ok(())
}

/// Replies slower than the call timeout end as [`ModelError::Timeout`] after `attempts` requests,
/// long before the replies would have come.
pub(crate) async fn times_out(
    server: &MockServer,
    model: impl ChatModel,
    request: ChatRequest,
    attempts: u32,
) {
    let started = Instant::now();
    let outcome = Retrying::new(model, quick_policy(attempts))
        .chat(request)
        .await;
    assert_eq!(outcome, Err(ModelError::Timeout));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(server.received().len(), attempts as usize);
}

/// Failing replies are retried `attempts` times and then reported as the last one's server
/// error, with an excerpt of its body that contains `excerpt`.
pub(crate) async fn reports_the_server_error(
    server: &MockServer,
    model: impl ChatModel,
    request: ChatRequest,
    attempts: u32,
    (status, excerpt): (u16, &str),
) {
    let outcome = Retrying::new(model, quick_policy(attempts))
        .chat(request)
        .await;
    assert!(
        matches!(&outcome, Err(ModelError::Server { status: got, body_excerpt }) if *got == status && body_excerpt.contains(excerpt)),
        "{outcome:?}"
    );
    assert_eq!(server.received().len(), attempts as usize);
}

/// One reply the mock sends.
#[derive(Clone, Debug)]
pub(crate) struct MockReply {
    status: StatusCode,
    headers: Vec<(&'static str, String)>,
    body: Value,
    delay: Duration,
}

impl MockReply {
    /// 200 with a JSON body.
    pub(crate) fn ok(body: Value) -> Self {
        Self::status(200, body)
    }

    /// Any status with a JSON body.
    pub(crate) fn status(status: u16, body: Value) -> Self {
        Self {
            status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            headers: Vec::new(),
            body,
            delay: Duration::ZERO,
        }
    }

    /// Adds a response header.
    pub(crate) fn header(mut self, name: &'static str, value: &str) -> Self {
        self.headers.push((name, value.to_owned()));
        self
    }

    /// Waits before answering.
    pub(crate) fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// The body, for validating replies against a schema.
    pub(crate) fn body(&self) -> &Value {
        &self.body
    }
}

/// One request the mock received.
#[derive(Clone, Debug)]
pub(crate) struct Received {
    /// Path and query, e.g. `/v1/chat/completions?api-version=2024-10-21`.
    pub(crate) uri: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Value,
}

impl Received {
    /// A header's value as text, if present.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

/// Checks one request; `Err` names what is wrong with it.
pub(crate) type Check = Arc<dyn Fn(&Received) -> Result<(), String> + Send + Sync>;

struct Inner {
    replies: VecDeque<MockReply>,
    received: Vec<Received>,
    failures: Vec<String>,
}

#[derive(Clone)]
struct MockState {
    inner: Arc<Mutex<Inner>>,
    check: Check,
}

impl MockState {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A running mock provider.
pub(crate) struct MockServer {
    /// `http://127.0.0.1:PORT`.
    pub(crate) url: String,
    state: MockState,
}

impl MockServer {
    /// Starts a server that checks every request with `check` and answers with `replies`.
    pub(crate) async fn start(
        check: impl Fn(&Received) -> Result<(), String> + Send + Sync + 'static,
        replies: Vec<MockReply>,
    ) -> anyhow::Result<Self> {
        let state = MockState {
            inner: Arc::new(Mutex::new(Inner {
                replies: replies.into(),
                received: Vec::new(),
                failures: Vec::new(),
            })),
            check: Arc::new(check),
        };
        let router = Router::new().fallback(answer).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        tokio::spawn(async move { axum::serve(listener, router).await });
        Ok(Self { url, state })
    }

    /// Every request received, in order.
    pub(crate) fn received(&self) -> Vec<Received> {
        self.state.lock().received.clone()
    }

    /// Every failed shape check, in order.
    pub(crate) fn failures(&self) -> Vec<String> {
        self.state.lock().failures.clone()
    }
}

async fn answer(
    State(state): State<MockState>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let received = Received {
        uri: uri.to_string(),
        headers,
        body,
    };
    let verdict = (state.check)(&received);
    let reply = {
        let mut inner = state.lock();
        inner.received.push(received);
        if let Err(reason) = verdict {
            inner.failures.push(reason.clone());
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({"error": {"message": format!("mock check failed: {reason}")}})),
            )
                .into_response();
        }
        inner.replies.pop_front()
    };
    let Some(reply) = reply else {
        return (
            StatusCode::IM_A_TEAPOT,
            axum::Json(json!({"error": {"message": "mock ran out of replies"}})),
        )
            .into_response();
    };
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut response = (reply.status, axum::Json(reply.body)).into_response();
    for (name, value) in reply.headers {
        if let Ok(value) = value.parse() {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// A check that accepts everything.
pub(crate) fn accept_all(_: &Received) -> Result<(), String> {
    Ok(())
}

/// Fails with `what` unless `condition` holds.
pub(crate) fn ensure(condition: bool, what: impl Into<String>) -> Result<(), String> {
    if condition {
        Ok(())
    } else {
        Err(what.into())
    }
}

/// Where a vendored provider schema's validator is kept once compiled.
pub(crate) type Vendored = std::sync::OnceLock<Result<jsonschema::Validator, String>>;

/// A validator for a vendored provider schema (`tests/data/<provider>/…`), compiled once per
/// `cell`; the error is the schema's own, as text.
pub(crate) fn vendored(
    cell: &'static Vendored,
    source: &str,
) -> Result<&'static jsonschema::Validator, String> {
    cell.get_or_init(|| {
        let schema: Value = serde_json::from_str(source).map_err(|error| error.to_string())?;
        jsonschema::validator_for(&schema).map_err(|error| error.to_string())
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The first few ways `body` breaks `spec`, with where.
pub(crate) fn spec_errors(spec: &jsonschema::Validator, body: &Value) -> Vec<String> {
    spec.iter_errors(body)
        .map(|error| format!("{error} at {}", error.instance_path()))
        .take(3)
        .collect()
}

/// The page's response format as the agent asks for it (`agent::page_schema`), for the
/// providers' constrained-answer tests. A fixture the root crate writes and checks
/// (`agent::provider_fixtures`), so these tests read the real schema without depending on the agent.
pub(crate) fn page_response_format() -> crate::ResponseFormat {
    serde_json::from_str(include_str!("../tests/data/page/response_format.json"))
        .unwrap_or_else(|error| panic!("tests/data/page/response_format.json: {error}"))
}

/// Every tool the agent offers with the default components (`agent::tools::tool_definitions`),
/// as the same checked fixture.
pub(crate) fn default_page_tools() -> Vec<crate::ToolDefinition> {
    serde_json::from_str(include_str!("../tests/data/page/default_tools.json"))
        .unwrap_or_else(|error| panic!("tests/data/page/default_tools.json: {error}"))
}

/// The agent's system prompt for a page with a form, as the same checked fixture.
pub(crate) const PAGE_SYSTEM_PROMPT: &str = include_str!("../tests/data/page/system_prompt.txt");
