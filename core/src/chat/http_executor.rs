//! Executing operations over real HTTP: request building, timeouts, backoff on 429 honouring
//! `Retry-After`, and chunked batches with progress and cancel between chunks.
//!
//! Only calls that code already allowed reach this module (scope, schema and policy are checked
//! by the orchestrator first); it never decides whether a call may run. A batch above its
//! `max_batch_size` is sent as consecutive chunks; after each chunk a progress callback runs and
//! the cancellation token is checked, so *stop* lands between requests and finished chunks stay
//! finished. A failed chunk stops the batch: the outcome names the chunk and its error and the
//! chunks never sent, and the orchestrator shows that in the header rather than a summary.
//!
//! Retries: a `429` is always retried (the site did not act on it), waiting `Retry-After` seconds
//! when given (capped by [`ExecutorConfig::max_retry_wait`]) or an exponential backoff; `502`,
//! `503`, `504`, timeouts and transport errors are retried only for `idempotent` operations.

use std::{collections::BTreeMap, time::Duration};

use futures_util::future::BoxFuture;
use http::{HeaderName, HeaderValue, StatusCode};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;
use url::Url;

use super::{
    header::ChunkProgress,
    manifest::{AuthHeader, Manifest, Operation, Tag, DEFAULT_BATCH_ARGUMENT},
    policy::ChunkPlan,
};
use crate::{
    config::Secret,
    util::{
        backoff::{retry_after, Backoff},
        templates::encode_component,
    },
};

/// Timeouts and retry limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecutorConfig {
    /// Per request.
    pub timeout: Duration,
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The first backoff; doubled per retry.
    pub base_backoff: Duration,
    /// The longest wait before a retry, whatever `Retry-After` says.
    pub max_retry_wait: Duration,
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            max_retries: 3,
            base_backoff: Duration::from_millis(250),
            max_retry_wait: Duration::from_secs(30),
        }
    }
}

/// Why a call failed. Messages are for the header: they name the status and the site's words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The executor could not be set up (bad base URL, missing auth secret).
    #[error("cannot call the site: {0}")]
    Setup(String),
    /// The arguments cannot be put into a request.
    #[error("cannot build the request: {0}")]
    BadArguments(String),
    /// No answer within the timeout (after retries, for idempotent calls).
    #[error("the site did not answer within {0:?}")]
    Timeout(Duration),
    /// The request did not get through.
    #[error("cannot reach the site: {0}")]
    Transport(String),
    /// Still rate limited after every retry.
    #[error(
        "the site kept answering 429 Too Many Requests after {attempts} attempts: {body_excerpt}"
    )]
    RateLimited {
        /// Attempts made.
        attempts: u32,
        /// The site's last words.
        body_excerpt: String,
    },
    /// The site said no.
    #[error("HTTP {status}: {body_excerpt}")]
    Http {
        /// The status.
        status: u16,
        /// The start of the body.
        body_excerpt: String,
    },
    /// The call was cancelled while waiting to retry.
    #[error("stopped before the request was retried")]
    Cancelled,
}

/// A successful call.
#[derive(Clone, Debug, PartialEq)]
pub struct CallOutput {
    /// The HTTP status.
    pub status: u16,
    /// The body as JSON (`null` for an empty body, a string for non-JSON text).
    pub body: Value,
    /// Attempts it took.
    pub attempts: u32,
}

/// One chunk of a batch, after it ran.
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkOutcome {
    /// 1-based.
    pub index: usize,
    /// Items in it.
    pub size: usize,
    /// What happened.
    pub result: Result<CallOutput, CallError>,
}

/// A whole (possibly chunked) call, after it ran or stopped.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutcome {
    /// The chunks that were sent, in order.
    pub chunks: Vec<ChunkOutcome>,
    /// The planned sizes.
    pub planned: Vec<usize>,
    /// Whether it stopped because of a cancel (between chunks).
    pub cancelled: bool,
}

impl RunOutcome {
    /// Whether every planned chunk was sent and succeeded.
    #[must_use]
    pub fn succeeded(&self) -> bool {
        !self.cancelled
            && self.chunks.len() == self.planned.len()
            && self.chunks.iter().all(|chunk| chunk.result.is_ok())
    }

    /// The failed chunk, if one failed.
    #[must_use]
    pub fn failure(&self) -> Option<(&ChunkOutcome, &CallError)> {
        self.chunks
            .iter()
            .find_map(|chunk| chunk.result.as_ref().err().map(|error| (chunk, error)))
    }

    /// Items in chunks that succeeded.
    #[must_use]
    pub fn items_done(&self) -> usize {
        self.chunks
            .iter()
            .filter(|chunk| chunk.result.is_ok())
            .map(|chunk| chunk.size)
            .sum()
    }

    /// Progress as the header shows it.
    #[must_use]
    pub fn progress(&self) -> ChunkProgress {
        ChunkProgress {
            chunks_done: self
                .chunks
                .iter()
                .filter(|chunk| chunk.result.is_ok())
                .count(),
            chunks_total: self.planned.len(),
            items_done: self.items_done(),
            items_total: self.planned.iter().sum(),
            sizes: self.planned.clone(),
        }
    }

    /// The result the model and the views see: the site's body for one request, a per-chunk
    /// account for a chunked call (every chunk, including the failed and the unsent ones).
    #[must_use]
    pub fn result_value(&self) -> Value {
        if self.planned.len() == 1 && !self.cancelled {
            if let Some(Ok(output)) = self.chunks.first().map(|chunk| &chunk.result) {
                return output.body.clone();
            }
        }
        let mut chunks: Vec<Value> = self
            .chunks
            .iter()
            .map(|chunk| match &chunk.result {
                Ok(output) => json!({"chunk": chunk.index, "size": chunk.size, "status": "succeeded", "response": output.body}),
                Err(error) => json!({"chunk": chunk.index, "size": chunk.size, "status": "failed", "error": error.to_string()}),
            })
            .collect();
        for (offset, size) in self.planned.iter().enumerate().skip(self.chunks.len()) {
            chunks.push(json!({"chunk": offset + 1, "size": size, "status": if self.cancelled { "cancelled" } else { "not_sent" }}));
        }
        json!({
            "items_done": self.items_done(),
            "items_total": self.planned.iter().sum::<usize>(),
            "chunks": chunks,
        })
    }
}

/// Sends operations of one manifest to its site.
#[derive(Clone, Debug)]
pub struct HttpExecutor {
    client: reqwest::Client,
    base_url: Url,
    config: ExecutorConfig,
    auth: BTreeMap<String, (HeaderName, Secret)>,
    /// A header every request carries, whatever its operation (the demo site's write key).
    site_header: Option<(HeaderName, Secret)>,
}

/// The environment variable lookup used for auth headers.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

impl HttpExecutor {
    /// An executor for `manifest`'s operations against `base_url` (the manifest's `base_url`
    /// resolved against the app's own address when relative). Auth secrets are read through `env`
    /// now, so a missing one fails at start, not at the first call.
    ///
    /// # Errors
    /// [`CallError::Setup`] when an auth variable is missing or a header name is invalid, or
    /// the HTTP client cannot be built.
    pub fn new(
        manifest: &Manifest,
        base_url: Url,
        config: ExecutorConfig,
        env: EnvLookup<'_>,
    ) -> Result<Self, CallError> {
        let mut auth = BTreeMap::new();
        for operation in manifest.operations() {
            if let Some(header) = operation.auth.as_ref().or(manifest.auth.as_ref()) {
                auth.insert(operation.name.clone(), auth_header(header, env)?);
            }
        }
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| CallError::Setup(error.to_string()))?;
        Ok(Self {
            client,
            base_url,
            config,
            auth,
            site_header: None,
        })
    }

    /// Sends `name: value` with every request: a credential the server holds for the site
    /// itself rather than one named per operation in the manifest (the demo site's key).
    #[must_use]
    pub fn with_site_header(mut self, name: HeaderName, value: Secret) -> Self {
        self.site_header = Some((name, value));
        self
    }

    /// The base URL requests go to.
    #[must_use]
    pub fn base_url(&self) -> &Url {
        &self.base_url
    }

    /// The URL a call goes to (path placeholders filled, query string for GET and DELETE).
    ///
    /// # Errors
    /// [`CallError::BadArguments`] when a placeholder argument is missing.
    pub fn url_for(&self, operation: &Operation, arguments: &Value) -> Result<Url, CallError> {
        Ok(self.request_parts(operation, arguments)?.0)
    }

    fn request_parts(
        &self,
        operation: &Operation,
        arguments: &Value,
    ) -> Result<(Url, Option<Value>), CallError> {
        let empty = Map::new();
        let arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => &empty,
            _ => {
                return Err(CallError::BadArguments(
                    "arguments must be a JSON object".into(),
                ))
            }
        };
        let placeholders = operation.http.placeholders();
        let mut path = operation.http.path.clone();
        for name in &placeholders {
            let value = arguments
                .get(name)
                .filter(|value| !value.is_null())
                .ok_or_else(|| {
                    CallError::BadArguments(format!("`{name}` is required in the path"))
                })?;
            let text = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            path = path.replace(&format!("{{{name}}}"), &encode_component(&text).to_string());
        }
        let base = operation
            .http
            .base_url
            .as_deref()
            .map(Url::parse)
            .transpose()
            .map_err(|error| CallError::Setup(format!("bad base URL: {error}")))?
            .unwrap_or_else(|| self.base_url.clone());
        let joined = format!("{}{}", base.as_str().trim_end_matches('/'), path);
        let mut url = Url::parse(&joined)
            .map_err(|error| CallError::BadArguments(format!("bad URL {joined}: {error}")))?;
        let rest: Map<String, Value> = arguments
            .iter()
            .filter(|(key, value)| !placeholders.contains(key) && !value.is_null())
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        let binding = &operation.http;
        let in_query = |key: &str| {
            binding.method.uses_query()
                || binding.query.iter().any(|name| name == key)
                || binding.body.as_deref().is_some_and(|body| body != key)
        };
        let (query, body): (Map<String, Value>, Map<String, Value>) =
            rest.into_iter().partition(|(key, _)| in_query(key));
        if !query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (key, value) in &query {
                match value {
                    Value::Array(items) => {
                        for item in items {
                            pairs.append_pair(key, &scalar_text(item));
                        }
                    }
                    other => {
                        pairs.append_pair(key, &scalar_text(other));
                    }
                }
            }
        }
        if binding.method.uses_query() {
            Ok((url, None))
        } else if let Some(name) = &binding.body {
            Ok((url, body.get(name).cloned()))
        } else {
            Ok((url, Some(Value::Object(body))))
        }
    }

    /// Sends one request for `operation`, retrying as the module doc says. Cancelling `cancel`
    /// interrupts only a wait between attempts, never a request in flight.
    ///
    /// # Errors
    /// The [`CallError`] of the last attempt.
    pub async fn call(
        &self,
        operation: &Operation,
        arguments: &Value,
        cancel: &CancellationToken,
    ) -> Result<CallOutput, CallError> {
        let (url, body) = self.request_parts(operation, arguments)?;
        let retry_failures = operation.has(Tag::Idempotent);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut request = self
                .client
                .request(operation.http.method.as_http(), url.clone())
                .header(http::header::ACCEPT, "application/json");
            for (name, secret) in self
                .auth
                .get(&operation.name)
                .into_iter()
                .chain(&self.site_header)
            {
                let mut value = HeaderValue::from_str(secret.expose())
                    .map_err(|_| CallError::Setup("the auth header value is not valid".into()))?;
                value.set_sensitive(true);
                request = request.header(name.clone(), value);
            }
            if let Some(body) = &body {
                request = request.json(body);
            }
            let outcome = request.send().await;
            let (error, wait) = match outcome {
                Ok(response) => {
                    let status = response.status();
                    let retry_after = retry_after(response.headers());
                    let text = response
                        .text()
                        .await
                        .map_err(|error| CallError::Transport(error.to_string()))?;
                    if status.is_success() {
                        return Ok(CallOutput {
                            status: status.as_u16(),
                            body: parse_body(&text),
                            attempts: attempt,
                        });
                    }
                    let body_excerpt = excerpt(&text);
                    if status == StatusCode::TOO_MANY_REQUESTS {
                        (
                            CallError::RateLimited {
                                attempts: attempt,
                                body_excerpt,
                            },
                            Some(retry_after),
                        )
                    } else if retry_failures && matches!(status.as_u16(), 502..=504) {
                        (
                            CallError::Http {
                                status: status.as_u16(),
                                body_excerpt,
                            },
                            Some(None),
                        )
                    } else {
                        return Err(CallError::Http {
                            status: status.as_u16(),
                            body_excerpt,
                        });
                    }
                }
                Err(error) if error.is_timeout() => (
                    CallError::Timeout(self.config.timeout),
                    retry_failures.then_some(None),
                ),
                Err(error) => (
                    CallError::Transport(error.to_string()),
                    retry_failures.then_some(None),
                ),
            };
            let Some(retry_after) = wait else {
                return Err(error);
            };
            if attempt > self.config.max_retries {
                return Err(error);
            }
            let backoff = Backoff {
                base: self.config.base_backoff,
                max: self.config.max_retry_wait,
            };
            let wait = retry_after
                .unwrap_or_else(|| backoff.delay(attempt))
                .min(self.config.max_retry_wait);
            tracing::info!(operation = %operation.name, attempt, wait_ms = wait.as_millis() as u64, error = %error, "retrying a site call");
            tokio::select! {
                () = cancel.cancelled() => return Err(CallError::Cancelled),
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Runs a call as planned: one request, or one per chunk of the batch argument. After each
    /// chunk `on_progress` runs and the future it returns is awaited (the orchestrator's
    /// checkpoint, which may cancel), then `cancel` is checked; a failed chunk stops the run.
    pub async fn run(
        &self,
        operation: &Operation,
        arguments: &Value,
        plan: &ChunkPlan,
        cancel: &CancellationToken,
        on_progress: &mut (dyn FnMut(&ChunkProgress) -> BoxFuture<'static, ()> + Send),
    ) -> RunOutcome {
        let mut outcome = RunOutcome {
            chunks: Vec::new(),
            planned: plan.sizes.clone(),
            cancelled: false,
        };
        if !plan.is_chunked() {
            let result = self.call(operation, arguments, cancel).await;
            outcome.chunks.push(ChunkOutcome {
                index: 1,
                size: plan.sizes.first().copied().unwrap_or(1),
                result,
            });
            return outcome;
        }
        let key = operation
            .batch_argument
            .as_deref()
            .unwrap_or(DEFAULT_BATCH_ARGUMENT);
        let ids: Vec<Value> = arguments
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut start = 0;
        on_progress(&outcome.progress()).await;
        for (position, size) in plan.sizes.iter().enumerate() {
            if cancel.is_cancelled() {
                outcome.cancelled = true;
                break;
            }
            let end = (start + size).min(ids.len());
            let mut chunk_arguments = arguments.clone();
            chunk_arguments[key] = Value::Array(
                ids.get(start..end)
                    .map(<[Value]>::to_vec)
                    .unwrap_or_default(),
            );
            start = end;
            let result = self.call(operation, &chunk_arguments, cancel).await;
            let failed = result.is_err();
            let cancelled_while_waiting = matches!(result, Err(CallError::Cancelled));
            outcome.chunks.push(ChunkOutcome {
                index: position + 1,
                size: *size,
                result,
            });
            on_progress(&outcome.progress()).await;
            if cancelled_while_waiting {
                outcome.cancelled = true;
                break;
            }
            if failed {
                break;
            }
        }
        outcome
    }
}

fn auth_header(header: &AuthHeader, env: EnvLookup<'_>) -> Result<(HeaderName, Secret), CallError> {
    let name = HeaderName::from_bytes(header.header.as_bytes())
        .map_err(|_| CallError::Setup(format!("`{}` is not a valid header name", header.header)))?;
    let secret = env(&header.env)
        .filter(|value| !value.is_empty())
        .ok_or_else(|| CallError::Setup(format!("the site needs {} to be set", header.env)))?;
    Ok((name, Secret::new(format!("{}{secret}", header.prefix))))
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn parse_body(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Null;
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(excerpt(text)))
}

fn excerpt(text: &str) -> String {
    let cut: String = text.chars().take(500).collect();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    };

    use axum::{extract::State, response::IntoResponse, routing::post, Json, Router};

    use super::*;

    fn manifest() -> Result<Manifest, super::super::manifest::ManifestError> {
        Manifest::from_json(&json!({
            "site": "t", "base_url": "/",
            "operations": [
                {"name": "search", "description": "", "entity": "items", "tags": ["readonly", "filterable"],
                 "http": {"method": "GET", "path": "/items"}, "parameters": {"type": "object", "properties": {}}},
                {"name": "getOne", "description": "", "entity": "items", "tags": ["readonly", "read"],
                 "http": {"method": "GET", "path": "/items/{id}"}, "parameters": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}},
                {"name": "bulk", "description": "", "entity": "items", "tags": ["mutating", "batch", "update", "rate-limited", "idempotent"], "max_batch_size": 2,
                 "http": {"method": "POST", "path": "/bulk"}, "parameters": {"type": "object", "properties": {"ids": {"type": "array"}}}}
            ]
        }).to_string())
    }

    #[derive(Clone, Default)]
    struct Site {
        calls: Arc<AtomicUsize>,
        bodies: Arc<Mutex<Vec<Value>>>,
        /// Answer 429 to the first this-many calls.
        throttle_first: usize,
        /// Answer 500 to call number N (1-based).
        fail_call: Option<usize>,
    }

    async fn bulk(State(site): State<Site>, Json(body): Json<Value>) -> axum::response::Response {
        let call = site.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if let Ok(mut bodies) = site.bodies.lock() {
            bodies.push(body.clone());
        }
        if call <= site.throttle_first {
            return (
                StatusCode::TOO_MANY_REQUESTS,
                [(http::header::RETRY_AFTER, "0")],
                "slow down",
            )
                .into_response();
        }
        if site.fail_call == Some(call) {
            return (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response();
        }
        Json(json!({"updated": body["ids"].as_array().map_or(0, Vec::len)})).into_response()
    }

    async fn serve(site: Site) -> anyhow::Result<Url> {
        let app = Router::new().route("/bulk", post(bulk)).with_state(site);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(Url::parse(&format!("http://{address}"))?)
    }

    fn fast() -> ExecutorConfig {
        ExecutorConfig {
            timeout: Duration::from_secs(5),
            max_retries: 3,
            base_backoff: Duration::from_millis(1),
            max_retry_wait: Duration::from_millis(20),
        }
    }

    /// An executor against a fresh `site` and the manifest's `bulk` operation it is to call.
    async fn bulk_executor<'m>(
        manifest: &'m Manifest,
        site: &Site,
    ) -> anyhow::Result<(HttpExecutor, &'m Operation)> {
        let executor = HttpExecutor::new(manifest, serve(site.clone()).await?, fast(), &|_| None)?;
        let bulk = manifest
            .operation("bulk")
            .ok_or_else(|| anyhow::anyhow!("bulk"))?;
        Ok((executor, bulk))
    }

    fn ids(count: usize) -> Value {
        json!({"ids": (0..count).map(|index| format!("i{index}")).collect::<Vec<_>>(), "status": "completed"})
    }

    #[tokio::test]
    async fn get_arguments_go_in_the_path_and_query() -> anyhow::Result<()> {
        let manifest = manifest()?;
        let executor = HttpExecutor::new(
            &manifest,
            Url::parse("http://127.0.0.1:9/api")?,
            fast(),
            &|_| None,
        )?;
        let get_one = manifest
            .operation("getOne")
            .ok_or_else(|| anyhow::anyhow!("getOne"))?;
        assert_eq!(
            executor.url_for(get_one, &json!({"id": "a b/c"}))?.as_str(),
            "http://127.0.0.1:9/api/items/a%20b%2Fc"
        );
        let search = manifest
            .operation("search")
            .ok_or_else(|| anyhow::anyhow!("search"))?;
        assert_eq!(
            executor
                .url_for(search, &json!({"status": "open", "limit": 5}))?
                .as_str(),
            "http://127.0.0.1:9/api/items?status=open&limit=5",
            "query parameters in the order the arguments came"
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_429_is_retried_after_retry_after() -> anyhow::Result<()> {
        let manifest = manifest()?;
        let site = Site {
            throttle_first: 2,
            ..Site::default()
        };
        let (executor, bulk) = bulk_executor(&manifest, &site).await?;
        let output = executor
            .call(bulk, &ids(2), &CancellationToken::new())
            .await?;
        assert_eq!(output.attempts, 3);
        assert_eq!(site.calls.load(Ordering::SeqCst), 3);
        Ok(())
    }

    #[tokio::test]
    async fn a_site_that_keeps_throttling_is_reported_not_retried_forever() -> anyhow::Result<()> {
        let manifest = manifest()?;
        let site = Site {
            throttle_first: 100,
            ..Site::default()
        };
        let (executor, bulk) = bulk_executor(&manifest, &site).await?;
        let error = executor
            .call(bulk, &ids(2), &CancellationToken::new())
            .await
            .err();
        assert!(
            matches!(error, Some(CallError::RateLimited { attempts: 4, .. })),
            "{error:?}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_batch_is_sent_in_chunks_with_progress() -> anyhow::Result<()> {
        let manifest = manifest()?;
        let site = Site::default();
        let (executor, bulk) = bulk_executor(&manifest, &site).await?;
        let arguments = ids(5);
        let plan = super::super::policy::chunk_plan(bulk, &arguments);
        let mut progress = Vec::new();
        let outcome = executor
            .run(
                bulk,
                &arguments,
                &plan,
                &CancellationToken::new(),
                &mut |update| {
                    progress.push(update.items_done);
                    Box::pin(async {})
                },
            )
            .await;
        assert!(outcome.succeeded());
        assert_eq!(progress, vec![0, 2, 4, 5]);
        let sizes: Vec<usize> = site
            .bodies
            .lock()
            .map_err(|_| anyhow::anyhow!("poisoned"))?
            .iter()
            .map(|body| body["ids"].as_array().map_or(0, Vec::len))
            .collect();
        assert_eq!(sizes, vec![2, 2, 1]);
        Ok(())
    }

    #[tokio::test]
    async fn a_failed_chunk_stops_the_batch_and_is_reported() -> anyhow::Result<()> {
        let manifest = manifest()?;
        let site = Site {
            fail_call: Some(2),
            ..Site::default()
        };
        let (executor, bulk) = bulk_executor(&manifest, &site).await?;
        let arguments = ids(5);
        let plan = super::super::policy::chunk_plan(bulk, &arguments);
        let outcome = executor
            .run(
                bulk,
                &arguments,
                &plan,
                &CancellationToken::new(),
                &mut |_| Box::pin(async {}),
            )
            .await;
        assert!(!outcome.succeeded());
        assert_eq!(outcome.chunks.len(), 2, "the third chunk is never sent");
        let (chunk, error) = outcome
            .failure()
            .ok_or_else(|| anyhow::anyhow!("no failure"))?;
        assert_eq!(chunk.index, 2);
        assert_eq!(error.to_string(), "HTTP 500: boom");
        assert_eq!(outcome.result_value()["chunks"][2]["status"], "not_sent");
        assert_eq!(site.calls.load(Ordering::SeqCst), 2);
        Ok(())
    }

    #[tokio::test]
    async fn cancel_lands_between_chunks_and_keeps_finished_ones() -> anyhow::Result<()> {
        let manifest = manifest()?;
        let site = Site::default();
        let (executor, bulk) = bulk_executor(&manifest, &site).await?;
        let arguments = ids(5);
        let plan = super::super::policy::chunk_plan(bulk, &arguments);
        let cancel = CancellationToken::new();
        let stopper = cancel.clone();
        let outcome = executor
            .run(bulk, &arguments, &plan, &cancel, &mut |update| {
                if update.chunks_done == 1 {
                    stopper.cancel();
                }
                Box::pin(async {})
            })
            .await;
        assert!(outcome.cancelled);
        assert_eq!(outcome.items_done(), 2);
        assert_eq!(site.calls.load(Ordering::SeqCst), 1);
        Ok(())
    }

    #[tokio::test]
    async fn a_missing_auth_secret_fails_at_setup() -> anyhow::Result<()> {
        let text = json!({
            "site": "t", "base_url": "/", "auth": {"header": "Authorization", "env": "SITE_TOKEN", "prefix": "Bearer "},
            "operations": [{"name": "search", "description": "", "entity": "items", "tags": ["readonly"],
                 "http": {"method": "GET", "path": "/items"}, "parameters": {"type": "object", "properties": {}}}]
        });
        let manifest = Manifest::from_json(&text.to_string())?;
        let base = Url::parse("http://127.0.0.1:9")?;
        assert!(matches!(
            HttpExecutor::new(&manifest, base.clone(), fast(), &|_| None),
            Err(CallError::Setup(message)) if message.contains("SITE_TOKEN")
        ));
        assert!(
            HttpExecutor::new(&manifest, base, fast(), &|name| (name == "SITE_TOKEN")
                .then(|| "s3cret".to_owned()))
            .is_ok()
        );
        Ok(())
    }
}
